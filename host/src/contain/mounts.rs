//! A contained program's own view of the mounts: everything read-only but
//! what it may write, and toolcell's own files read-only within that.
//!
//! Landlock confines opening, creating and removing files, but not
//! changing a file's mode, owner, times or extended attributes by path
//! (`chmod ~/.ssh/id_rsa 666`), and it only grants, so a program that may
//! write a root may write everything in it — toolcell's config,
//! `.toolcell/`, scheduled workflows included. In a mount namespace of its
//! own (in a user namespace, which needs no privilege) the child, before it
//! runs:
//!
//! 1. makes every mount read-only (`mount_setattr`, recursive, Linux 5.12);
//! 2. bind-mounts each folder it may write onto itself, writable again;
//! 3. covers the user's runtime folder (`/run/user/UID`: the session bus
//!    and the user's service manager) with an empty read-only tmpfs;
//! 4. bind-mounts each of toolcell's files in those onto itself read-only
//!    (the islands): writing, truncating, replacing, renaming or removing
//!    one fails (`EROFS`, `EBUSY`), through any path.
//!
//! Where user namespaces are not available (turned off, or restricted as
//! Ubuntu 24.04 does), [`available`] says so: the seccomp filter then
//! refuses the metadata calls by path instead, and the after-call check of
//! the policy files is what protects them.
//!
//! Everything the child does is prepared here: the map files' contents,
//! the paths as C strings, the flags each mount must keep.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the child sets up: its user and mount namespaces, the writable
/// folders and the islands.
#[derive(Debug)]
pub struct Mounts {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Each folder it may write, and the flags its remount keeps (a mount's
    /// `nosuid`, `nodev`, `noexec` and atime flags may not be dropped in a
    /// user namespace).
    writable: Vec<(CString, libc::c_ulong)>,
    /// Each island, and the flags likewise.
    islands: Vec<(CString, libc::c_ulong)>,
    /// Folders covered by an empty read-only tmpfs: the user's runtime
    /// folder (`/run/user/UID`: the D-Bus session bus, the systemd user
    /// manager, which could start anything unconfined).
    hidden: Vec<CString>,
}

const TMPFS: &[u8] = b"tmpfs\0";
const TMPFS_OPTIONS: &[u8] = b"size=4k,mode=0555\0";

/// `struct mount_attr` of mount_setattr(2).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}
const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// mount_setattr(2): the same number on x86-64 and aarch64.
const SYS_MOUNT_SETATTR: libc::c_long = 442;

const SETGROUPS: &[u8] = b"/proc/self/setgroups\0";
const UID_MAP: &[u8] = b"/proc/self/uid_map\0";
const GID_MAP: &[u8] = b"/proc/self/gid_map\0";
const ROOT: &[u8] = b"/\0";

/// Each of `paths` that exists, with the flags of the mount holding it.
fn planned(paths: &[PathBuf]) -> std::io::Result<Vec<(CString, libc::c_ulong)>> {
    let mut planned = Vec::new();
    for path in paths {
        let Ok(flags) = kept_flags(path) else {
            continue; // gone: nothing to mount
        };
        planned.push((CString::new(path.as_os_str().as_bytes())?, flags));
    }
    Ok(planned)
}

impl Mounts {
    /// The plan: `writable` folders writable, `islands` in them read-only,
    /// the rest read-only (those that exist).
    pub fn new(
        writable: &[PathBuf],
        islands: &[PathBuf],
        hidden: &[PathBuf],
    ) -> std::io::Result<Self> {
        // SAFETY: plain getters.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Ok(Self {
            // The user keeps its own ids: files stay theirs (git checks).
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            writable: planned(writable)?,
            islands: planned(islands)?,
            hidden: hidden
                .iter()
                .filter(|path| path.is_dir())
                .map(|path| CString::new(path.as_os_str().as_bytes()))
                .collect::<Result<_, _>>()?,
        })
    }

    /// In the child, between fork and exec: enters new user and mount
    /// namespaces, makes every mount read-only, the writable folders
    /// writable again and each island read-only. System calls only.
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
            let everything = MountAttr {
                attr_set: MOUNT_ATTR_RDONLY,
                attr_clr: 0,
                propagation: 0,
                userns_fd: 0,
            };
            if libc::syscall(
                SYS_MOUNT_SETATTR,
                libc::AT_FDCWD,
                root,
                libc::AT_RECURSIVE as libc::c_uint,
                &everything as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            ) == -1
            {
                return fail();
            }
            for (path, kept) in &self.writable {
                bind_onto_itself(path, *kept)?;
            }
            for path in &self.hidden {
                if libc::mount(
                    TMPFS.as_ptr().cast(),
                    path.as_ptr(),
                    TMPFS.as_ptr().cast(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    TMPFS_OPTIONS.as_ptr().cast(),
                ) == -1
                {
                    return fail();
                }
            }
            for (path, kept) in &self.islands {
                bind_onto_itself(path, kept | libc::MS_RDONLY)?;
            }
        }
        Ok(())
    }
}

