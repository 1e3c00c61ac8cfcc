//! Tool calls written as text, in every dialect: the corpus of real
//! outputs from the parsers' own test data (`tests/fixtures/dialects/`),
//! and the agent reading them from a model server in both modes (the text
//! format, and calls leaked as text by a model with native tools).

use crate::agent::{chat, messages, run_record, tool_results, workspace};
use crate::dialect_corpus::{by_dialect, cases, judge};
use crate::model_server::{ModelServer, ollama, openai};

/// Cases where toolcell differs from the source's parser on purpose, and
/// why. Each still must not run a call it should not.
const DELIBERATE: &[(&str, &str)] = &[
    (
        "kimi-k2-009",
        "the calls sit inside reasoning that never closes: reasoning is never read for calls",
    ),
    (
        "granite-005",
        "`<tool_call>` without its closing tag is a call cut off",
    ),
    (
        "granite-006",
        "`<tool_call>` without its closing tag is a call cut off",
    ),
    (
        "json-list-003",
        "bare JSON with prose after it is JSON in a prose answer",
    ),
    (
        "llama3-json-020",
        "bare JSON with prose after it is JSON in a prose answer",
    ),
    (
        "pythonic-014",
        "a bare list after prose is code in a prose answer",
    ),
    (
        "pythonic-015",
        "a bare list after prose is code in a prose answer",
    ),
    (
        "pythonic-017",
        "a bare list with prose after it is code in a prose answer",
    ),
    (
        "pythonic-018",
        "bare lists between prose are code in a prose answer",
    ),
    (
        "pythonic-025",
        "prose before and after the call: an explanation",
    ),
    (
        "phi4-005",
        "prose before and after the call: an explanation",
    ),
    (
        "functionary-v3-004",
        "raw code for `python` after a `>>>` the prompt wrote is not read as a call",
    ),
    (
        "glm-025",
        "values with their escapes written out (a raw string in the source) are taken as written",
    ),
];

/// Dialects in the corpus that toolcell does not read yet.
const NOT_READ_YET: &[&str] = &[];

#[test]
fn the_corpus_is_read_as_its_sources_say() {
    let cases = cases();
    let dialects: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c.dialect.as_str()).collect();
    let negatives = cases.iter().filter(|c| c.expect.is_empty()).count();
    assert!(
        cases.len() >= 150 && dialects.len() >= 20 && negatives >= 40,
        "{} cases, {} dialects, {negatives} negatives",
        cases.len(),
        dialects.len()
    );
    let mut unexpected = Vec::new();
    let mut false_calls = 0;
    // The text shown is compared where the source says it, and reported:
    // a marker left in the text is untidy, not unsafe.
    let mut text_differs = Vec::new();
    for case in &cases {
        assert!(!case.source.is_empty(), "{} names its source", case.id);
        let outcome = judge(case);
        false_calls += outcome.false_calls;
        let excused = DELIBERATE.iter().any(|(id, _)| *id == case.id)
            || (NOT_READ_YET.contains(&case.dialect.as_str()) && !case.expect.is_empty());
        if outcome.right == excused {
            unexpected.push(format!(
                "{} ({}){}: expected {:?}\n  ran {:?}\n  problems {:?}\n  text {:?}\n  shown {:?}",
                case.id,
                case.source,
                if excused {
                    " is excused but now right: update the list"
                } else {
                    ""
                },
                case.expect,
                outcome.ran,
                outcome
                    .reply
                    .calls
                    .iter()
                    .filter_map(|c| c.as_ref().err())
                    .collect::<Vec<_>>(),
                case.text,
                outcome.reply.text
            ));
        }
        if let Some(content) = &case.content
            && outcome.right
            && !excused
            && outcome.reply.text != content.trim()
        {
            text_differs.push(format!(
                "{}: the text shown is {:?}, not {:?}",
                case.id, outcome.reply.text, content
            ));
        }
    }
    let table = by_dialect(&cases);
    for (dialect, [p_right, p, n_right, n, false_calls]) in &table {
        println!(
            "{dialect:20} positives {p_right}/{p} negatives {n_right}/{n} false calls {false_calls}"
        );
    }
    println!(
        "the text shown differs from the source's in {} cases:\n{}",
        text_differs.len(),
        text_differs.join("\n")
    );
    assert_eq!(false_calls, 0, "no call runs that should not");
    assert!(
        unexpected.is_empty(),
        "{} of {} cases:\n{}",
        unexpected.len(),
        cases.len(),
        unexpected.join("\n")
    );
}

