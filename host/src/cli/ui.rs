//! `toolcell ui [--port N]`: serves the workspace's page on 127.0.0.1 (see
//! [`crate::ui`]) until SIGTERM or Ctrl-C, and prints its address with the
//! token. It opens no browser.

use super::{EXIT_OK, load_workspace, print_out};
use crate::store::Store;
use crate::ui::Ui;
use anyhow::{Context, Result};
use clap::Args;
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct UiArgs {
    /// The port on 127.0.0.1 to serve on; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
}

pub fn run(config: &super::Chosen, args: UiArgs) -> Result<i32> {
    let (config, _) = load_workspace(config)?;
    let store = Store::for_workspace(&config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = crate::ui::bind(args.port).await?;
        let address = listener
            .local_addr()
            .context("cannot read the page's address")?;
        let ui = Arc::new(Ui::new(config, store, address)?);
        let told = format!(
            "toolcell ui: open {}\n  (only this machine can reach it; stop it with Ctrl-C)",
            ui.url()
        );
        // Whoever started it may stop reading once it has the address: the
        // page keeps serving.
        if print_out(&told).is_err() {
            tracing::debug!("stdout closed after the address was read");
        }
        crate::ui::serve(listener, ui, stopped()).await
    })?;
    Ok(EXIT_OK)
}

/// Resolves on the first SIGTERM or SIGINT.
async fn stopped() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
