//! The corpus of model outputs (`tests/corpus/model-outputs.json`):
//! well-formed and malformed tool-call arguments, calls leaked as text in
//! the shapes models really write, and prose that mentions tools but is not
//! a call, read as the agent reads a reply ([`read_reply`]). For each, the
//! exact call recovered (or that none is) is asserted;
//! the run prints the figures: recovered / recoverable, and false
//! executions, which must be 0.

use serde_json::Value;
use toolcell::llm::ToolSpec;
use toolcell::llm::dialect::read_reply;
use toolcell::llm::recover::parse_lenient;

/// The tools offered to the model in every case.
const OFFERED: &[&str] = &["read_file", "write_file", "list_directory", "search_files"];

#[test]
fn every_corpus_output_gives_exactly_the_expected_call() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/corpus/model-outputs.json"
    );
    let corpus: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(
        corpus.len() >= 60,
        "the corpus has {} outputs",
        corpus.len()
    );
    let (mut recoverable, mut recovered, mut false_executions) = (0, 0, 0);
    let mut failures = Vec::new();
    for case in &corpus {
        let id = case["id"].as_str().unwrap();
        let text = case["text"].as_str().unwrap();
        let (got, expected): (Value, Value) = match case["kind"].as_str().unwrap() {
            "arguments" => {
                let got = parse_lenient(text)
                    .ok()
                    .map(|(v, _)| v)
                    .filter(Value::is_object)
                    .unwrap_or(Value::Null);
                (got, case["arguments"].clone())
            }
            _ => {
                let offered: Vec<ToolSpec> = OFFERED
                    .iter()
                    .map(|name| ToolSpec {
                        name: name.to_string(),
                        description: String::new(),
                        parameters: serde_json::json!({"type": "object"}),
                    })
                    .collect();
                // A call of a tool not offered is answered in band as
                // unknown: it does not run.
                let calls: Vec<Value> = read_reply(text, false, &offered)
                    .calls
                    .into_iter()
                    .filter_map(Result::ok)
                    .filter(|c| OFFERED.contains(&c.name.as_str()))
                    .map(|c| serde_json::json!({"name": c.name, "arguments": c.arguments}))
                    .collect();
                (Value::Array(calls), case["calls"].clone())
            }
        };
        let expects_call = !(expected.is_null() || expected == Value::Array(vec![]));
        let got_call = !(got.is_null() || got == Value::Array(vec![]));
        if expects_call {
            recoverable += 1;
            if got == expected {
                recovered += 1;
            }
        }
        if got_call && got != expected {
            false_executions += 1;
        }
        if got != expected {
            failures.push(format!("{id}: expected {expected}, got {got}"));
        }
    }
    println!(
        "corpus: {} outputs; recovered {recovered} / {recoverable} recoverable; false executions {false_executions}",
        corpus.len()
    );
    assert_eq!(false_executions, 0, "{failures:#?}");
    assert!(failures.is_empty(), "{failures:#?}");
}
