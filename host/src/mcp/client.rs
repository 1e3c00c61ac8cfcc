//! External MCP servers (`[[mcp_server]]`) as a source of tools, over stdio
//! with the official Rust SDK (`rmcp`).
//!
//! Each server is a child process in its own process group, started with a
//! scrubbed environment ([`child::PASSED_ENV`] plus the config's `env`). At the
//! start of a run every enabled server is started, initialized and asked
//! for its tools, all in parallel and within its `startup_timeout`; a
//! server that fails is reported and its tools are missing from that run,
//! the rest go on.
//!
//! The connections live on a runtime of their own ([`McpServers`]), so a
//! call can come from any runtime or thread (the agent's, a workflow's, the
//! daemon's). A call that outlives the server's `timeout`, or finds the
//! server gone, is an error for the model, never a hang: the server is
//! stopped (its whole process group) and started again on the next call.
//! Lines on the server's stdout that are not JSON-RPC messages are dropped
//! and remembered, as is the tail of its stderr, so an error can say what
//! the server printed.

use super::config::McpServerConfig;
use crate::child;
use crate::config::Root;
use crate::contain::{Confinement, Prepared};
use crate::policy::PolicyFiles;
use anyhow::{Context, Result, anyhow};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::time::Instant;

/// The largest message accepted from a server: the SDK's own limit. A
/// longer line is dropped (and reported) instead of filling memory.
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Lines of a server's stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 12;
/// Characters kept of one stray line, for error messages.
const LINE_SHOWN_CHARS: usize = 200;
/// Buffer between the stdout filter and the SDK's reader.
const PIPE_BUFFER_BYTES: usize = 256 * 1024;

/// How long a server that broke off a call gets to be seen exiting, so the
/// error can say how it ended.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Why a call of an external tool produced no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpCallError {
    /// The tool answered with `isError`.
    #[error("failed: {0}")]
    Tool(String),
    /// The server did not answer within the call timeout.
    #[error("timed out after {}: {details}", crate::agent::view::human_duration(*.after))]
    Timeout { after: Duration, details: String },
    /// The server could not be started, died, or broke the protocol.
    #[error("failed: {0}")]
    Server(String),
    /// The result is over the tool's output limit.
    #[error("{0}")]
    TooLarge(String),
}

impl McpCallError {
    pub fn kind(&self) -> &'static str {
        match self {
            McpCallError::Tool(_) => "failed",
            McpCallError::Timeout { .. } => "timeout",
            McpCallError::Server(_) => "server-failed",
            McpCallError::TooLarge(_) => "output-too-large",
        }
    }
}

/// The servers of one workspace, each started at most once at a time.
pub struct McpServers {
    runtime: Option<tokio::runtime::Runtime>,
    servers: BTreeMap<String, Arc<Connection>>,
}

/// What starting one server gave.
pub struct Started {
    pub server: McpServerConfig,
    pub tools: Result<Vec<Tool>, String>,
}

