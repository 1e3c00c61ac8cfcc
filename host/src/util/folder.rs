//! Reading a folder's entries from its directory stream: each name and the
//! type `getdents(2)` reports with it, and no `stat` of any entry (unless
//! the file system does not report types, where one `fstatat` without
//! following links says it).

use std::ops::Range;
use std::os::fd::{AsRawFd, OwnedFd};

/// What an entry is, as the directory stream says; a link is not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    /// A named pipe, socket or device.
    Other,
}

/// Bytes of directory entries one `getdents64` fills at most: what glibc's
/// `readdir` asks for, a folder of a few hundred entries in one call.
const DIRENT_BUFFER: usize = 32 << 10;

/// A folder's entries: their names in one buffer (not a string each, which
/// costs an allocation and a free an entry), and each entry's kind.
#[derive(Debug, Default)]
pub struct Entries {
    names: Vec<u8>,
    /// Where each name lies in `names`, and the entry's kind.
    entries: Vec<(Range<usize>, EntryKind)>,
}

impl Entries {
    fn push(&mut self, name: &[u8], kind: EntryKind) {
        let start = self.names.len();
        self.names.extend_from_slice(name);
        self.entries.push((start..self.names.len(), kind));
    }

    /// Puts the entries in the byte order of their names: by their first
    /// sixteen bytes as one number, then (the few that tie) by the rest. A
    /// comparison of names was a call to `memcmp` each, most of a sort's
    /// time, and names in a folder often share a long beginning.
    pub fn sort(&mut self) {
        let names = &self.names;
        let name = |at: &Range<usize>| &names[at.clone()];
        let key = |at: &Range<usize>| {
            // Padded with zeros, which no name holds: a name sorts before
            // the longer ones it begins.
            let mut first = [0u8; 16];
            let length = at.len().min(16);
            first[..length].copy_from_slice(&name(at)[..length]);
            u128::from_be_bytes(first)
        };
        (self.entries).sort_by_cached_key(|(at, _)| key(at));
        // Ties (names alike in their first sixteen bytes) sit together.
        for tied in (self.entries)
            .chunk_by_mut(|a, b| a.0.len() >= 16 && b.0.len() >= 16 && key(&a.0) == key(&b.0))
        {
            tied.sort_unstable_by(|a, b| name(&a.0).cmp(name(&b.0)));
        }
    }

    /// Each entry's name and kind, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], EntryKind)> {
        (self.entries.iter()).map(|(at, kind)| (&self.names[at.clone()], *kind))
    }
}

/// The entries of the folder at `folder` (opened for reading, not
/// `O_PATH`), in the order the file system gives, without `.` and `..`.
/// Read with `getdents64` itself: `fdopendir` would add an `fstat` and two
/// `fcntl`s a folder, two fifths of a listing's system calls.
pub fn read_folder(folder: OwnedFd) -> std::io::Result<Entries> {
    let mut buffer = vec![0u64; DIRENT_BUFFER / 8];
    let mut entries = Entries::default();
    loop {
        // SAFETY: the descriptor is open, and the kernel writes at most
        // `DIRENT_BUFFER` bytes into the buffer, which holds that many.
        let filled = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                folder.as_raw_fd(),
                buffer.as_mut_ptr(),
                DIRENT_BUFFER,
            )
        };
        let filled = match usize::try_from(filled) {
            Ok(0) => return Ok(entries),
            Ok(filled) => filled.min(DIRENT_BUFFER),
            Err(_) => {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(error);
            }
        };
        // SAFETY: the buffer's first `filled` bytes were written by the
        // kernel (u64s seen as bytes, a looser alignment).
        let bytes = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), filled) };
        let mut at = 0;
        while at < bytes.len() {
            // The kernel writes whole records; anything else is an error,
            // not a listing cut short without a word.
            let record = Dirent::at(bytes, at).ok_or_else(|| {
                std::io::Error::other("the directory stream held a malformed entry")
            })?;
            at += record.length;
            if record.name == b"." || record.name == b".." {
                continue;
            }
            let kind = match record.d_type {
                libc::DT_REG => EntryKind::File,
                libc::DT_DIR => EntryKind::Directory,
                libc::DT_LNK => EntryKind::Symlink,
                libc::DT_UNKNOWN => stat_kind(&folder, record.name)?,
                _ => EntryKind::Other,
            };
            entries.push(record.name, kind);
        }
    }
}

/// One record of what `getdents64` wrote (`struct linux_dirent64`: the
/// inode, u64; the offset, i64; the record's length, u16; the type, u8;
/// then the name, ended by NUL and padding).
struct Dirent<'a> {
    length: usize,
    d_type: u8,
    name: &'a [u8],
}

