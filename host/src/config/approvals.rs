//! `[approvals]`: how a person is told that a call waits in the inbox.
//!
//! ```toml
//! [approvals]
//! on_waiting = ["notify-send", "toolcell: a call waits for you"]
//! ```
//!
//! The program runs each time a call is parked (see
//! [`crate::approval::notify`]); it starts a program, so it needs the
//! config trusted, and a daemon holds a reload that adds or changes it.

use crate::util::problem::{Problem, Table};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `[approvals]` as loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalsConfig {
    /// The program told of each parked call, and its arguments; `None`
    /// when nobody is told.
    pub on_waiting: Option<OnWaiting>,
}

/// `on_waiting`: a program and its arguments, run without a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnWaiting {
    /// A path (relative ones resolved against the config's folder) when it
    /// has a slash; otherwise a name looked up on PATH outside the roots.
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl OnWaiting {
    /// The command line, for the trust warning and the daemon's reload.
    pub fn command_line(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The file it runs when given as a path: part of the policy, which no
    /// tool may change.
    pub fn program_file(&self) -> Option<PathBuf> {
        (self.program.components().count() > 1).then(|| self.program.clone())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApprovalsConfig {
    on_waiting: Option<Vec<String>>,
}

impl ApprovalsConfig {
    pub fn from_raw(
        raw: RawApprovalsConfig,
        at: &Table,
        workspace: &Path,
    ) -> Result<Self, Problem> {
        let Some(command) = raw.on_waiting else {
            return Ok(Self::default());
        };
        let Some((program, args)) = command.split_first() else {
            return Err(at.problem(
                Some("on_waiting"),
                "approvals.on_waiting is empty",
                "name a program and its arguments, such as [\"notify-send\", \"toolcell\"], or remove the key",
            ));
        };
        if program.trim().is_empty() {
            return Err(at.problem(
                Some("on_waiting"),
                "approvals.on_waiting names no program (its first item is empty)",
                "put the program first, such as [\"notify-send\", \"toolcell\"]",
            ));
        }
        if command.iter().any(|part| part.contains('\0')) {
            return Err(at.problem(
                Some("on_waiting"),
                "approvals.on_waiting holds a NUL character, which no program argument can",
                "remove it",
            ));
        }
        // A bare name is looked up on PATH; anything with a slash is a path.
        let program = if program.contains('/') {
            workspace.join(program)
        } else {
            PathBuf::from(program)
        };
        Ok(Self {
            on_waiting: Some(OnWaiting {
                program,
                args: args.to_vec(),
            }),
        })
    }
}
