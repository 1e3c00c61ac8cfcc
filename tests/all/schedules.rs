//! Schedules and the daemon.
//!
//! Most tests run the real daemon loop (`schedule::daemon::run`) in this
//! process on a clock the test moves by hand, with real workflows, a real
//! store and real tools: fire times across DST, overlap, catch-up after a
//! downtime, timeouts, retries, reloads and approvals, without waiting for
//! real minutes. The last ones start the `toolcell daemon` binary on a
//! schedule that fires every second.

use crate::harness::Workspace;
use jiff::{SignedDuration, Timestamp};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use toolcell::policy::trust::TrustStore;
use toolcell::sandbox::{Allocation, EpochClock, SandboxOptions};
use toolcell::schedule::DaemonOptions;
use toolcell::schedule::clock::{Clock, ManualClock};
use toolcell::schedule::daemon;
use toolcell::store::{RunSummary, Store};

/// How long a test waits for the daemon to do what it should.
const PATIENCE: Duration = Duration::from_secs(30);

/// A daemon running on a hand-moved clock.
struct TestDaemon {
    clock: Arc<ManualClock>,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
    logs: Arc<Mutex<Vec<serde_json::Value>>>,
    state_dir: std::path::PathBuf,
}

impl TestDaemon {
    fn start(ws: &Workspace, at: &str) -> Self {
        let clock = Arc::new(ManualClock::new(at.parse().unwrap()));
        let stop = CancellationToken::new();
        let logs = Arc::new(Mutex::new(Vec::new()));
        let options = DaemonOptions {
            json_logs: true,
            reload_poll: Duration::from_millis(50),
            log: {
                let logs = logs.clone();
                Arc::new(move |line| {
                    logs.lock()
                        .unwrap()
                        .push(serde_json::from_str(line).unwrap())
                })
            },
            sandbox: SandboxOptions {
                cache_dir: Some(ws.cache.clone()),
                allocation: Allocation::OnDemand,
                ready_ahead: false,
                leave_used_cells_to_exit: false,
                clock: EpochClock::Ticking,
            },
            user_tools: None,
            trust: Some(TrustStore::in_data_dir(&ws.data)),
            profile: None,
        };
        let (file, c, s) = (ws.root.join("toolcell.toml"), clock.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap()
                .block_on(daemon::run(&file, c, s, options))
        });
        let daemon = Self {
            clock,
            stop,
            thread: Some(thread),
            logs,
            state_dir: ws.root.join(".toolcell"),
        };
        daemon.wait_for_log("started");
        daemon
    }

    /// Sets the clock, and waits until the daemon has looked at it.
    fn set(&self, at: &str) {
        self.clock.set(at.parse().unwrap());
        // The daemon logs nothing for an instant without fires; give its
        // loop a moment to wake and handle the time.
        std::thread::sleep(Duration::from_millis(150));
    }

    fn advance(&self, by: SignedDuration) {
        self.clock.advance(by);
        std::thread::sleep(Duration::from_millis(150));
    }

    /// The runs of `schedule`, oldest first, once `done` holds for them.
    fn runs_when(&self, schedule: &str, done: impl Fn(&[RunSummary]) -> bool) -> Vec<RunSummary> {
        let started = Instant::now();
        loop {
            let store = Store::open(&self.state_dir).unwrap();
            let mut runs = store.list_runs(1000, None, Some(schedule)).unwrap();
            runs.reverse();
            if done(&runs) {
                return runs;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "runs of {schedule} never got there: {runs:#?}\nlog: {:#?}",
                self.logs.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_for_log(&self, event: &str) -> serde_json::Value {
        let started = Instant::now();
        loop {
            if let Some(line) = self
                .logs
                .lock()
                .unwrap()
                .iter()
                .rev()
                .find(|l| l["event"] == event)
            {
                return line.clone();
            }
            assert!(
                started.elapsed() < PATIENCE,
                "no `{event}` in the log: {:#?}",
                self.logs.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn logged(&self, event: &str) -> Vec<serde_json::Value> {
        self.logs
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l["event"] == event)
            .cloned()
            .collect()
    }

    fn stop(mut self) {
        self.stop.cancel();
        self.thread.take().unwrap().join().unwrap().unwrap();
    }
}

fn at_ms(text: &str) -> i64 {
    text.parse::<Timestamp>().unwrap().as_millisecond()
}

fn finished(runs: &[RunSummary]) -> bool {
    runs.iter().all(|r| r.status != "running")
}

#[test]
fn fire_times_follow_the_schedule_s_time_zone_across_both_dst_changes() {
    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"night\"\nworkflow = \"job.rhai\"\ncron = \"30 2 * * *\"\ntimezone = \"Europe/Berlin\"\n",
    );
    let d = TestDaemon::start(&ws, "2026-03-28T12:00:00Z");
    // 02:30 does not exist on 29 March in Berlin: it fires at 03:00 CEST.
    d.set("2026-03-29T01:00:01Z");
    d.runs_when("night", |r| r.len() == 1);
    // 25 October: 02:30 CEST, and an hour later 02:30 CET again; once.
    d.set("2026-10-25T00:30:01Z");
    d.runs_when("night", |r| r.len() == 2);
    d.set("2026-10-25T01:30:01Z");
    d.set("2026-10-26T01:30:01Z");
    let runs = d.runs_when("night", |r| r.len() == 3 && finished(r));
    let fired: Vec<i64> = runs.iter().map(|r| r.scheduled_at.unwrap()).collect();
    assert_eq!(
        fired,
        [
            at_ms("2026-03-29T01:00:00Z"),
            at_ms("2026-10-25T00:30:00Z"),
            at_ms("2026-10-26T01:30:00Z")
        ]
    );
    assert!(
        runs.iter()
            .all(|r| r.status == "succeeded" && r.trigger.as_deref() == Some("schedule"))
    );
    // The months between the steps are missed fire times; after 25 October
    // nothing is: the repeated 02:30 was no fire time at all.
    let late_misses: Vec<_> = d
        .logged("missed")
        .into_iter()
        .filter(|m| m["at"].as_str().unwrap() > "2026-10-25T01")
        .collect();
    assert!(late_misses.is_empty(), "{late_misses:?}");
    d.stop();
}

#[test]
fn overlap_skip_queue_and_allow() {
    let ws = Workspace::new();
    ws.write("slow.rhai", "sleep(1500);\n\"done\"\n");
    let mut config = String::new();
    for overlap in ["skip", "queue", "allow"] {
        config.push_str(&format!(
            "[[schedule]]\nname = \"{overlap}\"\nworkflow = \"slow.rhai\"\ncron = \"* * * * *\"\ntimezone = \"UTC\"\noverlap = \"{overlap}\"\n"
        ));
    }
    ws.write("toolcell.toml", &config);
    let d = TestDaemon::start(&ws, "2026-06-01T12:00:30Z");
    d.set("2026-06-01T12:01:00.100Z");
    for name in ["skip", "queue", "allow"] {
        d.runs_when(name, |r| r.len() == 1);
    }
    // The next minute comes while the first runs still sleep.
    d.set("2026-06-01T12:02:00.100Z");
    let skip = d.runs_when("skip", |r| r.len() == 2 && finished(r));
    assert_eq!(skip[0].status, "succeeded");
    assert_eq!(skip[1].status, "skipped");
    assert!(
        skip[1].error.as_deref().unwrap().contains("still running"),
        "{skip:?}"
    );

    let queue = d.runs_when("queue", |r| r.len() == 2 && finished(r));
    assert!(queue.iter().all(|r| r.status == "succeeded"), "{queue:?}");
    assert!(
        queue[1].started_at >= queue[0].ended_at.unwrap(),
        "the queued run starts after the first ends: {queue:?}"
    );
    assert_eq!(queue[1].scheduled_at, Some(at_ms("2026-06-01T12:02:00Z")));

    let allow = d.runs_when("allow", |r| r.len() == 2 && finished(r));
    assert!(allow.iter().all(|r| r.status == "succeeded"), "{allow:?}");
    assert!(
        allow[1].started_at < allow[0].ended_at.unwrap(),
        "the second run starts beside the first: {allow:?}"
    );
    d.stop();
}

#[test]
fn after_a_downtime_catch_up_latest_runs_once_and_none_runs_nothing() {
    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"latest\"\nworkflow = \"job.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\ncatch_up = \"latest\"\n\
         [[schedule]]\nname = \"none\"\nworkflow = \"job.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\n",
    );
    let d = TestDaemon::start(&ws, "2026-06-01T10:30:00Z");
    d.stop();
    // Down from 10:30 to 14:10: 11:00, 12:00, 13:00 and 14:00 were missed.
    let d = TestDaemon::start(&ws, "2026-06-01T14:10:00Z");
    let runs = d.runs_when("latest", |r| r.len() == 1 && finished(r));
    assert_eq!(runs[0].trigger.as_deref(), Some("catch-up"));
    assert_eq!(runs[0].scheduled_at, Some(at_ms("2026-06-01T14:00:00Z")));
    let missed = d.logged("missed");
    assert_eq!(missed.len(), 2, "{missed:?}");
    assert!(missed.iter().all(|m| m["fires"] == 4));
    // The next fire time is an ordinary run for both.
    d.set("2026-06-01T15:00:00.100Z");
    d.runs_when("latest", |r| r.len() == 2);
    let none = d.runs_when("none", |r| r.len() == 1 && finished(r));
    assert_eq!(none[0].trigger.as_deref(), Some("schedule"));
    assert_eq!(none[0].scheduled_at, Some(at_ms("2026-06-01T15:00:00Z")));
    d.stop();
    // Restarted just after: the fire times handled are not run again.
    let d = TestDaemon::start(&ws, "2026-06-01T15:00:00.200Z");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(d.runs_when("latest", finished).len(), 2);
    assert_eq!(d.runs_when("none", finished).len(), 1);
    d.stop();
}

#[test]
fn a_long_downtime_of_a_per_second_schedule_fires_once_and_a_disabled_one_catches_nothing_up() {
    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"often\"\nworkflow = \"job.rhai\"\ncron = \"* * * * * *\"\ntimezone = \"UTC\"\ncatch_up = \"latest\"\n",
    );
    TestDaemon::start(&ws, "2026-06-01T10:00:00.500Z").stop();
    // Six hours down: 21,600 missed seconds, more than one scan holds.
    let d = TestDaemon::start(&ws, "2026-06-01T16:00:30.200Z");
    let runs = d.runs_when("often", |r| r.len() == 1 && finished(r));
    assert_eq!(runs[0].scheduled_at, Some(at_ms("2026-06-01T16:00:30Z")));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(d.runs_when("often", finished).len(), 1, "one run, for now");
    d.stop();

    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    let config = |enabled: bool| {
        format!(
            "[[schedule]]\nname = \"off\"\nworkflow = \"job.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\ncatch_up = \"latest\"\nenabled = {enabled}\n"
        )
    };
    ws.write("toolcell.toml", &config(false));
    let d = TestDaemon::start(&ws, "2026-06-01T10:00:00.500Z");
    d.set("2026-06-01T12:00:00.500Z");
    d.stop();
    ws.write("toolcell.toml", &config(true));
    let d = TestDaemon::start(&ws, "2026-06-01T12:05:00Z");
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        d.runs_when("off", |_| true).is_empty(),
        "the hours it was disabled are not caught up"
    );
    d.stop();
}

