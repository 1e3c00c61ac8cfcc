//! Programs toolcell starts on the user's behalf: MCP servers and the
//! programs a tool was granted (`process = [...]`).
//!
//! Each one is started the same way: a scrubbed environment
//! ([`PASSED_ENV`] plus what the caller adds), no terminal, a process group
//! of its own (so everything it starts is ended with it), and
//! `PR_SET_PDEATHSIG` so that a toolcell killed outright leaves nothing
//! behind. Live groups are registered, and [`stop_all`] ends them on the
//! way out of paths that exit without running destructors.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The variables a child inherits from toolcell's environment: what
/// programs need to find themselves and their caches (`npx`, `git`), and
/// nothing that could be a secret. Anything else is given explicitly.
pub const PASSED_ENV: &[&str] = &[
    "HOME", "PATH", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
    "TZ",
];

/// A program found to run: where it was found, and where that leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The path as found (on PATH, or as given), links not followed.
    pub path: PathBuf,
    /// Its real path: what runs.
    pub real: PathBuf,
}

/// The folders of PATH a program is looked up in, and passed on with: its
/// absolute entries that lie (really) outside every root — a tool or a
/// program that may write the workspace could otherwise plant a `git`, a
/// `node` or a `.venv/bin/python` of its own there.
pub fn search_path(roots: &[PathBuf]) -> Vec<PathBuf> {
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .filter(|dir| dir.is_absolute())
        .filter(|dir| dir.canonicalize().is_ok_and(|real| !inside(roots, &real)))
        .collect()
}

/// Finds `program` (an absolute path, or a name looked up on PATH) as an
/// executable file neither in a folder inside `roots` nor leading into one.
/// Without one, the candidates skipped for lying inside the roots.
pub fn find_outside(program: &Path, roots: &[PathBuf]) -> Result<Found, Vec<PathBuf>> {
    let candidates: Vec<PathBuf> = if program.is_absolute() {
        vec![program.to_path_buf()]
    } else {
        let path_var = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path_var)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(program))
            .collect()
    };
    let mut skipped = Vec::new();
    for candidate in candidates {
        if !is_executable(&candidate) {
            continue;
        }
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        let folder_inside = candidate
            .parent()
            .and_then(|dir| dir.canonicalize().ok())
            .is_none_or(|dir| inside(roots, &dir));
        if folder_inside || inside(roots, &real) {
            skipped.push(candidate);
            continue;
        }
        return Ok(Found {
            path: candidate,
            real,
        });
    }
    Err(skipped)
}

/// The program to start for `program` as a config names it: a path (it has
/// a slash) as it is; a bare name where PATH finds it outside every root
/// ([`find_outside`]), else `None`.
pub fn program_to_start(program: &Path, roots: &[PathBuf]) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return Some(program.to_path_buf());
    }
    find_outside(program, roots).ok().map(|found| found.path)
}

fn inside(roots: &[PathBuf], real: &Path) -> bool {
    roots.iter().any(|root| real.starts_with(root))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The process groups of every child running in this process.
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// A command for `program` with the scrubbed environment, its own process
/// group, killed when dropped, and sent `death_signal` when toolcell dies
/// (SIGTERM lets a server shut down; SIGKILL cannot be ignored). The caller
/// sets arguments, directory and pipes.
pub fn command(program: impl AsRef<OsStr>, death_signal: i32) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command
        .env_clear()
        .envs(
            PASSED_ENV
                .iter()
                .filter_map(|name| std::env::var_os(name).map(|value| (name.to_string(), value))),
        )
        .process_group(0)
        .kill_on_drop(true);
    // SAFETY: the closure runs in the child between fork and exec and only
    // makes system calls (prctl(2), close_range(2), fcntl(2)), which are
    // async-signal-safe. The child gets the signal if the thread that
    // started it ends, so a toolcell killed outright leaves no child behind
    // (its own children it must end itself).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, death_signal) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            close_inherited_on_exec();
            Ok(())
        });
    }
    command
}

/// The highest descriptor marked by hand where `close_range` is missing
/// (before Linux 5.11): far above any a process is left with by a shell.
const HIGHEST_INHERITED_FD: i32 = 65_535;

/// Marks every descriptor above standard error close-on-exec, in the child
/// before it runs the program: what toolcell was started with (a shell's
/// `7>>file`, a lock, a client's pipe) is not the program's to read or
/// write, whatever confines it. Standard input, output and error are set
/// by then.
fn close_inherited_on_exec() {
    // SAFETY: system calls on the child's own descriptor table.
    unsafe {
        let marked = libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        );
        if marked == 0 {
            return;
        }
        for fd in 3..=HIGHEST_INHERITED_FD {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// Records `group` (a started child's pid, which leads its group) as live.
pub fn register_group(group: i32) {
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(group);
}

/// Ends process group `group` with `signal`: it is no longer live.
pub fn end_group(group: i32, signal: i32) {
    LIVE_GROUPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&group);
    signal_group(group, signal);
}

/// Signals every child group this process started (SIGTERM). For exits that
/// skip destructors; children also get SIGTERM if toolcell dies without
/// calling this (`PR_SET_PDEATHSIG`).
pub fn stop_all() {
    let groups = std::mem::take(&mut *LIVE_GROUPS.lock().unwrap_or_else(|p| p.into_inner()));
    for group in groups {
        signal_group(group, libc::SIGTERM);
    }
}

/// Sends `signal` to process group `group` (it stays live).
pub fn signal_group(group: i32, signal: i32) {
    // SAFETY: kill(2) with a negative pid signals the process group the
    // child leads; it reads no memory.
    unsafe {
        libc::kill(-group, signal);
    }
}
