//! `run_python`, the code cell (see BENCHMARKS.md).
//!
//! `cargo bench -p toolcell --bench code_cell`
//!
//! The tool is built and installed by `tools-code/run_python/install.sh`
//! (componentize-py from `tests/support/guest-toolchains.sh`), then:
//!
//! 1. a warm `print(1)`: in process, the sandbox alone with a warm compile
//!    cache, a fresh instance per call (instantiate, run, drop), as a
//!    long-lived toolcell (agent, `toolcell mcp`, the daemon) calls it; and
//!    a whole `toolcell tools call run_python` process;
//! 2. summing a column of a 10 MB CSV with the `csv` module: a whole
//!    `toolcell tools call run_python` process against `python3 -c` of the
//!    same code (the native CPython), and the call in process.
//!
//! [`ROUNDS`] interleaved rounds; medians.

#[path = "../../tests/support/cargo_component.rs"]
#[allow(
    dead_code,
    reason = "polyglot.rs builds Rust tools with it; this bench does not"
)]
mod cargo_component;
#[path = "support/grant.rs"]
mod grant;
#[path = "../../tests/support/polyglot.rs"]
#[allow(dead_code, reason = "only the toolchains are used here")]
mod polyglot;
#[path = "../../tests/support/setup_script.rs"]
mod setup_script;
#[path = "support/stats.rs"]
mod stats;

use serde_json::{Value, json};
use stats::{median, percentiles};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use toolcell::sandbox::{Allocation, EpochClock, Sandbox, SandboxOptions};
use toolcell::tool::limits::Limits;