#[test]
fn a_run_past_its_timeout_is_stopped_and_recorded_as_timed_out() {
    let ws = Workspace::new();
    ws.write("forever.rhai", "loop { sleep(50); }\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"stuck\"\nworkflow = \"forever.rhai\"\ncron = \"* * * * *\"\ntimezone = \"UTC\"\ntimeout = \"1s\"\n",
    );
    let d = TestDaemon::start(&ws, "2026-06-01T12:00:30Z");
    d.set("2026-06-01T12:01:00.100Z");
    let runs = d.runs_when("stuck", |r| r.len() == 1 && finished(r));
    assert_eq!(runs[0].status, "timed-out", "{runs:?}");
    assert!(runs[0].ended_at.unwrap() - runs[0].started_at < 10_000);
    d.stop();
}

#[test]
fn only_runs_that_changed_nothing_are_retried_with_backoff() {
    let ws = Workspace::new();
    ws.write("flaky.rhai", "fail(\"the server is down\");\n");
    ws.write(
        "half.rhai",
        "tool(\"write_file\", #{path: \"half.txt\", content: \"half\"});\nfail(\"broke after writing\");\n",
    );
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"flaky\"\nworkflow = \"flaky.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\nretries = 2\n\
         [[schedule]]\nname = \"half\"\nworkflow = \"half.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\nretries = 2\napprove = [\"write_file\"]\n",
    );
    let d = TestDaemon::start(&ws, "2026-06-01T11:59:00Z");
    d.set("2026-06-01T12:00:00.100Z");
    d.runs_when("flaky", |r| r.len() == 1 && finished(r));
    d.wait_for_log("retry");
    // The first retry waits 30 s, the second 60 s.
    d.advance(SignedDuration::from_secs(29));
    assert_eq!(
        d.runs_when("flaky", finished).len(),
        1,
        "not before its time"
    );
    d.advance(SignedDuration::from_secs(2));
    d.runs_when("flaky", |r| r.len() == 2 && finished(r));
    let started = Instant::now();
    while d.logged("retry").len() < 2 {
        assert!(
            started.elapsed() < PATIENCE,
            "the second retry was never planned"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    d.advance(SignedDuration::from_secs(58));
    assert_eq!(
        d.runs_when("flaky", finished).len(),
        2,
        "the second retry waits 60 s, not 30"
    );
    d.advance(SignedDuration::from_secs(3));
    let runs = d.runs_when("flaky", |r| r.len() == 3 && finished(r));
    d.advance(SignedDuration::from_secs(600));
    std::thread::sleep(Duration::from_millis(200));
    let runs_after = d.runs_when("flaky", finished);
    assert_eq!(runs_after.len(), 3, "two retries, no more: {runs_after:?}");
    let triggers: Vec<&str> = runs.iter().map(|r| r.trigger.as_deref().unwrap()).collect();
    assert_eq!(triggers, ["schedule", "retry", "retry"]);
    assert!(runs.iter().all(|r| r.status == "failed"));
    assert!(
        runs.iter()
            .all(|r| r.scheduled_at == Some(at_ms("2026-06-01T12:00:00Z"))),
        "retries are for the same fire time"
    );

    let half = d.runs_when("half", |r| r.len() == 1 && finished(r));
    assert_eq!(half[0].status, "failed");
    assert_eq!(ws.read("half.txt"), "half");
    assert!(
        d.logged("not-retried")
            .iter()
            .any(|l| l["schedule"] == "half"),
        "a run that wrote a file is not retried"
    );
    d.stop();
}

#[test]
fn the_approve_list_is_honoured_in_unattended_runs() {
    let ws = Workspace::new();
    ws.write(
        "write.rhai",
        "tool(\"write_file\", #{path: \"out.txt\", content: \"written\"});\n\"ok\"\n",
    );
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"granted\"\nworkflow = \"write.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\napprove = [\"write_file\"]\n\
         [[schedule]]\nname = \"ungranted\"\nworkflow = \"write.rhai\"\ncron = \"30 * * * *\"\ntimezone = \"UTC\"\n",
    );
    let d = TestDaemon::start(&ws, "2026-06-01T11:59:00Z");
    d.set("2026-06-01T12:00:00.100Z");
    let granted = d.runs_when("granted", |r| r.len() == 1 && finished(r));
    assert_eq!(granted[0].status, "succeeded", "{granted:?}");
    assert_eq!(ws.read("out.txt"), "written");
    std::fs::remove_file(ws.root.join("out.txt")).unwrap();

    d.set("2026-06-01T12:30:00.100Z");
    let ungranted = d.runs_when("ungranted", |r| r.len() == 1 && finished(r));
    assert_eq!(ungranted[0].status, "failed");
    assert!(
        !ws.root.join("out.txt").exists(),
        "nothing written without approval"
    );
    let store = Store::open(&ws.root.join(".toolcell")).unwrap();
    let detail = store.run(ungranted[0].id).unwrap().unwrap();
    let call = &detail.tool_calls[0];
    assert_eq!(call.status, "denied");
    assert!(
        call.result
            .as_deref()
            .unwrap()
            .contains("`approve = [\"write_file\"]` in this [[schedule]]"),
        "the denial says how to grant it: {call:?}"
    );
    d.stop();
}

