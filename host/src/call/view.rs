//! What the agent loop shows while it works. The command line prints to
//! the terminal; workflows and the MCP server will show (or log) it their
//! own way; tests can collect it.

use crate::llm::{StreamEvent, ToolCall, Usage};
use crate::util::text::human_duration;
use std::time::Duration;

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    WaitingForApproval,
    Running,
    Done,
    Failed,
    Denied,
    Cancelled,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::WaitingForApproval => "waiting for approval",
            CallStatus::Running => "running",
            CallStatus::Done => "done",
            CallStatus::Failed => "failed",
            CallStatus::Denied => "denied",
            CallStatus::Cancelled => "cancelled",
        }
    }

    /// The word stored in the run record.
    pub fn record(self) -> &'static str {
        match self {
            CallStatus::WaitingForApproval | CallStatus::Running => "running",
            CallStatus::Done => "done",
            CallStatus::Failed => "failed",
            CallStatus::Denied => "denied",
            CallStatus::Cancelled => "cancelled",
        }
    }
}

/// Receives what the loop does, as it happens. Calls come from the task
/// running the loop, never concurrently.
pub trait AgentView: Send {
    /// A piece of the model's answer or thinking.
    fn stream(&mut self, event: StreamEvent<'_>);

    /// The model's turn is complete (ends a line of streamed text), with
    /// the tokens it took if the server said.
    fn turn_end(&mut self, usage: Option<Usage>) {
        let _ = usage;
    }

    /// What streamed of the current turn is void: the request failed
    /// part-way and is made again, so the turn streams again from its
    /// start.
    fn turn_discarded(&mut self) {}

    /// A tool call changed status. `summary` is set for the final statuses:
    /// a one-line account of the result or the error.
    fn call_status(
        &mut self,
        call: &ToolCall,
        status: CallStatus,
        duration: Option<Duration>,
        summary: Option<&str>,
    );

    /// Something the user should know (a retry, dropped context).
    fn notice(&mut self, text: &str);

    /// Whether [`AgentView::call_status`] shows a call's summary (its
    /// result on one line): when it does not, none is made.
    fn shows_results(&self) -> bool {
        true
    }
}

/// Characters of a call's arguments shown on its status line.
const SHOWN_ARGS: usize = 80;

/// The one-line account of a call for people:
/// `[done] read_file {"path":"a.md"} (3 ms) → {"content":…}`.
/// Characters of a tool name shown in a status line: a model may invent a
/// name of any length.
const SHOWN_NAME: usize = 80;

pub fn status_line(
    call: &ToolCall,
    status: CallStatus,
    duration: Option<Duration>,
    summary: Option<&str>,
) -> String {
    use crate::util::text::{for_terminal_line, one_line};
    // The name and arguments are the model's, the summary the tool's: on
    // one line, nothing in them hidden or reordered.
    let head = format!(
        "[{}] {} {}",
        status.as_str(),
        for_terminal_line(&crate::util::text::shorten(&call.name, SHOWN_NAME)),
        for_terminal_line(&one_line(&call.arguments, SHOWN_ARGS))
    );
    match (duration, summary) {
        (Some(d), Some(summary)) => format!(
            "{head} ({}) → {}",
            human_duration(d),
            for_terminal_line(summary)
        ),
        _ => head,
    }
}

/// Shows nothing.
pub struct Silent;

impl AgentView for Silent {
    fn stream(&mut self, _: StreamEvent<'_>) {}
    fn call_status(&mut self, _: &ToolCall, _: CallStatus, _: Option<Duration>, _: Option<&str>) {}
    fn notice(&mut self, _: &str) {}

    fn shows_results(&self) -> bool {
        false
    }
}
