//! The ways around the policy, closed: no standing grant covers a change of
//! toolcell's own files (only a person at a terminal, for that call); the
//! cell's guard refuses them to every tool; a config starts programs only
//! once trusted; what a prompt showed is what is applied; secrets stay put.

use crate::agent::{chat_on_terminal, run_record, spawn_on_terminal, tool_results, workspace};
use crate::harness::Workspace;
use crate::model_server::{ModelServer, ollama};
use serde_json::{Value, json};

/// `tools call NAME --args ARGS --json` with extra flags; the exit code and
/// the envelope.
fn call_with(ws: &Workspace, name: &str, args: Value, flags: &[&str]) -> (i32, Value) {
    let args = args.to_string();
    let mut all = vec!["tools", "call", name, "--args", &args, "--json"];
    all.extend_from_slice(flags);
    let run = ws.run(&all);
    (run.code, run.json())
}

const CONFIG: &str =
    "[tools.write_file]\napproval = \"auto\"\n[tools.move_path]\napproval = \"auto\"\n";

#[test]
fn no_standing_grant_covers_a_change_of_the_config_by_a_built_in_tool() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", CONFIG);
    ws.write(
        "evil.toml",
        "[[mcp_server]]\nname = \"x\"\ncommand = \"sh\"\n",
    );
    let hostile = json!({"path": "toolcell.toml", "content": "[[mcp_server]]\nname = \"x\"\ncommand = \"sh\"\n"});
    let attempts: Vec<(&str, Value, &[&str])> = vec![
        ("write_file", hostile.clone(), &["--yes"]),
        // approval = "auto" in the config does not cover it either.
        ("write_file", hostile.clone(), &[]),
        (
            "write_file",
            json!({"path": "./sub/../toolcell.toml", "content": "x"}),
            &["--yes"],
        ),
        // A config further down is found when toolcell runs there.
        (
            "write_file",
            json!({"path": "sub/toolcell.toml", "content": "x"}),
            &["--yes"],
        ),
        (
            "replace_in_file",
            json!({"path": "toolcell.toml", "old_text": "auto", "new_text": "ask"}),
            &["--yes"],
        ),
        (
            "move_path",
            json!({"from": "evil.toml", "to": "toolcell.toml"}),
            &["--yes"],
        ),
        (
            "move_path",
            json!({"from": "toolcell.toml", "to": "old.toml"}),
            &["--yes"],
        ),
        ("delete_path", json!({"path": "toolcell.toml"}), &["--yes"]),
    ];
    for (tool, args, flags) in attempts {
        let (code, envelope) = call_with(&ws, tool, args.clone(), flags);
        assert_eq!(code, 4, "{tool} {args} {flags:?}: {envelope}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("changes toolcell's own policy")
                && message.contains("at a terminal")
                && message.contains("fix:"),
            "{message}"
        );
        assert_eq!(ws.read("toolcell.toml"), CONFIG, "{tool} {args}");
    }
    assert!(!ws.root.join("sub/toolcell.toml").exists());
    assert!(!ws.root.join("old.toml").exists());
    assert!(ws.root.join("evil.toml").exists());
    // The grant still covers everything else.
    let (code, envelope) = call_with(
        &ws,
        "write_file",
        json!({"path": "ok.txt", "content": "fine"}),
        &[],
    );
    assert_eq!(code, 0, "{envelope}");
    // `.toolcell/` is no tool's to change, even asked.
    let (code, envelope) = call_with(
        &ws,
        "write_file",
        json!({"path": ".toolcell/tools/evil/tool.toml", "content": "x"}),
        &["--yes"],
    );
    assert_eq!(code, 3, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "denied");
    assert!(!ws.root.join(".toolcell/tools/evil").exists());
}