#[test]
fn on_stop_running_runs_get_the_grace_period_then_are_interrupted() {
    let ws = Workspace::new();
    ws.write("long.rhai", "sleep(30000);\n\"done\"\n");
    ws.write("quick.rhai", "sleep(100);\n\"done\"\n");
    ws.write(
        "toolcell.toml",
        "[daemon]\ngrace = \"1s\"\n\
         [[schedule]]\nname = \"long\"\nworkflow = \"long.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\n\
         [[schedule]]\nname = \"quick\"\nworkflow = \"quick.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\n",
    );
    let d = TestDaemon::start(&ws, "2026-06-01T11:59:00Z");
    d.set("2026-06-01T12:00:00.100Z");
    d.runs_when("long", |r| r.len() == 1);
    d.runs_when("quick", |r| r.len() == 1);
    let started = Instant::now();
    d.stop();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped after the grace period"
    );
    let store = Store::open(&ws.root.join(".toolcell")).unwrap();
    let long = &store.list_runs(10, None, Some("long")).unwrap()[0];
    assert_eq!(long.status, "interrupted", "{long:?}");
    let quick = &store.list_runs(10, None, Some("quick")).unwrap()[0];
    assert_eq!(
        quick.status, "succeeded",
        "it finished within the grace: {quick:?}"
    );
}

