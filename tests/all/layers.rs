//! The shape of the crate, held to the drawing in ARCHITECTURE.md: each
//! folder of `host/src` is one layer and uses only the layers below it (a
//! module and its own children may know each other), the root holds little
//! more than `lib.rs` and `main.rs`, and no hand-written file grows past
//! what a reader takes in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files at the root of `host/src`: `lib.rs`, `main.rs` and at most a few
/// more; every other file lives in the folder of its concept.
const MAX_ROOT_FILES: usize = 6;

/// Lines of one hand-written source file.
const MAX_FILE_LINES: usize = 700;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The layers table of ARCHITECTURE.md: folder → floor.
fn floors() -> BTreeMap<String, u32> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text
        .split("\n## Layers")
        .nth(1)
        .expect("ARCHITECTURE.md has a `## Layers` section");
    let mut floors = BTreeMap::new();
    for line in section.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(floor) = cells.get(1).and_then(|c| c.parse::<u32>().ok()) else {
            continue;
        };
        for folder in cells[2].split(',') {
            let folder = folder.trim().trim_matches('`').trim_end_matches('/');
            assert!(
                floors.insert(folder.to_string(), floor).is_none(),
                "ARCHITECTURE.md names `{folder}` on two floors"
            );
        }
    }
    assert!(
        floors.len() > 5,
        "the layers table of ARCHITECTURE.md is empty"
    );
    floors
}

/// Every `.rs` file under `dir`, with its path from `host/src`.
fn sources(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, base, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The top-level modules a source file names as `crate::NAME`, outside
/// comments.
fn crate_modules(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

#[test]
fn every_folder_uses_only_the_layers_below_it() {
    let floors = floors();
    let src = root().join("host/src");
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    let mut wrong = Vec::new();
    for (file, text) in &files {
        let Some((folder, _)) = file.split_once('/') else {
            continue; // lib.rs and main.rs stand above every layer
        };
        let Some(&floor) = floors.get(folder) else {
            wrong.push(format!(
                "{file}: its folder `{folder}` is on no floor of ARCHITECTURE.md"
            ));
            continue;
        };
        for used in crate_modules(text) {
            if used == folder {
                continue;
            }
            match floors.get(&used) {
                Some(&below) if below < floor => {}
                Some(&other) => wrong.push(format!(
                    "{file} (floor {floor}) uses crate::{used} (floor {other})"
                )),
                None => wrong.push(format!("{file} uses crate::{used}, which is on no floor")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_root_holds_only_the_entry_points_and_no_file_is_too_long() {
    let src = root().join("host/src");
    let at_root: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        at_root.len() <= MAX_ROOT_FILES && at_root.iter().any(|f| f == "lib.rs"),
        "host/src holds {at_root:?}"
    );
    let mut files = Vec::new();
    sources(&src, &src, &mut files);
    let long: Vec<String> = files
        .iter()
        .map(|(file, text)| (file, text.lines().count()))
        .filter(|(_, lines)| *lines > MAX_FILE_LINES)
        .map(|(file, lines)| format!("{file}: {lines} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn crate_paths_are_read_outside_comments_and_macros_alone() {
    let found = crate_modules(
        "use crate::util::text;\n// crate::cli\nlet x = crate::call::view::Silent; $crate::cli::print_err\n",
    );
    assert_eq!(found, ["util", "call"]);
}
