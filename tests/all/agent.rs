//! The agent loop end to end: the `toolcell chat` binary against fake model
//! servers on 127.0.0.1 speaking Ollama's NDJSON and the OpenAI-compatible
//! SSE from scripted replies. Each test checks what the host sent back:
//! every tool result paired with its call id, in order.

use crate::harness::{Run, Workspace};
use crate::model_server::{ModelServer, Part, Reply, Request, ollama, openai};
use serde_json::{Value, json};
use std::time::Duration;

/// A workspace whose `[model]` points at `server`.
pub fn workspace(server: &ModelServer, provider: &str, extra: &str) -> Workspace {
    let ws = Workspace::new();
    let base = match provider {
        "openai" => format!("{}/v1", server.url),
        _ => server.url.clone(),
    };
    ws.write(
        "toolcell.toml",
        &format!(
            "[model]\nprovider = \"{provider}\"\nbase_url = \"{base}\"\nname = \"fake-model\"\nnum_ctx = 8192\nidle_timeout_ms = 3000\n{extra}"
        ),
    );
    ws
}

/// The tool results in a request: `(tool_call_id, tool_name, content)`.
pub fn tool_results(request: &Request) -> Vec<(String, String, String)> {
    messages(request)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let text = |k: &str| m[k].as_str().unwrap_or_default().to_string();
            (text("tool_call_id"), text("tool_name"), text("content"))
        })
        .collect()
}

