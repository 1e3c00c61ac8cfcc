//! One external MCP server: its session, and the process toolcell started
//! for it (confined, in its own process group, stopped with its group) or
//! the URL it is reached at over Streamable HTTP ([`super::http`]); started
//! again after a failure on the next call.

use super::result::{McpCallError, result_value};
use super::stdio::{Diagnostics, filter_stdout, keep_stderr};
use crate::config::mcp_server::McpServerConfig;
use crate::contain::{Confinement, Prepared};
use crate::util::child;
use anyhow::{Context, Result, anyhow};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::Value;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Buffer between the stdout filter and the SDK's reader.
const PIPE_BUFFER_BYTES: usize = 256 * 1024;

/// How long a server that broke off a call gets to be seen exiting, so the
/// error can say how it ended.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// The client side of a session: says who we are; asks nothing of the
/// server's requests (sampling, roots, elicitation are not offered).
pub(super) fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolcell", env!("CARGO_PKG_VERSION")),
    )
}

/// A session with a server.
pub(super) struct Live {
    session: RunningService<RoleClient, ClientConfig>,
    /// The process toolcell started for it; `None` for a server reached
    /// at a URL.
    process: Option<Process>,
    /// What the process printed (nothing for a server reached at a URL).
    diagnostics: Arc<Mutex<Diagnostics>>,
}

/// A server process toolcell started.
struct Process {
    /// Its process group (the server and anything it started, such as the
    /// Node process under `npx`).
    group: i32,
    /// Its confinement's private temporary folder lives as long as it runs.
    _confined: Option<Prepared>,
    /// toolcell's files kept read-only for it, and which file each was
    /// when it started (see [`identity`]).
    kept: Vec<(std::path::PathBuf, Option<(u64, u64)>)>,
}

