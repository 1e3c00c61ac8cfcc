//! Read-only islands in writable roots: toolcell's own files (the config,
//! `.toolcell/`, scheduled workflows and their modules, an MCP server's
//! script) made read-only for a contained program, by the kernel.
//!
//! Landlock only grants, so a program that may write a root may write
//! everything in it. In a mount namespace of its own (in a user namespace,
//! which needs no privilege) the child bind-mounts each of those paths
//! onto itself read-only before it runs: writing, truncating, replacing,
//! renaming or removing one fails (`EROFS`, `EBUSY`), through any path.
//! Where user namespaces are not available (turned off, or restricted as
//! Ubuntu 24.04 does), [`available`] says so, and the after-call check of
//! the policy files is what remains.
//!
//! Everything the child does is prepared here: the map files' contents,
//! the paths as C strings, the flags each mount must keep.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the child sets up: its user and mount namespaces and the islands.
#[derive(Debug)]
pub struct Islands {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Each island and the flags its read-only remount keeps (a mount's
    /// `nosuid`, `nodev`, `noexec` and atime flags may not be dropped in a
    /// user namespace).
    paths: Vec<(CString, libc::c_ulong)>,
}

const SETGROUPS: &[u8] = b"/proc/self/setgroups\0";
const UID_MAP: &[u8] = b"/proc/self/uid_map\0";
const GID_MAP: &[u8] = b"/proc/self/gid_map\0";
const ROOT: &[u8] = b"/\0";

impl Islands {
    /// The plan for `paths` (those that exist).
    pub fn new(paths: &[PathBuf]) -> std::io::Result<Self> {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut planned = Vec::new();
        for path in paths {
            let Ok(flags) = kept_flags(path) else {
                continue; // gone: nothing to keep
            };
            planned.push((CString::new(path.as_os_str().as_bytes())?, flags));
        }
        Ok(Self {
            // The user keeps its own ids: files stay theirs (git checks).
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            paths: planned,
        })
    }

    /// Whether there is anything to make read-only.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// In the child, between fork and exec: enters new user and mount
    /// namespaces and makes each island read-only. System calls only.
    pub fn enter(&self) -> std::io::Result<()> {
        let fail = || Err(std::io::Error::last_os_error());
        // SAFETY: system calls on NUL-terminated paths and buffers prepared
        // before the fork; nothing is allocated.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) == -1 {
                return fail();
            }
            write_file(SETGROUPS, b"deny")?;
            write_file(UID_MAP, &self.uid_map)?;
            write_file(GID_MAP, &self.gid_map)?;
            // Nothing done here reaches the mounts outside.
            let root = ROOT.as_ptr().cast();
            if libc::mount(
                std::ptr::null(),
                root,
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) == -1
            {
                return fail();
            }
            for (path, kept) in &self.paths {
                let at = path.as_ptr();
                if libc::mount(
                    at,
                    at,
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) == -1
                {
                    return fail();
                }
                if libc::mount(
                    std::ptr::null(),
                    at,
                    std::ptr::null(),
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept,
                    std::ptr::null(),
                ) == -1
                {
                    return fail();
                }
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to the file `path` (NUL-terminated). System calls only.
fn write_file(path: &[u8], bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: a NUL-terminated path and a buffer of the length given.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd == -1 {
            return Err(std::io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The flags of the mount holding `path` that a remount must keep.
fn kept_flags(path: &Path) -> std::io::Result<libc::c_ulong> {
    let c_path = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a NUL-terminated path and a statvfs to fill.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    let has = |flag: libc::c_ulong| stat.f_flag & flag != 0;
    let mut kept = 0;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if has(st) {
            kept |= ms;
        }
    }
    Ok(kept)
}

/// Whether islands can be made here: tried once per process, in a child
/// that makes one of a temporary file and exits.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let probe = || -> std::io::Result<bool> {
            let dir = tempfile::tempdir()?;
            let file = dir.path().join("probe");
            std::fs::write(&file, b"")?;
            let islands = Islands::new(&[file])?;
            // SAFETY: the child only makes system calls (Islands::enter,
            // _exit) on memory prepared before the fork.
            let pid = unsafe { libc::fork() };
            if pid == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if pid == 0 {
                let code = if islands.enter().is_ok() { 0 } else { 1 };
                // SAFETY: ends the child without running the parent's
                // destructors or atexit handlers.
                unsafe { libc::_exit(code) };
            }
            let mut status = 0;
            // SAFETY: waits for the child just forked.
            if unsafe { libc::waitpid(pid, &mut status, 0) } == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0)
        };
        match probe() {
            Ok(works) => works,
            Err(e) => {
                tracing::debug!("user namespaces could not be tried: {e}");
                false
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_answers_and_plans_skip_what_is_gone() {
        // Whatever this machine allows, the probe answers without harm.
        let _ = available();
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        std::fs::write(&kept, "x").unwrap();
        let islands = Islands::new(&[kept, dir.path().join("gone")]).unwrap();
        assert_eq!(islands.paths.len(), 1);
        assert!(!islands.is_empty());
    }
}
