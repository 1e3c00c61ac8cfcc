//! `toolcell mcp`: serves the workspace's tools over MCP on stdio (see
//! [`crate::serve::mcp`]; stdout carries the protocol, logs go to stderr),
//! or over Streamable HTTP with `--http` ([`crate::serve::http`]).

use super::{EXIT_INTERRUPTED, EXIT_OK, open_dispatcher_for_many_calls};
use crate::approval::StandingApprovals;
use crate::serve::http;
use crate::serve::mcp::ToolServer;
use crate::store::DeferredRecorder;
use crate::store::Store;
use anyhow::{Context, Result};
use clap::Args;
use rmcp::ServiceExt;
use std::io::Read;
use std::os::fd::IntoRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Approve every call that would ask (trusted clients only).
    #[arg(long)]
    yes: bool,
    /// Approve calls of TOOL without asking (repeatable).
    #[arg(long = "approve", value_name = "TOOL")]
    approve: Vec<String>,
    /// Park a call the client cannot ask its user about (it offers no
    /// elicitation) for up to DURATION ("30m"), for `toolcell approve` /
    /// `toolcell deny`, instead of refusing it.
    #[arg(long, value_name = "DURATION", value_parser = crate::config::schedule::parse_duration)]
    wait_approval: Option<Duration>,
    /// Serve MCP's Streamable HTTP transport at http://ADDRESS/mcp instead
    /// of stdio (127.0.0.1:0 picks a free port); clients send the printed
    /// token (or TOOLCELL_MCP_TOKEN's) as a bearer token.
    #[arg(long, value_name = "ADDRESS")]
    http: Option<std::net::SocketAddr>,
    /// Let --http listen on an address beyond loopback.
    #[arg(long, requires = "http")]
    http_beyond_loopback: bool,
}

pub fn run(config: &super::Chosen, args: McpArgs) -> Result<i32> {
    let dispatcher = Arc::new(open_dispatcher_for_many_calls(config)?);
    let store = Arc::new(Store::for_workspace(dispatcher.config())?);
    let approver = Arc::new(StandingApprovals {
        all: args.yes,
        tools: args.approve.into_iter().collect(),
        ask: None,
        grant_hint: "`toolcell mcp --approve {tool}` (or approval = \"auto\" under [tools.{tool}] in toolcell.toml)",
        granted_as: "--approve",
    });
    // One thread runs the session: reading a request, the call and writing
    // the answer never hop between threads (a hand-off costs a wake-up of
    // tens of microseconds, a fifth of a call; BENCHMARKS.md "MCP latency").
    // Calls overlap where they wait asynchronously (the client's approval,
    // an external server, a program, HTTP) and a computing tool yields at
    // every epoch tick; a file operation or a store write holds the thread
    // while it lasts, which is why a stop signal is also watched outside it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut server = ToolServer::new(dispatcher, store, approver)
            .context("cannot start the recorder of MCP calls")?;
        if let Some(wait) = args.wait_approval {
            server = server.with_inbox(wait);
        }
        end_if_stuck_after_a_signal(Arc::downgrade(&server.recorder()))
            .context("cannot watch for SIGTERM and SIGINT")?;
        if let Some(address) = args.http {
            return serve_http(server, address, args.http_beyond_loopback).await;
        }
        let service = server
            .serve(rmcp::transport::io::stdio_pipes())
            .await
            .context("the MCP client did not start a session")?;
        // A client stopping its server sends SIGTERM (or the user Ctrl-C):
        // end the session cleanly, so the runtime finishes writing the
        // records of answered calls before the process exits.
        let session = service.cancellation_token();
        on_stop_signal(move || session.cancel())?;
        service
            .waiting()
            .await
            .context("the MCP session ended with an error")?;
        anyhow::Ok(())
    })?;
    Ok(EXIT_OK)
}

/// Serves MCP over HTTP until SIGTERM or SIGINT; says where, and the
/// token when it made one.
async fn serve_http(
    server: ToolServer,
    address: std::net::SocketAddr,
    beyond_loopback: bool,
) -> Result<()> {
    let (token, made) = http::token_from_env()?;
    let options = http::HttpOptions {
        address,
        beyond_loopback,
        token: token.clone(),
        stop: tokio_util::sync::CancellationToken::new(),
    };
    let (listener, bound) = http::bind(&options).await?;
    super::print_out(&format!(
        "toolcell mcp: serving http://{bound}{}",
        http::PATH
    ))?;
    if made {
        super::print_out(&format!(
            "toolcell mcp: token {token} (clients send it as `Authorization: Bearer TOKEN`; set {} to choose it)",
            http::TOKEN_ENV
        ))?;
    }
    let stop = options.stop.clone();
    on_stop_signal(move || stop.cancel())?;
    http::serve(server, listener, bound, options).await
}

/// Runs `stop` at the first SIGTERM (a client stopping its server) or
/// SIGINT (Ctrl-C).
fn on_stop_signal(stop: impl FnOnce() + Send + 'static) -> Result<()> {
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        stop();
    });
    Ok(())
}

/// How long a SIGTERM or SIGINT waits for the session to end by itself.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// Watches for SIGTERM and SIGINT on a thread of its own: normally the
/// session ends at once (the runtime sees the signal too), but a call
/// blocked in a file operation (a hung network mount) holds the session's
/// one thread. If the process is still here [`STOP_GRACE`] after the
/// signal, the queued records are written, the programs it started are
/// stopped, and it exits.
fn end_if_stuck_after_a_signal(recorder: Weak<DeferredRecorder>) -> Result<()> {
    let (mut watch, ring) = UnixStream::pair()?;
    let ring = ring.into_raw_fd();
    for signal in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: the action only calls write(2), which is
        // async-signal-safe, on a descriptor kept open for the process's
        // life; a full buffer (a second signal) is ignored.
        unsafe {
            signal_hook_registry::register(signal, move || {
                let _ = libc::write(ring, [1u8].as_ptr().cast(), 1);
            })
        }?;
    }
    std::thread::Builder::new()
        .name("toolcell-stop-watch".into())
        .spawn(move || {
            let mut byte = [0u8];
            if watch.read_exact(&mut byte).is_ok() {
                std::thread::sleep(STOP_GRACE);
                say!(
                    "toolcell mcp: the session did not end within {STOP_GRACE:?} of the stop signal (a call is blocked); stopping now"
                );
                // Held weakly: a session that ends normally drops (and
                // so flushes) the recorder itself.
                if let Some(recorder) = recorder.upgrade() {
                    recorder.flush();
                }
                crate::util::child::stop_all();
                std::process::exit(EXIT_INTERRUPTED);
            }
        })?;
    Ok(())
}
