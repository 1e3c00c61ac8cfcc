//! The steps of one tool call: registry → validation → policy and approval
//! → sandbox. [`Dispatcher`] holds what every call of a workspace shares
//! (the config, the registry, the sandbox, the MCP servers); its steps are
//! taken only by [`super::runner::ToolRunner`], in order, so a call is
//! checked the same way whoever makes it.

use crate::call::admission::Admitted;
use crate::call::error::CallError;
use crate::config::WorkspaceConfig;
use crate::mcp::client::McpServers;
use crate::mcp::result::McpCallError;
use crate::policy::protected::PolicySnapshot;
use crate::registry::grant::ToolGrant;
use crate::registry::{Backend, McpTool, Registry, ToolEntry, ToolProblem};
use crate::sandbox::cache::CacheStatus;
use crate::sandbox::output::CapturedOutput;
use crate::sandbox::{PlannedSandbox, PreparedTool, Sandbox, SandboxOptions};
use crate::util::json_text::JsonText;
use crate::util::problem::Problem;
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The outcome of one call.
#[derive(Debug)]
pub struct CallOutcome {
    pub result: Result<JsonText, CallError>,
    /// The call ran in a cell built before it (see `sandbox::keeper`).
    pub built_ahead: bool,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub duration: Duration,
}

impl CallOutcome {
    fn refused(error: CallError, started: Instant) -> Self {
        Self {
            result: Err(error),
            built_ahead: false,
            stdout: CapturedOutput::default(),
            stderr: CapturedOutput::default(),
            duration: started.elapsed(),
        }
    }
}

/// Runs tool calls for one workspace.
pub struct Dispatcher {
    config: WorkspaceConfig,
    registry: Registry,
    /// Started on the first call: listing tools, or a script that calls
    /// none, never pays for the engine and its instance pool.
    sandbox: OnceLock<Sandbox>,
    /// A one-call process's sandbox, until the call needs it.
    planned: Mutex<Option<PlannedSandbox>>,
    /// See [`Dispatcher::prepares_on_calling_thread`].
    prepares_on_calling_thread: bool,
    /// The component loaded with it, by its SHA-256, until the tool with
    /// that component is prepared.
    ahead: Mutex<Option<(&'static str, PreparedTool)>>,
    options: SandboxOptions,
    prepared: Mutex<HashMap<String, PreparedTool>>,
    /// The external MCP servers, once started.
    mcp: Option<McpServers>,
    /// Each registered tool's grant, resolved once when the tool joins
    /// (the config's settings meet its manifest): a grant the manifest does
    /// not ask for is a problem at its line, and the tool unavailable.
    grants: HashMap<String, Result<ToolGrant, Problem>>,
}

impl Dispatcher {
    /// Lets go of the dispatcher of a process that exits next, without
    /// tearing down its sandbox, components and cells piece by piece: the
    /// exit frees all their memory at once (unmapping it piece by piece
    /// was about a tenth of a one-call process; BENCHMARKS.md). External
    /// MCP servers are still stopped as they always are.
    pub fn release_for_exit(mut self) {
        drop(self.mcp.take());
        std::mem::forget(self);
    }

    pub fn new(
        config: WorkspaceConfig,
        registry: Registry,
        options: SandboxOptions,
    ) -> Result<Self> {
        let mut dispatcher = Self {
            config,
            registry,
            sandbox: OnceLock::new(),
            planned: Mutex::new(None),
            prepares_on_calling_thread: false,
            ahead: Mutex::new(None),
            options,
            prepared: Mutex::default(),
            mcp: None,
            grants: HashMap::new(),
        };
        dispatcher.resolve_grants();
        Ok(dispatcher)
    }

    /// Resolves the grants of the registered tools that have none yet.
    fn resolve_grants(&mut self) {
        for entry in self.registry.tools() {
            if !self.grants.contains_key(&entry.manifest.name) {
                let grant = ToolGrant::resolve(&entry.manifest, &self.config);
                self.grants.insert(entry.manifest.name.clone(), grant);
            }
        }
    }

    /// The grant of tool `name`, as resolved when it joined; `None` for a
    /// tool not registered.
    pub fn grant(&self, name: &str) -> Option<&Result<ToolGrant, Problem>> {
        self.grants.get(name)
    }

    /// The grants that could not be resolved: each a config problem at the
    /// grant's line, for the caller to show (the tool is not offered).
    pub fn grant_problems(&self) -> Vec<&Problem> {
        let mut problems: Vec<&Problem> = self
            .grants
            .values()
            .filter_map(|grant| grant.as_ref().err())
            .collect();
        problems.sort_by_key(|p| (p.position, p.key.clone()));
        problems
    }

