//! Whole-file reads straight through `wasi:filesystem` descriptors.
//!
//! `std::fs` goes through wasi-libc, which costs extra host calls per file:
//! it looks up its preopen table, asks the type of every descriptor it opens,
//! and `metadata()` is one more call. A tool that reads thousands of files
//! (search) pays that thousands of times. [`Roots`] opens a file beneath its
//! preopened root and reads it with one `read` call that also reports the
//! end of the file: open, read, close.

use wasi::filesystem::preopens::get_directories;
use wasi::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

/// Bytes asked for by the first `read` call: most source and text files fit,
/// and the host zero-fills a buffer of the size asked, so asking far more
/// than a file holds costs time.
const FIRST_READ: u64 = 16 * 1024;
/// Bytes asked for by later calls: the most the host hands back at once.
const READ_CHUNK: u64 = 64 * 1024;

/// The preopened roots, for opening files beneath them.
///
/// Errors are WASI's [`ErrorCode`]s; [`crate::error::wasi_error`] turns them
/// into the contract's errors.
pub struct Roots {
    dirs: Vec<(Descriptor, String)>,
    follow: PathFlags,
}

/// What [`Roots::read`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// The whole file is in the buffer.
    Complete,
    /// The file is larger than the limit; the buffer holds its start.
    TooLarge,
}

impl Roots {
    /// Roots whose reads do not follow a symlink as the last component
    /// (a walk that skips symlinks).
    pub fn new() -> Self {
        Self {
            dirs: get_directories(),
            follow: PathFlags::empty(),
        }
    }

    /// Roots whose reads follow symlinks (that stay inside the root: WASI
    /// refuses one that leads out), as opening a named file should.
    pub fn following_symlinks() -> Self {
        Self {
            dirs: get_directories(),
            follow: PathFlags::SYMLINK_FOLLOW,
        }
    }

    /// The size of the file at `path`.
    /// What is at workspace-relative `path`: a file, a folder, or something
    /// else. A FIFO must be told apart before it is opened: opening one
    /// waits for a writer, forever.
    pub fn kind(&self, path: &str) -> Result<DescriptorType, ErrorCode> {
        let (dir, inside) = self.resolve(path).ok_or(ErrorCode::NoEntry)?;
        Ok(dir.stat_at(self.follow, inside)?.type_)
    }

    pub fn size(&self, path: &str) -> Result<u64, ErrorCode> {
        let (dir, inside) = self.resolve(path).ok_or(ErrorCode::NoEntry)?;
        Ok(dir.stat_at(self.follow, inside)?.size)
    }

    /// The root a workspace-relative path lies in, and the path inside it:
    /// the longest root name that prefixes the path, else `.`.
    fn resolve<'p>(&self, path: &'p str) -> Option<(&Descriptor, &'p str)> {
        let path = path.trim_start_matches("./");
        let mut best: Option<(&Descriptor, &'p str, usize)> = None;
        for (dir, name) in &self.dirs {
            let name = name.trim_start_matches("./").trim_end_matches('/');
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
                best = Some((dir, rest, weight));
            }
        }
        best.map(|(dir, rest, _)| (dir, rest))
    }

    /// Whether workspace-relative `path` is a root itself (`.` or a named
    /// root), which no tool may move or delete.
    pub fn is_root(&self, path: &str) -> bool {
        matches!(self.resolve(path), Some((_, ".")))
    }

    /// Reads the file at workspace-relative `path` into `buffer` (cleared
    /// first), up to `limit` bytes. The caller makes sure it is a regular
    /// file ([`Roots::kind`], or the type a folder listing gave).
    pub fn read(&self, path: &str, limit: u64, buffer: &mut Vec<u8>) -> Result<Read, ErrorCode> {
        buffer.clear();
        let (dir, inside) = self.resolve(path).ok_or(ErrorCode::NoEntry)?;
        let file = dir.open_at(
            self.follow,
            inside,
            OpenFlags::empty(),
            DescriptorFlags::READ,
        )?;
        let mut offset = 0u64;
        loop {
            let chunk_size = if offset == 0 { FIRST_READ } else { READ_CHUNK };
            let asked = chunk_size.min(limit + 1 - offset);
            let (chunk, end) = file.read(asked, offset).map_err(|code| {
                // Reading an opened directory fails as a bad descriptor.
                match file.get_type() {
                    Ok(DescriptorType::Directory) => ErrorCode::IsDirectory,
                    _ => code,
                }
            })?;
            offset += chunk.len() as u64;
            buffer.extend_from_slice(&chunk);
            if offset > limit {
                return Ok(Read::TooLarge);
            }
            // A short read of a regular file is its end: no extra call to
            // learn what this one already told.
            if end || (chunk.len() as u64) < asked {
                return Ok(Read::Complete);
            }
        }
    }
}

impl Default for Roots {
    fn default() -> Self {
        Self::new()
    }
}
