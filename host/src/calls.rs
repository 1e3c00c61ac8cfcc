//! One tool call on behalf of a run — the agent's or a workflow's: admit,
//! approve, keep what it will replace, run in its cell, record. Both
//! callers go through [`ToolRunner`], so a call from a script is checked,
//! approved and recorded exactly like a call from a model.

use crate::agent::view::{AgentView, CallStatus};
use crate::approval::Approver;
use crate::approval::Decision;
use crate::changes::Snapshot;
use crate::dispatch::{CallError, Dispatcher};
use crate::llm::ToolCall;
use crate::registry::ToolSource;
use crate::store::{RunId, Store};
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Where a run is recorded.
#[derive(Clone, Copy)]
pub struct Recording<'a> {
    pub store: &'a Store,
    pub run: RunId,
}

/// What became of one tool call.
#[derive(Debug)]
pub struct CallResult {
    /// The result as text for a model: the JSON result, or `error (kind): …`.
    pub content: String,
    /// The result value, when the call succeeded.
    pub value: Option<Value>,
    pub status: CallStatus,
    /// auto | approved | approved-for-run | declined | quit | not-asked
    pub decision: &'static str,
    pub error_kind: Option<&'static str>,
    /// The error without its kind, when the call failed.
    pub error_message: Option<String>,
    pub duration: Duration,
    /// The user chose to stop the whole run.
    pub quit: bool,
    /// The call ran in a cell built before it (see `sandbox::keeper`).
    pub built_ahead: bool,
    /// What the call replaced, for undo (successful file changes only).
    snapshot: Option<Snapshot>,
}

impl CallResult {
    /// A call refused before it ran.
    pub fn refused(
        message: String,
        kind: &'static str,
        status: CallStatus,
        started: Instant,
    ) -> Self {
        Self {
            content: format!("error ({kind}): {message}"),
            value: None,
            status,
            decision: "not-asked",
            error_kind: Some(kind),
            error_message: Some(message),
            duration: started.elapsed(),
            quit: false,
            built_ahead: false,
            snapshot: None,
        }
    }

    /// A call the host answered itself, without a cell.
    pub fn answered_by_host(value: Value, started: Instant) -> Self {
        Self {
            content: value.to_string(),
            value: Some(value),
            status: CallStatus::Done,
            decision: "not-asked",
            error_kind: None,
            error_message: None,
            duration: started.elapsed(),
            quit: false,
            built_ahead: false,
            snapshot: None,
        }
    }

    /// A call stopped (or never started) because the run was stopped.
    pub fn cancelled(why: &str) -> Self {
        Self {
            status: CallStatus::Cancelled,
            content: format!("cancelled: {why}"),
            ..Self::refused(
                why.to_string(),
                "cancelled",
                CallStatus::Cancelled,
                Instant::now(),
            )
        }
    }

    fn from_error(error: &CallError, started: Instant) -> Self {
        let status = if error.is_denial() {
            CallStatus::Denied
        } else {
            CallStatus::Failed
        };
        Self::refused(error.to_string(), error.kind(), status, started)
    }
}

/// Runs tool calls for one run.
#[derive(Clone, Copy)]
pub struct ToolRunner<'a> {
    pub dispatcher: &'a Dispatcher,
    pub approver: &'a dyn Approver,
    pub recording: Option<Recording<'a>>,
}

impl ToolRunner<'_> {
    /// Records that `call` was asked for; returns its row.
    pub fn start(&self, call: &ToolCall) -> Option<i64> {
        let rec = self.recording?;
        rec.store
            .start_tool_call(rec.run, &call.id, &call.name, &call.arguments)
            .map_err(|e| tracing::warn!("cannot record a tool call: {e:#}"))
            .ok()
    }

    /// Admits, approves and runs `call` with its parsed `args`; `cancel`
    /// stops the wait for approval and the running call.
    pub async fn run(
        &self,
        call: &ToolCall,
        args: &Value,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> CallResult {
        let started = Instant::now();
        let mut admitted = match self.dispatcher.admit(&call.name, args) {
            Ok(admitted) => admitted,
            Err(error) => return CallResult::from_error(&error, started),
        };
        let mut decision = "auto";
        if admitted.needs_approval {
            view.call_status(call, CallStatus::WaitingForApproval, None, None);
            let answer = tokio::select! {
                answer = self.dispatcher.seek_approval(&mut admitted, args, self.approver) => answer,
                () = cancel.cancelled() => return CallResult::cancelled("the run was stopped while this call waited for approval"),
            };
            decision = answer.label();
            if let Some(error) = admitted.refusal(&answer) {
                return CallResult {
                    decision,
                    quit: answer == Decision::Quit,
                    ..CallResult::from_error(&error, started)
                };
            }
        }
        view.call_status(call, CallStatus::Running, None, None);
        let snapshot = match (self.recording, admitted.entry.source) {
            (Some(_), ToolSource::BuiltIn) => {
                Snapshot::take(self.dispatcher.config(), &call.name, args)
            }
            _ => None,
        };
        let outcome = tokio::select! {
            outcome = self.dispatcher.execute(admitted, args) => outcome,
            () = cancel.cancelled() => {
                return CallResult {
                    decision,
                    ..CallResult::cancelled("the run was stopped while this call ran; it may have done part of its work")
                };
            }
        };
        match outcome.result {
            Ok(value) => CallResult {
                content: match &value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
                value: Some(value),
                status: CallStatus::Done,
                decision,
                error_kind: None,
                error_message: None,
                duration: started.elapsed(),
                quit: false,
                built_ahead: outcome.built_ahead,
                snapshot,
            },
            Err(error) => CallResult {
                decision,
                ..CallResult::from_error(&error, started)
            },
        }
    }

    /// Records how the call at `row` ended (with `content` as sent on) and
    /// keeps what it replaced for undo.
    pub fn finish(
        &self,
        call: &ToolCall,
        row: Option<i64>,
        result: &mut CallResult,
        content: &str,
    ) {
        let (Some(rec), Some(row)) = (self.recording, row) else {
            return;
        };
        if let Some(snapshot) = result.snapshot.take()
            && let Err(e) = snapshot.record(self.dispatcher.config(), rec.store, rec.run, row)
        {
            tracing::warn!("cannot keep what `{}` changed for undo: {e:#}", call.name);
        }
        if let Err(e) = rec.store.finish_tool_call(
            row,
            result.decision,
            result.status.record(),
            content,
            result.error_kind,
            result.duration,
        ) {
            tracing::warn!("cannot record a tool call: {e:#}");
        }
    }
}
