//! The command capability and the built-in `run_command`: only granted
//! programs, only in workspace folders, a scrubbed environment, killed at
//! the timeout, approved at every call with the exact command line shown.

use crate::agent::{chat, chat_on_terminal, run_record, tool_results, workspace};
use crate::harness::Workspace;
use crate::model_server::{ModelServer, ollama};
use serde_json::json;

/// A workspace granting run_command `sh`, `printf`, `touch` and `sleep`.
fn granted(extra: &str) -> Workspace {
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &format!(
            "[tools.run_command]\nprocess = [\"sh\", \"printf\", \"touch\", \"sleep\"]\n{extra}"
        ),
    );
    ws
}

#[test]
fn a_granted_program_runs_in_a_workspace_folder_with_its_output_and_a_scrubbed_environment() {
    let mut ws = granted("");
    ws.write("sub/notes.txt", "x");
    ws.env("TOOLCELL_TEST_SECRET", "hunter2");
    let ran = ws.call_ok(
        "run_command",
        json!({"program": "sh", "args": ["-c", "pwd; ls; env; echo to-stderr >&2; exit 7"], "cwd": "sub"}),
    );
    assert_eq!(ran["exit_code"], 7, "{ran}");
    assert_eq!(ran["timed_out"], false);
    assert_eq!(
        ran["argv"],
        json!(["sh", "-c", "pwd; ls; env; echo to-stderr >&2; exit 7"])
    );
    let stdout = ran["stdout"].as_str().unwrap();
    assert!(
        stdout.starts_with(&format!("{}\nnotes.txt\n", ws.root.join("sub").display())),
        "{stdout}"
    );
    assert!(stdout.contains("PATH="), "{stdout}");
    assert!(
        !stdout.contains("hunter2"),
        "the environment is scrubbed: {stdout}"
    );
    assert_eq!(ran["stderr"], "to-stderr\n");

    // Arguments are passed as they are: no shell, no globbing, no variables.
    let ran = ws.call_ok(
        "run_command",
        json!({"program": "printf", "args": ["[%s]", "$HOME", "*", "a b; touch pwned"]}),
    );
    assert_eq!(ran["stdout"], "[$HOME][*][a b; touch pwned]");
    assert!(!ws.root.join("pwned").exists());

    // Large output is capped for the model, start and end kept.
    let ran = ws.call_ok(
        "run_command",
        json!({"program": "sh", "args": ["-c", "echo first; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo last"]}),
    );
    let stdout = ran["stdout"].as_str().unwrap();
    assert_eq!(ran["truncated"], true);
    assert!(
        stdout.starts_with("first\n") && stdout.ends_with("last\n"),
        "{}",
        &stdout[..40]
    );
    assert!(stdout.len() < 20_000 && stdout.contains("characters left out"));
}

