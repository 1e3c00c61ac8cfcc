//! `toolcell chat --resume RUN`: a recorded conversation goes on in a new
//! run linked to it, against a fake Ollama server; the earlier calls are
//! history (sent to the model, never run again), a call the earlier run
//! never answered is answered as not run, and runs that cannot go on are
//! refused before the model server is asked anything.

use crate::agent::{messages, workspace};
use crate::model_server::{ModelServer, ollama};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// The roles and texts of a request's messages, on one line each.
fn conversation(request: &crate::model_server::Request) -> Vec<String> {
    messages(request)
        .iter()
        .map(|m| {
            let calls: Vec<&str> = m["tool_calls"]
                .as_array()
                .map(|calls| {
                    calls
                        .iter()
                        .filter_map(|c| c["function"]["name"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "{}: {}{}",
                m["role"].as_str().unwrap_or_default(),
                m["content"].as_str().unwrap_or_default(),
                if calls.is_empty() {
                    String::new()
                } else {
                    format!(" [asks {}]", calls.join(", "))
                }
            )
        })
        .collect()
}

#[test]
fn a_conversation_goes_on_in_a_new_run_and_none_of_its_calls_runs_again() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c0",
            "write_file",
            json!({"path": "notes.txt", "content": "one\n"}),
        )])]),
        ollama::answer("Wrote it."),
        ollama::answer("It held one."),
        ollama::answer("You asked twice."),
    ]);
    let ws = workspace(&server, "ollama", "");
    let first = ws.run(&["chat", "--yes", "Write one to notes.txt"]);
    assert_eq!(first.code, 0, "{first:?}");
    // Changed by hand: a call run again would write it back.
    ws.write("notes.txt", "by hand\n");

    let second = ws.run(&[
        "chat",
        "--json",
        "--resume",
        "1",
        "What did notes.txt hold?",
    ]);
    assert_eq!(second.code, 0, "{second:?}");
    let started: Value = serde_json::from_str(second.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(started["type"], "run_started");
    assert_eq!(
        (started["run"].clone(), started["resumes"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(ws.read("notes.txt"), "by hand\n");

    let requests = server.requests();
    let sent = conversation(&requests[2]);
    assert_eq!(sent.len(), 6, "{sent:#?}");
    assert!(sent[0].starts_with("system: "), "{sent:#?}");
    assert_eq!(
        sent[1..].to_vec(),
        vec![
            "user: Write one to notes.txt".to_string(),
            "assistant:  [asks write_file]".into(),
            sent[3].clone(),
            "assistant: Wrote it.".into(),
            "user: What did notes.txt hold?".into(),
        ]
    );
    assert!(
        sent[3].starts_with("tool: ") && sent[3].contains("notes.txt"),
        "{sent:#?}"
    );

    let shown = ws.run(&["runs", "show", "2"]);
    assert!(
        shown
            .stdout
            .contains("continues run 1 (4 messages carried from it"),
        "{shown:?}"
    );
    let record = ws.run(&["runs", "show", "2", "--json"]).json();
    assert_eq!(
        (record["resumes"].clone(), record["carried"].clone()),
        (json!(1), json!(4))
    );
    assert_eq!(record["tool_calls"], json!([]));

    // A continued run goes on again: the whole conversation, once.
    let third = ws.run(&["chat", "--resume", "2", "What did I ask?"]);
    assert_eq!(third.code, 0, "{third:?}");
    let sent = conversation(&server.requests()[3]);
    assert_eq!(sent.iter().filter(|m| m.starts_with("system: ")).count(), 1);
    let asked: Vec<&String> = sent.iter().filter(|m| m.starts_with("user: ")).collect();
    assert_eq!(asked.len(), 3, "{sent:#?}");
    assert_eq!(sent.last().unwrap(), "user: What did I ask?");
}

#[test]
fn a_call_the_earlier_run_never_answered_is_history_answered_as_not_run() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c0",
            "write_file",
            json!({"path": "out.txt", "content": "hi\n"}),
        )])]),
        ollama::answer("Understood."),
    ]);
    let ws = workspace(&server, "ollama", "");
    // The chat is killed while its call waits for approval.
    let mut chat = ws
        .command(&[
            "chat",
            "--json",
            "--wait-approval",
            "60s",
            "Write hi to out.txt",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    for line in BufReader::new(chat.stdout.take().unwrap()).lines() {
        if line.unwrap().contains("\"approval_needed\"") {
            break;
        }
    }
    chat.kill().unwrap();
    chat.wait().unwrap();

    let resumed = ws.run(&["chat", "--resume", "1", "Never mind."]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    assert!(!ws.root.join("out.txt").exists());
    let listed = ws.run(&["runs", "show", "1", "--json"]).json();
    assert_eq!(listed["status"], "interrupted");
    let sent = &server.requests()[1];
    let results = crate::agent::tool_results(sent);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].0, "c0");
    assert!(
        results[0]
            .2
            .starts_with("not run: run 1 ended before this call finished"),
        "{results:?}"
    );
    let sent = conversation(sent);
    assert_eq!(sent.last().unwrap(), "user: Never mind.");
}

#[test]
fn runs_that_cannot_go_on_are_refused_before_the_model_is_asked() {
    let server = ModelServer::start(vec![]);
    let ws = workspace(&server, "ollama", "");
    let missing = ws.run(&["chat", "--resume", "9", "hello"]);
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(
        missing.stderr.contains("cannot continue run 9")
            && missing.stderr.contains("there is no run 9"),
        "{missing:?}"
    );
    // A workflow that asked no model has no conversation.
    ws.write("flow.rhai", "print(\"hi\");");
    assert_eq!(ws.run(&["run", "flow.rhai"]).code, 0);
    let workflow = ws.run(&["chat", "--resume", "1", "hello"]);
    assert_eq!(workflow.code, 1, "{workflow:?}");
    assert!(
        workflow.stderr.contains("no conversation to continue"),
        "{workflow:?}"
    );
    assert!(server.requests().is_empty());
    assert!(server.probes().is_empty(), "{:?}", server.probes());
}
