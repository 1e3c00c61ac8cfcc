//! The host's own view of the workspace, for the few things the host reads
//! itself (the change an approval prompt shows, the copy kept for undo).
//! It goes through cap-std directories opened on the roots, so a path from
//! a model cannot lead the host out of a root any more than a tool.

use crate::config::{Root, WorkspaceConfig};
use cap_std::fs::Dir;
use std::path::{Component, Path, PathBuf};

/// A workspace path resolved to the root that holds it.
pub struct RootPath<'c> {
    pub root: &'c Root,
    /// Relative to the root; empty for the root itself.
    pub relative: PathBuf,
}

impl RootPath<'_> {
    /// The root opened as a capability.
    pub fn open_root(&self) -> std::io::Result<Dir> {
        Dir::open_ambient_dir(&self.root.path, cap_std::ambient_authority())
    }
}

/// Resolves a workspace path the way tools see it: `name/...` inside the
/// root mounted as `name`, anything else inside the first root. `None` for
/// absolute paths and paths that climb out with `..`.
pub fn resolve<'c>(config: &'c WorkspaceConfig, path: &str) -> Option<RootPath<'c>> {
    let mut parts: Vec<&str> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    if let Some(first) = parts.first()
        && let Some(root) = config.roots.iter().skip(1).find(|r| r.mount == *first)
    {
        return Some(RootPath {
            root,
            relative: parts[1..].iter().collect(),
        });
    }
    Some(RootPath {
        root: config.roots.first()?,
        relative: parts.iter().collect(),
    })
}

/// What is at a workspace path right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Missing,
    File(Vec<u8>),
    Folder { entries: usize },
    Other,
}

/// Reads what is at `path`, through the capability of its root. Files larger
/// than `max_file` are reported as [`Entry::Other`].
pub fn read_entry(config: &WorkspaceConfig, path: &str, max_file: u64) -> std::io::Result<Entry> {
    let Some(resolved) = resolve(config, path) else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("`{path}` is outside the workspace"),
        ));
    };
    let dir = resolved.open_root()?;
    let relative = if resolved.relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        resolved.relative.as_path()
    };
    let metadata = match dir.symlink_metadata(relative) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entry::Missing),
        Err(e) => return Err(e),
    };
    if metadata.is_dir() {
        let entries = dir.read_dir(relative)?.count();
        Ok(Entry::Folder { entries })
    } else if metadata.is_file() && metadata.len() <= max_file {
        Ok(Entry::File(dir.read(relative)?))
    } else {
        Ok(Entry::Other)
    }
}
