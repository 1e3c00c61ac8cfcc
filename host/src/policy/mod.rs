//! What no tool may change or read on its own: toolcell's own policy files
//! ([`protected`]) and the user's secrets ([`secrets`]), inside the roots
//! a tool was granted; and the user's approval rules ([`rules`]), which
//! decide from a call's arguments whether it is asked.
//!
//! The rules are data, resolved once per workspace config into
//! [`FileRules`]; every cell enforces them on each file-system call
//! (`sandbox::fs_guard`), and the call path uses them to tell, before a
//! file-changing built-in tool runs, that a call would change the policy
//! (then only a person at a terminal can approve it, for that call).

mod installed;
mod nested;
pub mod protected;
pub mod record;
pub mod rules;
pub mod secrets;

pub use protected::{PolicyFile, PolicyFiles};
pub use secrets::SecretRules;

pub mod trust;

use std::path::{Path, PathBuf};

/// How a call changes a path: what the cell's guard judges on each file
/// operation, and what a file-changing built-in tool declares of the paths
/// it names (`changes::touched`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// Written, created, edited, truncated, linked, unlinked, its times set.
    Replace,
    /// A folder made.
    CreateFolder,
    /// Moved away, with all it holds (a rename's source).
    MoveAway,
    /// Moved to (a rename's destination).
    MoveInto,
    /// Removed (or moved into the trash), with all it holds.
    Remove,
}

impl Touch {
    /// Whether a folder takes what it holds along.
    pub fn takes_contents(self) -> bool {
        matches!(self, Touch::MoveAway | Touch::Remove)
    }
}

/// The file rules of one workspace (the default: no policy files known,
/// the default secrets).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileRules {
    pub policy: PolicyFiles,
    pub secrets: SecretRules,
}

/// A policy file a call would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyChange {
    /// The path as the call names it.
    pub shown: String,
    /// Where it leads on the host, as the cell's guard will judge it.
    pub host: PathBuf,
    pub file: PolicyFile,
}

impl PolicyChange {
    /// The first line of an approval prompt, and the reason of a refusal.
    pub fn describe(changes: &[PolicyChange]) -> String {
        let list: Vec<String> = changes
            .iter()
            .map(|c| {
                // Where it leads too: `sub/toolcell.toml` may be the
                // workspace's own config, through a link.
                format!(
                    "`{}` ({}; that is {})",
                    crate::util::text::for_terminal_line(&c.shown),
                    c.file.describe(),
                    crate::util::text::for_terminal_line(&c.host.display().to_string())
                )
            })
            .collect();
        format!(
            "this call changes toolcell's own policy: {}",
            list.join(", ")
        )
    }
}

/// The policy files among `paths` (those a built-in call changes, as
/// `(shown, host path, how)`, the host path as written; a root itself is
/// not among them: no built-in tool moves or deletes a root): each resolved as
/// the cell will see it, its folders followed, and also where a link at
/// its end leads.
pub fn policy_changes(
    rules: &FileRules,
    paths: impl IntoIterator<Item = (String, PathBuf, Touch)>,
) -> Vec<PolicyChange> {
    let mut found: Vec<PolicyChange> = Vec::new();
    for (shown, lexical, touch) in paths {
        for host in where_it_leads(&lexical) {
            // `.toolcell/` and toolcell's data are no tool's to change,
            // asked or not: the cell's guard refuses them to every tool.
            if let Some(file) = rules.policy.judge(&host, touch)
                && !file.never_changed_by_tools()
                && !found.iter().any(|f| f.host == host)
            {
                found.push(PolicyChange {
                    shown: shown.clone(),
                    host,
                    file,
                });
            }
        }
    }
    found
}

/// `path` with its folders resolved, and where a link at its end leads.
fn where_it_leads(path: &Path) -> Vec<PathBuf> {
    let mut leads = Vec::new();
    let parent = path.parent().and_then(|p| p.canonicalize().ok());
    match (parent, path.file_name()) {
        (Some(parent), Some(name)) => leads.push(parent.join(name)),
        _ => leads.push(path.to_path_buf()),
    }
    if let Ok(real) = path.canonicalize()
        && !leads.contains(&real)
    {
        leads.push(real);
    }
    leads
}
