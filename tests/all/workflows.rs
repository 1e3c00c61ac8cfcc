//! Workflows end to end: `toolcell run` and `toolcell check` on rhai
//! scripts, with real tools, the fake model server for `agent`, `llm` and
//! `llm_json`, limits, imports, approvals and golden error output
//! (`tests/ui/workflows/*.err`; `BLESS=1` rewrites them).

use crate::agent::{chat_on_terminal, run_record};
use crate::harness::Workspace;
use crate::model_server::{ModelServer, Part, Reply, ollama};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Copies the example workflows (and their lib/) into the workspace.
fn with_examples(ws: &Workspace) {
    for file in [
        "notes-index.rhai",
        "summarise-todos.rhai",
        "triage-note.rhai",
        "lib/text.rhai",
    ] {
        let text = std::fs::read_to_string(repo().join("workflows").join(file)).unwrap();
        ws.write(&format!("workflows/{file}"), &text);
    }
}

fn model_config(server: &ModelServer, extra: &str) -> String {
    format!(
        "[model]\nbase_url = \"{}\"\nname = \"fake\"\nidle_timeout_ms = 3000\n{extra}",
        server.url
    )
}

#[test]
fn the_notes_index_example_needs_no_model_and_writes_its_index() {
    let ws = Workspace::new();
    with_examples(&ws);
    ws.write("notes/plans.md", "# Summer plans\n\nTODO: book the train\n");
    ws.write("notes/deep/recipes.md", "Some text first\n## Bread\n");
    ws.write("notes/untitled.md", "no heading here\n");
    ws.write("notes/other.txt", "# not markdown\n");
    let run = ws.run(&[
        "run",
        "workflows/notes-index.rhai",
        "--arg",
        "folder=notes",
        "--arg",
        "out=index.md",
        "--approve",
        "write_file",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    assert_eq!(result["ok"], true);
    assert_eq!(result["result"]["notes"], 3);
    let index = ws.read("index.md");
    assert!(index.contains("[Summer plans](notes/plans.md)"), "{index}");
    assert!(index.contains("[Bread](notes/deep/recipes.md)"), "{index}");
    assert!(
        index.contains("[untitled.md](notes/untitled.md)"),
        "{index}"
    );
    assert!(!index.contains("other.txt"));
    let record = run_record(&ws, "1");
    assert_eq!(record["kind"], "workflow");
    assert_eq!(record["status"], "succeeded");
    assert_eq!(record["tool_calls"].as_array().unwrap().len(), 5);
    assert!(
        record["logs"].to_string().contains("wrote index.md"),
        "{record}"
    );

    // Without a terminal and without --approve, the write is denied: the
    // uncaught tool error ends the run and says how to grant it.
    let run = ws.run(&[
        "run",
        "workflows/notes-index.rhai",
        "--arg",
        "folder=notes",
        "--arg",
        "out=again.md",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("tool `write_file` failed (denied)")
            && run.stderr.contains("--approve write_file"),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("--> workflows/notes-index.rhai:"),
        "{run:?}"
    );
    assert!(!ws.root.join("again.md").exists());
}

#[test]
fn at_a_terminal_a_workflow_asks_before_a_write() {
    let ws = Workspace::new();
    ws.write(
        "w.rhai",
        "tool(\"write_file\", #{path: \"out.txt\", content: \"yes\\n\"});\n\"written\"\n",
    );
    let (code, shown) = chat_on_terminal(&ws, &["run", "w.rhai"], "y\n");
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("wants to run with") && shown.contains("+yes"),
        "{shown}"
    );
    assert_eq!(ws.read("out.txt"), "yes\n");
    let (code, shown) = chat_on_terminal(&ws, &["run", "w.rhai"], "n not now\n");
    assert_eq!(code, 1, "{shown}");
    assert!(shown.contains("not now"), "{shown}");
}

#[test]
fn host_functions_work_and_their_errors_can_be_caught() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", "[workflow]\nenv = [\"WF_ALLOWED\"]\n");
    ws.write("notes.md", "hello\n");
    ws.write(
        "api.rhai",
        r#"
let out = #{};
out.arg = args.name;
out.json = json_parse(json_stringify(#{a: [1, 2, #{b: true}]}));
try { json_parse("{oops"); } catch (e) { out.bad_json = e.kind; }
out.read = tool("read_file", #{path: "notes.md"}).content;
try { tool("read_file", #{path: "missing.md"}); } catch (e) { out.missing = `${e.tool}:${e.kind}`; }
try { tool("read_file", #{pathh: "x"}); } catch (e) { out.schema = e.kind; }
try { tool("no_such_tool", #{}); } catch (e) { out.unknown = e.kind; }
try { log("loud", "x"); } catch (e) { out.bad_level = e.kind; }
log("warn", "careful");
print("printed");
out.env = env("WF_ALLOWED");
try { env("HOME"); } catch (e) { out.env_denied = e.kind; }
try { sleep(120000); } catch (e) { out.long_sleep = e.kind; }
let before = now_ms();
sleep(20);
out.slept = now_ms() - before >= 20;
out.now_has_offset = now().contains("T");
out.year = format_time(days_ago(0), "%Y").len();
out
"#,
    );
    let mut ws = ws;
    ws.env("WF_ALLOWED", "granted-value");
    let run = ws.run(&["run", "api.rhai", "--arg", "name=ada", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = &run.json()["result"];
    assert_eq!(out["arg"], "ada");
    assert_eq!(out["json"], json!({"a": [1, 2, {"b": true}]}));
    assert_eq!(out["bad_json"], "invalid-json");
    assert_eq!(out["read"], "hello\n");
    assert_eq!(out["missing"], "read_file:not-found");
    assert_eq!(out["schema"], "invalid-args");
    assert_eq!(out["unknown"], "unknown-tool");
    assert_eq!(out["bad_level"], "invalid-args");
    assert_eq!(out["env"], "granted-value");
    assert_eq!(out["env_denied"], "denied");
    assert_eq!(out["long_sleep"], "invalid-args");
    assert_eq!(out["slept"], true);
    assert_eq!(out["now_has_offset"], true);
    assert_eq!(out["year"], 4);
    assert!(
        run.stderr.contains("[warn] careful") && run.stderr.contains("printed"),
        "{run:?}"
    );
}

#[test]
fn fail_stops_the_workflow_even_inside_try() {
    let ws = Workspace::new();
    ws.write(
        "f.rhai",
        "try { fail(\"the input is empty\"); } catch (e) { return \"caught\"; }\n",
    );
    let run = ws.run(&["run", "f.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("the workflow failed: the input is empty"),
        "{run:?}"
    );
    assert_eq!(run_record(&ws, "1")["status"], "failed");
}

#[test]
fn limits_stop_loops_huge_strings_and_long_runs() {
    let ws = Workspace::new();
    ws.write("spin.rhai", "let n = 0;\nloop { n += 1; }\n");
    let run = ws.run(&["run", "spin.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("Too many operations") && run.stderr.contains("spin.rhai:2:"),
        "{run:?}"
    );
    assert!(run.stderr.contains("max_operations"), "{run:?}");

    ws.write("grow.rhai", "let s = \"x\";\nloop { s += s; }\n");
    let run = ws.run(&["run", "grow.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("Length of string too large")
            && run.stderr.contains("max_string_bytes"),
        "{run:?}"
    );

    ws.write("deep.rhai", "fn down(n) { down(n + 1) }\ndown(0)\n");
    let run = ws.run(&["run", "deep.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("functions nest too deeply"), "{run:?}");

    // No operations limit: the wall clock stops a busy loop, and a sleep.
    ws.write("toolcell.toml", "[workflow]\nmax_operations = 0\n");
    let run = ws.run(&["run", "spin.rhai", "--timeout", "1"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("ran longer than its limit of 1 s"),
        "{run:?}"
    );
    ws.write("nap.rhai", "loop { sleep(50000); }\n");
    let run = ws.run(&["run", "nap.rhai", "--timeout", "1"]);
    assert_eq!(run.code, 1, "{run:?}");
    let runs = ws.run(&["runs", "list", "--json"]).json();
    assert_eq!(runs[0]["status"], "timed-out");
    assert_eq!(runs[1]["status"], "timed-out");
}

#[test]
fn imports_stay_inside_the_workflows_folder() {
    let ws = Workspace::new();
    ws.write("flows/lib/util.rhai", "fn twice(x) { x * 2 }\n");
    ws.write(
        "flows/ok.rhai",
        "import \"lib/util\" as util;\nutil::twice(21)\n",
    );
    ws.write("secret.rhai", "fn leak() { 1 }\n");
    ws.write("flows/up.rhai", "import \"../secret\" as s;\ns::leak()\n");
    std::fs::create_dir_all(ws.outer.join("elsewhere")).unwrap();
    std::fs::write(ws.outer.join("elsewhere/x.rhai"), "fn leak() { 2 }\n").unwrap();
    std::os::unix::fs::symlink(ws.outer.join("elsewhere"), ws.root.join("flows/link")).unwrap();
    ws.write("flows/link.rhai", "import \"link/x\" as s;\ns::leak()\n");

    let run = ws.run(&["run", "flows/ok.rhai"]);
    assert_eq!((run.code, run.stdout.trim()), (0, "42"), "{run:?}");
    let run = ws.run(&["run", "flows/up.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("`../secret` is outside the workflows folder"),
        "{run:?}"
    );
    let run = ws.run(&["run", "flows/link.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("leads outside the workflows folder through a link"),
        "{run:?}"
    );
}

#[test]
fn syntax_and_runtime_errors_match_their_golden_files() {
    let cases = repo().join("tests/ui/workflows");
    let bless = std::env::var_os("BLESS").is_some();
    let mut failures = Vec::new();
    for name in ["syntax_error", "runtime_error"] {
        let ws = Workspace::new();
        for file in [format!("{name}.rhai"), "lib/maths.rhai".to_string()] {
            ws.write(&file, &std::fs::read_to_string(cases.join(&file)).unwrap());
        }
        let run = ws.run(&["run", &format!("{name}.rhai")]);
        assert_eq!(run.code, 1, "{run:?}");
        let expected_file = cases.join(format!("{name}.err"));
        if bless {
            std::fs::write(&expected_file, &run.stderr).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_file).unwrap_or_default();
        if run.stderr != expected {
            failures.push(format!(
                "{name}:\n--- expected\n{expected}--- got\n{}",
                run.stderr
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches (rerun with BLESS=1 to accept):\n{}",
        failures.join("\n")
    );
}

#[test]
fn check_names_unknown_tools_with_their_position_without_running() {
    let ws = Workspace::new();
    ws.write("c.rhai", "let a = tool(\"read_file\", #{path: \"x\"});\nif a.size > 0 {\n    tool(\"raed_file\", #{path: \"y\"});\n}\n");
    let run = ws.run(&["check", "c.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("there is no tool named `raed_file`")
            && run.stderr.contains("c.rhai:3:5"),
        "{run:?}"
    );
    ws.write(
        "ok.rhai",
        "fn f() { tool(\"list_directory\", #{path: \".\"}) }\nf()\n",
    );
    let run = ws.run(&["check", "ok.rhai"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("(list_directory)"), "{run:?}");
    assert!(
        !ws.root.join(".toolcell/state.db").exists(),
        "check runs nothing"
    );
}

#[test]
fn the_agent_example_runs_against_the_fake_model_server() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c1",
            "read_file",
            json!({"path": "notes/todo.md"}),
        )])]),
        ollama::answer("- notes/todo.md: buy milk"),
    ]);
    let ws = Workspace::new();
    with_examples(&ws);
    ws.write("toolcell.toml", &model_config(&server, ""));
    ws.write("notes/todo.md", "TODO buy milk\n");
    let run = ws.run(&[
        "run",
        "workflows/summarise-todos.rhai",
        "--arg",
        "folder=notes",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.trim(), "- notes/todo.md: buy milk");

    let requests = server.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        ["read_file", "search_files"],
        "only the tools the workflow names"
    );
    crate::agent::assert_paired(&requests[1]);
    let record = run_record(&ws, "1");
    assert_eq!(
        record["tool_calls"].as_array().unwrap().len(),
        2,
        "the script's search and the model's read"
    );

    // With `calls: true` the script also gets the calls the model made. A
    // call of a tool outside the script's list is refused, not run.
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[
            ("c0", "list_directory", json!({"path": "."})),
            ("c1", "read_file", json!({"path": "notes/todo.md"})),
        ])]),
        ollama::answer("Buy milk."),
    ]);
    ws.write("toolcell.toml", &model_config(&server, ""));
    ws.write(
        "calls.rhai",
        "agent(\"What is to do?\", #{tools: [\"read_file\"], calls: true})\n",
    );
    let run = ws.run(&["run", "calls.rhai", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.json()["result"],
        json!({"answer": "Buy milk.", "calls": [
            {"name": "list_directory", "arguments": {"path": "."}},
            {"name": "read_file", "arguments": {"path": "notes/todo.md"}},
        ]})
    );
    let refused = &crate::agent::tool_results(&server.requests()[1])[0].2;
    assert!(
        refused.contains("`list_directory` is not one of this agent's tools; they are: read_file"),
        "{refused}"
    );
    ws.write("bad.rhai", "agent(\"x\", #{tools: [\"rm_rf\"]})\n");
    let run = ws.run(&["run", "bad.rhai"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("agent() cannot offer `rm_rf`"),
        "{run:?}"
    );

    // Nothing to summarise: the model is not asked.
    let server = ModelServer::start(vec![]);
    let ws = Workspace::new();
    with_examples(&ws);
    ws.write("toolcell.toml", &model_config(&server, ""));
    ws.write("notes/done.md", "all done\n");
    let run = ws.run(&[
        "run",
        "workflows/summarise-todos.rhai",
        "--arg",
        "folder=notes",
    ]);
    assert_eq!(
        (run.code, run.stdout.trim()),
        (0, "No TODO items."),
        "{run:?}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn llm_json_validates_against_the_schema_and_retries_once() {
    let server = ModelServer::start(vec![
        ollama::answer(r#"{"category": "idea", "priority": 7, "summary": "A garden."}"#),
        ollama::answer(
            "```json\n{\"category\": \"idea\", \"priority\": 2, \"summary\": \"A garden.\"}\n```",
        ),
    ]);
    let ws = Workspace::new();
    with_examples(&ws);
    ws.write("toolcell.toml", &model_config(&server, ""));
    ws.write("notes/garden.md", "Maybe plant tomatoes next year.\n");
    let run = ws.run(&[
        "run",
        "workflows/triage-note.rhai",
        "--arg",
        "note=notes/garden.md",
        "--json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.json()["result"],
        json!({"category": "idea", "priority": 2, "summary": "A garden.", "note": "notes/garden.md"})
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["format"]["required"],
        json!(["category", "priority", "summary"])
    );
    assert!(
        requests[0].body.get("tools").is_none(),
        "llm_json offers no tools"
    );
    let retry = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        retry.contains("does not fit the required JSON Schema") && retry.contains("priority"),
        "{retry}"
    );

    let server = ModelServer::start(vec![
        ollama::answer("no idea"),
        ollama::answer("{\"category\": \"x\"}"),
    ]);
    ws.write("toolcell.toml", &model_config(&server, ""));
    let run = ws.run(&[
        "run",
        "workflows/triage-note.rhai",
        "--arg",
        "note=notes/garden.md",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("invalid-output")
            && run.stderr.contains("did not fit the schema twice"),
        "{run:?}"
    );

    let run = ws.run(&["run", "workflows/triage-note.rhai"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("pass --arg note=PATH"), "{run:?}");
}

#[test]
fn llm_answers_once_and_ctrl_c_stops_a_workflow() {
    let server = ModelServer::start(vec![
        ollama::answer("Bonjour"),
        Reply::stream(ollama::CONTENT_TYPE, vec![ollama::content("…")]).then(Part::Stall),
    ]);
    let ws = Workspace::new();
    ws.write("toolcell.toml", &model_config(&server, ""));
    ws.write("l.rhai", "let a = llm(\"Say hello in French\", #{system: \"Be brief.\"});\nprint(a);\nllm(\"Take forever\")\n");
    let child = ws
        .command(&["run", "l.rhai"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server.wait_for_requests(2);
    std::thread::sleep(Duration::from_millis(200));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("Bonjour"));
    let first = &server.requests()[0].body;
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(run_record(&ws, "1")["status"], "cancelled");
}
