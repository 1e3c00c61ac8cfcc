//! Containment of what runs outside a cell: the programs a tool was granted
//! (`run_command`) and the external MCP servers. Each is started confined
//! to what its grant names, by the kernel, before it runs a single
//! instruction of its own:
//!
//! - **Files** ([`landlock`]): it reads the roots, the system folders a
//!   program needs ([`SYSTEM_READ`]), its own installation and what the
//!   config adds (`read = [...]`); it writes only the writable roots, what
//!   the config adds (`write = [...]`) and a private folder that is its
//!   `HOME` and `TMPDIR`; nothing else — the user's home included — exists
//!   for it. What the config lets it read or write under the user's home
//!   (`~/.gitconfig`) is linked into its private home at the same place, so
//!   programs find it where they look.
//! - **Network**: none without a grant (no `socket` at all, [`seccomp`]; no
//!   TCP `connect` or `bind`, Landlock); with hosts granted, TCP to the
//!   ports those hosts use (Landlock filters by port, not by address);
//!   `"any"`, unrestricted.
//! - **Mounts** ([`mounts`], where user namespaces are available): in a
//!   mount namespace of its own everything is read-only but what it may
//!   write (so no `chmod` or `touch` of what it may not), and toolcell's own
//!   files inside a writable root (the config, `.toolcell/`, scheduled
//!   workflows, a server's script) stay read-only too. Elsewhere the
//!   metadata calls by path are refused instead.
//! - **Processes**: `no_new_privs` (no setuid gains), no signals to or
//!   tracing of processes outside (Landlock's scope, seccomp), no new
//!   namespaces, mounts or kernel controls ([`seccomp`]).
//!
//! It is all set in the child between `fork` and `exec` ([`Prepared::apply`]),
//! so nothing of the program runs unconfined, and everything it starts
//! inherits the same limits. Where the kernel cannot do it (no Landlock, or
//! a version too old for a rule asked for), nothing is started: the
//! refusal says why and how to run it unconfined on purpose
//! (`sandbox = "none"`).

pub mod landlock;
pub mod mounts;
pub mod seccomp;

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Folders every program may read (and run programs from): the system's
/// programs and libraries (`/usr`, and the old top-level folders that link
/// into it), its configuration (`/etc`: the loader's cache, certificates,
/// time zones), add-on installations (`/opt`, `/nix/store`), and the kernel's
/// views of the process (`/proc`, `/sys`: runtimes read their limits
/// there). Nothing under `/home`, `/root`, `/tmp` or `/var`.
pub const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/nix/store",
    "/proc",
    "/sys",
];

/// Devices every program may read and write: the sinks and sources of bytes
/// programs open by name. No terminal.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Confining file-system writes needs Landlock 3 (Linux 6.2): before it,
/// truncating a file was never refused.
const MIN_ABI_FILES: u32 = 3;
/// Letting TCP reach only some ports needs Landlock 4 (Linux 6.7).
const MIN_ABI_PORTS: u32 = 4;

/// How a program or server is run: `sandbox = "none"` in its table turns
/// confinement off for it, on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    /// Confined to its grant (the default).
    #[default]
    Confined,
    /// With the user's full rights.
    None,
}

/// What a contained program may reach over the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkAccess {
    /// Nothing: no socket of any family.
    None,
    /// TCP to these ports, on any address (the hosts granted, by port).
    Ports(Vec<u16>),
    /// Anything.
    Any,
}

impl NetworkAccess {
    /// The access for granted host patterns (`host`, `*.host`,
    /// `host:port`): their ports, 443 and 80 for those without one.
    pub fn for_hosts(hosts: &[String]) -> Self {
        if hosts.is_empty() {
            return NetworkAccess::None;
        }
        let mut ports: Vec<u16> = hosts
            .iter()
            .flat_map(|host| match host.rsplit_once(':').map(|(_, p)| p.parse()) {
                Some(Ok(port)) => vec![port],
                _ => vec![443, 80],
            })
            .collect();
        ports.sort_unstable();
        ports.dedup();
        NetworkAccess::Ports(ports)
    }

