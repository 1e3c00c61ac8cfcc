//! Approvals: whether a tool call may run, decided by policy and, when the
//! policy says `ask`, by whoever answers for the user.
//!
//! The policy (manifest default, config override) gives an [`ApprovalMode`];
//! an [`Approver`] answers the `ask` case. An approval is for one call with
//! exactly the arguments shown.

use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};

/// What the policy says about calls of one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Run without asking.
    Auto,
    /// Ask the user before every call.
    Ask,
    /// Never run.
    Deny,
}

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ApprovalMode::Auto => "auto",
            ApprovalMode::Ask => "ask",
            ApprovalMode::Deny => "deny",
        })
    }
}

/// One call waiting for approval.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    pub tool: &'a str,
    pub args: &'a Value,
    pub mutates: bool,
}

/// The answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approved,
    /// Declined, with the reason shown to the caller (and the model).
    Declined(String),
}

/// Answers approval requests for the user. Called on the thread running the
/// call; it may block (a terminal prompt does).
pub trait Approver: Send + Sync {
    fn decide(&self, request: &ApprovalRequest<'_>) -> Decision;
}

/// Approves everything: `--yes`, or a caller that already asked.
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn decide(&self, _: &ApprovalRequest<'_>) -> Decision {
        Decision::Approved
    }
}

/// Asks on the terminal; declines when there is no terminal to ask on.
pub struct TerminalApprover;

impl Approver for TerminalApprover {
    fn decide(&self, request: &ApprovalRequest<'_>) -> Decision {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Decision::Declined(format!(
                "`{}` needs approval and there is no terminal to ask on: pass --yes to approve it",
                request.tool
            ));
        }
        let args = serde_json::to_string_pretty(request.args).unwrap_or_default();
        let mut stderr = std::io::stderr();
        let _ = write!(
            stderr,
            "toolcell: run `{}` with\n{args}\nApprove? [y/N] ",
            request.tool
        );
        let _ = stderr.flush();
        let mut answer = String::new();
        if stdin.lock().read_line(&mut answer).is_err() {
            return Decision::Declined("could not read the answer".into());
        }
        if matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes") {
            Decision::Approved
        } else {
            Decision::Declined("the user declined".into())
        }
    }
}