/// The tool results sent back in the text format: the user turn after the
/// model's.
fn text_results(request: &crate::model_server::Request) -> String {
    messages(request).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_text_format_runs_a_mistral_call_and_hides_its_marker() {
    let server = ModelServer::start(vec![
        ollama::answer(
            "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}]",
        )
        .rechunked(3),
        ollama::answer("It says alpha."),
    ]);
    let ws = workspace(&server, "ollama", "tool_format = \"text\"\n");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["Read a.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !run.stdout.contains("TOOL_CALLS"),
        "the marker is not shown: {run:?}"
    );
    let requests = server.requests();
    let back = text_results(&requests[1]);
    assert!(
        back.contains("<tool_response>") && back.contains("alpha"),
        "{back}"
    );
    let record = run_record(&ws, "1");
    assert_eq!(record["tool_calls"][0]["tool"], "read_file");
    assert_eq!(record["tool_calls"][0]["status"], "done");
}

#[test]
fn a_call_in_reasoning_never_runs_and_the_call_after_it_does() {
    let server = ModelServer::start(vec![
        ollama::answer(concat!(
            "<think>I could <tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"x.txt\", \"content\": \"no\"}}</tool_call> but reading is enough</think>",
            "Reading it.\n<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n</function>\n</tool_call>",
        ))
        .rechunked(5),
        ollama::answer("It says alpha."),
    ]);
    let ws = workspace(&server, "ollama", "tool_format = \"text\"\n");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["--yes", "Read a.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !ws.root.join("x.txt").exists(),
        "the call in reasoning did not run"
    );
    let record = run_record(&ws, "1");
    let calls = record["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{record}");
    assert_eq!(calls[0]["tool"], "read_file");
    assert!(
        run.stdout.contains("Reading it.") && !run.stdout.contains("<function="),
        "{run:?}"
    );
}

#[test]
fn a_leaked_call_in_another_dialect_runs_as_a_native_call() {
    let server = ModelServer::start(vec![
        openai::answer(
            "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>a.txt</arg_value>\n</tool_call>",
        ),
        openai::answer("It says alpha."),
    ]);
    let ws = workspace(&server, "openai", "");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["Read a.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("as text (glm)"), "{run:?}");
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].2.contains("alpha"), "{results:?}");
}

#[test]
fn a_call_cut_off_is_not_run_and_the_model_hears_why() {
    let server = ModelServer::start(vec![
        openai::answer("<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.t"),
        openai::answer("Sorry, I will stop here."),
    ]);
    let ws = workspace(&server, "openai", "");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["Read a.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{run:?}");
    let note = messages(&requests[1]).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        note.starts_with("Not run:") && note.contains("cut off"),
        "{note}"
    );
    let record = run_record(&ws, "1");
    assert!(
        record["tool_calls"].as_array().is_none_or(Vec::is_empty),
        "{record}"
    );
}

#[test]
fn a_call_shown_as_an_example_is_part_of_the_answer() {
    let answer = "For example, you could call:\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>\nThat reads the file.";
    let server = ModelServer::start(vec![ollama::answer(answer)]);
    let ws = workspace(&server, "ollama", "tool_format = \"text\"\n");
    let run = chat(&ws, &["How do I read a file?"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        server.requests().len(),
        1,
        "nothing ran, so nothing went back"
    );
    assert!(
        run.stdout.contains("<tool_call>"),
        "the example is shown as written: {run:?}"
    );
}

#[test]
fn the_prompt_speaks_the_dialect_the_chat_template_shows() {
    let server = ModelServer::start(vec![
        openai::answer("[TOOL_CALLS]read_file[ARGS]{\"path\": \"a.txt\"}"),
        openai::answer("It says alpha."),
    ]);
    server.describe(
        "/props",
        serde_json::json!({
            "default_generation_settings": {"n_ctx": 8192},
            "chat_template_caps": {"supports_tool_calls": false},
            "chat_template": "{%- for m in messages %}[INST]{{ m.content }}[/INST]{%- endfor %}[TOOL_CALLS]",
        }),
    );
    let ws = workspace(&server, "openai", "");
    ws.write("a.txt", "alpha\n");
    let run = chat(&ws, &["Read a.txt"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains("own dialect (mistral)"), "{run:?}");
    let requests = server.requests();
    let system = messages(&requests[0])[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("[TOOL_CALLS]") && !system.contains("<tool_call>"),
        "{system}"
    );
    assert!(text_results(&requests[1]).contains("alpha"));
    let known = crate::model_fit::models(&ws);
    assert_eq!(known[0]["dialect"], "mistral", "{known:?}");
}
