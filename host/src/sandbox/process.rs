//! Programs a cell may run: the host side of `toolcell:tool/process`.
//!
//! Linked for every tool and refused unless granted: the program must be
//! one the tool's grant names (its manifest asked for it and the user's
//! config allows it), the working directory must lie inside a root, and it
//! runs with a scrubbed environment, no stdin, in a process group of its own
//! ([`crate::util::child`]) that is killed at the timeout or when the call ends,
//! whichever comes first. Never a shell: a program and its argument list.
//!
//! The program is confined to the tool's grant ([`crate::contain`]): it
//! reads the roots, the system and its own installation, writes only the
//! writable roots and a private temporary folder, and reaches the network
//! only as granted — unless the config says `sandbox = "none"`. Every call
//! of a tool with this capability is still approved by the user, and a
//! program is never found by name inside a root (a tool could have written
//! it there).

use super::bindings::toolcell::tool::process::{Ending, Host, RunOutput, RunRefusal, RunRequest};
use super::process_policy::{ProcessPolicy, Resolved};
use crate::util::child;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};

/// Output kept of each stream (stdout, stderr): a long build log's worth,
/// its start and its end; the tool decides how much of it a model sees.
pub const MAX_STREAM_BYTES: usize = 1024 * 1024;
/// Time kept back from the tool's own limit when a program is killed at the
/// timeout, so the tool can still report what it printed.
const REPORT_MARGIN: Duration = Duration::from_millis(500);
/// How long a program killed at its timeout gets between SIGTERM and
/// SIGKILL to clean up after itself.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// How long output is still read after the program exited, when something
/// it started in the background keeps its pipes open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);