    /// Starts the workspace's `[[mcp_server]]`s and adds their tools to the
    /// registry (see [`crate::mcp::client`]). Blocks until every server has
    /// answered or failed. A server that does not start, or a tool that
    /// cannot be offered, is not an error: the run goes on without it, and
    /// the problems returned say why, for the caller to show.
    pub fn start_mcp_servers(&mut self) -> Result<Vec<ToolProblem>> {
        if !self.config.mcp_servers.iter().any(|s| s.enabled) {
            return Ok(Vec::new());
        }
        let (servers, mut started) = McpServers::start(
            &self.config.mcp_servers,
            &self.config.roots,
            &self.config.files.policy,
        )?;
        // A definition changed since it was pinned is not offered.
        let mut problems = match crate::mcp::pins::ToolPins::for_user() {
            Some(pins) => pins.hold_back(&self.config.workspace, &mut started),
            None => Vec::new(),
        };
        problems.extend(crate::mcp::external::register(&mut self.registry, &started));
        self.resolve_grants();
        self.mcp = Some(servers);
        Ok(problems)
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn config(&self) -> &WorkspaceConfig {
        &self.config
    }

    /// Builds `planned` on first use, instead of a sandbox of this
    /// dispatcher's options (see [`Sandbox::planned`]).
    pub fn with_sandbox_planned(mut self, planned: PlannedSandbox) -> Self {
        *self.planned.lock().unwrap_or_else(|p| p.into_inner()) = Some(planned);
        self.prepares_on_calling_thread = true;
        self
    }

    /// The sandbox, started on first use (the planned one, if there is one).
    pub fn sandbox(&self) -> Result<&Sandbox> {
        if let Some(sandbox) = self.sandbox.get() {
            return Ok(sandbox);
        }
        // Held while it is built: a second caller waits for this one.
        let mut planned = self.planned.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(sandbox) = self.sandbox.get() {
            return Ok(sandbox);
        }
        let sandbox = match planned.take().map(PlannedSandbox::build) {
            Some(Ok(started)) => {
                *self.ahead.lock().unwrap_or_else(|p| p.into_inner()) = started.ahead;
                Ok(started.sandbox)
            }
            Some(Err(e)) => Err(e),
            None => Sandbox::new(self.options.clone()),
        }
        .context("cannot start the WebAssembly sandbox")?;
        Ok(self.sandbox.get_or_init(|| sandbox))
    }

    /// The compiled tool, compiling (or loading from the cache) on first use.
    pub fn prepared(&self, entry: &ToolEntry) -> Result<PreparedTool> {
        let name = &entry.manifest.name;
        if let Some(ready) = self
            .prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
        {
            return Ok(ready.clone());
        }
        let component = entry
            .component()
            .with_context(|| format!("`{name}` is not a component"))?;
        let sandbox = self.sandbox()?;
        let ready = match self.take_ahead(component.known_sha256()) {
            Some(ready) => ready,
            None => {
                let wasm = component
                    .read()
                    .with_context(|| format!("cannot read the component of `{name}`"))?;
                sandbox
                    .prepare_digested(&wasm, component.known_sha256())
                    .with_context(|| format!("the component of `{name}` is unusable"))?
            }
        };
        match ready.cache {
            CacheStatus::Hit => tracing::info!("{name}: component loaded from the compile cache"),
            CacheStatus::Compiled => {
                tracing::info!("{name}: component compiled and stored in the compile cache")
            }
            CacheStatus::Uncached => {
                tracing::info!("{name}: component compiled (no compile cache)")
            }
        }
        self.prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.clone(), ready.clone());
        Ok(ready)
    }

    /// Whether this dispatcher builds its sandbox and prepares a tool on
    /// its caller's thread, with no thread to help: it was given a planned
    /// sandbox, for a process that makes one call (see [`PlannedSandbox`]
    /// for why).
    pub(super) fn prepares_on_calling_thread(&self) -> bool {
        self.prepares_on_calling_thread
    }

    /// The component loaded ahead with the sandbox, if its SHA-256 is
    /// `sha256` (a built-in tool's, known without hashing it).
    fn take_ahead(&self, sha256: Option<&str>) -> Option<PreparedTool> {
        let mut ahead = self.ahead.lock().unwrap_or_else(|p| p.into_inner());
        match ahead.take() {
            Some((loaded, ready)) if Some(loaded) == sha256 => Some(ready),
            other => {
                *ahead = other;
                None
            }
        }
    }

