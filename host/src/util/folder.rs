//! Reading a folder's entries from its directory stream: each name and the
//! type `getdents(2)` reports with it, and no `stat` of any entry (unless
//! the file system does not report types, where one `fstatat` without
//! following links says it).

use std::ffi::{CStr, OsString};
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;

/// What an entry is, as the directory stream says; a link is not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    /// A named pipe, socket or device.
    Other,
}

/// The entries of the folder open as `folder` (opened for reading, not
/// `O_PATH`), in the order the file system gives, without `.` and `..`.
pub fn read_folder(folder: OwnedFd) -> std::io::Result<Vec<(OsString, EntryKind)>> {
    let fd = folder.into_raw_fd();
    // SAFETY: `fd` is an open descriptor we own; on success the stream owns
    // it (closed by `closedir`), on failure it is closed here.
    let stream = unsafe { libc::fdopendir(fd) };
    if stream.is_null() {
        let error = std::io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `fd` is still ours to close.
        unsafe { libc::close(fd) };
        return Err(error);
    }
    let stream = Stream(stream);
    let mut entries = Vec::new();
    loop {
        // readdir returns NULL both at the end and on an error; only errno
        // tells them apart.
        // SAFETY: errno is this thread's; the stream is open until dropped,
        // and the entry it returns stays valid until the next readdir.
        unsafe { *libc::__errno_location() = 0 };
        let entry = unsafe { libc::readdir64(stream.0) };
        if entry.is_null() {
            let errno = std::io::Error::last_os_error();
            return match errno.raw_os_error() {
                Some(0) | None => Ok(entries),
                Some(_) => Err(errno),
            };
        }
        // SAFETY: as above; d_name is NUL-terminated.
        let (name, d_type) = unsafe {
            (
                CStr::from_ptr((*entry).d_name.as_ptr()).to_bytes(),
                (*entry).d_type,
            )
        };
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match d_type {
            libc::DT_REG => EntryKind::File,
            libc::DT_DIR => EntryKind::Directory,
            libc::DT_LNK => EntryKind::Symlink,
            libc::DT_UNKNOWN => stat_kind(&stream, name)?,
            _ => EntryKind::Other,
        };
        entries.push((OsString::from_vec(name.to_vec()), kind));
    }
}

/// The kind of `name` in the folder of `stream`, from `fstatat` without
/// following a link: for file systems whose directory stream has no types.
fn stat_kind(stream: &Stream, name: &[u8]) -> std::io::Result<EntryKind> {
    let name = std::ffi::CString::new(name)?;
    let mut stat = std::mem::MaybeUninit::<libc::stat64>::uninit();
    // SAFETY: the stream's descriptor is open, `name` is NUL-terminated and
    // `stat` is written by the kernel on success.
    let done = unsafe {
        libc::fstatat64(
            libc::dirfd(stream.0),
            name.as_ptr(),
            stat.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstatat succeeded, so it filled `stat`.
    let mode = unsafe { stat.assume_init() }.st_mode & libc::S_IFMT;
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
    let name = std::ffi::CString::new(name).ok()?;
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
        return None;
    }
    // SAFETY: fstatat succeeded, so it filled `stat`.
    let stat = unsafe { stat.assume_init() };
    let modified = u64::try_from(stat.st_mtime).ok();
    Some((u64::try_from(stat.st_size).unwrap_or(0), modified))
}

/// An open directory stream, closed when dropped.
struct Stream(*mut libc::DIR);

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the stream was opened by fdopendir and is closed once.
        unsafe { libc::closedir(self.0) };
    }
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
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            entries,
            vec![
                ("a.txt".into(), EntryKind::File),
                ("link".into(), EntryKind::Symlink),
                ("sub".into(), EntryKind::Directory),
            ]
        );
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
