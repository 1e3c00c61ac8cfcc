//! Golden tests of the errors `toolcell tools add` gives for bad tools (see
//! `tests/ui/manifests/README.md`). `BLESS=1` rewrites the expected files.

use crate::fixture;
use crate::harness::{Golden, Workspace};
use std::path::Path;

#[test]
fn bad_manifests_give_the_expected_errors() {
    let cases_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/manifests");
    let mut cases: Vec<_> = std::fs::read_dir(&cases_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "golden cases missing: {cases:?}");
    let mut golden = Golden::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let ws = Workspace::new();
        let tool_dir = ws.outer.join("tool");
        std::fs::create_dir(&tool_dir).unwrap();
        std::fs::copy(case.join("tool.toml"), tool_dir.join("tool.toml")).unwrap();
        let wat = case.join("component.wat");
        let wasm = if wat.exists() {
            wat::parse_file(&wat).unwrap()
        } else {
            std::fs::read(&fixture::probe().wasm).unwrap()
        };
        std::fs::write(tool_dir.join("tool.wasm"), wasm).unwrap();

        let run = ws.run(&["tools", "add", tool_dir.to_str().unwrap()]);
        assert_eq!(
            run.code, 1,
            "{name}: `tools add` should fail with exit code 1: {run:?}"
        );
        let actual = run.stderr.replace(tool_dir.to_str().unwrap(), "$DIR");
        assert!(
            !ws.root
                .join(".toolcell/tools")
                .read_dir()
                .is_ok_and(|mut d| d.next().is_some()),
            "{name}: something was installed"
        );
        golden.check(&name, &case.join("expected.err"), &actual);
    }
    golden.finish();
}
