//! `toolcell daemon [--json]`: runs the workspace's schedules in the
//! foreground until SIGTERM or Ctrl-C (see [`crate::schedule::daemon`]).

use super::{EXIT_INTERRUPTED, EXIT_OK, sandbox_options};
use crate::schedule::DaemonOptions;
use crate::schedule::clock::SystemClock;
use crate::schedule::daemon::{self, RELOAD_POLL};
use crate::util::locations;
use anyhow::{Context, Result, bail};
use clap::Args;
use std::sync::Arc;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Log one JSON object per line instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(config: &super::Chosen, args: DaemonArgs) -> Result<i32> {
    let cwd = std::env::current_dir().context("cannot determine the current folder")?;
    let loaded = config.load(&cwd)?;
    let Some(file) = loaded.file else {
        bail!(
            "no toolcell.toml here or above: the daemon runs the [[schedule]] entries of a workspace's config\n  fix: run it in a workspace, or pass --config FILE"
        );
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let stop = CancellationToken::new();
        watch_signals(stop.clone())?;
        let options = DaemonOptions {
            json_logs: args.json,
            reload_poll: RELOAD_POLL,
            log: Arc::new(|line| {
                let _ = super::print_out(line);
            }),
            sandbox: sandbox_options(),
            user_tools: locations::user_tools_dir(),
            trust: crate::policy::trust::TrustStore::for_user(),
            profile: config.profile.clone(),
        };
        daemon::run(&file, Arc::new(SystemClock), stop, options).await
    })?;
    Ok(EXIT_OK)
}

/// The first SIGTERM or SIGINT stops the daemon gracefully; a second one
/// exits at once.
fn watch_signals(stop: CancellationToken) -> Result<()> {
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            if stop.is_cancelled() {
                say!("toolcell: stopped at once");
                crate::util::child::stop_all();
                std::process::exit(EXIT_INTERRUPTED);
            }
            stop.cancel();
        }
    });
    Ok(())
}
