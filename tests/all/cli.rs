//! The `toolcell tools` command line: listing, showing, calling, approvals,
//! installing and removing, exit codes and error messages.

use crate::harness::Workspace;
use serde_json::json;

const BUILT_IN: [&str; 10] = [
    "create_directory",
    "delete_path",
    "list_directory",
    "move_path",
    "read_file",
    "replace_in_file",
    "run_command",
    "search_files",
    "web_fetch",
    "write_file",
];

#[test]
fn list_shows_the_built_in_tools() {
    let ws = Workspace::new();
    let run = ws.run(&["tools", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(lines[0].starts_with("NAME"), "{run:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("read_file") && l.contains("built-in") && l.contains("auto")),
        "{run:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("list_directory")),
        "{run:?}"
    );

    let run = ws.run(&["tools", "list", "--json"]);
    let tools = run.json();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, BUILT_IN);
    let read_file = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(read_file["capabilities"]["fs"], "read");
    // Every parameter of every built-in tool is described for the model.
    for tool in tools.as_array().unwrap() {
        for (name, schema) in tool["parameters"]["properties"].as_object().unwrap() {
            assert!(
                schema["description"].as_str().is_some_and(|d| d.len() > 10),
                "{}.{name} has no description",
                tool["name"]
            );
        }
    }
}

#[test]
fn show_gives_schema_capabilities_approval_and_limits() {
    let ws = Workspace::new();
    let run = ws.run(&["tools", "show", "read_file"]);
    assert_eq!(run.code, 0, "{run:?}");
    for needle in [
        "read_file 0.1.0 (built-in)",
        "approval:    auto (the tool's default)",
        "file system: asks read",
        "read-only",
        "timeout 10000 ms",
        "\"start_line\"",
    ] {
        assert!(
            run.stdout.contains(needle),
            "missing {needle:?} in\n{}",
            run.stdout
        );
    }
    ws.write(
        "toolcell.toml",
        "[tools.read_file]\napproval = \"ask\"\ntimeout_ms = 1234\n",
    );
    let shown = ws.run(&["tools", "show", "read_file", "--json"]).json();
    assert_eq!(shown["approval"], "ask");
    assert_eq!(shown["limits"]["timeout_ms"], 1234);
    // A name that would forge a line of its own, or clear the screen, is
    // shown on its one line with its control characters visible.
    let forged = ws.run(&[
        "tools",
        "call",
        "x\n  fix: run rm -rf\u{1b}[2J",
        "--args",
        "{}",
    ]);
    assert_eq!(forged.code, 1, "{forged:?}");
    assert!(
        !forged.stderr.contains("\n  fix: run rm") && !forged.stderr.contains('\u{1b}'),
        "{forged:?}"
    );
    assert!(
        forged.stderr.contains("there is no tool named `x"),
        "{forged:?}"
    );
    let run = ws.run(&["tools", "show", "nope"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!(
            "there is no tool named `nope`; the tools are: {}",
            BUILT_IN.join(", ")
        )),
        "{run:?}"
    );
}

#[test]
fn read_file_and_list_directory_work() {
    let ws = Workspace::new();
    ws.write("notes/todo.md", "one\ntwo\nthree\n");
    ws.write("notes/.hidden", "h");
    let run = ws.run(&[
        "tools",
        "call",
        "read_file",
        "--args",
        r#"{"path": "notes/todo.md", "start_line": 2, "end_line": 2}"#,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.json();
    assert_eq!(result["content"], "two\n");
    assert_eq!(result["total_lines"], 3);
    assert_eq!(result["path"], "notes/todo.md");

    let (code, envelope) = ws.call("list_directory", json!({"path": ".", "recursive": true}));
    assert_eq!(code, 0, "{envelope}");
    let names: Vec<&str> = envelope["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["notes", "notes/todo.md"]);
    assert_eq!(envelope["result"]["hidden_skipped"], 1);

    std::fs::write(ws.root.join("blob.bin"), [0u8, 159, 146, 150]).unwrap();
    let (_, message) = ws.call_refused("read_file", json!({"path": "blob.bin"}));
    assert!(message.contains("not UTF-8 text (4 bytes"), "{message}");
    let (kind, _) = ws.call_refused("read_file", json!({"path": "missing.md"}));
    assert_eq!(kind, "not-found");
    // No host path in any result or error.
    assert!(
        !envelope.to_string().contains(ws.root.to_str().unwrap()),
        "{envelope}"
    );
}

#[test]
fn bad_arguments_name_the_field() {
    let ws = Workspace::new();
    let run = ws.run(&["tools", "call", "read_file", "--args", r#"{"path": 5}"#]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.contains("the arguments do not fit the schema of `read_file`: at `/path`: 5 is not of type \"string\""), "{run:?}");
    let (kind, message) = ws.call_refused("read_file", json!({"path": "a", "bogus": true}));
    assert_eq!(kind, "invalid-args");
    assert!(message.contains("bogus"), "{message}");
    let (_, message) = ws.call_refused("read_file", json!({}));
    assert!(
        message.contains("\"path\" is a required property"),
        "{message}"
    );

    let run = ws.run(&["tools", "call", "read_file", "--args", "{path: x}"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("--args is not valid JSON"), "{run:?}");
    let run = ws.run(&["tools", "call", "no_such_tool"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!(
            "there is no tool named `no_such_tool`; the tools are: {}",
            BUILT_IN.join(", ")
        )),
        "{run:?}"
    );
}

#[test]
fn approval_is_asked_and_policy_is_honoured() {
    let ws = Workspace::new();
    ws.install_probe();
    let args = r#"{"action": "write", "path": "approved.txt", "content": "x"}"#;
    // `probe` mutates: approval needed; no terminal and no --yes means no.
    let run = ws.run(&["tools", "call", "probe", "--args", args]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        run.stderr
            .contains("needs approval and there is no terminal to ask on: pass --yes"),
        "{run:?}"
    );
    assert!(!ws.root.join("approved.txt").exists());

    let run = ws.run(&["tools", "call", "probe", "--yes", "--args", args]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(ws.root.join("approved.txt").exists());

    ws.write("toolcell.toml", "[tools.probe]\napproval = \"deny\"\n");
    let run = ws.run(&[
        "tools",
        "call",
        "probe",
        "--yes",
        "--args",
        r#"{"action": "write", "path": "denied.txt"}"#,
    ]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stderr.contains("denies this tool"), "{run:?}");
    assert!(!ws.root.join("denied.txt").exists());

    ws.write("toolcell.toml", "[tools.probe]\nenabled = false\n");
    let run = ws.run(&[
        "tools",
        "call",
        "probe",
        "--yes",
        "--args",
        r#"{"action": "noop"}"#,
    ]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stderr.contains("`probe` is disabled"), "{run:?}");
    assert!(ws.run(&["tools", "list"]).stdout.contains("disabled"));

    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");
    let run = ws.run(&["tools", "call", "probe", "--args", r#"{"action": "noop"}"#]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn a_result_a_tree_cannot_hold_is_printed_as_written_and_refused_to_a_script() {
    let ws = Workspace::new();
    ws.install_probe();
    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");
    let args = r#"{"action": "raw", "text": "{\"n\":1e400}"}"#;
    let run = ws.run(&["tools", "call", "probe", "--args", args]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.trim(), "{\n  \"n\": 1e400\n}", "{run:?}");
    // A script gets values, and this one has none: an error naming the
    // tool and why, not a silent `()`.
    ws.write(
        "w.rhai",
        "let r = tool(\"probe\", #{ action: \"raw\", text: `{\"n\":1e400}` });\nprint(r);\n",
    );
    let run = ws.run(&["run", "w.rhai"]);
    assert_ne!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("the result of `probe` is JSON a script cannot hold"),
        "{run:?}"
    );
}

#[test]
fn add_and_remove_an_out_of_tree_tool() {
    let ws = Workspace::new();
    ws.install_probe();
    let list = ws.run(&["tools", "list"]);
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with("probe") && l.contains("workspace") && l.contains("ask")),
        "{list:?}"
    );
    let run = ws.run(&["tools", "remove", "probe"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!ws.run(&["tools", "list"]).stdout.contains("probe"));
    let run = ws.run(&["tools", "remove", "read_file"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("is built in and cannot be removed"),
        "{run:?}"
    );

    // Installed for the user: seen from any workspace.
    let probe = crate::fixture::probe();
    let run = ws.run(&[
        "tools",
        "add",
        "--user",
        "--yes",
        probe.folder.join("tool.toml").to_str().unwrap(),
        probe.wasm.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(ws.data.join("tools/probe/tool.wasm").is_file());
    assert!(
        ws.run(&["tools", "list"])
            .stdout
            .lines()
            .any(|l| l.starts_with("probe") && l.contains("user"))
    );
}

#[test]
fn a_broken_installed_tool_is_reported_and_the_rest_work() {
    let ws = Workspace::new();
    ws.write(".toolcell/tools/broken/tool.toml", "name = \"broken\"\n");
    let run = ws.run(&["tools", "list"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("warning: workspace tool")
            && run.stderr.contains("missing field `version`"),
        "{run:?}"
    );
    assert!(run.stdout.contains("read_file"));
}

#[test]
fn config_errors_name_the_file_and_line() {
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        "[[roots]]\npath = \".\"\naccess = \"readonly\"\n",
    );
    let run = ws.run(&["tools", "list"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("toolcell.toml:3:10"), "{run:?}");
    assert!(
        run.stderr
            .contains("unknown variant `readonly`, expected `read` or `write`"),
        "{run:?}"
    );

    // Found from a subfolder, and given explicitly.
    ws.write("toolcell.toml", "[tools.read_file]\nenabled = false\n");
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    let output = ws
        .command(&["tools", "list"])
        .current_dir(ws.root.join("sub"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stdout).contains("disabled"));
    let run = ws.run(&["--config", "missing.toml", "tools", "list"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("cannot read the config"), "{run:?}");
}

#[test]
fn usage_errors_and_help() {
    let ws = Workspace::new();
    assert_eq!(ws.run(&["--help"]).code, 0);
    assert_eq!(ws.run(&["tools", "call", "--help"]).code, 0);
    let run = ws.run(&["tools", "frobnicate"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn read_file_gives_every_text_as_it_is_whatever_it_must_escape_and_however_it_is_reached() {
    let ws = Workspace::new();
    // Every byte JSON escapes (NUL aside: it makes a file binary), at each
    // place in a block of sixteen, between runs of plain and multi-byte text.
    let mut text = String::new();
    for byte in (1u8..0x20).chain([b'"', b'\\', 0x7f]) {
        for run in 0..17 {
            text.push_str(&"aé"[..if run % 2 == 0 { 1 } else { 3 }].repeat(run));
            text.push(byte as char);
        }
        text.push('\n');
    }
    ws.write("escapes.txt", &text);
    let r = ws.call_ok(
        "read_file",
        json!({"path": "escapes.txt", "start_line": 1, "end_line": 100}),
    );
    assert_eq!(r["content"].as_str(), Some(text.as_str()));
    assert_eq!(r["size"].as_u64(), Some(text.len() as u64));

    // Through a link inside the workspace, as before.
    std::os::unix::fs::symlink("escapes.txt", ws.root.join("linked.txt")).unwrap();
    let r = ws.call_ok(
        "read_file",
        json!({"path": "linked.txt", "start_line": 1, "end_line": 100}),
    );
    assert_eq!(r["content"].as_str(), Some(text.as_str()));
    // A link that leads out of the workspace is not followed.
    std::os::unix::fs::symlink(&ws.outer, ws.root.join("out")).unwrap();
    std::fs::write(ws.outer.join("secret.txt"), "kept beyond the roots").unwrap();
    let (kind, message) = ws.call_refused("read_file", json!({"path": "out/secret.txt"}));
    assert_eq!(kind, "denied", "{message}");
    assert!(!message.contains("kept beyond"), "{message}");
    // A secret is refused, and says so.
    ws.write(".env", "TOKEN=1\n");
    let (kind, message) = ws.call_refused("read_file", json!({"path": ".env"}));
    assert_eq!(kind, "denied", "{message}");
    // A whole read past its limit names the limit and the way round it.
    ws.write("big.txt", &"x".repeat(1024 * 1024 + 1));
    let (kind, message) = ws.call_refused("read_file", json!({"path": "big.txt"}));
    assert_eq!(kind, "denied", "{message}");
    assert!(
        message.contains("give start_line and end_line"),
        "{message}"
    );
}

#[test]
fn a_large_file_whose_escapes_outgrow_its_buffer_reads_back_whole() {
    // The cell writes a result over the file's own buffer, with room for a
    // line break's escape every 40 bytes or so; control characters escape
    // to six bytes each, so this text moves on through its buffer again
    // and again as it is escaped. Quotes, tabs, CRLF and characters past
    // ASCII between them; past the size where buffers get their room.
    let ws = Workspace::new();
    let text: String = (0..6000)
        .map(|i| match i % 4 {
            0 => (1..31u8).map(char::from).collect::<String>() + "\n",
            1 => format!("\t\"quoted\" \\ path é ✓ {i}\r\n"),
            2 => "x".repeat(i % 190) + "\n",
            _ => "\u{1}".repeat(60 + i % 80) + "\n",
        })
        .collect();
    assert!(text.len() > 300 << 10, "{} bytes", text.len());
    ws.write("escapes.txt", &text);
    let lines = text.matches('\n').count();
    let r = ws.call_ok(
        "read_file",
        json!({"path": "escapes.txt", "start_line": 1, "end_line": lines}),
    );
    assert_eq!(r["content"].as_str(), Some(text.as_str()));
    assert_eq!(r["total_lines"].as_u64(), Some(lines as u64));
    // A part from the middle, over the same buffer.
    let r = ws.call_ok(
        "read_file",
        json!({"path": "escapes.txt", "start_line": 3001, "end_line": 3004}),
    );
    let part: String = text.split_inclusive('\n').skip(3000).take(4).collect();
    assert_eq!(r["content"].as_str(), Some(part.as_str()));
}

#[test]
fn read_file_tells_text_from_binary_and_counts_lines_wherever_the_bytes_fall() {
    // The cell looks at a file sixty-four bytes a step (four vectors of
    // sixteen) and sums its counts every 63 steps, the last bytes one by
    // one: a NUL, a byte that is not UTF-8 or one that is not ASCII, and
    // newlines, at each edge of those.
    let ws = Workspace::new();
    let size = 64 * 63 * 2 + 37;
    let places = [
        0,
        15,
        16,
        17,
        63,
        64,
        64 * 63 - 1,
        64 * 63,
        64 * 63 * 2,
        size - 1,
    ];
    for at in places {
        let mut bytes = vec![b'a'; size];
        bytes[at] = 0;
        std::fs::write(ws.root.join("nul.txt"), &bytes).unwrap();
        let (kind, message) = ws.call_refused("read_file", json!({"path": "nul.txt"}));
        assert_eq!(kind, "denied", "NUL at {at}: {message}");
        assert!(message.contains("binary content"), "NUL at {at}: {message}");
        bytes[at] = 0xff;
        std::fs::write(ws.root.join("high.txt"), &bytes).unwrap();
        let (kind, message) = ws.call_refused("read_file", json!({"path": "high.txt"}));
        assert_eq!(kind, "denied", "0xff at {at}: {message}");
        // Two bytes of one character, as UTF-8 writes `é`.
        let mut text = String::from_utf8(vec![b'a'; size - 1]).unwrap();
        text.insert(at.min(size - 2), 'é');
        ws.write("accent.txt", &text);
        let r = ws.call_ok(
            "read_file",
            json!({"path": "accent.txt", "start_line": 1, "end_line": 9}),
        );
        assert_eq!(r["content"].as_str(), Some(text.as_str()), "é at {at}");
    }
    // Nothing but newlines: every lane's count at its most, then more.
    for lines in [1, 63, 64, 64 * 63, 64 * 63 + 1, 64 * 64, 64 * 63 * 3 + 5] {
        ws.write("lines.txt", &"\n".repeat(lines));
        let r = ws.call_ok("read_file", json!({"path": "lines.txt", "start_line": 1}));
        assert_eq!(
            r["total_lines"].as_u64(),
            Some(lines as u64),
            "{lines} lines"
        );
        ws.write("lines.txt", &("x\n".repeat(lines) + "last"));
        let r = ws.call_ok("read_file", json!({"path": "lines.txt", "start_line": 1}));
        assert_eq!(
            r["total_lines"].as_u64(),
            Some(lines as u64 + 1),
            "{lines} + 1"
        );
    }
}

#[test]
fn read_file_gives_each_range_of_lines_as_they_are_and_refuses_binary_bytes_wherever_they_are() {
    // The cell writes the lines asked for as it looks at them, and looks at
    // the rest of the file around them: each range's lines and counts as
    // the lines of the text give them, with newlines at every place in a
    // block of sixty-four, and a NUL or a byte that is not UTF-8 refused
    // before, in and after the lines asked for.
    let ws = Workspace::new();
    let mut text: String = (0..300)
        .map(|i| match i % 4 {
            0 => "x".repeat(i % 130) + "\n",
            1 => format!("\t\"{i}\" é ✓\r\n"),
            2 => "\u{1}".repeat(i % 70) + "\n",
            _ => "plain line ".repeat(i % 9) + "\n",
        })
        .collect();
    text.push_str("an unended last line");
    ws.write("lines.txt", &text);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let total = lines.len();
    for start in [1, 2, 63, 150, total - 1, total] {
        for end in [
            None,
            Some(start),
            Some(start + 1),
            Some(start + 64),
            Some(total + 10),
        ] {
            let mut args = json!({"path": "lines.txt", "start_line": start});
            if let Some(end) = end {
                args["end_line"] = json!(end);
            }
            let r = ws.call_ok("read_file", args);
            let last = end.unwrap_or(total).min(total);
            let expected = lines[start - 1..last].concat();
            let label = format!("lines {start} to {end:?}");
            assert_eq!(r["content"].as_str(), Some(expected.as_str()), "{label}");
            assert_eq!(
                [
                    &r["total_lines"],
                    &r["start_line"],
                    &r["end_line"],
                    &r["truncated"]
                ],
                [&json!(total), &json!(start), &json!(last), &json!(false)],
                "{label}"
            );
        }
    }
    let start_of = |line: usize| lines[..line - 1].concat().len();
    let places = [
        0,
        start_of(100) - 1,
        start_of(100),
        start_of(101) - 2,
        start_of(200) + 5,
        text.len() - 1,
    ];
    for at in places {
        for bad in [0u8, 0xff] {
            let mut bytes = text.clone().into_bytes();
            bytes[at] = bad;
            std::fs::write(ws.root.join("bad.txt"), &bytes).unwrap();
            for (start, end) in [(1, None), (100, Some(100)), (150, Some(160)), (1, Some(99))] {
                let mut args = json!({"path": "bad.txt", "start_line": start});
                if let Some(end) = end {
                    args["end_line"] = json!(end);
                }
                let (kind, message) = ws.call_refused("read_file", args);
                let label = format!("{bad:#x} at {at}, lines {start} to {end:?}");
                assert_eq!(kind, "denied", "{label}: {message}");
                assert!(message.contains("binary content"), "{label}: {message}");
            }
        }
    }
}

#[test]
fn read_file_ranges_and_truncation() {
    let ws = Workspace::new();
    ws.write("no_newline.txt", "one\ntwo\nthree");
    let many: String = (1..=700).map(|n| format!("line {n}\n")).collect();
    ws.write("many.txt", &many);
    ws.write("empty.txt", "");

    let read = |args: serde_json::Value| ws.call_ok("read_file", args);
    let r = read(json!({"path": "no_newline.txt"}));
    assert_eq!(
        (
            r["content"].as_str(),
            r["total_lines"].as_u64(),
            r["truncated"].as_bool()
        ),
        (Some("one\ntwo\nthree"), Some(3), Some(false))
    );
    let r = read(json!({"path": "no_newline.txt", "start_line": 3}));
    assert_eq!(r["content"], "three");
    let r = read(json!({"path": "no_newline.txt", "start_line": 1, "end_line": 2}));
    assert_eq!(r["content"], "one\ntwo\n");
    let r = read(json!({"path": "no_newline.txt", "start_line": 2, "end_line": 99}));
    assert_eq!(
        (r["content"].as_str(), r["end_line"].as_u64()),
        (Some("two\nthree"), Some(3))
    );

    // Without a range at most 500 lines, and it says so.
    let r = read(json!({"path": "many.txt"}));
    assert_eq!(
        (
            r["total_lines"].as_u64(),
            r["end_line"].as_u64(),
            r["truncated"].as_bool()
        ),
        (Some(700), Some(500), Some(true))
    );
    assert!(r["content"].as_str().unwrap().ends_with("line 500\n"));
    let r = read(json!({"path": "many.txt", "start_line": 650}));
    assert_eq!(
        (
            r["content"].as_str().unwrap().lines().count(),
            r["truncated"].as_bool()
        ),
        (51, Some(false))
    );

    let r = read(json!({"path": "empty.txt"}));
    assert_eq!(
        (r["content"].as_str(), r["total_lines"].as_u64()),
        (Some(""), Some(0))
    );

    let (_, message) = ws.call_refused("read_file", json!({"path": "many.txt", "start_line": 701}));
    assert!(
        message.contains("past the end: `many.txt` has 700 lines"),
        "{message}"
    );
    let (kind, _) = ws.call_refused(
        "read_file",
        json!({"path": "many.txt", "start_line": 5, "end_line": 4}),
    );
    assert_eq!(kind, "invalid-args");
    // Over 1 MiB a whole read is refused; a range works.
    let big: String = (0..40_000)
        .map(|n| format!("a long enough line number {n}\n"))
        .collect();
    ws.write("big.txt", &big);
    let (_, message) = ws.call_refused("read_file", json!({"path": "big.txt"}));
    assert!(
        message
            .contains("over the 1048576-byte limit for a whole read: give start_line and end_line"),
        "{message}"
    );
    let r = read(json!({"path": "big.txt", "start_line": 29_999, "end_line": 30_000}));
    assert_eq!(
        r["content"],
        "a long enough line number 29998\na long enough line number 29999\n"
    );
    let (_, message) = ws.call_refused("read_file", json!({"path": "."}));
    assert!(message.contains("is a directory"), "{message}");
}
