//! Latency of reading a 4 KB file through MCP, over stdio and over
//! Streamable HTTP (see BENCHMARKS.md).
//!
//! `cargo bench -p toolcell --bench mcp`
//!
//! What an MCP client waits for, from writing a `tools/call` line to having
//! parsed the whole answer, against two servers in the same run:
//!
//! 1. `toolcell mcp --approve read_file` (the release binary), tool
//!    `read_file`: every call validated, checked against the policy, run in a
//!    fresh sandbox and recorded as a run in the workspace's SQLite store;
//!    The same server over Streamable HTTP (`--http 127.0.0.1:0`, with
//!    its bearer token): one keep-alive connection, each call a POST whose
//!    answer is read until it has come, once with a client as lean as the
//!    stdio one (the figure compared with stdio) and once through reqwest
//!    (`support/mcp_http.rs`);
//! 2. the reference Node server `@modelcontextprotocol/server-filesystem`
//!    (installed and cached by `tests/support/mcp-peers.sh`), tool
//!    `read_text_file`, a plain `fs.readFile` in the server's process.
//!
//! The client is the bench itself: JSON-RPC 2.0, one message per line,
//! stdout read through a `BufReader`, one connection per server, strictly
//! sequential calls. Every answer is checked (no `isError`, the file's
//! marker in the text, the whole 4 KB in the structured content), so a
//! refusal can never pass for a fast call.
//!
//! To split toolcell's figure, the same run also measures:
//!
//! - a `ping` round trip on each connection: the transport and the MCP
//!   SDK's dispatch with no work, the floor under any call;
//! - the server's own time per call, as it reports it in the answer's
//!   `_meta` (validation, policy, the cell, the call, the result);
//! - in process, with the library: `ToolRunner::run` (validation, policy,
//!   instantiation, the call; no transport, no store), once building each
//!   cell in the call and once with cells built ahead (as `toolcell mcp`
//!   does), and a call through `ToolRunner` with its run recorded in a
//!   `Store` as it goes (how a call that may change something is recorded;
//!   a read-only one is recorded after its answer, off the path).
//!
//! The client's own part, parsing the answer (larger from toolcell: its
//! text is the JSON result, the file escaped inside it), is measured too.
//!
//! Subtracting: call − server side ≈ the transport, the MCP SDK and the
//! answer's serialisation; runner+store − dispatcher ≈ the store.
//!
//! The machines are noisy: the two servers are measured in [`ROUNDS`]
//! alternating rounds of [`CALLS`] calls each, and each percentile is the
//! median of the rounds' (with the range of the p50s).

#[path = "support/mcp_http.rs"]
mod mcp_http;
#[path = "../../tests/support/mcp_peers.rs"]
mod mcp_peers;
#[path = "../../tests/support/setup_script.rs"]
mod setup_script;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use toolcell::approval::{Approver, StandingApprovals};
use toolcell::call::dispatch::Dispatcher;
use toolcell::call::runner::{Record, Recording, Request, ToolRunner};
use toolcell::call::view::Silent;
use toolcell::config::WorkspaceConfig;
use toolcell::llm::ToolCall;
use toolcell::registry::Registry;
use toolcell::sandbox::{Allocation, EpochClock, SandboxOptions};
use toolcell::serve::mcp::{BUILT_AHEAD_KEY, SERVER_TIME_KEY};
use toolcell::store::{RunKind, RunStatus, Store};

