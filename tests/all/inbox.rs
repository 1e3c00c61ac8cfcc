//! The inbox: calls of runs nobody watches, parked for a person to decide
//! from another process (`toolcell approvals`, `approve`, `deny`), their
//! timeout, and a run whose waiting process is killed.

use crate::harness::Workspace;
use std::process::Child;
use std::time::{Duration, Instant};

/// How long a test waits for a call to be parked or a run to end.
const PATIENCE: Duration = Duration::from_secs(60);

fn schedule(wait: &str) -> String {
    format!(
        "[[schedule]]\nname = \"nightly\"\nworkflow = \"w.rhai\"\ncron = \"0 3 * * *\"\nwait_for_approval = \"{wait}\"\n"
    )
}

/// A workflow that writes `out.txt`, and says what became of the call.
const WRITES: &str = r#"
let said = "";
try {
    tool("write_file", #{path: "out.txt", content: "hello\n"});
    said = "written";
} catch (e) {
    said = `refused: ${e.message}`;
}
print(said);
said
"#;

/// Starts `toolcell ARGS` in the workspace, not waited for.
fn start(ws: &Workspace, args: &[&str]) -> Child {
    ws.command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The first waiting call's id, once one is parked.
fn parked_id(ws: &Workspace) -> i64 {
    let started = Instant::now();
    loop {
        let listed = ws.run(&["approvals", "--json"]);
        assert_eq!(listed.code, 0, "{listed:?}");
        if let Some(id) = listed.json()[0]["id"].as_i64() {
            return id;
        }
        assert!(started.elapsed() < PATIENCE, "no call was parked");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn finished(child: Child) -> (i32, String) {
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned()
            + String::from_utf8_lossy(&output.stderr).as_ref(),
    )
}

fn exported_call(ws: &Workspace, run: &str) -> serde_json::Value {
    let export = ws.run(&["runs", "export", run]);
    export
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|line| line["type"] == "tool_call")
        .unwrap_or_else(|| panic!("no call in {export:?}"))
}

#[test]
fn a_scheduled_call_waits_shows_its_change_and_is_approved_from_another_process() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", &schedule("60s"));
    ws.write("w.rhai", WRITES);
    let run = start(&ws, &["schedule", "run", "nightly"]);
    let id = parked_id(&ws);
    // What is listed is what the prompt would show: the call and its diff.
    let listed = ws.run(&["approvals"]);
    assert!(
        listed.stdout.contains("`write_file`, waiting"),
        "{listed:?}"
    );
    assert!(listed.stdout.contains("+hello"), "{listed:?}");
    assert!(
        listed.stdout.contains(&format!("toolcell approve {id}")),
        "{listed:?}"
    );
    let runs = ws.run(&["runs", "list", "--json"]);
    assert_eq!(runs.json()[0]["status"], "waiting", "{runs:?}");
    assert!(!ws.root.join("out.txt").exists());

    let approved = ws.run(&["approve", &id.to_string()]);
    assert_eq!(approved.code, 0, "{approved:?}");
    let (code, said) = finished(run);
    assert_eq!(code, 0, "{said}");
    assert_eq!(ws.read("out.txt"), "hello\n");
    let call = exported_call(&ws, "1");
    assert_eq!(call["decision"], "approved", "{call}");
    assert_eq!(call["decided_by"], "person (toolcell approve)", "{call}");
    // Decided once: a second answer is refused, saying so.
    let again = ws.run(&["deny", &id.to_string()]);
    assert_eq!(again.code, 1, "{again:?}");
    assert!(
        again.stderr.contains("decided already (approved)"),
        "{again:?}"
    );
}

#[test]
fn a_denial_reaches_the_run_with_its_reason_and_a_timeout_refuses_in_band() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", &schedule("60s"));
    ws.write("w.rhai", WRITES);
    let run = start(&ws, &["schedule", "run", "nightly"]);
    let id = parked_id(&ws);
    let denied = ws.run(&["deny", &id.to_string(), "--reason", "not tonight"]);
    assert_eq!(denied.code, 0, "{denied:?}");
    let (code, said) = finished(run);
    assert_eq!(code, 0, "{said}");
    let runs = ws.run(&["runs", "show", "1", "--json"]);
    assert!(runs.stdout.contains("not tonight"), "{runs:?}");
    assert!(!ws.root.join("out.txt").exists());

    // Nobody answers: refused when the wait runs out, and the run goes on.
    ws.write("toolcell.toml", &schedule("1s"));
    let started = Instant::now();
    let run = ws.run(&["schedule", "run", "nightly"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(started.elapsed() < PATIENCE);
    let call = exported_call(&ws, "2");
    assert_eq!(call["decided_by"], "timeout after 1s", "{call}");
    let shown = ws.run(&["runs", "show", "2", "--json"]);
    assert!(
        shown.stdout.contains("nobody approved it within 1s"),
        "{shown:?}"
    );
    let history = ws.run(&["approvals", "--history", "--json"]);
    assert_eq!(history.json()[0]["status"], "timed-out", "{history:?}");
    assert!(!ws.root.join("out.txt").exists());
}

#[test]
fn a_call_whose_waiting_process_is_killed_is_void_and_its_run_interrupted() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", &schedule("60s"));
    ws.write("w.rhai", WRITES);
    let mut run = start(&ws, &["schedule", "run", "nightly"]);
    let id = parked_id(&ws);
    run.kill().unwrap();
    run.wait().unwrap();
    let approved = ws.run(&["approve", &id.to_string()]);
    assert_eq!(approved.code, 1, "{approved:?}");
    assert!(approved.stderr.contains("is void"), "{approved:?}");
    let history = ws.run(&["approvals", "--history", "--json"]);
    assert_eq!(history.json()[0]["status"], "void", "{history:?}");
    let runs = ws.run(&["runs", "list", "--json"]);
    assert_eq!(runs.json()[0]["status"], "interrupted", "{runs:?}");
    assert!(!ws.root.join("out.txt").exists());
    assert!(ws.run(&["approvals"]).stdout.contains("no call waits"));
}

#[test]
fn run_wait_approval_parks_calls_and_approval_for_the_run_covers_the_next() {
    let ws = Workspace::new();
    ws.write(
        "w.rhai",
        "tool(\"write_file\", #{path: \"a.txt\", content: \"a\"});\ntool(\"write_file\", #{path: \"b.txt\", content: \"b\"});\n\"both\"\n",
    );
    let run = start(&ws, &["run", "w.rhai", "--wait-approval", "60s"]);
    let id = parked_id(&ws);
    let approved = ws.run(&["approve", &id.to_string(), "--for-run"]);
    assert_eq!(approved.code, 0, "{approved:?}");
    let (code, said) = finished(run);
    assert_eq!(code, 0, "{said}");
    assert_eq!(ws.read("a.txt"), "a");
    assert_eq!(ws.read("b.txt"), "b");
    let history = ws.run(&["approvals", "--history", "--json"]);
    assert_eq!(history.json().as_array().unwrap().len(), 1, "{history:?}");
}

#[test]
fn a_file_changed_while_its_call_waited_is_parked_again_with_the_change_as_it_is_now() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", &schedule("60s"));
    ws.write("w.rhai", WRITES);
    ws.write("out.txt", "old\n");
    let run = start(&ws, &["schedule", "run", "nightly"]);
    let first = parked_id(&ws);
    ws.write("out.txt", "changed meanwhile\n");
    let approved = ws.run(&["approve", &first.to_string()]);
    assert_eq!(approved.code, 0, "{approved:?}");
    // Not applied over the change: asked again, with the change now.
    let started = Instant::now();
    let second = loop {
        let id = parked_id(&ws);
        if id != first {
            break id;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "the call was not parked again"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(ws.read("out.txt"), "changed meanwhile\n");
    let listed = ws.run(&["approvals"]);
    assert!(
        listed.stdout.contains("changed since you answered"),
        "{listed:?}"
    );
    assert!(listed.stdout.contains("-changed meanwhile"), "{listed:?}");
    assert_eq!(ws.run(&["approve", &second.to_string()]).code, 0);
    let (code, said) = finished(run);
    assert_eq!(code, 0, "{said}");
    assert_eq!(ws.read("out.txt"), "hello\n");
}
