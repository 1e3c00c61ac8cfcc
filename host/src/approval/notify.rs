//! Telling a person that a call waits in the inbox: `[approvals]
//! on_waiting` runs once for each parked call.
//!
//! The program is the user's own, from a config they trusted; it is run
//! without a shell, as every program toolcell starts ([`crate::util::child`]):
//! a scrubbed environment, its own process group, ended with toolcell. It
//! learns of the call from its environment only:
//!
//! | variable | value |
//! |---|---|
//! | `TOOLCELL_CALL` | the parked call's id, for `toolcell approve ID` |
//! | `TOOLCELL_RUN` | the run it belongs to (empty for an MCP session's call) |
//! | `TOOLCELL_TOOL` | the tool's name |
//! | `TOOLCELL_PREVIEW` | what the terminal prompt would show (the call, the diff), escape sequences made visible |
//! | `TOOLCELL_EXPIRES` | when the wait runs out, RFC 3339 UTC |
//! | `TOOLCELL_WORKSPACE` | the workspace folder |
//!
//! plus what a desktop notifier needs to reach the session (`DISPLAY`,
//! `DBUS_SESSION_BUS_ADDRESS`, …). Whatever it does, the call waits on:
//! a program that cannot start, fails or hangs is logged (and a hung one
//! ended), never fatal.

use crate::config::WorkspaceConfig;
use crate::config::approvals::OnWaiting;
use crate::util::child;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// How long the program may take: a notifier returns at once; one that
/// hangs is ended so it does not pile up across parked calls.
const DEADLINE: Duration = Duration::from_secs(30);

/// The most of the preview passed in the environment, in characters: what
/// a notification can show, and at four bytes a character still under the
/// kernel's 128 KiB bound on one variable.
const MAX_PREVIEW_CHARS: usize = 16 * 1024;

/// What a desktop notifier needs to reach the user's session, beside
/// [`child::PASSED_ENV`]: where the display and the session bus are. They
/// locate the session and hold no secret.
const SESSION_ENV: &[&str] = &[
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
];

/// The most of the program's error output kept for the log, in characters.
const MAX_LOGGED_STDERR: usize = 2 * 1024;

/// One parked call, as the program is told of it.
pub struct Waiting<'a> {
    pub call: i64,
    pub run: Option<i64>,
    pub tool: &'a str,
    pub shown: &'a str,
    pub expires_at_ms: i64,
}

/// Runs `on_waiting` for parked calls.
#[derive(Debug, Clone)]
pub struct Notifier {
    on_waiting: OnWaiting,
    workspace: PathBuf,
    roots: Vec<PathBuf>,
}

impl Notifier {
    /// The workspace's notifier, if its config names one (and is trusted:
    /// an untrusted config has it removed at load).
    pub fn from_config(config: &WorkspaceConfig) -> Option<Self> {
        config.approvals.on_waiting.clone().map(|on_waiting| Self {
            on_waiting,
            workspace: config.workspace.clone(),
            roots: config.roots.iter().map(|r| r.path.clone()).collect(),
        })
    }

    /// Starts the program for `waiting` and returns at once; its end (or
    /// failure) is logged from a task of its own.
    pub fn tell(&self, waiting: &Waiting<'_>) {
        let program = match self.program() {
            Ok(program) => program,
            Err(why) => {
                tracing::warn!("approvals.on_waiting was not run: {why}");
                return;
            }
        };
        let shown = crate::util::text::for_terminal(waiting.shown);
        let shown = crate::util::text::shorten(&shown, MAX_PREVIEW_CHARS);
        let expires = jiff::Timestamp::from_millisecond(waiting.expires_at_ms)
            .map(|t| t.to_string())
            .unwrap_or_default();
        let mut command = child::command(&program, libc::SIGTERM);
        command
            .args(&self.on_waiting.args)
            .envs(
                SESSION_ENV
                    .iter()
                    .filter_map(|name| std::env::var_os(name).map(|v| (*name, v))),
            )
            .env("TOOLCELL_CALL", waiting.call.to_string())
            .env(
                "TOOLCELL_RUN",
                waiting.run.map(|r| r.to_string()).unwrap_or_default(),
            )
            .env("TOOLCELL_TOOL", waiting.tool)
            .env("TOOLCELL_PREVIEW", shown)
            .env("TOOLCELL_EXPIRES", expires)
            .env("TOOLCELL_WORKSPACE", &self.workspace)
            .current_dir(&self.workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let shown_program = self.on_waiting.command_line();
        let child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                tracing::warn!("approvals.on_waiting `{shown_program}` could not start: {e}");
                return;
            }
        };
        let Some(group) = child.id().and_then(|id| i32::try_from(id).ok()) else {
            return;
        };
        child::register_group(group);
        tokio::spawn(async move {
            let outcome = tokio::time::timeout(DEADLINE, child.wait_with_output()).await;
            child::end_group(group, libc::SIGKILL);
            match outcome {
                Err(_) => tracing::warn!(
                    "approvals.on_waiting `{shown_program}` took over {}s and was ended",
                    DEADLINE.as_secs()
                ),
                Ok(Err(e)) => {
                    tracing::warn!("approvals.on_waiting `{shown_program}` failed: {e}")
                }
                Ok(Ok(output)) if !output.status.success() => {
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    let stderr = crate::util::text::shorten(stderr.trim(), MAX_LOGGED_STDERR);
                    tracing::warn!(
                        "approvals.on_waiting `{shown_program}` ended with {}: {}",
                        output.status,
                        crate::util::text::for_terminal(&stderr)
                    );
                }
                Ok(Ok(_)) => {}
            }
        });
    }

    /// The program to run: a path as given; a bare name where PATH finds
    /// it outside every root (a tool that may write the workspace could
    /// otherwise plant one of that name there).
    fn program(&self) -> Result<PathBuf, String> {
        let program = &self.on_waiting.program;
        child::program_to_start(program, &self.roots).ok_or_else(|| {
            format!(
                "no program `{}` is on PATH outside the workspace; install it, or give its full path",
                program.display()
            )
        })
    }
}
