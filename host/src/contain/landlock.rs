//! Landlock (Linux 5.13 and later): the kernel's allow-list for what a
//! process may touch on the file system and over TCP, by raw system calls.
//!
//! A ruleset is built in toolcell (where allocating and opening files is
//! safe) and only enforced in the child, between `fork` and `exec`, with
//! one call ([`restrict_self`]) that allocates nothing. Everything the child
//! execs afterwards, and every process it starts, stays inside it.
//!
//! The ABI versions and what each adds (the kernel's `landlock.h`):
//! 1 file-system rights, 2 `REFER` (moving between folders), 3 `TRUNCATE`,
//! 4 TCP `bind`/`connect` by port, 5 `IOCTL_DEV`, 6 scoping of abstract
//! UNIX sockets and signals, 7 logging flags.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub const FS_EXECUTE: u64 = 1 << 0;
pub const FS_WRITE_FILE: u64 = 1 << 1;
pub const FS_READ_FILE: u64 = 1 << 2;
pub const FS_READ_DIR: u64 = 1 << 3;
const FS_REMOVE_DIR: u64 = 1 << 4;
const FS_REMOVE_FILE: u64 = 1 << 5;
const FS_MAKE_DIR: u64 = 1 << 7;
const FS_MAKE_REG: u64 = 1 << 8;
const FS_MAKE_SOCK: u64 = 1 << 9;
const FS_MAKE_FIFO: u64 = 1 << 10;
const FS_MAKE_SYM: u64 = 1 << 12;
/// ABI 2: linking or renaming a file into another folder.
const FS_REFER: u64 = 1 << 13;
/// ABI 3: truncating a file (before it, truncation was never refused).
pub const FS_TRUNCATE: u64 = 1 << 14;
/// ABI 5: `ioctl` on device files.
const FS_IOCTL_DEV: u64 = 1 << 15;

/// ABI 4.
const NET_BIND_TCP: u64 = 1 << 0;
const NET_CONNECT_TCP: u64 = 1 << 1;

/// ABI 6: no connecting to abstract UNIX sockets made outside the ruleset
/// (a desktop session's, for one), no signals to processes outside it.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

const CREATE_RULESET_VERSION: u32 = 1 << 0;
const RULE_PATH_BENEATH: libc::c_int = 1;
const RULE_NET_PORT: libc::c_int = 2;

/// The rights that apply to a file (not a folder): a rule on a file may
/// grant only these.
const FILE_RIGHTS: u64 = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;

/// Reading a tree: its files, its folders' listings, running its programs.
pub const READ: u64 = FS_READ_FILE | FS_READ_DIR | FS_EXECUTE;
/// Reading and changing a tree: everything but making device nodes and
/// `ioctl` on devices.
pub const WRITE: u64 = READ
    | FS_WRITE_FILE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_SYM
    | FS_REFER
    | FS_TRUNCATE;
/// A device such as `/dev/null`: read and written, never listed.
pub const DEVICE: u64 = FS_READ_FILE | FS_WRITE_FILE;

/// `struct landlock_ruleset_attr` (ABI 6 layout; older kernels accept it
/// with the fields they do not know left zero).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// `struct landlock_net_port_attr`.
#[repr(C)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

/// Caps the ABI toolcell uses (`TOOLCELL_LANDLOCK_MAX_ABI=N`, 0 for
/// none), to see how it behaves on an older kernel: what that version
/// cannot confine is refused, as it would be there.
const MAX_ABI_VAR: &str = "TOOLCELL_LANDLOCK_MAX_ABI";

/// The Landlock ABI this kernel offers: `None` when it has no Landlock or
/// it is turned off (not in the `lsm=` list).
pub fn abi() -> Option<u32> {
    let cap = std::env::var(MAX_ABI_VAR)
        .ok()
        .and_then(|v| v.parse::<u32>().ok());
    kernel_abi()
        .map(|abi| cap.map_or(abi, |cap| abi.min(cap)))
        .filter(|&abi| abi > 0)
}

fn kernel_abi() -> Option<u32> {
    static ABI: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *ABI.get_or_init(|| {
        // SAFETY: with the VERSION flag the kernel reads no attribute and
        // returns the ABI version (or an error).
        let version = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<RulesetAttr>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        };
        u32::try_from(version).ok().filter(|&v| v > 0)
    })
}