#[test]
fn a_changed_config_is_reloaded_and_a_broken_one_keeps_the_previous() {
    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    let one = "[[schedule]]\nname = \"a\"\nworkflow = \"job.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\n";
    ws.write("toolcell.toml", one);
    let d = TestDaemon::start(&ws, "2026-06-01T11:30:00Z");
    ws.write(
        "toolcell.toml",
        &format!("{one}[[schedule]]\nname = \"b\"\nworkflow = \"job.rhai\"\ncron = \"15 * * * *\"\ntimezone = \"UTC\"\n"),
    );
    d.wait_for_log("reloaded");
    d.set("2026-06-01T12:00:00.100Z");
    d.runs_when("a", |r| r.len() == 1);
    d.set("2026-06-01T12:15:00.100Z");
    let b = d.runs_when("b", |r| r.len() == 1 && finished(r));
    assert_eq!(b[0].scheduled_at, Some(at_ms("2026-06-01T12:15:00Z")));

    std::thread::sleep(Duration::from_millis(20));
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"a\"\ncron = \"61 * * * *\"\n",
    );
    let failed = d.wait_for_log("reload-failed");
    assert!(
        failed["error"].as_str().unwrap().contains("toolcell.toml:"),
        "{failed}"
    );
    d.set("2026-06-01T13:00:00.100Z");
    d.runs_when("a", |r| r.len() == 2 && finished(r));
    d.set("2026-06-01T13:15:00.100Z");
    d.runs_when("b", |r| r.len() == 2 && finished(r));

    // New times for `a`: they start from now, with nothing "missed".
    let reloads = d.logged("reloaded").len();
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"a\"\nworkflow = \"job.rhai\"\ncron = \"*/5 * * * *\"\ntimezone = \"UTC\"\ncatch_up = \"latest\"\n",
    );
    let started = Instant::now();
    while d.logged("reloaded").len() == reloads {
        assert!(started.elapsed() < PATIENCE, "no reload");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        d.runs_when("a", finished).len(),
        2,
        "no run for 13:05-13:15"
    );
    assert!(d.logged("missed").is_empty(), "{:?}", d.logged("missed"));
    d.set("2026-06-01T13:20:00.100Z");
    let a = d.runs_when("a", |r| r.len() == 3 && finished(r));
    assert_eq!(a[2].scheduled_at, Some(at_ms("2026-06-01T13:20:00Z")));
    d.stop();
}

