//! Tools in Python and JavaScript next to Rust (see BENCHMARKS.md).
//!
//! `cargo bench -p toolcell --bench polyglot`
//!
//! The example tool of `toolcell tools new` (a word count of a 4 KB file)
//! is scaffolded and built in each language with the real toolchains, then:
//!
//! Each language also gets a no-op tool (`call` returns `{}`): the floor of
//! its runtime, apart from the tool's own work.
//!
//! 1. the one-time compile cost: `Sandbox::prepare` with an empty compile
//!    cache (compile + write the cache), and with a warm one (load);
//! 2. the per-call cost with a warm cache: a fresh instance per call
//!    (instantiate, call, drop), the sandbox alone, pooling allocator as the
//!    CLI uses it; against the Rust tool and a native in-process count of
//!    the same file in the same run.
//!
//! `-- FILTER` (e.g. `Python`) measures calls of matching languages only.
//! Calls per round adapt to each tool's speed (about [`ROUND_TARGET`] of
//! work); [`ROUNDS`] interleaved rounds, the median round is reported.

#[path = "../../tests/support/cargo_component.rs"]
mod cargo_component;
#[path = "support/grant.rs"]
mod grant;
#[path = "../../tests/support/polyglot.rs"]
mod polyglot;
#[path = "../../tests/support/setup_script.rs"]
mod setup_script;
#[path = "support/stats.rs"]
mod stats;

use stats::{median, percentiles};
use std::time::{Duration, Instant};
use toolcell::install::scaffold::Lang;
use toolcell::sandbox::{Allocation, EpochClock, Sandbox, SandboxOptions};
use toolcell::tool::limits::Limits;

/// Interleaved rounds per case; the median round is reported.
const ROUNDS: usize = 5;
/// Work per case and round.
const ROUND_TARGET: Duration = Duration::from_secs(2);
/// Warm loads measured per language.
const WARM_LOADS: usize = 5;
/// The no-op tool in each language: `call` returns `{}`.
const NOOP_RUST: &str = r#"wit_bindgen::generate!({ world: "tool-component", path: "wit" });
struct Tool;
impl exports::toolcell::tool::tool::Guest for Tool {
    fn call(_args: String) -> Result<String, exports::toolcell::tool::tool::Error> {
        Ok("{}".into())
    }
}
export!(Tool);
"#;
const NOOP_PYTHON: &str = "from wit_world import exports\n\nclass Tool(exports.Tool):\n    def call(self, args: str) -> str:\n        return \"{}\"\n";
const NOOP_JS: &str = "export const tool = { call(args) { return '{}'; } };\n";

