//! `toolcell undo RUN`: restores what a run's file changes replaced.

use super::{EXIT_OK, load_workspace, print_out};
use crate::store::Store;
use anyhow::{Result, bail};

pub fn run(config: &super::Chosen, run: i64) -> Result<i32> {
    let (config, _) = load_workspace(config)?;
    let store = Store::for_workspace(&config)?;
    let Some(detail) = store.run(run)? else {
        bail!("there is no run {run}\n  fix: `toolcell runs list` shows the recorded runs");
    };
    if matches!(detail.summary.status.as_str(), "running" | "waiting") {
        bail!("run {run} is still running\n  fix: wait for it to end, or stop it first");
    }
    for line in crate::effect::changes::undo(&config, &store, run)? {
        print_out(&line)?;
    }
    Ok(EXIT_OK)
}
