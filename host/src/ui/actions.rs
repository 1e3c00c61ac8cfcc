//! What the page may change, each the very step the command line takes:
//! deciding a parked call (`toolcell approve` / `deny`), undoing a run's
//! changes (`toolcell undo`, with the same refusals), and running a
//! schedule now (`toolcell schedule run`, in a process of its own).
//! Every answer is plain text the page shows as text.

use super::Ui;
use crate::store::approvals::ParkedStatus;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::process::Stdio;
use std::sync::Arc;

/// The longest reason kept: a sentence or a few, not a document.
const MAX_REASON_CHARS: usize = 500;

/// How a decision is recorded: as `toolcell approve` records a person at
/// the terminal, with where they answered.
const DECIDED_BY: &str = "person (toolcell ui)";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Approve,
    ApproveForRun,
    Deny,
}

#[derive(Debug, Deserialize)]
pub struct Decide {
    decision: Verdict,
    #[serde(default)]
    reason: Option<String>,
}

fn refused(status: StatusCode, text: String) -> Response {
    (status, text).into_response()
}

/// `POST /api/approvals/{id}`: approve, approve for the run, or deny.
pub async fn decide(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<i64>,
    Json(decide): Json<Decide>,
) -> Response {
    let call = match ui.store.parked(id) {
        Ok(Some(call)) => call,
        Ok(None) => {
            return refused(
                StatusCode::NOT_FOUND,
                format!("there is no parked call {id}"),
            );
        }
        Err(e) => return refused(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
    };
    let (status, reason) = match decide.decision {
        Verdict::Approve => (ParkedStatus::Approved, None),
        Verdict::ApproveForRun if !call.for_run => {
            return refused(
                StatusCode::CONFLICT,
                format!(
                    "call {id} (`{}`) is approved call by call: approve it on its own",
                    call.tool
                ),
            );
        }
        Verdict::ApproveForRun => (ParkedStatus::ApprovedForRun, None),
        Verdict::Deny => (
            ParkedStatus::Denied,
            decide
                .reason
                .map(|r| crate::util::text::shorten(r.trim(), MAX_REASON_CHARS))
                .map(|r| crate::util::text::for_terminal_line(&r).into_owned())
                .filter(|r| !r.is_empty()),
        ),
    };
    match ui
        .store
        .decide_parked(id, status, reason.as_deref(), DECIDED_BY)
    {
        Ok(()) => format!("call {id}: {}", status.as_str()).into_response(),
        Err(e) => refused(StatusCode::CONFLICT, format!("{e:#}")),
    }
}

/// `POST /api/runs/{id}/undo`: what `toolcell undo` does.
pub async fn undo(State(ui): State<Arc<Ui>>, Path(id): Path<i64>) -> Response {
    match ui.store.run(id) {
        Ok(Some(detail)) if matches!(detail.summary.status.as_str(), "running" | "waiting") => {
            return refused(
                StatusCode::CONFLICT,
                format!("run {id} is still running: wait for it to end, or stop it first"),
            );
        }
        Ok(Some(_)) => {}
        Ok(None) => return refused(StatusCode::NOT_FOUND, format!("there is no run {id}")),
        Err(e) => return refused(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
    }
    match crate::effect::changes::undo(&ui.config, &ui.store, id) {
        Ok(lines) if lines.is_empty() => format!("run {id}: nothing to undo").into_response(),
        Ok(lines) => lines.join("\n").into_response(),
        Err(e) => refused(StatusCode::CONFLICT, format!("{e:#}")),
    }
}

/// `POST /api/schedules/{name}/run`: starts `toolcell schedule run NAME`
/// for the workspace, in a process of its own, and answers at once; the
/// run shows on the runs page as it goes.
pub async fn run_schedule(State(ui): State<Arc<Ui>>, Path(name): Path<String>) -> Response {
    if !ui.config.schedules.iter().any(|s| s.name == name) {
        return refused(
            StatusCode::NOT_FOUND,
            format!("there is no schedule `{name}`"),
        );
    }
    let mut command = ui.toolcell();
    command
        .args(["schedule", "run", "--", &name])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match command.spawn() {
        Ok(mut child) => {
            // Reaped when it ends; it records its own run.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            format!("schedule `{name}` started: its run shows on the runs page").into_response()
        }
        Err(e) => refused(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot start the run of `{name}`: {e}"),
        ),
    }
}
