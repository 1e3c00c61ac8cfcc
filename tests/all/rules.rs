//! Approval rules (`[[rule]]`): calls decided by their arguments, the
//! record of who decided, `toolcell rules check`, and rules that try to
//! reach past what they name.

use crate::harness::{Run, Workspace};
use serde_json::json;

/// The tool calls `toolcell runs export RUN` writes, one JSON line each.
fn exported_calls(ws: &Workspace, run: &str) -> Vec<serde_json::Value> {
    let export = ws.run(&["runs", "export", run]);
    assert_eq!(export.code, 0, "{export:?}");
    export
        .stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|line| line["type"] == "tool_call")
        .collect()
}

/// `toolcell tools call NAME --args ARGS --json` with nobody to ask (no
/// `--yes`, no terminal).
fn call_unattended(ws: &Workspace, name: &str, args: serde_json::Value) -> Run {
    ws.run(&["tools", "call", name, "--args", &args.to_string(), "--json"])
}

fn check(ws: &Workspace, tool: &str, args: serde_json::Value) -> serde_json::Value {
    let run = ws.run(&[
        "rules",
        "check",
        tool,
        "--args",
        &args.to_string(),
        "--json",
    ]);
    assert!(run.code == 0 || run.code == 4, "{run:?}");
    run.json()
}

const NOTES_ARE_FREE: &str = r#"
[[rule]]
name = "notes are free"
tool = "write_file"
path = "notes/**"
decision = "auto"

[[rule]]
tool = "*"
path = "private/**"
decision = "deny"

[tools.run_command]
process = ["echo"]

[[rule]]
tool = "run_command"
command = ["echo", "hello"]
decision = "auto"

[[rule]]
tool = "move_path"
path = ["notes/**", "drafts/**"]
decision = "auto"
"#;