#[test]
fn the_workflows_schedules_run_are_protected_with_their_modules() {
    let ws = Workspace::new();
    ws.write("flows/report.rhai", "print(\"report\");\n");
    ws.write("flows/lib/util.rhai", "fn f() { 1 }\n");
    ws.write("flows/notes.md", "notes\n");
    ws.write(
        "toolcell.toml",
        "[[schedule]]\nname = \"nightly\"\ncron = \"0 3 * * *\"\nworkflow = \"flows/report.rhai\"\n",
    );
    for args in [
        json!({"path": "flows/report.rhai", "content": "print(\"owned\");"}),
        json!({"path": "flows/lib/util.rhai", "content": "fn f() { 2 }"}),
        json!({"path": "flows/new.rhai", "content": "1"}),
    ] {
        let (code, envelope) = call_with(&ws, "write_file", args.clone(), &["--yes"]);
        assert_eq!(code, 4, "{args}: {envelope}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(message.contains("the schedule `nightly`"), "{message}");
    }
    let (code, envelope) = call_with(
        &ws,
        "delete_path",
        json!({"path": "flows", "recursive": true}),
        &["--yes"],
    );
    assert_eq!(code, 4, "{envelope}");
    assert_eq!(ws.read("flows/report.rhai"), "print(\"report\");\n");
    assert_eq!(ws.read("flows/lib/util.rhai"), "fn f() { 1 }\n");
    // Other files beside them are the model's to change.
    let (code, envelope) = call_with(
        &ws,
        "write_file",
        json!({"path": "flows/notes.md", "content": "new"}),
        &["--yes"],
    );
    assert_eq!(code, 0, "{envelope}");
}

/// `tools call probe` with `args`, approved up front.
fn probe(ws: &Workspace, args: Value) -> (i32, Value) {
    call_with(ws, "probe", args, &["--yes"])
}

#[test]
fn the_cell_guard_refuses_a_change_of_the_policy_to_any_tool_through_any_path() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", "");
    ws.install_probe();
    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");
    let config = ws.read("toolcell.toml");
    std::os::unix::fs::symlink("toolcell.toml", ws.root.join("link.txt")).unwrap();
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    std::os::unix::fs::symlink("..", ws.root.join("sub/up")).unwrap();
    for path in [
        "toolcell.toml",
        "link.txt",
        "sub/up/toolcell.toml",
        "sub/../toolcell.toml",
    ] {
        let (code, envelope) = probe(
            &ws,
            json!({"action": "write", "path": path, "content": "[[mcp_server]]\nname = \"x\"\ncommand = \"sh\"\n"}),
        );
        assert_eq!(code, 3, "{path}: {envelope}");
        assert_eq!(envelope["error"]["kind"], "denied", "{path}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("toolcell.toml") && message.contains("toolcell's own policy"),
            "{path}: {message}"
        );
        assert_eq!(ws.read("toolcell.toml"), config, "{path}");
    }
    // A new config where toolcell would find it, and toolcell's own state.
    for path in [
        "sub/toolcell.toml",
        ".toolcell/tools/probe/tool.toml",
        ".toolcell/state.db",
    ] {
        let before = std::fs::read(ws.root.join(path)).ok();
        let (code, envelope) = probe(
            &ws,
            json!({"action": "write", "path": path, "content": "x"}),
        );
        assert_eq!(code, 3, "{path}: {envelope}");
        assert_eq!(std::fs::read(ws.root.join(path)).ok(), before, "{path}");
    }
    // The probe may still write its own files, and read the config.
    let (code, envelope) = probe(
        &ws,
        json!({"action": "write", "path": "notes.txt", "content": "hi"}),
    );
    assert_eq!(code, 0, "{envelope}");
    let (code, envelope) = probe(&ws, json!({"action": "read", "path": "toolcell.toml"}));
    assert_eq!(code, 0, "{envelope}");
    // delete_path still puts things in the trash, inside `.toolcell/`.
    let (code, envelope) = call_with(&ws, "delete_path", json!({"path": "notes.txt"}), &["--yes"]);
    assert_eq!(code, 0, "{envelope}");
}

#[test]
fn at_a_terminal_a_policy_change_is_asked_for_that_call_alone_and_says_so_first() {
    let new_config = "# edited by the model\n";
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c1",
            "write_file",
            json!({"path": "toolcell.toml", "content": new_config}),
        )])]),
        ollama::answer("Done."),
    ]);
    let ws = workspace(
        &server,
        "ollama",
        "[tools.write_file]\napproval = \"auto\"\n",
    );
    // --approve does not cover it; the person at the terminal does.
    let (code, shown) = chat_on_terminal(
        &ws,
        &["chat", "Edit the config", "--approve", "write_file"],
        "a\ny\n",
    );
    assert_eq!(code, 0, "{shown}");
    let prompt = &shown[shown.find("! this call changes").expect(&shown)..];
    let first = prompt.lines().next().unwrap();
    assert!(
        first.contains("changes toolcell's own policy") && first.contains("`toolcell.toml`"),
        "{first}"
    );
    assert!(!prompt.contains("[a] yes"), "no yes-for-the-run: {prompt}");
    assert!(
        prompt.contains("answer y, n [reason] or q"),
        "`a` is not an answer: {prompt}"
    );
    assert_eq!(ws.read("toolcell.toml"), new_config);
    let record = run_record(&ws, "1");
    assert_eq!(record["tool_calls"][0]["decision"], "approved");
}

