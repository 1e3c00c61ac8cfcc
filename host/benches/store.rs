//! The run store in PostgreSQL against SQLite (see BENCHMARKS.md).
//!
//! `cargo bench -p toolcell --bench store`   (needs PostgreSQL's binaries:
//! Debian's `postgresql` package; a throwaway cluster is started here)
//!
//! 1. Recording a call, as a tool call is recorded on its path: the call's
//!    row written as it starts and updated as it ends
//!    (`start_tool_call` + `finish_tool_call`), in-process, on the same
//!    machine. Rounds of [`CALLS`] calls alternate between the two stores;
//!    p50 and p99 of each, and PostgreSQL's p50 minus SQLite's.
//! 2. A daemon idle on each store (schedules that fire once a year): the
//!    CPU time its threads use in [`IDLE_WINDOW`] after start-up; with
//!    PostgreSQL it looks at the shared store every 2 s (runs of daemons
//!    that died, fires queued behind other daemons' runs).

#[path = "../../tests/support/pg_server.rs"]
#[allow(dead_code)] // its TLS server: this bench measures the store on this machine
mod pg_server;
#[path = "support/process.rs"]
#[allow(dead_code)] // its resident memory: CPU time is what this bench reports
mod process;
#[path = "support/stats.rs"]
#[allow(dead_code)] // its median: percentiles are what this bench reports
mod stats;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toolcell::store::{DecisionRecord, PgTarget, RunKind, Store};

const CALLS: usize = 500;
const ROUNDS: usize = 6;
const IDLE_WINDOW: Duration = Duration::from_secs(20);

fn main() {
    let server = pg_server::PgServer::start();
    let url = server.database("bench");
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(dir.path()).unwrap();
    let postgres = Store::open_postgres(&PgTarget {
        url: url.clone(),
        password: None,
        ca_file: None,
    })
    .unwrap();

    let (mut on_sqlite, mut on_postgres) = (Vec::new(), Vec::new());
    // One round each to warm up (statements prepared, pages cached).
    record_calls(&sqlite, 50);
    record_calls(&postgres, 50);
    for _ in 0..ROUNDS {
        on_sqlite.extend(record_calls(&sqlite, CALLS));
        on_postgres.extend(record_calls(&postgres, CALLS));
    }
    let (sqlite_p50, sqlite_p99) = stats::percentiles(on_sqlite);
    let (pg_p50, pg_p99) = stats::percentiles(on_postgres);
    println!(
        "recording a call (start + finish), {} calls each, {ROUNDS} interleaved rounds:",
        CALLS * ROUNDS
    );
    println!("  SQLite      p50 {sqlite_p50:?}  p99 {sqlite_p99:?}");
    println!("  PostgreSQL  p50 {pg_p50:?}  p99 {pg_p99:?}");
    println!(
        "  PostgreSQL adds {:.0} µs at p50 ({:.2}x)",
        (pg_p50.as_secs_f64() - sqlite_p50.as_secs_f64()) * 1e6,
        pg_p50.as_secs_f64() / sqlite_p50.as_secs_f64()
    );
    drop(postgres);

    let local = idle_daemon("");
    let shared = idle_daemon(&format!("[store]\nurl = \"{url}\"\n"));
    println!(
        "a daemon idle (one schedule, due once a year), CPU time in {} s:",
        IDLE_WINDOW.as_secs()
    );
    for (store, used) in [("SQLite", local), ("PostgreSQL", shared)] {
        println!(
            "  {store:<10}  {:.2} ms ({:.3}% of one core)",
            used.as_secs_f64() * 1e3,
            used.as_secs_f64() / IDLE_WINDOW.as_secs_f64() * 100.0
        );
    }
}

/// Records `calls` tool calls in one run of `store`: each call's time.
fn record_calls(store: &Store, calls: usize) -> Vec<Duration> {
    let run = store.start_run(RunKind::Workflow, "bench", None).unwrap();
    let decided = DecisionRecord {
        decision: "auto",
        by: Some("grant: the tool's default (auto)"),
        at: None,
    };
    let result = format!(
        "{{\"path\":\"notes.md\",\"content\":\"{}\"}}",
        "x".repeat(400)
    );
    (0..calls)
        .map(|i| {
            let started = Instant::now();
            let row = store
                .start_tool_call(
                    run,
                    &format!("call_{i}"),
                    "read_file",
                    "{\"path\":\"notes.md\"}",
                )
                .unwrap();
            store
                .finish_tool_call(
                    row,
                    &decided,
                    "done",
                    &result,
                    None,
                    Duration::from_micros(300),
                )
                .unwrap();
            started.elapsed()
        })
        .collect()
}

/// The CPU time a daemon with `store` (a `[store]` table, or none) uses
/// while idle.
fn idle_daemon(store: &str) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("job.rhai"), "\"ok\"\n").unwrap();
    std::fs::write(
        root.join("toolcell.toml"),
        format!("{store}[[schedule]]\nname = \"yearly\"\nworkflow = \"job.rhai\"\ncron = \"0 3 1 1 *\"\ntimezone = \"UTC\"\n"),
    )
    .unwrap();
    let command = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolcell"));
        command
            .args(args)
            .current_dir(root)
            .env("TOOLCELL_CACHE_DIR", root.join("cache"))
            .env("TOOLCELL_DATA_DIR", root.join("data"))
            .stdout(Stdio::null());
        command
    };
    // A `[store]` needs the config trusted.
    assert!(command(&["trust"]).status().unwrap().success());
    let mut child = command(&["daemon"])
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let before = process::cpu_time(child.id());
    std::thread::sleep(IDLE_WINDOW);
    let used = process::cpu_time(child.id()) - before;
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    used
}
