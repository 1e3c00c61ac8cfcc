//! External MCP servers as tools (`[[mcp_server]]`), against real peers:
//! the reference servers `@modelcontextprotocol/server-filesystem` and
//! `server-everything` from npm (installed and cached by
//! `tests/support/mcp-peers.sh`), and a server that misbehaves on purpose
//! (`tests/fixtures/mcp/misbehaving.mjs`).

use crate::agent::{chat, chat_on_terminal, run_record, tool_results, workspace};
use crate::harness::{Run, Workspace};
use crate::model_server::{ModelServer, ollama};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The entry script of an npm peer, such as `server-filesystem`.
pub fn peer(package: &str) -> String {
    let path = crate::mcp_peers::node_modules()
        .join("@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(path.is_file(), "{} is missing", path.display());
    path.display().to_string()
}

/// A `[[mcp_server]]` table running `node SCRIPT ARGS…`.
fn server_table(name: &str, script: &str, args: &[&str], extra: &str) -> String {
    let args: Vec<String> = std::iter::once(script)
        .chain(args.iter().copied())
        .map(|a| format!("{a:?}"))
        .collect();
    format!(
        "\n[[mcp_server]]\nname = \"{name}\"\ncommand = \"node\"\nargs = [{}]\n{extra}\n",
        args.join(", ")
    )
}

/// Runs `toolcell ARGS`, failing the test if it takes longer than `limit`:
/// a misbehaving server must never hang a run.
fn run_within(ws: &Workspace, args: &[&str], limit: Duration) -> Run {
    let mut child = ws
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let output = child.wait_with_output().unwrap();
            panic!(
                "toolcell {args:?} still ran after {limit:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A workflow calling the corners of `server-everything` (as `ev`), with
/// a call timeout of 2 s: what it returns is checked by
/// [`assert_everything_corners`].
pub const EVERYTHING_CORNERS: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/mcp/everything-corners.rhai"
));

/// What [`EVERYTHING_CORNERS`] returns, whichever way the server is
/// reached: results as the model sees them, the slow call stopped at its
/// timeout, the server usable again after it, bad arguments refused.
pub fn assert_everything_corners(out: &Value) {
    assert_eq!(out["sum"], "The sum of 2 and 3 is 5.");
    let image = out["image"].as_str().unwrap();
    assert!(
        image.contains("[image image/png,") && image.contains("not shown]"),
        "{image}"
    );
    assert!(image.len() < 500, "the base64 is not inlined: {image}");
    assert!(
        out["structured"]["temperature"].is_number(),
        "structured content is kept as JSON: {out}"
    );
    let slow = out["slow"].as_str().unwrap();
    assert!(
        slow.starts_with("timeout: `ev__trigger-long-running-operation` timed out after 2.0 s"),
        "{slow}"
    );
    let slow_ms = out["slow_ms"].as_i64().unwrap();
    assert!(
        (2000..10_000).contains(&slow_ms),
        "stopped at its timeout: {slow_ms} ms"
    );
    assert_eq!(
        out["after"], "Echo: back",
        "started again after the timeout"
    );
    assert_eq!(out["bad"], "invalid-args");
}

#[test]
fn the_filesystem_server_lends_its_tools_and_the_agent_reads_through_it_with_approval() {
    let fs = peer("server-filesystem");
    let read = |id: &str| {
        ollama::reply(vec![ollama::calls(&[(
            id,
            "fs__read_text_file",
            json!({"path": "todo.md"}),
        )])])
    };
    let server = ModelServer::start(vec![
        read("r1"),
        ollama::answer("I may not read it."),
        read("r2"),
        ollama::answer("The list says: buy milk."),
    ]);
    let ws = workspace(
        &server,
        "ollama",
        // Offer every tool: this test is about the server, not the filter.
        &format!(
            "[agent]\nfilter_tools_above = 100\n{}",
            server_table("fs", &fs, &["shared"], "")
        ),
    );
    ws.write("shared/todo.md", "- buy milk\n");
    ws.write("secret.txt", "outside the server's folder\n");

    // Listed as fs__…, from their server, asking for approval.
    let list = ws.run(&["tools", "list", "--json"]);
    assert_eq!(list.code, 0, "{list:?}");
    let tools = list.json();
    let read_tool = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "fs__read_text_file")
        .unwrap_or_else(|| panic!("no fs__read_text_file in {tools}"));
    assert_eq!(read_tool["source"], "mcp:fs");
    assert_eq!(read_tool["approval"], "ask");
    assert_eq!(
        read_tool["parameters"]["properties"]["path"]["type"],
        "string"
    );
    let table = ws.run(&["tools", "list"]);
    assert!(
        table
            .stdout
            .lines()
            .any(|l| l.starts_with("fs__write_file") && l.contains("mcp:fs")),
        "{table:?}"
    );

    // Without a terminal, and with nothing granted: denied in band.
    let task = "Read the text file todo.md and tell me what is on it";
    let run = chat(&ws, &[task]);
    assert_eq!(run.code, 0, "{run:?}");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].2.contains("needs approval")
            && results[0].2.contains("--approve fs__read_text_file"),
        "{results:?}"
    );
    // The offer had the server's schema.
    let offered = server.requests()[0].body["tools"].to_string();
    assert!(offered.contains("\"fs__read_text_file\""), "{offered}");

    // At a terminal: the prompt says where the tool runs and what that
    // server is confined to (read-only roots by default); approved, it reads.
    let (code, shown) = chat_on_terminal(&ws, &["chat", task], "y\n");
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("MCP server `fs`")
            && shown.contains("confined: writes only its private temporary folder; no network"),
        "{shown}"
    );
    let requests = server.requests();
    let results = tool_results(&requests[3]);
    assert_eq!(results[0].0, "r2");
    assert!(results[0].2.contains("- buy milk"), "{results:?}");
    let record = run_record(&ws, "2");
    assert_eq!(record["tool_calls"][0]["decision"], "approved");
    assert_eq!(record["tool_calls"][0]["status"], "done");

    // The server's own refusals and errors come back as errors.
    let ws_call = |args: Value| ws.call("fs__read_text_file", args);
    let (code, outside) = ws_call(json!({"path": "../secret.txt"}));
    assert_eq!(code, 3, "{outside}");
    assert!(
        outside["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outside allowed directories"),
        "{outside}"
    );
    let (code, missing) = ws_call(json!({"path": "nope.md"}));
    assert_eq!(code, 3, "{missing}");
    assert_eq!(missing["error"]["kind"], "failed", "{missing}");
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ENOENT"),
        "{missing}"
    );
    // Arguments are checked against the server's schema before it sees them.
    let (code, bad) = ws_call(json!({"path": 7}));
    assert_eq!(code, 3, "{bad}");
    assert_eq!(bad["error"]["kind"], "invalid-args", "{bad}");
}

