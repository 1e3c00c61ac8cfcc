//! The one wasmtime engine of a toolcell process, and its epoch clock.
//!
//! Every tool runs on this engine. Calls are interrupted by epochs: a
//! background thread advances the engine's epoch every [`EPOCH_TICK`], and
//! each call's store gets a deadline of its timeout in ticks; in a process
//! that makes one call, an alarm advances it once, when the call's time is
//! up ([`EpochClock`]). That costs a load and compare at loop heads and
//! function entries, far cheaper than fuel, and needs no per-call timer
//! thread.

use anyhow::Result;
use std::time::Duration;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Resolution of call deadlines. 10 ms is far below any useful timeout and
/// costs one wake-up of a sleeping thread per tick.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Instances the pooling allocator keeps slots for: calls run one at a time
/// per agent or workflow, so a few dozen concurrent cells is ample; in
/// `toolcell mcp` up to 24 more are the keeper's (spares built ahead, used
/// stores waiting to be dropped; `keeper.rs`).
const POOL_COMPONENT_INSTANCES: u32 = 64;
/// Core instances per pool: a Rust tool is a handful of core modules, a
/// Python one a few dozen.
const POOL_CORE_INSTANCES: u32 = POOL_COMPONENT_INSTANCES * 32;
/// Linear memories and tables per pool, sized like the core instances.
const POOL_MEMORIES: u32 = POOL_COMPONENT_INSTANCES * 4;
const POOL_TABLES: u32 = POOL_COMPONENT_INSTANCES * 32;
/// Elements per table: interpreters compiled to wasm (componentize-py,
/// componentize-js) have function tables far larger than wasmtime's default.
const POOL_TABLE_ELEMENTS: usize = 200_000;
/// Core instances per component: componentize-py components hold dozens.
const POOL_CORE_INSTANCES_PER_COMPONENT: u32 = 64;
/// Size of one core instance's runtime state: large modules (an interpreter)
/// have many functions and globals; wasmtime's default is 1 MiB.
const POOL_CORE_INSTANCE_SIZE: usize = 8 << 20;

/// Linear memory kept resident when a pool slot is freed, reset with
/// `memset` (only the pages actually touched, with `PAGEMAP_SCAN`) instead of
/// `madvise`: the next call on the slot then takes no page faults. 4 MiB
/// covers a Rust tool's 1 MiB stack and a typical heap; measured in
/// BENCHMARKS.md (the per-call cost of a no-op tool roughly halves).
const POOL_MEMORY_KEEP_RESIDENT: usize = 4 << 20;
/// Table and async-stack bytes kept resident the same way.
const POOL_TABLE_KEEP_RESIDENT: usize = 64 << 10;
const POOL_STACK_KEEP_RESIDENT: usize = 64 << 10;

/// `TOOLCELL_PROFILE=perfmap` writes `/tmp/perf-PID.map` so that `perf`
/// can name the functions of tools (see BENCHMARKS.md).
pub const PROFILE_ENV: &str = "TOOLCELL_PROFILE";

/// How instances get their memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// Preallocated slots reused across calls: the fastest instantiation.
    Pooling,
    /// mmap per instance.
    OnDemand,
}

/// Builds the engine every cell runs on.
pub fn build_engine(allocation: Allocation) -> Result<Engine> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    if std::env::var(PROFILE_ENV).is_ok_and(|v| v == "perfmap") {
        // `perf record` then names tool functions instead of raw addresses.
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    if allocation == Allocation::Pooling {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(POOL_COMPONENT_INSTANCES)
            .total_core_instances(POOL_CORE_INSTANCES)
            .total_memories(POOL_MEMORIES)
            .total_tables(POOL_TABLES)
            .total_stacks(POOL_COMPONENT_INSTANCES)
            .table_elements(POOL_TABLE_ELEMENTS)
            .max_core_instances_per_component(POOL_CORE_INSTANCES_PER_COMPONENT)
            .max_tables_per_component(POOL_CORE_INSTANCES_PER_COMPONENT)
            .max_memories_per_component(POOL_CORE_INSTANCES_PER_COMPONENT)
            .max_core_instance_size(POOL_CORE_INSTANCE_SIZE)
            .linear_memory_keep_resident(POOL_MEMORY_KEEP_RESIDENT)
            .table_keep_resident(POOL_TABLE_KEEP_RESIDENT)
            .async_stack_keep_resident(POOL_STACK_KEEP_RESIDENT)
            // Linux 6.7+: reset only the pages a call touched; elsewhere ignored.
            .pagemap_scan(Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    Ok(Engine::new(&config)?)
}

/// What advances the engine's epoch, and so ends a call that runs past its
/// time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpochClock {
    /// A thread, every [`EPOCH_TICK`]: at each tick a call yields to the
    /// async runtime (a cancelled caller, Ctrl-C in `chat` or a workflow's
    /// timeout, can drop it while the guest spins), and it traps when its
    /// ticks are spent. For processes that run many calls or long ones.
    Ticking,
    /// `SIGALRM`, once, when the call's time is up (`alarm.rs`): for a
    /// process that makes one call and exits (`tools call`), which has no
    /// one to yield to and would spend more on starting the thread than on
    /// the rest of the engine.
    AtDeadline,
}

/// Starts `clock` for `engine`.
pub fn start_epoch_clock(engine: &Engine, clock: EpochClock) -> Result<()> {
    match clock {
        EpochClock::Ticking => start_ticking(engine),
        EpochClock::AtDeadline => super::alarm::install(engine),
    }
}

/// Advances `engine`'s epoch every [`EPOCH_TICK`] until the engine is dropped.
fn start_ticking(engine: &Engine) -> Result<()> {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("toolcell-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })?;
    Ok(())
}
