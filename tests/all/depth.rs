//! No stack overflow from input. Values nested thousands of levels deep,
//! imports that loop, deeply nested source and model arguments `[[[[…`
//! each end in an error that names the limit and the place — never in a
//! stack overflow, which ends the process (and, in the daemon, every
//! schedule with it). Each test runs the real binary on a real input; a
//! process killed by a signal (SIGSEGV for an overflow) shows as exit code
//! -1, so every test asserts the exact exit code first.

use crate::agent::{chat, tool_results, workspace};
use crate::harness::{Run, Workspace};
use crate::model_server::{ModelServer, Reply, ollama, openai};
use crate::schedules::runs_of;
use std::time::{Duration, Instant};

/// Builds `deep`, an array 20,000 levels deep, on lines 1 and 2 (`take`
/// moves instead of copying, so building it takes seconds, not minutes).
/// Before the limits, `json_stringify` of 12,000 levels aborted.
const BUILD_DEEP: &str = "let deep = [];\nfor i in 0..20000 { deep = [deep.take()]; }\n";

/// The part of every depth error that names the limit.
const TOO_DEEP: &str = "arrays and maps nest deeper than 128 levels in";

fn assert_failed_with(run: &Run, needles: &[&str]) {
    assert_eq!(run.code, 1, "{run:?}");
    for needle in needles {
        assert!(run.stderr.contains(needle), "no `{needle}` in: {run:?}");
    }
}

#[test]
fn a_20000_deep_array_given_to_json_stringify_is_a_catchable_error_at_its_line() {
    let ws = Workspace::new();
    ws.write(
        "deep.rhai",
        &format!(
            "{BUILD_DEEP}let kind = \"\";\ntry {{ json_stringify(deep); }} catch (e) {{ kind = e.kind; }}\nprint(kind);\njson_stringify(deep)\n"
        ),
    );
    let run = ws.run(&["run", "deep.rhai"]);
    assert_eq!(run.stdout.trim(), "too-deep", "{run:?}");
    assert_failed_with(
        &run,
        &[
            &format!("{TOO_DEEP} the value passed to json_stringify"),
            "flatten it or pass it in parts",
            "--> deep.rhai:6:1",
        ],
    );
    let runs = ws.run(&["runs", "list", "--json"]).json();
    assert_eq!(runs[0]["status"], "failed", "{runs}");
}

#[test]
fn a_5000_deep_map_never_reaches_a_tool_nor_the_model_nor_the_log() {
    let ws = Workspace::new();
    ws.write(
        "map.rhai",
        "let m = #{};\nfor i in 0..5000 { m = #{a: m.take()}; }\n\
         let kinds = [];\n\
         try { llm_json(\"hi\", m); } catch (e) { kinds.push(e.kind); }\n\
         try { log(\"info\", m); } catch (e) { kinds.push(e.kind); }\n\
         let text = \"\";\nfor i in 0..100000 { text += \"[\"; }\n\
         try { json_parse(text); } catch (e) { kinds.push(e.kind); kinds.push(e.message); }\n\
         print(kinds);\n\
         tool(\"write_file\", #{path: \"out.txt\", content: m})\n",
    );
    let run = ws.run(&["run", "map.rhai", "--yes"]);
    assert!(
        run.stdout.starts_with("[\"too-deep\", \"too-deep\", \"too-deep\", \"the text given to json_parse nests arrays and objects deeper than 127 levels (at its line 1, column 128)"),
        "{run:?}"
    );
    assert_failed_with(
        &run,
        &[
            &format!("{TOO_DEEP} the arguments of `write_file`"),
            "--> map.rhai:10:1",
        ],
    );
    assert!(!ws.root.join("out.txt").exists());
    let record = ws.run(&["runs", "show", "1", "--json"]).json();
    assert_eq!(
        record["tool_calls"].as_array().map(Vec::len),
        Some(0),
        "the call was refused before it was a call: {record}"
    );
}