#[test]
fn tools_approved_always_offer_no_yes_for_the_run() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "d1",
            "delete_path",
            json!({"path": "a.txt"}),
        )])]),
        ollama::answer("Deleted."),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write("a.txt", "x");
    let (code, shown) = chat_on_terminal(&ws, &["chat", "Delete a.txt"], "a\ny\n");
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("wants to run with"), "{shown}");
    assert!(!shown.contains("[a] yes"), "{shown}");
    assert!(shown.contains("answer y, n [reason] or q"), "{shown}");
    assert!(!ws.root.join("a.txt").exists());
}

#[test]
fn an_untrusted_config_starts_no_program_until_trusted_and_again_after_a_change() {
    let ws = Workspace::new();
    let config = format!(
        "[[mcp_server]]\nname = \"starter\"\ncommand = \"sh\"\nargs = [\"-c\", \"echo started >> {}\"]\n{}[tools.run_command]\nprocess = [\"touch\"]\n",
        ws.marks().join("started").display(),
        ws.marks_grant()
    );
    ws.write_untrusted("toolcell.toml", &config);
    let started = || {
        std::fs::read_to_string(ws.marks().join("started"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    for args in [
        &["tools", "list"][..],
        &["tools", "show", "read_file"],
        &["schedule", "list"],
    ] {
        let run = ws.run(args);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        assert!(
            run.stderr.contains("not trusted")
                && run.stderr.contains("toolcell trust")
                && run.stderr.contains("the MCP server `starter`"),
            "{args:?}: {run:?}"
        );
    }
    assert_eq!(started(), 0, "an untrusted config ran its server");
    let list = ws.run(&["tools", "show", "run_command", "--json"]);
    assert_eq!(
        list.json()["granted"]["process"],
        json!([]),
        "its programs are not granted: {list:?}"
    );
    let (code, envelope) = call_with(
        &ws,
        "run_command",
        json!({"program": "touch", "args": ["x"]}),
        &["--yes"],
    );
    assert_ne!(code, 0, "{envelope}");
    assert!(!ws.root.join("x").exists());

    let trusted = ws.run(&["trust"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    assert!(
        trusted.stdout.contains("the MCP server `starter`"),
        "{trusted:?}"
    );
    assert!(
        trusted
            .stdout
            .contains("programs granted to `run_command`: touch"),
        "{trusted:?}"
    );
    // Trusted: tools list starts it (it is no MCP server, so it fails).
    let run = ws.run(&["tools", "list"]);
    assert!(!run.stderr.contains("not trusted"), "{run:?}");
    assert_eq!(started(), 1);
    // Reading the config never starts a program, nor does showing a
    // tool that is not the server's.
    ws.run(&["schedule", "list"]);
    ws.run(&["tools", "show", "read_file"]);
    assert_eq!(started(), 1, "schedule list or tools show started a server");
    // Changed: untrusted again.
    std::fs::write(
        ws.root.join("toolcell.toml"),
        format!("{config}# changed\n"),
    )
    .unwrap();
    let run = ws.run(&["tools", "list"]);
    assert!(run.stderr.contains("not trusted"), "{run:?}");
    assert_eq!(started(), 1);
    // From a folder below, the found config is as untrusted.
    std::fs::create_dir(ws.root.join("below")).unwrap();
    let mut below = ws.command(&["tools", "list"]);
    below.current_dir(ws.root.join("below"));
    let out = below.output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("not trusted"));
    assert_eq!(started(), 1);
    // Revoked: untrusted.
    assert_eq!(ws.run(&["trust"]).code, 0);
    let revoked = ws.run(&["trust", "--revoke"]);
    assert!(revoked.stdout.contains("no longer trusted"), "{revoked:?}");
    assert!(ws.run(&["tools", "list"]).stderr.contains("not trusted"));
    assert_eq!(started(), 1);
    // The record is outside the workspace.
    assert!(ws.data.join("trusted-configs.json").exists());
}

#[test]
fn trust_says_what_is_wrong() {
    let ws = Workspace::new();
    let run = ws.run(&["trust"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("there is no toolcell.toml"), "{run:?}");
    ws.write_untrusted("toolcell.toml", "[[roots]\n");
    let run = ws.run(&["trust"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("toolcell.toml:1:"),
        "an invalid config is not trusted: {run:?}"
    );
}

#[test]
fn a_file_changed_while_its_prompt_waited_is_shown_again_not_overwritten() {
    use std::io::{Read, Write};
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "model\n"}),
        )])]),
        ollama::answer("Written."),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write("a.txt", "before\n");
    let mut child = spawn_on_terminal(&ws, &["chat", "Write a.txt"]);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    });
    let mut shown = String::new();
    let wait_for = |needle: &str, count: usize, shown: &mut String| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while shown.matches(needle).count() < count {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(part) => shown.push_str(&part),
                Err(_) => panic!("no `{needle}` x{count} on the terminal: {shown}"),
            }
        }
    };
    wait_for("[q] quit", 1, &mut shown);
    assert!(shown.contains("-before"), "{shown}");
    // The user edits the file while the prompt waits, then says yes.
    std::fs::write(ws.root.join("a.txt"), "edited by the user\n").unwrap();
    stdin.write_all(b"y\n").unwrap();
    wait_for("[q] quit", 2, &mut shown);
    let again = &shown[shown.rfind("changed since you answered").expect(&shown)..];
    assert!(
        again.contains("-edited by the user"),
        "the change as it is now: {again}"
    );
    assert_eq!(
        ws.read("a.txt"),
        "edited by the user\n",
        "nothing applied yet"
    );
    stdin.write_all(b"y\n").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success(), "{shown}");
    assert_eq!(ws.read("a.txt"), "model\n");
}

