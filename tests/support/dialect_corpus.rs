//! The corpus of real tool-call outputs (`tests/fixtures/dialects/`): its
//! cases, and how toolcell's reader does on them, per dialect. Shared by
//! the corpus test and the dialects benchmark.

use serde_json::Value;
use std::collections::BTreeMap;
use toolcell::llm::ToolSpec;
use toolcell::llm::dialect::{Reply, read_reply};

/// One recorded output and what its source says it means.
pub struct Case {
    pub id: String,
    pub dialect: String,
    pub source: String,
    pub text: String,
    pub tools: Vec<ToolSpec>,
    /// The calls that should run, in order; none for a negative.
    pub expect: Vec<(String, Value)>,
    /// The visible text, when the source says.
    pub content: Option<String>,
}

/// How one case came out.
pub struct Outcome {
    /// The calls expected ran, exactly (a negative: nothing ran).
    pub right: bool,
    /// Calls that ran in a negative case.
    pub false_calls: usize,
    /// The calls that ran: (name, arguments).
    pub ran: Vec<(String, Value)>,
    pub reply: Reply,
}

fn folder() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/dialects")
}

/// Every case of the corpus.
pub fn cases() -> Vec<Case> {
    let schemas: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(folder().join("tools.json")).unwrap())
            .unwrap();
    std::fs::read_to_string(folder().join("corpus.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let case: Value = serde_json::from_str(line).unwrap();
            let text = |k: &str| case[k].as_str().unwrap_or_default().to_string();
            Case {
                id: text("id"),
                dialect: text("dialect"),
                source: text("source"),
                text: text("text"),
                tools: case["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|name| {
                        let name = name.as_str().unwrap();
                        ToolSpec {
                            name: name.to_string(),
                            description: String::new(),
                            parameters: schemas[name].clone(),
                        }
                    })
                    .collect(),
                expect: case["expect"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| {
                        (
                            c["name"].as_str().unwrap().to_string(),
                            c["arguments"].clone(),
                        )
                    })
                    .collect(),
                content: case
                    .get("content")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            }
        })
        .collect()
}

/// The calls of `reply` that run: a call of a tool that is not offered is
/// answered in band as unknown, so it does not.
pub fn ran(reply: &Reply, tools: &[ToolSpec]) -> Vec<(String, Value)> {
    reply
        .calls
        .iter()
        .filter_map(|c| c.as_ref().ok())
        .filter(|c| tools.iter().any(|t| t.name == c.name))
        .map(|c| (c.name.clone(), c.arguments.clone()))
        .collect()
}

/// Reads one case as the agent reads a finished reply.
pub fn judge(case: &Case) -> Outcome {
    let reply = read_reply(&case.text, false, &case.tools);
    let ran = ran(&reply, &case.tools);
    let false_calls = if case.expect.is_empty() { ran.len() } else { 0 };
    Outcome {
        right: ran == case.expect,
        false_calls,
        ran,
        reply,
    }
}

/// Per dialect: (positives right, positives, negatives right, negatives,
/// false calls).
pub fn by_dialect(cases: &[Case]) -> BTreeMap<String, [usize; 5]> {
    let mut table: BTreeMap<String, [usize; 5]> = BTreeMap::new();
    for case in cases {
        let outcome = judge(case);
        let row = table.entry(case.dialect.clone()).or_default();
        let (right, total) = if case.expect.is_empty() {
            (2, 3)
        } else {
            (0, 1)
        };
        row[total] += 1;
        row[right] += usize::from(outcome.right);
        row[4] += outcome.false_calls;
    }
    table
}
