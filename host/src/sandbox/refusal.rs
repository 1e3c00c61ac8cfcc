//! What the file guard ([`super::fs_guard`]) refused during a call, and
//! how the caller (and the model) is told.

use crate::policy::PolicyFile;

/// Something the guard refused during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A change of toolcell's own policy.
    Policy { shown: String, file: PolicyFile },
    /// A secret, opened or changed.
    Secret { shown: String, pattern: String },
}

impl Refusal {
    /// The refusal as the caller (and the model) reads it.
    pub fn message(&self) -> String {
        match self {
            Refusal::Policy { shown, file } => format!(
                "it tried to change `{}`, {}: no tool changes toolcell's own policy unless you approve that very call at a terminal\n  fix: edit the file yourself, or make the change with a built-in file tool from `toolcell chat` or `toolcell tools call` at a terminal and approve it there",
                crate::util::text::for_terminal_line(shown),
                file.describe()
            ),
            Refusal::Secret { shown, pattern } => format!(
                "`{}` is on toolcell's list of secret files, or holds one (pattern `{pattern}`): tools may not read, change, move or delete it\n  fix: if a tool should use it, add it to `allow` under [secrets] in toolcell.toml",
                crate::util::text::for_terminal_line(shown)
            ),
        }
    }
}