#[test]
fn large_results_pass_up_to_the_output_limit_and_are_refused_beyond_it() {
    let fs = peer("server-filesystem");
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &format!(
            "{}\n[tools.fs__read_text_file]\nmax_output_bytes = 1000000\n",
            server_table("fs", &fs, &["."], "approval = \"auto\"")
        ),
    );
    let line = "0123456789abcdef".repeat(4) + "\n";
    ws.write("big.txt", &line.repeat(10_000)); // 650 KB
    ws.write("huge.txt", &line.repeat(20_000)); // 1.3 MB
    let big = ws.call_ok("fs__read_text_file", json!({"path": "big.txt"}));
    // The server gives structured content: kept as JSON.
    assert_eq!(
        big["content"].as_str().unwrap().len(),
        line.len() * 10_000,
        "{}",
        &big.to_string()[..200]
    );
    let (kind, message) = ws.call_refused("fs__read_text_file", json!({"path": "huge.txt"}));
    assert_eq!(kind, "output-too-large", "{message}");
    assert!(
        message.contains("over its output limit of 1000000 bytes"),
        "{message}"
    );
}

#[test]
fn the_everything_server_covers_results_errors_slow_tools_and_a_scrubbed_environment() {
    let everything = peer("server-everything");
    let mut ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &server_table(
            "ev",
            &everything,
            &["stdio"],
            "approval = \"auto\"\ntimeout = \"2s\"\nenv = { GREETING = \"hello\" }",
        ),
    );
    ws.env("TOOLCELL_TEST_SECRET", "s3cret");
    ws.write("corners.rhai", EVERYTHING_CORNERS);
    let run = run_within(
        &ws,
        &["run", "corners.rhai", "--json"],
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let out = &run.json()["result"];
    assert_everything_corners(out);
    let env = out["env"].as_str().unwrap();
    assert!(env.contains("\"GREETING\": \"hello\""), "{env}");
    assert!(env.contains("\"PATH\""), "{env}");
    assert!(!env.contains("TOOLCELL_TEST_SECRET"), "scrubbed: {env}");
}