/// Interleaved rounds per case.
const ROUNDS: usize = 5;
/// In-process `print(1)` calls per round.
const CALLS: usize = 200;
/// Whole `print(1)` processes per round.
const PROCESSES: usize = 10;
/// The CSV's size (the case).
const CSV_BYTES: usize = 10 << 20;
/// The code that sums the CSV's third column.
const SUM_CODE: &str = "import csv\nwith open('big.csv', newline='') as f:\n    rows = csv.reader(f)\n    next(rows)\n    total = sum(float(row[2]) for row in rows)\nround(total, 2)";

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs `command`; its stdout, checked for success.
fn output(command: &mut Command) -> String {
    let output = command.output().expect("start the process");
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A whole process, timed; its stdout.
fn timed(command: &mut Command) -> (Duration, String) {
    let started = Instant::now();
    let out = output(command);
    (started.elapsed(), out)
}

/// Writes a CSV of about [`CSV_BYTES`]; returns the sum of its third
/// column, rounded as the code rounds it.
fn write_csv(path: &Path) -> f64 {
    let mut text = String::with_capacity(CSV_BYTES + 64);
    text.push_str("id,region,amount\n");
    let mut cents: u64 = 0;
    let mut id = 0u64;
    while text.len() < CSV_BYTES {
        let amount = (id * 7919) % 100_000;
        cents += amount;
        text.push_str(&format!(
            "{id},region-{},{}.{:02}\n",
            id % 13,
            amount / 100,
            amount % 100
        ));
        id += 1;
    }
    std::fs::write(path, text).unwrap();
    cents as f64 / 100.0
}

fn main() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let (data, cache) = (root.join("data"), root.join("cache"));
    let toolcell = env!("CARGO_BIN_EXE_toolcell");

    println!("building and installing run_python with tools-code/run_python/install.sh\n");
    let started = Instant::now();
    output(
        Command::new("bash")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../tools-code/run_python/install.sh"
            ))
            .current_dir(&workspace)
            .env("COMPONENTIZE_PY", &polyglot::toolchains().componentize_py)
            .env("TOOLCELL", toolcell)
            .env("TOOLCELL_DATA_DIR", &data)
            .env("TOOLCELL_CACHE_DIR", &cache),
    );
    let install_time = started.elapsed();
    output(
        Command::new("bash")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../tools-code/run_js/install.sh"
            ))
            .current_dir(&workspace)
            .env(
                "COMPONENTIZE_JS_NODE_MODULES",
                &polyglot::toolchains().js_node_modules,
            )
            .env("TOOLCELL", toolcell)
            .env("TOOLCELL_DATA_DIR", &data)
            .env("TOOLCELL_CACHE_DIR", &cache),
    );
    std::fs::write(
        workspace.join("toolcell.toml"),
        "[tools.run_python]\nenabled = true\n[tools.run_js]\nenabled = true\n",
    )
    .unwrap();
    let expected = write_csv(&workspace.join("big.csv"));
    let wasm = std::fs::read(workspace.join(".toolcell/tools/run_python/tool.wasm")).unwrap();
    let js_wasm = std::fs::read(workspace.join(".toolcell/tools/run_js/tool.wasm")).unwrap();

    let call_tool_process = |tool: &str, code: &str| {
        let mut command = Command::new(toolcell);
        command
            .args(["tools", "call", tool, "--yes", "--args"])
            .arg(json!({ "code": code }).to_string())
            .current_dir(&workspace)
            .env("TOOLCELL_DATA_DIR", &data)
            .env("TOOLCELL_CACHE_DIR", &cache);
        let (took, out) = timed(&mut command);
        let result: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(result["error"], Value::Null, "{result}");
        (took, result)
    };
    let call_process = |code: &str| call_tool_process("run_python", code);
    let native = |program: &str, code: &str| {
        let mut command = Command::new(program);
        command
            .arg(if program == "node" { "-e" } else { "-c" })
            .arg(code)
            .current_dir(&workspace);
        timed(&mut command)
    };
    // The first call compiles nothing (install did), but warms the page cache.
    call_process("print(1)");

    // In process: the sandbox alone, warm cache.
    let sandbox = Sandbox::new(SandboxOptions {
        cache_dir: Some(cache.clone()),
        allocation: Allocation::Pooling,
        ready_ahead: false,
        leave_used_cells_to_exit: false,
        clock: EpochClock::Ticking,
    })
    .unwrap();
    let tool = sandbox.prepare(&wasm).unwrap();
    let js_tool = sandbox.prepare(&js_wasm).unwrap();
    let grant = grant::read_only(
        "run_python",
        Some(&workspace),
        Limits {
            timeout_ms: 60_000,
            memory_mb: 512,
            max_output_bytes: 262_144,
        },
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let in_cell = |tool: &toolcell::sandbox::PreparedTool, code: &str| {
        let args = json!({ "code": code }).to_string();
        let started = Instant::now();
        let outcome = runtime.block_on(sandbox.run(tool, &grant, &args));
        let took = started.elapsed();
        let result = outcome.result.unwrap().to_value().unwrap();
        assert_eq!(result["error"], Value::Null, "{result}");
        (took, result)
    };
    let in_process = |code: &str| in_cell(&tool, code);
    for _ in 0..20 {
        in_process("print(1)");
        in_cell(&js_tool, "console.log(1)");
    }

    let (mut print_p50, mut print_p99, mut print_process) = (Vec::new(), Vec::new(), Vec::new());
    let (mut sum_cell, mut sum_native, mut sum_in_process) = (Vec::new(), Vec::new(), Vec::new());
    let (mut js_p50, mut js_sum, mut js_native) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let samples: Vec<Duration> = (0..CALLS)
            .map(|_| {
                let (took, result) = in_cell(&js_tool, "console.log(1)");
                assert_eq!(result["stdout"], "1\n");
                took
            })
            .collect();
        js_p50.push(percentiles(samples).0);
        let (took, result) = call_tool_process("run_js", JS_SUM_CODE);
        let value: f64 = result["value"].as_str().unwrap().parse().unwrap();
        assert!(
            (value - expected).abs() < 0.01,
            "{value} against {expected}"
        );
        js_sum.push(took);
        let (took, out) = native("node", JS_SUM_CODE_PRINTED);
        assert_eq!(out.trim().parse::<f64>().unwrap(), value);
        js_native.push(took);
        let samples: Vec<Duration> = (0..CALLS)
            .map(|_| {
                let (took, result) = in_process("print(1)");
                assert_eq!(result["stdout"], "1\n");
                took
            })
            .collect();
        let (p50, p99) = percentiles(samples);
        print_p50.push(p50);
        print_p99.push(p99);
        print_process.push(median(
            (0..PROCESSES).map(|_| call_process("print(1)").0).collect(),
        ));
        let (took, result) = call_process(SUM_CODE);
        let value: f64 = result["value"].as_str().unwrap().parse().unwrap();
        assert!(
            (value - expected).abs() < 0.01,
            "{value} against {expected}"
        );
        sum_cell.push(took);
        let (took, out) = native("python3", SUM_CODE_PRINTED);
        assert_eq!(out.trim(), result["value"].as_str().unwrap());
        sum_native.push(took);
        sum_in_process.push(in_process(SUM_CODE).0);
    }

    let csv_mb = std::fs::metadata(workspace.join("big.csv")).unwrap().len() as f64 / 1e6;
    println!(
        "run_python: {:.1} MB component, built and installed in {:.1} s\n",
        wasm.len() as f64 / 1e6,
        install_time.as_secs_f64()
    );
    println!("| case ({ROUNDS} interleaved rounds, medians) | ms |");
    println!("|---|---:|");
    println!(
        "| `print(1)` in process, fresh instance, p50 ({CALLS} calls a round) | {:.2} |",
        ms(median(print_p50))
    );
    println!("| the same, p99 | {:.2} |", ms(median(print_p99)));
    println!(
        "| `print(1)`, a whole `toolcell tools call run_python` process | {:.1} |",
        ms(median(print_process))
    );
    let (cell, native) = (median(sum_cell), median(sum_native));
    println!(
        "| sum a column of a {csv_mb:.1} MB CSV: `toolcell tools call run_python` | {:.0} |",
        ms(cell)
    );
    println!(
        "| the same: `python3 -c` (CPython, native) | {:.0} |",
        ms(native)
    );
    println!(
        "| the same: the call in process | {:.0} |",
        ms(median(sum_in_process))
    );
    let (js_cell, node) = (median(js_sum), median(js_native));
    println!(
        "| `console.log(1)` with run_js in process, fresh instance, p50 | {:.2} |",
        ms(median(js_p50))
    );
    println!(
        "| sum the same column: `toolcell tools call run_js` (split and Number) | {:.0} |",
        ms(js_cell)
    );
    println!(
        "| the same: `node -e` (Node, native, with its JIT) | {:.0} |",
        ms(node)
    );
    println!(
        "\nratio run_python / native CPython (whole processes): {:.2}x",
        cell.as_secs_f64() / native.as_secs_f64()
    );
    println!(
        "ratio run_js / native Node (whole processes): {:.2}x",
        js_cell.as_secs_f64() / node.as_secs_f64()
    );
}

/// The same sum in JavaScript, over `run_js`'s `readText`.
const JS_SUM_CODE: &str = "const lines = readText('big.csv').split('\\n');\nlet total = 0;\nfor (let i = 1; i < lines.length; i++) {\n  if (lines[i]) total += Number(lines[i].split(',')[2]);\n}\nMath.round(total * 100) / 100";

/// [`JS_SUM_CODE`] for `node -e`, reading the file with Node's own API.
const JS_SUM_CODE_PRINTED: &str = "const lines = require('fs').readFileSync('big.csv', 'utf8').split('\\n');\nlet total = 0;\nfor (let i = 1; i < lines.length; i++) {\n  if (lines[i]) total += Number(lines[i].split(',')[2]);\n}\nconsole.log(Math.round(total * 100) / 100)";

/// [`SUM_CODE`] with its last expression printed, for `python3 -c`.
const SUM_CODE_PRINTED: &str = "import csv\nwith open('big.csv', newline='') as f:\n    rows = csv.reader(f)\n    next(rows)\n    total = sum(float(row[2]) for row in rows)\nprint(repr(round(total, 2)))";