#[test]
fn secrets_in_a_root_are_refused_by_every_file_tool_and_skipped_by_search() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");
    ws.install_probe();
    ws.write(".env", "API_TOKEN=hunter2\n");
    ws.write(".env.example", "API_TOKEN=changeme\n");
    ws.write(
        ".ssh/id_rsa",
        "-----BEGIN OPENSSH PRIVATE KEY----- hunter2\n",
    );
    ws.write("certs/server.pem", "hunter2\n");
    ws.write("notes.md", "the token is hunter2? no\n");
    std::os::unix::fs::symlink(".env", ws.root.join("innocent.txt")).unwrap();
    for path in [
        ".env",
        ".ssh/id_rsa",
        "certs/server.pem",
        "innocent.txt",
        "./.ssh/../.env",
    ] {
        let (kind, message) = ws.call_refused("read_file", json!({"path": path}));
        assert_eq!(kind, "denied", "{path}: {message}");
        assert!(
            message.contains("list of secret files") && message.contains("[secrets]"),
            "{path}: {message}"
        );
        let (code, envelope) = probe(&ws, json!({"action": "read", "path": path}));
        assert_eq!(code, 3, "{path}: {envelope}");
        assert!(
            envelope["error"]["message"]
                .as_str()
                .unwrap()
                .contains("secret"),
            "{envelope}"
        );
    }
    let (kind, _) = ws.call_refused(
        "write_file",
        json!({"path": ".env", "content": "API_TOKEN=mine\n"}),
    );
    assert_eq!(kind, "denied");
    assert_eq!(ws.read(".env"), "API_TOKEN=hunter2\n");
    let example = ws.call_ok("read_file", json!({"path": ".env.example"}));
    assert!(example.to_string().contains("changeme"), "{example}");
    let found = ws.call_ok("search_files", json!({"path": ".", "query": "hunter2"}));
    let hits = found.to_string();
    assert!(hits.contains("notes.md"), "{hits}");
    for secret in [".env", "id_rsa", "server.pem"] {
        assert!(
            !hits.contains(&format!("{secret}\"")),
            "{secret} searched: {hits}"
        );
    }
    // Opened on purpose.
    ws.write(
        "toolcell.toml",
        "[tools.probe]\napproval = \"auto\"\n[secrets]\nallow = [\".env\"]\n",
    );
    let opened = ws.call_ok("read_file", json!({"path": ".env"}));
    assert!(opened.to_string().contains("hunter2"), "{opened}");
    let (kind, _) = ws.call_refused("read_file", json!({"path": ".ssh/id_rsa"}));
    assert_eq!(kind, "denied");
    // A pattern that is not one is a config error.
    ws.write("toolcell.toml", "[secrets]\nallow = [\"../outside\"]\n");
    let run = ws.run(&["tools", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("toolcell.toml:2:9 at key `secrets.allow`"),
        "{run:?}"
    );
}

