//! The path of one tool call: registry → validation → policy and approval →
//! sandbox. Every caller (the CLI today; the agent loop, workflows and the
//! MCP server later) goes through [`Dispatcher::call`], so a call is checked
//! the same way whoever makes it.

use crate::approval::{ApprovalMode, ApprovalRequest, Approver, Decision};
use crate::config::WorkspaceConfig;
use crate::grant::ToolGrant;
use crate::registry::{Registry, ToolEntry, ToolSource};
use crate::sandbox::cache::CacheStatus;
use crate::sandbox::output::CapturedOutput;
use crate::sandbox::{PreparedTool, RunError, Sandbox, SandboxOptions};
use anyhow::{Context, Result};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Why a call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("there is no tool named `{name}`; the tools are: {}", available.join(", "))]
    UnknownTool {
        name: String,
        available: Vec<String>,
    },
    #[error("`{name}` is disabled in the workspace config")]
    Disabled { name: String },
    #[error("the arguments do not fit the schema of `{tool}`: {}", problems.join("; "))]
    InvalidArgs { tool: String, problems: Vec<String> },
    #[error("`{tool}` was not run: {reason}")]
    Denied { tool: String, reason: String },
    #[error("`{tool}` cannot be used: {message}")]
    Unavailable { tool: String, message: String },
    #[error("`{tool}` {error}")]
    Run { tool: String, error: RunError },
}

impl CallError {
    /// A short machine-readable kind, stable for scripts and the model.
    pub fn kind(&self) -> &'static str {
        match self {
            CallError::UnknownTool { .. } => "unknown-tool",
            CallError::Disabled { .. } => "disabled",
            CallError::InvalidArgs { .. } => "invalid-args",
            CallError::Denied { .. } => "denied",
            CallError::Unavailable { .. } => "unavailable",
            CallError::Run { error, .. } => match error {
                RunError::Tool { kind, .. } => kind.as_str(),
                RunError::Timeout { .. } => "timeout",
                RunError::MemoryLimit { .. } => "memory-limit",
                RunError::Trap { .. } => "trap",
                RunError::OutputTooLarge { .. } => "output-too-large",
                RunError::InvalidResult { .. } => "invalid-result",
                RunError::Setup(_) => "failed",
            },
        }
    }

    /// Whether the call was refused by policy or by the user, rather than failing.
    pub fn is_denial(&self) -> bool {
        matches!(self, CallError::Denied { .. } | CallError::Disabled { .. })
    }
}

/// The outcome of one call.
#[derive(Debug)]
pub struct CallOutcome {
    pub result: Result<Value, CallError>,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub duration: Duration,
}