/// Bind-mounts `path` onto itself (what lies under it too) and remounts
/// the new mount with `flags` (`MS_RDONLY` or not, and the flags the mount
/// holding it must keep). System calls only.
fn bind_onto_itself(path: &CString, flags: libc::c_ulong) -> std::io::Result<()> {
    let at = path.as_ptr();
    // SAFETY: a NUL-terminated path prepared before the fork; no memory
    // is written.
    unsafe {
        if libc::mount(
            at,
            at,
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) == -1
            || libc::mount(
                std::ptr::null(),
                at,
                std::ptr::null(),
                libc::MS_REMOUNT | libc::MS_BIND | flags,
                std::ptr::null(),
            ) == -1
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
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

/// The file in toolcell's cache folder that keeps a "yes" of [`available`]
/// for this boot (`BOOT_ID yes`): trying costs a fork and a namespace,
/// about a millisecond, which every `toolcell` process that starts a
/// program would pay again. A "no" is never kept: it is tried again (a
/// forged or passing "no" would switch the mounts off; a forged "yes"
/// only makes starts fail, saying why).
const PROBE_FILE: &str = "mounts-probe";
/// The kernel's id of this boot: the answer holds until the next one (a
/// changed sysctl in between makes a start fail, saying why, not weaker).
const BOOT_ID: &str = "/proc/sys/kernel/random/boot_id";

/// Whether this view can be made here: known for this boot, or tried in a
/// child that makes it of a temporary folder and a file in it, and exits.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let boot = std::fs::read_to_string(BOOT_ID).unwrap_or_default();
        let boot = boot.trim();
        let kept = crate::util::locations::cache_dir().map(|dir| dir.join(PROBE_FILE));
        let known_yes = !boot.is_empty()
            && kept
                .as_ref()
                .and_then(|file| std::fs::read_to_string(file).ok())
                .is_some_and(|text| text.trim() == format!("{boot} yes"));
        if known_yes {
            return true;
        }
        let works = probe();
        if works
            && let Some(file) = kept
            && !boot.is_empty()
        {
            let _ = file.parent().map(std::fs::create_dir_all);
            let _ = std::fs::write(file, format!("{boot} yes\n"));
        }
        works
    })
}

/// Tries the view in a child that exits.
fn probe() -> bool {
    let attempt = || -> std::io::Result<bool> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("probe");
        std::fs::write(&file, b"")?;
        let covered = dir.path().join("covered");
        std::fs::create_dir(&covered)?;
        let mounts = Mounts::new(&[dir.path().to_path_buf()], &[file], &[covered])?;
        // SAFETY: the child only makes system calls (Mounts::enter, _exit)
        // on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid == -1 {
            return Err(std::io::Error::last_os_error());
        }
        if pid == 0 {
            let code = if mounts.enter().is_ok() { 0 } else { 1 };
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
    match attempt() {
        Ok(works) => works,
        Err(e) => {
            tracing::debug!("user namespaces could not be tried: {e}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_answers_and_plans_skip_what_is_gone() {
        // Whatever this machine allows, the probe answers without harm.
        let _ = probe();
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        std::fs::write(&kept, "x").unwrap();
        let mounts = Mounts::new(
            &[dir.path().to_path_buf()],
            &[kept, dir.path().join("gone")],
            &[dir.path().join("gone")],
        )
        .unwrap();
        assert_eq!((mounts.writable.len(), mounts.islands.len()), (1, 1));
        assert!(
            mounts.hidden.is_empty(),
            "a folder that is not there is not covered"
        );
    }
}
