//! Tools in any language: `toolcell tools new` scaffolds in Rust, Python
//! and JavaScript, built with the real toolchains (componentize-py from
//! PyPI, ComponentizeJS from npm), added, and called through toolcell:
//! arguments in, result out, each error kind mapped, and the same sandbox
//! as any tool (nothing outside the workspace, whatever the language).

use crate::harness::Workspace;
use crate::polyglot;
use serde_json::json;
use toolcell::install::scaffold::Lang;

/// `tools new` → build → `tools add` → calls, for one language.
fn scaffolded_tool_works_and_is_confined(lang: Lang, flag: &str) {
    let ws = Workspace::new();
    let name = format!("count_{flag}");
    let folder = ws.outer.join(&name);
    let run = ws.run(&[
        "tools",
        "new",
        &name,
        "--lang",
        flag,
        "--dir",
        folder.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("toolcell tools add . --yes"), "{run:?}");
    polyglot::build(lang, &folder, &name);

    let add = ws.run(&["tools", "add", folder.to_str().unwrap(), "--yes"]);
    assert_eq!(add.code, 0, "{add:?}");
    let list = ws.run(&["tools", "list", "--json"]);
    let entry = list
        .json()
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("{name} not listed: {list:?}"));
    assert_eq!(entry["source"], "workspace");

    ws.write(
        "notes/todo.md",
        "buy milk\nwater the basil  today\n\nlast line",
    );
    std::fs::write(ws.root.join("notes/blob.bin"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    std::fs::write(ws.outer.join("outside.txt"), "outside secret words").unwrap();

    let counted = ws.call_ok(&name, json!({"path": "notes/todo.md"}));
    assert_eq!(
        counted,
        json!({"path": "notes/todo.md", "lines": 4, "words": 8, "bytes": 42}),
        "{lang:?}"
    );
    let (kind, message) = ws.call_refused(&name, json!({"path": "notes/missing.md"}));
    assert_eq!(kind, "not-found", "{lang:?}: {message}");
    assert!(message.contains("notes/missing.md"), "{message}");
    let (kind, message) = ws.call_refused(&name, json!({"path": "notes/blob.bin"}));
    assert_eq!(kind, "invalid-args", "{lang:?}: {message}");
    assert!(message.contains("not UTF-8"), "{message}");
    let (kind, message) = ws.call_refused(&name, json!({"path": "   "}));
    assert_eq!(kind, "invalid-args", "{lang:?}: {message}");
    // The schema is checked before the tool runs, whatever its language.
    let (code, envelope) = ws.call(&name, json!({"path": 7}));
    assert_eq!(code, 3);
    assert_eq!(envelope["error"]["kind"], "invalid-args", "{envelope}");

    // The sandbox: nothing outside the workspace, by any path.
    for path in ["../outside.txt", "/etc/passwd", "notes/../../outside.txt"] {
        let (code, envelope) = ws.call(&name, json!({"path": path}));
        assert_eq!(code, 3, "{lang:?} read {path}: {envelope}");
        let kind = envelope["error"]["kind"].as_str().unwrap();
        assert!(
            kind == "denied" || kind == "not-found",
            "{lang:?} {path}: {envelope}"
        );
        assert!(!envelope.to_string().contains("secret"), "{envelope}");
        assert!(!envelope.to_string().contains("root:"), "{envelope}");
    }
}

#[test]
fn a_rust_tool_from_tools_new_builds_runs_and_is_confined() {
    scaffolded_tool_works_and_is_confined(Lang::Rust, "rust");
}

#[test]
fn a_python_tool_from_tools_new_builds_with_componentize_py_runs_and_is_confined() {
    scaffolded_tool_works_and_is_confined(Lang::Python, "python");
}

#[test]
fn a_javascript_tool_from_tools_new_builds_with_componentize_js_runs_and_is_confined() {
    scaffolded_tool_works_and_is_confined(Lang::Js, "js");
}

#[test]
fn tools_new_refuses_bad_names_and_existing_folders_and_add_replace_swaps_a_rebuilt_tool() {
    let ws = Workspace::new();
    let bad = ws.run(&["tools", "new", "Word-Count", "--lang", "rust"]);
    assert_eq!(bad.code, 1, "{bad:?}");
    assert!(
        bad.stderr.contains("invalid tool name") && bad.stderr.contains("fix:"),
        "{bad:?}"
    );
    assert!(!ws.root.join("Word-Count").exists());
    let lang = ws.run(&["tools", "new", "x", "--lang", "cobol"]);
    assert_eq!(lang.code, 2, "{lang:?}");
    assert!(lang.stderr.contains("rust, python, js"), "{lang:?}");

    ws.write("taken/file.txt", "mine");
    let taken = ws.run(&["tools", "new", "taken", "--lang", "python"]);
    assert_eq!(taken.code, 1, "{taken:?}");
    assert!(taken.stderr.contains("already exists"), "{taken:?}");
    assert_eq!(ws.read("taken/file.txt"), "mine");

    // An author's loop: add, rebuild, add --replace.
    let folder = ws.outer.join("wc");
    let run = ws.run(&[
        "tools",
        "new",
        "wc",
        "--lang",
        "rust",
        "--dir",
        folder.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    polyglot::build(Lang::Rust, &folder, "wc");
    let add = |extra: &[&str]| {
        let mut args = vec!["tools", "add", folder.to_str().unwrap(), "--yes"];
        args.extend_from_slice(extra);
        ws.run(&args)
    };
    assert_eq!(add(&[]).code, 0);
    let again = add(&[]);
    assert_eq!(again.code, 1, "{again:?}");
    assert!(again.stderr.contains("--replace"), "{again:?}");
    let manifest = folder.join("tool.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("version = \"0.1.0\"", "version = \"0.2.0\""),
    )
    .unwrap();
    let replaced = add(&["--replace"]);
    assert_eq!(replaced.code, 0, "{replaced:?}");
    assert!(
        replaced
            .stderr
            .contains("replaces:       `wc` 0.1.0 (which asked for the same)"),
        "{replaced:?}"
    );
    let show = ws.run(&["tools", "show", "wc", "--json"]);
    assert_eq!(show.json()["version"], "0.2.0");
    // Never a built-in.
    std::fs::write(
        &manifest,
        text.replace("name = \"wc\"", "name = \"read_file\""),
    )
    .unwrap();
    let builtin = add(&["--replace"]);
    assert_eq!(builtin.code, 1, "{builtin:?}");
    assert!(
        builtin.stderr.contains("built-in tool named `read_file`"),
        "{builtin:?}"
    );
}