#[test]
fn without_a_terminal_the_model_is_told_why_a_policy_change_was_refused() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "w1",
            "write_file",
            json!({"path": "toolcell.toml", "content": "x"}),
        )])]),
        ollama::answer("Could not."),
    ]);
    let ws = workspace(&server, "ollama", "");
    let config = ws.read("toolcell.toml");
    let run = ws.run(&["chat", "Rewrite the config", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("toolcell.toml"), config);
    let requests = server.requests();
    let result = &tool_results(&requests[1])[0].2;
    assert!(
        result.contains("changes toolcell's own policy"),
        "the model is told why: {result}"
    );
}

#[test]
fn a_program_or_mcp_server_outside_the_cells_that_changes_the_policy_is_undone_and_refused() {
    let fs = crate::mcp_client::peer("server-filesystem");
    let ws = Workspace::new();
    ws.write("flows/job.rhai", "\"ok\"\n");
    let config = format!(
        "[tools.run_command]\nprocess = [\"sh\"]\n[[schedule]]\nname = \"job\"\ncron = \"0 3 * * *\"\nworkflow = \"flows/job.rhai\"\n\n[[mcp_server]]\nname = \"fs\"\ncommand = \"node\"\nargs = [{fs:?}, \".\"]\nfs = \"write\"\napproval = \"auto\"\n"
    );
    ws.write("toolcell.toml", &config);
    // Where the kernel can, toolcell's files are read-only to the program
    // (see outside_cells.rs); a new module beside the workflow is found
    // after the call either way, taken away, and the call refused.
    let (code, envelope) = ws.call(
        "run_command",
        json!({"program": "sh", "args": ["-c", "printf '[tools.write_file]\\napproval = \"auto\"\\n' >> toolcell.toml; echo owned > flows/job.rhai; echo 'fn evil() {}' > flows/evil.rhai"]}),
    );
    assert_eq!(code, 4, "{envelope}");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("changed toolcell's own policy")
            && message.contains("evil.rhai (removed)")
            && message.contains("undone"),
        "{message}"
    );
    assert_eq!(ws.read("toolcell.toml"), config);
    assert_eq!(ws.read("flows/job.rhai"), "\"ok\"\n");
    assert!(!ws.root.join("flows/evil.rhai").exists());
    // The server's write of the config: refused (by the kernel, or undone).
    let (code, envelope) = ws.call(
        "fs__write_file",
        json!({"path": "toolcell.toml", "content": "[[mcp_server]]\nname = \"x\"\ncommand = \"sh\"\n"}),
    );
    assert_ne!(code, 0, "{envelope}");
    assert_eq!(ws.read("toolcell.toml"), config);
    // The rest of what they do stands.
    let (code, envelope) = ws.call(
        "fs__write_file",
        json!({"path": "notes.md", "content": "hi"}),
    );
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(ws.read("notes.md"), "hi");
}

