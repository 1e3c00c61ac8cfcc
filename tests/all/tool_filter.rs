//! Tool filtering, measured and end to end.
//!
//! The corpus (`tests/corpus/tool-filter.json`): 20 registered tools (the
//! built-in file tools, read from their own manifests, and twelve
//! third-party ones) and 20 requests with the tools each needs. The test
//! reports recall (needed tools offered / needed tools) and the tokens of
//! tool definitions sent with and without filtering:
//! `cargo test --release tool_filter -- --nocapture`.
//!
//! End to end: a workspace that filters its built-in tools, against the
//! fake model server: the first request offers only the relevant tools and
//! `more_tools`, the model asks for another through it, and the next request
//! offers that one too.

use crate::agent::{chat, messages, workspace};
use crate::model_server::{ModelServer, ollama};
use serde_json::{Value, json};
use toolcell::agent::filter::{MAX_MATCHED, ToolIndex, definition_tokens, more_tools_spec};
use toolcell::llm::ToolSpec;
use toolcell::tool::manifest::ToolManifest;

/// The built-in file tools, as their manifests describe them (the corpus
/// was written around them; `web_fetch` and `run_command` are left out, as
/// the agent leaves them out until a host or program is granted).
fn builtin_tools() -> Vec<ToolSpec> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools-wasm");
    let mut tools: Vec<ToolSpec> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("tool.toml"))
        .filter(|p| {
            p.exists()
                && !p.starts_with(format!("{root}/web_fetch"))
                && !p.starts_with(format!("{root}/run_command"))
        })
        .map(|p| {
            let m = ToolManifest::load(&p).unwrap();
            ToolSpec {
                name: m.name,
                description: m.description,
                parameters: m.parameters.value().clone(),
            }
        })
        .collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

#[test]
fn on_twenty_requests_over_twenty_tools_the_needed_tools_are_kept_and_definitions_shrink() {
    let corpus: Value = serde_json::from_str(include_str!("../corpus/tool-filter.json")).unwrap();
    let mut tools = builtin_tools();
    assert_eq!(tools.len(), 8);
    tools.extend(
        corpus["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| serde_json::from_value::<ToolSpec>(t.clone()).unwrap()),
    );
    assert_eq!(tools.len(), 20);
    let requests = corpus["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 20);

    let index = ToolIndex::new(&tools);
    let all_tokens = definition_tokens(&tools);
    let (mut needed, mut kept, mut sent_tokens) = (0, 0, 0);
    let mut misses = Vec::new();
    for case in requests {
        let request = case["request"].as_str().unwrap();
        let mut offered: Vec<ToolSpec> = index
            .relevant(request, MAX_MATCHED)
            .into_iter()
            .map(|i| tools[i].clone())
            .collect();
        let names: Vec<String> = offered.iter().map(|t| t.name.clone()).collect();
        for need in case["needs"].as_array().unwrap() {
            needed += 1;
            if names.iter().any(|n| n == need) {
                kept += 1;
            } else {
                misses.push(format!("{request:?} needs {need}, offered {names:?}"));
            }
        }
        offered.push(more_tools_spec());
        sent_tokens += definition_tokens(&offered);
    }
    let recall = kept as f64 / needed as f64;
    let without = all_tokens * requests.len();
    let drop = 1.0 - sent_tokens as f64 / without as f64;
    println!(
        "tool filtering over {} tools and {} requests: recall {kept}/{needed} = {:.0}%; tool-definition tokens {sent_tokens} instead of {without} (-{:.0}%)",
        tools.len(),
        requests.len(),
        recall * 100.0,
        drop * 100.0
    );
    for miss in &misses {
        println!("  missed: {miss}");
    }
    assert!(recall >= 0.9, "recall {recall:.2}: {misses:#?}");
    assert!(
        drop >= 0.7,
        "definition tokens dropped only {:.0}%",
        drop * 100.0
    );
}

#[test]
fn a_filtered_agent_offers_the_relevant_tools_and_more_on_request() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c1",
            "more_tools",
            json!({"query": "delete a file"}),
        )])]),
        ollama::reply(vec![ollama::calls(&[(
            "c2",
            "read_file",
            json!({"path": "a.txt"}),
        )])]),
        ollama::answer("It says alpha."),
    ]);
    let ws = workspace(&server, "ollama", "[agent]\nfilter_tools_above = 3\n");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["Read the file a.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("offering 1 of 8 tools"),
        "the saving is reported: {run:?}"
    );

    let offered = |n: usize| -> Vec<String> {
        server.requests()[n].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(offered(0), ["read_file", "more_tools"]);
    let after = offered(1);
    assert!(
        after.contains(&"delete_path".to_string()) && after.contains(&"read_file".to_string()),
        "{after:?}"
    );
    let result = messages(&server.requests()[1]).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(result.contains("delete_path"), "{result}");
    let system = messages(&server.requests()[1])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("delete_path"),
        "the prompt names it: {system}"
    );
    let last = messages(&server.requests()[2]);
    assert!(
        last.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("alpha")
    );
}