#[test]
fn programs_not_granted_folders_outside_and_calls_without_approval_are_refused() {
    let ws = granted("");
    std::fs::write(ws.outer.join("outside.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(&ws.outer, ws.root.join("link-out")).unwrap();

    // Not granted: refused, and it did not run.
    let (kind, message) =
        ws.call_refused("run_command", json!({"program": "mkdir", "args": ["made"]}));
    assert_eq!(kind, "denied");
    assert!(
        message.contains("`mkdir` was not run (it may run only sh, printf, touch, sleep)")
            && message.contains("[tools.run_command] process = [\"mkdir\"]"),
        "{message}"
    );
    assert!(!ws.root.join("made").exists());
    // A path to a granted program's name is not the grant.
    let (kind, _) = ws.call_refused(
        "run_command",
        json!({"program": "/bin/sh", "args": ["-c", "true"]}),
    );
    assert_eq!(kind, "denied");

    // Working folders outside the roots, directly or through a link.
    for cwd in ["..", "/tmp", "sub/../..", "link-out"] {
        let (kind, message) = ws.call_refused(
            "run_command",
            json!({"program": "touch", "args": ["escaped"], "cwd": cwd}),
        );
        assert_eq!(kind, "denied", "{cwd}: {message}");
        assert!(
            message.contains("outside the workspace"),
            "{cwd}: {message}"
        );
    }
    assert!(!ws.outer.join("escaped").exists());
    let (kind, _) = ws.call_refused(
        "run_command",
        json!({"program": "touch", "args": ["x"], "cwd": "missing"}),
    );
    assert_eq!(kind, "not-found");

    // Without approval (no terminal, no --yes): refused before anything runs.
    let run = ws.run(&[
        "tools",
        "call",
        "run_command",
        "--args",
        r#"{"program": "touch", "args": ["unapproved"]}"#,
    ]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stderr.contains("needs approval"), "{run:?}");
    assert!(!ws.root.join("unapproved").exists());

    // The config cannot make it run without asking.
    ws.write(
        "toolcell.toml",
        "[tools.run_command]\nprocess = [\"touch\"]\napproval = \"auto\"\n",
    );
    let run = ws.run(&[
        "tools",
        "call",
        "run_command",
        "--args",
        r#"{"program": "touch", "args": ["auto"]}"#,
    ]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(!ws.root.join("auto").exists());

    // With nothing granted, nothing runs.
    ws.write("toolcell.toml", "");
    let (kind, message) =
        ws.call_refused("run_command", json!({"program": "touch", "args": ["x"]}));
    assert_eq!(kind, "denied");
    assert!(message.contains("process = [\"touch\"]"), "{message}");
}

#[test]
fn a_program_that_never_ends_is_killed_at_the_timeout_with_everything_it_started() {
    let ws = granted("");
    let started = std::time::Instant::now();
    let ran = ws.call_ok(
        "run_command",
        json!({"program": "sh", "args": ["-c", "echo started; sleep 300 & echo $! > bg.pid; sleep 300"], "timeout_s": 1}),
    );
    let took = started.elapsed();
    assert_eq!(ran["timed_out"], true, "{ran}");
    assert_eq!(ran["exit_code"], json!(null));
    assert_eq!(ran["signal"], 15, "stopped with SIGTERM first: {ran}");
    assert_eq!(ran["stdout"], "started\n");
    assert!(
        ran["note"].as_str().unwrap().contains("was killed"),
        "{ran}"
    );
    assert!(took.as_secs() < 30, "took {took:?}");
    // The background `sleep` went with it (a zombie at most: dead, waiting
    // for a parent that is gone). SIGKILL was sent; on a busy machine the
    // process may take a moment to be scheduled and die.
    let pid = ws.read("bg.pid").trim().to_string();
    let alive = || {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = state
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X'));
        running.then_some(state)
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while alive().is_some() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(alive(), None, "the background sleep {pid} still runs");

    // A program that exits while something it started keeps the pipes open
    // is not waited for.
    let ran = ws.call_ok(
        "run_command",
        json!({"program": "sh", "args": ["-c", "sleep 300 & echo done"], "timeout_s": 20}),
    );
    assert_eq!(ran["timed_out"], false, "{ran}");
    assert_eq!(ran["exit_code"], 0);
    assert_eq!(ran["stdout"], "done\n");
}

#[test]
fn the_model_sees_run_command_only_once_granted_and_the_prompt_shows_the_exact_command_line() {
    let call = |id: &str, args: serde_json::Value| {
        ollama::reply(vec![ollama::calls(&[(id, "run_command", args)])])
    };
    let line =
        json!({"program": "printf", "args": ["%s\\n", "a b", "x\n$ printf safe"], "cwd": "."});
    let server = ModelServer::start(vec![
        ollama::answer("No tools."),
        call("c1", line.clone()),
        ollama::answer("Ran it."),
        call("c2", line.clone()),
        ollama::answer("Was refused."),
    ]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["Say hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(
        !offered.contains("\"run_command\""),
        "offered before any grant: {offered}"
    );

    let config = ws.read("toolcell.toml");
    ws.write(
        "toolcell.toml",
        &format!("{config}\n[tools.run_command]\nprocess = [\"printf\"]\n"),
    );
    let (code, shown) = chat_on_terminal(&ws, &["chat", "Print it"], "y\n");
    assert_eq!(code, 0, "{shown}");
    // The exact command line, quoted, with the newline visible as an escape.
    assert!(
        shown.contains(r"$ printf '%s\n' 'a b' $'x\n$ printf safe'"),
        "{shown}"
    );
    // Where it runs and what it is confined to.
    assert!(
        shown.contains(&format!(
            "confined: writes only in {} and its private temporary folder; no network",
            ws.root.display()
        )),
        "{shown}"
    );
    // What runs and where, resolved; no "yes for this run".
    assert!(
        shown.contains("program: /") && shown.contains("printf"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("in:      {}", ws.root.display())),
        "{shown}"
    );
    assert!(!shown.contains("[a]"), "{shown}");
    let requests = server.requests();
    assert!(
        requests[1].body["tools"]
            .to_string()
            .contains("\"run_command\"")
    );
    let results = tool_results(&requests[2]);
    assert!(
        results[0].2.contains("a b\\nx\\n$ printf safe"),
        "{results:?}"
    );
    let record = run_record(&ws, "2");
    assert_eq!(record["tool_calls"][0]["decision"], "approved");

    // No terminal, and only a blanket --yes: refused in band, with the way
    // to grant it by name.
    let run = chat(&ws, &["--yes", "Print it again"]);
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[4]);
    assert!(
        results[0].2.contains("--yes does not cover it")
            && results[0].2.contains("--approve run_command"),
        "{results:?}"
    );
}

#[test]
fn a_program_is_never_found_inside_the_workspace_and_the_path_passed_on_leaves_it_out() {
    let mut ws = granted("");
    // A `printf` planted in the workspace: a link to a shell, and PATH
    // naming its folder first.
    std::fs::create_dir_all(ws.root.join("bin")).unwrap();
    std::os::unix::fs::symlink("/bin/sh", ws.root.join("bin/printf")).unwrap();
    std::fs::create_dir_all(ws.root.join("bin2")).unwrap();
    std::fs::write(ws.root.join("bin2/sleep"), "#!/bin/sh\necho planted\n").unwrap();
    std::fs::set_permissions(
        ws.root.join("bin2/sleep"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}:{}",
        ws.root.join("bin").display(),
        ws.root.join("bin2").display(),
        std::env::var("PATH").unwrap()
    );
    ws.env("PATH", &path);
    let ran = ws.call_ok(
        "run_command",
        json!({"program": "printf", "args": ["-c", "echo pwned"]}),
    );
    assert!(!ran["stdout"].as_str().unwrap().contains("pwned"), "{ran}");
    let ran = ws.call_ok("run_command", json!({"program": "sleep", "args": ["0"]}));
    assert_eq!(ran["stdout"], "", "the real sleep ran: {ran}");
    let ran = ws.call_ok(
        "run_command",
        json!({"program": "sh", "args": ["-c", "echo $PATH"]}),
    );
    let seen = ran["stdout"].as_str().unwrap();
    assert!(!seen.contains(ws.root.to_str().unwrap()), "{seen}");
    assert!(seen.contains("/bin"), "{seen}");

    // Only there: named as skipped.
    ws.write(
        "toolcell.toml",
        "[tools.run_command]\nprocess = [\"only-here\"]\n",
    );
    std::os::unix::fs::symlink("/bin/sh", ws.root.join("bin/only-here")).unwrap();
    let (kind, message) = ws.call_refused("run_command", json!({"program": "only-here"}));
    assert_eq!(kind, "not-found");
    assert!(
        message.contains("inside the workspace, which is never run"),
        "{message}"
    );
}

#[test]
fn bad_process_grants_are_config_errors_with_the_fix() {
    let ws = Workspace::new();
    for (grant, expected) in [
        ("[\"*\"]", "`*` would grant every program"),
        ("[\"git status\"]", "holds spaces"),
        ("[\"bin/tool\"]", "relative path"),
    ] {
        ws.write(
            "toolcell.toml",
            &format!("[tools.run_command]\nprocess = {grant}\n"),
        );
        let run = ws.run(&["tools", "list"]);
        assert_eq!(run.code, 1, "{grant}: {run:?}");
        assert!(
            run.stderr.contains("tools.run_command.process")
                && run.stderr.contains(expected)
                && run.stderr.contains("fix:"),
            "{grant}: {}",
            run.stderr
        );
    }
    // A program the tool does not ask for.
    ws.write("toolcell.toml", "[tools.read_file]\nprocess = [\"git\"]\n");
    let run = ws.run(&["tools", "show", "read_file"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("tools.read_file.process grants `git`, which the tool does not ask for"),
        "{run:?}"
    );
}
