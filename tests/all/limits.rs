//! A tool that loops, allocates without end, floods its output, returns too
//! much or traps is stopped with a clear error, and the next call works.

use crate::harness::Workspace;
use serde_json::json;
use std::time::Duration;
use toolcell::approval::ApproveAll;
use toolcell::call::dispatch::Dispatcher;
use toolcell::call::runner::ToolRunner;
use toolcell::config::WorkspaceConfig;
use toolcell::registry::Registry;
use toolcell::sandbox::{Allocation, EpochClock, SandboxOptions};

fn probe_workspace() -> Workspace {
    let ws = Workspace::new();
    ws.install_probe();
    ws
}

/// Long enough for any of these calls to have ended on a loaded machine:
/// past it, the deadline did not work.
const HANG: Duration = Duration::from_secs(60);

#[test]
fn an_endless_loop_stops_at_the_deadline() {
    let ws = probe_workspace();
    let (code, envelope) = ws.call_within("probe", json!({"action": "loop"}), HANG);
    assert_eq!(code, 3, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "timeout", "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2000 ms"),
        "{envelope}"
    );
    let elapsed = envelope["duration_ms"].as_f64().unwrap();
    assert!(elapsed >= 1900.0, "stopped too early: {elapsed} ms");
}

/// The time a call spends waiting in the host counts toward its deadline:
/// a call that sleeps most of its time away and then spins is stopped at
/// the deadline, not a whole timeout after it started spinning.
#[test]
fn time_waited_in_the_host_counts_toward_the_deadline() {
    let ws = probe_workspace();
    let (code, envelope) = ws.call_within(
        "probe",
        json!({"action": "sleep_then_loop", "sleep_ms": 1500}),
        HANG,
    );
    assert_eq!(code, 3, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "timeout", "{envelope}");
    // The probe's timeout is 2000 ms: stopped after its sleep and before a
    // second timeout could have passed in its loop.
    let elapsed = envelope["duration_ms"].as_f64().unwrap();
    assert!(
        (1500.0..3500.0).contains(&elapsed),
        "ended after {elapsed} ms: {envelope}"
    );
}

#[test]
fn endless_allocation_stops_at_the_memory_limit() {
    let ws = probe_workspace();
    let (code, envelope) = ws.call("probe", json!({"action": "alloc"}));
    assert_eq!(code, 3, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "memory-limit", "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("32 MiB"),
        "{envelope}"
    );
}

#[test]
fn a_trap_is_an_error_with_the_panic_message() {
    let ws = probe_workspace();
    let (code, envelope) = ws.call("probe", json!({"action": "trap"}));
    assert_eq!(code, 3, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "trap", "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("probe asked to trap"),
        "{envelope}"
    );
}

#[test]
fn printed_megabytes_are_capped() {
    let ws = probe_workspace();
    let run = ws.run(&[
        "tools",
        "call",
        "probe",
        "--yes",
        "--logs",
        "--args",
        r#"{"action": "print", "bytes": 4194304}"#,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("\"printed\": 4194304"), "{run:?}");
    // 64 KiB kept per stream, the rest counted.
    assert!(
        run.stderr.len() < 200 * 1024,
        "logs not capped: {} bytes",
        run.stderr.len()
    );
    assert!(
        run.stderr
            .contains("stdout truncated: 4128768 more bytes dropped"),
        "{}",
        &run.stderr[run.stderr.len() - 300..]
    );
}

#[test]
fn an_oversized_result_is_refused() {
    let ws = probe_workspace();
    let (code, envelope) = ws.call("probe", json!({"action": "big_result", "bytes": 100000}));
    assert_eq!(code, 3, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "output-too-large", "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("65536"),
        "{envelope}"
    );
}

/// The same engine and instance pool go on serving after every kind of
/// failure: each failing call is followed by a working one, in one process.
#[tokio::test(flavor = "current_thread")]
async fn the_next_call_succeeds_after_each_failure() {
    let ws = probe_workspace();
    for allocation in [Allocation::Pooling, Allocation::OnDemand] {
        let config = WorkspaceConfig::default_for(&ws.root).unwrap();
        let registry = Registry::load(Some(&ws.data.join("tools")), &config.workspace_tools_dir());
        let options = SandboxOptions {
            cache_dir: Some(ws.cache.clone()),
            allocation,
            ready_ahead: false,
            leave_used_cells_to_exit: false,
            clock: EpochClock::Ticking,
        };
        let dispatcher = Dispatcher::new(config, registry, options).unwrap();
        assert!(
            dispatcher.registry().get("probe").is_some(),
            "probe not installed: {:?}",
            dispatcher.registry().problems()
        );
        let failures = [
            (json!({"action": "loop"}), "timeout"),
            (json!({"action": "alloc"}), "memory-limit"),
            (json!({"action": "trap"}), "trap"),
            (
                json!({"action": "big_result", "bytes": 100000}),
                "output-too-large",
            ),
            (json!({"action": "fail"}), "not-found"),
        ];
        let runner = ToolRunner::unrecorded(&dispatcher, &ApproveAll);
        for (args, kind) in failures {
            let outcome = runner.call("probe", args.clone()).await;
            let error = outcome.error.expect("the call should fail");
            assert_eq!(error.kind.as_str(), kind, "{args}: {}", error.message);
            let next = runner
                .call("probe", json!({"action": "echo", "n": 1}))
                .await;
            assert_eq!(
                next.value.expect("the next call works").to_value().unwrap()["n"],
                1,
                "after {kind} ({allocation:?})"
            );
        }
        // Memory does not carry over either: many allocating calls in a row.
        for _ in 0..5 {
            let outcome = runner.call("probe", json!({"action": "alloc"})).await;
            assert_eq!(outcome.error.unwrap().kind.as_str(), "memory-limit");
        }
    }
}