    /// Runs an admitted (and, if it needed it, approved) call in its cell,
    /// or on its MCP server.
    pub(super) async fn execute(&self, admitted: Admitted<'_>, args: &Value) -> CallOutcome {
        // A program outside every cell (an MCP server, a program a tool
        // runs) is not under the cell's file guard: what it did to the
        // policy files is found after the call, and undone.
        let outside_cells =
            matches!(admitted.entry.backend, Backend::Mcp(_)) || !admitted.grant.process.is_empty();
        if !outside_cells {
            return self.run_admitted(admitted, args).await;
        }
        let tool = admitted.entry.manifest.name.clone();
        let snapshot = PolicySnapshot::take(&self.config.files.policy);
        let mut outcome = self.run_admitted(admitted, args).await;
        let changed = snapshot.undo_changes();
        if !changed.is_empty() {
            tracing::warn!(
                "`{tool}` changed toolcell's own policy from outside a cell: {}",
                changed.join(", ")
            );
            let undone = if changed.iter().any(|c| c.contains("could not be put back")) {
                "not all of it could be undone: check those files"
            } else {
                "the change was undone"
            };
            outcome.result = Err(CallError::Denied {
                tool,
                reason: format!(
                    "it changed toolcell's own policy ({}) from outside a cell (by an MCP server, or a program a tool ran): {undone}\n  fix: change toolcell's files yourself; do not let this server or program write them",
                    changed.join(", ")
                ),
            });
        }
        outcome
    }

    async fn run_admitted(&self, admitted: Admitted<'_>, args: &Value) -> CallOutcome {
        let started = Instant::now();
        let name = admitted.entry.manifest.name.as_str();
        if let Backend::Mcp(external) = &admitted.entry.backend {
            let result = self
                .execute_external(name, external, &admitted.grant, args)
                .await;
            return CallOutcome {
                result: result
                    .map(|value| JsonText::from_value(&value))
                    .map_err(|error| CallError::External {
                        tool: name.into(),
                        error,
                    }),
                built_ahead: false,
                stdout: CapturedOutput::default(),
                stderr: CapturedOutput::default(),
                duration: started.elapsed(),
            };
        }
        let ready = self
            .sandbox()
            .and_then(|sandbox| Ok((sandbox, self.prepared(admitted.entry)?)));
        let (sandbox, prepared) = match ready {
            Ok(ready) => ready,
            Err(e) => {
                let error = CallError::Unavailable {
                    tool: name.into(),
                    message: format!("{e:#}"),
                };
                return CallOutcome::refused(error, started);
            }
        };
        let run = sandbox
            .run(&prepared, &admitted.grant, &args.to_string())
            .await;
        CallOutcome {
            result: run.result.map_err(|error| CallError::Run {
                tool: name.into(),
                error,
            }),
            built_ahead: run.built_ahead,
            stdout: run.stdout,
            stderr: run.stderr,
            duration: started.elapsed(),
        }
    }
}

impl Dispatcher {
    /// One call of an external tool, under its grant's timeout and result cap.
    async fn execute_external(
        &self,
        name: &str,
        external: &McpTool,
        grant: &ToolGrant,
        args: &Value,
    ) -> Result<Value, McpCallError> {
        let Some(servers) = &self.mcp else {
            return Err(McpCallError::Server(format!(
                "the MCP server `{}` was not started",
                external.server
            )));
        };
        let arguments = args.as_object().cloned().unwrap_or_default();
        let timeout = Duration::from_millis(grant.limits.timeout_ms);
        let limit = grant.limits.max_output_bytes;
        let value = servers
            .call(&external.server, &external.tool, arguments, timeout)
            .await
            .map_err(|error| match error {
                // An error's text goes to the model too: capped the same way.
                McpCallError::Tool(text) => McpCallError::Tool(cap_text(text, limit)),
                other => other,
            })?;
        let bytes = match &value {
            Value::String(text) => text.len(),
            other => other.to_string().len(),
        };
        if bytes as u64 > limit {
            return Err(McpCallError::TooLarge(format!(
                "returned {bytes} bytes, over its output limit of {limit} bytes\n  fix: ask for less (a part of the file, fewer entries), or raise max_output_bytes under [tools.\"{name}\"]"
            )));
        }
        Ok(value)
    }
}

/// `text` cut to at most `limit` bytes (at a character boundary), saying so.
fn cap_text(text: String, limit: u64) -> String {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    if text.len() <= limit {
        return text;
    }
    let end = text.floor_char_boundary(limit);
    format!(
        "{} … [{} more bytes cut at the output limit]",
        &text[..end],
        text.len() - end
    )
}

#[cfg(test)]
mod tests {
    use super::cap_text;

    #[test]
    fn capped_error_text_says_what_was_cut() {
        assert_eq!(cap_text("short".into(), 10), "short");
        let capped = cap_text("ééééé".into(), 5);
        assert!(capped.starts_with("éé … [6 more bytes"), "{capped}");
    }
}
