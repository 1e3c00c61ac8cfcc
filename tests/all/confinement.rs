//! A tool sees only the roots it was granted: no `..` escape, no absolute
//! path, no symlink out, no write to a read-only root. Each case is tried
//! through a built-in tool (whose guest helper refuses early) and through
//! the probe, which hands the path straight to WASI: the sandbox itself must
//! refuse.

use crate::harness::Workspace;
use serde_json::json;

const SECRET: &str = "the secret outside the workspace";

fn workspace_with_secret() -> Workspace {
    let ws = Workspace::new();
    std::fs::write(ws.outer.join("secret.txt"), SECRET).unwrap();
    ws.write("inside.txt", "inside\n");
    ws.install_probe();
    ws
}

fn assert_refused(ws: &Workspace, tool: &str, args: serde_json::Value) -> serde_json::Value {
    let (code, envelope) = ws.call(tool, args.clone());
    assert_eq!(code, 3, "{tool} {args} should fail: {envelope}");
    assert_eq!(envelope["ok"], false);
    assert!(
        !envelope.to_string().contains(SECRET),
        "the secret leaked: {envelope}"
    );
    envelope
}

#[test]
fn parent_traversal_is_refused() {
    let ws = workspace_with_secret();
    let envelope = assert_refused(&ws, "read_file", json!({"path": "../secret.txt"}));
    assert_eq!(envelope["error"]["kind"], "denied");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("leaves the workspace"),
        "{envelope}"
    );
    assert_refused(&ws, "read_file", json!({"path": "sub/../../secret.txt"}));
    assert_refused(&ws, "list_directory", json!({"path": ".."}));
    // Straight to WASI, without the guest helper's check.
    assert_refused(
        &ws,
        "probe",
        json!({"action": "read", "path": "../secret.txt"}),
    );
}

#[test]
fn absolute_paths_are_refused() {
    let ws = workspace_with_secret();
    let secret = ws.outer.join("secret.txt");
    let envelope = assert_refused(&ws, "read_file", json!({"path": secret}));
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("absolute path"),
        "{envelope}"
    );
    assert_refused(&ws, "probe", json!({"action": "read", "path": secret}));
    assert_refused(
        &ws,
        "probe",
        json!({"action": "read", "path": "/etc/passwd"}),
    );
}

