//! Resolving paths the way the kernel does, for the host's own checks:
//! `openat2(2)` with its resolve flags, and the path a descriptor really
//! names (from `/proc/self/fd`), and a path beneath a folder joined to it
//! when the kernel said no link is on the way.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `struct open_how` of openat2(2) (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Opens `path` relative to `dirfd` (or `libc::AT_FDCWD`) with `flags`
/// (`O_CLOEXEC` added) under the `resolve` rules (`RESOLVE_BENEATH`,
/// `RESOLVE_NO_SYMLINKS`, …). `ENOSYS` on kernels before 5.6.
pub fn openat2(dirfd: RawFd, path: &Path, flags: i32, resolve: u64) -> std::io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes())?;
    let how = OpenHow {
        flags: (flags | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve,
    };
    // SAFETY: `path` is NUL-terminated and `how` is a valid open_how of the
    // size passed; the kernel reads both and returns a new descriptor.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// The absolute path the open descriptor `fd` names now.
pub fn host_path_of(fd: RawFd) -> std::io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
}

/// `relative` (beneath `base`, with no link on the way, as the kernel just
/// said) joined to `base`: without links, `..` is lexical.
pub fn joined_without_links(base: &Path, relative: &str) -> PathBuf {
    let mut joined = base.to_path_buf();
    for component in Path::new(relative).components() {
        match component {
            std::path::Component::Normal(part) => joined.push(part),
            std::path::Component::ParentDir => {
                joined.pop();
            }
            _ => {}
        }
    }
    joined
}

/// Opens `inside` beneath the folder `root` (whose host path is `root_host`)
/// with `flags`, as a tool's own paths are opened: a link on the way is
/// followed when it stays beneath the folder, and refused when it leads out
/// (`EXDEV`). Gives the descriptor and the host path it names: joined
/// without asking the kernel when no link is on the way (the common case,
/// one system call), else read from the descriptor.
pub fn open_beneath(
    root: RawFd,
    root_host: &Path,
    inside: &str,
    flags: i32,
) -> std::io::Result<(OwnedFd, PathBuf)> {
    let path = Path::new(inside);
    match openat2(
        root,
        path,
        flags,
        libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS,
    ) {
        Ok(fd) => Ok((fd, joined_without_links(root_host, inside))),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            let fd = openat2(root, path, flags, libc::RESOLVE_BENEATH)?;
            let host = host_path_of(std::os::fd::AsRawFd::as_raw_fd(&fd))?;
            Ok((fd, host))
        }
        Err(e) => Err(e),
    }
}