#[test]
fn a_path_rule_lets_writes_under_its_folder_run_unasked_and_no_others() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", NOTES_ARE_FREE);
    for folder in ["notes", "src", "drafts"] {
        std::fs::create_dir_all(ws.root.join(folder)).unwrap();
    }
    std::os::unix::fs::symlink("../src", ws.root.join("notes/out")).unwrap();

    let run = call_unattended(
        &ws,
        "write_file",
        json!({"path": "notes/a.md", "content": "a"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(ws.read("notes/a.md"), "a");

    // Outside the folder, by `..` or through a link into another folder:
    // asked, and with nobody to ask, refused.
    for path in [
        "src/a.rs",
        "notes/../src/b.rs",
        "notes/out/c.rs",
        "NOTES/d.md",
    ] {
        let run = call_unattended(&ws, "write_file", json!({"path": path, "content": "x"}));
        assert_eq!(run.code, 4, "{path}: {run:?}");
        assert!(run.stdout.contains("needs approval"), "{path}: {run:?}");
    }
    assert!(!ws.root.join("src/b.rs").exists());
    assert!(!ws.root.join("src/c.rs").exists());

    // A move needs both ends inside what the rule names.
    let run = call_unattended(
        &ws,
        "move_path",
        json!({"from": "notes/a.md", "to": "drafts/a.md"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let run = call_unattended(
        &ws,
        "move_path",
        json!({"from": "drafts/a.md", "to": "src/a.md"}),
    );
    assert_eq!(run.code, 4, "{run:?}");
    assert!(ws.root.join("drafts/a.md").exists());

    // Even a rule for every path cannot approve a change of the config.
    ws.write(
        "toolcell.toml",
        "[[rule]]\ntool = \"write_file\"\npath = \"**\"\ndecision = \"auto\"\n",
    );
    let run = call_unattended(
        &ws,
        "write_file",
        json!({"path": "toolcell.toml", "content": ""}),
    );
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stdout.contains("only a person"), "{run:?}");
    assert!(!ws.read("toolcell.toml").is_empty());
}

#[test]
fn deny_beats_every_other_rule_and_any_path_of_a_call_is_enough() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", NOTES_ARE_FREE);
    ws.write("private/key.txt", "k");
    ws.write("notes/n.md", "n");
    let refused = |tool: &str, args: serde_json::Value| {
        let run = ws.run(&[
            "tools",
            "call",
            tool,
            "--args",
            &args.to_string(),
            "--json",
            "--yes",
        ]);
        assert_eq!(run.code, 4, "{tool} {args}: {run:?}");
        let message = run.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(
            message.contains("rule at toolcell.toml:8 refuses"),
            "{message}"
        );
    };
    // Even with --yes, and even for a tool that reads.
    refused("read_file", json!({"path": "private/key.txt"}));
    refused("read_file", json!({"path": "notes/../private/key.txt"}));
    refused("read_file", json!({"path": "PRIVATE/key.txt"}));
    refused(
        "move_path",
        json!({"from": "notes/n.md", "to": "private/n.md"}),
    );
    refused("list_directory", json!({"path": "private"}));
    assert!(ws.root.join("notes/n.md").exists());
}

#[test]
fn a_command_rule_is_a_program_and_a_prefix_and_never_grants_a_program() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", NOTES_ARE_FREE);
    let run = call_unattended(
        &ws,
        "run_command",
        json!({"program": "echo", "args": ["hello", "world"]}),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("hello world"), "{run:?}");
    let run = call_unattended(
        &ws,
        "run_command",
        json!({"program": "echo", "args": ["bye"]}),
    );
    assert_eq!(run.code, 4, "{run:?}");

    // A rule that would let a program run unasked does not grant it.
    ws.write(
        "toolcell.toml",
        "[[rule]]\ntool = \"run_command\"\ncommand = [\"ls\"]\ndecision = \"auto\"\n",
    );
    let run = call_unattended(&ws, "run_command", json!({"program": "ls"}));
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("`ls` was not run"), "{run:?}");
}

#[test]
fn a_found_config_gets_no_automatic_approvals_until_trusted_but_its_refusals_hold() {
    let ws = Workspace::new();
    ws.write_untrusted("toolcell.toml", NOTES_ARE_FREE);
    ws.write("private/key.txt", "k");
    std::fs::create_dir_all(ws.root.join("notes")).unwrap();
    let run = call_unattended(
        &ws,
        "write_file",
        json!({"path": "notes/a.md", "content": "a"}),
    );
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        run.stderr
            .contains("calls approved automatically by the rule \"notes are free\""),
        "{run:?}"
    );
    let run = ws.run(&[
        "tools",
        "call",
        "read_file",
        "--args",
        r#"{"path": "private/key.txt"}"#,
        "--yes",
    ]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(ws.run(&["trust"]).code == 0);
    let run = call_unattended(
        &ws,
        "write_file",
        json!({"path": "notes/a.md", "content": "a"}),
    );
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn rules_check_says_what_would_decide_and_why() {
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &format!(
            "{NOTES_ARE_FREE}\n[[rule]]\ntool = \"web_fetch\"\nhost = \"*.python.org\"\ndecision = \"ask\"\n\n[[rule]]\ntool = \"*\"\npointer = \"/query\"\nmatches = \"*password*\"\ndecision = \"deny\"\n"
        ),
    );
    let said = check(
        &ws,
        "write_file",
        json!({"path": "notes/x.md", "content": ""}),
    );
    assert_eq!(said["decision"], "auto", "{said}");
    assert_eq!(
        said["decided_by"],
        "rule \"notes are free\" (toolcell.toml:2)"
    );
    let said = check(&ws, "write_file", json!({"path": "x.md", "content": ""}));
    assert_eq!(said["decision"], "ask", "{said}");
    assert_eq!(said["decided_by"], "grant: the tool's default (ask)");
    let said = check(&ws, "read_file", json!({"path": "private/x"}));
    assert_eq!(said["decision"], "deny", "{said}");
    let said = check(
        &ws,
        "web_fetch",
        json!({"url": "https://docs.python.org/3/"}),
    );
    assert_eq!(
        (said["decision"].as_str(), said["decided_by"].as_str()),
        (Some("ask"), Some("rule at toolcell.toml:26")),
        "{said}"
    );
    let said = check(&ws, "web_fetch", json!({"url": "https://example.com/"}));
    assert_eq!(said["decision"], "auto", "{said}");
    let said = check(
        &ws,
        "search_files",
        json!({"path": ".", "query": "my password"}),
    );
    assert_eq!(said["decision"], "deny", "{said}");
    let said = check(
        &ws,
        "write_file",
        json!({"path": "toolcell.toml", "content": ""}),
    );
    assert_eq!(said["decision"], "ask", "{said}");
    assert!(
        said["reason"].as_str().unwrap().contains("own policy"),
        "{said}"
    );
    // Arguments that do not fit are said so, with the tool's own check.
    let run = ws.run(&["rules", "check", "write_file", "--args", r#"{"path": 3}"#]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("do not fit the schema"), "{run:?}");
}

#[test]
fn bad_rules_are_refused_at_load_with_their_place_and_a_fix() {
    let ws = Workspace::new();
    for (rule, place, says) in [
        (
            "tool = \"write_file\"\ndecision = \"maybe\"\n",
            ":3:",
            "not a decision",
        ),
        (
            "tool = \"write_file\"\ndecision = \"auto\"\npath = \"notes/**\"\npointer = \"/x\"\nmatches = \"y\"\n",
            ":5:",
            "both given",
        ),
        (
            "tool = \"read_file\"\ncommand = [\"git\"]\ndecision = \"auto\"\n",
            ":3:",
            "`command` is for `run_command`",
        ),
        (
            "tool = \"write_file\"\npath = \"../outside/**\"\ndecision = \"auto\"\n",
            ":3:",
            "climb out",
        ),
        (
            "tool = \"write_file\"\npath = \"/etc/**\"\ndecision = \"auto\"\n",
            ":3:",
            "relative to the workspace",
        ),
        (
            "tool = \"web_fetch\"\nhost = \"https://x\"\ndecision = \"auto\"\n",
            ":3:",
            "not a host name",
        ),
        (
            "tool = \"Write File\"\ndecision = \"auto\"\n",
            ":2:",
            "not a tool name",
        ),
        (
            "tool = \"write_file\"\ndecision = \"auto\"\npaths = \"x\"\n",
            ":4:",
            "unknown field `paths`",
        ),
        (
            "tool = \"web_fetch\"\npath = \"x\"\ndecision = \"auto\"\n",
            ":3:",
            "no path arguments",
        ),
    ] {
        ws.write_untrusted("toolcell.toml", &format!("[[rule]]\n{rule}"));
        let run = ws.run(&["rules", "check", "read_file", "--args", r#"{"path": "x"}"#]);
        assert_eq!(run.code, 1, "{rule}: {run:?}");
        assert!(
            run.stderr.contains(&format!("toolcell.toml{place}")),
            "{rule}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(says), "{rule}: {}", run.stderr);
        assert!(run.stderr.contains("fix:"), "{rule}: {}", run.stderr);
    }
}

#[test]
fn each_recorded_call_says_who_decided_it() {
    let ws = Workspace::new();
    ws.write("toolcell.toml", NOTES_ARE_FREE);
    std::fs::create_dir_all(ws.root.join("notes")).unwrap();
    ws.write(
        "w.rhai",
        r#"
tool("write_file", #{path: "notes/a.md", content: "a"});
tool("read_file", #{path: "notes/a.md"});
try { tool("read_file", #{path: "private/k"}); } catch (e) { }
try { tool("write_file", #{path: "b.md", content: "b"}); } catch (e) { }
"done"
"#,
    );
    let run = ws.run(&["run", "w.rhai"]);
    assert_eq!(run.code, 0, "{run:?}");
    let calls = exported_calls(&ws, "1");
    let by: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["decision"].as_str().unwrap_or(""),
                c["decided_by"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        by,
        [
            ("auto", "rule \"notes are free\" (toolcell.toml:2)"),
            ("auto", "grant: the tool's default (auto)"),
            ("not-asked", "rule at toolcell.toml:8"),
            ("declined", "nobody to ask"),
        ],
        "{calls:?}"
    );
    assert!(
        calls.iter().all(|c| c["decided_at"].as_i64().is_some()),
        "{calls:?}"
    );
    let shown = ws.run(&["runs", "show", "1"]);
    assert!(
        shown
            .stdout
            .contains("auto by rule \"notes are free\" (toolcell.toml:2) at "),
        "{shown:?}"
    );

    // A grant made up front is named as such.
    ws.write(
        "w2.rhai",
        "tool(\"write_file\", #{path: \"c.md\", content: \"c\"});\n\"ok\"\n",
    );
    let run = ws.run(&["run", "w2.rhai", "--approve", "write_file"]);
    assert_eq!(run.code, 0, "{run:?}");
    let calls = exported_calls(&ws, "2");
    assert_eq!(
        calls[0]["decided_by"], "grant: --approve write_file",
        "{calls:?}"
    );
}
