//! File-tool benchmarks against the native tools, on a generated tree (see
//! BENCHMARKS.md for figures and machine).
//!
//! `cargo bench -p toolcell --bench files`
//!
//! The tree: 20,000 files of about 10 KB (200 MB) in three folder levels,
//! 1% of them containing a literal, some binaries, and a `node_modules`
//! folder. Each case runs the `toolcell` binary (so process start-up is
//! included, as for the native command) [`RUNS`] times, alternating with the
//! native command; medians are reported.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: usize = 20_000;
const FILE_BYTES: usize = 10_000;
/// One file in this many holds the needle: 1%.
const NEEDLE_EVERY: usize = 100;
/// One file in this many is binary.
const BINARY_EVERY: usize = 400;
/// Files under node_modules (part of the 20,000).
const NODE_MODULES_FILES: usize = 1_000;
const NEEDLE: &str = "toolcell_needle_literal";
const RUNS: usize = 5;

fn main() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    let cache = root.join("../files-bench-cache");
    let started = Instant::now();
    generate(&root);
    println!(
        "generated {FILES} files ({} MB) in {:.1} s\n",
        FILES * FILE_BYTES / 1_000_000,
        started.elapsed().as_secs_f64()
    );
    std::fs::write(
        root.join("toolcell.toml"),
        "[tools.list_directory]\nenv = [\"TOOLCELL_LIST_MAX_ENTRIES\"]\nmax_output_bytes = 67108864\n",
    )
    .unwrap();
    // The grant of a variable takes the user's trust, as for a person.
    let trusted = Command::new(env!("CARGO_BIN_EXE_toolcell"))
        .arg("trust")
        .current_dir(&root)
        .env("TOOLCELL_DATA_DIR", &cache)
        .output()
        .unwrap();
    assert!(trusted.status.success(), "toolcell trust: {trusted:?}");

    let search = format!(r#"{{"path": ".", "query": "{NEEDLE}", "max_results": 1000}}"#);
    compare(
        &root,
        &cache,
        "search_files content (literal in 1% of files)",
        &["tools", "call", "search_files", "--args", &search],
        "grep",
        &["-rn", NEEDLE, "."],
    );
    let list = r#"{"path": ".", "recursive": true, "max_depth": 64, "include_hidden": true}"#;
    compare(
        &root,
        &cache,
        "list_directory recursive, every entry",
        &["tools", "call", "list_directory", "--args", list],
        "find",
        &["."],
    );
    let read = r#"{"path": "one_mb.txt", "start_line": 1, "end_line": 1000000}"#;
    // The same work as list_directory: a stat of every entry for its type,
    // size and modified time.
    compare(
        &root,
        &cache,
        "list_directory recursive (vs find -printf: stats too)",
        &["tools", "call", "list_directory", "--args", list],
        "find",
        &[".", "-printf", "%y %s %T@ %p\n"],
    );
    compare(
        &root,
        &cache,
        "read_file 1 MB",
        &["tools", "call", "read_file", "--args", read],
        "cat",
        &["one_mb.txt"],
    );
}

/// Runs toolcell and the native command alternately and prints medians.
fn compare(
    root: &Path,
    cache: &Path,
    label: &str,
    toolcell_args: &[&str],
    native: &str,
    native_args: &[&str],
) {
    // Warm the page cache and the compile cache.
    time(root, cache, None, toolcell_args);
    time(root, cache, Some(native), native_args);
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..RUNS {
        ours.push(time(root, cache, None, toolcell_args));
        theirs.push(time(root, cache, Some(native), native_args));
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!(
        "{label:<48} toolcell {:>8.1} ms   {native} {:>8.1} ms   ratio {:.2}x",
        ms(ours),
        ms(theirs),
        ours.as_secs_f64() / theirs.as_secs_f64()
    );
}

fn time(root: &Path, cache: &Path, native: Option<&str>, args: &[&str]) -> Duration {
    let mut command = match native {
        Some(program) => Command::new(program),
        None => {
            let mut c = Command::new(env!("CARGO_BIN_EXE_toolcell"));
            c.env("TOOLCELL_CACHE_DIR", cache)
                .env("TOOLCELL_DATA_DIR", cache)
                .env("TOOLCELL_LIST_MAX_ENTRIES", "1000000");
            c
        }
    };
    command
        .args(args)
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let status = command.status().unwrap();
    let elapsed = started.elapsed();
    // grep exits 1 when nothing matched; anything else is a failed run.
    assert!(
        status.code().is_some_and(|c| c == 0),
        "{native:?} {args:?} failed: {status}"
    );
    elapsed
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A deterministic tree: text of common words, the needle in 1% of files,
/// a few binaries, a node_modules folder.
fn generate(root: &Path) {
    const WORDS: &[&str] = &[
        "alpha",
        "beta",
        "gamma",
        "delta",
        "sandbox",
        "tool",
        "cell",
        "model",
        "workspace",
        "file",
        "search",
        "line",
        "text",
        "value",
        "result",
        "error",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for index in 0..FILES {
        let folder = if index < NODE_MODULES_FILES {
            format!("node_modules/pkg{}/lib", index % 50)
        } else {
            format!("src/area{}/part{}", index % 20, (index / 20) % 10)
        };
        let dir = root.join(&folder);
        std::fs::create_dir_all(&dir).unwrap();
        let binary = index % BINARY_EVERY == 7;
        let name = if binary {
            format!("blob{index}.bin")
        } else {
            format!("file{index}.txt")
        };
        let mut text = String::with_capacity(FILE_BYTES + 100);
        let needle_line = (index % NEEDLE_EVERY == 0).then(|| (next() % 100) as usize);
        let mut line = 0;
        while text.len() < FILE_BYTES {
            if needle_line == Some(line) {
                text.push_str("here is the ");
                text.push_str(NEEDLE);
                text.push('\n');
            }
            for _ in 0..12 {
                text.push_str(WORDS[(next() % WORDS.len() as u64) as usize]);
                text.push(' ');
            }
            text.push('\n');
            line += 1;
        }
        let mut file = std::fs::File::create(dir.join(name)).unwrap();
        if binary {
            file.write_all(b"\x00\x01\x02binary").unwrap();
        }
        file.write_all(text.as_bytes()).unwrap();
    }
    let one_mb: String = (0..)
        .map(|i| format!("line {i} of a one-megabyte file for read_file\n"))
        .take_while({
            let mut total = 0;
            move |l: &String| {
                total += l.len();
                total <= 1_000_000
            }
        })
        .collect();
    std::fs::write(root.join("one_mb.txt"), one_mb).unwrap();
}
