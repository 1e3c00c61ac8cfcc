//! `toolcell approvals`, `toolcell approve ID`, `toolcell deny ID`: the
//! calls parked for a person to decide (see [`crate::approval::inbox`]),
//! listed with exactly what the terminal prompt would show, and decided
//! from any process.

use super::{EXIT_OK, print_out};
use crate::store::Store;
use crate::store::approvals::ParkedStatus;
use anyhow::{Context, Result, bail};

#[derive(Debug, clap::Args)]
pub struct ApprovalsArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Every parked call, decided or not, newest first.
    #[arg(long)]
    history: bool,
}

/// The workspace's run store.
fn store(config: &super::Chosen) -> Result<Store> {
    let cwd = std::env::current_dir().context("cannot determine the current folder")?;
    let config = config.load(&cwd)?;
    Store::for_workspace(&config)
}

pub fn list(config: &super::Chosen, args: ApprovalsArgs) -> Result<i32> {
    let calls = store(config)?.parked_calls(args.history)?;
    if args.json {
        print_out(&serde_json::to_string_pretty(&calls)?)?;
        return Ok(EXIT_OK);
    }
    if calls.is_empty() {
        print_out(if args.history {
            "no call was ever parked for approval"
        } else {
            "no call waits for approval"
        })?;
        return Ok(EXIT_OK);
    }
    let mut text = String::new();
    for call in &calls {
        let run = call.run.map(|r| format!(" of run {r}")).unwrap_or_default();
        text.push_str(&format!(
            "call {}{run}: `{}`, {} (asked {}, until {})",
            call.id,
            call.tool,
            call.status.as_str(),
            crate::util::text::local_time(call.asked_at),
            crate::util::text::local_time(call.expires_at)
        ));
        if let Some(by) = &call.decided_by {
            text.push_str(&format!(", by {by}"));
        }
        if let Some(reason) = &call.reason {
            text.push_str(&format!(": {reason}"));
        }
        text.push('\n');
        if call.status == ParkedStatus::Waiting {
            text.push_str(call.shown.trim_start_matches('\n'));
            let for_run = if call.for_run {
                format!(
                    "  toolcell approve {0} --for-run (yes to `{1}` for the rest of the run)\n",
                    call.id, call.tool
                )
            } else {
                String::new()
            };
            text.push_str(&format!(
                "  toolcell approve {0}  |  toolcell deny {0} --reason TEXT\n{for_run}\n",
                call.id
            ));
        }
    }
    print_out(text.trim_end())?;
    Ok(EXIT_OK)
}

pub fn approve(config: &super::Chosen, id: i64, for_run: bool) -> Result<i32> {
    let store = store(config)?;
    let status = if for_run {
        let call = store.parked(id)?.with_context(|| {
            format!(
                "there is no parked call {id}\n  fix: `toolcell approvals` lists the calls waiting"
            )
        })?;
        if !call.for_run {
            bail!(
                "call {id} (`{}`) is approved call by call: --for-run does not cover it\n  fix: approve it without --for-run",
                call.tool
            );
        }
        ParkedStatus::ApprovedForRun
    } else {
        ParkedStatus::Approved
    };
    store.decide_parked(id, status, None, "person (toolcell approve)")?;
    print_out(&format!("call {id}: {}", status.as_str()))?;
    Ok(EXIT_OK)
}

pub fn deny(config: &super::Chosen, id: i64, reason: Option<String>) -> Result<i32> {
    let store = store(config)?;
    let reason = reason.map(|r| crate::util::text::for_terminal_line(&r).into_owned());
    store.decide_parked(
        id,
        ParkedStatus::Denied,
        reason.as_deref(),
        "person (toolcell deny)",
    )?;
    print_out(&format!("call {id}: denied"))?;
    Ok(EXIT_OK)
}
