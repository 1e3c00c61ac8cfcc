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
    let names = entry_names(&envelope["result"]);
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
    let names = entry_names(&envelope["result"]);
    assert_eq!(names, ["b", "b/c", "b/c/d"]);
}

/// Names of a listing's entries, in its order.
fn entry_names(listing: &Value) -> Vec<String> {
    listing["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn list_directory_honours_ignore_files_and_gives_details_when_asked() {
    let ws = Workspace::new();
    ws.write(".gitignore", "build/\n*.log\n!keep.log\n");
    ws.write("src/.ignore", "draft.md\n");
    ws.write("src/main.rs", "fn main() {}\n");
    ws.write("src/draft.md", "draft\n");
    ws.write("build/out.txt", "x");
    ws.write("app.log", "x");
    ws.write("keep.log", "kept\n");
    let (code, envelope) = ws.call("list_directory", json!({"path": ".", "recursive": true}));
    assert_eq!(code, 0, "{envelope}");
    let listing = &envelope["result"];
    assert_eq!(
        entry_names(listing),
        ["keep.log", "src", "src/main.rs"],
        "{listing}"
    );
    // build/, app.log and src/draft.md; .gitignore is hidden.
    assert_eq!(listing["ignored_skipped"], 3, "{listing}");
    assert_eq!(listing["hidden_skipped"], 2, "{listing}");
    assert!(listing["entries"][0].get("size").is_none(), "{listing}");

    // The rules of the folders above the listed one apply too.
    let (_, envelope) = ws.call("list_directory", json!({"path": "src"}));
    assert_eq!(entry_names(&envelope["result"]), ["main.rs"]);

    let (_, envelope) = ws.call(
        "list_directory",
        json!({"path": ".", "recursive": true, "include_ignored": true, "details": true}),
    );
    let listing = &envelope["result"];
    assert_eq!(
        entry_names(listing),
        [
            "app.log",
            "build",
            "build/out.txt",
            "keep.log",
            "src",
            "src/draft.md",
            "src/main.rs"
        ]
    );
    assert_eq!(listing["entries"][3]["size"], 5, "{listing}");
    assert_eq!(listing["entries"][1]["size"], 0, "{listing}");
    assert!(listing["entries"][3]["modified"].as_u64().unwrap() > 1_600_000_000);
}

/// An ignore file whose every line names folders (`cache/`) is never put
/// to files at all: a file of that name stays, the folders go, anchored
/// lines (`/top_only/`) hold at their own folder only, and CRLF line ends
/// and comments change nothing.
#[test]
fn an_ignore_file_of_folders_only_leaves_files_of_those_names() {
    let ws = Workspace::new();
    ws.write(
        "deep/.ignore",
        "# folders only\r\ncache/\r\n/top_only/  \r\n\r\n",
    );
    ws.write("deep/cache", "a file named as the folder rule is\n");
    ws.write("deep/x/cache/inner.txt", "x");
    ws.write("deep/top_only/a.txt", "x");
    ws.write("deep/x/top_only/b.txt", "x");
    ws.write("deep/notes.txt", "x");
    let (code, envelope) = ws.call("list_directory", json!({"path": "deep", "recursive": true}));
    assert_eq!(code, 0, "{envelope}");
    let listing = &envelope["result"];
    assert_eq!(
        entry_names(listing),
        ["cache", "notes.txt", "x", "x/top_only", "x/top_only/b.txt"],
        "{listing}"
    );
    assert_eq!(listing["ignored_skipped"], 2, "{listing}");
    // A search walks the same way.
    let (_, envelope) = ws.call(
        "search_files",
        json!({"path": "deep", "query": "cache", "mode": "name"}),
    );
    let names: Vec<&str> = envelope["result"]["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["deep/cache"], "{envelope}");
}

/// An ignore file that is a named pipe (or any file but a regular one) is
/// passed over, not opened: a listing and a search of its folder finish at
/// once instead of waiting for a writer until their time runs out.
#[test]
fn an_ignore_file_that_is_a_named_pipe_is_passed_over() {
    let ws = Workspace::new();
    ws.write("piped/sub/x.txt", "needle\n");
    for name in ["piped/.ignore", "piped/sub/.gitignore"] {
        let made = std::process::Command::new("mkfifo")
            .arg(ws.root.join(name))
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo {name}");
    }
    let started = std::time::Instant::now();
    let (code, envelope) = ws.call(
        "list_directory",
        json!({"path": "piped", "recursive": true}),
    );
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(
        entry_names(&envelope["result"]),
        ["sub", "sub/x.txt"],
        "{envelope}"
    );
    let (code, envelope) = ws.call("search_files", json!({"path": "piped", "query": "needle"}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(
        envelope["result"]["matches"][0]["path"], "piped/sub/x.txt",
        "{envelope}"
    );
    // Well inside the tools' time limit, which a waiting open would reach.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// The listing's JSON is written by hand (`toolcell_guest::json`): names
/// that JSON must escape come back as they are on disk, in byte order.
#[test]
fn list_directory_gives_names_json_must_escape_as_they_are() {
    let ws = Workspace::new();
    let names = [
        "quote\"d.txt",
        "back\\slash.txt",
        "line\nbreak.txt",
        "tab\there.txt",
        "esc\u{1b}[31mred.txt",
        "ctl\u{1}\u{8}\u{c}\u{1f}.txt",
        "del\u{7f}.txt",
        "名前 ünïcode \u{202e}.txt",
    ];
    for name in names {
        ws.write(&format!("odd/{name}"), "x");
    }
    let (code, envelope) = ws.call("list_directory", json!({"path": "odd", "details": true}));
    assert_eq!(code, 0, "{envelope}");
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    let listing = &envelope["result"];
    assert_eq!(entry_names(listing), expected, "{listing}");
    assert_eq!(listing["path"], "odd");
    assert_eq!(listing["truncated"], false);
    assert!(listing.get("omitted").is_none(), "{listing}");
    for entry in listing["entries"].as_array().unwrap() {
        assert_eq!(entry["type"], "file", "{entry}");
        assert_eq!(entry["size"], 1, "{entry}");
    }
}

#[test]
fn list_directory_says_how_many_entries_it_left_out_and_may_list_more() {
    let ws = Workspace::new();
    for i in 0..520 {
        ws.write(&format!("many/f{i:03}.txt"), "x");
    }
    let (_, envelope) = ws.call("list_directory", json!({"path": "many"}));
    assert_eq!(
        envelope["result"]["omitted"], 20,
        "{}",
        envelope["result"]["truncated"]
    );
    let (code, envelope) = ws.call(
        "list_directory",
        json!({"path": "many", "max_entries": 600}),
    );
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(envelope["result"]["entries"].as_array().unwrap().len(), 520);
    assert_eq!(envelope["result"]["truncated"], false);
    assert!(envelope["result"].get("omitted").is_none());
    // Past the host's bound the schema refuses, saying so.
    let (kind, message) = ws.call_refused(
        "list_directory",
        json!({"path": "many", "max_entries": 5001}),
    );
    assert_eq!(kind, "invalid-args", "{message}");
}

/// A tree with the shapes a walk meets: nested folders, hidden entries, an
/// ignore file, a link, a binary, several roots of matches.
fn native_tree() -> Workspace {
    let ws = Workspace::new();
    for i in 0..60 {
        let body = if i % 7 == 0 {
            format!("line one\nthe Needle_Word here {i}\nand needle_word again\n")
        } else {
            format!("nothing in {i}\n")
        };
        ws.write(&format!("src/a{}/b{}/f{i}.txt", i % 3, i % 5), &body);
        if i % 10 == 0 {
            ws.write(&format!("docs/d{i}.md"), "needle_word\n");
        }
    }
    ws.write("node_modules/pkg/x.md", "needle_word\n");
    ws.write(".hidden/h.md", "needle_word\n");
    // `.ignore` rules hold outside a git repository for fd and ripgrep too.
    ws.write(".ignore", "node_modules/\n");
    std::os::unix::fs::symlink("docs", ws.root.join("docs_link")).unwrap();
    std::fs::write(ws.root.join("src/blob.bin"), b"\0\x01needle_word").unwrap();
    ws
}

fn native_lines(program: &str, args: &[&str], root: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new(program)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| panic!("{program} must be installed (.ci/run installs it): {e}"));
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{program}: {out:?}"
    );
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        .filter(|l| !l.is_empty() && l != ".")
        .collect();
    lines.sort();
    lines
}

/// A content search's matches as `rg -n` prints them (`path:line:text`),
/// sorted.
fn match_lines(found: &Value) -> Vec<String> {
    let mut lines: Vec<String> = found["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}:{}:{}",
                m["path"].as_str().unwrap(),
                m["line"],
                m["text"].as_str().unwrap()
            )
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn the_file_tools_find_what_find_fd_and_ripgrep_find() {
    let ws = native_tree();
    // toolcell writes its own files into the workspace: leave them out.
    let own = |p: &String| !p.starts_with(".toolcell") && p != "toolcell.toml";

    let (code, envelope) = ws.call(
        "list_directory",
        json!({"path": ".", "recursive": true, "max_depth": 64, "include_hidden": true, "include_ignored": true, "max_entries": 5000}),
    );
    assert_eq!(code, 0, "{envelope}");
    let mut listed = entry_names(&envelope["result"]);
    listed.retain(own);
    listed.sort();
    let mut found = native_lines("find", &["."], &ws.root);
    found.retain(own);
    assert_eq!(listed, found);

    let (_, envelope) = ws.call(
        "search_files",
        json!({"path": ".", "query": "*.md", "mode": "name", "max_results": 1000}),
    );
    let mut named = paths(&envelope["result"]["names"]);
    named.retain(own);
    assert_eq!(named, native_lines("fdfind", &["-g", "*.md"], &ws.root));

    let (_, envelope) = ws.call(
        "search_files",
        json!({"path": ".", "query": "needle_word", "case_sensitive": true, "max_results": 1000}),
    );
    let lines = match_lines(&envelope["result"]);
    assert_eq!(
        lines,
        native_lines("rg", &["-n", "--no-heading", "needle_word"], &ws.root)
    );

    // Case-insensitive: the same lines as `rg -i`.
    let (_, envelope) = ws.call(
        "search_files",
        json!({"path": ".", "query": "NEEDLE_WORD", "max_results": 1000}),
    );
    let lines = match_lines(&envelope["result"]);
    assert_eq!(
        lines,
        native_lines(
            "rg",
            &[
                "--no-require-git",
                "-n",
                "-i",
                "--no-heading",
                "needle_word"
            ],
            &ws.root
        )
    );
}

/// A folder reached through a link that stays inside the workspace is
/// listed and searched as before the fast walk; the link's own entries are
/// the folder's.
#[test]
fn a_folder_through_a_link_inside_the_workspace_is_listed_and_searched() {
    let ws = Workspace::new();
    ws.write("real/sub/a.txt", "hidden treasure\n");
    std::os::unix::fs::symlink("real", ws.root.join("linkdir")).unwrap();
    let (code, envelope) = ws.call(
        "list_directory",
        json!({"path": "linkdir", "recursive": true}),
    );
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(entry_names(&envelope["result"]), ["sub", "sub/a.txt"]);
    let (code, envelope) = ws.call(
        "search_files",
        json!({"path": "linkdir", "query": "treasure"}),
    );
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(paths(&envelope["result"]["matches"]), ["linkdir/sub/a.txt"]);
}

/// A content search reads its files in batches, each read ahead while the
/// one before it is searched: over many batches it finds what ripgrep
/// finds, passes over the secrets of its last batch, and stops at its cap
/// where judging one file after another would.
#[test]
fn a_search_over_many_batches_finds_what_ripgrep_finds_and_stops_at_its_cap() {
    let ws = Workspace::new();
    for i in 0..300 {
        let body = if i % 7 == 0 {
            format!("one\nthe needle_word {i}\n")
        } else {
            format!("nothing {i}\n")
        };
        ws.write(&format!("d{}/f{i:03}.txt", i % 9), &body);
    }
    // The last folder walked: its files are in the last batch.
    ws.write("zz/server.pem", "needle_word in a key\n");
    ws.write("zz/.env", "needle_word=token\n");
    let search = |max_results: u64| {
        let (code, envelope) = ws.call(
            "search_files",
            json!({"path": ".", "query": "needle_word", "case_sensitive": true, "max_results": max_results}),
        );
        assert_eq!(code, 0, "{envelope}");
        envelope["result"].clone()
    };
    let all = search(1000);
    let mut native = native_lines("rg", &["-n", "--no-heading", "needle_word"], &ws.root);
    native.retain(|line| !line.starts_with("zz/"));
    assert_eq!(native.len(), 43, "every seventh file: {native:?}");
    assert_eq!(match_lines(&all), native, "{all}");
    assert_eq!(all["truncated"], false, "{all}");

    let capped = search(10);
    assert_eq!(capped["truncated"], true, "{capped}");
    assert_eq!(
        capped["matches"].as_array().unwrap()[..],
        all["matches"].as_array().unwrap()[..10],
        "the first ten in the walk's order"
    );
}

/// Sizes and modified times are looked at within each folder, a few
/// hundred entries at a time: every entry of a large folder gets its own,
/// a folder's size is 0, and a capped listing is no different.
#[test]
fn details_of_a_large_folder_are_each_entrys_own() {
    let ws = Workspace::new();
    for i in 0..600 {
        ws.write(&format!("many/f{i:03}.txt"), &"x".repeat(i));
    }
    ws.write("many/zz/inner.txt", "inner\n");
    let list = |max_entries: u64| {
        ws.call_ok(
            "list_directory",
            json!({"path": "many", "details": true, "max_entries": max_entries}),
        )
    };
    let listed = list(5000);
    let entries = listed["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 601, "{listed}");
    for entry in entries {
        let name = entry["name"].as_str().unwrap();
        let meta = std::fs::symlink_metadata(ws.root.join("many").join(name)).unwrap();
        let size = if meta.is_dir() { 0 } else { meta.len() };
        let modified = meta
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert_eq!(entry["size"], size, "{entry}");
        assert_eq!(entry["modified"], modified, "{entry}");
    }
    let capped = list(300);
    assert_eq!(
        capped["entries"].as_array().unwrap()[..],
        entries[..300],
        "{capped}"
    );
}