pub fn messages(request: &Request) -> Vec<Value> {
    request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Every tool message follows the assistant message that holds its call,
/// in the order of the calls.
pub fn assert_paired(request: &Request) {
    let messages = messages(request);
    let mut expected: Vec<String> = Vec::new();
    for m in &messages {
        if m["role"] == "assistant" {
            assert!(
                expected.is_empty(),
                "calls without results before a new assistant turn: {expected:?}"
            );
            expected = m["tool_calls"]
                .as_array()
                .map(|calls| {
                    calls
                        .iter()
                        .map(|c| c["id"].as_str().unwrap_or_default().to_string())
                        .collect()
                })
                .unwrap_or_default();
        } else if m["role"] == "tool" {
            assert!(!expected.is_empty(), "a tool result without a call: {m}");
            assert_eq!(
                m["tool_call_id"].as_str().unwrap(),
                expected.remove(0),
                "results out of order"
            );
        }
    }
}

pub fn chat(ws: &Workspace, args: &[&str]) -> Run {
    let mut all = vec!["chat"];
    all.extend_from_slice(args);
    ws.run(&all)
}

pub fn run_record(ws: &Workspace, id: &str) -> Value {
    let run = ws.run(&["runs", "show", id, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    run.json()
}

#[test]
fn ollama_calls_on_several_lines_run_in_order_and_results_pair_with_ids() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![
            ollama::thinking("The user wants both."),
            ollama::content("Reading the notes."),
            ollama::calls(&[("call_a1", "read_file", json!({"path": "notes.md"}))]),
            ollama::calls(&[("", "list_directory", json!({"path": "."}))]),
        ])
        .rechunked(7),
        ollama::answer("The notes say hello."),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write("notes.md", "hello from the notes\n");
    let run = chat(&ws, &["Summarise notes.md"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("Reading the notes."), "{run:?}");
    assert!(run.stdout.contains("The notes say hello."), "{run:?}");
    assert!(run.stderr.contains("[done] read_file"), "{run:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.path, "/api/chat");
    assert_eq!(first.body["options"]["num_ctx"], 8192);
    assert_eq!(first.body["stream"], true);
    let offered: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"read_file") && offered.contains(&"write_file"),
        "{offered:?}"
    );
    assert_eq!(messages(first)[0]["role"], "system");
    assert_eq!(messages(first)[1]["content"], "Summarise notes.md");

    let second = &requests[1];
    assert_paired(second);
    let results = tool_results(second);
    assert_eq!(results.len(), 2);
    assert_eq!(
        (results[0].0.as_str(), results[0].1.as_str()),
        ("call_a1", "read_file")
    );
    assert!(results[0].2.contains("hello from the notes"), "{results:?}");
    // The server sent no id for the second call: the host made one.
    assert_eq!(
        (results[1].0.as_str(), results[1].1.as_str()),
        ("call_1", "list_directory")
    );
    assert!(results[1].2.contains("notes.md"));
    // The assistant turn is replayed with its thinking and calls.
    let assistant = &messages(second)[2];
    assert_eq!(assistant["thinking"], "The user wants both.");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"]["path"],
        "notes.md"
    );

    let record = run_record(&ws, "1");
    assert_eq!(record["status"], "succeeded");
    assert_eq!(record["answer"], "The notes say hello.");
    assert_eq!(record["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(record["tool_calls"][0]["decision"], "auto");
}

#[test]
fn openai_fragments_split_anywhere_and_new_ids_at_one_index_stay_separate() {
    let server = ModelServer::start(vec![
        openai::reply(
            vec![
                openai::reasoning("Two files."),
                openai::call_start(0, "call_x", "read_file"),
                openai::call_args(0, "{\"pa"),
                openai::call_args(0, "th\": \"a.txt\"}"),
                // An old server put the second parallel call at index 0 again.
                openai::call_whole(0, "call_y", "read_file", "{\"path\": \"b.txt\"}"),
            ],
            "tool_calls",
        )
        .rechunked(5),
        openai::answer("Both read: ünïcode survives."),
    ]);
    let ws = workspace(&server, "openai", "");
    ws.write("a.txt", "alpha\n");
    ws.write("b.txt", "beta\n");
    let run = chat(&ws, &["Read a.txt and b.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("ünïcode survives"), "{run:?}");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_paired(&requests[1]);
    let results = tool_results(&requests[1]);
    assert_eq!(
        results.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["call_x", "call_y"]
    );
    assert!(
        results[0].2.contains("alpha") && results[1].2.contains("beta"),
        "{results:?}"
    );
    let assistant = &messages(&requests[1])[2];
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        "{\"path\": \"a.txt\"}"
    );
    // The reasoning of a tool-call turn goes back (DeepSeek requires it).
    assert_eq!(assistant["reasoning_content"], "Two files.");
}

#[test]
fn an_error_line_after_http_200_surfaces_and_fails_the_run() {
    let server = ModelServer::start(vec![Reply::stream(
        ollama::CONTENT_TYPE,
        vec![
            ollama::content("Let me"),
            ollama::error_line("model runner has unexpectedly stopped"),
        ],
    )]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["hi"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("model runner has unexpectedly stopped"),
        "{run:?}"
    );
    assert_eq!(server.requests().len(), 1, "a model error is not retried");
    assert_eq!(run_record(&ws, "1")["status"], "failed");
}

#[test]
fn a_500_is_retried_without_running_the_tool_again() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c1",
            "write_file",
            json!({"path": "out.txt", "content": "once\n"}),
        )])]),
        Reply::error(500, json!({"error": "temporary failure"})),
        ollama::answer("Written."),
    ]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["--approve", "write_file", "Write out.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("HTTP 500: temporary failure; retrying"),
        "{run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[1].body, requests[2].body,
        "the retry repeats the same model request"
    );
    let record = run_record(&ws, "1");
    assert_eq!(
        record["tool_calls"].as_array().unwrap().len(),
        1,
        "the tool ran once"
    );
    assert_eq!(record["tool_calls"][0]["decision"], "approved");
    assert_eq!(ws.read("out.txt"), "once\n");
}

