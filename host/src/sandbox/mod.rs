//! The sandbox: compiles tool components once, and runs every call in a fresh
//! instance inside its own cell.
//!
//! - [`engine`]: the one wasmtime engine and its epoch clock (deadlines;
//!   `alarm`: the clock of a process that makes one call);
//! - [`cache`]: compiled components on disk, keyed by wasm hash and engine;
//! - [`cell`]: the per-call WASI context, HTTP policy and memory limiter;
//! - [`output`]: captured, capped stdout/stderr;
//! - [`network`]: which hosts a cell may reach over wasi:http;
//! - [`process`]: which programs a cell may run, and how;
//! - [`fs_guard`]: the cell's file system, with toolcell's policy files and
//!   the user's secrets out of reach;
//! - `folders`: `toolcell:tool/folders`, a folder's names and types without
//!   a `stat` of each entry (`folders_ahead`: the folders a walk will enter,
//!   listed ahead); `files`: `toolcell:tool/files`, many files read at once,
//!   by the calling thread and a reader a further core (`readers`, which
//!   both use);
//! - [`bindings`]: the generated host side of `toolcell:tool`; `linking`:
//!   what a component may import, all of it or one component's imports;
//! - `keeper`: with [`SandboxOptions::ready_ahead`], the next cell of a tool
//!   built before its call and used ones torn down, on a thread of their own.
//!
//! A call never leaves anything behind: the store (memories, tables, open
//! files) is dropped when the call ends, however it ends (by the keeper,
//! just after, when there is one; by the exit, in a process that makes one
//! call), and no instance serves a second call. A tool that traps,
//! loops past its deadline or exhausts its memory yields a [`RunError`], and
//! the next call starts from a clean instance like any other.

mod alarm;
pub mod bindings;
pub mod cache;
pub mod cell;
pub mod engine;
mod files;
mod folders;
mod folders_ahead;
pub mod fs_guard;
mod keeper;
mod linking;
mod links;
pub mod network;
pub mod output;
mod preopened;
pub mod process;
pub mod process_policy;
mod readers;
pub mod refusal;

use crate::registry::grant::ToolGrant;
use crate::tool::builtin::BuiltinTool;
use crate::util::json_text::JsonText;
use anyhow::Result;
use bindings::{CommandTool, CommandToolPre, GuestError};
use cache::{CacheStatus, ComponentCache};
use cell::Cell;
use cell::CellState;
pub use engine::{Allocation, EpochClock};
use keeper::Keeper;
use output::CapturedOutput;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};

/// What a tool may print to stdout or stderr that is kept for the logs.
pub const CAPTURE_CAP: usize = 64 * 1024;
/// Extra time past the epoch deadline before the host abandons a call that is
/// blocked in a host function (where epochs are not checked).
const HOST_CALL_GRACE: Duration = Duration::from_millis(250);

/// The kind of a tool's own error, from the contract's variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolErrorKind {
    InvalidArgs,
    NotFound,
    Denied,
    Failed,
}

impl ToolErrorKind {
    /// Every kind, in the order of the contract's `error` variant.
    pub const ALL: [ToolErrorKind; 4] = [
        ToolErrorKind::InvalidArgs,
        ToolErrorKind::NotFound,
        ToolErrorKind::Denied,
        ToolErrorKind::Failed,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            ToolErrorKind::InvalidArgs => "invalid-args",
            ToolErrorKind::NotFound => "not-found",
            ToolErrorKind::Denied => "denied",
            ToolErrorKind::Failed => "failed",
        }
    }
}

