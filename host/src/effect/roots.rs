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

/// Where the workspace path `path` really is, links followed, written as
/// tools write it (`docs/x` in the root mounted as `docs`): the part that
/// exists resolved, the rest as written. `None` when it leads out of every
/// root, through a link that leads nowhere yet, or cannot be looked at.
/// A path without links (the common case) costs one system call.
pub fn real_path(config: &WorkspaceConfig, path: &str) -> Option<String> {
    let at = resolve(config, path)?;
    let full = at.root.path.join(&at.relative);
    // Links along the existing part? One `openat2` that refuses to follow
    // any tells (the roots' own paths hold none: they are resolved at
    // load): it fails with ELOOP at a link, ENOENT at the first missing
    // name before one. Where it cannot be asked (before Linux 5.6), each
    // name is looked at in turn.
    let no_links = libc::RESOLVE_NO_SYMLINKS;
    let flags = libc::O_PATH | libc::O_NOFOLLOW;
    let linked = match crate::util::openat::openat2(libc::AT_FDCWD, &full, flags, no_links) {
        Ok(_) => false,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => false,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => true,
        Err(_) => {
            let mut walked = at.root.path.clone();
            let mut linked = false;
            for part in at.relative.components() {
                walked.push(part);
                match walked.symlink_metadata() {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        linked = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            linked
        }
    };
    let real = if linked { resolved(&full)? } else { full };
    // The root that holds it most closely names it.
    let root = config
        .roots
        .iter()
        .filter(|root| real.starts_with(&root.path))
        .max_by_key(|root| root.path.as_os_str().len())?;
    let inside = real.strip_prefix(&root.path).ok()?.to_str()?;
    Some(match root.mount.as_str() {
        "." => inside.to_string(),
        mount if inside.is_empty() => mount.to_string(),
        mount => format!("{mount}/{inside}"),
    })
}

/// `full` with its longest existing part resolved (links followed) and
/// the rest as written; `None` through a link that leads nowhere yet.
fn resolved(full: &Path) -> Option<PathBuf> {
    let mut existing = full;
    let mut rest = Vec::new();
    let real = loop {
        match existing.canonicalize() {
            Ok(real) => break real,
            // A link that leads nowhere yet: where it would lead is not known.
            Err(_) if existing.symlink_metadata().is_ok() => return None,
            Err(_) => {
                rest.push(existing.file_name()?);
                existing = existing.parent()?;
            }
        }
    };
    Some(rest.iter().rev().fold(real, |path, name| path.join(name)))
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
            format!(
                "`{}` is outside the workspace",
                crate::util::text::for_terminal_line(path)
            ),
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
