//! What confining the programs and MCP servers toolcell starts costs (see
//! BENCHMARKS.md, issue 18).
//!
//! `cargo bench -p toolcell --bench contain`
//!
//! Three figures, each confined against `sandbox = "none"` in the same run,
//! in [`ROUNDS`] interleaved rounds (medians of the rounds' medians, the
//! machines are noisy):
//!
//! 1. **Starting a program**, in process: spawning `/bin/true` and waiting
//!    for it as `run_command` does ([`toolcell::util::child::command`]), bare and
//!    with its confinement prepared (the private folder, the Landlock
//!    ruleset and its rules, the seccomp program) and applied in the child.
//!    The difference is what confinement adds to a `run_command` call.
//! 2. **A whole `toolcell tools call run_command` process** running `true`,
//!    confined and unconfined: the same difference seen from outside, on
//!    top of a process start.
//! 3. **An MCP call after start-up**: `read_text_file` of a 4 KB file on the
//!    reference filesystem server through [`McpServers::call`], the server
//!    confined and not. Confinement is set once, when the server starts;
//!    the call itself should not see it.

#[path = "../../tests/support/mcp_peers.rs"]
mod mcp_peers;
#[path = "../../tests/support/setup_script.rs"]
mod setup_script;
#[path = "support/stats.rs"]
#[allow(dead_code)] // its percentiles: medians are what this bench reports
mod stats;

use stats::median;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toolcell::config::mcp_server::McpServerConfig;
use toolcell::config::{Root, RootAccess};
use toolcell::contain::{Confinement, NetworkAccess};
use toolcell::mcp::client::McpServers;
use toolcell::util::problem::{Document, Table};

/// Interleaved rounds of each figure.
const ROUNDS: usize = 7;
/// Programs started per round, each way.
const SPAWNS: usize = 100;
/// `toolcell` processes per round, each way (each is ~10 ms).
const PROCESSES: usize = 15;
/// MCP calls per round, each way.
const MCP_CALLS: usize = 200;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("page.txt"), "x".repeat(4096)).unwrap();
    println!(
        "confinement: what it adds, confined against sandbox = \"none\"; medians of {ROUNDS} interleaved rounds\n"
    );
    spawning(&workspace);
    whole_calls(dir.path());
    mcp_calls(&workspace);
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn report(what: &str, bare: Vec<Duration>, confined: Vec<Duration>) {
    let (bare, confined) = (median(bare), median(confined));
    let added = confined.saturating_sub(bare);
    println!(
        "{what}\n  unconfined {}   confined {}   added {} ({:.2}x)\n",
        ms(bare),
        ms(confined),
        ms(added),
        confined.as_secs_f64() / bare.as_secs_f64()
    );
}

/// Figure 1: spawn and wait for `/bin/true`, bare and confined.
fn spawning(workspace: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let confinement = Confinement {
        read: vec![workspace.to_path_buf(), "/usr".into()],
        write: vec![workspace.to_path_buf()],
        granted: Vec::new(),
        network: NetworkAccess::None,
        read_only: Vec::new(),
        roots: vec![workspace.to_path_buf()],
    };
    let once = |confined: bool| {
        let started = Instant::now();
        let prepared = confined.then(|| confinement.prepare("`true`", "here").unwrap());
        let mut command = toolcell::util::child::command("/bin/true", libc::SIGKILL);
        command
            .current_dir(workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        if let Some(prepared) = &prepared {
            prepared.apply(&mut command, workspace);
        }
        let status = runtime.block_on(async { command.spawn().unwrap().wait().await.unwrap() });
        assert!(status.success());
        drop(prepared);
        started.elapsed()
    };
    let (mut bare, mut confined) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        bare.push(median((0..SPAWNS).map(|_| once(false)).collect()));
        confined.push(median((0..SPAWNS).map(|_| once(true)).collect()));
    }
    report(
        "1. start and wait for /bin/true (what run_command does)",
        bare,
        confined,
    );
}

/// Figure 2: whole `toolcell tools call run_command` processes.
fn whole_calls(outer: &Path) {
    let config = |sandbox: &str| {
        let folder = outer.join(format!("ws-{sandbox}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("toolcell.toml"),
            format!("[tools.run_command]\nprocess = [\"true\"]\nsandbox = \"{sandbox}\"\n"),
        )
        .unwrap();
        folder
    };
    let data = outer.join("data");
    let toolcell = |folder: &Path, args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_toolcell"))
            .args(args)
            .current_dir(folder)
            .env("TOOLCELL_DATA_DIR", &data)
            .env("TOOLCELL_CACHE_DIR", outer.join("cache"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let (none, confined) = (config("none"), config("confined"));
    for folder in [&none, &confined] {
        toolcell(folder, &["trust"]);
    }
    let call = |folder: &Path| {
        let started = Instant::now();
        toolcell(
            folder,
            &[
                "tools",
                "call",
                "run_command",
                "--args",
                "{\"program\":\"true\"}",
                "--yes",
            ],
        );
        started.elapsed()
    };
    call(&none); // the compile cache, filled once
    let (mut bare, mut contained) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        bare.push(median((0..PROCESSES).map(|_| call(&none)).collect()));
        contained.push(median((0..PROCESSES).map(|_| call(&confined)).collect()));
    }
    report(
        "2. a whole `toolcell tools call run_command` process running `true`",
        bare,
        contained,
    );
}

/// Figure 3: MCP calls on a started server.
fn mcp_calls(workspace: &Path) {
    let script =
        mcp_peers::node_modules().join("@modelcontextprotocol/server-filesystem/dist/index.js");
    let server = |name: &str, sandbox: &str| {
        let text = format!(
            "name = \"{name}\"\ncommand = \"node\"\nargs = [{:?}, \".\"]\nsandbox = \"{sandbox}\"\n",
            script.display().to_string()
        );
        let raw = toml::from_str(&text).unwrap();
        let table = Table {
            document: Document::Config,
            file: Path::new("bench.toml"),
            text: &text,
            span: 0..text.len(),
            name: "mcp_server".into(),
        };
        McpServerConfig::from_raw(raw, &table, workspace).unwrap()
    };
    let configs = [server("bare", "none"), server("kept", "confined")];
    let roots = [Root {
        path: workspace.to_path_buf(),
        mount: ".".into(),
        access: RootAccess::Write,
    }];
    let policy = toolcell::policy::PolicyFiles::default();
    let (servers, started) = McpServers::start(&configs, &roots, &policy).unwrap();
    for s in &started {
        assert!(s.tools.is_ok(), "{}: {:?}", s.server.name, s.tools);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let path = workspace.join("page.txt").display().to_string();
    let call = |name: &str| {
        let arguments = serde_json::json!({ "path": path })
            .as_object()
            .unwrap()
            .clone();
        let started = Instant::now();
        let result = runtime
            .block_on(servers.call(name, "read_text_file", arguments, Duration::from_secs(10)))
            .unwrap();
        assert!(result.to_string().contains("xxxx"), "{result}");
        started.elapsed()
    };
    for name in ["bare", "kept"] {
        for _ in 0..20 {
            call(name);
        }
    }
    let (mut bare, mut confined) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        bare.push(median((0..MCP_CALLS).map(|_| call("bare")).collect()));
        confined.push(median((0..MCP_CALLS).map(|_| call("kept")).collect()));
    }
    report(
        "3. an MCP call after start-up: read_text_file of 4 KB on the reference filesystem server",
        bare,
        confined,
    );
}
