//! End-to-end tests of toolcell: the `toolcell` binary (and, where a test
//! needs several calls in one process, the library it is built from) against
//! real components built from source, in temporary workspaces.

#[path = "../support/browser.rs"]
mod browser;
#[path = "../support/cargo_component.rs"]
mod cargo_component;
#[path = "../support/dialect_corpus.rs"]
mod dialect_corpus;
#[path = "../support/fixture.rs"]
mod fixture;
mod harness;
#[path = "../support/http_server.rs"]
mod http_server;
#[path = "../support/mcp_peers.rs"]
mod mcp_peers;
#[path = "../support/model_server.rs"]
mod model_server;
#[path = "../support/pg_server.rs"]
mod pg_server;
#[path = "../support/polyglot.rs"]
mod polyglot;
#[path = "../support/setup_script.rs"]
mod setup_script;

mod agent;
mod cache;
mod capabilities;
mod chat_json;
mod cli;
mod code_cell;
mod config_errors;
mod confinement;
mod depth;
mod dialects;
mod file_tools;
mod hardening;
mod inbox;
mod install_url;
mod instructions;
mod kubernetes;
mod layers;
mod limits;
mod llama;
mod manifests;
mod manual;
mod mcp;
mod mcp_client;
mod mcp_http;
mod mcp_http_client;
mod model_fit;
mod outside_cells;
mod policy;
mod polyglot_tools;
mod profiles;
mod recovery;
mod resume;
mod rules;
mod run_command;
mod schedules;
mod search;
mod shared_store;
mod terminal;
mod tool_filter;
mod ui;
mod web_fetch;
mod workflows;
