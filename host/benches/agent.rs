//! Benchmarks of the agent loop (see BENCHMARKS.md for figures and machine).
//!
//! `cargo bench -p toolcell --bench agent`
//!
//! 1. Stream parsing throughput: a long Ollama NDJSON answer and a long
//!    OpenAI SSE answer (content pieces and tool-call fragments, as the
//!    servers send them), fed in 16 KiB network-sized chunks, in MB/s.
//! 2. Host overhead of one agent round against an instant fake model server
//!    on 127.0.0.1, with the built-in tools registered and 12
//!    copies of a no-op tool): a round that answers at once (request build,
//!    HTTP, stream parse), and a round in which the model calls the no-op
//!    tool once (plus schema validation, policy, the call in its cell and
//!    the second request). The no-op call alone is measured in the same run
//!    to separate the loop's overhead from the sandbox's. Run twice: with
//!    every tool offered, and with tool filtering (each fresh agent then
//!    also builds its tool index, and offers fewer definitions).
//!
//! Rounds are interleaved; medians of per-round percentiles are reported.

#[path = "../../tests/support/cargo_component.rs"]
mod cargo_component;
#[allow(dead_code)]
#[path = "../../tests/support/fixture.rs"]
mod fixture;
#[path = "../../tests/support/model_server.rs"]
mod model_server;

use model_server::{ModelServer, ollama, openai};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use toolcell::agent::{Agent, AgentSettings, Outcome};
use toolcell::approval::ApproveAll;
use toolcell::call::dispatch::Dispatcher;
use toolcell::call::runner::ToolRunner;
use toolcell::call::view::Silent;
use toolcell::config::WorkspaceConfig;
use toolcell::llm::stream::TurnDecoder;
use toolcell::llm::{self, StreamEvent};
use toolcell::registry::Registry;
use toolcell::sandbox::{Allocation, EpochClock, SandboxOptions};

/// Size of the synthetic answers parsed.
const STREAM_BYTES: usize = 32 * 1024 * 1024;
/// Network-sized chunks.
const CHUNK: usize = 16 * 1024;
/// Agent rounds per case and round of measurement, after warm-up.
const ROUNDS_PER_CASE: usize = 300;
const WARMUP: usize = 30;
const REPEATS: usize = 5;

fn main() {
    parsing();
    agent_rounds(usize::MAX, "all offered");
    agent_rounds(0, "filtered");
}

fn ndjson_body() -> Vec<u8> {
    let mut body = Vec::new();
    let mut i = 0u64;
    while body.len() < STREAM_BYTES {
        body.extend_from_slice(
            ollama::content(&format!("word{i} and some more text, ")).as_bytes(),
        );
        if i.is_multiple_of(100) {
            body.extend_from_slice(
                ollama::calls(&[("", "read_file", json!({"path": format!("notes/{i}.md")}))])
                    .as_bytes(),
            );
        }
        i += 1;
    }
    body.extend_from_slice(ollama::done().as_bytes());
    body
}

fn sse_body() -> Vec<u8> {
    let mut body = Vec::new();
    let mut i = 0u64;
    while body.len() < STREAM_BYTES {
        body.extend_from_slice(
            openai::content(&format!("word{i} and some more text, ")).as_bytes(),
        );
        if i.is_multiple_of(100) {
            let index = i / 100;
            body.extend_from_slice(
                openai::call_start(index, &format!("call_{index}"), "read_file").as_bytes(),
            );
            body.extend_from_slice(openai::call_args(index, "{\"path\": ").as_bytes());
            body.extend_from_slice(
                openai::call_args(index, &format!("\"notes/{i}.md\"}}")).as_bytes(),
            );
        }
        i += 1;
    }
    body.extend_from_slice(openai::finish("tool_calls").as_bytes());
    body.extend_from_slice(openai::done().as_bytes());
    body
}

