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
    ws.first_parked()["id"]
        .as_i64()
        .expect("a parked call's id")
}

/// The id of a call parked after the call `first` was.
fn parked_after(ws: &Workspace, first: i64) -> i64 {
    let started = Instant::now();
    loop {
        let id = parked_id(ws);
        if id != first {
            return id;
        }
        assert!(started.elapsed() < PATIENCE, "no other call was parked");
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
    let second = parked_after(&ws, first);
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

/// Waits until `path` exists with something in it, and returns it.
fn written(path: &std::path::Path) -> String {
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.is_empty()
        {
            return text;
        }
        assert!(
            started.elapsed() < PATIENCE,
            "{} was never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `[approvals] on_waiting` that writes what it was told to `told.txt`
/// (outside the workspace) and its whole environment to `env.txt`.
fn telling(ws: &Workspace, wait: &str) -> String {
    let marks = ws.marks();
    format!(
        "{}[approvals]\non_waiting = [\"sh\", \"-c\", 'printf \"%s\\n\" \"call=$TOOLCELL_CALL\" \"run=$TOOLCELL_RUN\" \"tool=$TOOLCELL_TOOL\" \"expires=$TOOLCELL_EXPIRES\" \"$TOOLCELL_PREVIEW\" > \"$1/told.txt\"; env > \"$1/env.txt\"', \"notifier\", {:?}]\n",
        schedule(wait),
        marks.display().to_string()
    )
}

#[test]
fn the_program_told_of_a_parked_call_learns_its_id_run_tool_and_change_and_nothing_else() {
    let mut ws = Workspace::new();
    ws.env("TOOLCELL_TEST_SECRET", "do-not-pass");
    // The workflow first: a schedule's workflow is part of what is trusted.
    ws.write("w.rhai", WRITES);
    ws.write("toolcell.toml", &telling(&ws, "60s"));
    let run = start(&ws, &["schedule", "run", "nightly"]);
    let id = parked_id(&ws);
    let told = written(&ws.marks().join("told.txt"));
    assert!(told.contains(&format!("call={id}\n")), "{told}");
    assert!(told.contains("run=1\n"), "{told}");
    assert!(told.contains("tool=write_file\n"), "{told}");
    assert!(told.contains("expires=20"), "{told}");
    // What the terminal prompt shows: the call and its diff.
    assert!(told.contains("`write_file` wants to run with"), "{told}");
    assert!(told.contains("+hello"), "{told}");
    let env = written(&ws.marks().join("env.txt"));
    assert!(!env.contains("do-not-pass"), "{env}");
    assert!(!env.contains("TOOLCELL_DATA_DIR"), "{env}");
    assert_eq!(ws.run(&["approve", &id.to_string()]).code, 0);
    let (code, said) = finished(run);
    assert_eq!(code, 0, "{said}");
    assert_eq!(ws.read("out.txt"), "hello\n");
}

#[test]
fn a_notifier_that_fails_or_is_missing_is_logged_and_the_call_still_waits() {
    for (program, logged) in [
        ("false", "ended with exit status: 1"),
        ("toolcell-no-such-notifier", "was not run: no program"),
    ] {
        let ws = Workspace::new();
        ws.write("w.rhai", WRITES);
        ws.write(
            "toolcell.toml",
            &format!(
                "{}[approvals]\non_waiting = [{program:?}]\n",
                schedule("60s")
            ),
        );
        let run = start(&ws, &["schedule", "run", "nightly"]);
        let id = parked_id(&ws);
        // Give a failing program time to end before the call is decided.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(ws.run(&["approve", &id.to_string()]).code, 0);
        let (code, said) = finished(run);
        assert_eq!(code, 0, "{said}");
        assert!(said.contains("approvals.on_waiting"), "{said}");
        assert!(said.contains(logged), "{said}");
        assert_eq!(ws.read("out.txt"), "hello\n");
    }
}

#[test]
fn an_untrusted_config_tells_nobody_and_trust_names_the_program() {
    let ws = Workspace::new();
    ws.write_untrusted("toolcell.toml", &telling(&ws, "60s"));
    ws.write("w.rhai", WRITES);
    let run = start(&ws, &["schedule", "run", "nightly"]);
    let id = parked_id(&ws);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!ws.marks().join("told.txt").exists());
    assert_eq!(ws.run(&["deny", &id.to_string()]).code, 0);
    let (code, said) = finished(run);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("the program told of parked calls"), "{said}");
    let trusted = ws.run(&["trust"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    assert!(
        trusted
            .stdout
            .contains("the program told of parked calls: sh -c"),
        "{trusted:?}"
    );
}

#[test]
fn a_notifier_script_in_the_workspace_is_policy_no_tool_may_change() {
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        "[approvals]\non_waiting = [\"./notify.sh\"]\n",
    );
    ws.write("notify.sh", "#!/bin/sh\nexit 0\n");
    let (code, out) = ws.call(
        "write_file",
        serde_json::json!({"path": "notify.sh", "content": "#!/bin/sh\ncurl evil\n"}),
    );
    assert_ne!(code, 0, "{out}");
    let error = out["error"]["message"].as_str().unwrap();
    assert!(
        error.contains("a program [approvals] on_waiting runs, with your rights"),
        "{error}"
    );
    assert_eq!(ws.read("notify.sh"), "#!/bin/sh\nexit 0\n");
}

#[test]
fn a_daemon_restarted_while_a_call_waits_leaves_the_run_interrupted_the_call_void_and_replays_nothing()
 {
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"often\"\nworkflow = \"w.rhai\"\ncron = \"* * * * * *\"\ncatch_up = \"latest\"\nwait_for_approval = \"10m\"\n",
    );
    ws.write("w.rhai", WRITES);
    let mut daemon = start(&ws, &["daemon"]);
    let first = parked_id(&ws);
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let runs = crate::schedules::runs_of(&ws, "often");
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["status"], "interrupted", "{runs:#?}");

    // The restarted daemon fires again, at a later time: the cut run is
    // not replayed, and its call stays void whatever is answered.
    let mut daemon = start(&ws, &["daemon"]);
    let second = parked_after(&ws, first);
    let approved = ws.run(&["approve", &first.to_string()]);
    assert_eq!(approved.code, 1, "{approved:?}");
    assert!(approved.stderr.contains("is void"), "{approved:?}");
    assert!(!ws.root.join("out.txt").exists());
    let runs = crate::schedules::runs_of(&ws, "often");
    let fire_times: std::collections::BTreeSet<i64> = runs
        .iter()
        .map(|r| r["scheduled_at"].as_i64().unwrap())
        .collect();
    assert_eq!(
        fire_times.len(),
        runs.len(),
        "no fire time runs twice: {runs:#?}"
    );
    assert_eq!(ws.run(&["approve", &second.to_string()]).code, 0);
    let started = Instant::now();
    while !ws.root.join("out.txt").exists() {
        assert!(
            started.elapsed() < PATIENCE,
            "the approved call did not run"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    daemon.kill().unwrap();
    daemon.wait().unwrap();
}

#[test]
fn a_reason_for_denying_a_parked_call_of_a_model_reaches_the_model() {
    use crate::model_server::{ModelServer, ollama};
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c0",
            "write_file",
            serde_json::json!({"path": "out.txt", "content": "hello\n"}),
        )])]),
        ollama::answer("Understood, I left it."),
    ]);
    let ws = Workspace::new();
    ws.write(
        "w.rhai",
        "agent(\"Write hello to out.txt\", #{tools: [\"write_file\"]})\n",
    );
    ws.write(
        "toolcell.toml",
        &format!(
            "[model]\nbase_url = \"{}\"\nname = \"fake\"\nidle_timeout_ms = 3000\n{}",
            server.url,
            schedule("60s")
        ),
    );
    let run = start(&ws, &["schedule", "run", "nightly"]);
    let id = parked_id(&ws);
    let denied = ws.run(&["deny", &id.to_string(), "--reason", "not before the review"]);
    assert_eq!(denied.code, 0, "{denied:?}");
    let (code, said) = finished(run);
    assert_eq!(code, 0, "{said}");
    assert!(!ws.root.join("out.txt").exists());
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        2,
        "the model is asked again after the denial"
    );
    let results = crate::agent::tool_results(&requests[1]);
    assert_eq!(results[0].0, "c0");
    assert!(
        results[0]
            .2
            .contains("the user declined this call of `write_file`: not before the review"),
        "{results:?}"
    );
}
