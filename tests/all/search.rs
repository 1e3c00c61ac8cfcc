//! search_files (names and contents, skips and caps) and list_directory's filters.

use crate::harness::Workspace;
use serde_json::{Value, json};

fn paths(list: &Value) -> Vec<String> {
    let mut paths: Vec<String> = list
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| m["path"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
}

fn tree() -> Workspace {
    let ws = Workspace::new();
    ws.write(
        "src/main.rs",
        "fn main() {\n    let needle = 1;\n    println!(\"{needle}\");\n}\n",
    );
    ws.write("src/lib.rs", "// no match here\n");
    ws.write(
        "docs/guide.md",
        "# Guide\nFind the NEEDLE in the haystack.\n",
    );
    ws.write("node_modules/pkg/index.js", "needle();\n");
    ws.write("target/debug/out.txt", "needle\n");
    ws.write(".hidden/secret.txt", "needle\n");
    ws.write("ignored/generated.txt", "needle\n");
    ws.write(".gitignore", "ignored/\n*.log\n");
    ws.write("app.log", "needle\n");
    ws.write(
        "big/large.txt",
        &format!("{}needle\n", "x".repeat(600 * 1024)),
    );
    std::fs::write(ws.root.join("blob.bin"), b"needle\0binary").unwrap();
    std::os::unix::fs::symlink(ws.root.join("src/main.rs"), ws.root.join("link.rs")).unwrap();
    ws
}

#[test]
fn content_search_reports_matches_and_what_it_skipped() {
    let ws = tree();
    let r = ws.call_ok("search_files", json!({"path": ".", "query": "needle"}));
    let matches = r["matches"].as_array().unwrap();
    let found: Vec<(String, u64, u64)> = matches
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_string(),
                m["line"].as_u64().unwrap(),
                m["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(found.contains(&("src/main.rs".into(), 2, 9)), "{r}");
    assert!(
        found.contains(&("docs/guide.md".into(), 2, 10)),
        "case-insensitive by default: {r}"
    );
    assert_eq!(
        matches.len(),
        3,
        "main.rs lines 2 and 3, guide.md line 2: {r}"
    );
    let line = matches
        .iter()
        .find(|m| m["path"] == "src/main.rs" && m["line"] == 2)
        .unwrap();
    assert_eq!(line["text"], "    let needle = 1;");
    // Generated folders, hidden files, .gitignore'd paths: never searched.
    for skipped in ["node_modules", "target", ".hidden", "ignored", "app.log"] {
        assert!(
            !r.to_string().contains(&format!("\"path\":\"{skipped}")),
            "{skipped} searched: {r}"
        );
    }
    assert_eq!(r["files_skipped"]["binary"], 1, "{r}");
    assert_eq!(r["files_skipped"]["too_large"], 1, "{r}");
    assert_eq!(r["files_skipped"]["symlink"], 1, "{r}");
    assert_eq!(r["folders_skipped"], 2, "node_modules and target: {r}");
    assert_eq!(r["truncated"], false);
    assert!(r["files_scanned"].as_u64().unwrap() >= 4, "{r}");

    let r = ws.call_ok(
        "search_files",
        json!({"path": ".", "query": "NEEDLE", "case_sensitive": true}),
    );
    assert_eq!(paths(&r["matches"]), ["docs/guide.md"]);
    let r = ws.call_ok(
        "search_files",
        json!({"path": ".", "query": "let \\w+ = \\d", "regex": true}),
    );
    assert_eq!(paths(&r["matches"]), ["src/main.rs"]);
    let r = ws.call_ok(
        "search_files",
        json!({"path": "src", "query": "needle", "extensions": ["md"]}),
    );
    // Nothing found: the list is there and empty (the shape follows the mode).
    assert_eq!(r["matches"], json!([]), "{r}");
    assert!(
        r.get("names").is_none(),
        "a content search lists no names: {r}"
    );
    let (_, message) = ws.call_refused(
        "search_files",
        json!({"path": ".", "query": "(", "regex": true}),
    );
    assert!(
        message.contains("not a valid regular expression"),
        "{message}"
    );
}

#[test]
fn name_search_by_glob_or_substring() {
    let ws = tree();
    let r = ws.call_ok(
        "search_files",
        json!({"path": ".", "query": "*.rs", "mode": "name"}),
    );
    assert_eq!(paths(&r["names"]), ["src/lib.rs", "src/main.rs"]);
    let r = ws.call_ok(
        "search_files",
        json!({"path": ".", "query": "GUIDE", "mode": "name"}),
    );
    assert_eq!(paths(&r["names"]), ["docs/guide.md"]);
    let r = ws.call_ok(
        "search_files",
        json!({"path": ".", "query": "main", "mode": "both"}),
    );
    assert_eq!(paths(&r["names"]), ["src/main.rs"]);
    assert_eq!(
        paths(&r["matches"]),
        ["src/main.rs"],
        "fn main() matches the content too: {r}"
    );
}

#[test]
fn caps_say_truncated() {
    let ws = Workspace::new();
    let many: String = (0..50).map(|i| format!("hit {i}\n")).collect();
    ws.write("a.txt", &many);
    ws.write("b.txt", &many);
    ws.write("c.txt", &many);
    let r = ws.call_ok("search_files", json!({"path": ".", "query": "hit"}));
    assert_eq!(
        r["matches"].as_array().unwrap().len(),
        60,
        "20 per file: {r}"
    );
    assert_eq!(r["matches_not_listed"], 90);
    let r = ws.call_ok(
        "search_files",
        json!({"path": ".", "query": "hit", "max_results": 25}),
    );
    assert_eq!(r["matches"].as_array().unwrap().len(), 25);
    assert_eq!(r["truncated"], true);
    let long = format!("{}needle{}\n", "a".repeat(500), "b".repeat(500));
    ws.write("long.txt", &long);
    let r = ws.call_ok("search_files", json!({"path": ".", "query": "needle"}));
    let text = r["matches"][0]["text"].as_str().unwrap();
    assert!(
        text.chars().count() <= 202 && text.contains("needle"),
        "{text}"
    );
}

#[test]
fn list_directory_filters_by_extension() {
    let ws = tree();
    let (code, envelope) = ws.call(
        "list_directory",
        json!({"path": ".", "recursive": true, "extensions": ["rs"]}),
    );
    assert_eq!(code, 0, "{envelope}");
    let names: Vec<&str> = envelope["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["link.rs", "src/lib.rs", "src/main.rs"],
        "a symlink is listed by its name, not followed"
    );
}

#[test]
fn list_directory_caps_at_500_entries_and_says_so() {
    let ws = Workspace::new();
    for i in 0..520 {
        ws.write(&format!("many/f{i:03}.txt"), "x");
    }
    let (code, envelope) = ws.call("list_directory", json!({"path": "many"}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(envelope["result"]["entries"].as_array().unwrap().len(), 500);
    assert_eq!(envelope["result"]["truncated"], true);
    // Default depth 3 for a recursive listing.
    ws.write("a/b/c/d/deep.txt", "x");
    let (_, envelope) = ws.call("list_directory", json!({"path": "a", "recursive": true}));
    let names: Vec<&str> = envelope["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b", "b/c", "b/c/d"]);
}