/// Measured calls per case and round, sequential on one connection (the
/// issue's count).
const CALLS: usize = 1_000;
/// Rounds of [`CALLS`] per server, alternating between the servers so that
/// both see the same spells of noise.
const ROUNDS: usize = 5;
/// Unmeasured calls first: the component compiles (or loads from the cache)
/// on toolcell's first call, and Node's JIT warms up on the reference's.
const WARMUP: usize = 100;
/// The size of the file read (the case).
const FILE_SIZE: usize = 4096;
/// The file starts with this; every answer must contain it.
const MARKER: &str = "toolcell-mcp-bench-marker-5e1d";
/// The client's read buffer: a whole answer (about 9 KB) in one read, as a
/// pipe delivers it (the 8 KiB default would take two).
const READ_BUFFER: usize = 64 << 10;
/// A pause between in-process calls with cells built ahead: about what an
/// answer and the next request take on the wire.
const WIRE_GAP: Duration = Duration::from_micros(100);
/// The protocol version the client asks for.
const PROTOCOL: &str = "2025-06-18";

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let workspace = base.join("workspace");
    std::fs::create_dir(&workspace).unwrap();
    let cache = base.join("cache");
    let data = base.join("data");
    write_file(&workspace.join("file.txt"));

    // 1. toolcell's server.
    let mut toolcell = Client::start(
        Command::new(env!("CARGO_BIN_EXE_toolcell"))
            .args(["mcp", "--approve", "read_file"])
            .current_dir(&workspace)
            .env("TOOLCELL_CACHE_DIR", &cache)
            .env("TOOLCELL_DATA_DIR", &data),
        "toolcell",
    );
    let toolcell_call = call_line("read_file", json!({"path": "file.txt"}));
    toolcell.warm_up(&toolcell_call);

    // 1b. The same server over Streamable HTTP.
    let mut toolcell_http = mcp_http::HttpClient::start(
        Command::new(env!("CARGO_BIN_EXE_toolcell"))
            .args(["mcp", "--http", "127.0.0.1:0", "--approve", "read_file"])
            .current_dir(&workspace)
            .env("TOOLCELL_CACHE_DIR", &cache)
            .env("TOOLCELL_DATA_DIR", &data),
        PROTOCOL,
    );
    for _ in 0..WARMUP {
        toolcell_http.timed_call(&toolcell_call, check);
        toolcell_http.timed_call_through_library(&toolcell_call, check);
    }

    // 2. The reference server.
    let script = mcp_peers::node_modules()
        .join("@modelcontextprotocol/server-filesystem/dist/index.js")
        .canonicalize()
        .expect("server-filesystem is installed");
    let mut reference = Client::start(
        Command::new("node")
            .arg(&script)
            .arg(&workspace)
            .current_dir(&workspace),
        "secure-filesystem-server",
    );
    let reference_call = call_line(
        "read_text_file",
        json!({"path": workspace.join("file.txt").display().to_string()}),
    );
    reference.warm_up(&reference_call);

    let mut toolcell_rounds = Vec::new();
    let mut http_rounds = Vec::new();
    let mut http_library_rounds = Vec::new();
    let mut reference_rounds = Vec::new();
    for _ in 0..ROUNDS {
        toolcell_rounds.push(Stats::of(toolcell.calls(&toolcell_call)));
        http_rounds.push(Stats::of(
            (0..CALLS)
                .map(|_| toolcell_http.timed_call(&toolcell_call, check))
                .collect(),
        ));
        http_library_rounds.push(Stats::of(
            (0..CALLS)
                .map(|_| toolcell_http.timed_call_through_library(&toolcell_call, check))
                .collect(),
        ));
        reference_rounds.push(Stats::of(reference.calls(&reference_call)));
    }
    let http_body_bytes = toolcell_http.last_body.len();
    let http_pings = toolcell_http.pings(WARMUP, CALLS);
    let http_floor = toolcell_http.http_floor(WARMUP, CALLS);
    drop(toolcell_http);
    let toolcell_server_side = std::mem::take(&mut toolcell.server_side);
    assert_eq!(
        toolcell_server_side.len(),
        ROUNDS * CALLS,
        "every answer says its server-side time"
    );
    let toolcell_built_ahead = toolcell.built_ahead;
    let (toolcell_bytes, toolcell_parse) = toolcell.parse_cost();
    let toolcell_pings = toolcell.pings();
    let (reference_bytes, reference_parse) = reference.parse_cost();
    let reference_pings = reference.pings();
    drop(toolcell);
    drop(reference);

    // 3. In process: the same work without the transport.
    let local = in_process(&workspace, &cache, &base.join("state"));

    println!(
        "MCP stdio, read_file of a {FILE_SIZE}-byte file: {ROUNDS} rounds of {CALLS} sequential calls per server on one connection, after {WARMUP} warm-up calls\n"
    );
    println!(
        "{:<58} {:>9} {:>9} {:>9} {:>9}",
        "case (µs)", "p50", "p90", "p99", "max"
    );
    let toolcell_stats = Stats::median_of(&toolcell_rounds);
    let http_stats = Stats::median_of(&http_rounds);
    let http_library_stats = Stats::median_of(&http_library_rounds);
    let reference_stats = Stats::median_of(&reference_rounds);
    for (label, stats) in [
        ("toolcell mcp, tools/call read_file", &toolcell_stats),
        (
            &format!("toolcell mcp --http, the same ({http_body_bytes} B body)"),
            &http_stats,
        ),
        (
            "toolcell mcp --http, the same through reqwest",
            &http_library_stats,
        ),
        (
            "server-filesystem (Node), tools/call read_text_file",
            &reference_stats,
        ),
        (
            "toolcell mcp, server side (handler: validate .. result)",
            &Stats::of(toolcell_server_side),
        ),
        (
            "toolcell mcp, ping (transport + rmcp floor)",
            &Stats::of(toolcell_pings),
        ),
        ("toolcell mcp --http, ping", &Stats::of(http_pings)),
        (
            "toolcell mcp --http, a 404 (the floor of any HTTP request)",
            &Stats::of(http_floor),
        ),
        ("server-filesystem, ping", &Stats::of(reference_pings)),
        (
            &format!("client: parsing toolcell's answer ({toolcell_bytes} B)"),
            &Stats::of(toolcell_parse),
        ),
        (
            &format!("client: parsing the reference's answer ({reference_bytes} B)"),
            &Stats::of(reference_parse),
        ),
        (
            "in process: ToolRunner::run (no transport, no store)",
            &Stats::of(local.dispatcher),
        ),
        (
            "in process: the same, cells built ahead (as the server)",
            &Stats::of(local.dispatcher_ahead),
        ),
        (
            "in process: ToolRunner + run recorded in Store as it goes",
            &Stats::of(local.recorded),
        ),
    ] {
        println!(
            "{label:<58} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            micros(stats.p50),
            micros(stats.p90),
            micros(stats.p99),
            micros(stats.max)
        );
    }
    let p50_range = |rounds: &[Stats]| {
        let p50s = rounds.iter().map(|r| micros(r.p50));
        let (low, high) = p50s.fold((f64::MAX, 0f64), |(l, h), v| (l.min(v), h.max(v)));
        format!("{low:.1}–{high:.1}")
    };
    println!(
        "\np50 over the {ROUNDS} rounds: toolcell {} µs, toolcell --http {} µs (through reqwest {} µs), server-filesystem {} µs",
        p50_range(&toolcell_rounds),
        p50_range(&http_rounds),
        p50_range(&http_library_rounds),
        p50_range(&reference_rounds)
    );
    println!(
        "toolcell calls run in a cell built ahead: {toolcell_built_ahead} of {}",
        ROUNDS * CALLS
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "ratio toolcell / server-filesystem: p50 {:.2}x, p99 {:.2}x",
        ratio(toolcell_stats.p50, reference_stats.p50),
        ratio(toolcell_stats.p99, reference_stats.p99)
    );
    println!(
        "ratio toolcell over HTTP / over stdio: p50 {:.2}x, p99 {:.2}x",
        ratio(http_stats.p50, toolcell_stats.p50),
        ratio(http_stats.p99, toolcell_stats.p99)
    );
}

