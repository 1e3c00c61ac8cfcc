//! `toolcell mcp`: serves the workspace's tools over MCP on stdio (see
//! [`crate::mcp::server`]). Stdout carries the protocol; logs go to stderr.

use super::{EXIT_OK, open_dispatcher_for_many_calls};
use crate::approval::StandingApprovals;
use crate::mcp::server::ToolServer;
use crate::store::Store;
use anyhow::{Context, Result};
use clap::Args;
use rmcp::ServiceExt;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::signal::unix::{SignalKind, signal};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Approve every call that would ask (trusted clients only).
    #[arg(long)]
    yes: bool,
    /// Approve calls of TOOL without asking (repeatable).
    #[arg(long = "approve", value_name = "TOOL")]
    approve: Vec<String>,
}

pub fn run(config: &Option<PathBuf>, args: McpArgs) -> Result<i32> {
    let dispatcher = Arc::new(open_dispatcher_for_many_calls(config)?);
    let store = Arc::new(Store::open(&dispatcher.config().state_dir())?);
    let approver = Arc::new(StandingApprovals {
        all: args.yes,
        tools: args.approve.into_iter().collect(),
        ask: None,
        grant_hint: "`toolcell mcp --approve {tool}` (or approval = \"auto\" under [tools.{tool}] in toolcell.toml)",
    });
    // One thread runs the session: reading a request, the call and writing
    // the answer never hop between threads (a hand-off costs a wake-up of
    // tens of microseconds, a fifth of a call; BENCHMARKS.md "MCP latency").
    // Calls still overlap: a tool yields at every epoch tick, and waiting
    // (for the client's approval, an external server, a program) is async.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = ToolServer::new(dispatcher, store, approver)
            .context("cannot start the recorder of MCP calls")?;
        let service = server
            .serve(rmcp::transport::io::stdio_pipes())
            .await
            .context("the MCP client did not start a session")?;
        // A client stopping its server sends SIGTERM (or the user Ctrl-C):
        // end the session cleanly, so the runtime finishes writing the
        // records of answered calls before the process exits.
        let session = service.cancellation_token();
        let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            session.cancel();
        });
        service
            .waiting()
            .await
            .context("the MCP session ended with an error")?;
        anyhow::Ok(())
    })?;
    Ok(EXIT_OK)
}