impl McpServers {
    /// Starts every enabled server in `configs` and lists its tools,
    /// blocking until each has answered or failed (at most the longest
    /// `startup_timeout`).
    pub fn start(
        configs: &[McpServerConfig],
        roots: &[Root],
        policy: &PolicyFiles,
    ) -> Result<(Self, Vec<Started>)> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolcell-mcp")
            .enable_all()
            .build()
            .context("cannot start the MCP client runtime")?;
        let servers: BTreeMap<String, Arc<Connection>> = configs
            .iter()
            .filter(|c| c.enabled)
            .map(|c| {
                let connection = Connection::new(
                    c.clone(),
                    c.confinement(roots, policy),
                    roots.iter().map(|r| r.path.clone()).collect(),
                );
                (c.name.clone(), Arc::new(connection))
            })
            .collect();
        let (tx, rx) = std::sync::mpsc::channel();
        for connection in servers.values() {
            let (connection, tx) = (connection.clone(), tx.clone());
            runtime.spawn(async move {
                let tools = connection.list_tools().await;
                let _ = tx.send(Started {
                    server: connection.config.clone(),
                    tools,
                });
            });
        }
        drop(tx);
        let mut started: Vec<Started> = rx.iter().collect();
        started.sort_by(|a, b| a.server.name.cmp(&b.server.name));
        Ok((
            Self {
                runtime: Some(runtime),
                servers,
            },
            started,
        ))
    }

    /// Calls `tool` (its name on the server) of `server` with `arguments`,
    /// waiting at most `timeout`; gives the result as JSON (see
    /// [`result_value`]).
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, McpCallError> {
        let Some(connection) = self.servers.get(server).cloned() else {
            return Err(McpCallError::Server(format!(
                "the MCP server `{server}` is not configured"
            )));
        };
        let Some(runtime) = &self.runtime else {
            return Err(McpCallError::Server("the MCP client has stopped".into()));
        };
        let tool = tool.to_string();
        let mut task = AbortOnDrop(
            runtime.spawn(async move { connection.call(&tool, arguments, timeout).await }),
        );
        match (&mut task.0).await {
            Ok(result) => result,
            Err(e) => Err(McpCallError::Server(format!("the call was lost: {e}"))),
        }
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        for connection in self.servers.values() {
            connection.stop();
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Aborts a spawned call when its caller stops waiting (a cancelled run):
/// the SDK then tells the server the request is cancelled.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The client side of a session: says who we are; asks nothing of the
/// server's requests (sampling, roots, elicitation are not offered).
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolcell", env!("CARGO_PKG_VERSION")),
    )
}

/// What a server printed besides protocol messages, and how it ended.
#[derive(Default)]
struct Diagnostics {
    stderr: VecDeque<String>,
    stray_lines: usize,
    last_stray: Option<String>,
    exit: Option<String>,
}

impl Diagnostics {
    /// `; it exited (…); it wrote …; its stderr ends: …` for error messages.
    fn describe(&self) -> String {
        let mut text = String::new();
        if let Some(exit) = &self.exit {
            text.push_str(&format!("; it {exit}"));
        }
        text.push_str(&self.describe_output());
        text
    }

    /// What it printed: stray stdout lines and the end of its stderr.
    fn describe_output(&self) -> String {
        let mut text = String::new();
        if let Some(line) = &self.last_stray {
            text.push_str(&format!(
                "; it wrote {} line(s) on stdout that are not MCP messages, the last: `{line}`",
                self.stray_lines
            ));
        }
        if !self.stderr.is_empty() {
            let lines: Vec<&str> = self.stderr.iter().map(String::as_str).collect();
            text.push_str(&format!("; its stderr ends: {}", lines.join(" | ")));
        }
        text
    }
}

/// A started server process with its session.
struct Live {
    session: RunningService<RoleClient, ClientConfig>,
    /// Its process group (the server and anything it started, such as the
    /// Node process under `npx`).
    group: i32,
    diagnostics: Arc<Mutex<Diagnostics>>,
    /// Its confinement's private temporary folder lives as long as it runs.
    _confined: Option<Prepared>,
}

impl Live {
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

    fn has_exited(&self) -> bool {
        self.session.is_closed()
            || self
                .diagnostics
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .exit
                .is_some()
    }

