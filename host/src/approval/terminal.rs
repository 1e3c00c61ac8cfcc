//! The approval prompt at a terminal: the exact arguments, what would
//! change, and the answers yes / no (with a reason for the model) / yes to
//! this tool for the rest of the run / quit.

use super::{Answer, ApprovalRequest, Approver, Decision};
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Mutex;

/// Longest argument text shown whole; beyond it the middle is elided, and
/// the preview shows the change itself.
const MAX_SHOWN_ARGS: usize = 4000;

/// Longest text of several lines shown (code, a file's content); beyond it
/// the rest is counted, not shown.
const MAX_SHOWN_BLOCK: usize = 8000;

/// Asks on the terminal (stdin for answers, stderr for the prompt).
pub struct TerminalApprover {
    /// Tools the user approved for the rest of the run.
    approved_for_run: Mutex<BTreeSet<String>>,
}

impl TerminalApprover {
    /// A prompt on this process's terminal, if stdin is one.
    pub fn if_terminal() -> Option<Self> {
        std::io::stdin().is_terminal().then(|| Self {
            approved_for_run: Mutex::default(),
        })
    }
}

/// The text of the prompt for `request`.
pub fn render(request: &ApprovalRequest<'_>) -> String {
    let mut text = shown(request);
    if !request.offers_for_run() {
        text.push_str("  [y] yes  [n] no (add a reason: `n too risky`)  [q] quit\n> ");
    } else {
        text.push_str(&format!(
            "  [y] yes  [n] no (add a reason: `n too risky`)  [a] yes to `{}` for this run  [q] quit\n> ",
            request.tool
        ));
    }
    text
}

/// What the prompt shows of `request` before its answers: the call, its
/// arguments, any warning and the change it would make — also what the
/// inbox shows of a parked call.
pub fn shown(request: &ApprovalRequest<'_>) -> String {
    let mut text = String::from("\n");
    if let Some(change) = &request.policy_change {
        text.push_str(&format!("! {change}\n"));
    }
    if request.asked_again {
        text.push_str(
            "! what this call would change changed since you answered: this is the change now\n",
        );
    }
    text.push_str(&format!("? `{}` wants to run with:\n", request.tool));
    let (args, blocks) = super::texts_apart(request.args);
    let args = serde_json::to_string_pretty(&args).unwrap_or_default();
    let args = if args.len() > MAX_SHOWN_ARGS {
        let head = crate::util::text::shorten(&args, MAX_SHOWN_ARGS / 2);
        format!("{head}\n  … ({} characters in all)", args.chars().count())
    } else {
        args
    };
    for line in args.lines() {
        text.push_str("    ");
        text.push_str(line);
        text.push('\n');
    }
    for (key, block) in blocks {
        text.push_str(&format!("  {key}:\n"));
        let shown = if block.len() > MAX_SHOWN_BLOCK {
            let head = crate::util::text::shorten(&block, MAX_SHOWN_BLOCK);
            format!("{head}\n… ({} lines in all)", block.lines().count())
        } else {
            block
        };
        for line in shown.lines() {
            text.push_str("    │ ");
            text.push_str(line);
            text.push('\n');
        }
    }
    if let Some(warning) = &request.warning {
        text.push_str(&format!("  ! {warning}\n"));
    }
    if let Some(preview) = &request.preview {
        text.push_str("  what will change:\n");
        for line in preview.lines() {
            text.push_str("    ");
            text.push_str(line);
            text.push('\n');
        }
    }
    // Nothing in the arguments, the warning or the preview may hide or
    // reorder what is shown.
    crate::util::text::for_terminal(&text).into_owned()
}

/// Reverse video, and back: toolcell's mark on its own prompt lines.
const MARK: &str = "\x1b[7m";
const UNMARK: &str = "\x1b[0m";

/// Whether the prompt is marked in reverse video: stderr is a terminal and
/// `NO_COLOR` is not set.
fn styled() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The prompt with its own lines — the policy warning, the `?` line and
/// the answers — in reverse video where `styled`: text from outside
/// reaches the terminal with every escape shown ([`shown`]), so a model's
/// text can look like a prompt but never like these lines.
fn marked(prompt: &str, styled: bool) -> String {
    if !styled {
        return prompt.to_string();
    }
    let mut text = String::with_capacity(prompt.len() + 64);
    for line in prompt.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let own = body.starts_with("! ") || body.starts_with("? ") || body.starts_with("  [y] yes");
        if own {
            text.push_str(MARK);
            text.push_str(body);
            text.push_str(UNMARK);
            text.push_str(&line[body.len()..]);
        } else {
            text.push_str(line);
        }
    }
    text
}

/// Drops what was typed at the terminal and not read yet.
fn discard_typed_ahead() {
    // SAFETY: tcflush(3) on standard input; an error (not a terminal) is
    // harmless and ignored.
    unsafe {
        libc::tcflush(libc::STDIN_FILENO, libc::TCIFLUSH);
    }
}

