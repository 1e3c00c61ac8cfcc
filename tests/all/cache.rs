//! The compiled-component cache: used on the second start, rebuilt when the
//! wasm changes.

use crate::fixture;
use crate::harness::Workspace;

fn cache_entries(ws: &Workspace) -> Vec<std::path::PathBuf> {
    let dir = ws.cache.join("components");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    entries.sort();
    entries
}

fn logged_call(ws: &Workspace, tool: &str, args: &str) -> String {
    let output = ws
        .command(&["tools", "call", tool, "--yes", "--args", args])
        .env("TOOLCELL_LOG", "info")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Appends a custom section: the component behaves the same, its hash changes.
fn with_custom_section(wasm: &[u8]) -> Vec<u8> {
    let name = b"toolcell-test";
    let payload = b"rebuilt";
    let mut out = wasm.to_vec();
    out.push(0); // custom section id
    out.push((1 + name.len() + payload.len()) as u8);
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.extend_from_slice(payload);
    out
}

#[test]
fn compiled_once_then_loaded_and_rebuilt_when_the_wasm_changes() {
    let ws = Workspace::new().with_own_cache();
    ws.write("a.txt", "a\n");
    let first = logged_call(&ws, "read_file", r#"{"path": "a.txt"}"#);
    assert!(
        first.contains("read_file: component compiled and stored in the compile cache"),
        "{first}"
    );
    let entries = cache_entries(&ws);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let modified = std::fs::metadata(&entries[0]).unwrap().modified().unwrap();

    let second = logged_call(&ws, "read_file", r#"{"path": "a.txt"}"#);
    assert!(
        second.contains("read_file: component loaded from the compile cache"),
        "{second}"
    );
    assert_eq!(cache_entries(&ws), entries);
    assert_eq!(
        std::fs::metadata(&entries[0]).unwrap().modified().unwrap(),
        modified,
        "the entry was rewritten"
    );

    // An installed tool whose wasm changes is compiled anew.
    let probe = fixture::probe();
    let tool_dir = ws.outer.join("probe-src");
    std::fs::create_dir(&tool_dir).unwrap();
    std::fs::copy(probe.folder.join("tool.toml"), tool_dir.join("tool.toml")).unwrap();
    std::fs::copy(&probe.wasm, tool_dir.join("probe.wasm")).unwrap();
    assert_eq!(
        ws.run(&["tools", "add", "--yes", tool_dir.to_str().unwrap()])
            .code,
        0
    );
    let installed = logged_call(&ws, "probe", r#"{"action": "noop"}"#);
    assert!(
        installed.contains("probe: component loaded from the compile cache"),
        "`tools add` compiled it already: {installed}"
    );
    assert_eq!(cache_entries(&ws).len(), 2);

    let changed = with_custom_section(&std::fs::read(&probe.wasm).unwrap());
    std::fs::write(ws.root.join(".toolcell/tools/probe/tool.wasm"), changed).unwrap();
    let after_change = logged_call(&ws, "probe", r#"{"action": "noop"}"#);
    assert!(
        after_change.contains("probe: component compiled and stored in the compile cache"),
        "{after_change}"
    );
    assert_eq!(cache_entries(&ws).len(), 3);
    let again = logged_call(&ws, "probe", r#"{"action": "noop"}"#);
    assert!(
        again.contains("probe: component loaded from the compile cache"),
        "{again}"
    );
}

#[test]
fn a_corrupt_cache_entry_is_replaced() {
    let ws = Workspace::new().with_own_cache();
    ws.write("a.txt", "a\n");
    logged_call(&ws, "read_file", r#"{"path": "a.txt"}"#);
    let entries = cache_entries(&ws);
    std::fs::write(&entries[0], b"not a compiled component").unwrap();
    let log = logged_call(&ws, "read_file", r#"{"path": "a.txt"}"#);
    assert!(log.contains("ignoring unusable cache entry"), "{log}");
    assert!(
        log.contains("read_file: component compiled and stored in the compile cache"),
        "{log}"
    );
    let log = logged_call(&ws, "read_file", r#"{"path": "a.txt"}"#);
    assert!(
        log.contains("read_file: component loaded from the compile cache"),
        "{log}"
    );
}