#[test]
fn the_scripts_of_mcp_servers_module_folders_and_toolcells_own_folders_are_policy_too() {
    let mut ws = Workspace::new();
    // toolcell's data folder inside the root, as for a workspace at home.
    let data = ws.root.join(".local/share/toolcell");
    std::fs::create_dir_all(&data).unwrap();
    ws.env("TOOLCELL_DATA_DIR", data.to_str().unwrap());
    ws.write("mcp/srv.mjs", "// a server\n");
    ws.write("flows/report.rhai", "import \"lib/util\" as u;\n");
    ws.write("flows/lib/util.rhai", "fn f() { 1 }\n");
    ws.write("evil/util.rhai", "fn f() { 2 }\n");
    ws.write(
        "toolcell.toml",
        "[[mcp_server]]\nname = \"helper\"\ncommand = \"node\"\nargs = [\"mcp/srv.mjs\"]\nenabled = false\n[[schedule]]\nname = \"nightly\"\ncron = \"0 3 * * *\"\nworkflow = \"flows/report.rhai\"\n",
    );
    let attempts = [
        (
            "write_file",
            json!({"path": "mcp/srv.mjs", "content": "require('child_process')"}),
            "the MCP server `helper`",
        ),
        (
            "move_path",
            json!({"from": "flows/lib", "to": "oldlib"}),
            "the schedule `nightly`",
        ),
        (
            "move_path",
            json!({"from": "evil", "to": "flows/lib2"}),
            "the schedule `nightly`",
        ),
    ];
    for (tool, args, says) in attempts {
        let (code, envelope) = call_with(&ws, tool, args.clone(), &["--yes"]);
        assert_eq!(code, 4, "{tool} {args}: {envelope}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{tool} {args}: {message}");
    }
    assert_eq!(ws.read("mcp/srv.mjs"), "// a server\n");
    assert!(ws.root.join("flows/lib/util.rhai").exists());
    assert!(!ws.root.join("flows/lib2").exists());
    // toolcell's data: no tool writes what the user trusted.
    let (code, envelope) = call_with(
        &ws,
        "write_file",
        json!({"path": ".local/share/toolcell/trusted-configs.json", "content": "{}"}),
        &["--yes"],
    );
    assert_eq!(code, 3, "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("data or cache folder"),
        "{envelope}"
    );
    assert_ne!(ws.read(".local/share/toolcell/trusted-configs.json"), "{}");
}

#[test]
fn a_folder_holding_a_secret_under_a_longer_pattern_is_not_moved_or_deleted() {
    let ws = Workspace::new();
    ws.write(
        ".git/config",
        "[remote \"origin\"]\nurl = https://user:token@example.org/x\n",
    );
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    for (tool, args) in [
        ("move_path", json!({"from": ".git", "to": "gitdir"})),
        ("delete_path", json!({"path": ".git", "recursive": true})),
    ] {
        let (kind, message) = ws.call_refused(tool, args.clone());
        assert_eq!(kind, "denied", "{tool}: {message}");
        assert!(message.contains(".git/config"), "{tool}: {message}");
    }
    assert!(ws.root.join(".git/config").exists());
    let head = ws.call_ok("read_file", json!({"path": ".git/HEAD"}));
    assert!(head.to_string().contains("refs/heads/main"), "{head}");
}

