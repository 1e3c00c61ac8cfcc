//! toolcell: a tool host for local language models in which every tool is a
//! WebAssembly component running in its own cell.
//!
//! The modules are layers: each uses only those below it (`ARCHITECTURE.md`
//! draws them, and a test holds the code to that drawing). From the ground up:
//!
//! 1. [`util`]: text, names, child processes, locations;
//! 2. [`tool`], [`llm`], [`policy`], [`contain`]: what a tool declares, the
//!    model servers, what no tool may touch, how programs are confined;
//! 3. [`config`]: `toolcell.toml`, one file per section;
//! 4. [`store`]: the run store;
//! 5. [`registry`]: which tools exist and what each is granted;
//! 6. [`sandbox`], [`mcp`]: the cells, and the external MCP servers;
//! 7. [`approval`], [`effect`]: who decides, and what a call would change;
//! 8. [`call`]: the one path of a tool call;
//! 9. [`agent`], [`workflow`], [`install`]: what makes calls;
//! 10. [`schedule`], [`serve`]: unattended runs, and serving the tools;
//! 11. [`cli`]: the command line.

pub mod agent;
pub mod approval;
pub mod call;
pub mod cli;
pub mod config;
pub mod contain;
pub mod effect;
pub mod install;
pub mod llm;
pub mod mcp;
pub mod policy;
pub mod registry;
pub mod sandbox;
pub mod schedule;
pub mod serve;
pub mod store;
pub mod tool;
pub mod ui;
pub mod util;
pub mod workflow;