fn show(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

/// The native baseline: the same count, in process.
fn native_count(path: &std::path::Path) -> (usize, usize, usize) {
    let data = std::fs::read(path).unwrap();
    let lines = data.iter().filter(|&&b| b == b'\n').count();
    let words = data
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .count();
    (lines, words, data.len())
}

fn main() {
    // `cargo bench --bench polyglot -- FILTER` measures calls only of the
    // languages whose name contains FILTER (`cargo bench` passes `--bench`).
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let wanted = |label: &str| filter.as_deref().is_none_or(|f| label.contains(f));
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let file = workspace.join("four_kb.txt");
    let line = "toolcell benchmark line of text, sixty-three bytes long......\n";
    std::fs::write(
        &file,
        &line.repeat(4096 / line.len() + 1).as_bytes()[..4096],
    )
    .unwrap();

    println!("building the example tool in each language (toolchains from guest-toolchains.sh)\n");
    // The example, and a no-op (`call` returns "{}") in each language: the
    // floor of its runtime, instantiate + call, apart from the tool's work.
    let langs = [Lang::Rust, Lang::Python, Lang::Js];
    let mut built = Vec::new();
    for lang in langs {
        built.push((
            lang,
            "word count",
            polyglot::scaffold_and_build(lang, &root, "word_count"),
        ));
    }
    for lang in langs {
        let parent = root.join("noop");
        let tool = polyglot::scaffold_and_build(lang, &parent, "noop");
        let (file, source) = match lang {
            Lang::Rust => ("src/lib.rs", NOOP_RUST),
            Lang::Python => ("app.py", NOOP_PYTHON),
            Lang::Js => ("tool.js", NOOP_JS),
        };
        std::fs::write(tool.folder.join(file), source).unwrap();
        built.push((lang, "no-op", polyglot::build(lang, &tool.folder, "noop")));
    }

    println!("| tool | .wasm | build | compile (cold cache) | load (warm cache) |");
    println!("|---|---:|---:|---:|---:|");
    let cache = root.join("cache");
    let mut prepared = Vec::new();
    for (lang, what, tool) in &built {
        let wasm = std::fs::read(&tool.wasm).unwrap();
        let lang_cache = cache.join(format!("{lang:?}-{what}"));
        let options = SandboxOptions {
            cache_dir: Some(lang_cache),
            allocation: Allocation::Pooling,
            ready_ahead: false,
            leave_used_cells_to_exit: false,
            clock: EpochClock::Ticking,
        };
        let cold_sandbox = Sandbox::new(options.clone()).unwrap();
        let started = Instant::now();
        cold_sandbox.prepare(&wasm).unwrap();
        let cold = started.elapsed();
        let warm: Vec<Duration> = (0..WARM_LOADS)
            .map(|_| {
                let sandbox = Sandbox::new(options.clone()).unwrap();
                let started = Instant::now();
                sandbox.prepare(&wasm).unwrap();
                started.elapsed()
            })
            .collect();
        println!(
            "| {lang:?} {what} | {:.1} MB | {:.1} s | {:.2} s | {} |",
            wasm.len() as f64 / 1e6,
            tool.build_time.as_secs_f64(),
            cold.as_secs_f64(),
            show(median(warm)),
        );
        let sandbox = Sandbox::new(options).unwrap();
        let tool = sandbox.prepare(&wasm).unwrap();
        prepared.push((*lang, *what, sandbox, tool));
    }

    let grant = grant::read_only(
        "word_count",
        Some(&workspace),
        Limits {
            timeout_ms: 10_000,
            memory_mb: 256,
            max_output_bytes: 4096,
        },
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let args = r#"{"path": "four_kb.txt"}"#;
    let expected = native_count(&file);

    struct Case<'a> {
        label: String,
        call: Box<dyn FnMut() + 'a>,
        calls: usize,
        p50s: Vec<Duration>,
        p99s: Vec<Duration>,
    }
    let mut cases: Vec<Case> = vec![Case {
        label: "native count in process".into(),
        call: Box::new(|| {
            std::hint::black_box(native_count(&file));
        }),
        calls: 0,
        p50s: Vec::new(),
        p99s: Vec::new(),
    }];
    for (lang, what, sandbox, tool) in &prepared {
        if !wanted(&format!("{lang:?}")) {
            continue;
        }
        let (runtime, grant) = (&runtime, &grant);
        let noop = *what == "no-op";
        cases.push(Case {
            label: format!("{lang:?} {what}, fresh instance per call"),
            call: Box::new(move || {
                let outcome = runtime.block_on(sandbox.run(tool, grant, args));
                let result = outcome.result.unwrap().to_value().unwrap();
                if !noop {
                    assert_eq!(result["bytes"], expected.2 as u64);
                }
            }),
            calls: 0,
            p50s: Vec::new(),
            p99s: Vec::new(),
        });
    }
    // Calls per round: about ROUND_TARGET of each case's work.
    for case in &mut cases {
        let started = Instant::now();
        let mut n = 0;
        while started.elapsed() < ROUND_TARGET / 4 || n < 3 {
            (case.call)();
            n += 1;
        }
        let each = started.elapsed() / n;
        case.calls = (ROUND_TARGET.as_nanos() / each.as_nanos().max(1)).clamp(20, 5_000) as usize;
    }
    for _ in 0..ROUNDS {
        for case in &mut cases {
            let mut samples = Vec::with_capacity(case.calls);
            for _ in 0..case.calls {
                let started = Instant::now();
                (case.call)();
                samples.push(started.elapsed());
            }
            let (p50, p99) = percentiles(samples);
            case.p50s.push(p50);
            case.p99s.push(p99);
        }
    }
    println!(
        "\n| per call (warm cache, {ROUNDS} rounds, median round) | calls/round | p50 | p99 | p50 / Rust tool |"
    );
    println!("|---|---:|---:|---:|---:|");
    let rust_p50 = cases
        .iter()
        .find(|c| c.label.starts_with("Rust word count"))
        .map_or(Duration::from_micros(1), |c| median(c.p50s.clone()));
    for case in &cases {
        let p50 = median(case.p50s.clone());
        println!(
            "| {} | {} | {} | {} | {:.1}x |",
            case.label,
            case.calls,
            show(p50),
            show(median(case.p99s.clone())),
            p50.as_secs_f64() / rust_p50.as_secs_f64()
        );
    }
}
