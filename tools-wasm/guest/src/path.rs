//! Workspace-relative paths.
//!
//! Every path a model gives is relative to the workspace: `notes/todo.md`,
//! `.` for the workspace itself. WASI already confines file access to the
//! granted roots; checking here as well turns an escape attempt into a clear
//! `denied` error instead of an obscure I/O failure, and normalises the path
//! that results report back.

use crate::ToolError;
use std::path::{Component, Path, PathBuf};

/// A checked, normalised workspace-relative path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    /// Normalised form with `/` separators; `.` for the workspace root.
    display: String,
    relative: PathBuf,
}

impl WorkspacePath {
    /// Checks `raw` and normalises it: `a/./b/../c` becomes `a/c`.
    ///
    /// Refused: empty paths, absolute paths, NUL bytes, and any `..` that
    /// climbs above the workspace root.
    pub fn parse(raw: &str) -> Result<Self, ToolError> {
        if raw.is_empty() {
            return Err(ToolError::InvalidArgs(
                "the path is empty: use `.` for the workspace itself".into(),
            ));
        }
        if raw.contains('\0') {
            return Err(ToolError::InvalidArgs(
                "the path contains a NUL byte".into(),
            ));
        }
        let path = Path::new(raw);
        let mut parts: Vec<&str> = Vec::new();
        for component in path.components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(ToolError::Denied(format!(
                        "`{raw}` is an absolute path: paths are relative to the workspace, \
                         for example `notes/todo.md`"
                    )));
                }
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(ToolError::Denied(format!(
                            "`{raw}` leaves the workspace: `..` may not climb above its root"
                        )));
                    }
                }
                Component::Normal(part) => match part.to_str() {
                    Some(part) => parts.push(part),
                    None => {
                        return Err(ToolError::InvalidArgs(format!(
                            "`{raw}` is not valid UTF-8"
                        )));
                    }
                },
            }
        }
        let display = if parts.is_empty() {
            ".".to_string()
        } else {
            parts.join("/")
        };
        Ok(Self {
            relative: PathBuf::from(&display),
            display,
        })
    }

    /// The path to hand to `std::fs`: relative, resolved by WASI against the
    /// root it names.
    pub fn as_path(&self) -> &Path {
        &self.relative
    }

    /// The normalised path as results report it.
    pub fn as_str(&self) -> &str {
        &self.display
    }

    /// Whether this is the workspace root itself (`.`).
    pub fn is_root(&self) -> bool {
        self.display == "."
    }

    /// The folder holding this path (`.` for top-level entries), or `None`
    /// for the root itself.
    pub fn parent(&self) -> Option<WorkspacePath> {
        if self.is_root() {
            return None;
        }
        let display = match self.display.rfind('/') {
            Some(i) => self.display[..i].to_string(),
            None => ".".to_string(),
        };
        Some(WorkspacePath {
            relative: PathBuf::from(&display),
            display,
        })
    }

    /// The last component (`todo.md` of `notes/todo.md`).
    pub fn file_name(&self) -> &str {
        self.display.rsplit('/').next().unwrap_or(&self.display)
    }

    /// Whether `self` is `other` or lies inside it.
    pub fn starts_with(&self, other: &WorkspacePath) -> bool {
        other.is_root()
            || self.display == other.display
            || self.display.starts_with(&format!("{}/", other.display))
    }

    /// The path of a child entry, for results of walks.
    pub fn join(&self, name: &str) -> WorkspacePath {
        let display = if self.display == "." {
            name.to_string()
        } else {
            format!("{}/{name}", self.display)
        };
        WorkspacePath {
            relative: PathBuf::from(&display),
            display,
        }
    }
}
