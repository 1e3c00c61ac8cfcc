//! The built-in tools that change files: write_file, create_directory,
//! delete_path, move_path, replace_in_file — normal use and every refusal.

use crate::harness::Workspace;
use serde_json::json;
use sha2::{Digest, Sha256};

fn sha256(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[test]
fn write_file_creates_overwrites_and_refuses() {
    let ws = Workspace::new();
    let r = ws.call_ok(
        "write_file",
        json!({"path": "notes.md", "content": "first\n"}),
    );
    assert_eq!(
        (r["created"].as_bool(), r["bytes_written"].as_u64()),
        (Some(true), Some(6))
    );
    assert_eq!(r["sha256"], sha256(b"first\n"));
    let r = ws.call_ok(
        "write_file",
        json!({"path": "notes.md", "content": "second\n"}),
    );
    assert_eq!(r["created"], false);
    assert_eq!(ws.read("notes.md"), "second\n");

    let (kind, message) = ws.call_refused(
        "write_file",
        json!({"path": "deep/er/x.md", "content": "x"}),
    );
    assert_eq!(kind, "not-found");
    assert!(
        message.contains("the folder `deep/er` does not exist: pass create_parents: true"),
        "{message}"
    );
    ws.call_ok(
        "write_file",
        json!({"path": "deep/er/x.md", "content": "x", "create_parents": true}),
    );
    assert_eq!(ws.read("deep/er/x.md"), "x");

    let (kind, _) = ws.call_refused("write_file", json!({"path": "deep", "content": "x"}));
    assert_eq!(kind, "invalid-args");
    let (kind, message) = ws.call_refused(
        "write_file",
        json!({"path": ".toolcell/tools/evil/tool.toml", "content": "x"}),
    );
    assert_eq!(kind, "denied");
    assert!(message.contains("toolcell's own state"), "{message}");

    let too_big = "x".repeat(5 * 1024 * 1024 + 1);
    let (kind, message) =
        ws.call_refused("write_file", json!({"path": "big.txt", "content": too_big}));
    assert_eq!(kind, "denied");
    assert!(message.contains("over the 5242880-byte limit"), "{message}");
    assert!(!ws.root.join("big.txt").exists());
    // No temporary files are left behind by successful or refused writes.
    let leftovers: Vec<_> = std::fs::read_dir(&ws.root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("toolcell-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn writes_stay_inside_the_workspace() {
    let ws = Workspace::new();
    std::os::unix::fs::symlink(&ws.outer, ws.root.join("outer_dir")).unwrap();
    for path in ["../escaped.txt", "outer_dir/escaped.txt"] {
        let (kind, _) = ws.call_refused("write_file", json!({"path": path, "content": "x"}));
        assert_eq!(kind, "denied", "{path}");
    }
    std::fs::write(ws.outer.join("outside.txt"), "outside\n").unwrap();
    for (tool, args) in [
        (
            "replace_in_file",
            json!({"path": "../outside.txt", "old_text": "outside", "new_text": "changed"}),
        ),
        ("delete_path", json!({"path": "../outside.txt"})),
        (
            "move_path",
            json!({"from": "../outside.txt", "to": "stolen.txt"}),
        ),
        (
            "replace_in_file",
            json!({"path": "outer_dir/outside.txt", "old_text": "outside", "new_text": "changed"}),
        ),
        ("delete_path", json!({"path": "outer_dir/outside.txt"})),
        (
            "move_path",
            json!({"from": "outer_dir/outside.txt", "to": "stolen.txt"}),
        ),
    ] {
        let (kind, message) = ws.call_refused(tool, args);
        assert_eq!(kind, "denied", "{tool}: {message}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.outer.join("outside.txt")).unwrap(),
        "outside\n"
    );
    assert!(!ws.root.join("stolen.txt").exists());
    let absolute = ws.outer.join("escaped.txt");
    ws.call_refused("write_file", json!({"path": absolute, "content": "x"}));
    ws.call_refused("create_directory", json!({"path": "outer_dir/made"}));
    ws.call_refused("move_path", json!({"from": "outer_dir", "to": "../moved"}));
    assert!(!ws.outer.join("escaped.txt").exists());
    assert!(!ws.outer.join("made").exists());

    // A read-only root refuses every change and keeps its content.
    ws.write("keep.txt", "keep\n");
    ws.write(
        "toolcell.toml",
        "[[roots]]\npath = \".\"\naccess = \"read\"\n",
    );
    for (tool, args) in [
        (
            "write_file",
            json!({"path": "keep.txt", "content": "changed"}),
        ),
        ("write_file", json!({"path": "new.txt", "content": "new"})),
        (
            "replace_in_file",
            json!({"path": "keep.txt", "old_text": "keep", "new_text": "changed"}),
        ),
        ("create_directory", json!({"path": "dir"})),
        ("delete_path", json!({"path": "keep.txt"})),
        ("move_path", json!({"from": "keep.txt", "to": "moved.txt"})),
    ] {
        let (kind, message) = ws.call_refused(tool, args);
        assert_eq!(kind, "denied", "{tool}: {message}");
    }
    assert_eq!(ws.read("keep.txt"), "keep\n");
    assert!(
        !ws.root.join("new.txt").exists()
            && !ws.root.join("dir").exists()
            && !ws.root.join("moved.txt").exists()
    );
}

#[test]
fn create_directory() {
    let ws = Workspace::new();
    assert_eq!(
        ws.call_ok("create_directory", json!({"path": "a"}))["created"],
        true
    );
    assert_eq!(
        ws.call_ok("create_directory", json!({"path": "a"}))["created"],
        false
    );
    let (kind, message) = ws.call_refused("create_directory", json!({"path": "x/y/z"}));
    assert_eq!(kind, "not-found");
    assert!(message.contains("pass parents: true"), "{message}");
    ws.call_ok(
        "create_directory",
        json!({"path": "x/y/z", "parents": true}),
    );
    assert!(ws.root.join("x/y/z").is_dir());
    ws.write("file.txt", "f");
    let (kind, message) = ws.call_refused("create_directory", json!({"path": "file.txt"}));
    assert_eq!(kind, "denied");
    assert!(
        message.contains("already exists and is not a folder"),
        "{message}"
    );
}

#[test]
fn delete_path_moves_into_the_trash() {
    let ws = Workspace::new();
    ws.write("old.txt", "precious\n");
    let r = ws.call_ok("delete_path", json!({"path": "old.txt"}));
    assert_eq!(r["type"], "file");
    let trashed = r["trashed_to"].as_str().unwrap();
    assert!(
        trashed.starts_with(".toolcell/trash/") && trashed.ends_with("old.txt"),
        "{trashed}"
    );
    assert!(!ws.root.join("old.txt").exists());
    assert_eq!(ws.read(trashed), "precious\n");

    ws.write("dir/a.txt", "a");
    let (kind, message) = ws.call_refused("delete_path", json!({"path": "dir"}));
    assert_eq!(kind, "denied");
    assert!(
        message.contains("a folder with 1 entries: pass recursive: true"),
        "{message}"
    );
    assert!(ws.root.join("dir/a.txt").exists());
    let r = ws.call_ok("delete_path", json!({"path": "dir", "recursive": true}));
    assert_eq!(
        ws.read(&format!("{}/a.txt", r["trashed_to"].as_str().unwrap())),
        "a"
    );

    std::fs::create_dir(ws.root.join("empty")).unwrap();
    ws.call_ok("delete_path", json!({"path": "empty"}));

    for root in [".", "./", "sub/.."] {
        let (kind, message) =
            ws.call_refused("delete_path", json!({"path": root, "recursive": true}));
        assert_eq!(kind, "denied");
        assert!(message.contains("never deletes a root"), "{message}");
    }
    let (kind, _) = ws.call_refused(
        "delete_path",
        json!({"path": ".toolcell", "recursive": true}),
    );
    assert_eq!(kind, "denied");
    let (kind, _) = ws.call_refused("delete_path", json!({"path": "missing.txt"}));
    assert_eq!(kind, "not-found");
}

#[test]
fn delete_path_always_asks() {
    let ws = Workspace::new();
    ws.write("victim.txt", "v");
    ws.write(
        "toolcell.toml",
        "[tools.delete_path]\napproval = \"auto\"\n[tools.write_file]\napproval = \"auto\"\n",
    );
    // `auto` in the config loosens write_file, but not delete_path.
    let run = ws.run(&[
        "tools",
        "call",
        "write_file",
        "--args",
        r#"{"path": "w.txt", "content": "w"}"#,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = ws.run(&[
        "tools",
        "call",
        "delete_path",
        "--args",
        r#"{"path": "victim.txt"}"#,
    ]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stderr.contains("needs approval"), "{run:?}");
    assert!(ws.root.join("victim.txt").exists());
    let shown = ws.run(&["tools", "show", "delete_path"]);
    assert!(
        shown
            .stdout
            .contains("approval:    ask (always: the tool requires approval of every call)"),
        "{}",
        shown.stdout
    );
}

#[test]
fn deleting_a_named_root_is_refused() {
    let ws = Workspace::new();
    std::fs::create_dir(ws.outer.join("shared")).unwrap();
    std::fs::write(ws.outer.join("shared/doc.md"), "doc").unwrap();
    ws.write(
        "toolcell.toml",
        "[[roots]]\npath = \".\"\n[[roots]]\npath = \"../shared\"\n",
    );
    let (kind, message) =
        ws.call_refused("delete_path", json!({"path": "shared", "recursive": true}));
    assert_eq!(kind, "denied", "{message}");
    assert!(ws.outer.join("shared/doc.md").exists());
}

#[test]
fn move_path_never_overwrites() {
    let ws = Workspace::new();
    ws.write("a.txt", "a");
    ws.write("b.txt", "b");
    let r = ws.call_ok("move_path", json!({"from": "a.txt", "to": "c.txt"}));
    assert_eq!(
        (r["from"].as_str(), r["to"].as_str(), r["type"].as_str()),
        (Some("a.txt"), Some("c.txt"), Some("file"))
    );
    assert_eq!(ws.read("c.txt"), "a");
    assert!(!ws.root.join("a.txt").exists());

    let (kind, message) = ws.call_refused("move_path", json!({"from": "c.txt", "to": "b.txt"}));
    assert_eq!(kind, "denied");
    assert!(
        message.contains("`b.txt` already exists: move_path never overwrites"),
        "{message}"
    );
    assert_eq!(
        (ws.read("b.txt"), ws.read("c.txt")),
        ("b".to_string(), "a".to_string())
    );

    ws.write("dir/inner.txt", "i");
    let (kind, _) = ws.call_refused("move_path", json!({"from": "dir", "to": "dir/sub"}));
    assert_eq!(kind, "invalid-args");
    let (kind, message) = ws.call_refused("move_path", json!({"from": "dir", "to": "nowhere/dir"}));
    assert_eq!(kind, "not-found");
    assert!(message.contains("create it first"), "{message}");
    ws.call_ok("move_path", json!({"from": "dir", "to": "renamed"}));
    assert_eq!(ws.read("renamed/inner.txt"), "i");
    let (kind, _) = ws.call_refused("move_path", json!({"from": "missing", "to": "x"}));
    assert_eq!(kind, "not-found");
    let (kind, _) = ws.call_refused("move_path", json!({"from": ".", "to": "x"}));
    assert_eq!(kind, "denied");
}

#[test]
fn replace_in_file_exactly_once() {
    let ws = Workspace::new();
    ws.write(
        "code.rs",
        "fn main() {\n    println!(\"hello\");\n}\n\nfn helper() {\n    println!(\"hello\");\n}\n",
    );
    let (kind, message) = ws.call_refused(
        "replace_in_file",
        json!({"path": "code.rs", "old_text": "println!(\"hello\");", "new_text": "x"}),
    );
    assert_eq!(kind, "invalid-args");
    assert!(
        message.contains("occurs 2 times in `code.rs`, at lines 2, 6"),
        "{message}"
    );

    let (kind, message) = ws.call_refused(
        "replace_in_file",
        json!({"path": "code.rs", "old_text": "fn helpr() {", "new_text": "x"}),
    );
    assert_eq!(kind, "not-found");
    assert!(
        message.contains("the closest line is 5: `fn helper() {`"),
        "{message}"
    );

    let before = std::fs::read(ws.root.join("code.rs")).unwrap();
    let (kind, message) = ws.call_refused("replace_in_file",
        json!({"path": "code.rs", "old_text": "fn main", "new_text": "fn start", "expected_sha256": "0".repeat(64)}),
    );
    assert_eq!(kind, "denied");
    assert!(
        message.contains(&format!("its sha256 is now {}", sha256(&before))),
        "{message}"
    );
    assert_eq!(
        std::fs::read(ws.root.join("code.rs")).unwrap(),
        before,
        "a refused edit changed the file"
    );

    let r = ws.call_ok("replace_in_file",
        json!({"path": "code.rs", "old_text": "fn helper() {\n    println!(\"hello\");", "new_text": "fn helper() {\n    println!(\"bye\");", "expected_sha256": sha256(&before)}),
    );
    assert_eq!(r["line"], 5);
    let after = ws.read("code.rs");
    assert!(after.contains("println!(\"bye\")") && after.matches("hello").count() == 1);
    assert_eq!(r["sha256"], sha256(after.as_bytes()));
    let (kind, _) = ws.call_refused(
        "replace_in_file",
        json!({"path": "code.rs", "old_text": "", "new_text": "x"}),
    );
    assert_eq!(kind, "invalid-args");
}

#[test]
fn replace_in_file_keeps_bom_and_crlf() {
    let ws = Workspace::new();
    std::fs::write(ws.root.join("win.txt"), "\u{feff}one\r\ntwo\r\nthree\r\n").unwrap();
    ws.call_ok(
        "replace_in_file",
        json!({"path": "win.txt", "old_text": "one\ntwo\n", "new_text": "uno\ndos\n"}),
    );
    assert_eq!(
        std::fs::read(ws.root.join("win.txt")).unwrap(),
        "\u{feff}uno\r\ndos\r\nthree\r\n".as_bytes()
    );
    std::fs::write(ws.root.join("bin.dat"), [0u8, 1, 2, 3]).unwrap();
    let (kind, message) = ws.call_refused(
        "replace_in_file",
        json!({"path": "bin.dat", "old_text": "a", "new_text": "b"}),
    );
    assert_eq!(kind, "denied");
    assert!(message.contains("binary"), "{message}");
}

/// Killing toolcell in the middle of a large write_file or replace_in_file
/// leaves the old content or the new, never a mix (the tools write a
/// temporary file, sync it, then rename it over the target).
#[test]
fn a_killed_write_leaves_old_or_new_content() {
    let ws = Workspace::new();
    let old = "old line\n".repeat(400_000) + "MARKER\n";
    let written = "new line\n".repeat(400_000);
    let replaced = "old line\n".repeat(400_000) + "DONE\n";
    let write_args = ws.outer.join("write.json");
    std::fs::write(
        &write_args,
        json!({"path": "big.txt", "content": written}).to_string(),
    )
    .unwrap();
    let replace_args = ws.outer.join("replace.json");
    std::fs::write(
        &replace_args,
        json!({"path": "big.txt", "old_text": "MARKER\n", "new_text": "DONE\n"}).to_string(),
    )
    .unwrap();

    for (tool, args, new) in [
        ("write_file", &write_args, &written),
        ("replace_in_file", &replace_args, &replaced),
    ] {
        // Uninterrupted, the call completes; its duration spreads the kills
        // over the whole run, from start-up to after the rename.
        // (The first run also compiles the component: time the second.)
        let mut full = std::time::Duration::ZERO;
        for _ in 0..2 {
            std::fs::write(ws.root.join("big.txt"), &old).unwrap();
            let started = std::time::Instant::now();
            let run = ws.run(&[
                "tools",
                "call",
                tool,
                "--yes",
                "--args-file",
                args.to_str().unwrap(),
            ]);
            full = started.elapsed();
            assert_eq!(run.code, 0, "{run:?}");
            assert!(&ws.read("big.txt") == new);
        }

        let mut outcomes = (0, 0);
        for round in 0..24u32 {
            std::fs::write(ws.root.join("big.txt"), &old).unwrap();
            let delay = full * round / 20;
            let mut child = ws
                .command(&[
                    "tools",
                    "call",
                    tool,
                    "--yes",
                    "--args-file",
                    args.to_str().unwrap(),
                ])
                .spawn()
                .unwrap();
            std::thread::sleep(delay);
            let _ = child.kill();
            let _ = child.wait();
            let content = std::fs::read_to_string(ws.root.join("big.txt")).unwrap();
            if content == old {
                outcomes.0 += 1;
            } else if &content == new {
                outcomes.1 += 1;
            } else {
                panic!(
                    "{tool}, killed after {delay:?}: the file is neither old nor new ({} bytes)",
                    content.len()
                );
            }
        }
        eprintln!(
            "{tool} ({full:?} uninterrupted): killed runs that left (old, new) content: {outcomes:?}"
        );
        assert!(
            outcomes.0 > 0,
            "{tool}: no kill landed before the rename: {outcomes:?}"
        );
        assert!(
            outcomes.1 > 0,
            "{tool}: no kill landed after the rename, so the kills did not span the write: {outcomes:?}"
        );
    }
}
