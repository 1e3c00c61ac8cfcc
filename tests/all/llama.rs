//! End to end against a real model server: llama.cpp's `llama-server` with
//! real small models (SmolLM2-135M-Instruct, and Gemma 3 270M), built and
//! cached by `tests/support/llama-server.sh`, speaking the real
//! OpenAI-compatible protocol on 127.0.0.1.
//!
//! SmolLM2, two runs: native tool calls (the server started with `--jinja`
//! and a template with tools), and the text format (the server started
//! with the model's own template, without tools, so its `/props` says the
//! model has no tool calls and toolcell picks the text format by itself).
//! Gemma, one run in the text format, in its own dialect: its GGUF has no
//! chat template, so the server gets Gemma's turn format
//! (`<start_of_turn>`, no tools) from llama.cpp's tree, and toolcell sees
//! in `/props` which dialect to ask for.
//!
//! So small a model does not call tools on its own (Gemma 3 270M here is
//! the pretrained model, not the instruction-tuned one: it continues text;
//! tests/fixtures/dialects/gemma-outputs.md has what it writes). A
//! recording proxy constrains its first answer the way
//! `tool_choice: "required"` does: natively by setting it (and pre-filling
//! `<tool_call>\n`), in the text format with a grammar for the call's
//! syntax. The model still writes the call's argument; everything else, the
//! streamed text or fragments, the ids and the follow-up with the results,
//! is the real server's.

use crate::agent::{assert_paired, messages, run_record, tool_results};
use crate::harness::Workspace;
use crate::model_fit::models;
use crate::model_server::ModelServer;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running llama-server, killed when dropped.
struct LlamaServer {
    child: Child,
    url: String,
    log: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long the server may take to load the model and answer `/health`.
const STARTUP_LIMIT: Duration = Duration::from_secs(180);

/// How the server formats tool calls.
#[derive(PartialEq)]
enum Tools {
    /// `--jinja` with a template that has tools: native tool calls.
    Native,
    /// The model's own template, without tools (for Gemma, whose GGUF has
    /// none, Gemma's turns from llama.cpp's tree): no tool calls.
    None,
}

/// Which of the cached models the server runs.
enum Model {
    /// SmolLM2-135M-Instruct (`LLAMA_MODEL`), alias `smollm2`.
    SmolLm2,
    /// Gemma 3 270M, pretrained (`LLAMA_GEMMA_MODEL`), alias `gemma`. Its
    /// GGUF has no chat template: the server gets Gemma's turns
    /// (`LLAMA_GEMMA_TEMPLATE`, no tools); only [`Tools::None`].
    Gemma,
}

impl LlamaServer {
    fn start(tools: Tools) -> Self {
        Self::start_model(Model::SmolLm2, tools)
    }

    fn start_model(model: Model, tools: Tools) -> Self {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/support/llama-server.sh"
        );
        let setup = Command::new("bash")
            .arg(script)
            .output()
            .expect("run llama-server.sh");
        assert!(
            setup.status.success(),
            "llama-server.sh failed (it needs a C++ compiler and PyPI; cmake comes from PyPI when the machine has none):\n{}",
            String::from_utf8_lossy(&setup.stderr)
        );
        let paths = String::from_utf8(setup.stdout).unwrap();
        let path = |key: &str| {
            paths
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .unwrap_or_else(|| panic!("llama-server.sh printed no {key}: {paths}"))
                .to_string()
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("llama-server.log");
        let mut command = Command::new(path("LLAMA_SERVER"));
        command.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
        let alias = match (&model, &tools) {
            (Model::SmolLm2, Tools::Native) => {
                command.args(["-m", &path("LLAMA_MODEL")]).args([
                    "--jinja",
                    "--chat-template-file",
                    &path("LLAMA_TEMPLATE"),
                ]);
                "smollm2"
            }
            (Model::SmolLm2, Tools::None) => {
                command.args(["-m", &path("LLAMA_MODEL")]);
                "smollm2"
            }
            (Model::Gemma, Tools::None) => {
                command
                    .args(["-m", &path("LLAMA_GEMMA_MODEL")])
                    .args(["--chat-template-file", &path("LLAMA_GEMMA_TEMPLATE")]);
                "gemma"
            }
            (Model::Gemma, Tools::Native) => panic!("no tool template for Gemma"),
        };
        let child = command
            // One thread: with the test run loading both cores, two threads made
            // a request ten times slower.
            .args(["-c", "4096", "-t", "1", "--no-webui", "-a", alias])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("start llama-server");
        let mut server = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
            _dir: dir,
        };
        server.wait_until_healthy(port);
        server
    }