/// Why a run did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The tool ran and returned its error variant.
    #[error("{}: {message}", kind.as_str())]
    Tool {
        kind: ToolErrorKind,
        message: String,
    },
    #[error("stopped at its time limit of {limit_ms} ms")]
    Timeout { limit_ms: u64 },
    #[error("stopped at its memory limit of {limit_mb} MiB")]
    MemoryLimit { limit_mb: u64 },
    #[error("crashed (wasm trap): {message}")]
    Trap { message: String },
    #[error("returned {bytes} bytes, over its output limit of {limit} bytes")]
    OutputTooLarge { bytes: usize, limit: u64 },
    #[error("returned a result that is not JSON: {message}")]
    InvalidResult { message: String },
    #[error("could not start: {0:#}")]
    Setup(anyhow::Error),
}

/// The outcome of one run, with what the tool printed.
#[derive(Debug)]
pub struct RunOutcome {
    pub result: Result<JsonText, RunError>,
    /// The call ran in a cell built before it (the keeper's spare).
    pub built_ahead: bool,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub duration: Duration,
}

/// A component compiled and linked, ready to instantiate.
#[derive(Clone)]
pub struct PreparedTool {
    /// Tells prepared tools apart (a spare cell is for one of them).
    id: u64,
    pre: CommandToolPre<CellState>,
    pub cache: CacheStatus,
}

/// Where the compiled-component cache lives and how instances are allocated.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    pub cache_dir: Option<PathBuf>,
    pub allocation: Allocation,
    /// Build each tool's next cell ahead of its call, and tear used ones
    /// down, on a thread of their own (see [`keeper`]): for processes that
    /// serve many calls (`toolcell mcp`).
    pub ready_ahead: bool,
    /// Leave each used cell (its memory, its stack) for the process's exit
    /// to take down, instead of unmapping it after its call: for a process
    /// that makes one call and exits (`toolcell tools call`). Each unmapping
    /// of touched memory waits until every core that ran one of the
    /// process's threads has dropped it from its TLB, and on a VM that
    /// interrupt is most of its cost: about 0.3 ms of a small call's
    /// 4.7 ms here (BENCHMARKS.md, issue 21). Nothing a call leaves in
    /// its cell needs more than the exit: its programs' process groups are
    /// ended with the call, and its files and sockets close with the
    /// process. Never for a process that makes many calls: each would keep
    /// its cell. Taken only with [`Allocation::OnDemand`]: a pool's slot
    /// left taken would be lost to every later call.
    pub leave_used_cells_to_exit: bool,
    /// What ends a call that runs past its time (see [`EpochClock`]):
    /// [`EpochClock::AtDeadline`] only for a process that makes one call,
    /// never with [`SandboxOptions::ready_ahead`].
    pub clock: EpochClock,
}

/// The engine, linker and cache shared by every call of a process.
pub struct Sandbox {
    engine: Engine,
    /// Everything toolcell provides ([`linking::everything`]), linked when
    /// a component is first prepared with it.
    linker: OnceLock<Linker<CellState>>,
    cache: ComponentCache,
    /// Readies cells ahead of calls, when asked to.
    keeper: Option<Keeper>,
    /// See [`SandboxOptions::leave_used_cells_to_exit`].
    leave_used_cells_to_exit: bool,
    clock: EpochClock,
}

impl Sandbox {
    pub fn new(options: SandboxOptions) -> Result<Self> {
        anyhow::ensure!(
            !options.ready_ahead || options.clock == EpochClock::Ticking,
            "cells built ahead need a ticking epoch clock"
        );
        let engine = engine::build_engine(options.allocation)?;
        engine::start_epoch_clock(&engine, options.clock)?;
        let cache = ComponentCache::new(&engine, options.cache_dir);
        let keeper = match options.ready_ahead {
            true => Some(Keeper::start(engine.clone())?),
            false => None,
        };
        let sandbox = Self {
            engine,
            linker: OnceLock::new(),
            cache,
            keeper,
            leave_used_cells_to_exit: options.leave_used_cells_to_exit
                && options.allocation == Allocation::OnDemand,
            clock: options.clock,
        };
        // A process that serves many calls links everything before the
        // first, not during it.
        if options.ready_ahead {
            sandbox.linker()?;
        }
        Ok(sandbox)
    }

