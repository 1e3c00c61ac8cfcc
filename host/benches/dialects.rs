//! Reading tool calls written as text (see BENCHMARKS.md, issue 19).
//!
//! `cargo bench -p toolcell --bench dialects`
//!
//! 1. **Recall and false calls per dialect**, on the corpus of real outputs
//!    (`tests/fixtures/dialects/`), in both modes: the text format (the
//!    reply streamed in pieces of [`PIECE`] bytes through what the person
//!    sees, then read) and calls leaked by a model with native tools (the
//!    finished reply read).
//! 2. **Speed**: a long reply of prose and calls in several dialects, read
//!    as it streams (pieces of [`PIECE`] bytes) and whole, at two lengths:
//!    the time per byte must not grow with the length (no rescans), and the
//!    rate is the figure (the target is at least 50 MB/s).

#[path = "../../tests/support/dialect_corpus.rs"]
#[allow(dead_code)] // the per-case details the corpus test reports
mod dialect_corpus;
#[path = "support/stats.rs"]
#[allow(dead_code)] // its percentiles: medians are what this bench reports
mod stats;

use std::time::{Duration, Instant};
use toolcell::llm::ToolSpec;
use toolcell::llm::dialect::read_reply;
use toolcell::llm::dialect::shown::StreamView;

/// A streamed piece: about what a server sends per token (a few tokens).
const PIECE: usize = 16;

/// A larger piece: what a server that batches its output sends.
const BIG_PIECE: usize = 256;

/// Rounds of each timing.
const ROUNDS: usize = 7;

fn streamed(
    text: &str,
    tools: &[ToolSpec],
    piece: usize,
) -> (usize, toolcell::llm::dialect::Reply) {
    let mut view = StreamView::default();
    let mut shown = 0;
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + piece).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        shown += view.feed(&text[at..end]).len();
        at = end;
    }
    let (reply, rest) = view.finish(text, false, tools);
    shown += rest.len();
    (shown, reply)
}

fn recall() {
    let cases = dialect_corpus::cases();
    println!(
        "| dialect | positives right (text format) | (leaked, native) | negatives right | false calls |"
    );
    println!("|---|---:|---:|---:|---:|");
    let mut rows: std::collections::BTreeMap<String, [usize; 6]> = Default::default();
    for case in &cases {
        let whole = dialect_corpus::judge(case);
        let (_, reply) = streamed(&case.text, &case.tools, PIECE);
        let ran = dialect_corpus::ran(&reply, &case.tools);
        let row = rows.entry(case.dialect.clone()).or_default();
        if case.expect.is_empty() {
            row[3] += 1;
            row[4] += usize::from(whole.right && ran.is_empty());
            row[5] += whole.false_calls + ran.len();
        } else {
            row[0] += 1;
            row[1] += usize::from(ran == case.expect);
            row[2] += usize::from(whole.right);
        }
    }
    let mut total = [0usize; 6];
    for (dialect, row) in &rows {
        println!(
            "| {dialect} | {}/{} | {}/{} | {}/{} | {} |",
            row[1], row[0], row[2], row[0], row[4], row[3], row[5]
        );
        for i in 0..6 {
            total[i] += row[i];
        }
    }
    println!(
        "| **all {} cases, {} dialects** | **{}/{}** | **{}/{}** | **{}/{}** | **{}** |",
        cases.len(),
        rows.len(),
        total[1],
        total[0],
        total[2],
        total[0],
        total[4],
        total[3],
        total[5]
    );
}

/// A reply of `bytes` or so: prose, reasoning and calls in several
/// dialects, `prose` sentences of plain prose between them.
fn long_reply(bytes: usize, prose: usize) -> String {
    let parts = [
        "Let me look at the files first, then I will summarise what they say about the plan. ",
        "<think>The user wants the notes; reading them first is the safe order.</think>",
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes/plan.md\"}}</tool_call>\n",
        "<tool_call>\n<function=read_file>\n<parameter=path>\nnotes/a.md\n</parameter>\n</function>\n</tool_call>\n",
        "Some prose with <b>tags</b>, [brackets], {braces} and > signs that are not markers at all. ",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"b.md\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ];
    let mut text = String::with_capacity(bytes + 200);
    let mut i = 0;
    while text.len() < bytes || i % parts.len() != 0 {
        text.push_str(parts[i % parts.len()]);
        for _ in 0..prose {
            text.push_str(parts[4]);
        }
        i += 1;
    }
    // Prose before the calls only: they are calls, not an explanation.
    text.push_str(parts[2]);
    text
}

fn speed() {
    let tools = vec![ToolSpec {
        name: "read_file".into(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }];
    println!(
        "| reply | streamed in {PIECE}-byte pieces | in {BIG_PIECE}-byte pieces | read whole | calls read |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (size, prose) in [(1 << 20, 0), (8 << 20, 0), (1 << 20, 40), (8 << 20, 40)] {
        let text = long_reply(size, prose);
        let mut stream_times = Vec::new();
        let mut big_times = Vec::new();
        let mut whole_times = Vec::new();
        let mut calls = 0;
        for _ in 0..ROUNDS {
            let started = Instant::now();
            let (shown, reply) = streamed(&text, &tools, PIECE);
            stream_times.push(started.elapsed());
            std::hint::black_box(shown);
            let started = Instant::now();
            std::hint::black_box(streamed(&text, &tools, BIG_PIECE));
            big_times.push(started.elapsed());
            let started = Instant::now();
            let whole = read_reply(&text, false, &tools);
            whole_times.push(started.elapsed());
            calls = whole.calls.len();
            assert_eq!(reply.calls.len(), calls);
        }
        let rate = |d: Duration| text.len() as f64 / d.as_secs_f64() / 1e6;
        let (s, b, w) = (
            stats::median(stream_times),
            stats::median(big_times),
            stats::median(whole_times),
        );
        println!(
            "| {} MB, {} | {:.1} ms ({:.0} MB/s) | {:.1} ms ({:.0} MB/s) | {:.1} ms ({:.0} MB/s) | {calls} |",
            text.len() >> 20,
            if prose == 0 {
                "a call every ~190 bytes"
            } else {
                "a call every ~4 KB"
            },
            s.as_secs_f64() * 1e3,
            rate(s),
            b.as_secs_f64() * 1e3,
            rate(b),
            w.as_secs_f64() * 1e3,
            rate(w)
        );
    }
}

fn main() {
    recall();
    println!();
    speed();
}
