//! One daemon per workspace: a lock file in the state folder, held with
//! `flock` while the daemon runs and naming its process.

use anyhow::{Context, Result, bail};
use std::path::Path;

/// The lock file that keeps a second daemon off a workspace.
pub const LOCK_FILE: &str = "daemon.lock";

/// Holds the workspace's daemon lock while alive.
pub struct DaemonLock {
    _file: std::fs::File,
}

impl DaemonLock {
    /// Takes the lock, or says which process holds it.
    pub fn acquire(state_dir: &Path) -> Result<Self> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(state_dir)
            .with_context(|| format!("cannot create {}", state_dir.display()))?;
        let path = state_dir.join(LOCK_FILE);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        // SAFETY: flock on a file descriptor we own; no memory is shared.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !locked {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            bail!(
                "another toolcell daemon (pid {}) is running for this workspace\n  fix: stop it first, or run this one for another workspace",
                holder.trim()
            );
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        Ok(Self { _file: file })
    }
}