#[test]
fn symlinks_out_of_the_root_are_refused() {
    let ws = workspace_with_secret();
    std::os::unix::fs::symlink(ws.outer.join("secret.txt"), ws.root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(&ws.outer, ws.root.join("outer_dir")).unwrap();
    std::os::unix::fs::symlink("../secret.txt", ws.root.join("relative_link.txt")).unwrap();
    let envelope = assert_refused(&ws, "read_file", json!({"path": "link.txt"}));
    assert_eq!(envelope["error"]["kind"], "denied", "{envelope}");
    assert_refused(&ws, "read_file", json!({"path": "relative_link.txt"}));
    assert_refused(&ws, "read_file", json!({"path": "outer_dir/secret.txt"}));
    assert_refused(&ws, "list_directory", json!({"path": "outer_dir"}));
    assert_refused(&ws, "probe", json!({"action": "read", "path": "link.txt"}));
    assert_refused(
        &ws,
        "probe",
        json!({"action": "read", "path": "outer_dir/secret.txt"}),
    );

    // A symlink is listed as such, not followed.
    let (code, envelope) = ws.call("list_directory", json!({"path": "."}));
    assert_eq!(code, 0, "{envelope}");
    let entries = envelope["result"]["entries"].as_array().unwrap();
    let link = entries
        .iter()
        .find(|e| e["name"] == "outer_dir")
        .expect("outer_dir listed");
    assert_eq!(link["type"], "symlink");
}

#[test]
fn a_read_only_root_cannot_be_written() {
    let ws = workspace_with_secret();
    // Without a config the workspace is writable for a tool that asks `fs = "write"`:
    let (code, envelope) = ws.call(
        "probe",
        json!({"action": "write", "path": "made.txt", "content": "hello"}),
    );
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(
        std::fs::read_to_string(ws.root.join("made.txt")).unwrap(),
        "hello"
    );

    ws.write(
        "toolcell.toml",
        "[[roots]]\npath = \".\"\naccess = \"read\"\n",
    );
    let envelope = assert_refused(
        &ws,
        "probe",
        json!({"action": "write", "path": "blocked.txt", "content": "x"}),
    );
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("blocked.txt"),
        "{envelope}"
    );
    assert!(!ws.root.join("blocked.txt").exists());
    assert_refused(
        &ws,
        "probe",
        json!({"action": "write", "path": "made.txt", "content": "changed"}),
    );
    assert_eq!(
        std::fs::read_to_string(ws.root.join("made.txt")).unwrap(),
        "hello"
    );
    // Reading still works.
    let (code, envelope) = ws.call("probe", json!({"action": "read", "path": "inside.txt"}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(envelope["result"]["content"], "inside\n");
}

#[test]
fn a_second_root_is_reachable_by_its_name_and_nothing_else() {
    let ws = Workspace::new();
    std::fs::create_dir(ws.outer.join("reference")).unwrap();
    std::fs::write(ws.outer.join("reference/guide.md"), "# Guide\n").unwrap();
    std::fs::write(ws.outer.join("secret.txt"), SECRET).unwrap();
    ws.write("toolcell.toml", "[[roots]]\npath = \".\"\n\n[[roots]]\npath = \"../reference\"\naccess = \"read\"\nname = \"ref\"\n");
    let (code, envelope) = ws.call("read_file", json!({"path": "ref/guide.md"}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(envelope["result"]["content"], "# Guide\n");
    assert_refused(&ws, "read_file", json!({"path": "ref/../../secret.txt"}));
}

/// A folder a tool opens may get the resource number a root's descriptor
/// had before it was dropped: a file in it is judged where it is, as a
/// secret under `.git/`, not as a file of that name in the root. (The
/// probe's moves rely on wasmtime handing out the number freed last
/// first; `sandbox::preopened`'s own test holds the check to any number.)
#[test]
fn a_folder_given_a_dropped_roots_number_is_judged_where_it_is() {
    let ws = workspace_with_secret();
    std::fs::create_dir(ws.root.join("sub")).unwrap();
    std::fs::write(ws.root.join("sub/config"), "plain\n").unwrap();
    let call = |folder: &str| {
        let args = json!({"action": "reused_number", "folder": folder, "name": "config"});
        let (code, envelope) = ws.call("probe", args);
        assert_eq!(code, 0, "{envelope}");
        assert!(
            !envelope.to_string().contains(SECRET),
            "the secret leaked: {envelope}"
        );
        envelope["result"].clone()
    };
    assert_eq!(
        call("sub")["content"],
        "plain\n",
        "the same way, a plain file"
    );
    for secret_folder in [".git", "sub/.git"] {
        std::fs::create_dir_all(ws.root.join(secret_folder)).unwrap();
        std::fs::write(ws.root.join(secret_folder).join("config"), SECRET).unwrap();
        let refused = call(secret_folder);
        assert!(refused["error"].is_string(), "{secret_folder}: {refused}");
    }
}

/// `toolcell:tool/folders` and `toolcell:tool/files`, asked by a tool for
/// what it may not have: nothing outside the roots, nothing through a link,
/// no secret, and no more memory than the cell's limit.
#[test]
fn the_fast_folder_and_file_imports_keep_to_the_roots_the_rules_and_the_memory_limit() {
    let ws = workspace_with_secret();
    ws.write(".env", "API_TOKEN=hunter2\n");
    std::os::unix::fs::symlink(&ws.outer, ws.root.join("outer_link")).unwrap();
    // Bigger than the probe's 32 MB of memory, made in an instant (sparse).
    let big = std::fs::File::create(ws.root.join("big.bin")).unwrap();
    big.set_len(40 << 20).unwrap();
    let call = |args: serde_json::Value| {
        let (code, envelope) = ws.call("probe", args);
        assert_eq!(code, 0, "{envelope}");
        assert!(
            !envelope.to_string().contains(SECRET),
            "the secret leaked: {envelope}"
        );
        assert!(
            !envelope.to_string().contains("hunter2"),
            "a secret leaked: {envelope}"
        );
        envelope["result"].clone()
    };
    ws.write("toolcell.toml", "[tools.probe]\napproval = \"auto\"\n");

    let listed = call(json!({"action": "list_folder", "path": "."}));
    assert!(
        listed["names"].to_string().contains("inside.txt"),
        "{listed}"
    );
    for outside in ["..", "/", "/etc", "outer_link", "inside.txt/..", "./../.."] {
        let refused = call(json!({"action": "list_folder", "path": outside}));
        assert!(refused["error"].is_string(), "{outside}: {refused}");
        let refused = call(json!({"action": "stats", "path": outside, "names": ["secret.txt"]}));
        assert!(refused["error"].is_string(), "{outside}: {refused}");
    }
    // Only a folder's own entries are looked at: a name is one name.
    let stats = call(json!({"action": "stats", "path": ".", "names": [
        "inside.txt", "../secret.txt", "outer_link/secret.txt", "..", ".", "", "missing"
    ]}));
    assert_eq!(
        stats["sizes"],
        json!([7, null, null, null, null, null, null]),
        "{stats}"
    );

    let read = call(json!({"action": "read_many", "paths": [
        "inside.txt", "../secret.txt", "/etc/passwd", "outer_link/secret.txt", ".env", "big.bin", "."
    ]}));
    let read = read["read"].as_array().unwrap();
    assert_eq!(read[0]["text"], "inside\n", "{read:?}");
    assert_eq!(read[1]["error"], "ReadError::Denied", "{read:?}");
    assert_eq!(read[2]["error"], "ReadError::Denied", "{read:?}");
    assert_eq!(read[3]["error"], "ReadError::Denied", "{read:?}");
    assert_eq!(read[4]["error"], "ReadError::Denied", "{read:?}");
    assert_eq!(read[5]["error"], "ReadError::TooLarge", "{read:?}");
    assert_eq!(read[6]["error"], "ReadError::NotAFile", "{read:?}");
    // Read ahead, the same list gets the same answers; another list asked
    // for instead gets its own.
    let hostile = json!([
        "inside.txt",
        "../secret.txt",
        "/etc/passwd",
        "outer_link/secret.txt",
        ".env",
        "big.bin",
        "."
    ]);
    let ahead = call(json!({"action": "read_many", "ahead": hostile, "paths": hostile}));
    assert_eq!(ahead["read"].as_array().unwrap(), read, "{ahead}");
    let other =
        call(json!({"action": "read_many", "ahead": hostile, "paths": ["inside.txt", ".env"]}));
    assert_eq!(other["read"][0]["text"], "inside\n", "{other}");
    assert_eq!(other["read"][1]["error"], "ReadError::Denied", "{other}");

    // Many files, each within the limit, together past it: the host reads
    // no more than the cell's memory holds (the rest is too large), and the
    // cell, which cannot hold even that beside its own, ends at its limit.
    ws.write("chunk.txt", &"x".repeat(1 << 20));
    let many: Vec<&str> = vec!["chunk.txt"; 40];
    let (code, envelope) = ws.call("probe", json!({"action": "read_many", "paths": many}));
    assert_eq!(code, 3, "{envelope}");
    assert_eq!(envelope["error"]["kind"], "memory-limit", "{envelope}");
    let few: Vec<&str> = vec!["chunk.txt"; 4];
    let read = call(json!({"action": "read_many", "paths": few}));
    assert_eq!(read["read"][3]["bytes"], 1 << 20, "{read}");
    // A list past the limit read ahead, then not asked for, is dropped.
    let read = call(json!({"action": "read_many", "ahead": many, "paths": few}));
    assert_eq!(read["read"][3]["bytes"], 1 << 20, "{read}");

    // Folders listed ahead are answered as folders listed alone, whether
    // the host's reader listed them first (a wait) or the cell came first.
    std::fs::create_dir_all(ws.root.join("sub/deeper")).unwrap();
    std::fs::create_dir(ws.root.join(".ssh")).unwrap();
    std::fs::write(ws.root.join(".ssh/id_ed25519"), SECRET).unwrap();
    let folders = json!([
        "sub",
        ".",
        "..",
        "/etc",
        "outer_link",
        "inside.txt",
        ".ssh",
        "missing",
        "sub/deeper",
        "sub"
    ]);
    let alone = call(json!({"action": "list_packed", "paths": folders}));
    let listed = alone["listed"].as_array().unwrap();
    assert_eq!(listed[0]["names"], "deeper/", "{alone}");
    assert!(
        listed[1]["names"].as_str().unwrap().contains("inside.txt/"),
        "{alone}"
    );
    for (at, error) in [
        (2, "denied"),
        (3, "denied"),
        (4, "denied"),
        (5, "not-a-folder"),
        (6, "denied"),
        (7, "not-found"),
    ] {
        assert_eq!(listed[at]["error"], error, "{at}: {alone}");
    }
    for wait_ms in [0, 200] {
        let ahead = call(
            json!({"action": "list_packed", "ahead": folders, "paths": folders, "wait_ms": wait_ms}),
        );
        assert_eq!(ahead, alone, "listed ahead, after {wait_ms} ms");
    }
    // A hint for folders never asked for changes nothing.
    let other = call(
        json!({"action": "list_packed", "ahead": ["sub", ".ssh"], "paths": ["."], "wait_ms": 50}),
    );
    assert_eq!(other["listed"][0], alone["listed"][1], "{other}");
}