/// The file-system rights ABI `abi` knows, all of them handled (refused
/// unless a rule grants them).
fn fs_rights(abi: u32) -> u64 {
    let mut rights = (1 << 13) - 1;
    if abi >= 2 {
        rights |= FS_REFER;
    }
    if abi >= 3 {
        rights |= FS_TRUNCATE;
    }
    if abi >= 5 {
        rights |= FS_IOCTL_DEV;
    }
    rights
}

/// A ruleset being built, then enforced in a child.
pub struct Ruleset {
    fd: OwnedFd,
    handled_fs: u64,
}

impl Ruleset {
    /// A ruleset that refuses every file-system right of ABI `abi`, every
    /// TCP `bind` and `connect` when `tcp` (ABI 4), and signals and
    /// abstract sockets outside it (ABI 6).
    pub fn new(abi: u32, tcp: bool) -> std::io::Result<Self> {
        let attr = RulesetAttr {
            handled_access_fs: fs_rights(abi),
            handled_access_net: if tcp && abi >= 4 {
                NET_BIND_TCP | NET_CONNECT_TCP
            } else {
                0
            },
            scoped: if abi >= 6 {
                SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            } else {
                0
            },
        };
        // The attribute's size: what this ABI knows (an older kernel
        // refuses a longer struct only if the extra fields are not zero).
        let size = if abi >= 6 {
            std::mem::size_of::<RulesetAttr>()
        } else if abi >= 4 {
            16
        } else {
            8
        };
        // SAFETY: `attr` is valid for `size` bytes; the kernel returns a
        // new descriptor (close-on-exec) or an error.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                size,
                0u32,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self {
            // SAFETY: a descriptor the kernel just returned, owned by nobody else.
            fd: unsafe { OwnedFd::from_raw_fd(fd as RawFd) },
            handled_fs: attr.handled_access_fs,
        })
    }

    /// Grants `rights` beneath `path` (or on it, for a file: only the
    /// rights a file has). A path that does not exist is skipped: `false`.
    pub fn allow_path(&mut self, path: &Path, rights: u64) -> std::io::Result<bool> {
        let c_path = CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: a NUL-terminated path; O_PATH opens without reading.
        let raw = unsafe { libc::open(c_path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if raw < 0 {
            let error = std::io::Error::last_os_error();
            return match error.kind() {
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => Ok(false),
                _ => Err(error),
            };
        }
        // SAFETY: a descriptor just opened, owned here.
        let parent = unsafe { OwnedFd::from_raw_fd(raw) };
        let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
        let mut allowed = rights & self.handled_fs;
        if !is_dir {
            allowed &= FILE_RIGHTS;
        }
        if allowed == 0 {
            return Ok(true);
        }
        let attr = PathBeneathAttr {
            allowed_access: allowed,
            parent_fd: parent.as_raw_fd(),
        };
        self.add_rule(RULE_PATH_BENEATH, &attr)?;
        Ok(true)
    }

    /// Lets TCP connections reach `port` (on any address).
    pub fn allow_connect(&mut self, port: u16) -> std::io::Result<()> {
        let attr = NetPortAttr {
            allowed_access: NET_CONNECT_TCP,
            port: port.into(),
        };
        self.add_rule(RULE_NET_PORT, &attr)
    }

    /// Adds one rule of `kind`, whose attribute struct is `attr`
    /// ([`PathBeneathAttr`] for a path, [`NetPortAttr`] for a port).
    fn add_rule<A>(&mut self, kind: libc::c_int, attr: &A) -> std::io::Result<()> {
        // SAFETY: an open ruleset, and `attr` the struct the kernel reads
        // for `kind` (the two callers pair them); its descriptors are open.
        let done = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.fd.as_raw_fd(),
                kind,
                attr as *const A,
                0u32,
            )
        };
        if done < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// The descriptor a child enforces with [`restrict_self`].
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Enforces ruleset `fd` on the calling process. For the child between
/// `fork` and `exec`: one system call, no allocation. `no_new_privs` must
/// already be set.
pub fn restrict_self(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: a plain system call on a descriptor the child inherited.
    let done = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
    if done < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
