//! Golden tests of the errors a bad `toolcell.toml` gives (see
//! `tests/ui/config/README.md`): the file, the line and column of the key's
//! own value, the key, what is wrong and the fix. `BLESS=1` rewrites the
//! expected files.

use crate::harness::{Golden, Workspace};
use std::path::Path;

/// Cases at least: one per section of the config, and the grant a tool's
/// manifest does not ask for.
const MIN_CASES: usize = 12;

#[test]
fn bad_configs_give_the_expected_errors() {
    let cases_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/ui/config");
    let mut cases: Vec<_> = std::fs::read_dir(&cases_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= MIN_CASES, "golden cases missing: {cases:?}");
    let mut golden = Golden::new();
    for case in &cases {
        let name = case.file_stem().unwrap().to_string_lossy().to_string();
        let ws = Workspace::new();
        ws.write("toolcell.toml", &std::fs::read_to_string(case).unwrap());
        let run = ws.run(&["tools", "list"]);
        let mut actual = format!("exit {}\n{}", run.code, run.stderr);
        for root in [ws.root.canonicalize().unwrap(), ws.root.clone()] {
            actual = actual.replace(root.to_str().unwrap(), "$DIR");
        }
        assert!(
            actual.contains("$DIR/toolcell.toml:") && actual.contains("fix: "),
            "{name}: every config problem names its file, line and fix: {actual}"
        );
        golden.check(&name, &case.with_extension("err"), &actual);
    }
    golden.finish();
}
