//! Fitting a run to its model, end to end against the fake server: the
//! host asks the server once what the model can do (Ollama's `/api/show`),
//! remembers it in the store, and adapts every run before its first
//! request; a refusal of tools is remembered as well. `toolcell models`
//! lists what is known.

use crate::agent::{chat, messages, workspace};
use crate::model_server::{ModelServer, Reply, ollama};
use serde_json::{Value, json};

/// What `toolcell models --json` lists.
pub fn models(ws: &crate::harness::Workspace) -> Vec<Value> {
    let run = ws.run(&["models", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn a_described_model_without_tools_starts_in_the_text_format_within_its_context() {
    let server = ModelServer::start(vec![
        ollama::answer(
            "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>",
        ),
        ollama::answer("It says alpha."),
        ollama::answer("Still alpha."),
    ]);
    server.describe(
        "/api/show",
        json!({
            "capabilities": ["completion"],
            "model_info": {"general.architecture": "llama", "llama.context_length": 4096},
        }),
    );
    let ws = workspace(&server, "ollama", "think = true\n");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["What is in a.txt?"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("It says alpha."), "{run:?}");
    for notice in ["context of 4096 tokens", "cannot think", "text format"] {
        assert!(run.stderr.contains(notice), "{notice}: {run:?}");
    }

    let probes = server.probes();
    assert_eq!(probes.len(), 1, "one probe: {probes:?}");
    assert_eq!(probes[0].body, json!({"model": "fake-model"}));
    let requests = server.requests();
    let first = &requests[0].body;
    assert!(first.get("tools").is_none(), "no refused request first");
    assert_eq!(
        first["options"]["num_ctx"], 4096,
        "the model's context, not 8192"
    );
    assert!(
        first.get("think").is_none(),
        "thinking not asked of this model"
    );
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
        response.contains("<tool_response>") && response.contains("alpha"),
        "{response}"
    );

    // The next run uses what was learned without asking again.
    let run = chat(&ws, &["Again?"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(server.probes().len(), 1, "the answer was remembered");
    assert!(server.requests()[2].body.get("tools").is_none());

    let known = models(&ws);
    assert_eq!(known.len(), 1, "{known:?}");
    assert_eq!(known[0]["model"], "fake-model");
    assert_eq!(known[0]["tools"], false);
    assert_eq!(known[0]["thinking"], false);
    assert_eq!(known[0]["context_length"], 4096);
    assert_eq!(known[0]["known_by"], "probe");
    let table = ws.run(&["models"]);
    assert!(
        table.stdout.contains("fake-model") && table.stdout.contains("no (text format)"),
        "{table:?}"
    );
}

#[test]
fn a_refusal_of_tools_is_remembered_for_the_next_run() {
    let server = ModelServer::start(vec![
        Reply::error(400, json!({"error": "fake-model does not support tools"})),
        ollama::answer("Hello."),
        ollama::answer("Hello again."),
    ]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["Hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        server.probes().len(),
        1,
        "probed, and the server said nothing"
    );
    let run = chat(&ws, &["Hi again"]);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no second refusal");
    assert!(requests[2].body.get("tools").is_none());
    let known = models(&ws);
    assert_eq!(known[0]["tools"], false);
    assert_eq!(known[0]["known_by"], "refusal");
}

#[test]
fn a_model_with_tools_keeps_them_and_probe_refreshes_on_demand() {
    let server = ModelServer::start(vec![ollama::answer("Hi.")]);
    server.describe(
        "/api/show",
        json!({"capabilities": ["completion", "tools", "thinking"],
               "model_info": {"qwen3.context_length": 40960}}),
    );
    let ws = workspace(&server, "ollama", "think = true\n");
    let run = chat(&ws, &["Hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    let first = &server.requests()[0].body;
    assert!(first.get("tools").is_some());
    assert_eq!(first["think"], true);
    assert_eq!(
        first["options"]["num_ctx"], 8192,
        "the configured context fits"
    );

    server.describe("/api/show", json!({"capabilities": ["completion"]}));
    let probe = ws.run(&["models", "--probe"]);
    assert_eq!(probe.code, 0, "{probe:?}");
    assert_eq!(server.probes().len(), 2);
    let known = models(&ws);
    assert_eq!(known[0]["tools"], false, "{known:?}");
    assert_eq!(known[0]["context_length"], Value::Null);
}

#[test]
fn probing_an_unreachable_server_says_what_to_do() {
    let ws = crate::harness::Workspace::new();
    ws.write(
        "toolcell.toml",
        "[model]\nprovider = \"ollama\"\nbase_url = \"http://127.0.0.1:9\"\nname = \"m\"\n",
    );
    let run = ws.run(&["models", "--probe"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("cannot probe") && run.stderr.contains("fix:"),
        "{run:?}"
    );
    let empty = ws.run(&["models"]);
    assert!(empty.stdout.contains("no model used yet"), "{empty:?}");
}
