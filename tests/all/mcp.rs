//! `toolcell mcp` end to end: the binary speaking MCP (JSON-RPC 2.0, one
//! message per line on stdio) to a client in this test, as any MCP client
//! would: initialize, list the tools, call them.

use crate::harness::Workspace;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a test waits for one answer.
const ANSWER_LIMIT: Duration = Duration::from_secs(30);

/// A `toolcell mcp` session.
pub struct Session {
    child: Child,
    /// The client's end of the server's input; `None` once closed.
    stdin: Option<ChildStdin>,
    answers: mpsc::Receiver<Value>,
    next_id: u64,
    /// How to answer the server's elicitation requests, in order.
    elicit_answers: std::collections::VecDeque<&'static str>,
    /// The elicitation requests the server made.
    asked: Vec<Value>,
    /// A file someone edits while the next elicitation waits: path, content.
    edit_while_asked: Option<(std::path::PathBuf, &'static str)>,
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long a server may take to finish after its input is closed.
const EXIT_LIMIT: Duration = Duration::from_secs(10);

impl Session {
    pub fn start(ws: &Workspace, args: &[&str]) -> Self {
        Self::start_with(ws, args, json!({}))
    }

    /// A session whose client declares `capabilities`.
    fn start_with(ws: &Workspace, args: &[&str], capabilities: Value) -> Self {
        let mut command = ws.command(&[&["mcp"], args].concat());
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC, not {line:?}: {e}"));
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        let mut session = Self {
            child,
            stdin: Some(stdin),
            answers,
            next_id: 0,
            elicit_answers: Default::default(),
            asked: Vec::new(),
            edit_while_asked: None,
        };
        let init = session.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["serverInfo"]["name"], "toolcell", "{init}");
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    /// Ends the session as the MCP specification asks of a client: closes
    /// the server's input and waits for it to exit by itself.
    fn close(mut self) {
        drop(self.stdin.take());
        let status = self.wait_for_exit("its input closing");
        assert!(status.success(), "the server exited with {status}");
    }

    /// Waits up to [`EXIT_LIMIT`] for the server to exit after `cause`.
    fn wait_for_exit(&mut self, cause: &str) -> std::process::ExitStatus {
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < EXIT_LIMIT,
                "the server did not exit within {EXIT_LIMIT:?} of {cause}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("the session is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its result (panics on a JSON-RPC error).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self
                .answers
                .recv_timeout(ANSWER_LIMIT)
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            if message["method"] == "elicitation/create" {
                let action = self
                    .elicit_answers
                    .pop_front()
                    .unwrap_or_else(|| panic!("an unexpected elicitation: {message}"));
                self.asked.push(message["params"].clone());
                if let Some((path, content)) = self.edit_while_asked.take() {
                    std::fs::write(path, content).unwrap();
                }
                self.send(
                    json!({"jsonrpc": "2.0", "id": message["id"], "result": {"action": action}}),
                );
                continue;
            }
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }
}

pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn an_mcp_client_lists_and_calls_the_tools_in_their_cells() {
    let ws = Workspace::new();
    ws.write("notes/a.md", "# Alpha\nthe word is pumpkin\n");
    let mut mcp = Session::start(&ws, &[]);

    let tools = mcp.request("tools/list", json!({}))["tools"].clone();
    let tool = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed: {tools}"))
            .clone()
    };
    let read = tool("read_file");
    assert_eq!(read["inputSchema"]["properties"]["path"]["type"], "string");
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("write_file")["annotations"]["destructiveHint"], true);

