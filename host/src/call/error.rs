//! Why a call gave no result: [`CallError`] for what the call path refuses
//! or a run fails with, and [`ErrorKind`], the one list of the kinds that
//! reach a model, a script (`#{kind, message}` errors a workflow catches),
//! `--json` output or the run record.

use crate::mcp::result::McpCallError;
use crate::sandbox::{RunError, ToolErrorKind};

/// The kind of a failed call, as models, scripts and records see it. The
/// words are stable: they are in run stores and scripts' error handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// No tool of that name (or none the caller may use).
    UnknownTool,
    /// The workspace config disables the tool.
    Disabled,
    /// The arguments do not fit the tool's schema (or the tool said so).
    InvalidArgs,
    /// A call without a tool name: what a model wrote could not be read as a call.
    InvalidCall,
    /// The model's output limit cut the call's arguments off.
    Truncated,
    /// The same call a third time in a row.
    Repeated,
    /// Refused by the policy, the user or the tool.
    Denied,
    /// The tool cannot be used now (its component, server or grant).
    Unavailable,
    /// The run was stopped before or while the call ran.
    Cancelled,
    /// The tool found nothing at the path it was given.
    NotFound,
    /// The tool failed.
    Failed,
    /// The call ran past its deadline.
    Timeout,
    /// The call asked for more memory than its limit.
    MemoryLimit,
    /// The component trapped.
    Trap,
    /// The result was larger than the limit.
    OutputTooLarge,
    /// The component's result was not the JSON the contract asks for.
    InvalidResult,
    /// An external MCP server failed (crashed, answered garbage).
    ServerFailed,
    /// A workflow's model call failed (the server, or the model's answer).
    Model,
    /// A workflow's agent ran out of rounds before it answered.
    Incomplete,
    /// A model's answer is not the JSON a workflow asked for.
    InvalidOutput,
    /// Text a workflow gave `from_json` is not JSON.
    InvalidJson,
    /// A value nests deeper than the host takes.
    TooDeep,
}

impl ErrorKind {
    /// Every kind, for checks and documentation.
    pub const ALL: [ErrorKind; 22] = [
        ErrorKind::UnknownTool,
        ErrorKind::Disabled,
        ErrorKind::InvalidArgs,
        ErrorKind::InvalidCall,
        ErrorKind::Truncated,
        ErrorKind::Repeated,
        ErrorKind::Denied,
        ErrorKind::Unavailable,
        ErrorKind::Cancelled,
        ErrorKind::NotFound,
        ErrorKind::Failed,
        ErrorKind::Timeout,
        ErrorKind::MemoryLimit,
        ErrorKind::Trap,
        ErrorKind::OutputTooLarge,
        ErrorKind::InvalidResult,
        ErrorKind::ServerFailed,
        ErrorKind::Model,
        ErrorKind::Incomplete,
        ErrorKind::InvalidOutput,
        ErrorKind::InvalidJson,
        ErrorKind::TooDeep,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnknownTool => "unknown-tool",
            ErrorKind::Disabled => "disabled",
            ErrorKind::InvalidArgs => "invalid-args",
            ErrorKind::InvalidCall => "invalid-call",
            ErrorKind::Truncated => "truncated",
            ErrorKind::Repeated => "repeated",
            ErrorKind::Denied => "denied",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::NotFound => "not-found",
            ErrorKind::Failed => "failed",
            ErrorKind::Timeout => "timeout",
            ErrorKind::MemoryLimit => "memory-limit",
            ErrorKind::Trap => "trap",
            ErrorKind::OutputTooLarge => "output-too-large",
            ErrorKind::InvalidResult => "invalid-result",
            ErrorKind::ServerFailed => "server-failed",
            ErrorKind::Model => "model",
            ErrorKind::Incomplete => "incomplete",
            ErrorKind::InvalidOutput => "invalid-output",
            ErrorKind::InvalidJson => "invalid-json",
            ErrorKind::TooDeep => "too-deep",
        }
    }

    /// The kind a word names, as stored.
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == word)
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<ToolErrorKind> for ErrorKind {
    fn from(kind: ToolErrorKind) -> Self {
        match kind {
            ToolErrorKind::InvalidArgs => ErrorKind::InvalidArgs,
            ToolErrorKind::NotFound => ErrorKind::NotFound,
            ToolErrorKind::Denied => ErrorKind::Denied,
            ToolErrorKind::Failed => ErrorKind::Failed,
        }
    }
}

/// Why a call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    // The name is the caller's (a model's, a script's): shown on one line,
    // its control characters visible, as every tool name is shown.
    #[error("there is no tool named {}; the tools are: {}", crate::registry::shown_name(name), available.join(", "))]
    UnknownTool {
        name: String,
        available: Vec<String>,
    },
    #[error(
        "`{name}` is disabled in the workspace config (the user enables it with `[tools.{name}] enabled = true` in toolcell.toml)"
    )]
    Disabled { name: String },
    #[error("the arguments do not fit the schema of `{tool}`: {}", problems.join("; "))]
    InvalidArgs { tool: String, problems: Vec<String> },
    #[error("`{tool}` was not run: {reason}")]
    Denied { tool: String, reason: String },
    #[error("`{tool}` cannot be used: {message}")]
    Unavailable { tool: String, message: String },
    #[error("`{tool}` {error}")]
    Run { tool: String, error: RunError },
    #[error("`{tool}` {error}")]
    External { tool: String, error: McpCallError },
}

impl CallError {
    /// Whether the call was refused by policy or by the user, rather than
    /// failing (a tool's own `denied` is a failure of the call).
    pub fn is_denial(&self) -> bool {
        matches!(self, CallError::Denied { .. } | CallError::Disabled { .. })
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            CallError::UnknownTool { .. } => ErrorKind::UnknownTool,
            CallError::Disabled { .. } => ErrorKind::Disabled,
            CallError::InvalidArgs { .. } => ErrorKind::InvalidArgs,
            CallError::Denied { .. } => ErrorKind::Denied,
            CallError::Unavailable { .. } => ErrorKind::Unavailable,
            CallError::Run { error, .. } => match error {
                RunError::Tool { kind, .. } => (*kind).into(),
                RunError::Timeout { .. } => ErrorKind::Timeout,
                RunError::MemoryLimit { .. } => ErrorKind::MemoryLimit,
                RunError::Trap { .. } => ErrorKind::Trap,
                RunError::OutputTooLarge { .. } => ErrorKind::OutputTooLarge,
                RunError::InvalidResult { .. } => ErrorKind::InvalidResult,
                RunError::Setup(_) => ErrorKind::Failed,
            },
            CallError::External { error, .. } => match error {
                McpCallError::Tool(_) => ErrorKind::Failed,
                McpCallError::Timeout { .. } => ErrorKind::Timeout,
                McpCallError::Server(_) => ErrorKind::ServerFailed,
                McpCallError::TooLarge(_) => ErrorKind::OutputTooLarge,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_word_and_is_found_by_it() {
        let words: std::collections::BTreeSet<&str> =
            ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(words.len(), ErrorKind::ALL.len());
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_word(kind.as_str()), Some(kind));
        }
        assert_eq!(ErrorKind::from_word("no-such-kind"), None);
    }

    #[test]
    fn a_tools_own_error_keeps_its_word() {
        for kind in ToolErrorKind::ALL {
            assert_eq!(ErrorKind::from(kind).as_str(), kind.as_str());
        }
    }
}
