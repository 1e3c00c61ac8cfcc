//! The one path of a tool call, for every caller — the agent, a workflow,
//! the MCP server, `tools call`, the daemon's runs: admit, approve, keep
//! what it will replace, run in its cell, record. [`ToolRunner::run`] does
//! all of it in that order, so a call from a script is checked, approved
//! and recorded exactly like a call from a model, and no caller orders a
//! record's start and finish itself.

use crate::approval::{Approver, Decided, Decision};
use crate::call::dispatch::Dispatcher;
use crate::call::error::{CallError, ErrorKind};
use crate::call::view::{AgentView, CallStatus};
use crate::effect::changes::Snapshot;
use crate::llm::ToolCall;
use crate::registry::ToolSource;
use crate::sandbox::output::CapturedOutput;
use crate::store::{
    CallRun, DecisionRecord, DeferredRecorder, RunId, RunKind, RunStatus, Store, now_ms,
};
use crate::util::json_text::JsonText;
use crate::util::text::one_line;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Characters of a result on the caller's status line.
const SUMMARY_CHARS: usize = 100;

/// Where a run is recorded.
#[derive(Clone, Copy)]
pub struct Recording<'a> {
    pub store: &'a Store,
    pub run: RunId,
}

/// How the calls of one caller are recorded.
#[derive(Clone, Copy)]
pub enum Record<'a> {
    /// Not at all (`tools call`, benchmarks).
    Nothing,
    /// Each call a step of one run (the agent's, a workflow's), recorded
    /// as it goes: asked for, then ended.
    InRun(Recording<'a>),
    /// Each call a run of its own (`toolcell mcp`). A call that may change
    /// something is recorded as it goes, before it runs, so a crash leaves
    /// it marked interrupted and what it replaced is kept for undo; one of
    /// a tool that changes nothing is recorded after it answered, by
    /// `later`, in batches: its latency carries no commit.
    OwnRun {
        store: &'a Store,
        later: &'a DeferredRecorder,
        /// The run's kind (`mcp`).
        kind: RunKind,
    },
}

/// What a caller brings to the path.
pub enum Request {
    /// Run with these arguments (parsed, not yet checked).
    Run(Value),
    /// The caller answered the call itself (a refusal before admission,
    /// `more_tools`, a call not run because the run stopped): recorded and
    /// shown like any other.
    Answered(Box<CallResult>),
}

/// Why a call gave no result.
#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: ErrorKind,
    /// The error without its kind.
    pub message: String,
}

/// What became of one tool call.
#[derive(Debug)]
pub struct CallResult {
    /// The result as text for a model: the JSON result, or `error (kind): …`;
    /// cut to the runner's `result_limit`, as recorded. Left empty for a
    /// successful call of a runner that records nothing and shows nobody
    /// (`tools call`, benchmarks): read `value` there.
    pub content: String,
    /// The result value, when the call succeeded.
    pub value: Option<JsonText>,
    pub status: CallStatus,
    pub decided: Decided,
    /// Who or what decided: a rule, the grant, a person, nobody to ask.
    pub decided_by: Option<String>,
    /// When that was decided, in Unix milliseconds.
    pub decided_at: Option<i64>,
    pub error: Option<Failure>,
    pub duration: Duration,
    /// The user chose to stop the whole run.
    pub quit: bool,
    /// The call ran in a cell built before it (see `sandbox::keeper`).
    pub built_ahead: bool,
    /// What the tool printed (`tools call --logs`).
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    /// What the call replaced, for undo (successful file changes only).
    snapshot: Option<Snapshot>,
}

impl CallResult {
    /// A call refused before it ran.
    pub fn refused(message: String, kind: ErrorKind, status: CallStatus, started: Instant) -> Self {
        Self {
            content: format!("error ({kind}): {message}"),
            error: Some(Failure { kind, message }),
            ..Self::ended(status, None, started)
        }
    }