impl CallOutcome {
    fn refused(error: CallError, started: Instant) -> Self {
        Self {
            result: Err(error),
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
    options: SandboxOptions,
    prepared: Mutex<HashMap<String, PreparedTool>>,
}

impl Dispatcher {
    pub fn new(
        config: WorkspaceConfig,
        registry: Registry,
        options: SandboxOptions,
    ) -> Result<Self> {
        Ok(Self {
            config,
            registry,
            sandbox: OnceLock::new(),
            options,
            prepared: Mutex::default(),
        })
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    pub fn config(&self) -> &WorkspaceConfig {
        &self.config
    }

    /// The sandbox, started on first use.
    pub fn sandbox(&self) -> Result<&Sandbox> {
        if let Some(sandbox) = self.sandbox.get() {
            return Ok(sandbox);
        }
        let sandbox =
            Sandbox::new(self.options.clone()).context("cannot start the WebAssembly sandbox")?;
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
        let wasm = entry
            .component
            .read()
            .with_context(|| format!("cannot read the component of `{name}`"))?;
        let ready = self
            .sandbox()?
            .prepare(&wasm)
            .with_context(|| format!("the component of `{name}` is unusable"))?;
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

    /// Calls tool `name` with `args`, asking `approver` when the policy says `ask`.
    pub async fn call(&self, name: &str, args: &Value, approver: &dyn Approver) -> CallOutcome {
        let started = Instant::now();
        let admitted = match self.admit(name, args) {
            Ok(admitted) => admitted,
            Err(error) => return CallOutcome::refused(error, started),
        };
        if admitted.needs_approval {
            let request = self.approval_request(&admitted, args);
            let decision = approver.decide(&request).await;
            if let Some(error) = admitted.refusal(&decision) {
                return CallOutcome::refused(error, started);
            }
        }
        let mut outcome = self.execute(admitted, args).await;
        outcome.duration = started.elapsed();
        outcome
    }

    /// Everything before approval: find the tool, resolve its grant, check
    /// it is enabled, validate the arguments and apply the policy's
    /// `deny`. Says whether the call needs approval.
    pub fn admit<'d>(&'d self, name: &str, args: &Value) -> Result<Admitted<'d>, CallError> {
        let unavailable = |e: anyhow::Error| CallError::Unavailable {
            tool: name.into(),
            message: format!("{e:#}"),
        };
        let Some(entry) = self.registry.get(name) else {
            let available = self
                .registry
                .names()
                .into_iter()
                .map(String::from)
                .collect();
            return Err(CallError::UnknownTool {
                name: name.to_string(),
                available,
            });
        };
        let grant = ToolGrant::resolve(&entry.manifest, &self.config).map_err(unavailable)?;
        if !grant.enabled {
            return Err(CallError::Disabled { name: name.into() });
        }
        let validator = entry
            .validator()
            .map_err(|message| CallError::Unavailable {
                tool: name.into(),
                message,
            })?;
        let problems = schema_problems(validator, args);
        if !problems.is_empty() {
            return Err(CallError::InvalidArgs {
                tool: name.into(),
                problems,
            });
        }
        let needs_approval = match grant.approval {
            ApprovalMode::Auto => false,
            ApprovalMode::Ask => true,
            ApprovalMode::Deny => {
                let reason =
                    "the workspace config denies this tool (approval = \"deny\")".to_string();
                return Err(CallError::Denied {
                    tool: name.into(),
                    reason,
                });
            }
        };
        Ok(Admitted {
            entry,
            grant,
            needs_approval,
        })
    }

    /// The approval request for an admitted call, with the change it would
    /// make when the host can tell.
    pub fn approval_request<'a>(
        &self,
        admitted: &'a Admitted<'_>,
        args: &'a Value,
    ) -> ApprovalRequest<'a> {
        let tool = admitted.entry.manifest.name.as_str();
        let preview = match admitted.entry.source {
            ToolSource::BuiltIn => crate::approval::preview::preview(&self.config, tool, args),
            _ => None,
        };
        ApprovalRequest {
            tool,
            args,
            mutates: admitted.entry.manifest.mutates,
            preview,
            warning: None,
        }
    }

    /// Runs an admitted (and, if it needed it, approved) call in its cell.
    pub async fn execute(&self, admitted: Admitted<'_>, args: &Value) -> CallOutcome {
        let started = Instant::now();
        let name = admitted.entry.manifest.name.as_str();
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
            stdout: run.stdout,
            stderr: run.stderr,
            duration: started.elapsed(),
        }
    }
}

/// A call that passed every check but approval.
pub struct Admitted<'d> {
    pub entry: &'d ToolEntry,
    grant: ToolGrant,
    /// The policy says `ask`.
    pub needs_approval: bool,
}

impl Admitted<'_> {
    /// The error for a call the approver did not approve.
    pub fn refusal(&self, decision: &Decision) -> Option<CallError> {
        let tool = self.entry.manifest.name.clone();
        match decision {
            Decision::Approved | Decision::ApprovedForRun => None,
            Decision::Declined(reason) => Some(CallError::Denied {
                tool,
                reason: reason.clone(),
            }),
            Decision::Quit => Some(CallError::Denied {
                tool,
                reason: "the user stopped the run".into(),
            }),
        }
    }
}

/// What is wrong with `args` for `entry`'s schema: one line per problem,
/// naming the field.
fn schema_problems(validator: &jsonschema::Validator, args: &Value) -> Vec<String> {
    validator
        .iter_errors(args)
        .map(|error| {
            let at = error.instance_path().to_string();
            if at.is_empty() {
                error.to_string()
            } else {
                format!("at `{at}`: {error}")
            }
        })
        .collect()
}