    let result = mcp.call("read_file", json!({"path": "notes/a.md"}));
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["structuredContent"]["content"],
        "# Alpha\nthe word is pumpkin\n"
    );
    let found = mcp.call("search_files", json!({"path": ".", "query": "pumpkin"}));
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(
        found["structuredContent"]["matches"][0]["path"],
        "notes/a.md"
    );

    // Out of the workspace: refused as on the command line.
    std::fs::write(ws.outer.join("secret.txt"), "secret").unwrap();
    let escape = mcp.call("read_file", json!({"path": "../secret.txt"}));
    assert_eq!(escape["isError"], true);
    let (_, cli) = ws.call("read_file", json!({"path": "../secret.txt"}));
    let cli_message = cli["error"]["message"].as_str().unwrap();
    assert!(
        text(&escape).contains(cli_message),
        "the same refusal: {escape} vs {cli}"
    );
    assert!(!text(&escape).contains("secret\""), "{escape}");

    // Bad arguments come back as a tool error, not a protocol error.
    let bad = mcp.call("read_file", json!({"path": 7}));
    assert_eq!(bad["isError"], true);
    assert!(text(&bad).contains("invalid-args"), "{bad}");

    // Nobody to ask: a tool that needs approval is refused with the fix.
    let denied = mcp.call("write_file", json!({"path": "b.txt", "content": "x"}));
    assert_eq!(denied["isError"], true);
    assert!(text(&denied).contains("--approve write_file"), "{denied}");
    assert!(!ws.root.join("b.txt").exists());
    mcp.close();

    let mut approved = Session::start(&ws, &["--approve", "write_file"]);
    let wrote = approved.call("write_file", json!({"path": "b.txt", "content": "x"}));
    assert_eq!(wrote["isError"], false, "{wrote}");
    assert_eq!(ws.read("b.txt"), "x");
    approved.close();

    // Every call is a run in the store.
    let runs = ws.run(&["runs", "list", "--json"]).json();
    let mcp_runs: Vec<&Value> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "mcp")
        .collect();
    assert_eq!(mcp_runs.len(), 6, "{runs:#}");
    assert!(
        mcp_runs
            .iter()
            .any(|r| r["title"] == "mcp: write_file" && r["status"] == "succeeded")
    );
    assert!(
        mcp_runs
            .iter()
            .any(|r| r["title"] == "mcp: read_file" && r["status"] == "failed")
    );
    // A read-only call is recorded after it answered, whole: the run and its call.
    let first_read = mcp_runs
        .iter()
        .filter(|r| r["title"] == "mcp: read_file" && r["status"] == "succeeded")
        .map(|r| r["id"].to_string())
        .next_back()
        .expect("a recorded read");
    let record = ws.run(&["runs", "show", &first_read, "--json"]).json();
    let call = &record["tool_calls"][0];
    assert_eq!(call["tool"], "read_file", "{record}");
    assert_eq!(call["status"], "done", "{record}");
    assert_eq!(call["decision"], "auto", "{record}");
    assert!(
        call["result"].as_str().unwrap().contains("pumpkin"),
        "{record}"
    );
}

/// Linux's number for the `SCHED_IDLE` scheduling class.
const SCHED_IDLE: u32 = 5;

/// The scheduling policy of the server's thread named `name`, read from
/// `/proc` (field 41 of a task's `stat`).
fn scheduling_policy(session: &Session, name: &str) -> u32 {
    let tasks = format!("/proc/{}/task", session.child.id());
    for task in std::fs::read_dir(&tasks).unwrap() {
        let task = task.unwrap().path();
        let Ok(comm) = std::fs::read_to_string(task.join("comm")) else {
            continue;
        };
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(task.join("stat")).unwrap();
        // The name (field 2) is in parentheses and may hold spaces: count
        // the fields after its closing one, which is field 3.
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        return after_name.split(' ').nth(41 - 3).unwrap().parse().unwrap();
    }
    panic!("no thread named {name} in {tasks}");
}

