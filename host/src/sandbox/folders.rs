//! `toolcell:tool/folders`: a folder's names and types for a cell, from the
//! directory stream, without the `stat` of every entry that
//! `wasi:filesystem`'s `read-directory` makes.
//!
//! The path is resolved as the tool's own paths are (the longest root name
//! that prefixes it, else the first root `.`) and opened beneath that root
//! ([`open_beneath`]: a link that stays inside is followed, one that leads
//! out refused), so nothing outside the cell's roots is ever listed; the
//! file rules judge the folder where it really is, as they judge opening it.

use super::bindings::toolcell::tool::folders::{
    EntryKind, EntryStat, FolderEntry, Host, ListError,
};
use super::cell::CellState;
use super::folders_ahead::FoldersAhead;
use super::fs_guard::{FileGuard, RootDir};
use super::refusal::Refusal;
use crate::util::folder::{self, read_folder};
use crate::util::openat::open_beneath;
use std::os::fd::{AsRawFd, OwnedFd};
use wasmtime_wasi::p2::bindings::filesystem::preopens::Host as _;

impl Host for CellState {
    async fn entries(&mut self, path: String) -> Result<Vec<FolderEntry>, ListError> {
        know_roots(self);
        let listed = sorted_entries(&self.files, &path).map(|entries| {
            named(&entries)
                .map(|(name, kind)| FolderEntry {
                    name: name.to_string(),
                    kind,
                })
                .collect()
        });
        self.kept(listed)
    }

    async fn packed_entries(
        &mut self,
        path: String,
    ) -> Result<(String, Vec<EntryKind>), ListError> {
        know_roots(self);
        let ahead = self
            .folders_ahead
            .as_ref()
            .and_then(|ahead| ahead.take(&path));
        let listed = ahead.unwrap_or_else(|| packed_entries(&self.files, &path));
        self.kept(listed)
    }

    async fn read_ahead(&mut self, paths: Vec<String>) {
        know_roots(self);
        let max_held = self.limiter.limit_bytes();
        let ahead = (self.folders_ahead)
            .get_or_insert_with(|| FoldersAhead::new(self.files.judging_copy(), max_held));
        ahead.push(paths);
    }

    async fn stats(
        &mut self,
        path: String,
        names: Vec<String>,
    ) -> Result<Vec<Option<EntryStat>>, ListError> {
        know_roots(self);
        let opened = open_folder(&self.files, &path);
        let opened = self.kept(opened)?;
        Ok(names
            .iter()
            .map(|name| {
                folder::stat_in(&opened, name).map(|(size, modified)| EntryStat { size, modified })
            })
            .collect())
    }
}

impl CellState {
    /// `listed` as the cell is answered, a refusal of the file rules kept.
    fn kept<T>(&mut self, listed: Result<T, NotListed>) -> Result<T, ListError> {
        listed.map_err(|not| {
            if let Some(refusal) = not.refusal {
                self.files.refuse(refusal);
            }
            not.error
        })
    }
}

/// Why a folder was not listed, and the refusal to keep when it was the
/// file rules that said no.
#[derive(Debug)]
pub(super) struct NotListed {
    pub(super) error: ListError,
    pub(super) refusal: Option<Refusal>,
}

impl From<ListError> for NotListed {
    fn from(error: ListError) -> Self {
        Self {
            error,
            refusal: None,
        }
    }
}

/// A folder's entries as `packed-entries` answers: every name ended by
/// `/`, and their kinds.
pub(super) type Packed = (String, Vec<EntryKind>);

/// The entries of the folder at `path`, packed; judged by `guard` (whose
/// roots are known), on whatever thread.
pub(super) fn packed_entries(guard: &FileGuard, path: &str) -> Result<Packed, NotListed> {
    let entries = sorted_entries(guard, path)?;
    let mut names = String::new();
    let mut kinds = Vec::new();
    for (name, kind) in named(&entries) {
        names.push_str(name);
        names.push('/');
        kinds.push(kind);
    }
    Ok((names, kinds))
}

