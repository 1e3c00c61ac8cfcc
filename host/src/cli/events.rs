//! `toolcell chat --json`: every event of a run as one JSON object per line
//! on stdout, for scripts and for the page (`toolcell ui`). The schema is
//! `docs/chat-json.md`; this file is its one implementation.
//!
//! Text is passed as the model and the tools wrote it (JSON escapes it);
//! whoever shows it to a person makes it safe for where it is shown.

use crate::call::view::{AgentView, CallStatus};
use crate::llm::{StreamEvent, ToolCall, Usage};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

/// Writes the events of a run to stdout. A clone shares the token count,
/// so the one that reports the end knows every turn's.
#[derive(Clone)]
pub struct JsonEvents {
    /// Whether stdout is a terminal: asked once, not per event (each
    /// asking is a system call, and a turn is thousands of events).
    terminal: bool,
    /// Calls of this turn already announced (`call_requested`). Per turn:
    /// ids repeat across turns (`call_0` for servers that give none).
    seen: BTreeSet<String>,
    /// Calls waiting for approval: their next status says how it went.
    waiting: BTreeSet<String>,
    /// Tokens of every turn so far, as the servers reported them.
    usage: std::sync::Arc<std::sync::Mutex<Usage>>,
}

impl Default for JsonEvents {
    fn default() -> Self {
        use std::io::IsTerminal;
        Self {
            terminal: std::io::stdout().is_terminal(),
            seen: BTreeSet::new(),
            waiting: BTreeSet::new(),
            usage: Default::default(),
        }
    }
}

impl JsonEvents {
    /// Writes one event.
    pub fn emit(&self, event: Value) {
        self.write_line(event.to_string());
    }

    /// Writes one line of JSON, at once. At a terminal, what JSON leaves
    /// as it is but a terminal would act on (C1 controls, direction
    /// overrides) shows as escapes, as everywhere toolcell prints.
    fn write_line(&self, mut line: String) {
        let mut out = std::io::stdout().lock();
        let _ = if self.terminal {
            writeln!(out, "{}", crate::util::text::for_terminal(&line))
        } else {
            line.push('\n');
            out.write_all(line.as_bytes())
        };
        let _ = out.flush();
    }

    /// The run began.
    pub fn started(&self, run: i64, model: &str, task: &str, resumes: Option<i64>) {
        self.emit(json!({
            "type": "run_started", "run": run, "model": model, "task": task, "resumes": resumes,
        }));
    }

    /// The run ended: its status, the answer (text, or JSON with
    /// `--output-schema`) or the error, and the tokens of all its turns.
    pub fn ended(&self, run: i64, status: &str, answer: Option<Value>, error: Option<&str>) {
        self.emit(json!({
            "type": "run_ended", "run": run, "status": status,
            "answer": answer, "error": error,
            "usage": *self.usage.lock().unwrap_or_else(|p| p.into_inner()),
        }));
    }
}

/// A call's arguments as JSON when they are, else as the text written.
fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

impl AgentView for JsonEvents {
    fn stream(&mut self, event: StreamEvent<'_>) {
        // The most frequent event, written without building a JSON tree.
        let (start, text) = match event {
            StreamEvent::Content(text) => (r#"{"type":"text","text":"#, text),
            StreamEvent::Thinking(text) => (r#"{"type":"thinking","text":"#, text),
        };
        let mut line = Vec::with_capacity(start.len() + text.len() + 8);
        line.extend_from_slice(start.as_bytes());
        let _ = serde_json::to_writer(&mut line, text);
        line.push(b'}');
        // serde_json writes UTF-8.
        self.write_line(String::from_utf8(line).unwrap_or_default());
    }

    fn turn_end(&mut self, usage: Option<Usage>) {
        // The turn's calls are reported after this, before the next turn.
        self.seen.clear();
        self.waiting.clear();
        if let Some(usage) = usage {
            let mut total = self.usage.lock().unwrap_or_else(|p| p.into_inner());
            total.prompt_tokens += usage.prompt_tokens;
            total.completion_tokens += usage.completion_tokens;
        }
        self.emit(json!({"type": "turn_end", "usage": usage}));
    }

    fn call_status(
        &mut self,
        call: &ToolCall,
        status: CallStatus,
        duration: Option<Duration>,
        summary: Option<&str>,
    ) {
        let id = call.id.as_str();
        if self.seen.insert(id.to_string()) {
            self.emit(json!({
                "type": "call_requested", "id": id, "tool": call.name,
                "arguments": arguments(call),
            }));
        }
        if status != CallStatus::WaitingForApproval && self.waiting.remove(id) {
            let decision = match status {
                CallStatus::Running | CallStatus::Done | CallStatus::Failed => "approved",
                CallStatus::Cancelled => "cancelled",
                _ => "denied",
            };
            self.emit(json!({"type": "call_decided", "id": id, "decision": decision}));
        }
        match status {
            CallStatus::WaitingForApproval => {
                self.waiting.insert(id.to_string());
                self.emit(json!({"type": "approval_needed", "id": id, "tool": call.name}));
            }
            CallStatus::Running => {
                self.emit(json!({"type": "call_started", "id": id, "tool": call.name}));
            }
            CallStatus::Done | CallStatus::Failed | CallStatus::Denied | CallStatus::Cancelled => {
                self.emit(json!({
                    "type": "call_finished", "id": id, "tool": call.name,
                    "status": status.as_str(),
                    "duration_ms": duration.map(|d| d.as_secs_f64() * 1e3),
                    "summary": summary,
                }));
            }
        }
    }

    fn turn_discarded(&mut self) {
        self.emit(json!({"type": "turn_discarded"}));
    }

    fn notice(&mut self, text: &str) {
        self.emit(json!({"type": "notice", "text": text}));
    }
}