    fn wait_until_healthy(&mut self, port: u16) {
        let started = std::time::Instant::now();
        while started.elapsed() < STARTUP_LIMIT {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "llama-server exited ({status}):\n{}",
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
                let _ = stream.write_all(
                    b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                );
                let mut reply = String::new();
                let _ = stream.read_to_string(&mut reply);
                if reply.starts_with("HTTP/1.1 200") {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
            "llama-server did not become healthy:\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
    }
}

/// A config for the SmolLM2 server behind `url`, offering only
/// `read_file`: one tool keeps the prompt small for a 4k context.
fn config(url: &str) -> String {
    config_for(url, "smollm2")
}

/// The same for the model `name` (the server's alias).
fn config_for(url: &str, name: &str) -> String {
    let mut config = format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{url}/v1\"\nname = \"{name}\"\nnum_ctx = 8192\ntemperature = 0\nidle_timeout_ms = 120000\n"
    );
    for tool in [
        "list_directory",
        "search_files",
        "write_file",
        "replace_in_file",
        "create_directory",
        "move_path",
        "delete_path",
    ] {
        config.push_str(&format!("[tools.{tool}]\nenabled = false\n"));
    }
    config
}

#[test]
fn a_real_llama_server_drives_a_real_tool_call_through_the_openai_path() {
    let llama = LlamaServer::start(Tools::Native);
    let proxy = ModelServer::proxy(
        &llama.url,
        Box::new(|n, body| {
            if n == 0 {
                body["tool_choice"] = json!("required");
                body["messages"]
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"role": "assistant", "content": "<tool_call>\n"}));
            }
        }),
    );
    let ws = Workspace::new();
    ws.write("notes.txt", "The secret word is pumpkin.\n");
    ws.write("toolcell.toml", &config(&proxy.url));
    let run = ws.run(&["chat", "--max-rounds", "3", "Read the file notes.txt"]);
    assert!(
        run.code == 0 || run.code == 5,
        "an answer, or the budget used up by a tiny model: {run:?}"
    );

    let requests = proxy.requests();
    assert!(
        requests.len() >= 2,
        "the real tool call needs a follow-up request: {run:?}"
    );
    assert_eq!(requests[0].path, "/v1/chat/completions");
    let second = &requests[1];
    assert_paired(second);
    let assistant = messages(second)
        .into_iter()
        .find(|m| m["role"] == "assistant")
        .expect("the assistant turn is replayed");
    let ids: Vec<String> = assistant["tool_calls"]
        .as_array()
        .expect("the real stream carried structured tool calls")
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!ids.is_empty());
    let results = tool_results(second);
    assert_eq!(
        results.iter().map(|r| r.0.clone()).collect::<Vec<_>>(),
        ids,
        "one result per real call id, in order"
    );
    assert!(
        results.iter().any(|r| r.2.contains("pumpkin")),
        "the file came back to the model: {results:?}"
    );
    let record = run_record(&ws, "1");
    assert_eq!(record["tool_calls"][0]["tool"], "read_file");
    assert_eq!(record["tool_calls"][0]["status"], "done");
}

/// The syntax of one `read_file` call in the text format, as a llama.cpp
/// grammar: the model writes the path.
const READ_FILE_CALL: &str = r#"root ::= "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"" [^"\n]+ "\"}}\n</tool_call>""#;

#[test]
fn a_real_llama_server_without_tool_calls_gets_the_text_format_and_runs_a_call() {
    let llama = LlamaServer::start(Tools::None);
    let proxy = ModelServer::proxy(
        &llama.url,
        Box::new(|n, body| {
            if n == 0 {
                body["grammar"] = json!(READ_FILE_CALL);
            }
        }),
    );
    let ws = Workspace::new();
    ws.write("notes.txt", "The secret word is pumpkin.\n");
    ws.write("toolcell.toml", &config(&proxy.url));
    let run = ws.run(&["chat", "--max-rounds", "2", "Read the file notes.txt"]);
    assert!(
        run.code == 0 || run.code == 5,
        "an answer, or the budget used up by a tiny model: {run:?}"
    );
    assert!(
        run.stderr.contains("context of 4096 tokens")
            && run.stderr.contains("tool calls in the text format"),
        "the server's /props was read: {run:?}"
    );
    assert!(
        !run.stdout.contains("<tool_call>"),
        "the user sees no tags: {run:?}"
    );

    let probes: Vec<String> = proxy.probes().iter().map(|p| p.path.clone()).collect();
    assert!(probes.contains(&"/props".to_string()), "{probes:?}");
    let requests = proxy.requests();
    assert!(requests.len() >= 2, "a follow-up with the result: {run:?}");
    let first = &requests[0].body;
    assert!(first.get("tools").is_none(), "no native tools: {first}");
    let system = messages(&requests[0])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("<tools>") && system.contains("read_file"),
        "{system}"
    );
    let replayed = messages(&requests[1]);
    let call = replayed
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the model's turn is replayed");
    assert!(
        call["content"].as_str().unwrap().contains("<tool_call>"),
        "the real server streamed the call as text: {call}"
    );
    let response = replayed.last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        response.starts_with("<tool_response>") && response.contains("pumpkin"),
        "the file came back in the text format: {response}"
    );
    let record = run_record(&ws, "1");
    assert_eq!(record["tool_calls"][0]["tool"], "read_file");
    assert_eq!(record["tool_calls"][0]["status"], "done");
    let known = models(&ws);
    assert_eq!(known[0]["tools"], false, "{known:?}");
    assert_eq!(known[0]["context_length"], 4096);
}