fn parsing() {
    let ndjson = ndjson_body();
    let sse = sse_body();
    let mut results: Vec<(&str, Vec<f64>)> =
        vec![("Ollama NDJSON", Vec::new()), ("OpenAI SSE", Vec::new())];
    for _ in 0..REPEATS {
        let started = Instant::now();
        let mut sink = |_: StreamEvent<'_>| {};
        let mut turn = llm::ollama::NdjsonTurn::default();
        for chunk in ndjson.chunks(CHUNK) {
            turn.push(chunk, &mut sink).expect("valid NDJSON");
        }
        let turn = turn.into_turn().expect("complete");
        assert!(turn.tool_calls.len() > 100);
        results[0]
            .1
            .push(ndjson.len() as f64 / started.elapsed().as_secs_f64() / 1e6);

        let started = Instant::now();
        let mut turn = llm::openai::SseTurn::default();
        for chunk in sse.chunks(CHUNK) {
            turn.push(chunk, &mut sink).expect("valid SSE");
        }
        let turn = turn.into_turn().expect("complete");
        assert!(turn.tool_calls.len() > 100);
        results[1]
            .1
            .push(sse.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
    }
    println!(
        "stream parsing, {} MiB in {} KiB chunks (median of {REPEATS}):",
        STREAM_BYTES >> 20,
        CHUNK >> 10
    );
    for (label, mut rates) in results {
        rates.sort_by(f64::total_cmp);
        println!("  {label:<14} {:>7.0} MB/s", rates[rates.len() / 2]);
    }
}

/// No-op tools added to the built-in ones.
const EXTRA_TOOLS: usize = 12;

/// A workspace with the built-in tools and [`EXTRA_TOOLS`] no-op ones.
fn workspace() -> (tempfile::TempDir, WorkspaceConfig, Registry) {
    let dir = tempfile::tempdir().expect("temp dir");
    let noop = fixture::noop();
    let tools = dir.path().join(".toolcell/tools");
    for i in 0..EXTRA_TOOLS {
        let folder = tools.join(format!("noop_{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        let manifest = std::fs::read_to_string(noop.folder.join("tool.toml")).unwrap();
        std::fs::write(
            folder.join("tool.toml"),
            manifest.replace("name = \"noop\"", &format!("name = \"noop_{i}\"")),
        )
        .unwrap();
        std::fs::copy(&noop.wasm, folder.join("tool.wasm")).unwrap();
    }
    let config = WorkspaceConfig::default_for(dir.path()).unwrap();
    let registry = Registry::load(None, &config.workspace_tools_dir());
    let builtin = toolcell_builtin_count();
    assert_eq!(
        registry.names().len(),
        builtin + EXTRA_TOOLS,
        "{:?}",
        registry.problems()
    );
    (dir, config, registry)
}

fn agent_rounds(filter_tools_above: usize, label: &str) {
    let (_dir, config, registry) = workspace();
    let cache = tempfile::tempdir().unwrap();
    let dispatcher = Dispatcher::new(
        config,
        registry,
        SandboxOptions {
            cache_dir: Some(cache.path().to_path_buf()),
            allocation: Allocation::Pooling,
            ready_ahead: false,
            leave_used_cells_to_exit: false,
            clock: EpochClock::Ticking,
        },
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let total = WARMUP + ROUNDS_PER_CASE;
    let mut script = Vec::new();
    for _ in 0..REPEATS * total {
        script.push(ollama::answer("Hello."));
        script.push(ollama::reply(vec![ollama::calls(&[(
            "c1",
            "noop_3",
            json!({}),
        )])]));
        script.push(ollama::answer("Done."));
        script.push(ollama::answer("Hello."));
    }
    let server = ModelServer::start(script);
    let settings = llm::ModelSettings {
        base_url: server.url.clone(),
        name: Some("fake".into()),
        ..Default::default()
    };
    let provider = llm::connect(&settings).unwrap();
    let agent_settings = AgentSettings {
        max_rounds: 10,
        num_ctx: 8192,
        max_retries: 0,
        filter_tools_above,
    };
    let cancel = CancellationToken::new();
    let mut answer_p50 = Vec::new();
    let mut tool_p50 = Vec::new();
    let mut noop_p50 = Vec::new();
    let mut raw_p50 = Vec::new();
    let http = reqwest::Client::new();
    let chat_url = format!("{}/api/chat", server.url);
    let first_body = {
        let agent = Agent::new(
            &dispatcher,
            provider.as_ref(),
            &ApproveAll,
            None,
            agent_settings.clone(),
        );
        let mut messages = agent.messages().to_vec();
        messages.push(toolcell::llm::Message::user("Say hello"));
        let ollama = llm::ollama::Ollama::new(&settings).unwrap();
        ollama
            .body(toolcell::llm::ChatRequest {
                messages: &messages,
                tools: agent.tools(),
                format: None,
            })
            .to_string()
    };
    for _ in 0..REPEATS {
        let mut answer = Vec::new();
        let mut with_tool = Vec::new();
        let mut noop = Vec::new();
        let mut raw = Vec::new();
        for i in 0..total {
            let started = Instant::now();
            let mut agent = Agent::new(
                &dispatcher,
                provider.as_ref(),
                &ApproveAll,
                None,
                agent_settings.clone(),
            );
            let outcome = runtime.block_on(agent.ask("Say hello", &mut Silent, &cancel));
            assert!(matches!(outcome, Outcome::Answered(_)), "{outcome:?}");
            let a = started.elapsed();

            let started = Instant::now();
            let mut agent = Agent::new(
                &dispatcher,
                provider.as_ref(),
                &ApproveAll,
                None,
                agent_settings.clone(),
            );
            let outcome = runtime.block_on(agent.ask("Call noop_3", &mut Silent, &cancel));
            assert!(matches!(outcome, Outcome::Answered(_)), "{outcome:?}");
            let t = started.elapsed();

            // The same exchange without the host: a plain POST of the
            // first request's body, reading the reply to its end.
            let started = Instant::now();
            runtime.block_on(async {
                let reply = http
                    .post(&chat_url)
                    .body(first_body.clone())
                    .send()
                    .await
                    .unwrap();
                reply.bytes().await.unwrap();
            });
            let h = started.elapsed();

            let started = Instant::now();
            let call = runtime.block_on(
                ToolRunner::unrecorded(&dispatcher, &ApproveAll).call("noop_3", json!({})),
            );
            assert!(call.value.is_some());
            let n = started.elapsed();
            if i >= WARMUP {
                answer.push(a);
                with_tool.push(t);
                noop.push(n);
                raw.push(h);
            }
        }
        answer_p50.push(p50(answer));
        tool_p50.push(p50(with_tool));
        noop_p50.push(p50(noop));
        raw_p50.push(p50(raw));
    }
    assert_eq!(server.unused(), 0);
    let (a, t, n, h) = (
        median(answer_p50),
        median(tool_p50),
        median(noop_p50),
        median(raw_p50),
    );
    println!(
        "agent round against an instant fake Ollama server, {} tools, {label} (p50, median of {REPEATS}):",
        toolcell_builtin_count() + EXTRA_TOOLS
    );
    println!(
        "  plain HTTP exchange, no host (baseline) {:>6.0} µs",
        micros(h)
    );
    println!(
        "  answer at once (1 request)            {:>8.0} µs  (host overhead {:.0} µs)",
        micros(a),
        micros(a.saturating_sub(h))
    );
    println!(
        "  one no-op tool call (2 requests)      {:>8.0} µs",
        micros(t)
    );
    println!(
        "  the no-op call alone (dispatcher)     {:>8.0} µs",
        micros(n)
    );
    println!(
        "  host overhead of the tool round       {:>8.0} µs  (= tool round - no-op call - 2 plain exchanges)",
        micros(t.saturating_sub(n).saturating_sub(h * 2))
    );
}

fn p50(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn median(values: Vec<Duration>) -> Duration {
    p50(values)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The built-in tools every workspace has.
fn toolcell_builtin_count() -> usize {
    toolcell::tool::builtin::BUILTIN_TOOLS.len()
}