/// The entries of the folder at `path`, sorted by name (here, natively:
/// in the cell it took a tenth of a listing); [`named`] leaves out the
/// names that are not UTF-8.
fn sorted_entries(guard: &FileGuard, path: &str) -> Result<folder::Entries, NotListed> {
    let opened = open_folder(guard, path)?;
    let mut entries = read_folder(opened).map_err(|e| list_error(&e))?;
    entries.sort();
    Ok(entries)
}

/// The entries a tool is given: those named in UTF-8, their kinds as the
/// contract names them.
fn named(entries: &folder::Entries) -> impl Iterator<Item = (&str, EntryKind)> {
    (entries.iter())
        .filter_map(|(name, kind)| Some((std::str::from_utf8(name).ok()?, kind_of(kind))))
}

/// An entry's kind as the contract names it.
fn kind_of(kind: folder::EntryKind) -> EntryKind {
    match kind {
        folder::EntryKind::File => EntryKind::File,
        folder::EntryKind::Directory => EntryKind::Directory,
        folder::EntryKind::Symlink => EntryKind::Symlink,
        folder::EntryKind::Other => EntryKind::Other,
    }
}

/// The folder at `path`, resolved and opened beneath its root as the
/// tool's own paths are, once the file rules let it be listed.
fn open_folder(guard: &FileGuard, path: &str) -> Result<OwnedFd, NotListed> {
    let (root, inside) = resolve(guard.root_dirs(), path).ok_or(ListError::Denied)?;
    let (opened, host) = open_beneath(
        root.dir.as_raw_fd(),
        &root.host,
        inside,
        libc::O_RDONLY | libc::O_DIRECTORY,
    )
    .map_err(|e| list_error(&e))?;
    if let Some(refusal) = guard.secret_refusal(&host) {
        return Err(NotListed {
            error: ListError::Denied,
            refusal: Some(refusal),
        });
    }
    Ok(opened)
}

/// Makes sure the cell's guard knows its roots' descriptors: they are
/// recorded when the tool asks for its roots, and asked for here if it has
/// not yet (the resources made then are dropped again).
pub(super) fn know_roots(state: &mut CellState) {
    if !state.files.root_dirs().is_empty() {
        return;
    }
    let mut fs = state.guarded_fs();
    if let Ok(handed) = fs.get_directories() {
        for (descriptor, _) in handed {
            let rep = descriptor.rep();
            let _ = fs.inner.table.delete(descriptor);
            // Its number is free for the next resource the tool makes.
            fs.guard.forget_descriptor(rep);
        }
    }
}

/// The root a workspace-relative `path` lies in and the path inside it, as
/// the guest resolves its own paths: the longest root name that prefixes
/// the path, else the first root (`.`).
pub(super) fn resolve<'r, 'p>(
    roots: &'r [RootDir],
    path: &'p str,
) -> Option<(&'r RootDir, &'p str)> {
    let path = path.trim_start_matches("./");
    let mut best: Option<(&RootDir, &'p str, usize)> = None;
    for root in roots {
        let name = root.mount.trim_start_matches("./").trim_end_matches('/');
        let rest = if name == "." || name.is_empty() {
            Some(path)
        } else if path == name {
            Some(".")
        } else {
            path.strip_prefix(name).and_then(|r| r.strip_prefix('/'))
        };
        let weight = if name == "." { 0 } else { name.len() };
        if let Some(rest) = rest
            && best.is_none_or(|(_, _, w)| weight > w)
        {
            best = Some((root, rest, weight));
        }
    }
    best.map(|(root, rest, _)| (root, if rest.is_empty() { "." } else { rest }))
}

/// The contract's error for what `openat2` or reading the folder said.
fn list_error(error: &std::io::Error) -> ListError {
    match error.raw_os_error() {
        Some(libc::ENOENT) => ListError::NotFound,
        Some(libc::ENOTDIR) => ListError::NotAFolder,
        // A link on the way, `..` or an absolute path leading out, or a
        // folder the user may not read.
        Some(libc::ELOOP | libc::EXDEV | libc::EACCES | libc::EPERM) => ListError::Denied,
        _ => ListError::Failed,
    }
}
