//! What approval rules cost a call (issue 22): the rules' decision alone,
//! and a call's admission (everything before approval) with no rules and
//! with 50, on the same calls.
//!
//! `cargo bench -p toolcell --bench rules`
//!
//! The 50 rules: path rules for the file tools (one of them, last, lets
//! writes under `notes/` run unasked: it is the one that pays for looking
//! up where a path really is), command prefixes, hosts and pointers.

use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use toolcell::call::dispatch::Dispatcher;
use toolcell::config::WorkspaceConfig;
use toolcell::registry::Registry;
use toolcell::sandbox::{Allocation, EpochClock, SandboxOptions};

/// Rules in the config of the second set of figures.
const RULES: usize = 50;
/// Decisions per timing round; the median round is reported.
const CALLS: usize = 20_000;
const ROUNDS: usize = 9;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(workspace.join("notes")).unwrap();
    std::fs::write(workspace.join("notes/a.md"), "a").unwrap();
    let cache = workspace.join("cache");
    let calls: [(&str, &str, Value); 4] = [
        (
            "write under notes/ (the last rule lets it)",
            "write_file",
            json!({"path": "notes/a.md", "content": "x"}),
        ),
        (
            "read elsewhere (no rule matches)",
            "read_file",
            json!({"path": "src/main.rs"}),
        ),
        (
            "run_command (a prefix rule)",
            "run_command",
            json!({"program": "git", "args": ["status"]}),
        ),
        (
            "web_fetch (a host rule)",
            "web_fetch",
            json!({"url": "https://docs.rs/serde"}),
        ),
    ];
    let none = dispatcher(&workspace, &cache, "");
    let fifty = dispatcher(&workspace, &cache, &rules_text());
    println!(
        "approval rules: {RULES} rules against none; medians of {ROUNDS} rounds of {CALLS} calls\n"
    );
    for (label, tool, args) in &calls {
        let config = fifty.config();
        let real = |path: &str| toolcell::effect::roots::real_path(config, path);
        let decide = median_per_call(|| {
            std::hint::black_box(config.rules.decide(tool, args, &real));
        });
        // Admission: the grant, the arguments' check, the policy, the rules.
        let admit_none = median_per_call(|| {
            let _ = std::hint::black_box(none.would_decide(tool, args));
        });
        let admit_fifty = median_per_call(|| {
            let _ = std::hint::black_box(fifty.would_decide(tool, args));
        });
        println!(
            "{label:<44} rules decide {:>7.2} µs   admission {:>7.2} µs → {:>7.2} µs (+{:.2} µs)",
            micros(decide),
            micros(admit_none),
            micros(admit_fifty),
            micros(admit_fifty.saturating_sub(admit_none)),
        );
    }
}

/// A dispatcher over a config with `rules` (its first admission, which
/// builds the tools' argument checks, made here).
fn dispatcher(workspace: &Path, cache: &Path, rules: &str) -> Dispatcher {
    let file = workspace.join(format!("toolcell-{}.toml", rules.len()));
    let text = format!(
        "[tools.run_command]\nprocess = [\"git\"]\n[tools.web_fetch]\nnetwork = [\"docs.rs\"]\n{rules}"
    );
    std::fs::write(&file, &text).unwrap();
    let config = WorkspaceConfig::parse(&file, &text).unwrap();
    let registry = Registry::load(None, &workspace.join(".toolcell/tools"));
    let options = SandboxOptions {
        cache_dir: Some(cache.to_path_buf()),
        allocation: Allocation::OnDemand,
        ready_ahead: false,
        leave_used_cells_to_exit: false,
        clock: EpochClock::Ticking,
    };
    let dispatcher = Dispatcher::new(config, registry, options).unwrap();
    for tool in ["write_file", "read_file", "run_command", "web_fetch"] {
        let _ = dispatcher.would_decide(tool, &json!({}));
    }
    dispatcher
}

/// Fifty rules of every kind; the one that matches writes under notes/ last.
fn rules_text() -> String {
    let mut text = String::new();
    let rule = |body: String| format!("[[rule]]\n{body}\n");
    for i in 0..(RULES - 1) {
        text.push_str(&rule(match i % 4 {
            0 => format!("tool = \"*\"\npath = \"private{i}/**\"\ndecision = \"deny\""),
            1 => format!(
                "tool = \"run_command\"\ncommand = [\"tool{i}\", \"sub\"]\ndecision = \"ask\""
            ),
            2 => format!("tool = \"web_fetch\"\nhost = \"*.site{i}.example\"\ndecision = \"ask\""),
            _ => format!(
                "tool = \"*\"\npointer = \"/query\"\nmatches = \"*secret{i}*\"\ndecision = \"deny\""
            ),
        }));
    }
    text.push_str(&rule(
        "tool = \"write_file\"\npath = \"notes/**\"\ndecision = \"auto\"".into(),
    ));
    text
}

/// The median over [`ROUNDS`] of the time per call of `call`.
fn median_per_call(mut call: impl FnMut()) -> Duration {
    let mut rounds: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..CALLS {
                call();
            }
            started.elapsed() / CALLS as u32
        })
        .collect();
    rounds.sort();
    rounds[ROUNDS / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}