    /// One line for listings and approval prompts.
    pub fn describe(&self) -> String {
        match self {
            NetworkAccess::None => "no network".into(),
            NetworkAccess::Ports(ports) => format!(
                "TCP to port {} only",
                ports
                    .iter()
                    .map(u16::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            NetworkAccess::Any => "any network".into(),
        }
    }
}

/// What one program (and everything it starts) may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Read, list and run beneath these (beyond [`SYSTEM_READ`]).
    pub read: Vec<PathBuf>,
    /// Change beneath these too.
    pub write: Vec<PathBuf>,
    /// What the config added (`read = [...]`, `write = [...]`): those under
    /// the user's home are linked into the private one.
    pub granted: Vec<PathBuf>,
    pub network: NetworkAccess,
    /// toolcell's own files, kept read-only where they lie in `write`.
    pub read_only: Vec<PathBuf>,
    /// The roots among `read` and `write`, resolved when the config was
    /// loaded: one that now has a link on its way was swapped (by a
    /// program that could write the folder holding it), and nothing starts.
    pub roots: Vec<PathBuf>,
}

impl Confinement {
    /// One line for approval prompts and `tools show`: what it may write
    /// and reach (reading the roots, the system and its installation goes
    /// without saying; what the config adds is said).
    pub fn describe(&self) -> String {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| {
                    crate::util::text::for_terminal_line(&p.display().to_string()).into_owned()
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let writes = if self.write.is_empty() {
            "writes only its private temporary folder".to_string()
        } else {
            format!(
                "writes only in {} and its private temporary folder",
                list(&self.write)
            )
        };
        let extra: Vec<PathBuf> = self
            .granted
            .iter()
            .filter(|p| !self.write.contains(p))
            .cloned()
            .collect();
        let reads = if extra.is_empty() {
            String::new()
        } else {
            format!(", also reads {}", list(&extra))
        };
        let kept = if !self.read_only_in_writable().is_empty() && mounts::available() {
            "; toolcell's own files read-only"
        } else {
            ""
        };
        format!(
            "confined: {writes}{reads}; {}{kept}",
            self.network.describe()
        )
    }
}

/// Why a program was not started confined.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct Unconfinable(pub String);

/// A confinement ready to apply to a child: the ruleset, the filter and
/// the private folder (`home/` and `tmp/`), which lives as long as this does.
pub struct Prepared {
    ruleset: landlock::Ruleset,
    filter: Arc<Vec<libc::sock_filter>>,
    private: tempfile::TempDir,
    /// Its own view of the mounts, where user namespaces allow it.
    mounts: Option<Arc<mounts::Mounts>>,
}

impl Confinement {
    /// Builds the ruleset and the filter for a program (`what`, for the
    /// message: "`git`", "the MCP server `fs`"); `unconfined` says where
    /// `sandbox = "none"` goes, for the fix.
    pub fn prepare(&self, what: &str, unconfined: &str) -> Result<Prepared, Unconfinable> {
        let needed = match self.network {
            NetworkAccess::Ports(_) => MIN_ABI_PORTS,
            _ => MIN_ABI_FILES,
        };
        let fix = format!(
            "  fix: to run it unconfined on purpose, with your rights, set sandbox = \"none\" {unconfined} in toolcell.toml"
        );
        let abi = match landlock::abi() {
            Some(abi) if abi >= needed => abi,
            found => {
                let have = match found {
                    None => "has no Landlock (it is missing, or not in the kernel's `lsm=` list)"
                        .to_string(),
                    Some(abi) => format!("has Landlock {abi}"),
                };
                let why = if needed == MIN_ABI_PORTS {
                    "letting it reach only the granted hosts' ports needs Landlock 4 (Linux 6.7 or later)"
                } else {
                    "confining its writes needs Landlock 3 (Linux 6.2 or later)"
                };
                return Err(Unconfinable(format!(
                    "{what} was not started: toolcell confines the programs it starts, and this kernel {have}; {why}\n{fix}"
                )));
            }
        };
        if let Some(moved) = self.roots.iter().find(|root| !unmoved(root)) {
            return Err(Unconfinable(format!(
                "{what} was not started: the root {} is no longer the folder the config named (a link is on its way now)\n  fix: put the folder back, or restart toolcell to see the config as it is now",
                crate::util::text::for_terminal_line(&moved.display().to_string())
            )));
        }
        let failed = |step: &str, e: std::io::Error| {
            Unconfinable(format!(
                "{what} was not started: its confinement could not be set up ({step}: {e})\n{fix}"
            ))
        };
        let private = tempfile::Builder::new()
            .prefix("toolcell-private-")
            .tempdir()
            .map_err(|e| failed("a private folder", e))?;
        make_private_home(private.path(), &self.granted)
            .map_err(|e| failed("a private home folder", e))?;
        let tcp = !matches!(self.network, NetworkAccess::Any);
        let mut ruleset = landlock::Ruleset::new(abi, tcp).map_err(|e| failed("Landlock", e))?;
        let mut allow = |path: &Path, rights: u64| {
            ruleset
                .allow_path(path, rights)
                .map_err(|e| failed(&format!("a rule for {}", path.display()), e))
        };
        for path in SYSTEM_READ
            .iter()
            .map(Path::new)
            .chain(self.read.iter().map(PathBuf::as_path))
        {
            allow(path, landlock::READ)?;
        }
        for device in DEVICES {
            allow(Path::new(device), landlock::DEVICE)?;
        }
        for path in self
            .write
            .iter()
            .map(PathBuf::as_path)
            .chain([private.path()])
        {
            allow(path, landlock::WRITE)?;
        }
        if let NetworkAccess::Ports(ports) = &self.network {
            for &port in ports {
                ruleset
                    .allow_connect(port)
                    .map_err(|e| failed("a network rule", e))?;
            }
        }
        let kept = self.read_only_in_writable();
        // toolcell's files were resolved when the config was loaded: one
        // that is a link now was swapped, and a bind would follow it.
        if let Some(link) = kept.iter().find(|p| p.is_symlink()) {
            return Err(Unconfinable(format!(
                "{what} was not started: {} is one of toolcell's own, and a link now\n  fix: put it back as it was (a folder or file, not a link), then try again",
                crate::util::text::for_terminal_line(&link.display().to_string())
            )));
        }
        let mounts = if mounts::available() {
            // The folders on the way from a writable folder to each kept
            // file are mount points too: none can be renamed away (which
            // would leave the read-only mount behind with the old name).
            let mut writable: Vec<PathBuf> = self
                .write
                .iter()
                .cloned()
                .chain([private.path().to_path_buf()])
                .chain(kept.iter().flat_map(|path| self.on_the_way(path)))
                .collect();
            writable.sort_by_key(|p| p.components().count());
            writable.dedup();
            // The user's runtime folder, unless a grant lies in it.
            // SAFETY: a plain getter.
            let runtime = PathBuf::from(format!("/run/user/{}", unsafe { libc::getuid() }));
            let granted_there = self
                .read
                .iter()
                .chain(&self.write)
                .any(|p| p.starts_with(&runtime) || runtime.starts_with(p));
            let hidden: Vec<PathBuf> = if granted_there {
                Vec::new()
            } else {
                vec![runtime]
            };
            let planned = mounts::Mounts::new(&writable, &kept, &hidden)
                .map_err(|e| failed("its view of the mounts", e))?;
            Some(Arc::new(planned))
        } else {
            None
        };
        let sockets = match self.network {
            NetworkAccess::None => seccomp::Sockets::None,
            NetworkAccess::Ports(_) => seccomp::Sockets::Internet,
            NetworkAccess::Any => seccomp::Sockets::Any,
        };
        // Without its own mounts, the metadata calls by path are refused.
        let filter = seccomp::program(sockets, mounts.is_none());
        Ok(Prepared {
            ruleset,
            filter: Arc::new(filter),
            private,
            mounts,
        })
    }

