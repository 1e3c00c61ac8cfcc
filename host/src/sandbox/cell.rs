//! One cell: the per-call store state a tool instance runs against.
//!
//! A cell is built fresh for every call from the tool's grant: preopens for
//! the granted roots only (read-only unless writing is granted), the granted
//! environment variables only, no stdin, captured stdout/stderr, sockets and
//! name lookup refused, HTTP refused except to granted hosts, programs
//! refused except granted ones, and a memory
//! limiter that remembers whether it said no.

use super::bindings::{CommandTool, CommandToolPre};
use super::fs_guard::{FileGuard, GuardedFs};
use super::network::NetworkPolicy;
use super::output::CappedOutput;
use super::process_policy::ProcessPolicy;
use super::{CAPTURE_CAP, EpochClock, RunError, run_error, start_budget, within_time_limit};
use crate::registry::grant::ToolGrant;
use anyhow::{Context, Result};
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, ResourceLimiter, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// Instances, tables and memories a single tool call may create: generous
/// for interpreters compiled to wasm, small enough to stop a runaway.
const MAX_INSTANCES: usize = 256;
const MAX_TABLES: usize = 256;
const MAX_MEMORIES: usize = 256;
/// Elements per table: matches the pooling allocator's slot size.
const MAX_TABLE_ELEMENTS: usize = 200_000;

/// Enforces the tool's memory limit and records whether it was reached, so
/// that the resulting trap can be reported as "memory limit" rather than as
/// an obscure allocation failure.
#[derive(Debug)]
pub struct MemoryLimiter {
    limit_bytes: usize,
    pub reached: bool,
}

impl MemoryLimiter {
    /// The most memory the cell may have.
    pub fn limit_bytes(&self) -> usize {
        self.limit_bytes
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit_bytes {
            self.reached = true;
            return Ok(false);
        }
        Ok(true)
    }
    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
    fn instances(&self) -> usize {
        MAX_INSTANCES
    }
    fn tables(&self) -> usize {
        MAX_TABLES
    }
    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

/// The store state of one call.
pub struct CellState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    network: NetworkPolicy,
    pub(super) process: ProcessPolicy,
    pub(super) files: FileGuard,
    /// Files the tool asked to have read ahead (`toolcell:tool/files`).
    pub(super) read_ahead: Option<super::files::ReadAhead>,
    /// Folders the tool asked to have listed ahead (`toolcell:tool/folders`).
    pub(super) folders_ahead: Option<super::folders_ahead::FoldersAhead>,
    pub limiter: MemoryLimiter,
}

impl CellState {
    /// Builds the cell for one call of a tool with `grant`.
    pub fn new(grant: &ToolGrant, stdout: CappedOutput, stderr: CappedOutput) -> Result<Self> {
        let mut wasi = WasiCtxBuilder::new();
        // File operations run on the calling thread instead of hopping to a
        // blocking pool: several times faster for the small reads tools do.
        wasi.allow_blocking_current_thread(true);
        for preopen in &grant.preopens {
            // The root as the config was loaded: a link put on its way
            // since (by a program that could write the folder holding it)
            // would lead the cell elsewhere.
            if !crate::contain::unmoved(&preopen.host) {
                anyhow::bail!(
                    "the root {} is no longer the folder the config named (a link is on its way now)\n  fix: put the folder back, or restart toolcell to see the config as it is now",
                    preopen.host.display()
                );
            }
            let perms = if preopen.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            wasi.preopened_dir(&preopen.host, &preopen.guest, perms)
                .map_err(anyhow::Error::from)
                .with_context(|| format!("cannot open root {}", preopen.host.display()))?;
        }
        wasi.envs(&grant.env_values());
        wasi.stdout(stdout).stderr(stderr);
        wasi.allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        wasi.socket_addr_check(|_, _| Box::pin(async { false }));
        Ok(Self {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            network: NetworkPolicy::new(grant.network.clone()),
            process: ProcessPolicy::new(&grant.tool, grant.process.clone(), grant.preopens.clone())
                .confined(grant),
            files: {
                let roots = grant
                    .preopens
                    .iter()
                    .map(|p| (p.host.clone(), p.guest.clone()))
                    .collect();
                let mut guard = FileGuard::new(grant.files.clone(), roots);
                guard.allow_policy_change(&grant.policy_changes);
                guard
            },
            read_ahead: None,
            folders_ahead: None,
            limiter: MemoryLimiter {
                limit_bytes: grant.limits.memory_bytes(),
                reached: false,
            },
        })
    }
}

impl CellState {
    /// The cell's file system, through its [`FileGuard`].
    pub(super) fn guarded_fs(&mut self) -> GuardedFs<'_> {
        GuardedFs {
            inner: wasmtime_wasi::filesystem::WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            guard: &mut self.files,
        }
    }
}

impl WasiView for CellState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CellState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            hooks: &mut self.network,
            table: &mut self.table,
            ctx: &mut self.http,
        }
    }
}

/// A cell ready for one call: its store, the tool instantiated in it, and
/// the tool's captured output.
pub(super) struct Cell {
    pub store: Store<CellState>,
    pub instance: CommandTool,
    pub stdout: CappedOutput,
    pub stderr: CappedOutput,
}

impl Cell {
    /// Builds a cell for one call of the tool `pre` under `grant` and
    /// instantiates the tool in it. Instantiating runs the component's
    /// start functions, if any, under the grant's limits: a failure is
    /// classified like a call's ([`RunError`]).
    pub async fn build(
        engine: &Engine,
        pre: &CommandToolPre<CellState>,
        grant: &ToolGrant,
        clock: EpochClock,
    ) -> Result<Self, RunError> {
        let stdout = CappedOutput::new(CAPTURE_CAP);
        let stderr = CappedOutput::new(CAPTURE_CAP);
        let state =
            CellState::new(grant, stdout.clone(), stderr.clone()).map_err(RunError::Setup)?;
        let mut store = Store::new(engine, state);
        store.limiter(|state| &mut state.limiter);
        start_budget(&mut store, grant, clock)?;
        let instance = match within_time_limit(grant, pre.instantiate_async(&mut store)).await? {
            Ok(instance) => instance,
            Err(error) => return Err(run_error(&error, &store, grant)),
        };
        Ok(Self {
            store,
            instance,
            stdout,
            stderr,
        })
    }
}
