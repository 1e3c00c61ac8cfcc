//! Workflows: rhai scripts that call tools, the agent and models step by
//! step (`toolcell run FILE.rhai`).
//!
//! The script engine is sandboxed: rhai itself has no file, process or
//! network access, and the host adds none except through tools (which go
//! through the same admission, approval and cells as the agent's calls).
//! Limits cap operations, call depth, expression and import nesting,
//! string, array and map sizes, how deeply values nest where they meet the
//! host, and the wall clock; the wall clock and Ctrl-C also stop a running
//! tool or model call. rhai is synchronous: the script runs on a thread of
//! its own (with a stack sized for rhai's recursion, see
//! [`SCRIPT_STACK_BYTES`]) and reaches the async host through the
//! runtime's handle ([`host_api::HostContext`]).
//!
//! - [`crate::config::workflow`]: `[workflow]` and the defaults;
//! - [`modules`]: `import` confined to the workflows folder, without cycles;
//! - [`host_api`]: the functions scripts see;
//! - [`values`]: script values as JSON and back, depth-limited;
//! - [`nesting`]: rhai's recursive printing and comparing, depth-limited;
//! - [`errors`]: errors with file, line, column, caret and call chain.

pub mod errors;
pub mod host_api;
pub mod launch;
pub mod modules;
pub mod nesting;
pub mod reach;
pub mod values;

use crate::config::workflow::ScriptLimits;
use anyhow::{Context, Result};
use host_api::{CANCELLED, HostContext};
use rhai::{AST, Dynamic, Engine, EvalAltResult, Scope};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A workflow file.
pub struct Workflow {
    /// The path as the user gave it, for messages.
    pub display: String,
    /// Its folder (canonical): where imports are looked up.
    pub folder: PathBuf,
    /// The file itself (canonical): the start of every import chain.
    pub file: PathBuf,
    pub source: String,
}

/// How a workflow run failed.
#[derive(Debug)]
pub enum Failure {
    /// A syntax or runtime error, rendered for people.
    Script(String),
    /// `fail(why)`.
    Failed(String),
    /// The wall-clock limit.
    TimedOut { limit_s: u64 },
    /// Ctrl-C (or `q` at an approval prompt).
    Cancelled,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Script(text) => f.write_str(text.trim_end()),
            // The script's own words (it may quote a file or a model): on
            // their line.
            Failure::Failed(why) => write!(
                f,
                "error: the workflow failed: {}",
                crate::util::text::for_terminal_line(why)
            ),
            Failure::TimedOut { limit_s } => write!(
                f,
                "error: the workflow ran longer than its limit of {limit_s} s\n  fix: pass --timeout SECONDS or set timeout_s under [workflow]"
            ),
            Failure::Cancelled => f.write_str("stopped by the user"),
        }
    }
}

impl Workflow {
    pub fn load(path: &Path) -> Result<Self> {
        let source = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the workflow {}", path.display()))?;
        let file = path
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", path.display()))?;
        let folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
        Ok(Self {
            display: path.display().to_string(),
            folder,
            file,
            source,
        })
    }

    /// An engine with the limits and the import resolver (no host functions).
    pub fn engine(&self, limits: &ScriptLimits) -> Engine {
        let mut engine = Engine::new();
        engine.set_max_operations(limits.max_operations);
        engine.set_max_call_levels(limits.max_call_levels);
        engine.set_max_expr_depths(MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH);
        engine.set_max_string_size(limits.max_string_bytes);
        engine.set_max_array_size(limits.max_collection);
        engine.set_max_map_size(limits.max_collection);
        engine.set_module_resolver(modules::FolderResolver::new(
            self.folder.clone(),
            self.file.clone(),
        ));
        nesting::register(&mut engine);
        engine
    }

    /// Compiles the script.
    pub fn compile(&self, engine: &Engine) -> Result<AST, Failure> {
        let mut ast = engine
            .compile(&self.source)
            .map_err(|e| Failure::Script(errors::parse_error(&self.display, &self.source, &e)))?;
        ast.set_source(self.display.clone());
        Ok(ast)
    }

    /// Follows the script's literal imports through every module (see
    /// [`modules::check_imports`]); the error is rendered for people.
    pub fn check_imports(&self, engine: &Engine, ast: &AST) -> Result<(), Failure> {
        let root = modules::Root {
            base: &self.folder,
            file: &self.file,
            display: &self.display,
            source: &self.source,
            ast,
        };
        modules::check_imports(engine, &root).map_err(Failure::Script)
    }

    /// The literal tool names the script calls, with their line and column.
    pub fn tool_calls(&self, ast: &AST) -> Vec<(String, usize, usize)> {
        let mut found = Vec::new();
        ast.walk(&mut |path: &[rhai::ASTNode]| {
            // A call is an expression, or a statement of its own.
            let call = match path.last() {
                Some(rhai::ASTNode::Expr(rhai::Expr::FnCall(call, pos))) => Some((call, *pos)),
                Some(rhai::ASTNode::Stmt(rhai::Stmt::FnCall(call, pos))) => Some((call, *pos)),
                _ => None,
            };
            if let Some((call, pos)) = call
                && call.name == "tool"
                && let Some(rhai::Expr::StringConstant(name, _)) = call.args.first()
            {
                found.push((
                    name.to_string(),
                    pos.line().unwrap_or(0),
                    pos.position().unwrap_or(0),
                ));
            }
            true
        });
        found
    }

