//! toolcell: a tool host for local language models in which every tool is a
//! WebAssembly component running in its own cell.
//!
//! The data flows one way: [`cli`] → [`config`] → [`dispatch`] →
//! [`registry`] → [`approval`] → [`sandbox`] → component. See
//! `ARCHITECTURE.md` for the map.

pub mod agent;
pub mod approval;
pub mod builtin;
pub mod calls;
pub mod changes;
pub mod child;
pub mod cli;
pub mod config;
pub mod contain;
pub mod dispatch;
pub mod download;
pub mod grant;
pub mod install;
pub mod limits;
pub mod llm;
pub mod locations;
pub mod manifest;
pub mod mcp;
pub mod policy;
pub mod registry;
pub mod sandbox;
pub mod scaffold;
pub mod schedule;
pub mod store;
pub mod text;
pub mod workflow;
pub mod workspace;