/// [`FILE_SIZE`] bytes of text lines, starting with [`MARKER`].
fn write_file(path: &Path) {
    let line = "toolcell benchmark line of text, sixty-three bytes long......\n";
    let mut text = format!("{MARKER}\n");
    while text.len() < FILE_SIZE {
        text.push_str(line);
    }
    text.truncate(FILE_SIZE);
    std::fs::write(path, text).unwrap();
}

/// The params of a `tools/call`, as they go on the wire (the id is added per call).
fn call_line(tool: &str, arguments: Value) -> Value {
    json!({"name": tool, "arguments": arguments})
}

/// A minimal MCP client over a child's stdio.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
    /// What the server said it spent on each timed call (toolcell only).
    server_side: Vec<Duration>,
    /// Timed calls the server ran in a cell built ahead (toolcell only).
    built_ahead: usize,
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Client {
    /// Starts the server and opens the session; `name` is the server's
    /// `serverInfo.name`, checked.
    fn start(command: &mut Command, name: &str) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start the {name} server: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::with_capacity(READ_BUFFER, child.stdout.take().unwrap());
        let mut client = Self {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 0,
            server_side: Vec::new(),
            built_ahead: 0,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "toolcell-bench", "version": "1"}}),
        );
        assert_eq!(init["serverInfo"]["name"], name, "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        client
    }

    /// Writes one message (a line) in one write, as MCP clients do: a
    /// message written in two pieces wakes the server twice.
    fn send(&mut self, message: &str) {
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message.as_bytes());
        line.push(b'\n');
        self.stdin.write_all(&line).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next request's text and id.
    fn next(&mut self, method: &str, params: &Value) -> (String, u64) {
        self.next_id += 1;
        let id = self.next_id;
        let message =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        (message, id)
    }

    /// Reads lines until the response to `id`, skipping the server's
    /// notifications and requests; returns its `result`.
    fn answer(&mut self, id: u64) -> Value {
        loop {
            self.line.clear();
            let n = self.stdout.read_line(&mut self.line).unwrap();
            assert!(n > 0, "the server closed its stdout");
            let message: Value = serde_json::from_str(&self.line)
                .unwrap_or_else(|e| panic!("not JSON-RPC: {:?}: {e}", self.line));
            if message.get("method").is_none() && message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message
                    .get("result")
                    .cloned()
                    .unwrap_or_else(|| panic!("no result: {message}"));
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let (message, id) = self.next(method, &params);
        self.send(&message);
        self.answer(id)
    }

    /// One timed `tools/call`: from the write to the parsed answer. The
    /// answer is checked after the clock stops.
    fn timed_call(&mut self, params: &Value) -> Duration {
        let (message, id) = self.next("tools/call", params);
        let start = Instant::now();
        self.send(&message);
        let result = self.answer(id);
        let elapsed = start.elapsed();
        check(&result);
        if let Some(us) = result["_meta"][SERVER_TIME_KEY].as_u64() {
            self.server_side.push(Duration::from_micros(us));
        }
        if result["_meta"][BUILT_AHEAD_KEY] == true {
            self.built_ahead += 1;
        }
        elapsed
    }

    fn warm_up(&mut self, params: &Value) {
        for _ in 0..WARMUP {
            self.timed_call(params);
        }
        self.server_side.clear();
        self.built_ahead = 0;
    }

    /// [`CALLS`] timed calls (their server-side times are kept too).
    fn calls(&mut self, params: &Value) -> Vec<Duration> {
        (0..CALLS).map(|_| self.timed_call(params)).collect()
    }

    /// The size of the last answer read, and [`CALLS`] timings of parsing
    /// it again: the client's own share of each call's figure.
    fn parse_cost(&self) -> (usize, Vec<Duration>) {
        let samples = (0..CALLS)
            .map(|_| {
                let start = Instant::now();
                let message: Value = serde_json::from_str(&self.line).unwrap();
                let elapsed = start.elapsed();
                std::hint::black_box(message);
                elapsed
            })
            .collect();
        (self.line.len(), samples)
    }

    /// [`CALLS`] timed `ping` round trips (after a few unmeasured ones).
    fn pings(&mut self) -> Vec<Duration> {
        let mut samples = Vec::with_capacity(CALLS);
        for i in 0..WARMUP + CALLS {
            let (message, id) = self.next("ping", &json!({}));
            let start = Instant::now();
            self.send(&message);
            let result = self.answer(id);
            let elapsed = start.elapsed();
            assert!(result.is_object(), "ping: {result}");
            if i >= WARMUP {
                samples.push(elapsed);
            }
        }
        samples
    }
}

