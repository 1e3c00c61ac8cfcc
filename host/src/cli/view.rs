//! How an agent run looks at the terminal: the model's answer streams to
//! stdout; its thinking (dimmed, or hidden) and the tool calls with their
//! status go to stderr, so `toolcell chat "…" > answer.md` keeps only the
//! answer. Everything the model and the tools wrote reaches the terminal
//! through [`for_terminal`]: the dimming here is the only escape written.

use crate::call::view::{AgentView, CallStatus, status_line};
use crate::llm::{StreamEvent, ToolCall};
use crate::util::text::for_terminal;
use std::io::{IsTerminal, Write};
use std::time::Duration;

const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// Prints a run for a person.
pub struct TerminalView {
    show_thinking: bool,
    /// stderr is a terminal: colours and dimming.
    styled: bool,
    /// stdout is a terminal: the answer is shown visibly (saved to a
    /// file, it keeps its bytes).
    answer_to_terminal: bool,
    /// stdout has text without a final newline.
    open_line: bool,
    thinking_open: bool,
}

impl TerminalView {
    pub fn new(show_thinking: bool) -> Self {
        Self {
            show_thinking,
            styled: std::io::stderr().is_terminal(),
            answer_to_terminal: std::io::stdout().is_terminal(),
            open_line: false,
            thinking_open: false,
        }
    }

    fn end_lines(&mut self) {
        if self.thinking_open {
            self.thinking_open = false;
            let mut err = std::io::stderr();
            let _ = writeln!(err, "{}", if self.styled { RESET } else { "" });
        }
        if self.open_line {
            self.open_line = false;
            let mut out = std::io::stdout();
            let _ = writeln!(out);
            let _ = out.flush();
        }
    }

    fn line(&mut self, text: &str) {
        self.end_lines();
        let mut err = std::io::stderr();
        let text = crate::util::text::for_terminal_message(text);
        if self.styled {
            let _ = writeln!(err, "{DIM}{text}{RESET}");
        } else {
            let _ = writeln!(err, "{text}");
        }
    }
}

impl AgentView for TerminalView {
    fn stream(&mut self, event: StreamEvent<'_>) {
        match event {
            StreamEvent::Thinking(text) => {
                if !self.show_thinking {
                    return;
                }
                let mut err = std::io::stderr();
                if !self.thinking_open {
                    self.thinking_open = true;
                    let _ = write!(err, "{}thinking: ", if self.styled { DIM } else { "" });
                }
                let _ = write!(err, "{}", for_terminal(text));
                let _ = err.flush();
            }
            StreamEvent::Content(text) => {
                if self.thinking_open {
                    self.thinking_open = false;
                    let _ = writeln!(
                        std::io::stderr(),
                        "{}",
                        if self.styled { RESET } else { "" }
                    );
                }
                let mut out = std::io::stdout();
                let shown = match self.answer_to_terminal {
                    true => for_terminal(text),
                    false => std::borrow::Cow::Borrowed(text),
                };
                let _ = out.write_all(shown.as_bytes());
                let _ = out.flush();
                self.open_line = !text.ends_with('\n');
            }
        }
    }

    fn turn_end(&mut self, _: Option<crate::llm::Usage>) {
        self.end_lines();
    }

    fn call_status(
        &mut self,
        call: &ToolCall,
        status: CallStatus,
        duration: Option<Duration>,
        summary: Option<&str>,
    ) {
        let text = status_line(call, status, duration, summary);
        self.line(&text);
    }

    fn notice(&mut self, text: &str) {
        self.line(&format!("toolcell: {text}"));
    }
}