impl ProcessPolicy {
    /// Runs `cmd` if it is granted, killing it at its timeout.
    pub async fn run(&self, cmd: RunRequest) -> Result<RunOutput, RunRefusal> {
        let Resolved {
            program,
            found,
            cwd,
        } = self.resolve(&cmd.program, &cmd.cwd)?;
        // Confined: to the grant, plus what the program was installed with.
        let prepared = match self.confined_to.as_ref().and_then(|g| g.confinement()) {
            None => None,
            Some(mut confinement) => {
                confinement.read.extend(
                    [&found, &program]
                        .into_iter()
                        .filter_map(|p| crate::contain::installation_of(p)),
                );
                let what = format!("`{}`", cmd.program.escape_debug());
                let prepared = confinement
                    .prepare(&what, &format!("under [tools.{}]", self.tool))
                    .map_err(|e| RunRefusal::Denied(e.0))?;
                if confinement.keeps_read_only(&cwd) {
                    return Err(RunRefusal::Denied(format!(
                        "the working directory `{}` is toolcell's own, which programs may not change: `{}` was not run\n  fix: run it in another folder of the workspace",
                        cmd.cwd.escape_debug(),
                        cmd.program.escape_debug()
                    )));
                }
                Some(prepared)
            }
        };
        let left = self
            .deadline
            .saturating_duration_since(Instant::now())
            .saturating_sub(REPORT_MARGIN + STOP_GRACE);
        if left.is_zero() {
            return Err(RunRefusal::Failed(format!(
                "no time is left of the tool's own time limit to run a program\n  fix: the user can raise it: [tools.{}] timeout_ms",
                self.tool
            )));
        }
        let limit = match cmd.timeout_ms {
            None => left,
            Some(0) => {
                return Err(RunRefusal::Failed(format!(
                    "a timeout of 0 ms leaves `{}` no time to run\n  fix: give none for the tool's own limit, or a number of milliseconds",
                    cmd.program.escape_debug()
                )));
            }
            Some(ms) => Duration::from_millis(ms.into()).min(left),
        };

        let started = Instant::now();
        let mut command = child::command(&program, libc::SIGKILL);
        command
            .arg0(&cmd.program)
            .env(
                "PATH",
                std::env::join_paths(child::search_path(&self.root_paths())).unwrap_or_default(),
            )
            .args(&cmd.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The folder checked is the folder entered: it is opened here with
        // no link followed (none was there when it was checked), and the
        // child enters it by descriptor, so swapping a folder on the way
        // for a link in between is refused, not followed.
        let folder = match open_without_links(&cwd) {
            Ok(folder) => Some(folder),
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                command.current_dir(&cwd); // a kernel without openat2 (before 5.6)
                None
            }
            Err(e) => {
                return Err(RunRefusal::Denied(format!(
                    "the working directory `{}` changed while it was checked ({e})",
                    cmd.cwd.escape_debug()
                )));
            }
        };
        if let Some(folder) = &folder {
            let fd = folder.as_raw_fd();
            // SAFETY: runs in the child between fork and exec; fchdir(2) is
            // async-signal-safe, and `folder` outlives the spawn below.
            unsafe {
                command.pre_exec(move || {
                    if libc::fchdir(fd) == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        if let Some(prepared) = &prepared {
            prepared.apply(&mut command, &cwd);
        }
        let spawned = command.spawn();
        drop(folder);
        let mut running = spawned.map_err(|e| {
            RunRefusal::Failed(format!("`{}` could not be started: {e}", cmd.program))
        })?;
        let group = running.id().and_then(|pid| i32::try_from(pid).ok());
        if let Some(group) = group {
            child::register_group(group);
        }
        // Whatever happens next (the call is dropped at its deadline, the
        // program exits and leaves children behind), the group ends here.
        let _group = GroupGuard(group);
        let (stdout, stderr) = (running.stdout.take(), running.stderr.take());
        let mut out = CappedBuffer::default();
        let mut err = CappedBuffer::default();
        let finished = tokio::time::timeout(limit, async {
            let mut drains = std::pin::pin!(async {
                tokio::join!(out.drain(stdout), err.drain(stderr));
            });
            let mut drained = false;
            let status = loop {
                tokio::select! {
                    status = running.wait() => break status,
                    () = &mut drains, if !drained => drained = true,
                }
            };
            // Something it left running in the background may hold the
            // pipes open: what it printed by now is kept, the rest is not
            // waited for (the group is ended below).
            if !drained {
                let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, &mut drains).await;
            }
            status
        })
        .await;
        let (status, timed_out) = match finished {
            Ok(Ok(status)) => (Some(status), false),
            Ok(Err(e)) => {
                return Err(RunRefusal::Failed(format!(
                    "waiting for `{}` failed: {e}",
                    cmd.program
                )));
            }
            Err(_elapsed) => {
                // SIGTERM first, so a program can clean up (git removes its
                // index.lock); SIGKILL for the group if it lingers.
                if let Some(group) = group {
                    child::signal_group(group, libc::SIGTERM);
                }
                let status = match tokio::time::timeout(STOP_GRACE, running.wait()).await {
                    Ok(status) => status.ok(),
                    Err(_) => {
                        if let Some(group) = group {
                            child::end_group(group, libc::SIGKILL);
                        }
                        running.wait().await.ok()
                    }
                };
                (status, true)
            }
        };
        // None: the wait gave no status after the program was stopped.
        let ended = status.and_then(|s| match (s.code(), s.signal()) {
            (Some(code), _) => Some(Ending::Exited(code)),
            (None, Some(signal)) => Some(Ending::Killed(signal)),
            (None, None) => None,
        });
        Ok(RunOutput {
            ended,
            truncated: out.truncated() || err.truncated(),
            stdout: out.text(),
            stderr: err.text(),
            timed_out,
            duration_ms: started.elapsed().as_millis() as u64,
        })
    }
}

impl Host for super::cell::CellState {
    async fn run(&mut self, request: RunRequest) -> Result<RunOutput, RunRefusal> {
        self.process.run(request).await
    }
}

/// Kills a program's process group when dropped.
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0 {
            child::end_group(group, libc::SIGKILL);
        }
    }
}

/// One output stream, kept up to [`MAX_STREAM_BYTES`]: its first and last
/// halves (where a log's useful lines are); the middle is read and dropped,
/// so the program never blocks on a full pipe.
#[derive(Default)]
struct CappedBuffer {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    dropped: u64,
}

impl CappedBuffer {
    const HALF: usize = MAX_STREAM_BYTES / 2;

