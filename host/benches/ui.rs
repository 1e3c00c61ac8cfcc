//! What the page (`toolcell ui`) costs (issue 23; see BENCHMARKS.md).
//!
//! `cargo bench -p toolcell --bench ui`
//!
//! A run of 500 calls (each a `write_file` with its diff kept for undo) is
//! recorded, `toolcell ui` serves it, and:
//! 1. its page is asked for 50 times over HTTP on 127.0.0.1: median and
//!    p90 wall time from the request to the last byte, against the
//!    page's style sheet (the server's floor) and `toolcell runs show` of
//!    the same run (the command line's text of it, a whole process);
//! 2. the server's CPU time over 10 s idle, with no page open and with the
//!    run's page open (its live events look at the store every 100 ms);
//! 3. its resident memory after all that.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toolcell::store::{ChangeRecord, DecisionRecord, RunKind, Store};

#[path = "support/process.rs"]
mod process;
use process::{cpu_time, rss};

const CALLS: usize = 500;
const REQUESTS: usize = 50;
const IDLE_WINDOW: Duration = Duration::from_secs(10);

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    record_run(&root);
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolcell"))
        .args(["ui", "--port", "0"])
        .current_dir(&root)
        .env("TOOLCELL_DATA_DIR", root.join("data"))
        .env("TOOLCELL_CACHE_DIR", root.join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut said = BufReader::new(server.stdout.take().unwrap());
    said.read_line(&mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap();
    let (base, token) = url.split_once("/?token=").unwrap();
    let address = base.trim_start_matches("http://").to_string();
    let cookie = session_cookie(&address, token);

    let (page, bytes) = timed(REQUESTS, || get(&address, "/runs/1", &cookie));
    let (css, _) = timed(REQUESTS, || get(&address, "/static/app.css", &cookie));
    let (cli, _) = timed(10, || {
        let out = Command::new(env!("CARGO_BIN_EXE_toolcell"))
            .args(["runs", "show", "1"])
            .current_dir(&root)
            .env("TOOLCELL_DATA_DIR", root.join("data"))
            .output()
            .unwrap();
        out.stdout.len()
    });
    println!("a run of {CALLS} calls, {REQUESTS} requests each:");
    println!(
        "  GET /runs/1 ({:.0} KB): p50 {:.2} ms, p90 {:.2} ms",
        bytes as f64 / 1e3,
        ms(page.0),
        ms(page.1)
    );
    println!(
        "  GET /static/app.css (the floor): p50 {:.2} ms, p90 {:.2} ms",
        ms(css.0),
        ms(css.1)
    );
    println!(
        "  toolcell runs show 1 (a process, text): p50 {:.2} ms, p90 {:.2} ms",
        ms(cli.0),
        ms(cli.1)
    );

    let pid = server.id();
    let before = cpu_time(pid);
    std::thread::sleep(IDLE_WINDOW);
    let idle = cpu_time(pid) - before;
    // A page open: its live events, read on a connection of their own.
    let mut events = std::net::TcpStream::connect(&address).unwrap();
    write!(
        events,
        "GET /api/runs/1/events HTTP/1.1\r\nHost: {address}\r\nCookie: {cookie}\r\n\r\n"
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_time(pid);
    std::thread::sleep(IDLE_WINDOW);
    let watched = cpu_time(pid) - before;
    drop(events);
    let memory = rss(pid);
    println!(
        "  idle {} s: {:.2} ms CPU ({:.3}% of a core); with the run's page open: {:.2} ms ({:.3}%)",
        IDLE_WINDOW.as_secs(),
        ms(idle),
        idle.as_secs_f64() / IDLE_WINDOW.as_secs_f64() * 100.0,
        ms(watched),
        watched.as_secs_f64() / IDLE_WINDOW.as_secs_f64() * 100.0
    );
    println!("  resident memory after: {:.1} MB", memory as f64 / 1e6);
    let _ = server.kill();
    let _ = server.wait();
}

/// A recorded run of [`CALLS`] `write_file` calls, each with what it
/// replaced kept (a file of 20 lines), so each card shows a diff.
fn record_run(root: &Path) {
    let store = Store::open(&root.join(".toolcell")).unwrap();
    let run = store
        .start_run(RunKind::Workflow, "bench.rhai", None)
        .unwrap();
    let before: String = (0..20)
        .map(|i| format!("line {i} of the old text\n"))
        .collect();
    for i in 0..CALLS {
        let path = format!("notes/file-{i}.md");
        let content = before.replace("old", "new");
        let arguments = serde_json::json!({"path": path, "content": content}).to_string();
        let row = store
            .start_tool_call(run, &format!("c{i}"), "write_file", &arguments)
            .unwrap();
        store
            .add_change(&ChangeRecord {
                run,
                call_row: row,
                kind: "file".into(),
                path: path.clone(),
                partner: None,
                before_state: "sha256".into(),
                before: Some(before.clone().into_bytes()),
                after_state: "sha256".into(),
                partner_after_state: None,
            })
            .unwrap();
        let decided = DecisionRecord {
            decision: "approved",
            by: Some("grant: --approve write_file"),
            at: Some(0),
        };
        let result = format!(
            "{{\"path\":\"{path}\",\"bytes_written\":{},\"created\":false,\"sha256\":\"{}\"}}",
            content.len(),
            "0".repeat(64)
        );
        store
            .finish_tool_call(
                row,
                &decided,
                "done",
                &result,
                None,
                Duration::from_millis(3),
            )
            .unwrap();
    }
    store
        .finish_run(
            run,
            toolcell::store::RunStatus::Succeeded,
            Some("done"),
            None,
        )
        .unwrap();
}

/// The cookie the page sets when its printed address is opened (its name
/// and value are the page's own, not the token).
fn session_cookie(address: &str, token: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET /?token={token} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
        .lines()
        .find_map(|line| line.strip_prefix("set-cookie: "))
        .and_then(|cookie| cookie.split(';').next())
        .unwrap_or_else(|| panic!("no cookie in {answer}"))
        .to_string()
}

/// One GET with the cookie, read to its end: the body's length.
fn get(address: &str, path: &str, cookie: &str) -> usize {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer[..200.min(answer.len())])
    );
    answer.len()
}

/// (p50, p90) of `rounds` runs of `f`, and what the last returned.
fn timed(rounds: usize, mut f: impl FnMut() -> usize) -> ((Duration, Duration), usize) {
    let mut times = Vec::with_capacity(rounds);
    let mut last = 0;
    for _ in 0..rounds {
        let started = Instant::now();
        last = f();
        times.push(started.elapsed());
    }
    times.sort();
    let pick = |q: f64| times[((rounds - 1) as f64 * q).round() as usize];
    ((pick(0.5), pick(0.9)), last)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
