//! Benchmarks of the call path (see BENCHMARKS.md for figures and machine).
//!
//! `cargo bench -p toolcell --bench call [-- FILTER]`
//!
//! 1. host overhead of a call of a no-op tool in a fresh instance (the
//!    sandbox alone: cell, instantiate, call, drop), with the smallest
//!    possible tool and with the `probe` test tool (which imports far more);
//! 2. `read_file` of a 4 KB file through the whole path (registry, schema
//!    validation, policy, instantiate, call, result parsing), against a
//!    native `std::fs::read` of the same file in the same run;
//! 3. each with the pooling and the on-demand instance allocator;
//! 4. `toolcell tools list` wall time with a warm cache, and the first
//!    `tools call` after the wasm changed (a cold compile) against a warm one.
//!
//! The machines are noisy: every in-process case is measured in
//! [`ROUNDS`] interleaved rounds and the median of the rounds' percentiles
//! is reported; compare ratios within one run.

#[path = "../../tests/support/cargo_component.rs"]
mod cargo_component;
#[path = "../../tests/support/fixture.rs"]
mod fixture;
#[path = "support/grant.rs"]
mod grant;
#[path = "support/stats.rs"]
mod stats;

use serde_json::json;
use stats::{median, percentiles};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use toolcell::approval::ApproveAll;
use toolcell::call::dispatch::Dispatcher;
use toolcell::call::runner::ToolRunner;
use toolcell::config::WorkspaceConfig;
use toolcell::registry::Registry;
use toolcell::registry::grant::ToolGrant;
use toolcell::sandbox::{Allocation, EpochClock, PreparedTool, Sandbox, SandboxOptions};
use toolcell::tool::limits::Limits;

/// Calls per case and round, after warm-up.
const CALLS: usize = 2_000;
const WARMUP: usize = 200;
/// Interleaved rounds per case; the median round is reported.
const ROUNDS: usize = 5;
/// Process launches measured per CLI case.
const LAUNCHES: usize = 30;

/// One in-process case: a label and one call.
struct Case<'a> {
    label: String,
    call: Box<dyn FnMut() + 'a>,
    p50s: Vec<Duration>,
    p99s: Vec<Duration>,
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn no_grant() -> ToolGrant {
    grant::read_only(
        "bench",
        None,
        Limits {
            timeout_ms: 10_000,
            memory_mb: 64,
            max_output_bytes: 1 << 20,
        },
    )
}