#[test]
fn every_call_runs_in_an_instance_of_its_own_with_cells_built_ahead() {
    // `toolcell mcp` builds each tool's next cell while the answer travels;
    // none may serve two calls, even after a trap or a timeout.
    let ws = Workspace::new();
    ws.install_probe();
    // Cells are built ahead only for tools that run without asking.
    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");
    let mut mcp = Session::start(&ws, &[]);
    let count = |mcp: &mut Session, when: &str| {
        let counted = mcp.call("probe", json!({"action": "count"}));
        assert_eq!(counted["isError"], false, "{when}: {counted}");
        assert_eq!(
            counted["structuredContent"]["calls"], 1,
            "{when}: an instance served a second call: {counted}"
        );
        counted["_meta"]["dev.toolcell/built_ahead"] == true
    };
    let mut built_ahead = 0;
    for round in 0..20 {
        // Time for the keeper to ready the next cell (it takes well under
        // a millisecond), so that these calls do run in spares.
        std::thread::sleep(Duration::from_millis(50));
        built_ahead += usize::from(count(&mut mcp, &format!("call {round}")));
    }
    assert!(
        built_ahead >= 10,
        "most calls run in a cell built ahead: {built_ahead} of 20"
    );
    assert_eq!(
        scheduling_policy(&mcp, "toolcell-keeper"),
        SCHED_IDLE,
        "the keeper works only in a core's spare time, not at the calls' expense"
    );
    let trapped = mcp.call("probe", json!({"action": "trap"}));
    assert_eq!(trapped["isError"], true, "{trapped}");
    count(&mut mcp, "after a trap");
    let looped = mcp.call("probe", json!({"action": "loop"}));
    assert!(text(&looped).contains("time limit"), "{looped}");
    count(&mut mcp, "after a timeout");
    mcp.close();
}