    /// A sandbox to build when the call first needs it, for a process
    /// that makes one call (see [`PlannedSandbox`]). `ahead`, the built-in
    /// component the call will probably use, is loaded with it and linked
    /// with only what it imports (see [`StartedSandbox::ahead`]).
    pub fn planned(options: SandboxOptions, ahead: Option<&'static BuiltinTool>) -> PlannedSandbox {
        PlannedSandbox { options, ahead }
    }

    pub fn cache(&self) -> &ComponentCache {
        &self.cache
    }

    /// Compiles (or loads from the cache) and links a tool component,
    /// checking that it is a component implementing `toolcell:tool`.
    pub fn prepare(&self, wasm: &[u8]) -> Result<PreparedTool> {
        self.prepare_digested(wasm, None)
    }

    /// [`Sandbox::prepare`], for a component whose SHA-256 (hexadecimal)
    /// is known already: its compile-cache entry is found without hashing it.
    pub fn prepare_digested(&self, wasm: &[u8], sha256: Option<&str>) -> Result<PreparedTool> {
        let (component, cache) = self.load(wasm, sha256)?;
        link(&component, self.linker()?, cache)
    }

    /// [`Sandbox::prepare_digested`] with a linker of only what the
    /// component imports, for a process that will run no other.
    fn prepare_alone(&self, wasm: &[u8], sha256: &str) -> Result<PreparedTool> {
        let (component, cache) = self.load(wasm, Some(sha256))?;
        match linking::only_for(&self.engine, &component)? {
            Some(linker) => link(&component, &linker, cache),
            None => link(&component, self.linker()?, cache),
        }
    }

    fn linker(&self) -> Result<&Linker<CellState>> {
        if let Some(linker) = self.linker.get() {
            return Ok(linker);
        }
        let linker = linking::everything(&self.engine)?;
        Ok(self.linker.get_or_init(|| linker))
    }

    fn load(&self, wasm: &[u8], sha256: Option<&str>) -> Result<(Component, CacheStatus)> {
        check_component_header(wasm)?;
        self.cache.load(&self.engine, wasm, sha256).map_err(|e| {
            anyhow::anyhow!("it is not a valid WebAssembly component ({e:#})\n  fix: rebuild it with a component toolchain (cargo --target wasm32-wasip2, componentize-py, componentize-js)")
        })
    }

    /// Runs one call of `tool` with `args` (JSON text) in a fresh cell.
    pub async fn run(&self, tool: &PreparedTool, grant: &ToolGrant, args: &str) -> RunOutcome {
        let started = Instant::now();
        let (result, stdout, stderr, built_ahead) = match self.cell_for(tool, grant).await {
            Ok((cell, built_ahead)) => {
                let (stdout, stderr) = (cell.stdout.clone(), cell.stderr.clone());
                let result = self.call_in(cell, tool, grant, args).await;
                (result, stdout.captured(), stderr.captured(), built_ahead)
            }
            Err(error) => (
                Err(error),
                CapturedOutput::default(),
                CapturedOutput::default(),
                false,
            ),
        };
        let result = result.map_err(|e| match e {
            // The panic message a Rust tool prints is the most useful part of a trap.
            RunError::Trap { message } => match last_words(&stderr.text) {
                Some(last) => RunError::Trap {
                    message: format!("{message}; the tool's last output: {last}"),
                },
                None => RunError::Trap { message },
            },
            other => other,
        });
        RunOutcome {
            result,
            built_ahead,
            stdout,
            stderr,
            duration: started.elapsed(),
        }
    }

    /// A fresh cell for one call, and whether it was built ahead: the
    /// keeper's spare when it has one, else built now.
    async fn cell_for(
        &self,
        tool: &PreparedTool,
        grant: &ToolGrant,
    ) -> Result<(Cell, bool), RunError> {
        if let Some(cell) = self.keeper.as_ref().and_then(|k| k.take(tool.id, grant)) {
            return Ok((cell, true));
        }
        let cell = Cell::build(&self.engine, &tool.pre, grant, self.clock).await?;
        Ok((cell, false))
    }