/// The syntax of one `read_file` call in the dialect `system` asks for,
/// as a llama.cpp grammar: Gemma's ```` ```tool_code ```` block when the
/// prompt shows one, Hermes `<tool_call>` otherwise. The model writes the
/// path, as a plain file name: left free (`[^"\n]+`), Gemma 3 270M writes
/// `","` or copies `notes/todo.md` from the prompt's example.
fn read_file_call_for(system: &str) -> String {
    let root = if system.contains("```tool_code") {
        r#"root ::= "```tool_code\nread_file(path=\"" path "\")\n```""#
    } else {
        r#"root ::= "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"" path "\"}}\n</tool_call>""#
    };
    format!("{root}\npath ::= [A-Za-z0-9_.-]+")
}

#[test]
fn a_real_gemma_server_without_tool_calls_runs_a_call_and_answers_with_its_result() {
    let llama = LlamaServer::start_model(Model::Gemma, Tools::None);
    let proxy = ModelServer::proxy(
        &llama.url,
        Box::new(|n, body| {
            if n == 0 {
                // Gemma 3 270M (pretrained) writes no call unconstrained,
                // whichever prompt: it continues the prompt's text (see
                // tests/fixtures/dialects/gemma-outputs.md). The grammar
                // is the one for the dialect the prompt asks in.
                let system = body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                body["grammar"] = json!(read_file_call_for(&system));
            } else {
                // A pretrained model does not end its turn: it goes on until
                // max_tokens (~3600 here, two minutes or more on a loaded
                // core). At temperature 0 the cap only cuts that tail.
                body["max_tokens"] = json!(256);
            }
        }),
    );
    let ws = Workspace::new();
    ws.write("notes.txt", "The secret word is pumpkin.\n");
    ws.write("toolcell.toml", &config_for(&proxy.url, "gemma"));
    let run = ws.run(&["chat", "--max-rounds", "3", "Read the file notes.txt"]);
    assert_eq!(run.code, 0, "an answer after the call: {run:?}");

    let probes: Vec<String> = proxy.probes().iter().map(|p| p.path.clone()).collect();
    assert!(probes.contains(&"/props".to_string()), "{probes:?}");
    let known = models(&ws);
    assert_eq!(known[0]["tools"], false, "{known:?}");
    assert_eq!(known[0]["context_length"], 4096);
    assert_eq!(
        known[0]["dialect"], "gemma-tool-code",
        "the template's dialect: {known:?}"
    );

    let requests = proxy.requests();
    assert!(requests.len() >= 2, "a follow-up with the result: {run:?}");
    let first = &requests[0].body;
    assert!(first.get("tools").is_none(), "no native tools: {first}");
    let system = messages(&requests[0])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("```tool_code") && !system.contains("<tool_call>"),
        "asked in Gemma's own dialect: {system}"
    );
    let second = messages(&requests[1]);
    let call_at = second
        .iter()
        .position(|m| m["role"] == "assistant")
        .expect("the model's turn is replayed");
    assert!(
        second[call_at]["content"]
            .as_str()
            .is_some_and(|c| c.contains("read_file")),
        "the real server streamed the call as text: {}",
        second[call_at]
    );
    assert!(
        second[call_at + 1..]
            .iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains("pumpkin"))),
        "the file came back to the model: {second:?}"
    );

    let record = run_record(&ws, "1");
    let call = &record["tool_calls"][0];
    assert_eq!(call["tool"], "read_file", "{record}");
    assert_eq!(call["status"], "done", "{record}");
    assert!(
        call["arguments"]
            .as_str()
            .is_some_and(|a| a.contains("notes.txt")),
        "{call}"
    );
    assert!(
        run.stdout.contains("pumpkin"),
        "the answer uses the file's text: {run:?}"
    );
}