#[test]
fn a_deep_value_prints_cut_at_the_limit_and_comparing_it_is_an_error() {
    let ws = Workspace::new();
    ws.write(
        "show.rhai",
        &format!("{BUILD_DEEP}print(deep);\nprint(`${{deep}}`.len());\ndeep == deep\n"),
    );
    let run = ws.run(&["run", "show.rhai"]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let cut = format!("{}[…]{}", "[".repeat(128), "]".repeat(128));
    assert_eq!(lines, [cut.as_str(), "259"], "{run:?}");
    assert_failed_with(
        &run,
        &[
            &format!("{TOO_DEEP} one of the values compared with `==`"),
            "--> show.rhai:5:",
        ],
    );
}

#[test]
fn a_workflow_importing_itself_or_a_cycle_of_two_is_an_error_with_the_chain() {
    let ws = Workspace::new();
    ws.write("self.rhai", "import \"self\" as me;\n1\n");
    ws.write("a.rhai", "import \"b\" as b;\nb::f()\n");
    ws.write("b.rhai", "// b\nimport \"a\" as a;\nfn f() { 1 }\n");
    for command in ["run", "check"] {
        let run = ws.run(&[command, "self.rhai"]);
        assert_failed_with(
            &run,
            &["import cycle: self.rhai → self.rhai", "--> self.rhai:1:8"],
        );
        let run = ws.run(&[command, "a.rhai"]);
        assert_failed_with(
            &run,
            &["import cycle: a.rhai → b.rhai → a.rhai", "--> b.rhai:2:8"],
        );
    }
    let run = ws.run(&["run", "a.rhai"]);
    assert!(
        run.stderr.contains("in module `b`, imported at a.rhai:1:8"),
        "{run:?}"
    );

    // A module two others share is no cycle; a chain of 17 is too long.
    ws.write("lib/shared.rhai", "fn one() { 1 }\n");
    ws.write(
        "lib/left.rhai",
        "import \"lib/shared\" as s;\nfn f() { s::one() }\n",
    );
    ws.write(
        "lib/right.rhai",
        "import \"lib/shared\" as s;\nfn f() { s::one() }\n",
    );
    ws.write(
        "diamond.rhai",
        "import \"lib/left\" as l;\nimport \"lib/right\" as r;\nl::f() + r::f()\n",
    );
    let run = ws.run(&["check", "diamond.rhai"]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = ws.run(&["run", "diamond.rhai"]);
    assert_eq!((run.code, run.stdout.trim()), (0, "2"), "{run:?}");
    for i in 0..17 {
        ws.write(
            &format!("chain/m{i}.rhai"),
            &format!("import \"m{}\" as next;\n", i + 1),
        );
    }
    ws.write("chain/m17.rhai", "1\n");
    let run = ws.run(&["run", "chain/m0.rhai"]);
    assert_failed_with(
        &run,
        &["imports nest deeper than 16 levels", "--> m16.rhai:1:8"],
    );
    let run = ws.run(&["check", "chain/m0.rhai"]);
    assert_failed_with(&run, &["imports nest deeper than 16 levels"]);
}

#[test]
fn deeply_nested_source_is_a_syntax_error_naming_the_limit() {
    let ws = Workspace::new();
    let parens = format!("{}1{}\n", "(".repeat(100_000), ")".repeat(100_000));
    ws.write("parens.rhai", &parens);
    ws.write(
        "lists.rhai",
        &format!(
            "let x = 1;\n{}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    );
    // 24 parentheses (two levels each): fine in the script, past the
    // limit inside a function.
    let nested = format!("{}1{}", "(".repeat(24), ")".repeat(24));
    ws.write("top.rhai", &format!("{nested}\n"));
    ws.write("body.rhai", &format!("fn f() {{\n  {nested}\n}}\nf()\n"));
    for command in ["run", "check"] {
        for (file, at) in [
            ("parens.rhai", "parens.rhai:1:"),
            ("lists.rhai", "lists.rhai:2:"),
        ] {
            let run = ws.run(&[command, file]);
            assert_failed_with(
                &run,
                &[
                    "Expression exceeds maximum complexity",
                    "expressions nest at most 64 levels deep (32 inside a function)",
                    at,
                ],
            );
            assert!(
                run.stderr.len() < 2_000,
                "the source line is shown around the caret only: {} bytes",
                run.stderr.len()
            );
        }
        let run = ws.run(&[command, "body.rhai"]);
        assert_failed_with(&run, &["body.rhai:2:"]);
    }
    let run = ws.run(&["run", "top.rhai"]);
    assert_eq!((run.code, run.stdout.trim()), (0, "1"), "{run:?}");
}

#[test]
fn a_model_s_arguments_100000_levels_deep_are_an_error_result_not_a_crash() {
    let deep = "[".repeat(100_000);
    let server = ModelServer::start(vec![
        openai::reply(
            vec![openai::call_whole(0, "c1", "read_file", &deep)],
            "tool_calls",
        ),
        openai::answer("I will not do that again."),
    ]);
    let ws = workspace(&server, "openai", "");
    let run = chat(&ws, &["Read a file"]);
    assert_eq!(run.code, 0, "{run:?}");
    let requests = server.requests();
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0]
            .2
            .contains("recursion limit exceeded at line 1 column 128")
            && results[0].2.contains("The call was not run"),
        "{results:?}"
    );

    // Ollama sends arguments as JSON inside its line: the whole line is
    // too deep to read, and the turn fails with the reason.
    let line = format!(
        "{{\"model\": \"fake\", \"message\": {{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{{\"function\": {{\"name\": \"read_file\", \"arguments\": {{\"path\": {deep}{}}}}}}}]}}, \"done\": false}}\n",
        "]".repeat(100_000)
    );
    let server = ModelServer::start(vec![Reply::stream(
        ollama::CONTENT_TYPE,
        vec![line, ollama::done()],
    )]);
    let ws = workspace(&server, "ollama", "");
    let run = chat(&ws, &["Read a file"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("recursion limit exceeded"), "{run:?}");
}

#[test]
fn tool_arguments_at_the_parser_s_depth_are_checked_and_deeper_ones_refused() {
    let ws = Workspace::new();
    let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    // The deepest arguments JSON allows reach the schema check, which
    // refuses them by the field.
    let args = format!("{{\"path\": {}}}", nested(126));
    let run = ws.run(&["tools", "call", "read_file", "--args", &args, "--json"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert_eq!(run.json()["error"]["kind"], "invalid-args", "{run:?}");
    let args = format!("{{\"path\": {}}}", nested(100_000));
    let file = ws.outer.join("deep.json");
    std::fs::write(&file, args).unwrap();
    let run = ws.run(&[
        "tools",
        "call",
        "read_file",
        "--args-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("recursion limit exceeded"), "{run:?}");
}

/// `toolcell daemon` in the background, killed when dropped.
struct Daemon(std::process::Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn count(runs: &[serde_json::Value], status: &str) -> usize {
    runs.iter().filter(|r| r["status"] == status).count()
}

#[test]
fn the_daemon_outlives_a_schedule_that_nests_too_deep_or_imports_itself() {
    let ws = Workspace::new();
    ws.write("deep.rhai", &format!("{BUILD_DEEP}json_stringify(deep)\n"));
    ws.write("loop.rhai", "import \"loop\" as again;\n1\n");
    ws.write("tick.rhai", "\"ok\"\n");
    let every_second = |name: &str, file: &str| {
        format!("[[schedule]]\nname = \"{name}\"\nworkflow = \"{file}\"\ncron = \"* * * * * *\"\n")
    };
    ws.write(
        "toolcell.toml",
        &[
            every_second("deep", "deep.rhai"),
            every_second("loop", "loop.rhai"),
            every_second("tick", "tick.rhai"),
        ]
        .concat(),
    );
    let mut daemon = Daemon(
        ws.command(&["daemon"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Two bad runs of each, and the healthy schedule still firing after.
    let started = Instant::now();
    let (mut deep, mut looped, mut ticks_then) = (Vec::new(), Vec::new(), None);
    loop {
        assert!(
            daemon.0.try_wait().unwrap().is_none(),
            "the daemon died: {:?}",
            daemon.0.try_wait()
        );
        if count(&deep, "failed") >= 2 && count(&looped, "failed") >= 2 {
            let ticks = count(&runs_of(&ws, "tick"), "succeeded");
            match ticks_then {
                None => ticks_then = Some(ticks),
                Some(then) if ticks >= then + 2 => break,
                Some(_) => {}
            }
        } else {
            deep = runs_of(&ws, "deep");
            looped = runs_of(&ws, "loop");
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "deep: {deep:#?}\nloop: {looped:#?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let error = |runs: &[serde_json::Value]| {
        runs.iter()
            .find(|r| r["status"] == "failed")
            .and_then(|r| r["error"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    let deep_error = error(&deep);
    assert!(
        deep_error.contains(&format!("{TOO_DEEP} the value passed to json_stringify"))
            && deep_error.contains("deep.rhai:3:1"),
        "{deep:#?}"
    );
    let loop_error = error(&looped);
    assert!(
        loop_error.contains("import cycle: loop.rhai → loop.rhai")
            && loop_error.contains("loop.rhai:1:8"),
        "{looped:#?}"
    );
    assert!(
        daemon.0.try_wait().unwrap().is_none(),
        "the daemon is still running"
    );
}

/// A tool's result nested as deep as a result may be (127 levels) prints,
/// alone and inside `--json`'s envelope, which is a level deeper: the
/// envelope is laid out around the result's text, not parsed again.
#[test]
fn a_result_at_the_nesting_limit_prints_alone_and_in_the_json_envelope() {
    let ws = Workspace::new();
    ws.install_probe();
    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");
    // `echo` returns its arguments: an object around 126 arrays.
    let args = format!(
        r#"{{"action":"echo","x":{}1{}}}"#,
        "[".repeat(126),
        "]".repeat(126)
    );
    ws.write("args.json", &args);
    let plain = ws.run(&["tools", "call", "probe", "--args-file", "args.json"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    assert_eq!(plain.stdout.matches('[').count(), 126, "{plain:?}");
    let enveloped = ws.run(&[
        "tools",
        "call",
        "probe",
        "--args-file",
        "args.json",
        "--json",
    ]);
    assert_eq!(enveloped.code, 0, "{enveloped:?}");
    assert!(
        enveloped.stdout.starts_with("{\n  \"duration_ms\": "),
        "{enveloped:?}"
    );
    assert!(
        enveloped.stdout.contains(
            "\n  \"ok\": true,\n  \"result\": {\n    \"action\": \"echo\",\n    \"x\": [\n      [\n"
        ),
        "{enveloped:?}"
    );
    assert_eq!(enveloped.stdout.matches('[').count(), 126, "{enveloped:?}");
    assert!(enveloped.stdout.ends_with("\n  }\n}\n"), "{enveloped:?}");
}
