//! `toolcell chat --json`: the event stream of docs/chat-json.md, against
//! a fake Ollama server on 127.0.0.1, with a call parked for approval
//! (`--wait-approval`) and approved from another process; an answer held
//! to `--output-schema`.

use crate::model_server::{ModelServer, ollama};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long the test waits for the run.
const PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn chat_json_gives_one_event_a_line_and_a_parked_call_is_approved_from_another_process() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![
            ollama::thinking("The user wants a file."),
            ollama::content("Writing it."),
            ollama::calls(&[(
                "c0",
                "write_file",
                json!({"path": "out.txt", "content": "hi\n"}),
            )]),
        ]),
        // Ids repeat across turns: each turn's call is announced.
        ollama::reply(vec![ollama::calls(&[(
            "c0",
            "read_file",
            json!({"path": "out.txt"}),
        )])]),
        ollama::answer("Done: out.txt holds hi."),
    ]);
    let ws = crate::agent::workspace(&server, "ollama", "");
    let mut chat = ws
        .command(&[
            "chat",
            "--json",
            "--wait-approval",
            "60s",
            "Write hi to out.txt",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(chat.stdout.take().unwrap()).lines();
    let mut events: Vec<Value> = Vec::new();
    let started = Instant::now();
    // Read until the call waits, then approve it from another process.
    for line in lines {
        let event: Value = serde_json::from_str(&line.unwrap()).expect("each line is JSON");
        let waits = event["type"] == "approval_needed";
        events.push(event);
        if waits {
            // Told as the call starts to wait, parked a moment later.
            let id = ws.first_parked()["id"]
                .as_i64()
                .expect("a parked call's id");
            assert_eq!(ws.run(&["approve", &id.to_string()]).code, 0);
        }
        assert!(started.elapsed() < PATIENCE);
    }
    let status = chat.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(ws.read("out.txt"), "hi\n");

    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let position = |kind: &str| {
        kinds
            .iter()
            .position(|k| *k == kind)
            .unwrap_or_else(|| panic!("no {kind} in {kinds:?}"))
    };
    assert!(position("run_started") < position("thinking"));
    assert!(position("thinking") < position("text"));
    assert!(position("call_requested") < position("approval_needed"));
    assert!(position("approval_needed") < position("call_decided"));
    assert!(position("call_decided") < position("call_started"));
    assert!(position("call_started") < position("call_finished"));
    assert_eq!(kinds.last(), Some(&"run_ended"));
    let find = |kind: &str| &events[position(kind)];
    assert_eq!(find("run_started")["run"], 1);
    assert_eq!(find("run_started")["task"], "Write hi to out.txt");
    assert_eq!(find("thinking")["text"], "The user wants a file.");
    assert_eq!(
        find("call_requested")["arguments"],
        json!({"path": "out.txt", "content": "hi\n"})
    );
    assert_eq!(find("call_decided")["decision"], "approved");
    assert_eq!(find("call_finished")["status"], "done");
    assert!(find("call_finished")["duration_ms"].as_f64().unwrap() > 0.0);
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "text")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(text.contains("Done: out.txt holds hi."), "{text}");
    let end = find("run_ended");
    assert_eq!(end["status"], "succeeded");
    assert_eq!(end["answer"], "Done: out.txt holds hi.");
    // The fake server reports 10 prompt and 5 completion tokens a turn,
    // three turns.
    assert_eq!(
        end["usage"],
        json!({"prompt_tokens": 30, "completion_tokens": 15})
    );
    let requested: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "call_requested")
        .collect();
    assert_eq!(requested.len(), 2, "{requested:?}");
    assert_eq!(requested[1]["tool"], "read_file");
    let record = ws.run(&["runs", "export", "1"]);
    assert!(
        record.stdout.contains("person (toolcell approve)"),
        "{record:?}"
    );
}

#[test]
fn an_answer_must_fit_the_output_schema_and_one_that_does_not_goes_back_in_band() {
    let server = ModelServer::start(vec![
        ollama::answer("There are 3 files."),
        ollama::answer("{\"files\": \"3\"}"),
        ollama::answer("```json\n{\"files\": 3}\n```"),
        // The second chat: one round, and no JSON in it.
        ollama::answer("Three."),
    ]);
    let ws = crate::agent::workspace(&server, "ollama", "");
    ws.write(
        "count.schema.json",
        r#"{"type": "object", "properties": {"files": {"type": "integer"}}, "required": ["files"]}"#,
    );
    let run = ws.run(&[
        "chat",
        "--json",
        "--output-schema",
        "count.schema.json",
        "How many files?",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let end: Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(end["type"], "run_ended");
    assert_eq!(end["answer"], json!({"files": 3}));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let said = |n: usize| crate::agent::messages(&requests[n]);
    assert!(
        said(0)[0]["content"]
            .as_str()
            .unwrap()
            .contains("must be only JSON that fits this JSON Schema"),
        "{:?}",
        said(0)[0]
    );
    let told = |n: usize| {
        said(n).last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(told(1).contains("the answer is not JSON"), "{}", told(1));
    assert!(told(2).contains("at `/files`"), "{}", told(2));
    assert_eq!(
        ws.run(&["runs", "show", "1", "--json"]).json()["answer"],
        "{\"files\":3}"
    );

    let run = ws.run(&[
        "chat",
        "--max-rounds",
        "1",
        "--output-schema",
        "count.schema.json",
        "How many files?",
    ]);
    assert_eq!(run.code, 5, "{run:?}");
    assert!(
        run.stderr.contains(
            "without an answer that fits --output-schema (the last: the answer is not JSON"
        ),
        "{run:?}"
    );

    ws.write("bad.json", "{\"type\": \"object\",\n oops}");
    let run = ws.run(&["chat", "--output-schema", "bad.json", "x"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("bad.json:2:2 is not JSON"), "{run:?}");
    assert_eq!(server.requests().len(), 4);
}