/// A `tools/call` result that really read the file.
fn check(result: &Value) {
    assert_ne!(result["isError"], true, "the call failed: {result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(MARKER),
        "the file's text is missing: {result}"
    );
    let content = result["structuredContent"]["content"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(content.len(), FILE_SIZE, "not the whole file: {result}");
}

/// The in-process figures, each [`CALLS`] after [`WARMUP`].
struct InProcess {
    /// `ToolRunner::run` on a current-thread runtime, each cell built in
    /// the call.
    dispatcher: Vec<Duration>,
    /// The same with cells built ahead by the sandbox's keeper.
    dispatcher_ahead: Vec<Duration>,
    /// A call through `ToolRunner` with its run recorded as it goes.
    recorded: Vec<Duration>,
}

fn in_process(workspace: &Path, cache: &Path, state: &Path) -> InProcess {
    let dispatcher_with = |ready_ahead| {
        let config = WorkspaceConfig::default_for(workspace).unwrap();
        let registry = Registry::load(None, &config.workspace_tools_dir());
        let options = SandboxOptions {
            // Where the server keeps them (`TOOLCELL_CACHE_DIR/components`).
            cache_dir: Some(cache.join("components")),
            allocation: Allocation::Pooling,
            ready_ahead,
            leave_used_cells_to_exit: false,
            clock: EpochClock::Ticking,
        };
        Dispatcher::new(config, registry, options).unwrap()
    };
    let dispatcher = dispatcher_with(false);
    let dispatcher_ahead = dispatcher_with(true);
    // What the server is granted with `--approve read_file`.
    let approver = StandingApprovals {
        all: false,
        tools: ["read_file".to_string()].into_iter().collect(),
        ask: None,
        grant_hint: "--approve {tool}",
        granted_as: "--approve",
    };
    let store = Store::open(state).unwrap();
    let args = json!({"path": "file.txt"});
    // As `toolcell mcp` builds its runtime (host/src/cli/mcp.rs).
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let measure = |call: &mut dyn FnMut(u64) -> Duration| {
        (0..(WARMUP + CALLS) as u64)
            .map(call)
            .skip(WARMUP)
            .collect::<Vec<_>>()
    };
    let direct = |dispatcher: &Dispatcher| {
        let start = Instant::now();
        let result = current.block_on(
            ToolRunner::unrecorded(dispatcher, &approver).call("read_file", args.clone()),
        );
        let elapsed = start.elapsed();
        check_value(&result.value.as_ref().unwrap().to_value().unwrap());
        elapsed
    };
    let dispatcher_samples = measure(&mut |_| direct(&dispatcher));
    let ahead_samples = measure(&mut |_| {
        // The time an answer and the next request spend on the wire, in
        // which the keeper readies the next cell.
        std::thread::sleep(WIRE_GAP);
        direct(&dispatcher_ahead)
    });
    let recorded_samples = measure(&mut |n| {
        let start = Instant::now();
        let text = current.block_on(recorded_call(&dispatcher, &store, &approver, n, &args));
        let elapsed = start.elapsed();
        assert!(text.contains(MARKER), "{text}");
        elapsed
    });
    InProcess {
        dispatcher: dispatcher_samples,
        dispatcher_ahead: ahead_samples,
        recorded: recorded_samples,
    }
}

/// A `read_file` result with the whole file.
fn check_value(value: &Value) {
    let content = value["content"].as_str().unwrap_or_default();
    assert!(
        content.len() == FILE_SIZE && content.starts_with(MARKER),
        "{value}"
    );
}

/// One call as `ToolServer::call` (host/src/serve/mcp.rs) makes one that
/// may change something, less the MCP types: a run of its own and its tool
/// call recorded in the store as it goes, both ends committed; returns the
/// answer's text.
async fn recorded_call(
    dispatcher: &Dispatcher,
    store: &Store,
    approver: &dyn Approver,
    n: u64,
    args: &Value,
) -> String {
    let run = store
        .start_run(RunKind::Mcp, "mcp: read_file", None)
        .unwrap();
    let runner = ToolRunner {
        dispatcher,
        approver,
        record: Record::InRun(Recording { store, run }),
        result_limit: None,
    };
    let call = ToolCall {
        id: format!("mcp_{n}"),
        name: "read_file".into(),
        arguments: args.to_string(),
    };
    let result = runner
        .run(
            &call,
            Request::Run(args.clone()),
            &mut Silent,
            &CancellationToken::new(),
        )
        .await;
    let status = if result.value.is_some() {
        RunStatus::Succeeded
    } else {
        RunStatus::Failed
    };
    let error = result.error.as_ref().map(|e| e.message.as_str());
    store.finish_run(run, status, None, error).unwrap();
    let value = result.value.unwrap_or_else(|| panic!("{}", result.content));
    check_value(&value.to_value().unwrap());
    value.as_str().to_string()
}

struct Stats {
    p50: Duration,
    p90: Duration,
    p99: Duration,
    max: Duration,
}

impl Stats {
    /// Each percentile the median of the rounds' (max: the largest).
    fn median_of(rounds: &[Stats]) -> Self {
        let median = |pick: fn(&Stats) -> Duration| {
            let mut values: Vec<Duration> = rounds.iter().map(pick).collect();
            values.sort();
            values[values.len() / 2]
        };
        Self {
            p50: median(|r| r.p50),
            p90: median(|r| r.p90),
            p99: median(|r| r.p99),
            max: rounds.iter().map(|r| r.max).max().unwrap_or_default(),
        }
    }

    fn of(mut samples: Vec<Duration>) -> Self {
        samples.sort();
        let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
        Self {
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            max: samples[samples.len() - 1],
        }
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