    /// Calls the tool in `cell`, then hands the used cell to the keeper (or
    /// drops it, or leaves it to the process's exit).
    async fn call_in(
        &self,
        cell: Cell,
        tool: &PreparedTool,
        grant: &ToolGrant,
        args: &str,
    ) -> Result<JsonText, RunError> {
        let Cell {
            mut store,
            instance,
            ..
        } = cell;
        let result = call_tool(&mut store, &instance, grant, args, self.clock).await;
        // Files and folders read ahead and not taken are dropped with the
        // call, not with its store, which may wait for the keeper a while
        // (or, in a process that makes one call, for the exit).
        store.data_mut().read_ahead = None;
        store.data_mut().folders_ahead = None;
        match &self.keeper {
            Some(keeper) => keeper.after_call_of(store, tool.id, &tool.pre, grant),
            None if self.leave_used_cells_to_exit => std::mem::forget(store),
            None => drop(store),
        }
        result
    }
}

/// `component` linked with `linker`, checked to implement `toolcell:tool`.
fn link(
    component: &Component,
    linker: &Linker<CellState>,
    cache: CacheStatus,
) -> Result<PreparedTool> {
    let pre = linker.instantiate_pre(component).map_err(|e| {
        anyhow::anyhow!(
            "it imports something toolcell does not provide ({e:#})\n  fix: import only WASI 0.2 interfaces (cli, filesystem, clocks, random, sockets, http) and `toolcell:tool` `folders`, `files` and `process`"
        )
    })?;
    let pre = CommandToolPre::new(pre).map_err(|e| {
        anyhow::anyhow!(
            "it does not implement the world `toolcell:tool/tool-component` ({e:#})\n  fix: export the interface `toolcell:tool/tool@0.1.0` from tools-wasm/wit/tool.wit, e.g. with wit-bindgen's `export!`"
        )
    })?;
    static PREPARED: AtomicU64 = AtomicU64::new(0);
    Ok(PreparedTool {
        id: PREPARED.fetch_add(1, Ordering::Relaxed),
        pre,
        cache,
    })
}

/// A one-call process's sandbox, built on the calling thread when the
/// call needs it ([`Sandbox::planned`]).
///
/// It was built on a thread of its own while the config and the tools
/// loaded, but on the two-core VM of BENCHMARKS.md (issue 21, eighth step)
/// that thread began 0.05–1.1 ms after it was spawned and woke the caller
/// up to 0.6 ms late when it handed the sandbox over, and a second core in
/// use made every unmapping interrupt it: the same work on the calling
/// thread ended about 1 ms sooner, though nothing overlaps.
pub struct PlannedSandbox {
    options: SandboxOptions,
    ahead: Option<&'static BuiltinTool>,
}

