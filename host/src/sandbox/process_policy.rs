//! Which programs a cell may run, and where: the grant's programs, found
//! on the host's PATH (never inside a root) or named by absolute path, each
//! run in a folder inside a root. [`super::process`] runs what this allows.

use super::bindings::toolcell::tool::process::RunRefusal;
use crate::contain::SandboxSetting;
use crate::registry::grant::{Preopen, ToolGrant};
use crate::util::child;
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

/// What one cell may run, and where.
#[derive(Debug, Clone)]
pub struct ProcessPolicy {
    /// The tool's name, for messages.
    pub(super) tool: String,
    pub(super) programs: Vec<String>,
    pub(super) roots: Vec<Preopen>,
    /// The grant its programs are confined to (worked out when one runs:
    /// most cells run none); `None` for `sandbox = "none"` or no programs.
    pub(super) confined_to: Option<Box<ToolGrant>>,
    /// When the tool's own time limit ends: none is left until the call
    /// starts its clock ([`ProcessPolicy::start_clock`]).
    pub(super) deadline: Instant,
}

/// A program run the policy allows: what runs, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The program's real path (links followed): what runs.
    pub program: PathBuf,
    /// Where it was found (on PATH, before links are followed).
    pub found: PathBuf,
    /// The working folder's real path.
    pub cwd: PathBuf,
}

impl ProcessPolicy {
    /// Starts the tool's clock: programs it runs must end by `deadline`.
    pub fn start_clock(&mut self, deadline: Instant) {
        self.deadline = deadline;
    }

    pub fn new(tool: &str, programs: Vec<String>, roots: Vec<Preopen>) -> Self {
        Self {
            tool: tool.to_string(),
            programs,
            roots,
            confined_to: None,
            deadline: Instant::now(),
        }
    }

    /// Confines the programs it runs to `grant` (unless it says
    /// `sandbox = "none"`: they run with the user's rights).
    pub fn confined(mut self, grant: &ToolGrant) -> Self {
        self.confined_to = (!grant.process.is_empty() && grant.sandbox != SandboxSetting::None)
            .then(|| Box::new(grant.clone()));
        self
    }

    /// What `program` in `cwd` would run, or why it would be refused: the
    /// same checks as a run, for the approval prompt.
    pub fn resolve(&self, program: &str, cwd: &str) -> Result<Resolved, RunRefusal> {
        let (found, program) = self.resolve_program(program)?;
        Ok(Resolved {
            program,
            found,
            cwd: self.resolve_cwd(cwd)?,
        })
    }

    pub(super) fn root_paths(&self) -> Vec<PathBuf> {
        self.roots.iter().map(|root| root.host.clone()).collect()
    }

    /// The real path of `program`, if it is granted and found outside the
    /// roots (a link inside a root, or one leading into a root, is not used).
    fn resolve_program(&self, program: &str) -> Result<(PathBuf, PathBuf), RunRefusal> {
        let shown = program.escape_debug();
        if !self.programs.iter().any(|p| p == program) {
            let granted = if self.programs.is_empty() {
                "this tool may run no programs".to_string()
            } else {
                format!("it may run only {}", self.programs.join(", "))
            };
            return Err(RunRefusal::Denied(format!(
                "not granted: `{shown}` was not run ({granted})\n  fix: the user can grant it in toolcell.toml: [tools.{}] process = [\"{shown}\"]",
                self.tool
            )));
        }
        // Neither in a folder inside a root, nor leading into one.
        let skipped = match child::find_outside(Path::new(program), &self.root_paths()) {
            Ok(found) => return Ok((found.path, found.real)),
            Err(skipped) => skipped,
        };
        let skipped = match skipped.as_slice() {
            [] => String::new(),
            paths => format!(
                "; {} inside the workspace, which is never run (a tool could have put it there)",
                paths
                    .iter()
                    .map(|p| format!("`{}`", p.display()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        Err(RunRefusal::NotFound(format!(
            "`{shown}` is granted but no executable of that name was found on PATH outside the workspace{skipped}\n  fix: install it, or grant its absolute path"
        )))
    }

    /// The host folder for `cwd`, a workspace-relative path inside a root.
    fn resolve_cwd(&self, cwd: &str) -> Result<PathBuf, RunRefusal> {
        let shown = cwd.escape_debug();
        let Some(first) = self.roots.first() else {
            return Err(RunRefusal::Denied(
                "this tool sees no workspace folder (fs = \"none\"), so it has nowhere to run a program"
                    .into(),
            ));
        };
        let relative = Path::new(cwd);
        let mut parts = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => parts.push(part),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) | Component::ParentDir => {
                    return Err(RunRefusal::Denied(format!(
                        "the working directory `{shown}` is outside the workspace\n  fix: give a folder relative to the workspace, such as \".\" or \"src\""
                    )));
                }
            }
        }
        // `NAME/...` addresses the root mounted as NAME; anything else the first.
        let (root, rest) = match parts.first() {
            Some(head) => match self
                .roots
                .iter()
                .skip(1)
                .find(|r| r.guest.as_str() == *head)
            {
                Some(root) => (root, &parts[1..]),
                None => (first, &parts[..]),
            },
            None => (first, &parts[..]),
        };
        let joined = rest
            .iter()
            .fold(root.host.clone(), |path, part| path.join(part));
        let real = joined.canonicalize().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                RunRefusal::NotFound(format!("the working directory `{shown}` does not exist"))
            }
            _ => RunRefusal::Failed(format!(
                "the working directory `{shown}` cannot be used: {e}"
            )),
        })?;
        // A symlink inside the workspace must not lead out of it.
        if !self.roots.iter().any(|r| real.starts_with(&r.host)) {
            return Err(RunRefusal::Denied(format!(
                "the working directory `{shown}` leads outside the workspace (through a link)"
            )));
        }
        if !real.is_dir() {
            return Err(RunRefusal::Failed(format!(
                "the working directory `{shown}` is not a folder"
            )));
        }
        Ok(real)
    }
}