    async fn drain(&mut self, stream: Option<impl AsyncRead + Unpin>) {
        let Some(mut stream) = stream else { return };
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => self.push(&chunk[..n]),
            }
        }
    }

    fn push(&mut self, mut bytes: &[u8]) {
        let room = Self::HALF - self.head.len();
        let to_head = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..to_head]);
        bytes = &bytes[to_head..];
        self.tail.extend(bytes);
        if self.tail.len() > Self::HALF {
            let over = self.tail.len() - Self::HALF;
            self.tail.drain(..over);
            self.dropped += over as u64;
        }
    }

    fn truncated(&self) -> bool {
        self.dropped > 0
    }

    /// The text kept, with a marker where the middle was dropped; the cut
    /// never splits a character.
    fn text(&self) -> String {
        if !self.truncated() {
            return String::from_utf8_lossy(&self.head).into_owned();
        }
        let head = match std::str::from_utf8(&self.head) {
            // A character cut at the end: keep what precedes it.
            Err(e) if e.error_len().is_none() => &self.head[..e.valid_up_to()],
            _ => &self.head[..],
        };
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        // A character cut at the start: its continuation bytes go.
        let start = tail
            .iter()
            .take(3)
            .take_while(|&&b| b & 0b1100_0000 == 0b1000_0000)
            .count();
        let mut text = String::from_utf8_lossy(head).into_owned();
        text.push_str(&format!("\n[… {} bytes left out …]\n", self.dropped));
        text.push_str(&String::from_utf8_lossy(&tail[start..]));
        text
    }
}

/// Opens folder `path` (an `O_PATH` descriptor) with `openat2`, refusing
/// any symbolic link on the way.
fn open_without_links(path: &Path) -> std::io::Result<OwnedFd> {
    crate::util::openat::openat2(
        libc::AT_FDCWD,
        path,
        libc::O_PATH | libc::O_DIRECTORY,
        libc::RESOLVE_NO_SYMLINKS,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_entered_only_by_a_path_without_links() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = real.with_file_name("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(open_without_links(&real).is_ok());
        let refused = open_without_links(&link.join(".")).unwrap_err();
        assert!(
            refused.raw_os_error() == Some(libc::ELOOP)
                || refused.raw_os_error() == Some(libc::ENOSYS),
            "{refused}"
        );
    }

    #[test]
    fn a_capped_stream_keeps_its_start_and_end_and_never_splits_a_character() {
        let mut buffer = CappedBuffer::default();
        buffer.push(b"start ");
        // 'é' is two bytes: the head and the tail each end up cutting one.
        buffer.push("é".repeat(MAX_STREAM_BYTES).as_bytes());
        buffer.push(b" end");
        assert!(buffer.truncated());
        let text = buffer.text();
        assert!(
            text.starts_with("start é") && text.ends_with("é end"),
            "{}",
            &text[..20]
        );
        assert!(!text.contains('\u{fffd}'));
        assert!(text.contains(" bytes left out …]"));
        assert!(text.len() <= MAX_STREAM_BYTES + 64);
    }

    fn policy_over(dir: &std::path::Path) -> ProcessPolicy {
        let root = crate::registry::grant::Preopen {
            host: dir.canonicalize().unwrap(),
            guest: ".".into(),
            writable: true,
        };
        let mut policy = ProcessPolicy::new("run_command", vec!["true".into()], vec![root]);
        policy.start_clock(Instant::now() + Duration::from_secs(30));
        policy
    }

    fn request(timeout_ms: Option<u32>) -> RunRequest {
        RunRequest {
            program: "true".into(),
            args: Vec::new(),
            cwd: ".".into(),
            timeout_ms,
        }
    }

    #[tokio::test]
    async fn a_run_ends_as_a_variant_and_a_zero_timeout_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let policy = policy_over(dir.path());
        let ran = policy.run(request(None)).await.unwrap();
        assert!(
            matches!(ran.ended, Some(Ending::Exited(0))),
            "{:?}",
            ran.ended
        );
        assert!(!ran.timed_out);
        let refused = policy.run(request(Some(0))).await.unwrap_err();
        assert!(
            matches!(&refused, RunRefusal::Failed(why) if why.contains("a timeout of 0 ms")),
            "{refused:?}"
        );
    }
}