#[test]
fn servers_that_crash_print_garbage_or_never_answer_give_clear_errors_and_no_hang() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mcp/misbehaving.mjs"
    );
    let ws = Workspace::new();
    let starts = |mode: &str| ws.marks().join(format!("starts-{mode}"));
    let table = |mode: &str, extra: &str| {
        server_table(
            mode,
            script,
            &[mode, starts(mode).to_str().unwrap()],
            &format!(
                "approval = \"auto\"\ntimeout = \"2s\"\nstartup_timeout = \"3s\"\n{}{extra}",
                ws.marks_grant()
            ),
        )
    };
    ws.write(
        "toolcell.toml",
        &[
            table("exit-mid-call", ""),
            table("garbage", ""),
            table("silent", ""),
            table("hang", ""),
        ]
        .concat(),
    );
    ws.write(
        "misbehave.rhai",
        r#"
let out = #{};
try { tool("exit-mid-call__crash", #{}); } catch (e) { out.crash = `${e.kind}: ${e.message}`; }
out.after_crash = tool("exit-mid-call__answer", #{text: "again"});
out
"#,
    );
    // The garbage server's stray lines are dropped, its tools still listed,
    // and the call's garbage answer ends at the timeout with what it printed.
    ws.write(
        "garbage.rhai",
        r#"
let out = #{};
try { tool("garbage__answer", #{text: "x"}); } catch (e) { out.garbage = `${e.kind}: ${e.message}`; }
try { tool("hang__hang", #{}); } catch (e) { out.hang = `${e.kind}: ${e.message}`; }
out.after_hang = tool("hang__answer", #{text: "still here"});
try { tool("silent__answer", #{}); } catch (e) { out.silent = e.kind; }
out
"#,
    );

    let run = run_within(
        &ws,
        &["run", "garbage.rhai", "--json"],
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("MCP server `silent`")
            && run
                .stderr
                .contains("did not answer `initialize` within 3.0 s")
            && run
                .stderr
                .contains("misbehaving server started in mode silent"),
        "{run:?}"
    );
    let out = &run.json()["result"];
    let garbage = out["garbage"].as_str().unwrap();
    assert!(
        garbage.starts_with("timeout: `garbage__answer` timed out after 2.0 s")
            && garbage.contains("not MCP messages, the last: `<html>502 Bad Gateway</html>`"),
        "{garbage}"
    );
    let hang = out["hang"].as_str().unwrap();
    assert!(
        hang.starts_with("timeout: `hang__hang` timed out after 2.0 s")
            && hang.contains("it starts again on the next call"),
        "{hang}"
    );
    assert_eq!(out["after_hang"], "answer: still here");
    assert_eq!(
        std::fs::read_to_string(starts("hang"))
            .unwrap()
            .lines()
            .count(),
        2,
        "the hung server was restarted once, on the next call"
    );
    assert_eq!(out["silent"], "unknown-tool", "{out}");

    // A server that exits mid-call: the exit status and its last words.
    std::fs::remove_file(starts("exit-mid-call")).unwrap();
    let run = run_within(
        &ws,
        &["run", "misbehave.rhai", "--json"],
        Duration::from_secs(60),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let out = &run.json()["result"];
    let crash = out["crash"].as_str().unwrap();
    assert_eq!(
        crash,
        "server-failed: `exit-mid-call__crash` failed: the MCP server `exit-mid-call` exited during the call (exit status: 3); its stderr ends: misbehaving server started in mode exit-mid-call | about to crash: out of cheese; it starts again on the next call"
    );
    assert_eq!(out["after_crash"], "answer: again");
    assert_eq!(
        std::fs::read_to_string(starts("exit-mid-call"))
            .unwrap()
            .lines()
            .count(),
        2
    );
}

#[test]
fn bad_server_configs_name_the_line_and_a_missing_program_is_reported() {
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        "[[mcp_server]]\nname = \"fs\"\ncommand = \"node\"\n\n[[mcp_server]]\nname = \"fs\"\ncommand = \"x\"\n",
    );
    let run = ws.run(&["tools", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("toolcell.toml:6:8 at key `mcp_server.name`")
            && run.stderr.contains("two MCP servers are named `fs`"),
        "{run:?}"
    );
    ws.write(
        "toolcell.toml",
        "[[mcp_server]]\nname = \"gone\"\ncommand = \"no-such-program-here\"\n",
    );
    let run = ws.run(&["tools", "list"]);
    assert_eq!(run.code, 0, "the other tools are still listed: {run:?}");
    assert!(run.stdout.contains("read_file"), "{run:?}");
    assert!(
        run.stderr.contains("MCP server `gone`")
            && run.stderr.contains("cannot start `no-such-program-here`")
            && run.stderr.contains("fix:"),
        "{run:?}"
    );
    let remove = ws.run(&["tools", "remove", "gone__tool"]);
    assert_eq!(remove.code, 1, "{remove:?}");
    assert!(
        remove.stderr.contains("tool of an MCP server") && remove.stderr.contains("fix:"),
        "{remove:?}"
    );
    // A per-call timeout beyond what a call may take is refused, not clamped.
    ws.write(
        "toolcell.toml",
        "[[mcp_server]]\nname = \"slow\"\ncommand = \"node\"\ntimeout = \"1h\"\n",
    );
    let run = ws.run(&["tools", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("toolcell.toml:4:11 at key `mcp_server.timeout`"),
        "{run:?}"
    );
}