/// A planned sandbox, built, and the component it loaded ahead.
pub struct StartedSandbox {
    pub sandbox: Sandbox,
    /// The built-in component loaded ahead, by its SHA-256: the caller
    /// uses it for the tool whose component has that digest, and only then.
    pub ahead: Option<(&'static str, PreparedTool)>,
}

impl PlannedSandbox {
    /// Builds the engine, and loads the component planned ahead.
    pub fn build(self) -> Result<StartedSandbox> {
        let sandbox = Sandbox::new(self.options)?;
        let ahead = self.ahead.and_then(|tool| {
            let prepared = sandbox.prepare_alone(tool.wasm, tool.wasm_sha256);
            // A failure is met again, and reported, when the call
            // prepares the tool itself.
            prepared.ok().map(|prepared| (tool.wasm_sha256, prepared))
        });
        Ok(StartedSandbox { sandbox, ahead })
    }
}

/// What a trap or host error in `store`'s instance means for the caller:
/// the memory limit (the limiter said no), the time limit (the epoch
/// deadline), or a crash.
fn run_error(error: &wasmtime::Error, store: &Store<CellState>, grant: &ToolGrant) -> RunError {
    if store.data().limiter.reached {
        return RunError::MemoryLimit {
            limit_mb: grant.limits.memory_mb,
        };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => RunError::Timeout {
            limit_ms: grant.limits.timeout_ms,
        },
        Some(trap) => RunError::Trap {
            message: trap.to_string(),
        },
        None => RunError::Trap {
            message: format!("{error:#}"),
        },
    }
}

/// Awaits `work` (an instantiation or a call) up to the grant's time limit
/// plus [`HOST_CALL_GRACE`]: the host's own stop for work waiting in an
/// asynchronous host function, where epochs are not checked.
async fn within_time_limit<F: std::future::Future>(
    grant: &ToolGrant,
    work: F,
) -> Result<F::Output, RunError> {
    let limit = Duration::from_millis(grant.limits.timeout_ms);
    tokio::time::timeout(limit + HOST_CALL_GRACE, work)
        .await
        .map_err(|_elapsed| RunError::Timeout {
            limit_ms: grant.limits.timeout_ms,
        })
}

/// Gives a call's store its time budget, from now. With a ticking clock,
/// every epoch tick the call yields to the async runtime, so a cancelled
/// caller (Ctrl-C, a workflow's timeout) can drop it at once, even while
/// the guest spins; after the grant's timeout in ticks it traps. With the
/// alarm, the epoch advances only when the time is up, and the call traps
/// at that one tick.
fn start_budget(
    store: &mut Store<CellState>,
    grant: &ToolGrant,
    clock: EpochClock,
) -> Result<(), RunError> {
    if clock == EpochClock::AtDeadline {
        // Armed first: the last budget's alarm, gone off in between, would
        // end this one at once.
        alarm::arm(Duration::from_millis(grant.limits.timeout_ms))
            .map_err(|e| RunError::Setup(anyhow::anyhow!("cannot set the call's deadline: {e}")))?;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|_| Err(Trap::Interrupt.into()));
        return Ok(());
    }
    let mut remaining = grant
        .limits
        .timeout_ms
        .div_ceil(engine::EPOCH_TICK.as_millis() as u64);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        remaining = remaining.saturating_sub(1);
        if remaining == 0 {
            Err(Trap::Interrupt.into())
        } else {
            Ok(UpdateDeadline::Yield(1))
        }
    });
    Ok(())
}

/// One call of the tool instantiated in `store`, under the grant's limits.
async fn call_tool(
    store: &mut Store<CellState>,
    instance: &CommandTool,
    grant: &ToolGrant,
    args: &str,
    clock: EpochClock,
) -> Result<JsonText, RunError> {
    let limit = Duration::from_millis(grant.limits.timeout_ms);
    start_budget(store, grant, clock)?;
    store.data_mut().process.start_clock(Instant::now() + limit);
    let call = instance.toolcell_tool_tool().call_call(&mut *store, args);
    let returned = within_time_limit(grant, call).await;
    if clock == EpochClock::AtDeadline {
        // The call is over: no alarm is to come while its result is
        // printed. An error here leaves an alarm that only advances the
        // epoch.
        let _ = alarm::disarm();
    }
    let returned = returned?;
    let outcome = match returned {
        Ok(Ok(text)) => {
            if text.len() as u64 > grant.limits.max_output_bytes {
                return Err(RunError::OutputTooLarge {
                    bytes: text.len(),
                    limit: grant.limits.max_output_bytes,
                });
            }
            JsonText::parse(text).map_err(|e| RunError::InvalidResult {
                message: e.to_string(),
            })
        }
        Ok(Err(error)) => {
            let (kind, message) = match error {
                GuestError::InvalidArgs(m) => (ToolErrorKind::InvalidArgs, m),
                GuestError::NotFound(m) => (ToolErrorKind::NotFound, m),
                GuestError::Denied(m) => (ToolErrorKind::Denied, m),
                GuestError::Failed(m) => (ToolErrorKind::Failed, m),
            };
            // A tool's error is one line (it often quotes a path the model
            // chose): it cannot add lines where it is shown.
            let message = crate::util::text::for_terminal_line(&message).into_owned();
            Err(RunError::Tool { kind, message })
        }
        Err(error) => Err(run_error(&error, store, grant)),
    };
    guard_verdict(store.data().files.refusals(), outcome)
}

