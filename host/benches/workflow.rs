//! Benchmarks of workflows (see BENCHMARKS.md for figures and machine).
//!
//! `cargo bench -p toolcell --bench workflow`
//!
//! 1. Overhead of `tool()` from a script: a script calling the no-op tool
//!    in a loop, against the same calls through the Rust API
//!    (`ToolRunner::call`) in the same run; without a run store, and with
//!    one (the CLI records every call in SQLite).
//! 2. Start-up of `toolcell run` for a trivial script with a warm
//!    component cache, against `toolcell --version` (process start alone).

#[path = "../../tests/support/cargo_component.rs"]
mod cargo_component;
#[path = "../../tests/support/fixture.rs"]
#[allow(dead_code)]
mod fixture;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use toolcell::approval::ApproveAll;
use toolcell::call::dispatch::Dispatcher;
use toolcell::call::runner::ToolRunner;
use toolcell::config::WorkspaceConfig;
use toolcell::config::workflow::ScriptLimits;
use toolcell::registry::Registry;
use toolcell::sandbox::{Allocation, EpochClock, SandboxOptions};
use toolcell::store::{RunKind, Store};
use toolcell::workflow::Workflow;
use toolcell::workflow::host_api::HostContext;

/// Calls per measurement.
const CALLS: usize = 2_000;
/// Interleaved repeats; the median is reported.
const REPEATS: usize = 5;
/// Process launches per CLI case.
const LAUNCHES: usize = 30;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let noop = fixture::noop();
    let tool_dir = root.join(".toolcell/tools/noop");
    std::fs::create_dir_all(&tool_dir).unwrap();
    std::fs::copy(noop.folder.join("tool.toml"), tool_dir.join("tool.toml")).unwrap();
    std::fs::copy(&noop.wasm, tool_dir.join("tool.wasm")).unwrap();
    let cache = root.join(".cache");
    script_overhead(&root, &cache);
    startup(&root, &cache);
}

fn script_overhead(root: &Path, cache: &Path) {
    let config = WorkspaceConfig::default_for(root).unwrap();
    let registry = Registry::load(None, &config.workspace_tools_dir());
    let dispatcher = Arc::new(
        Dispatcher::new(
            config,
            registry,
            SandboxOptions {
                cache_dir: Some(cache.to_path_buf()),
                allocation: Allocation::Pooling,
                ready_ahead: false,
                leave_used_cells_to_exit: false,
                clock: EpochClock::Ticking,
            },
        )
        .unwrap(),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let script = root.join("loop.rhai");
    std::fs::write(
        &script,
        format!("for i in 0..{CALLS} {{ tool(\"noop\", #{{}}); }}\n"),
    )
    .unwrap();
    let workflow = Arc::new(Workflow::load(&script).unwrap());
    let store = Arc::new(Store::open(&root.join(".toolcell")).unwrap());
    let host = |store: Option<Arc<Store>>| {
        let run = store
            .as_ref()
            .map(|s| s.start_run(RunKind::Workflow, "bench", None).unwrap())
            .unwrap_or(0);
        Arc::new(HostContext {
            dispatcher: dispatcher.clone(),
            approver: Arc::new(ApproveAll),
            store,
            run,
            runtime: runtime.handle().clone(),
            cancel: CancellationToken::new(),
            model: Default::default(),
            max_rounds: 10,
            env_allowed: Default::default(),
            args: Default::default(),
            output: Box::new(|_, _| {}),
            calls: Default::default(),
        })
    };
    // Warm up: compile the component, fill the pool.
    let runner = ToolRunner::unrecorded(&dispatcher, &ApproveAll);
    runtime.block_on(runner.call("noop", json!({})));
    let (mut direct, mut scripted, mut recorded) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..REPEATS {
        let started = Instant::now();
        for _ in 0..CALLS {
            let result = runtime.block_on(runner.call("noop", json!({})));
            assert!(result.value.is_some());
        }
        direct.push(started.elapsed() / CALLS as u32);

        for (store, into) in [(None, &mut scripted), (Some(store.clone()), &mut recorded)] {
            let (workflow, host) = (workflow.clone(), host(store));
            let started = Instant::now();
            runtime
                .block_on(async {
                    tokio::task::spawn_blocking(move || {
                        workflow.run(host, &ScriptLimits::default())
                    })
                    .await
                })
                .unwrap()
                .unwrap();
            into.push(started.elapsed() / CALLS as u32);
        }
    }
    let (d, s, r) = (median(direct), median(scripted), median(recorded));
    println!(
        "tool() from a script, {CALLS} calls of the no-op tool, mean per call (median of {REPEATS}):"
    );
    println!(
        "  Rust API (ToolRunner::call)          {:>7.1} µs",
        micros(d)
    );
    println!(
        "  script, no run store                 {:>7.1} µs  (+{:.1} µs)",
        micros(s),
        micros(s.saturating_sub(d))
    );
    println!(
        "  script, recorded in SQLite (the CLI) {:>7.1} µs  (+{:.1} µs)",
        micros(r),
        micros(r.saturating_sub(d))
    );
}

fn launch(root: &Path, cache: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_toolcell"))
        .args(args)
        .current_dir(root)
        .env("TOOLCELL_CACHE_DIR", cache)
        .env("TOOLCELL_DATA_DIR", root.join(".data"))
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    started.elapsed()
}

fn startup(root: &Path, cache: &Path) {
    std::fs::write(root.join("trivial.rhai"), "let x = 40 + 2;\nx\n").unwrap();
    std::fs::write(
        root.join("one_tool.rhai"),
        "tool(\"list_directory\", #{path: \".\"}).entries.len()\n",
    )
    .unwrap();
    launch(root, cache, &["run", "one_tool.rhai"]);
    let cases: [(&str, &[&str]); 3] = [
        ("toolcell --version (process start)", &["--version"]),
        ("toolcell run trivial.rhai", &["run", "trivial.rhai"]),
        (
            "toolcell run (one list_directory call)",
            &["run", "one_tool.rhai"],
        ),
    ];
    println!("start-up, warm component cache, median of {LAUNCHES} launches:");
    for (label, args) in cases {
        let samples: Vec<Duration> = (0..LAUNCHES).map(|_| launch(root, cache, args)).collect();
        println!(
            "  {label:<40} {:>6.1} ms",
            median(samples).as_secs_f64() * 1e3
        );
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
