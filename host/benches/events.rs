//! What `toolcell chat --json` costs over the plain view (see BENCHMARKS.md).
//!
//! `cargo bench -p toolcell --bench events`
//!
//! Whole `toolcell chat` processes against a fake Ollama server on
//! 127.0.0.1 whose answer streams `PIECES` pieces of text: each piece is an
//! event — a `text` line of JSON with `--json`, text written as it comes
//! without. Both write to a pipe this process drains. Rounds alternate the
//! two; the medians and the difference per event are reported, beside the
//! same chat with a one-piece answer (the process's fixed cost).

#[path = "../../tests/support/model_server.rs"]
mod model_server;
#[path = "support/stats.rs"]
#[allow(dead_code)] // its percentiles: medians are what this bench reports
mod stats;

use model_server::{ModelServer, Reply, ollama};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Pieces of the long answer: enough that a microsecond per event shows
/// as milliseconds per process.
const PIECES: usize = 20_000;
/// Rounds of each case, after one warm-up round each.
const ROUNDS: usize = 15;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let long = || {
        let body: String = (0..PIECES)
            .map(|i| ollama::content(&format!("word{i} ")))
            .chain([ollama::done()])
            .collect();
        Reply::stream(ollama::CONTENT_TYPE, vec![body])
    };
    // Per round: long plain, long --json, short plain, short --json.
    let replies = (0..=ROUNDS)
        .flat_map(|_| [long(), long(), ollama::answer("ok"), ollama::answer("ok")])
        .collect();
    let server = ModelServer::start(replies);
    std::fs::write(
        root.join("toolcell.toml"),
        format!(
            "[model]\nprovider = \"ollama\"\nbase_url = \"{}\"\nname = \"fake-model\"\nnum_ctx = 8192\n",
            server.url
        ),
    )
    .unwrap();
    let chat = |json: bool| -> (Duration, usize) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolcell"));
        command
            .arg("chat")
            .args(json.then_some("--json"))
            .arg("Say many words")
            .current_dir(&root)
            .env("TOOLCELL_DATA_DIR", root.join("data"))
            .env("TOOLCELL_CACHE_DIR", root.join("cache"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let started = Instant::now();
        let mut child = command.spawn().unwrap();
        let mut out = Vec::new();
        child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        assert!(child.wait().unwrap().success());
        (started.elapsed(), out.len())
    };
    let mut times: [Vec<Duration>; 4] = Default::default();
    for round in 0..=ROUNDS {
        for (case, (json, _)) in [(false, 0), (true, 0), (false, 1), (true, 1)]
            .into_iter()
            .enumerate()
        {
            let (took, bytes) = chat(json);
            assert!(bytes > 0);
            if round > 0 {
                times[case].push(took);
            }
        }
    }
    let [long_plain, long_json, short_plain, short_json] = times.map(stats::median);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("toolcell chat, whole processes, medians of {ROUNDS} interleaved rounds:");
    println!(
        "  answer of {PIECES} pieces: plain {:.1} ms, --json {:.1} ms ({:.2}x)",
        ms(long_plain),
        ms(long_json),
        long_json.as_secs_f64() / long_plain.as_secs_f64()
    );
    println!(
        "  answer of one piece:     plain {:.1} ms, --json {:.1} ms",
        ms(short_plain),
        ms(short_json)
    );
    let per_event = (long_json.as_secs_f64() - long_plain.as_secs_f64()) / PIECES as f64;
    let per_piece = (long_plain.as_secs_f64() - short_plain.as_secs_f64()) / PIECES as f64;
    println!(
        "  --json over plain, per event: {:+.2} µs (a piece costs {:.2} µs plain: server, parse, view)",
        per_event * 1e6,
        per_piece * 1e6
    );
}