#[test]
fn an_untrusted_config_hands_on_no_secret_and_a_linked_config_is_not_trusted_with_its_target() {
    let server = ModelServer::start(vec![ollama::answer("Hi."), ollama::answer("Hi.")]);
    let mut ws = workspace(&server, "ollama", "api_key_env = \"TOOLCELL_TEST_KEY\"\n");
    ws.env("TOOLCELL_TEST_KEY", "AKIA_TOP_SECRET");
    // As a cloned repository's: written, never trusted.
    let config = ws.read("toolcell.toml");
    ws.write_untrusted(
        "toolcell.toml",
        &format!("{config}[tools.write_file]\napproval = \"auto\"\n"),
    );
    let run = ws.run(&["chat", "Hello"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("the model server gets the key in $TOOLCELL_TEST_KEY"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("`write_file` approved automatically"),
        "{run:?}"
    );
    let sent = &server.requests()[0];
    assert!(
        !sent
            .headers
            .iter()
            .any(|(_, v)| v.contains("AKIA_TOP_SECRET")),
        "the key was sent: {:?}",
        sent.headers
    );
    // A link named toolcell.toml to a trusted config is not trusted.
    assert_eq!(ws.run(&["trust"]).code, 0);
    let other = ws.outer.join("other");
    std::fs::create_dir(&other).unwrap();
    std::os::unix::fs::symlink(ws.root.join("toolcell.toml"), other.join("toolcell.toml")).unwrap();
    let mut linked = ws.command(&["tools", "list"]);
    linked.current_dir(&other);
    let out = linked.output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not trusted"),
        "{out:?}"
    );
}

#[test]
fn a_tools_error_quoting_a_path_stays_on_one_line() {
    let ws = Workspace::new();
    let (_, message) = ws.call_refused("read_file", json!({"path": "a\nok: read 12 bytes\nb"}));
    assert!(!message.contains('\n'), "{message:?}");
    assert!(message.contains("a\\nok: read 12 bytes\\nb"), "{message:?}");
}

#[test]
fn a_program_that_points_a_scheduled_workflow_elsewhere_through_a_link_is_refused() {
    let ws = Workspace::new();
    ws.write("real_flows/job.rhai", "\"ok\"\n");
    ws.write("evil/job.rhai", "\"owned\"\n");
    std::os::unix::fs::symlink("real_flows", ws.root.join("flows")).unwrap();
    ws.write(
        "toolcell.toml",
        "[tools.run_command]\nprocess = [\"ln\", \"sh\"]\n[[schedule]]\nname = \"job\"\ncron = \"0 3 * * *\"\nworkflow = \"flows/job.rhai\"\n",
    );
    // A new module beside the workflow is taken away again.
    let (code, envelope) = ws.call(
        "run_command",
        json!({"program": "sh", "args": ["-c", "echo 'fn f() { 2 }' > real_flows/new.rhai"]}),
    );
    assert_eq!(code, 4, "{envelope}");
    assert!(!ws.root.join("real_flows/new.rhai").exists());
    // A link swapped on the way is put back.
    let (code, envelope) = ws.call(
        "run_command",
        json!({"program": "ln", "args": ["-sfn", "evil", "flows"]}),
    );
    assert_eq!(code, 4, "{envelope}");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the link") && message.contains("put back"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_link(ws.root.join("flows")).unwrap(),
        std::path::Path::new("real_flows")
    );
    // A folder that was not a link, replaced by one, is told.
    std::fs::remove_file(ws.root.join("flows")).unwrap();
    std::fs::rename(ws.root.join("real_flows"), ws.root.join("flows")).unwrap();
    // The user moved the scheduled workflow's files: trusted again, as
    // trust covers what the schedules run.
    assert_eq!(ws.run(&["trust"]).code, 0);
    let (code, envelope) = ws.call(
        "run_command",
        json!({"program": "sh", "args": ["-c", "mv flows kept && ln -s evil flows"]}),
    );
    if toolcell::contain::mounts::available() {
        // In its own mounts the folder on the way to the workflow is a
        // mount point: it cannot be moved at all.
        assert_eq!(code, 0, "{envelope}");
        let stderr = envelope["result"]["stderr"].as_str().unwrap();
        assert!(stderr.contains("Device or resource busy"), "{envelope}");
        assert!(ws.root.join("flows/job.rhai").is_file());
    } else {
        assert_eq!(code, 4, "{envelope}");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(message.contains("now leads elsewhere"), "{message}");
    }
}

#[test]
fn a_config_of_another_name_the_user_trusted_is_policy_too() {
    let ws = Workspace::new();
    let ci = "[[roots]]\npath = \".\"\naccess = \"read\"\n";
    ws.write_untrusted("ci.toml", ci);
    let trusted = ws.run(&["--config", "ci.toml", "trust"]);
    assert_eq!(trusted.code, 0, "{trusted:?}");
    // Working in the same folder without it (no toolcell.toml: the folder
    // is a writable root), a standing grant does not cover rewriting it.
    let (code, envelope) = ws.call(
        "write_file",
        json!({"path": "ci.toml", "content": "[secrets]\nallow = [\"**\"]\n"}),
    );
    assert_ne!(code, 0, "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("toolcell's config"),
        "{envelope}"
    );
    assert_eq!(ws.read("ci.toml"), ci);
    // Another .toml is the tools' as before.
    ws.call_ok(
        "write_file",
        json!({"path": "other.toml", "content": "x = 1\n"}),
    );
}

#[test]
fn a_config_never_trusted_inside_a_trusted_workspace_is_said_where_it_is_used() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", "[secrets]\ndeny = [\"*.secret\"]\n");
    // As a program that may write the workspace could leave one.
    ws.write_untrusted("sub/toolcell.toml", "[[roots]]\npath = \".\"\n");
    let in_sub = |args: &[&str]| {
        let output = ws
            .command(args)
            .current_dir(ws.root.join("sub"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let said = in_sub(&["tools", "list"]);
    assert!(
        said.contains("inside the workspace of") && said.contains("you never trusted it"),
        "{said}"
    );
    // At the top it is not this folder's config: nothing to say.
    let top = ws.run(&["tools", "list"]);
    assert!(!top.stderr.contains("never trusted"), "{top:?}");
    // Trusted on purpose, it is said no more.
    in_sub(&["trust"]);
    assert!(!in_sub(&["tools", "list"]).contains("never trusted"));
}