    /// A call the host answered itself, without a cell.
    pub fn answered_by_host(value: Value, started: Instant) -> Self {
        Self {
            content: value.to_string(),
            ..Self::ended(
                CallStatus::Done,
                Some(JsonText::from_value(&value)),
                started,
            )
        }
    }

    /// A call that ended with `status` (and `value`), nobody asked, no
    /// text made yet.
    fn ended(status: CallStatus, value: Option<JsonText>, started: Instant) -> Self {
        Self {
            content: String::new(),
            value,
            status,
            decided: Decided::NotAsked,
            decided_by: None,
            decided_at: None,
            error: None,
            duration: started.elapsed(),
            quit: false,
            built_ahead: false,
            stdout: CapturedOutput::default(),
            stderr: CapturedOutput::default(),
            snapshot: None,
        }
    }

    /// A call stopped (or never started) because the run was stopped.
    pub fn cancelled(why: &str) -> Self {
        Self {
            content: format!("cancelled: {why}"),
            ..Self::refused(
                why.to_string(),
                ErrorKind::Cancelled,
                CallStatus::Cancelled,
                Instant::now(),
            )
        }
    }

    fn from_error(error: &CallError, started: Instant) -> Self {
        let kind = error.kind();
        let status = if error.is_denial() {
            CallStatus::Denied
        } else {
            CallStatus::Failed
        };
        Self::refused(error.to_string(), kind, status, started)
    }

    fn decided(self, decided: Decided) -> Self {
        Self { decided, ..self }
    }

    /// Says who decided the call, now.
    fn decided_by(self, by: Option<String>) -> Self {
        Self {
            decided_at: by.as_ref().map(|_| now_ms()),
            decided_by: by,
            ..self
        }
    }
}

/// Runs tool calls for one caller.
#[derive(Clone, Copy)]
pub struct ToolRunner<'a> {
    pub dispatcher: &'a Dispatcher,
    pub approver: &'a dyn Approver,
    pub record: Record<'a>,
    /// The most of a result passed on and recorded, in bytes (the share of
    /// a model's context a result may take); `None`: all of it.
    pub result_limit: Option<usize>,
}

impl<'a> Record<'a> {
    /// Each call a step of `recording`'s run, or not recorded without one.
    pub fn in_run(recording: Option<Recording<'a>>) -> Self {
        recording.map_or(Record::Nothing, Record::InRun)
    }
}

impl<'a> ToolRunner<'a> {
    /// A runner that records nothing and passes results on whole.
    pub fn unrecorded(dispatcher: &'a Dispatcher, approver: &'a dyn Approver) -> Self {
        Self {
            dispatcher,
            approver,
            record: Record::Nothing,
            result_limit: None,
        }
    }

    /// Tool `name` with `args`, shown to nobody and never stopped: `tools
    /// call` and benchmarks.
    pub async fn call(&self, name: &str, args: Value) -> CallResult {
        let call = ToolCall {
            id: "call".into(),
            name: name.to_string(),
            arguments: args.to_string(),
        };
        let mut view = crate::call::view::Silent;
        self.run(
            &call,
            Request::Run(args),
            &mut view,
            &CancellationToken::new(),
        )
        .await
    }