    /// Ends the server: its whole process group, at once.
    fn kill(&self) {
        child::end_group(self.group, libc::SIGKILL);
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
struct Connection {
    config: McpServerConfig,
    /// What it runs confined to; `None` for `sandbox = "none"`.
    confinement: Option<Confinement>,
    /// The workspace's roots: a bare command is never found in one.
    roots: Vec<std::path::PathBuf>,
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
}

impl Connection {
    fn new(
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
        if command.components().count() > 1 {
            return Ok(command.clone());
        }
        child::find_outside(command, &self.roots)
            .map(|found| found.path)
            .map_err(|_| {
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
            crate::text::for_terminal_line(&config.command_line())
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
    async fn list_tools(&self) -> Result<Vec<Tool>, String> {
        let startup = self.config.startup_timeout;
        let deadline = Instant::now() + startup;
        let live = self.live(deadline).await.map_err(|e| format!("{e:#}"))?;
        match tokio::time::timeout_at(deadline, live.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => {
                self.discard(&live).await;
                Err(format!(
                    "listing its tools failed: {e}{}",
                    live.diagnostics()
                ))
            }
            Err(_) => {
                self.discard(&live).await;
                Err(format!(
                    "it did not list its tools within {}{}",
                    crate::agent::view::human_duration(startup),
                    live.diagnostics()
                ))
            }
        }
    }

    /// One call, within `timeout`.
    async fn call(
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
                self.config.name, error.message, error.code.0
            ))),
            Ok(Err(e)) => {
                let gone = live.exited_within_wait().await;
                self.discard(&live).await;
                let what = if gone {
                    format!("exited during the call{}", live.death())
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
                        "the MCP server `{}` did not answer, so it was stopped{}; it starts again on the next call (the limit is `timeout` under its [[mcp_server]] in toolcell.toml, or `timeout_ms` under [tools.\"{}\"])",
                        self.config.name,
                        live.diagnostics(),
                        super::external::function_name(&self.config.name, tool)
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
            if !live.has_exited() {
                return Ok(live.clone());
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
    fn stop(&self) {
        if let Ok(slot) = self.live.try_lock()
            && let Some(live) = slot.as_ref()
        {
            child::end_group(live.group, libc::SIGTERM);
        }
    }

    /// Starts the process and initializes the session by `deadline`.
    async fn spawn(&self, deadline: Instant) -> Result<Live> {
        let config = &self.config;
        let program = self.program()?;
        let confined = self.prepare(&program)?;
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
                group,
                diagnostics,
                _confined: confined,
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
                    crate::agent::view::human_duration(startup),
                    describe(),
                    config.command_line()
                ))
            }
        }
    }
}

/// Passes the server's stdout on to the SDK line by line, dropping (and
/// remembering) lines that are not JSON objects: a log line printed to the
/// wrong stream must not end the session. A line over
/// [`MAX_MESSAGE_BYTES`] is skipped to its end, not kept in memory.
async fn filter_stdout(
    stdout: tokio::process::ChildStdout,
    mut to_sdk: tokio::io::DuplexStream,
    diagnostics: Arc<Mutex<Diagnostics>>,
) {
    let mut lines = CappedLines::new(stdout, MAX_MESSAGE_BYTES);
    while let Some((line, cut)) = lines.next().await {
        let stray = if cut {
            Some(format!("(a line over {MAX_MESSAGE_BYTES} bytes)"))
        } else {
            let text = String::from_utf8_lossy(line);
            if is_json_object(&text) {
                let sent = async {
                    to_sdk.write_all(line).await?;
                    to_sdk.write_all(b"\n").await
                };
                if sent.await.is_err() {
                    return;
                }
                None
            } else if text.trim().is_empty() {
                None
            } else {
                Some(text.chars().take(LINE_SHOWN_CHARS).collect())
            }
        };
        if let Some(stray) = stray {
            tracing::debug!("MCP server stdout (not a message): {stray}");
            let mut d = diagnostics.lock().unwrap_or_else(|p| p.into_inner());
            d.stray_lines += 1;
            d.last_stray = Some(stray);
        }
    }
}

/// The lines of a stream, each kept up to `cap` bytes: what is past the
/// cap is read and dropped as it comes, so a line that never ends cannot
/// fill toolcell's memory.
struct CappedLines<R> {
    reader: tokio::io::BufReader<R>,
    cap: usize,
    line: Vec<u8>,
}

impl<R: tokio::io::AsyncRead + Unpin> CappedLines<R> {
    fn new(stream: R, cap: usize) -> Self {
        Self {
            reader: tokio::io::BufReader::new(stream),
            cap,
            line: Vec::new(),
        }
    }

    /// The next whole line, without its newline, as kept, and whether it
    /// was longer than the cap; `None` at the end of the stream.
    async fn next(&mut self) -> Option<(&[u8], bool)> {
        self.line.clear();
        let mut cut = false;
        loop {
            let chunk = match self.reader.fill_buf().await {
                Ok([]) | Err(_) => return None,
                Ok(chunk) => chunk,
            };
            let (part, ended) = match memchr::memchr(b'\n', chunk) {
                Some(at) => (&chunk[..at], true),
                None => (chunk, false),
            };
            let room = self.cap.saturating_sub(self.line.len());
            cut |= part.len() > room;
            self.line.extend_from_slice(&part[..part.len().min(room)]);
            let used = part.len() + usize::from(ended);
            self.reader.consume(used);
            if ended {
                return Some((&self.line, cut));
            }
        }
    }
}

/// Whether `line` is meant as a message: it opens a JSON object. Whether
/// it parses is the SDK's to judge (it ignores unparsable lines): parsing
/// every message twice would cost the most on the largest results.
fn is_json_object(line: &str) -> bool {
    line.trim_start().starts_with('{')
}

/// Keeps the last lines of the server's stderr, each cut to
/// [`LINE_SHOWN_CHARS`].
async fn keep_stderr(stderr: tokio::process::ChildStderr, diagnostics: Arc<Mutex<Diagnostics>>) {
    // Four bytes a character at most: enough for the characters shown.
    let mut lines = CappedLines::new(stderr, LINE_SHOWN_CHARS * 4);
    while let Some((line, _)) = lines.next().await {
        let text: String = String::from_utf8_lossy(line)
            .chars()
            .take(LINE_SHOWN_CHARS)
            .collect();
        tracing::debug!("MCP server stderr: {text}");
        let mut d = diagnostics.lock().unwrap_or_else(|p| p.into_inner());
        if d.stderr.len() == STDERR_TAIL_LINES {
            d.stderr.pop_front();
        }
        d.stderr.push_back(text);
    }
}

/// A tool result as JSON for the model or a script: the structured content
/// when the tool gave one, else its text; images, audio and binary
/// resources are described, not inlined. `isError` becomes an error.
pub fn result_value(result: &rmcp::model::CallToolResult) -> Result<Value, McpCallError> {
    let value = serde_json::to_value(result)
        .map_err(|e| McpCallError::Server(format!("its result cannot be read: {e}")))?;
    let text = value
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .map(describe_block)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    if result.is_error == Some(true) {
        return Err(McpCallError::Tool(if text.is_empty() {
            "the tool reported an error without a message".into()
        } else {
            text
        }));
    }
    Ok(match &result.structured_content {
        Some(structured) => structured.clone(),
        None => Value::String(text),
    })
}

/// One content block as text.
fn describe_block(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("");
    match field("type") {
        "text" => field("text").to_string(),
        "image" | "audio" => format!(
            "[{} {}, {} bytes of base64 not shown]",
            field("type"),
            field("mimeType"),
            field("data").len()
        ),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or_default();
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!("[resource {uri}: binary, not shown]"),
            }
        }
        "resource_link" => format!("[resource link {} ({})]", field("uri"), field("name")),
        other => format!("[{other} content not shown]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_never_ends_is_kept_only_up_to_its_cap() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (mut writer, reader) = tokio::io::duplex(64 * 1024);
            let writing = tokio::spawn(async move {
                writer
                    .write_all(&vec![b'x'; 4 * 1024 * 1024])
                    .await
                    .unwrap();
                writer.write_all(b"\nok\npartial").await.unwrap();
            });
            let mut lines = CappedLines::new(reader, 10);
            let (first, cut) = lines.next().await.unwrap();
            assert_eq!((first, cut), (&b"xxxxxxxxxx"[..], true));
            assert!(lines.line.capacity() < 1024 * 1024, "the rest was not kept");
            let (second, cut) = lines.next().await.unwrap();
            assert_eq!((second, cut), (&b"ok"[..], false));
            writing.await.unwrap();
            assert_eq!(lines.next().await, None, "an unended last line is dropped");
        });
    }
}