#[test]
fn a_truncated_stream_is_retried_and_a_stalled_one_times_out() {
    let server = ModelServer::start(vec![
        Reply::stream(ollama::CONTENT_TYPE, vec![ollama::content("partial")]),
        ollama::answer("complete"),
    ]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("stream ended before the answer was complete"),
        "{run:?}"
    );
    assert_eq!(server.requests().len(), 2);

    let server = ModelServer::start(vec![
        Reply::stream(
            ollama::CONTENT_TYPE,
            vec![ollama::content("thinking about it")],
        )
        .then(Part::Stall),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write(
        "toolcell.toml",
        &format!(
            "[model]\nbase_url = \"{}\"\nname = \"m\"\nidle_timeout_ms = 300\n",
            server.url
        ),
    );
    let run = chat(&ws, &["hi"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("sent nothing for"), "{run:?}");
    assert!(run.stderr.contains("idle_timeout_ms"), "{run:?}");
    assert_eq!(
        server.requests().len(),
        1,
        "a stalled stream is not retried"
    );
}

#[test]
fn unknown_tools_invalid_and_cut_off_arguments_go_back_in_band() {
    let server = ModelServer::start(vec![
        openai::reply(
            vec![
                openai::call_whole(0, "u1", "delete_everything", "{}"),
                openai::call_whole(1, "u2", "read_file", "{\"pathh\": \"a.txt\"}"),
                openai::call_whole(2, "u3", "read_file", "{\"path\" \"a.txt\"}"),
                // Almost-JSON is repaired, then checked against the schema.
                openai::call_whole(3, "u5", "read_file", "{'path': 'a.txt',"),
            ],
            "tool_calls",
        ),
        openai::reply(
            vec![openai::call_whole(
                0,
                "u4",
                "write_file",
                "{\"path\": \"big.txt\", \"content\": \"never fin",
            )],
            "length",
        ),
        openai::answer("Sorry."),
    ]);
    let ws = workspace(&server, "openai", "");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["--yes", "Do it"]);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let results = tool_results(&requests[1]);
    assert!(
        results[0].2.contains("no tool named `delete_everything`")
            && results[0].2.contains("read_file"),
        "{results:?}"
    );
    assert!(
        results[1].2.contains("invalid-args") && results[1].2.contains("path"),
        "{results:?}"
    );
    assert!(results[2].2.contains("not valid JSON"), "{results:?}");
    assert!(
        results[3].2.contains("alpha"),
        "repaired and run: {results:?}"
    );
    let results = tool_results(&requests[2]);
    assert_eq!(results.last().unwrap().0, "u4");
    assert!(results.last().unwrap().2.contains("cut off"), "{results:?}");
    assert!(
        !ws.root.join("big.txt").exists(),
        "half a call never runs, even with --yes"
    );
    assert_paired(&requests[2]);
}

#[test]
fn without_a_terminal_a_call_needing_approval_is_denied_in_band() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "w1",
            "write_file",
            json!({"path": "x.txt", "content": "x"}),
        )])]),
        ollama::answer("I could not write it."),
    ]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["Write x.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ws.root.join("x.txt").exists());
    assert!(run.stderr.contains("[denied] write_file"), "{run:?}");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].2.contains("needs approval") && results[0].2.contains("--approve write_file"),
        "{results:?}"
    );
    let record = run_record(&ws, "1");
    assert_eq!(record["tool_calls"][0]["status"], "denied");
    assert_eq!(record["tool_calls"][0]["decision"], "declined");

    // A tool the config denies is not even offered.
    let server = ModelServer::start(vec![ollama::answer("ok")]);
    let ws = workspace(
        &server,
        "ollama",
        "[tools.write_file]\napproval = \"deny\"\n",
    );
    assert_eq!(chat(&ws, &["hi"]).code, 0);
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(!offered.contains("\"write_file\"") && offered.contains("\"read_file\""));
}

#[test]
fn the_round_budget_ends_the_run_plainly_and_repeats_are_stopped() {
    let call = |id: &str| {
        ollama::reply(vec![ollama::calls(&[(
            id,
            "read_file",
            json!({"path": "a.txt"}),
        )])])
    };
    let server = ModelServer::start(vec![call("r1"), call("r2"), call("r3"), call("r4")]);
    let ws = workspace(&server, "ollama", "[agent]\nmax_rounds = 4\n");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["Loop"]);
    assert_eq!(run.code, 5, "{run:?}");
    assert!(run.stderr.contains("used all 4 rounds"), "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let results = tool_results(&requests[3]);
    assert!(results[0].2.contains("alpha") && results[1].2.contains("alpha"));
    assert!(
        results[2].2.contains("call number 3 in a row"),
        "{results:?}"
    );
    let record = run_record(&ws, "1");
    assert_eq!(record["status"], "incomplete");
}