    /// `call` from request to record: recorded as asked for, admitted,
    /// approved, its changes kept for undo, run, its result cut to the
    /// limit, its end shown on `view` and recorded. `cancel` stops the wait
    /// for approval and the running call.
    pub async fn run(
        &self,
        call: &ToolCall,
        request: Request,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> CallResult {
        // A call of its own run that may change something is recorded as it
        // goes; one that changes nothing after it answered.
        let later = matches!(self.record, Record::OwnRun { .. }) && !self.changes_something(call);
        let own_run = if later {
            None
        } else {
            self.start_own_run(call)
        };
        let recorded_now = match (self.record, own_run) {
            (Record::InRun(rec), _) => Some(rec),
            (_, Some(run)) => self.store().map(|store| Recording { store, run }),
            _ => None,
        };
        let row = recorded_now.and_then(|rec| {
            rec.store
                .start_tool_call(rec.run, &call.id, &call.name, &call.arguments)
                .map_err(|e| tracing::warn!("cannot record a tool call: {e:#}"))
                .ok()
        });
        let mut result = match request {
            Request::Answered(result) => *result,
            Request::Run(args) => {
                // What it replaces is kept only where it is recorded.
                let recorded_in = recorded_now.map(|rec| rec.run);
                self.admit_and_run(call, &args, recorded_in, view, cancel)
                    .await
            }
        };
        // The result's text: for the record, the limit and the view; a
        // runner that records nothing and shows nobody leaves it unmade.
        let wants_text = !matches!(self.record, Record::Nothing)
            || self.result_limit.is_some()
            || view.shows_results();
        if wants_text
            && let Some(value) = result.value.as_ref().filter(|_| result.content.is_empty())
        {
            // A string is shown as its text; anything else as compact JSON.
            result.content = value
                .as_string()
                .unwrap_or_else(|| value.compact().into_owned());
        }
        if let Some(limit) = self.result_limit {
            result.content = cut_result(std::mem::take(&mut result.content), limit);
        }
        let summary = view
            .shows_results()
            .then(|| one_line(&result.content, SUMMARY_CHARS));
        view.call_status(
            call,
            result.status,
            Some(result.duration),
            summary.as_deref(),
        );
        if let (Some(rec), Some(row)) = (recorded_now, row) {
            self.finish(call, rec, row, &mut result);
        } else if later {
            self.record_later(call, &result);
        }
        if let (Some(run), Some(store)) = (own_run, self.store()) {
            let error = result.error.as_ref().map(|e| e.message.as_str());
            if let Err(e) = store.finish_run(run, run_status(&result), None, error) {
                tracing::warn!("cannot record the end of a call's run: {e:#}");
            }
        }
        result
    }

    /// Admits, approves and runs `call` with its `args`; when it is
    /// `recorded_in` a run, takes what a file-changing built-in call will
    /// replace, for undo.
    async fn admit_and_run(
        &self,
        call: &ToolCall,
        args: &Value,
        recorded_in: Option<RunId>,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> CallResult {
        let started = Instant::now();
        let mut admitted = match self.dispatcher.admit(&call.name, args) {
            Ok(admitted) => admitted,
            Err(refused) => {
                return CallResult::from_error(&refused.error, started).decided_by(refused.by);
            }
        };
        let mut decided = Decided::Auto;
        let mut decided_by = admitted.decided_by.clone();
        let mut decided_at = now_ms();
        if admitted.needs_approval {
            view.call_status(call, CallStatus::WaitingForApproval, None, None);
            let (answer, answered_by) = tokio::select! {
                answer = self.dispatcher.seek_approval(&mut admitted, args, self.approver, recorded_in) => answer,
                () = cancel.cancelled() => return CallResult::cancelled("the run was stopped while this call waited for approval"),
            };
            decided = Decided::from(&answer);
            decided_at = now_ms();
            // A rule that asked is named beside whoever answered.
            decided_by = if admitted.decided_by_rule {
                format!("{answered_by}, asked by the {}", admitted.decided_by)
            } else {
                answered_by
            };
            if let Some(error) = admitted.refusal(&answer) {
                return CallResult {
                    quit: answer == Decision::Quit,
                    decided_at: Some(decided_at),
                    ..CallResult::from_error(&error, started)
                        .decided(decided)
                        .decided_by(Some(decided_by))
                };
            }
        }
        view.call_status(call, CallStatus::Running, None, None);
        let snapshot = match admitted.entry.source {
            ToolSource::BuiltIn if recorded_in.is_some() => {
                Snapshot::take(self.dispatcher.config(), &call.name, args)
            }
            _ => None,
        };
        let outcome = tokio::select! {
            outcome = self.dispatcher.execute(admitted, args) => outcome,
            () = cancel.cancelled() => {
                return CallResult::cancelled("the run was stopped while this call ran; it may have done part of its work").decided(decided);
            }
        };
        let mut result = match outcome.result {
            // The text is made from the value when it is wanted (see `run`).
            Ok(value) => CallResult {
                snapshot,
                // Only a result says it ran in a cell built ahead.
                built_ahead: outcome.built_ahead,
                ..CallResult::ended(CallStatus::Done, Some(value), started)
            },
            Err(error) => CallResult::from_error(&error, started),
        };
        result.decided = decided;
        result.decided_by = Some(decided_by);
        result.decided_at = Some(decided_at);
        result.stdout = outcome.stdout;
        result.stderr = outcome.stderr;
        result.duration = started.elapsed();
        result
    }

    fn store(&self) -> Option<&'a Store> {
        match self.record {
            Record::Nothing => None,
            Record::InRun(rec) => Some(rec.store),
            Record::OwnRun { store, .. } => Some(store),
        }
    }

    /// The run of its own a call that may change something is recorded in,
    /// started before it runs.
    fn start_own_run(&self, call: &ToolCall) -> Option<RunId> {
        let Record::OwnRun { store, kind, .. } = self.record else {
            return None;
        };
        store
            .start_run(kind, &run_title(kind, call), None)
            .map_err(|e| tracing::warn!("cannot record a call's run: {e:#}"))
            .ok()
    }

    /// Whether `call` may change something: any tool not known to change nothing.
    fn changes_something(&self, call: &ToolCall) -> bool {
        self.dispatcher
            .registry()
            .get(&call.name)
            .is_none_or(|entry| entry.manifest.mutates)
    }

    /// Records how the call at `row` ended and keeps what it replaced.
    fn finish(&self, call: &ToolCall, rec: Recording<'_>, row: i64, result: &mut CallResult) {
        if let Some(snapshot) = result.snapshot.take()
            && let Err(e) = snapshot.record(self.dispatcher.config(), rec.store, rec.run, row)
        {
            tracing::warn!("cannot keep what `{}` changed for undo: {e:#}", call.name);
        }
        let decided = DecisionRecord {
            decision: result.decided.as_str(),
            by: result.decided_by.as_deref(),
            at: result.decided_at,
        };
        if let Err(e) = rec.store.finish_tool_call(
            row,
            &decided,
            result.status.record(),
            &result.content,
            result.error.as_ref().map(|e| e.kind.as_str()),
            result.duration,
        ) {
            tracing::warn!("cannot record a tool call: {e:#}");
        }
    }

    /// Queues a finished call of a tool that changes nothing, to be
    /// recorded as a run of its own.
    fn record_later(&self, call: &ToolCall, result: &CallResult) {
        let Record::OwnRun { later, kind, .. } = self.record else {
            return;
        };
        later.record(CallRun {
            kind,
            title: run_title(kind, call),
            status: run_status(result),
            error: result.error.as_ref().map(|e| e.message.clone()),
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            call_status: result.status.record(),
            decision: result.decided.as_str(),
            decided_by: result.decided_by.clone(),
            decided_at: result.decided_at,
            result: result.content.clone(),
            error_kind: result.error.as_ref().map(|e| e.kind.as_str()),
            duration: result.duration,
            ended_at: now_ms(),
        });
    }
}

/// The title of a call's own run: `mcp: read_file`.
fn run_title(kind: RunKind, call: &ToolCall) -> String {
    format!("{}: {}", kind.as_str(), call.name)
}

fn run_status(result: &CallResult) -> RunStatus {
    if result.value.is_some() {
        RunStatus::Succeeded
    } else {
        RunStatus::Failed
    }
}

/// `result` cut to `max` bytes, with a note saying so.
pub fn cut_result(result: String, max: usize) -> String {
    if result.len() <= max {
        return result;
    }
    let at = result.floor_char_boundary(max);
    format!(
        "{}\n[cut: the result has {} bytes; only the first {at} fit in the context. Ask for less: a smaller file, a narrower search, a line range.]",
        &result[..at],
        result.len()
    )
}