/// The outcome of a call in the words of its [`fs_guard`]: a call that
/// tried to change the policy is refused whatever the tool made of it; a
/// call that failed on a secret says so (one that went on without it, like
/// a search, stands).
fn guard_verdict(
    refusals: &[refusal::Refusal],
    outcome: Result<JsonText, RunError>,
) -> Result<JsonText, RunError> {
    let denied = |refusal: &refusal::Refusal| RunError::Tool {
        kind: ToolErrorKind::Denied,
        message: refusal.message(),
    };
    if let Some(policy) = refusals
        .iter()
        .find(|r| matches!(r, refusal::Refusal::Policy { .. }))
    {
        return Err(denied(policy));
    }
    match (outcome, refusals.first()) {
        (Err(RunError::Tool { .. }), Some(secret)) => Err(denied(secret)),
        (outcome, _) => outcome,
    }
}

/// The last meaningful line a tool printed before trapping: for a Rust
/// panic, its message (the hint about `RUST_BACKTRACE` that follows is noise).
fn last_words(stderr: &str) -> Option<&str> {
    stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
}

/// WebAssembly binaries start with `\0asm` and a version: 1 for core modules,
/// 0x0d (layer 1) for components. A core module is the commonest mistake
/// (building for wasm32-wasip1, or without the component step).
fn check_component_header(wasm: &[u8]) -> Result<()> {
    const MAGIC: &[u8] = b"\0asm";
    const COMPONENT_VERSION: [u8; 4] = [0x0d, 0x00, 0x01, 0x00];
    if wasm.len() < 8 || &wasm[..4] != MAGIC {
        if wasm.starts_with(b"(component") || wasm.starts_with(b"(module") {
            return Ok(()); // WebAssembly text; wasmtime parses it.
        }
        anyhow::bail!(
            "it is not a WebAssembly file (no `\\0asm` header)\n  fix: give the `.wasm` component the tool's build produced"
        );
    }
    if wasm[4..8] != COMPONENT_VERSION {
        anyhow::bail!(
            "it is a core WebAssembly module, not a component\n  fix: build it with `cargo build --target wasm32-wasip2` (not wasip1), componentize-py or componentize-js"
        );
    }
    Ok(())
}

#[cfg(test)]
mod contract_tests {
    use super::ToolErrorKind;

    /// The cases of the `error` variant of the contract's `tool` interface.
    fn contract_error_cases() -> Vec<String> {
        let wit = include_str!("../../../tools-wasm/wit/tool.wit");
        let tool = &wit[wit.find("interface tool {").expect("interface tool")..];
        let variant = &tool[tool.find("variant error {").expect("variant error")..];
        let body = &variant[..variant.find('}').expect("end of variant")];
        body.lines()
            .map(str::trim)
            .filter(|line| !line.starts_with("//") && line.contains('('))
            .map(|line| line[..line.find('(').unwrap()].to_string())
            .collect()
    }

    #[test]
    fn the_tool_error_kinds_are_the_contracts() {
        let host: Vec<&str> = ToolErrorKind::ALL
            .iter()
            .map(ToolErrorKind::as_str)
            .collect();
        assert_eq!(contract_error_cases(), host);
    }
}