/// The device and inode of what is at `path` (not following a link).
/// Each of toolcell's files is kept read-only for a server by a mount of
/// that very file, which the kernel drops when the file is replaced (an
/// editor saves by writing a new file and renaming it over the old): a
/// file that is another one now is no longer kept.
fn identity(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

impl Live {
    /// A session with a server reached at a URL.
    pub(super) fn remote(session: RunningService<RoleClient, ClientConfig>) -> Self {
        Self {
            session,
            process: None,
            diagnostics: Arc::default(),
        }
    }

    fn peer(&self) -> Peer<RoleClient> {
        self.session.peer().clone()
    }

    fn diagnostics(&self) -> String {
        self.diagnostics
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .describe()
    }

    /// ` (exit status: 3); its stderr ends: …`, for a server that died.
    fn death(&self) -> String {
        let d = self.diagnostics.lock().unwrap_or_else(|p| p.into_inner());
        let exit = match d.exit.as_deref().and_then(|e| e.strip_prefix("exited ")) {
            Some(status) => format!(" {status}"),
            None => String::new(),
        };
        format!("{exit}{}", d.describe_output())
    }

    /// Whether each of toolcell's files is still the one kept read-only
    /// for the server when it started.
    fn keeps_hold(&self) -> bool {
        self.process.as_ref().is_none_or(|process| {
            process
                .kept
                .iter()
                .all(|(path, was)| identity(path) == *was)
        })
    }

    fn has_exited(&self) -> bool {
        self.session.is_closed()
            || self
                .diagnostics
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .exit
                .is_some()
    }

    /// Ends the session: the server's whole process group, at once, or
    /// the HTTP session (its transport then tells the server).
    fn kill(&self) {
        self.end(libc::SIGKILL);
    }

    /// Ends the session, signalling a started server's group with `signal`.
    fn end(&self, signal: i32) {
        match &self.process {
            Some(process) => child::end_group(process.group, signal),
            None => self.session.cancellation_token().cancel(),
        }
    }

    /// Waits (at most [`EXIT_WAIT`]) for the exit watcher to see the
    /// server gone; says whether it did.
    async fn exited_within_wait(&self) -> bool {
        let until = Instant::now() + EXIT_WAIT;
        loop {
            let exited = self
                .diagnostics
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .exit
                .is_some();
            if exited || Instant::now() >= until {
                return exited;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// One configured server: started on first need, restarted after it failed.
pub(super) struct Connection {
    pub(super) config: McpServerConfig,
    /// What it runs confined to; `None` for `sandbox = "none"`.
    confinement: Option<Confinement>,
    /// The workspace's roots: a bare command is never found in one.
    roots: Vec<std::path::PathBuf>,
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
}

impl Connection {
    pub(super) fn new(
        config: McpServerConfig,
        confinement: Option<Confinement>,
        roots: Vec<std::path::PathBuf>,
    ) -> Self {
        Self {
            config,
            confinement,
            roots,
            live: tokio::sync::Mutex::new(None),
        }
    }

    /// The program to start: a command given as a path as it is; a bare
    /// name where PATH finds it, among PATH's absolute folders outside
    /// every root (a program that may write the workspace could otherwise
    /// plant a `node` or `npx` of its own there, or in `.venv/bin`).
    fn program(&self) -> Result<std::path::PathBuf> {
        let command = &self.config.command;
        child::program_to_start(command, &self.roots).ok_or_else(|| {
            anyhow!(
                "cannot start `{}`: no program of that name is on PATH outside the workspace\n  fix: install it, or give its full path as `command` in [[mcp_server]] `{}` ({})",
                command.display(),
                self.config.name,
                self.config.at
            )
        })
    }

    /// The confinement of this start, with what the server is installed
    /// with: its program (where PATH finds it, and where that leads) and the
    /// script it is given.
    fn prepare(&self, found: &std::path::Path) -> Result<Option<Prepared>> {
        let Some(confinement) = &self.confinement else {
            return Ok(None);
        };
        let config = &self.config;
        let mut confinement = confinement.clone();
        let found = Some(found.to_path_buf());
        let real = found.as_deref().and_then(|p| p.canonicalize().ok());
        let script = config.script();
        confinement.read.extend(
            found
                .iter()
                .chain(real.iter())
                .chain(script.iter())
                .filter_map(|p| crate::contain::installation_of(p)),
        );
        confinement.read.push(config.cwd.clone());
        let what = format!(
            "the MCP server `{}` ({})",
            config.name,
            crate::util::text::for_terminal_line(&config.command_line())
        );
        let prepared = confinement
            .prepare(&what, &format!("in its [[mcp_server]] ({})", config.at))
            .map_err(|e| anyhow!(e.0))?;
        if let Ok(cwd) = config.cwd.canonicalize()
            && confinement.keeps_read_only(&cwd)
        {
            return Err(anyhow!(
                "{what} was not started: its working folder {} is one of toolcell's own, which it may not change\n  fix: give it another `cwd` in its [[mcp_server]] ({})",
                cwd.display(),
                config.at
            ));
        }
        Ok(Some(prepared))
    }

    /// Starts the server if needed and lists its tools, all within its
    /// `startup_timeout`.
    pub(super) async fn list_tools(&self) -> Result<Vec<Tool>, String> {
        let startup = self.config.startup_timeout;
        let deadline = Instant::now() + startup;
        let live = self.live(deadline).await.map_err(|e| format!("{e:#}"))?;
        match tokio::time::timeout_at(deadline, live.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => {
                self.discard(&live).await;
                Err(format!(
                    "listing its tools failed: {}{}",
                    crate::util::text::for_terminal_line(&e.to_string()),
                    live.diagnostics()
                ))
            }
            Err(_) => {
                self.discard(&live).await;
                Err(format!(
                    "it did not list its tools within {}{}",
                    crate::util::text::human_duration(startup),
                    live.diagnostics()
                ))
            }
        }
    }

    /// One call, within `timeout`.
    pub(super) async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, McpCallError> {
        let live = self
            .live(Instant::now() + self.config.startup_timeout)
            .await
            .map_err(|e| McpCallError::Server(format!("{e:#}")))?;
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let peer = live.peer();
        match tokio::time::timeout(timeout, peer.call_tool(params)).await {
            Ok(Ok(result)) => result_value(&result),
            // An error answer: the server is fine, the call was not.
            Ok(Err(rmcp::ServiceError::McpError(error))) => Err(McpCallError::Tool(format!(
                "the MCP server `{}` refused the call: {} (code {})",
                self.config.name,
                crate::util::text::for_terminal_line(&error.message),
                error.code.0
            ))),
            Ok(Err(e)) => {
                let gone = live.process.is_some() && live.exited_within_wait().await;
                self.discard(&live).await;
                let what = if gone {
                    format!("exited during the call{}", live.death())
                } else if let rmcp::ServiceError::TransportSend(sent) = &e
                    && live.process.is_none()
                {
                    format!(
                        "broke off the call ({})",
                        super::http::transport_failure(sent.error.as_ref())
                    )
                } else {
                    format!("broke off the call ({e}){}", live.diagnostics())
                };
                Err(McpCallError::Server(format!(
                    "the MCP server `{}` {what}; it starts again on the next call",
                    self.config.name
                )))
            }
            Err(_) => {
                self.discard(&live).await;
                Err(McpCallError::Timeout {
                    after: timeout,
                    details: format!(
                        "the MCP server `{}` did not answer, so {}{}; it starts again on the next call (the limit is `timeout` under its [[mcp_server]] in toolcell.toml, or `timeout_ms` under [tools.\"{}\"])",
                        self.config.name,
                        if live.process.is_some() {
                            "it was stopped"
                        } else {
                            "its session was ended"
                        },
                        live.diagnostics(),
                        crate::util::names::function_name(&self.config.name, tool)
                    ),
                })
            }
        }
    }

    /// The running session, started (again) if there is none or it ended.
    /// Starting ends at `deadline`.
    async fn live(&self, deadline: Instant) -> Result<Arc<Live>> {
        let mut slot = self.live.lock().await;
        if let Some(live) = slot.as_ref() {
            let running = !live.has_exited();
            if running && live.keeps_hold() {
                return Ok(live.clone());
            }
            if running {
                // Its mounts no longer keep toolcell's files from it: a
                // new start keeps them as they are now.
                tracing::warn!(
                    "toolcell's own files changed while the MCP server `{}` ran: it is started again, so they stay read-only for it",
                    self.config.name
                );
            }
            // What it left behind in its group.
            live.kill();
        }
        let live = Arc::new(self.spawn(deadline).await?);
        *slot = Some(live.clone());
        Ok(live)
    }

    /// Stops `live` if it is still the current session.
    async fn discard(&self, live: &Arc<Live>) {
        live.kill();
        let mut slot = self.live.lock().await;
        if slot
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, live))
        {
            *slot = None;
        }
    }

    /// Signals the server's group, if one runs (the workspace is closing).
    /// Called from `Drop`, outside the runtime: a session being started
    /// right now holds the slot and is ended by the runtime's shutdown
    /// (`kill_on_drop`) and the death signal instead.
    pub(super) fn stop(&self) {
        if let Ok(slot) = self.live.try_lock()
            && let Some(live) = slot.as_ref()
        {
            live.end(libc::SIGTERM);
        }
    }

    /// Starts the session by `deadline`: the server's process, or a
    /// connection to its URL.
    async fn spawn(&self, deadline: Instant) -> Result<Live> {
        match &self.config.remote {
            Some(remote) => super::http::connect(&self.config, remote, deadline).await,
            None => self.start_process(deadline).await,
        }
    }

    /// Starts the process and initializes the session by `deadline`.
    async fn start_process(&self, deadline: Instant) -> Result<Live> {
        let config = &self.config;
        let program = self.program()?;
        let confined = self.prepare(&program)?;
        // Which files they are now, before the server can touch them.
        let kept = match (&confined, &self.confinement) {
            (Some(_), Some(confinement)) => confinement
                .read_only
                .iter()
                .map(|path| (path.clone(), identity(path)))
                .collect(),
            _ => Vec::new(),
        };
        let mut command = child::command(&program, libc::SIGTERM);
        command
            .arg0(&config.command)
            .args(&config.args)
            .current_dir(&config.cwd)
            .envs(
                config
                    .env_passed
                    .iter()
                    .filter_map(|name| std::env::var_os(name).map(|v| (name, v))),
            )
            .envs(&config.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(confined) = &confined {
            confined.apply(&mut command, &config.cwd);
        }
        let mut child = command.spawn().map_err(|e| {
            anyhow!(
                "cannot start `{}` ({e})\n  fix: install it, or give its full path as `command` in [[mcp_server]] `{}` ({})",
                config.command.display(),
                config.name,
                config.at
            )
        })?;
        let group = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .context("the server exited as it started")?;
        child::register_group(group);
        let diagnostics = Arc::new(Mutex::new(Diagnostics::default()));
        let (stdin, stdout, stderr) = (
            child.stdin.take().context("no stdin")?,
            child.stdout.take().context("no stdout")?,
            child.stderr.take().context("no stderr")?,
        );
        let (to_sdk, from_filter) = tokio::io::duplex(PIPE_BUFFER_BYTES);
        tokio::spawn(filter_stdout(stdout, to_sdk, diagnostics.clone()));
        tokio::spawn(keep_stderr(stderr, diagnostics.clone()));
        let watched = diagnostics.clone();
        tokio::spawn(async move {
            let exit = match child.wait().await {
                Ok(status) => format!("exited ({status})"),
                Err(e) => format!("could not be waited for ({e})"),
            };
            watched.lock().unwrap_or_else(|p| p.into_inner()).exit = Some(exit);
        });

        let describe = || {
            diagnostics
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .describe()
        };
        let kill = || child::end_group(group, libc::SIGKILL);
        let startup = config.startup_timeout;
        match tokio::time::timeout_at(deadline, client_config().serve((from_filter, stdin))).await {
            Ok(Ok(session)) => Ok(Live {
                session,
                process: Some(Process {
                    group,
                    _confined: confined,
                    kept,
                }),
                diagnostics,
            }),
            Ok(Err(e)) => {
                // Give the exit watcher a moment to record how it ended.
                tokio::time::sleep(Duration::from_millis(50)).await;
                kill();
                Err(anyhow!(
                    "the MCP session did not start ({e}){}\n  fix: check that `{}` starts an MCP server on stdio",
                    describe(),
                    config.command_line()
                ))
            }
            Err(_) => {
                kill();
                Err(anyhow!(
                    "it did not answer `initialize` within {}{}\n  fix: check that `{}` starts an MCP server on stdio, or raise `startup_timeout`",
                    crate::util::text::human_duration(startup),
                    describe(),
                    config.command_line()
                ))
            }
        }
    }
}