#[test]
fn a_bad_cron_expression_is_rejected_with_the_field_that_is_wrong() {
    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    ws.write(
        "toolcell.toml",
        "[model]\nname = \"m\"\n\n[[schedule]]\nname = \"bad\"\nworkflow = \"job.rhai\"\ncron = \"0 7 * * 1-8\"\n",
    );
    let run = ws.run(&["schedule", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("toolcell.toml:7:8 at key `schedule.cron`")
            && run.stderr.contains("the day of week field `1-8`")
            && run.stderr.contains("fix:"),
        "{run:?}"
    );
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"bad\"\nworkflow = \"missing.rhai\"\ncron = \"@daily\"\n",
    );
    let run = ws.run(&["daemon"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("workflow `missing.rhai` does not exist"),
        "{run:?}"
    );
}

#[test]
fn schedule_list_shows_the_next_fire_times_and_run_now_is_manual() {
    let ws = Workspace::new();
    ws.write("job.rhai", "print(\"hello\");\nargs.days\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"report\"\nworkflow = \"job.rhai\"\ncron = \"30 7 * * 1-5\"\ntimezone = \"Europe/Berlin\"\nargs = { days = 7 }\n",
    );
    let list = ws.run(&["schedule", "list", "--json", "--count", "5"]);
    assert_eq!(list.code, 0, "{list:?}");
    let schedules = list.json();
    let next = schedules[0]["next"].as_array().unwrap();
    assert_eq!(next.len(), 5);
    assert!(
        next.iter()
            .all(|t| t.as_str().unwrap().contains("07:30:00 CE")),
        "{next:?}"
    );
    let run = ws.run(&["schedule", "run", "report"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("succeeded: \"7\""), "{run:?}");
    let listed = ws
        .run(&["runs", "list", "--schedule", "report", "--json"])
        .json();
    assert_eq!(listed[0]["trigger"], "manual");
    let unknown = ws.run(&["schedule", "run", "nope"]);
    assert_eq!(unknown.code, 1);
    assert!(
        unknown.stderr.contains("the schedules are: report"),
        "{unknown:?}"
    );
}

#[test]
fn schedule_install_writes_a_systemd_user_unit() {
    let mut ws = Workspace::new();
    ws.write("toolcell.toml", "[daemon]\ngrace = \"10s\"\n");
    let config_home = ws.outer.join("config");
    ws.env("XDG_CONFIG_HOME", config_home.to_str().unwrap());
    let run = ws.run(&["schedule", "install"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("systemctl --user enable --now toolcell-ws-"),
        "{run:?}"
    );
    let units: Vec<_> = std::fs::read_dir(config_home.join("systemd/user"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(units.len(), 1);
    let unit = std::fs::read_to_string(units[0].path()).unwrap();
    let config = ws.root.join("toolcell.toml");
    assert!(
        unit.contains(&format!("--config \"{}\" daemon", config.display())),
        "{unit}"
    );
    assert!(
        unit.contains("TimeoutStopSec=40") && unit.contains("WantedBy=default.target"),
        "{unit}"
    );
}

/// `toolcell daemon` in the background, stopped (SIGKILL) when dropped.
struct DaemonProcess(std::process::Child);

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_daemon(ws: &Workspace) -> DaemonProcess {
    DaemonProcess(
        ws.command(&["daemon"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// The recorded runs of `schedule`, newest first (`runs list --json`).
pub fn runs_of(ws: &Workspace, schedule: &str) -> Vec<serde_json::Value> {
    let run = ws.run(&[
        "runs",
        "list",
        "--schedule",
        schedule,
        "--json",
        "--limit",
        "1000",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    run.json().as_array().unwrap().clone()
}

fn wait_runs(
    ws: &Workspace,
    schedule: &str,
    done: impl Fn(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let started = Instant::now();
    loop {
        let runs = runs_of(ws, schedule);
        if done(&runs) {
            return runs;
        }
        assert!(started.elapsed() < PATIENCE, "{runs:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_daemon_binary_runs_a_schedule_every_second_and_stops_on_sigterm() {
    let ws = Workspace::new();
    ws.write("tick.rhai", "print(`tick ${now_ms()}`);\n\"ok\"\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"tick\"\nworkflow = \"tick.rhai\"\ncron = \"* * * * * *\"\n",
    );
    let mut daemon = spawn_daemon(&ws);
    let runs = wait_runs(&ws, "tick", |r| {
        r.iter().filter(|r| r["status"] == "succeeded").count() >= 2
    });
    assert!(
        runs.iter()
            .all(|r| r["trigger"] == "schedule" && r["kind"] == "schedule")
    );

    // Edited while it fires every second: the reload still happens.
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"tick\"\nworkflow = \"tick.rhai\"\ncron = \"* * * * * *\"\n\
         [[schedule]]\nname = \"tock\"\nworkflow = \"tick.rhai\"\ncron = \"* * * * * *\"\n",
    );
    wait_runs(&ws, "tock", |r| {
        r.iter().any(|r| r["status"] == "succeeded")
    });

    // One daemon per workspace.
    let second = ws.run(&["daemon"]);
    assert_eq!(second.code, 1, "{second:?}");
    assert!(
        second.stderr.contains("another toolcell daemon"),
        "{second:?}"
    );

    // SAFETY: sending SIGTERM to our own child.
    unsafe { libc::kill(daemon.0.id() as i32, libc::SIGTERM) };
    let started = Instant::now();
    let status = loop {
        if let Some(status) = daemon.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the daemon did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    let mut out = String::new();
    std::io::Read::read_to_string(daemon.0.stdout.as_mut().unwrap(), &mut out).unwrap();
    assert!(
        out.contains("[tick] run 1 started (schedule") && out.contains("daemon stopped"),
        "{out}"
    );
}

#[test]
fn a_run_cut_off_by_a_killed_daemon_is_interrupted_and_never_replayed() {
    let ws = Workspace::new();
    ws.write("long.rhai", "sleep(30000);\n\"done\"\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"long\"\nworkflow = \"long.rhai\"\ncron = \"* * * * * *\"\ncatch_up = \"latest\"\n",
    );
    let daemon = spawn_daemon(&ws);
    let runs = wait_runs(&ws, "long", |r| r.iter().any(|r| r["status"] == "running"));
    let cut = runs[runs.len() - 1].clone();
    drop(daemon); // SIGKILL
    let after = runs_of(&ws, "long");
    let cut_now = after.iter().find(|r| r["id"] == cut["id"]).unwrap();
    assert_eq!(cut_now["status"], "interrupted", "{after:#?}");

    let _daemon = spawn_daemon(&ws);
    let later = wait_runs(&ws, "long", |r| r.len() > after.len());
    let fire_times: Vec<&serde_json::Value> = later.iter().map(|r| &r["scheduled_at"]).collect();
    let mut unique = fire_times.clone();
    unique.sort_by_key(|v| v.as_i64());
    unique.dedup();
    assert_eq!(
        unique.len(),
        fire_times.len(),
        "no fire time runs twice: {later:#?}"
    );
}

#[test]
fn a_manual_clock_sleeps_until_it_is_moved() {
    let clock = Arc::new(ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let c = clock.clone();
    runtime.block_on(async move {
        let wake = c.sleep_until("2026-01-01T00:01:00Z".parse().unwrap());
        tokio::pin!(wake);
        tokio::select! {
            () = &mut wake => panic!("woke before the clock moved"),
            () = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
        c.advance(SignedDuration::from_secs(60));
        tokio::time::timeout(Duration::from_secs(5), wake)
            .await
            .unwrap();
    });
    assert_eq!(
        clock.now(),
        "2026-01-01T00:01:00Z".parse::<Timestamp>().unwrap()
    );
}

#[test]
fn a_run_whose_external_call_timed_out_is_not_retried() {
    // The server may have done the work before it stopped answering (sent
    // the mail, then hung): running the workflow again could do it twice.
    let ws = Workspace::new();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mcp/misbehaving.mjs"
    );
    let starts = ws.marks().join("starts");
    let marks = ws.marks_grant();
    ws.write("send.rhai", "tool(\"hang__hang\", #{text: \"mail\"});\n");
    ws.write(
        "toolcell.toml",
        &format!(
            "[[schedule]]\nname = \"send\"\nworkflow = \"send.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\nretries = 2\napprove = [\"hang__hang\"]\n\n\
             [[mcp_server]]\nname = \"hang\"\ncommand = \"node\"\nargs = [{script:?}, \"hang\", {starts:?}]\ntimeout = \"1s\"\n{marks}"
        ),
    );
    let d = TestDaemon::start(&ws, "2026-06-01T11:59:00Z");
    d.set("2026-06-01T12:00:00.100Z");
    let runs = d.runs_when("send", |r| r.len() == 1 && finished(r));
    assert_eq!(runs[0].status, "failed", "{runs:?}");
    let store = Store::open(&ws.root.join(".toolcell")).unwrap();
    let call = &store.run(runs[0].id).unwrap().unwrap().tool_calls[0];
    assert_eq!(call.decision.as_deref(), Some("approved"), "{call:?}");
    assert_eq!(call.error_kind.as_deref(), Some("timeout"), "{call:?}");
    d.wait_for_log("not-retried");
    d.advance(SignedDuration::from_secs(600));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(d.runs_when("send", finished).len(), 1, "never retried");
    d.stop();
}

#[test]
fn a_reload_that_widens_waits_for_trust_and_one_that_narrows_applies_at_once() {
    let ws = Workspace::new();
    ws.write("job.rhai", "\"ok\"\n");
    let one = "[[schedule]]\nname = \"a\"\nworkflow = \"job.rhai\"\ncron = \"0 * * * *\"\ntimezone = \"UTC\"\n";
    let two = format!(
        "{one}[[schedule]]\nname = \"b\"\nworkflow = \"job.rhai\"\ncron = \"15 * * * *\"\ntimezone = \"UTC\"\n"
    );
    ws.write("toolcell.toml", &two);
    let d = TestDaemon::start(&ws, "2026-06-01T11:30:00Z");
    // A tool (or anyone) widens it: automatic approval and a new root.
    std::fs::create_dir(ws.root.join("more")).unwrap();
    ws.write_untrusted(
        "toolcell.toml",
        &format!("{two}[[roots]]\npath = \".\"\n[[roots]]\npath = \"more\"\n[tools.write_file]\napproval = \"auto\"\n"),
    );
    // Untrusted, its automatic approval is left out anyway (the log says
    // so); the new root is what would widen.
    let held = d.wait_for_log("reload-held");
    let widens = held["widens"].to_string();
    assert!(widens.contains("more (write)"), "{held}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(d.logged("reload-held").len(), 1, "said once");
    assert!(d.logged("reloaded").is_empty(), "not applied on its own");
    // The user confirms it.
    let trusted = ws.run(&["trust"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    d.wait_for_log("reloaded");
    // Narrowing applies at once, trusted or not.
    ws.write_untrusted("toolcell.toml", one);
    while d.logged("reloaded").len() < 2 {
        std::thread::sleep(Duration::from_millis(20));
    }
    d.set("2026-06-01T12:15:00.100Z");
    std::thread::sleep(Duration::from_millis(200));
    let store = Store::open(&ws.root.join(".toolcell")).unwrap();
    assert!(
        store.list_runs(10, None, Some("b")).unwrap().is_empty(),
        "the schedule taken away does not fire"
    );
}