#[test]
fn ctrl_c_stops_the_stream_keeps_the_record_and_exits_130() {
    let server = ModelServer::start(vec![
        Reply::stream(ollama::CONTENT_TYPE, vec![ollama::content("Working")]).then(Part::Stall),
    ]);
    let ws = workspace(&server, "ollama", "");
    let child = ws
        .command(&["chat", "Take your time"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start toolcell");
    server.wait_for_requests(1);
    std::thread::sleep(Duration::from_millis(200));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{output:?}");
    let record = run_record(&ws, "1");
    assert_eq!(record["status"], "cancelled");
}

#[test]
fn a_killed_run_shows_as_interrupted_and_export_gives_jsonl() {
    let server = ModelServer::start(vec![
        Reply::stream(ollama::CONTENT_TYPE, vec![ollama::content("Working")]).then(Part::Stall),
    ]);
    let ws = workspace(&server, "ollama", "");
    let mut child = ws
        .command(&["chat", "Never finishes"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start toolcell");
    server.wait_for_requests(1);
    child.kill().unwrap();
    child.wait().unwrap();
    let list = ws.run(&["runs", "list", "--json"]);
    assert_eq!(list.code, 0, "{list:?}");
    assert_eq!(list.json()[0]["status"], "interrupted");

    let export = ws.run(&["runs", "export", "1"]);
    assert_eq!(export.code, 0, "{export:?}");
    let lines: Vec<Value> = export
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "run");
    assert_eq!(lines[0]["title"], "Never finishes");
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "message" && l["content"] == "Never finishes")
    );
    let missing = ws.run(&["runs", "show", "99"]);
    assert_eq!(missing.code, 1);
    assert!(missing.stderr.contains("there is no run 99"), "{missing:?}");
}

/// Starts `toolcell ARGS` on a pseudo-terminal (util-linux `script`), in
/// the workspace with the harness's environment; its stdin and stdout (all
/// the terminal showed) are piped.
pub fn spawn_on_terminal(ws: &Workspace, args: &[&str]) -> std::process::Child {
    let quoted: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_toolcell"))
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let harness = ws.command(&[]);
    std::process::Command::new("script")
        .args(["-qec", &quoted.join(" "), "/dev/null"])
        .current_dir(&ws.root)
        .envs(harness.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux `script` runs a pseudo-terminal")
}

/// Runs `toolcell ARGS` on a pseudo-terminal, typing `answers` at it, a
/// line at each approval prompt once it is shown (as a person does: what
/// is typed before a prompt is dropped by it); returns everything the
/// terminal showed.
pub fn chat_on_terminal(ws: &Workspace, args: &[&str], answers: &str) -> (i32, String) {
    use std::io::{Read, Write};
    let mut child = spawn_on_terminal(ws, args);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut answers = answers.split_inclusive('\n');
    let mut shown = String::new();
    let mut typed = 0;
    let mut buf = [0u8; 4096];
    loop {
        let n = stdout.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        shown.push_str(&String::from_utf8_lossy(&buf[..n]));
        // The prompt's line of answers, and its "answer y, n …" again.
        let prompts = shown.matches("[q] quit").count() + shown.matches("  answer y, n").count();
        while typed < prompts {
            typed += 1;
            if let Some(line) = answers.next() {
                let _ = stdin.write_all(line.as_bytes());
                let _ = stdin.flush();
            }
        }
    }
    let status = child.wait().unwrap();
    drop(stdin);
    (status.code().unwrap_or(-1), shown)
}

#[test]
fn at_a_terminal_the_prompt_shows_the_diff_and_takes_no_with_a_reason_and_yes_for_the_run() {
    let write = |id: &str, path: &str, content: &str| {
        ollama::reply(vec![ollama::calls(&[(
            id,
            "write_file",
            json!({"path": path, "content": content}),
        )])])
    };
    let server = ModelServer::start(vec![
        write("w1", "a.txt", "one\n2\nthree\n"),
        write("w2", "a.txt", "one\nTWO\nthree\n"),
        write("w3", "b.txt", "new\n"),
        ollama::answer("Edited."),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write("a.txt", "one\ntwo\nthree\n");
    let (code, shown) =
        chat_on_terminal(&ws, &["chat", "Edit a.txt"], "n keep the digits out\na\n");
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("-two") && shown.contains("+2"),
        "the diff of the first call: {shown}"
    );
    assert!(
        shown.contains("+TWO"),
        "the diff of the second call: {shown}"
    );
    assert_eq!(
        shown.matches("wants to run with").count(),
        2,
        "the third call is covered by `a`: {shown}"
    );
    assert_eq!(ws.read("a.txt"), "one\nTWO\nthree\n");
    assert_eq!(ws.read("b.txt"), "new\n");
    let requests = server.requests();
    let declined = &tool_results(&requests[1])[0].2;
    assert!(
        declined.contains("declined") && declined.contains("keep the digits out"),
        "{declined}"
    );
    let record = run_record(&ws, "1");
    let decisions: Vec<&str> = record["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["declined", "approved-for-run", "approved"]);
}

#[test]
fn ctrl_c_during_a_tool_cancels_it_and_the_pending_calls_get_cancelled_results() {
    use std::io::BufRead;
    let server = ModelServer::start(vec![ollama::reply(vec![ollama::calls(&[
        ("p1", "probe", json!({"action": "loop"})),
        ("p2", "read_file", json!({"path": "a.txt"})),
    ])])]);
    let ws = workspace(&server, "ollama", "[tools.probe]\ntimeout_ms = 120000\n");
    ws.install_probe();
    ws.write("a.txt", "alpha\n");
    let mut child = ws
        .command(&["chat", "--yes", "Spin"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start toolcell");
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        let line = lines_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("toolcell starts the probe");
        seen.push(line.clone());
        if line.contains("[running] probe") {
            break;
        }
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    seen.extend(lines_rx.try_iter());
    assert_eq!(status.code(), Some(130), "{seen:#?}");
    let record = run_record(&ws, "1");
    assert_eq!(record["status"], "cancelled");
    let statuses: Vec<&str> = record["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["cancelled", "cancelled"], "{record:#}");
    let answered: Vec<&str> = record["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        answered,
        ["p1", "p2"],
        "every call keeps an answer in the record"
    );
}

#[test]
fn server_refusals_say_what_to_do() {
    let server = ModelServer::start(vec![Reply::error(
        400,
        json!({"error": "registry.ollama.ai/library/gemma:2b does not support thinking"}),
    )]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["hi"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("HTTP 400: registry.ollama.ai/library/gemma:2b does not support thinking"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("fix: this model cannot think"),
        "{run:?}"
    );
    assert_eq!(server.requests().len(), 1, "a 400 is not retried");

    // Nothing listens on this port once the listener is dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &format!(
            "[model]\nbase_url = \"http://127.0.0.1:{port}\"\nname = \"m\"\nmax_retries = 1\n"
        ),
    );
    let run = chat(&ws, &["hi"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("cannot reach the model server"),
        "{run:?}"
    );
    assert!(run.stderr.contains("retrying in 0.5 s (1 of 1)"), "{run:?}");
    assert!(
        run.stderr.contains("fix: is the model server running"),
        "{run:?}"
    );

    let run = Workspace::new().run(&["chat", "hi"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("no model is set") && run.stderr.contains("--model"),
        "{run:?}"
    );
}

#[test]
fn undo_restores_what_a_run_changed_and_refuses_files_changed_since() {
    let turn = |calls: &[(&str, &str, Value)]| ollama::reply(vec![ollama::calls(calls)]);
    let script = || {
        vec![
            turn(&[
                (
                    "c1",
                    "write_file",
                    json!({"path": "notes.md", "content": "rewritten\n"}),
                ),
                (
                    "c2",
                    "write_file",
                    json!({"path": "new.md", "content": "created\n"}),
                ),
            ]),
            turn(&[
                (
                    "c3",
                    "replace_in_file",
                    json!({"path": "todo.md", "old_text": "buy milk", "new_text": "buy oat milk"}),
                ),
                (
                    "c4",
                    "move_path",
                    json!({"from": "old.md", "to": "archive/old.md"}),
                ),
                ("c5", "delete_path", json!({"path": "scratch.md"})),
            ]),
            ollama::answer("Tidied up."),
        ]
    };
    let server = ModelServer::start(script());
    let ws = workspace(&server, "ollama", "");
    ws.write("notes.md", "original notes\n");
    ws.write("todo.md", "- buy milk\n");
    ws.write("old.md", "old\n");
    ws.write("scratch.md", "scratch\n");
    std::fs::create_dir(ws.root.join("archive")).unwrap();
    let run = chat(&ws, &["--yes", "Tidy up"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("notes.md"), "rewritten\n");
    assert_eq!(ws.read("todo.md"), "- buy oat milk\n");
    assert!(!ws.root.join("old.md").exists() && !ws.root.join("scratch.md").exists());

    let undo = ws.run(&["undo", "1"]);
    assert_eq!(undo.code, 0, "{undo:?}");
    assert_eq!(ws.read("notes.md"), "original notes\n");
    assert_eq!(ws.read("todo.md"), "- buy milk\n");
    assert_eq!(ws.read("old.md"), "old\n");
    assert_eq!(ws.read("scratch.md"), "scratch\n");
    assert!(!ws.root.join("new.md").exists() && !ws.root.join("archive/old.md").exists());
    let again = ws.run(&["undo", "1"]);
    assert_eq!(again.code, 1, "undone twice: {again:?}");

    // A file changed after the run: undo refuses and touches nothing.
    let server = ModelServer::start(script());
    let ws = workspace(&server, "ollama", "");
    ws.write("notes.md", "original notes\n");
    ws.write("todo.md", "- buy milk\n");
    ws.write("old.md", "old\n");
    ws.write("scratch.md", "scratch\n");
    std::fs::create_dir(ws.root.join("archive")).unwrap();
    assert_eq!(chat(&ws, &["--yes", "Tidy up"]).code, 0);
    ws.write("notes.md", "the user edited this afterwards\n");
    let undo = ws.run(&["undo", "1"]);
    assert_eq!(undo.code, 1, "{undo:?}");
    assert!(
        undo.stderr.contains("`notes.md` was changed after the run")
            && undo.stderr.contains("nothing was changed"),
        "{undo:?}"
    );
    assert_eq!(ws.read("notes.md"), "the user edited this afterwards\n");
    assert_eq!(ws.read("todo.md"), "- buy oat milk\n");
    assert!(ws.root.join("new.md").exists());
}

#[test]
fn an_interactive_chat_takes_one_task_per_line_in_one_run() {
    use std::io::Write;
    let server = ModelServer::start(vec![
        ollama::answer("First answer."),
        ollama::reply(vec![ollama::calls(&[(
            "l1",
            "list_directory",
            json!({"path": "."}),
        )])]),
        ollama::answer("Second answer."),
    ]);
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &format!(
            "[model]\nbase_url = \"{}\"\nname = \"m\"\nthink = true\ntemperature = 0.3\n",
            server.url
        ),
    );
    let mut child = ws
        .command(&["chat", "--hide-thinking"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"first task\nsecond task\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout.contains("First answer.") && stdout.contains("Second answer."),
        "{stdout}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    // The conversation carries over: the second task sees the first.
    let contents: Vec<String> = messages(&requests[1])
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        contents.contains(&"first task".to_string())
            && contents.contains(&"First answer.".to_string()),
        "{contents:?}"
    );
    assert_eq!(requests[0].body["think"], true);
    assert_eq!(requests[0].body["options"]["temperature"], 0.3);
    let runs = ws.run(&["runs", "list", "--json"]).json();
    assert_eq!(
        runs.as_array().unwrap().len(),
        1,
        "one conversation, one run"
    );
}

#[test]
fn the_api_key_comes_from_the_named_variable_only() {
    let server = ModelServer::start(vec![openai::answer("ok")]);
    let mut ws = workspace(&server, "openai", "");
    ws.write(
        "toolcell.toml",
        &format!("[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nname = \"m\"\napi_key_env = \"TEST_MODEL_KEY\"\n", server.url),
    );
    let run = chat(&ws, &["hi"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("`TEST_MODEL_KEY`, but that environment variable is not set"),
        "{run:?}"
    );
    assert!(server.requests().is_empty());
    ws.env("TEST_MODEL_KEY", "sk-test-123");
    let run = chat(&ws, &["hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    let auth = server.requests()[0]
        .headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone());
    assert_eq!(auth.as_deref(), Some("Bearer sk-test-123"));
}

#[test]
fn calls_leaked_as_text_run_and_prose_never_does() {
    let server = ModelServer::start(vec![
        ollama::answer(
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>",
        ),
        ollama::answer(
            "I could call read_file with {\"path\": \"a.txt\"} again, but the file says alpha.",
        ),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["What is in a.txt?"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("wrote 1 tool call(s) as text"),
        "{run:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the prose answer ends the run");
    assert_paired(&requests[1]);
    let assistant = &messages(&requests[1])[2];
    assert_eq!(
        assistant["content"], "",
        "the leaked text is replaced by the structured call"
    );
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    let results = tool_results(&requests[1]);
    assert!(results[0].2.contains("alpha"), "{results:?}");
    assert_eq!(
        run_record(&ws, "1")["tool_calls"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn a_model_without_tools_is_switched_to_the_text_format_and_completes() {
    let server = ModelServer::start(vec![
        Reply::error(
            400,
            json!({"error": "registry.ollama.ai/library/tiny:1b does not support tools"}),
        ),
        ollama::reply(vec![
            ollama::content("Let me look.\n<tool"),
            ollama::content(
                "_call>\n{\"name\": \"read_file\", \"arguments\": {'path': 'a.txt'}}\n</tool_call>",
            ),
        ]),
        ollama::answer("It says alpha."),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["What is in a.txt?"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("switching to tool calls in the text format"),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("Let me look.") && run.stdout.contains("It says alpha."),
        "{run:?}"
    );
    assert!(
        !run.stdout.contains("tool_call"),
        "the user sees no tags: {run:?}"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].body.get("tools").is_some());
    assert!(
        requests[1].body.get("tools").is_none(),
        "no native tools after the switch"
    );
    let system = messages(&requests[1])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("<tools>") && system.contains("\"read_file\""),
        "{system}"
    );
    let last = messages(&requests[2]).last().unwrap().clone();
    assert_eq!(last["role"], "user");
    let response = last["content"].as_str().unwrap();
    assert!(
        response.starts_with("<tool_response>") && response.contains("alpha"),
        "{response}"
    );
    assert_eq!(messages(&requests[2])[2]["role"], "assistant");
    assert!(
        messages(&requests[2])[2]["content"]
            .as_str()
            .unwrap()
            .contains("<tool_call>"),
        "the turn is replayed as written"
    );
    let record = run_record(&ws, "1");
    assert_eq!(record["tool_calls"][0]["tool"], "read_file");
    assert_eq!(record["tool_calls"][0]["status"], "done");
}

#[test]
fn the_text_format_can_be_forced_by_config() {
    let server = ModelServer::start(vec![
        ollama::answer(
            "<tool_call>{\"name\": \"list_directory\", \"arguments\": {\"path\": \".\"}}</tool_call>",
        ),
        ollama::answer("Two files."),
    ]);
    let ws = workspace(&server, "ollama", "tool_format = \"text\"\n");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["List the files"]);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert!(requests[0].body.get("tools").is_none());
    assert!(
        messages(&requests[0])[0]["content"]
            .as_str()
            .unwrap()
            .contains("<tools>")
    );
    let response = messages(&requests[1]).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        response.contains("<tool_response>") && response.contains("a.txt"),
        "{response}"
    );
}