#[test]
fn a_result_a_tree_cannot_hold_is_answered_as_its_text_alone() {
    // JSON's grammar allows numbers no f64 holds; serde_json's tree does
    // not. The answer's text is the result as written, and the optional
    // structured content is left out rather than made `null`.
    let ws = Workspace::new();
    ws.install_probe();
    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");
    let mut mcp = Session::start(&ws, &[]);
    let written = r#"{"n":1e400,"s":"ok"}"#;
    let answer = mcp.call("probe", json!({"action": "raw", "text": written}));
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(text(&answer), written, "{answer}");
    assert!(answer.get("structuredContent").is_none(), "{answer}");
    let fine = mcp.call("probe", json!({"action": "raw", "text": r#"{"n":1e300}"#}));
    assert_eq!(fine["structuredContent"]["n"], 1e300, "{fine}");
    mcp.close();
}

#[test]
fn a_root_replaced_between_calls_is_seen_as_it_is_now() {
    // A cell built ahead holds its folders open: if the folder at a root's
    // path is replaced in the meantime, the call must see the new one.
    let ws = Workspace::new();
    ws.write("toolcell.toml", "[[roots]]\npath = \"data\"\n");
    ws.write("data/a.txt", "old text\n");
    let mut mcp = Session::start(&ws, &[]);
    for _ in 0..5 {
        let read = mcp.call("read_file", json!({"path": "a.txt"}));
        assert!(text(&read).contains("old text"), "{read}");
    }
    // The spare for the next read is built within microseconds of the
    // last answer; it is surely there by now.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::rename(ws.root.join("data"), ws.root.join("data.old")).unwrap();
    ws.write("data/a.txt", "new text\n");
    let read = mcp.call("read_file", json!({"path": "a.txt"}));
    assert!(
        text(&read).contains("new text"),
        "the replaced folder: {read}"
    );
    std::fs::remove_dir_all(ws.root.join("data")).unwrap();
    let gone = mcp.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(gone["isError"], true, "the root is gone: {gone}");
    assert!(!text(&gone).contains("text\\n"), "{gone}");
    mcp.close();
}

#[test]
fn a_named_pipe_in_the_workspace_is_refused_not_waited_on() {
    // Opening a FIFO for reading waits for a writer, forever; with one
    // thread per session that would freeze every call after it.
    let ws = Workspace::new();
    ws.write("a.txt", "plain words\n");
    let pipe = std::ffi::CString::new(ws.root.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(pipe.as_ptr(), 0o644) }, 0);
    let mut mcp = Session::start(&ws, &["--approve", "replace_in_file"]);
    let read = mcp.call("read_file", json!({"path": "pipe"}));
    assert_eq!(read["isError"], true, "{read}");
    assert!(text(&read).contains("not a regular file"), "{read}");
    let found = mcp.call("search_files", json!({"path": ".", "query": "words"}));
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(found["structuredContent"]["matches"][0]["path"], "a.txt");
    assert_eq!(
        found["structuredContent"]["files_skipped"]["not_a_file"], 1,
        "{found}"
    );
    let replaced = mcp.call(
        "replace_in_file",
        json!({"path": "pipe", "old_text": "a", "new_text": "b"}),
    );
    assert!(text(&replaced).contains("not a regular file"), "{replaced}");
    let after = mcp.call("read_file", json!({"path": "a.txt"}));
    assert!(text(&after).contains("plain words"), "{after}");
    mcp.close();
}

#[test]
fn reads_answered_before_a_sigterm_are_all_recorded() {
    // Read-only calls are recorded after they answer, in batches: a client
    // stopping the server with SIGTERM right after the last answer must
    // still find every call in the store.
    let ws = Workspace::new();
    ws.write("a.txt", "apple\n");
    let mut mcp = Session::start(&ws, &[]);
    for _ in 0..25 {
        let read = mcp.call("read_file", json!({"path": "a.txt"}));
        assert_eq!(read["isError"], false, "{read}");
    }
    // SAFETY: sending SIGTERM to our own child.
    unsafe { libc::kill(mcp.child.id() as i32, libc::SIGTERM) };
    mcp.wait_for_exit("SIGTERM");
    let runs = ws.run(&["runs", "list", "--json", "--limit", "100"]).json();
    let reads = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["title"] == "mcp: read_file" && r["status"] == "succeeded")
        .count();
    assert_eq!(reads, 25, "{runs:#}");
}

/// `toolcell mcp` driven by the MCP Inspector's command-line mode
/// (`@modelcontextprotocol/inspector --cli`), a client we did not write.
fn inspector(ws: &Workspace, method_args: &[&str]) -> Value {
    let bin = crate::mcp_peers::node_modules().join(".bin/mcp-inspector");
    let harness = ws.command(&[]);
    // The inspector starts the server with a minimal environment: the
    // harness's variables are passed with `-e`.
    let mut args: Vec<String> = vec!["--cli".into()];
    for (key, value) in harness.get_envs() {
        if let Some(value) = value {
            args.push("-e".into());
            args.push(format!(
                "{}={}",
                key.to_string_lossy(),
                value.to_string_lossy()
            ));
        }
    }
    args.push(env!("CARGO_BIN_EXE_toolcell").into());
    args.push("mcp".into());
    args.extend(method_args.iter().map(|a| a.to_string()));
    let output = std::process::Command::new(&bin)
        .args(&args)
        .current_dir(&ws.root)
        .output()
        .expect("the inspector runs");
    assert!(
        output.status.success(),
        "inspector {method_args:?}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "the inspector printed no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// A `tools/call` of `tool` through the inspector, with `key=value` arguments.
fn inspector_call(ws: &Workspace, tool: &str, args: &[&str]) -> Value {
    let mut method = vec!["--method", "tools/call", "--tool-name", tool];
    for arg in args {
        method.extend(["--tool-arg", arg]);
    }
    inspector(ws, &method)
}

#[test]
fn the_mcp_inspector_lists_and_calls_the_tools_and_sees_the_cli_refusal() {
    let ws = Workspace::new();
    ws.write("notes/a.md", "# Alpha\nthe word is pumpkin\n");
    std::fs::write(ws.outer.join("secret.txt"), "secret").unwrap();

    let listed = inspector(&ws, &["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for name in ["read_file", "search_files", "write_file", "list_directory"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }

    let read = inspector_call(&ws, "read_file", &["path=notes/a.md"]);
    assert_eq!(read["isError"], false, "{read}");
    assert_eq!(
        read["structuredContent"]["content"],
        "# Alpha\nthe word is pumpkin\n"
    );

    let found = inspector_call(&ws, "search_files", &["path=.", "query=pumpkin"]);
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(
        found["structuredContent"]["matches"][0]["path"],
        "notes/a.md"
    );

    let escape = inspector_call(&ws, "read_file", &["path=../secret.txt"]);
    assert_eq!(escape["isError"], true, "{escape}");
    let (_, cli) = ws.call("read_file", json!({"path": "../secret.txt"}));
    let cli_message = cli["error"]["message"].as_str().unwrap();
    assert!(
        text(&escape).contains(cli_message),
        "the same refusal: {escape} vs {cli}"
    );
}

#[test]
fn a_file_changed_while_the_client_asked_is_refused_in_band_not_overwritten() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\n");
    let mut mcp = Session::start_with(&ws, &[], json!({"elicitation": {}}));
    mcp.elicit_answers.extend(["accept"]);
    mcp.edit_while_asked = Some((ws.root.join("a.txt"), "the user's edit\n"));
    let wrote = mcp.call("write_file", json!({"path": "a.txt", "content": "model\n"}));
    assert_eq!(wrote["isError"], true, "{wrote}");
    assert!(
        text(&wrote).contains("`a.txt` changed since you approved it"),
        "{wrote}"
    );
    assert_eq!(ws.read("a.txt"), "the user's edit\n");
    // And a change of the policy is no client's to approve.
    mcp.elicit_answers.extend(["accept"]);
    let config = mcp.call(
        "write_file",
        json!({"path": "toolcell.toml", "content": "x"}),
    );
    assert_eq!(config["isError"], true, "{config}");
    assert!(
        text(&config).contains("changes toolcell's own policy"),
        "{config}"
    );
    assert!(!ws.root.join("toolcell.toml").exists());
    assert_eq!(
        mcp.asked.len(),
        1,
        "the client was not asked about the config"
    );
}

#[test]
fn a_client_with_elicitation_is_asked_before_a_call_that_needs_approval() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\ntwo\n");
    let mut mcp = Session::start_with(&ws, &[], json!({"elicitation": {}}));
    mcp.elicit_answers.extend(["accept", "decline"]);

    let wrote = mcp.call(
        "write_file",
        json!({"path": "a.txt", "content": "one\nTWO\n"}),
    );
    assert_eq!(wrote["isError"], false, "{wrote}");
    assert_eq!(ws.read("a.txt"), "one\nTWO\n");
    let asked = mcp.asked[0]["message"].as_str().unwrap().to_string();
    assert!(
        asked.contains("allow `write_file`") && asked.contains("-two") && asked.contains("+TWO"),
        "the question shows the call and its change: {asked}"
    );

    let declined = mcp.call("write_file", json!({"path": "a.txt", "content": "gone\n"}));
    assert_eq!(declined["isError"], true, "{declined}");
    assert!(
        text(&declined).contains("declined it in the MCP client"),
        "{declined}"
    );
    assert_eq!(ws.read("a.txt"), "one\nTWO\n", "nothing written");

    // Read-only tools are not asked about; grants on the command line skip asking.
    let read = mcp.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(read["isError"], false, "{read}");
    assert_eq!(mcp.asked.len(), 2);
    drop(mcp);
    let mut granted = Session::start_with(
        &ws,
        &["--approve", "write_file"],
        json!({"elicitation": {}}),
    );
    let wrote = granted.call("write_file", json!({"path": "b.txt", "content": "x"}));
    assert_eq!(wrote["isError"], false, "{wrote}");
    assert!(granted.asked.is_empty());
}

#[test]
fn a_client_without_elicitation_can_have_its_calls_parked_for_toolcell_approve() {
    let ws = Workspace::new();
    ws.write("a.txt", "old\n");
    let mut mcp = Session::start(&ws, &["--wait-approval", "60s"]);
    // Another terminal: the call shows up in the inbox with its change,
    // and is approved there; the next one is denied with a reason.
    let decide = |verb: &'static [&'static str]| {
        let call = ws.first_parked();
        assert!(call["shown"].as_str().unwrap().contains("+new"), "{call}");
        let id = call["id"].as_i64().expect("a parked call's id").to_string();
        let mut args = vec![verb[0], id.as_str()];
        args.extend(&verb[1..]);
        let decided = ws.run(&args);
        assert_eq!(decided.code, 0, "{decided:?}");
    };
    std::thread::scope(|scope| {
        scope.spawn(|| decide(&["approve"]));
        let wrote = mcp.call("write_file", json!({"path": "a.txt", "content": "new\n"}));
        assert_eq!(wrote["isError"], false, "{wrote}");
    });
    assert_eq!(ws.read("a.txt"), "new\n");
    ws.write("a.txt", "old\n");
    std::thread::scope(|scope| {
        scope.spawn(|| decide(&["deny", "--reason", "keep the old one"]));
        let refused = mcp.call("write_file", json!({"path": "a.txt", "content": "new\n"}));
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(text(&refused).contains("keep the old one"), "{refused}");
    });
    assert_eq!(ws.read("a.txt"), "old\n");
}