/// What the answer `line` means; "yes for this run" only where it is
/// offered (`for_run`).
pub fn parse_answer(line: &str, tool: &str, for_run: bool) -> Option<Decision> {
    let line = line.trim();
    let (word, rest) = match line.split_once(char::is_whitespace) {
        Some((word, rest)) => (word, rest.trim()),
        None => (line, ""),
    };
    match word.to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(Decision::Approved),
        "a" | "always" if for_run => Some(Decision::ApprovedForRun),
        "q" | "quit" => Some(Decision::Quit),
        "n" | "no" => Some(Decision::Declined(if rest.is_empty() {
            format!("the user declined this call of `{tool}`")
        } else {
            format!("the user declined this call of `{tool}`: {rest}")
        })),
        _ => None,
    }
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn decide(&self, request: &ApprovalRequest<'_>) -> Answer {
        let for_run = request.offers_for_run();
        if for_run
            && self
                .approved_for_run
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(request.tool)
        {
            return Answer::new(Decision::Approved, super::APPROVED_FOR_RUN_BY_PERSON);
        }
        let prompt = marked(&render(request), styled());
        let tool = request.tool.to_string();
        // stdin blocks: read it on a blocking thread so Ctrl-C still reaches
        // the run while the prompt waits.
        let decision = tokio::task::spawn_blocking(move || {
            let mut stderr = std::io::stderr();
            // What was typed before this prompt was shown answers nothing:
            // a model can write text that looks like a prompt and wait, and
            // a `y` typed at it must not approve the call that follows.
            discard_typed_ahead();
            let _ = stderr.write_all(prompt.as_bytes());
            let _ = stderr.flush();
            loop {
                let mut answer = String::new();
                match std::io::stdin().lock().read_line(&mut answer) {
                    Ok(0) | Err(_) => return Decision::Quit,
                    Ok(_) => {}
                }
                if let Some(decision) = parse_answer(&answer, &tool, for_run) {
                    return decision;
                }
                let choices = if for_run {
                    "y, n [reason], a or q"
                } else {
                    "y, n [reason] or q"
                };
                let _ = write!(stderr, "  answer {choices}\n> ");
                let _ = stderr.flush();
            }
        })
        .await
        .unwrap_or(Decision::Quit);
        if decision == Decision::ApprovedForRun {
            self.approved_for_run
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(request.tool.to_string());
        }
        Answer::person(decision)
    }

    fn can_ask_again(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_toolcell_s_own_prompt_lines_are_marked() {
        let prompt = "\n! this call changes toolcell's own policy\n? `x` wants to run with:\n    {}\n  what will change:\n    ? `y` wants\n  [y] yes  [n] no\n> ";
        let text = marked(prompt, true);
        assert!(text.contains("\x1b[7m! this call"), "{text}");
        assert!(
            text.contains("\x1b[7m? `x` wants to run with:\x1b[0m\n"),
            "{text}"
        );
        assert!(
            text.contains("\x1b[7m  [y] yes  [n] no\x1b[0m\n> "),
            "{text}"
        );
        // An argument or preview line that looks like one is indented: not marked.
        assert!(text.contains("\n    ? `y` wants\n"), "{text}");
        assert_eq!(text.matches(MARK).count(), 3, "{text}");
        assert_eq!(marked(prompt, false), prompt);
    }

    #[test]
    fn answers() {
        assert_eq!(parse_answer("Y\n", "t", true), Some(Decision::Approved));
        assert_eq!(parse_answer("a", "t", true), Some(Decision::ApprovedForRun));
        assert_eq!(parse_answer("q", "t", true), Some(Decision::Quit));
        assert_eq!(
            parse_answer("n  keep the old file ", "write_file", true),
            Some(Decision::Declined(
                "the user declined this call of `write_file`: keep the old file".into()
            ))
        );
        assert_eq!(parse_answer("maybe", "t", true), None);
        // Not offered for tools approved call by call.
        assert_eq!(parse_answer("a", "run_command", false), None);
    }

    #[test]
    fn code_is_shown_as_lines_each_marked_and_nothing_else_leaves_its_line() {
        let args = serde_json::json!({
            "code": "import csv\nprint(1)\n\u{1b}[2J? `x` wants to run with:",
            "path": "a\nb",
        });
        let request = ApprovalRequest {
            tool: "run_python",
            args: &args,
            mutates: true,
            preview: None,
            warning: None,
            every_call: false,
            always: false,
            policy_change: None,
            basis: Vec::new(),
            asked_again: false,
            run: None,
        };
        let text = shown(&request);
        assert!(
            text.contains("\"code\": \"(3 lines, shown below)\""),
            "{text}"
        );
        assert!(text.contains("\"path\": \"a\\nb\""), "{text}");
        assert!(
            text.contains("  code:\n    │ import csv\n    │ print(1)\n    │ \\e[2J? `x`"),
            "{text}"
        );
        assert_eq!(
            text.lines().filter(|l| l.starts_with('?')).count(),
            1,
            "{text}"
        );
    }
}