fn main() {
    // `cargo bench --bench call -- FILTER` runs only the cases whose label
    // contains FILTER (`cargo bench` itself passes `--bench`).
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wanted = |label: &str| filter.as_deref().is_none_or(|f| label.contains(f));

    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    let cache = root.join(".cache");
    let file = root.join("four_kb.txt");
    let line = "toolcell benchmark line of text, sixty-three bytes long......\n";
    std::fs::write(
        &file,
        &line.repeat(4096 / line.len() + 1).as_bytes()[..4096],
    )
    .unwrap();
    let noop_wasm = std::fs::read(&fixture::noop().wasm).unwrap();
    let probe_wasm = std::fs::read(&fixture::probe().wasm).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    struct Setup {
        allocation: Allocation,
        sandbox: Sandbox,
        noop: PreparedTool,
        probe: PreparedTool,
        dispatcher: Dispatcher,
    }
    let setups: Vec<Setup> = [Allocation::Pooling, Allocation::OnDemand]
        .into_iter()
        .map(|allocation| {
            let options = SandboxOptions {
                cache_dir: Some(cache.clone()),
                allocation,
                ready_ahead: false,
                leave_used_cells_to_exit: false,
                clock: EpochClock::Ticking,
            };
            let sandbox = Sandbox::new(options.clone()).unwrap();
            let noop = sandbox.prepare(&noop_wasm).unwrap();
            let probe = sandbox.prepare(&probe_wasm).unwrap();
            let config = WorkspaceConfig::default_for(&root).unwrap();
            let registry = Registry::load(None, &config.workspace_tools_dir());
            let dispatcher = Dispatcher::new(config, registry, options).unwrap();
            Setup {
                allocation,
                sandbox,
                noop,
                probe,
                dispatcher,
            }
        })
        .collect();

    let grant = no_grant();
    let args = json!({"path": "four_kb.txt"});
    let runtime = &runtime;
    let grant = &grant;
    let args = &args;
    let mut cases: Vec<Case> = vec![Case {
        label: "native std::fs::read, 4 KB".into(),
        call: Box::new(|| {
            std::hint::black_box(std::fs::read(&file).unwrap());
        }),
        p50s: Vec::new(),
        p99s: Vec::new(),
    }];
    for setup in &setups {
        let a = setup.allocation;
        cases.push(Case {
            label: format!("no-op tool (minimal), sandbox only ({a:?})"),
            call: Box::new(move || {
                let outcome = runtime.block_on(setup.sandbox.run(&setup.noop, grant, "{}"));
                assert!(outcome.result.is_ok());
            }),
            p50s: Vec::new(),
            p99s: Vec::new(),
        });
        cases.push(Case {
            label: format!("no-op call of the probe tool, sandbox only ({a:?})"),
            call: Box::new(move || {
                let outcome = runtime.block_on(setup.sandbox.run(
                    &setup.probe,
                    grant,
                    r#"{"action":"noop"}"#,
                ));
                assert!(outcome.result.is_ok());
            }),
            p50s: Vec::new(),
            p99s: Vec::new(),
        });
        cases.push(Case {
            label: format!("read_file 4 KB, whole path ({a:?})"),
            call: Box::new(move || {
                let result = runtime.block_on(
                    ToolRunner::unrecorded(&setup.dispatcher, &ApproveAll)
                        .call("read_file", args.clone()),
                );
                assert_eq!(
                    result.value.as_ref().unwrap().to_value().unwrap()["size"],
                    4096
                );
            }),
            p50s: Vec::new(),
            p99s: Vec::new(),
        });
    }
    cases.retain(|case| wanted(&case.label));

    println!(
        "toolcell call-path benchmark: {ROUNDS} rounds x {CALLS} calls per case (after {WARMUP} warm-up calls); median round\n"
    );
    for _ in 0..ROUNDS {
        for case in &mut cases {
            for _ in 0..WARMUP {
                (case.call)();
            }
            let mut samples = Vec::with_capacity(CALLS);
            for _ in 0..CALLS {
                let start = Instant::now();
                (case.call)();
                samples.push(start.elapsed());
            }
            let (p50, p99) = percentiles(samples);
            case.p50s.push(p50);
            case.p99s.push(p99);
        }
    }
    let mut native_p50 = None;
    for case in &cases {
        let (p50, p99) = (median(case.p50s.clone()), median(case.p99s.clone()));
        println!(
            "{:<56} p50 {:>7.1} µs   p99 {:>7.1} µs",
            case.label,
            micros(p50),
            micros(p99)
        );
        if case.label.starts_with("native") {
            native_p50 = Some(p50);
        }
    }
    if let Some(native) = native_p50 {
        for case in cases.iter().filter(|c| c.label.starts_with("read_file")) {
            let ratio = median(case.p50s.clone()).as_secs_f64() / native.as_secs_f64();
            println!("ratio {} / native read, p50: {ratio:.1}x", case.label);
        }
    }

    if wanted("toolcell CLI") {
        println!();
        cli_timings(&root);
    }
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

fn median_ms(samples: Vec<Duration>) -> f64 {
    median(samples).as_secs_f64() * 1e3
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
        "toolcell CLI `tools list`, warm cache: median {:.1} ms over {LAUNCHES} launches",
        median_ms(list)
    );
    let warm: Vec<Duration> = (0..LAUNCHES)
        .map(|_| toolcell(root, &warm_cache, &read))
        .collect();
    println!(
        "toolcell CLI `tools call read_file`, warm cache: median {:.1} ms",
        median_ms(warm)
    );
    let cold: Vec<Duration> = (0..5)
        .map(|i| toolcell(root, &root.join(format!(".cold-cache-{i}")), &read))
        .collect();
    println!(
        "toolcell CLI `tools call read_file`, first start after a wasm change (compiles it): median {:.1} ms over 5",
        median_ms(cold)
    );
}