    /// Runs the script with `host`'s functions under `limits`; the value it
    /// ends with, as JSON. The script runs on a thread of its own with a
    /// stack of [`SCRIPT_STACK_BYTES`]; this one waits for it.
    pub fn run(&self, host: Arc<HostContext>, limits: &ScriptLimits) -> Result<Value, Failure> {
        std::thread::scope(|scope| {
            let thread = std::thread::Builder::new()
                .name("workflow".into())
                .stack_size(SCRIPT_STACK_BYTES)
                .spawn_scoped(scope, || self.run_here(host, limits))
                .map_err(|e| Failure::Failed(format!("cannot start the workflow's thread: {e}")))?;
            thread.join().unwrap_or_else(|panic| {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(Failure::Failed(format!(
                    "the workflow's thread panicked: {why}"
                )))
            })
        })
    }

    /// [`Self::run`] on the current thread.
    fn run_here(&self, host: Arc<HostContext>, limits: &ScriptLimits) -> Result<Value, Failure> {
        let mut engine = self.engine(limits);
        host_api::register(&mut engine, &host);
        let ast = self.compile(&engine)?;

        // The wall clock cancels the run: that stops the script at its next
        // operation and any tool or model call it is waiting on.
        let timed_out = Arc::new(AtomicBool::new(false));
        let watchdog = {
            let (cancel, timed_out, limit) =
                (host.cancel.clone(), timed_out.clone(), limits.timeout);
            host.runtime.spawn(async move {
                tokio::time::sleep(limit).await;
                timed_out.store(true, Ordering::SeqCst);
                cancel.cancel();
            })
        };
        let cancel = host.cancel.clone();
        engine.on_progress(move |_| cancel.is_cancelled().then(|| Dynamic::from(CANCELLED)));

        let mut scope = Scope::new();
        let args: rhai::Map = host
            .args
            .iter()
            .map(|(k, v)| (k.into(), v.clone().into()))
            .collect();
        scope.push_constant("args", args);
        let result = engine.eval_ast_with_scope::<Dynamic>(&mut scope, &ast);
        watchdog.abort();
        match result {
            Ok(value) => {
                if value.is_unit() {
                    Ok(Value::Null)
                } else {
                    values::to_json(&value, "the workflow's result").map_err(|e| {
                        let why = match *e {
                            EvalAltResult::ErrorRuntime(thrown, _) => thrown
                                .read_lock::<rhai::Map>()
                                .and_then(|m| m.get("message").map(|m| m.to_string()))
                                .unwrap_or_default(),
                            other => other.to_string(),
                        };
                        Failure::Script(format!(
                            "error: the workflow's result cannot be shown as JSON: {why}"
                        ))
                    })
                }
            }
            Err(_) if timed_out.load(Ordering::SeqCst) => Err(Failure::TimedOut {
                limit_s: limits.timeout.as_secs(),
            }),
            Err(error) => Err(self.failure(&error)),
        }
    }

    fn failure(&self, error: &EvalAltResult) -> Failure {
        let mut innermost = error;
        while let EvalAltResult::ErrorInFunctionCall(_, _, inner, _)
        | EvalAltResult::ErrorInModule(_, inner, _) = innermost
        {
            innermost = inner;
        }
        if let EvalAltResult::ErrorTerminated(token, _) = innermost {
            if let Some(map) = token.read_lock::<rhai::Map>()
                && let Some(why) = map.get("fail")
            {
                return Failure::Failed(why.to_string());
            }
            return Failure::Cancelled;
        }
        Failure::Script(errors::runtime_error(
            &self.display,
            &self.source,
            &self.folder,
            error,
        ))
    }
}

/// Expressions inside each other in a script (parentheses, array and map
/// literals, blocks, operators in a chain): rhai's own default, deeper than
/// anything a person writes, and parsing or evaluating that deep takes a
/// few hundred KiB of stack, not the thread's whole stack.
pub const MAX_EXPR_DEPTH: usize = 64;

/// The same inside a function body: a function's frames pile up once per
/// call level ([`DEFAULT_MAX_CALL_LEVELS`](crate::config::workflow::DEFAULT_MAX_CALL_LEVELS)), so each may nest half as deep.
pub const MAX_FUNCTION_EXPR_DEPTH: usize = 32;

/// The stack of the thread a script runs on. rhai clones, drops and
/// size-checks arrays and maps with one small frame (100 to 300 bytes,
/// measured) per level of nesting and does not limit that depth. Building a
/// value takes time quadratic in its depth (16,000 levels: 4 s; about
/// 350,000: the default 30-minute timeout), and 256 MiB holds about
/// 900,000 levels. It is address space: only the part a script uses is
/// ever backed by memory, and it is returned when the run ends.
pub const SCRIPT_STACK_BYTES: usize = 256 * 1024 * 1024;