    /// The folders strictly between the writable folder holding `path` and
    /// `path`.
    fn on_the_way(&self, path: &Path) -> Vec<PathBuf> {
        let Some(holder) = self
            .write
            .iter()
            .filter(|w| path.starts_with(w))
            .max_by_key(|w| w.components().count())
        else {
            return Vec::new();
        };
        path.ancestors()
            .skip(1)
            .take_while(|a| a != holder && a.starts_with(holder))
            .map(Path::to_path_buf)
            .collect()
    }

    /// toolcell's files that lie where the program may write.
    fn read_only_in_writable(&self) -> Vec<PathBuf> {
        self.read_only
            .iter()
            .filter(|path| self.write.iter().any(|w| path.starts_with(w)))
            .cloned()
            .collect()
    }

    /// Whether `dir` is (inside) one of toolcell's files kept read-only: a
    /// program is not started there (its working folder would be the
    /// writable mount beneath the island).
    pub fn keeps_read_only(&self, dir: &Path) -> bool {
        self.read_only.iter().any(|path| dir.starts_with(path))
    }
}

/// Makes toolcell's own memory and environment (model keys, granted
/// variables) unreadable to other processes of the user: without it,
/// `/proc/PID/environ` and `/proc/PID/maps` of toolcell are open to any
/// process of the same user (Landlock refuses them to a contained program,
/// but a program run with `sandbox = "none"`, or anything else the user
/// runs, could read them). Also means toolcell leaves no core dump. Its children are not
/// affected (`exec` makes a process dumpable again).
pub fn keep_to_itself() {
    // SAFETY: a plain prctl on the calling process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// Drops every capability the child holds: root's, or those a new user
/// namespace gives (the bounding set too, so the program root runs next
/// gains none back); without them a program is held by the same file
/// permissions as anyone's. Between fork and exec: system calls only.
fn drop_capabilities() -> std::io::Result<()> {
    // SAFETY: plain system calls on the calling process.
    unsafe {
        // Capability numbers run to 40 today; the kernel refuses numbers
        // past its last with EINVAL, which is the end (and a process
        // without CAP_SETPCAP, any of them with EPERM: it holds none).
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) == -1 {
                break;
            }
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        // _LINUX_CAPABILITY_VERSION_3: two 32-bit sets.
        let header = Header {
            version: 0x2008_0522,
            pid: 0,
        };
        let none = [
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        if libc::syscall(libc::SYS_capset, &header as *const Header, none.as_ptr()) == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Makes `private/home` and `private/tmp`, and links each granted path
/// under the user's home into the private home at the same place.
fn make_private_home(private: &Path, granted: &[PathBuf]) -> std::io::Result<()> {
    let home = private.join("home");
    std::fs::create_dir(&home)?;
    std::fs::create_dir(private.join("tmp"))?;
    let Some(user_home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return Ok(());
    };
    for path in granted {
        let Ok(inside) = path.strip_prefix(&user_home) else {
            continue;
        };
        if inside.as_os_str().is_empty() {
            continue;
        }
        let link = home.join(inside);
        if let Some(folder) = link.parent() {
            std::fs::create_dir_all(folder)?;
        }
        if !link.exists() {
            std::os::unix::fs::symlink(path, &link)?;
        }
    }
    Ok(())
}

impl Prepared {
    /// The private home folder (the child's `HOME`).
    pub fn home(&self) -> PathBuf {
        self.private.path().join("home")
    }

    /// Makes `command`'s child confine itself before `exec`: `no_new_privs`,
    /// its own mounts (entering `cwd` again through them: the folder it was
    /// in is the mount beneath), the Landlock ruleset, then the seccomp
    /// filter; its `HOME` and `TMPDIR` are the private ones. `self` must
    /// outlive the spawn.
    pub fn apply(&self, command: &mut tokio::process::Command, cwd: &Path) {
        let cwd = std::ffi::CString::new(cwd.as_os_str().as_encoded_bytes()).ok();
        command
            .env("HOME", self.home())
            .env("TMPDIR", self.private.path().join("tmp"));
        let fd = self.ruleset.raw_fd();
        let filter = self.filter.clone();
        let mounts = self.mounts.clone();
        // SAFETY: runs in the child between fork and exec; it only makes
        // system calls (prctl, landlock_restrict_self) on memory and a
        // descriptor inherited from the parent, and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                if let Some(mounts) = &mounts {
                    mounts.enter()?;
                    if let Some(cwd) = &cwd
                        && libc::chdir(cwd.as_ptr()) == -1
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                drop_capabilities()?;
                landlock::restrict_self(fd)?;
                seccomp::install(&filter)
            });
        }
    }
}

/// Whether `path` (resolved once, so without links) still has no link on
/// its way: a root swapped for a link since would lead elsewhere.
pub fn unmoved(path: &Path) -> bool {
    match crate::util::openat::openat2(
        libc::AT_FDCWD,
        path,
        libc::O_PATH | libc::O_DIRECTORY,
        libc::RESOLVE_NO_SYMLINKS,
    ) {
        Ok(_) => true,
        // A kernel without openat2 (before 5.6): where it leads now.
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            path.canonicalize().is_ok_and(|real| real == path)
        }
        Err(_) => false,
    }
}

/// The folder a program is installed in, for reading: the project holding
/// the outermost `node_modules` on its path, the prefix above a `bin`
/// folder (`/opt/node/bin/node` → `/opt/node`, a virtual environment's
/// `bin/python` → the environment) or a version manager's `shims` folder
/// (`~/.pyenv/shims/python3` → `~/.pyenv`), or else its own folder; never
/// the user's home, a folder above it or one right in it (then only the
/// file itself).
pub fn installation_of(program: &Path) -> Option<PathBuf> {
    let folder = installation_folder(program)?;
    // Never the home folder, what holds it, or a folder right in it
    // (`~/.cargo` holds a registry token, `~/.local` the desktop's data): a
    // program kept at `~/.cargo/bin/x` or a script at `~/server.js` lends
    // only itself. A version manager's root (`~/.pyenv`, with `shims/`) is
    // the exception: it is the installation.
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let too_wide = folder == Path::new("/")
        || home.as_ref().is_some_and(|home| {
            home.starts_with(&folder)
                || (folder.parent() == Some(home.as_path()) && !folder.join("shims").is_dir())
        });
    if too_wide {
        return Some(program.to_path_buf());
    }
    Some(folder)
}

fn installation_folder(program: &Path) -> Option<PathBuf> {
    let folder = program.parent()?;
    if let Some(project) = program
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last()
        .and_then(Path::parent)
    {
        return Some(project.to_path_buf());
    }
    if folder
        .file_name()
        .is_some_and(|n| n == "bin" || n == "shims")
        && let Some(prefix) = folder.parent()
        && prefix != Path::new("/")
    {
        return Some(prefix.to_path_buf());
    }
    Some(folder.to_path_buf())
}

/// Expands a `read = [...]` or `write = [...]` entry: `~/x` under `$HOME`, a relative path
/// under `base` (the config's folder).
pub fn expand_path(entry: &str, base: &Path) -> PathBuf {
    if let Some(rest) = entry.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return PathBuf::from(home).join(rest);
    }
    base.join(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_installation_in_the_home_folder_lends_only_the_program() {
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
            return;
        };
        let cargo = home.join(".cargo/bin/kat");
        assert_eq!(installation_of(&cargo).unwrap(), cargo);
        let script = home.join("server.js");
        assert_eq!(installation_of(&script).unwrap(), script);
        let deep = home.join(".nvm/versions/node/v20/bin/node");
        assert_eq!(
            installation_of(&deep).unwrap(),
            home.join(".nvm/versions/node/v20")
        );
    }

    #[test]
    fn installations_are_the_prefix_a_program_came_with() {
        let of = |p: &str| installation_of(Path::new(p)).unwrap();
        assert_eq!(of("/opt/node/bin/node"), Path::new("/opt/node"));
        assert_eq!(of("/usr/bin/git"), Path::new("/usr"));
        assert_eq!(of("/bin/sh"), Path::new("/bin"));
        assert_eq!(
            of("/h/.cache/p/node_modules/@s/fs/node_modules/x/dist/index.js"),
            Path::new("/h/.cache/p")
        );
        assert_eq!(of("/srv/tool/run.py"), Path::new("/srv/tool"));
    }

    #[test]
    fn hosts_become_ports() {
        assert_eq!(NetworkAccess::for_hosts(&[]), NetworkAccess::None);
        assert_eq!(
            NetworkAccess::for_hosts(&["a.example".into(), "127.0.0.1:8080".into()]),
            NetworkAccess::Ports(vec![80, 443, 8080])
        );
    }
}
