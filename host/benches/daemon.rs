//! Benchmarks of `toolcell daemon` with 100 schedules (see BENCHMARKS.md).
//!
//! `cargo bench -p toolcell --bench daemon`
//!
//! 1. Idle: 100 schedules that fire once a year. After start-up, the CPU
//!    time the daemon's threads use in 10 s (from /proc/PID/task/*/schedstat,
//!    in nanoseconds), and its resident memory.
//! 2. Spread: 100 schedules each firing every 10 s, ten of them in each
//!    second. Fire latency: from the scheduled instant to the workflow's
//!    first instruction (`print(now_ms())`, read back from the run's log),
//!    p50 / p99 / max over 300 runs; and the resident memory after.
//! 3. Bursts, the worst case: all 100 firing at the same instant every
//!    10 s, three times; the same figures.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use toolcell::store::Store;

#[path = "support/process.rs"]
mod process;
use process::{cpu_time, rss};

const SCHEDULES: usize = 100;
const IDLE_WINDOW: Duration = Duration::from_secs(10);
const BURSTS: usize = 3;

fn main() {
    let idle = tempfile::tempdir().unwrap();
    let (cpu, rss) = idle_daemon(idle.path());
    println!("{SCHEDULES} schedules, idle (none due):");
    println!(
        "  CPU time in {} s: {:.3} ms ({:.4}% of one core)",
        IDLE_WINDOW.as_secs(),
        cpu.as_secs_f64() * 1e3,
        cpu.as_secs_f64() / IDLE_WINDOW.as_secs_f64() * 100.0
    );
    println!("  resident memory: {:.1} MB", rss as f64 / 1e6);

    let spread = tempfile::tempdir().unwrap();
    let (latencies, rss) = fires(spread.path(), |i| format!("{}-59/10 * * * * *", i % 10));
    report("each firing every 10 s, 10 per second", &latencies, rss);
    let burst = tempfile::tempdir().unwrap();
    let (latencies, rss) = fires(burst.path(), |_| "*/10 * * * * *".into());
    report("all firing together every 10 s", &latencies, rss);
}

fn report(case: &str, latencies: &[i64], rss: u64) {
    let pick = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    println!("{SCHEDULES} schedules {case}, {} runs:", latencies.len());
    println!(
        "  fire latency (scheduled instant -> first instruction): p50 {} ms, p99 {} ms, max {} ms",
        pick(0.5),
        pick(0.99),
        latencies[latencies.len() - 1]
    );
    println!("  resident memory after: {:.1} MB", rss as f64 / 1e6);
}

/// Writes a workspace with [`SCHEDULES`] schedules, schedule `i` on `cron(i)`.
fn workspace(root: &Path, cron: impl Fn(usize) -> String) {
    std::fs::write(root.join("job.rhai"), "print(`${now_ms()}`);\n\"ok\"\n").unwrap();
    let mut config = String::new();
    for i in 0..SCHEDULES {
        config.push_str(&format!(
            "[[schedule]]\nname = \"s{i}\"\nworkflow = \"job.rhai\"\ncron = \"{}\"\ntimezone = \"UTC\"\n",
            cron(i)
        ));
    }
    std::fs::write(root.join("toolcell.toml"), config).unwrap();
}

fn start(root: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_toolcell"))
        .arg("daemon")
        .current_dir(root)
        .env("TOOLCELL_CACHE_DIR", root.join("cache"))
        .env("TOOLCELL_DATA_DIR", root.join("data"))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start toolcell daemon")
}

fn stop(mut child: Child) {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
}

fn idle_daemon(root: &Path) -> (Duration, u64) {
    workspace(root, |_| "0 3 1 1 *".into());
    let child = start(root);
    std::thread::sleep(Duration::from_secs(2));
    let before = cpu_time(child.id());
    std::thread::sleep(IDLE_WINDOW);
    let used = cpu_time(child.id()) - before;
    let memory = rss(child.id());
    stop(child);
    (used, memory)
}

fn fires(root: &Path, cron: impl Fn(usize) -> String) -> (Vec<i64>, u64) {
    workspace(root, cron);
    let child = start(root);
    let store_dir = root.join(".toolcell");
    let started = Instant::now();
    // Wait for BURSTS fires of every schedule.
    loop {
        std::thread::sleep(Duration::from_millis(500));
        if let Ok(store) = Store::open(&store_dir) {
            let runs = store.list_runs(10_000, Some("succeeded"), None).unwrap();
            if runs.len() >= SCHEDULES * BURSTS {
                break;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the bursts did not complete"
        );
    }
    let memory = rss(child.id());
    stop(child);
    let store = Store::open(&store_dir).unwrap();
    let mut latencies: Vec<i64> = store
        .list_runs(10_000, Some("succeeded"), None)
        .unwrap()
        .iter()
        .filter_map(|run| {
            let detail = store.run(run.id).ok()??;
            let first: i64 = detail.logs.first()?.1.parse().ok()?;
            Some(first - run.scheduled_at?)
        })
        .collect();
    latencies.sort();
    (latencies, memory)
}