impl<'a> Dirent<'a> {
    const LENGTH_AT: usize = 16;
    const TYPE_AT: usize = 18;
    const NAME_AT: usize = 19;

    /// The record at `at` in `bytes`; `None` where what is there is not a
    /// whole record.
    fn at(bytes: &'a [u8], at: usize) -> Option<Self> {
        let record = bytes.get(at..)?;
        let length = usize::from(u16::from_ne_bytes([
            *record.get(Self::LENGTH_AT)?,
            *record.get(Self::LENGTH_AT + 1)?,
        ]));
        let record = record.get(..length).filter(|r| r.len() > Self::NAME_AT)?;
        let name = &record[Self::NAME_AT..];
        Some(Self {
            length,
            d_type: record[Self::TYPE_AT],
            name: &name[..memchr::memchr(0, name)?],
        })
    }
}

/// The kind of `name` in `folder`, from `fstatat` without following a
/// link: for file systems whose directory stream has no types.
fn stat_kind(folder: &OwnedFd, name: &[u8]) -> std::io::Result<EntryKind> {
    let mode = lstat_in(folder, name)?.st_mode & libc::S_IFMT;
    Ok(match mode {
        libc::S_IFREG => EntryKind::File,
        libc::S_IFDIR => EntryKind::Directory,
        libc::S_IFLNK => EntryKind::Symlink,
        _ => EntryKind::Other,
    })
}

/// The size and modified time (seconds since the Unix epoch, `None` before
/// it) of `name`, an entry of the open folder `folder`, from `fstatat`
/// without following a link. `None` for a name that is not one entry's
/// (empty, `.`, `..`, holding `/` or NUL) or that cannot be looked at.
pub fn stat_in(folder: &impl AsRawFd, name: &str) -> Option<(u64, Option<u64>)> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return None;
    }
    let stat = lstat_in(folder, name.as_bytes()).ok()?;
    let modified = u64::try_from(stat.st_mtime).ok();
    Some((u64::try_from(stat.st_size).unwrap_or(0), modified))
}

/// The `stat` of `name` in the open folder `folder`, not following a link
/// (`fstatat` with `AT_SYMLINK_NOFOLLOW`); a name holding NUL is an error.
fn lstat_in(folder: &impl AsRawFd, name: &[u8]) -> std::io::Result<libc::stat64> {
    let name = std::ffi::CString::new(name)?;
    let mut stat = std::mem::MaybeUninit::<libc::stat64>::uninit();
    // SAFETY: the descriptor is open, `name` is NUL-terminated and `stat`
    // is written by the kernel on success.
    let done = unsafe {
        libc::fstatat64(
            folder.as_raw_fd(),
            name.as_ptr(),
            stat.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstatat succeeded, so it filled `stat`.
    Ok(unsafe { stat.assume_init() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn lists_names_and_types_without_dot_entries() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("a.txt", dir.path().join("link")).unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        let mut entries = read_folder(folder.as_fd().try_clone_to_owned().unwrap()).unwrap();
        entries.sort();
        assert_eq!(
            entries.iter().collect::<Vec<_>>(),
            vec![
                (&b"a.txt"[..], EntryKind::File),
                (b"link", EntryKind::Symlink),
                (b"sub", EntryKind::Directory),
            ]
        );
    }

    #[test]
    fn entries_sort_in_the_byte_order_of_their_names() {
        // Names alike for sixteen bytes and more, shorter and longer ones
        // they begin, bytes past ASCII: sorted as the names themselves are.
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut next = crate::util::json_check::tests::xorshift(0x9e37_79b9_7f4a_7c15);
        for i in 0..2000u32 {
            let seed = next();
            let stem = [
                "file_",
                "a_very_long_shared_prefix_",
                "b",
                "é_",
                "a_very_long_shared_prefix",
            ][(seed % 5) as usize];
            let mut name = stem.as_bytes().to_vec();
            name.extend_from_slice(format!("{}", seed % 1000 + u64::from(i) * 1000).as_bytes());
            name.truncate(1 + (seed >> 20) as usize % 40);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let mut entries = Entries::default();
        for name in &names {
            entries.push(name, EntryKind::File);
        }
        entries.sort();
        names.sort();
        let sorted: Vec<&[u8]> = entries.iter().map(|(name, _)| name).collect();
        assert_eq!(sorted, names.iter().map(Vec::as_slice).collect::<Vec<_>>());
    }

    #[test]
    fn a_file_is_not_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        let file = std::fs::File::open(dir.path().join("a.txt")).unwrap();
        let error = read_folder(file.into()).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::ENOTDIR));
    }
}
