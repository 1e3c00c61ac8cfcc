//! Benchmarks of the call path (see BENCHMARKS.md for figures and machine).
//!
//! `cargo bench -p toolcell --bench call`
//!
//! 1. host overhead of a no-op tool call in a fresh instance (sandbox only);
//! 2. `read_file` of a 4 KB file through the whole path (registry, schema
//!    validation, policy, instantiate, call, result parsing), against a
//!    native `std::fs::read` of the same file in the same run;
//! 3. both with the pooling and the on-demand instance allocator;
//! 4. `toolcell tools list` wall time with a warm cache, and the first
//!    `tools call` after the wasm changed (cold compile) against a warm one.
//!
//! Percentiles of per-call wall times; the machines are noisy, so compare
//! ratios within one run.

#[path = "../../tests/support/fixture.rs"]
mod fixture;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use toolcell::approval::{ApprovalMode, ApproveAll};
use toolcell::config::WorkspaceConfig;
use toolcell::dispatch::Dispatcher;
use toolcell::grant::{ApprovalSource, ToolGrant};
use toolcell::limits::Limits;
use toolcell::registry::Registry;
use toolcell::sandbox::{Allocation, Sandbox, SandboxOptions};

/// Calls measured per in-process case, after warm-up.
const CALLS: usize = 5_000;
const WARMUP: usize = 200;
/// Process launches measured per CLI case.
const LAUNCHES: usize = 30;

struct Stats {
    p50: Duration,
    p99: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        p50: at(0.50),
        p99: at(0.99),
    }
}

fn report(label: &str, s: &Stats) {
    println!(
        "{label:<58} p50 {:>9.1} µs   p99 {:>9.1} µs",
        micros(s.p50),
        micros(s.p99)
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn measure(mut f: impl FnMut()) -> Stats {
    for _ in 0..WARMUP {
        f();
    }
    let mut samples = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let start = Instant::now();
        f();
        samples.push(start.elapsed());
    }
    stats(samples)
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    let cache = root.join(".cache");
    let file = root.join("four_kb.txt");
    let line = "toolcell benchmark line of text, sixty-three bytes long......\n";
    std::fs::write(&file, &line.repeat(4096 / line.len() + 1).as_bytes()[..4096]).unwrap();
    let probe = fixture::probe();
    let probe_wasm = std::fs::read(&probe.wasm).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    println!("toolcell call-path benchmark: {CALLS} calls per case after {WARMUP} warm-up calls\n");
    let native = measure(|| {
        std::hint::black_box(std::fs::read(&file).unwrap());
    });
    report("native std::fs::read, 4 KB", &native);

    let mut read_file_p50 = Vec::new();
    for allocation in [Allocation::Pooling, Allocation::OnDemand] {
        let options = SandboxOptions {
            cache_dir: Some(cache.clone()),
            allocation,
        };
        let sandbox = Sandbox::new(options.clone()).unwrap();
        let prepared = sandbox.prepare(&probe_wasm).unwrap();
        let grant = ToolGrant {
            enabled: true,
            approval: ApprovalMode::Auto,
            approval_source: ApprovalSource::Manifest,
            preopens: Vec::new(),
            env: Vec::new(),
            network: Vec::new(),
            limits: Limits {
                timeout_ms: 10_000,
                memory_mb: 64,
                max_output_bytes: 1 << 20,
            },
        };
        let noop = measure(|| {
            let outcome = runtime.block_on(sandbox.run(&prepared, &grant, r#"{"action":"noop"}"#));
            assert!(outcome.result.is_ok());
        });
        report(
            &format!("no-op tool, fresh instance ({allocation:?})"),
            &noop,
        );

        let config = WorkspaceConfig::default_for(&root).unwrap();
        let registry = Registry::load(None, &config.workspace_tools_dir());
        let dispatcher = Dispatcher::new(config, registry, options).unwrap();
        let args = json!({"path": "four_kb.txt"});
        let read = measure(|| {
            let outcome = runtime.block_on(dispatcher.call("read_file", &args, &ApproveAll));
            assert_eq!(outcome.result.as_ref().unwrap()["size"], 4096);
        });
        report(
            &format!("read_file 4 KB, whole path ({allocation:?})"),
            &read,
        );
        read_file_p50.push((allocation, read.p50));
    }
    for (allocation, p50) in read_file_p50 {
        println!(
            "ratio read_file / native, p50 ({allocation:?}): {:.1}x",
            p50.as_secs_f64() / native.p50.as_secs_f64()
        );
    }

    println!();
    cli_timings(&root);
}

fn toolcell(cwd: &Path, cache: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_toolcell"))
        .args(args)
        .current_dir(cwd)
        .env("TOOLCELL_CACHE_DIR", cache)
        .env("TOOLCELL_DATA_DIR", cwd.join(".data"))
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    start.elapsed()
}

fn median_ms(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

fn cli_timings(root: &Path) {
    let warm_cache = root.join(".cli-cache");
    let read = [
        "tools",
        "call",
        "read_file",
        "--args",
        r#"{"path":"four_kb.txt"}"#,
    ];
    toolcell(root, &warm_cache, &read);
    let list: Vec<Duration> = (0..LAUNCHES)
        .map(|_| toolcell(root, &warm_cache, &["tools", "list"]))
        .collect();
    println!(
        "`toolcell tools list`, warm cache: median {:.1} ms over {LAUNCHES} launches",
        median_ms(list)
    );
    let warm: Vec<Duration> = (0..LAUNCHES)
        .map(|_| toolcell(root, &warm_cache, &read))
        .collect();
    println!(
        "`toolcell tools call read_file`, warm cache: median {:.1} ms",
        median_ms(warm)
    );
    let cold: Vec<Duration> = (0..5)
        .map(|i| {
            let fresh = root.join(format!(".cold-cache-{i}"));
            toolcell(root, &fresh, &read)
        })
        .collect();
    println!(
        "`toolcell tools call read_file`, first start after a wasm change (compile): median {:.1} ms over 5",
        median_ms(cold)
    );
}
