//! File-tool benchmarks against the native tools, on a generated tree (see
//! BENCHMARKS.md for figures and machine).
//!
//! `cargo bench -p toolcell --bench files`
//!
//! The tree: 20,000 files of about 10 KB (200 MB) in three folder levels,
//! 1% of them containing a literal, 2% named `*.md`, some binaries, and a
//! `node_modules` folder that an `.ignore` file lists. Needs `rg` and
//! `fdfind` (Debian's `ripgrep` and `fd-find`). Each case runs the
//! `toolcell` binary (so process start-up is included, as for the native
//! command) [`RUNS`] times or more (as many as [`CASE_TIME`] holds, up to
//! [`MAX_RUNS`]), alternating with the native command; medians are
//! reported.

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
/// One file in this many is a `.md` (for the search by name).
const DOC_EVERY: usize = 50;
const NEEDLE: &str = "toolcell_needle_literal";
/// Rounds per case at least: whole processes are noisy, the median of 9
/// less so.
const RUNS: usize = 9;
/// Time a case's rounds take at least, and rounds at most: a process of a
/// few milliseconds gets many more rounds than 9 (its median moved by a
/// tenth between runs of 9 on a virtual machine), a search of 100 ms its 9.
const CASE_TIME: Duration = Duration::from_secs(1);
const MAX_RUNS: usize = 201;

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

    let content = format!(r#"{{"path": ".", "query": "{NEEDLE}", "max_results": 1000}}"#);
    compare(
        &root,
        &cache,
        "search_files content (literal in 1% of files)",
        &["tools", "call", "search_files", "--args", &content],
        "rg",
        &["-n", NEEDLE],
    );
    compare(
        &root,
        &cache,
        "search_files content (vs grep, generated folder left out)",
        &["tools", "call", "search_files", "--args", &content],
        "grep",
        &["-rn", "--exclude-dir=node_modules", NEEDLE, "."],
    );
    let names = r#"{"path": ".", "query": "*.md", "mode": "name", "max_results": 1000}"#;
    compare(
        &root,
        &cache,
        "search_files by name (*.md)",
        &["tools", "call", "search_files", "--args", names],
        "fdfind",
        &["-g", "*.md"],
    );
    let list = r#"{"path": ".", "recursive": true, "max_depth": 64, "include_hidden": true, "include_ignored": true}"#;
    compare(
        &root,
        &cache,
        "list_directory recursive, every entry",
        &["tools", "call", "list_directory", "--args", list],
        "find",
        &["."],
    );
    let detailed = r#"{"path": ".", "recursive": true, "max_depth": 64, "include_hidden": true, "include_ignored": true, "details": true}"#;
    // The same work: a stat of every entry for its size and modified time.
    compare(
        &root,
        &cache,
        "list_directory with details (vs find -printf)",
        &["tools", "call", "list_directory", "--args", detailed],
        "find",
        &[".", "-printf", "%y %s %T@ %p\n"],
    );
    let read = r#"{"path": "one_mb.txt", "start_line": 1, "end_line": 1000000}"#;
    compare(
        &root,
        &cache,
        "read_file 1 MB",
        &["tools", "call", "read_file", "--args", read],
        "cat",
        &["one_mb.txt"],
    );
    let small = r#"{"path": "small.txt"}"#;
    compare(
        &root,
        &cache,
        "one `tools call read_file` process (small file)",
        &["tools", "call", "read_file", "--args", small],
        "cat",
        &["small.txt"],
    );
    compare(
        &root,
        &cache,
        "`toolcell tools list`",
        &["tools", "list"],
        "cat",
        &["small.txt"],
    );
    compare(
        &root,
        &cache,
        "`toolcell --version`",
        &["--version"],
        "cat",
        &["small.txt"],
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
    let round =
        time(root, cache, None, toolcell_args) + time(root, cache, Some(native), native_args);
    let runs = (CASE_TIME.as_secs_f64() / round.as_secs_f64()) as usize;
    let runs = runs.clamp(RUNS, MAX_RUNS) | 1;
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..runs {
        ours.push(time(root, cache, None, toolcell_args));
        theirs.push(time(root, cache, Some(native), native_args));
    }
    let (ours, theirs) = (median(ours), median(theirs));
    println!(
        "{label:<48} toolcell {:>8.2} ms   {native} {:>8.2} ms   ratio {:.2}x   ({runs} rounds)",
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
        } else if index % DOC_EVERY == 3 {
            format!("doc{index}.md")
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
    std::fs::write(root.join("small.txt"), "a small file\n").unwrap();
    // node_modules is left out by every side: search_files as a generated
    // folder, ripgrep and fd by this file (which they honour outside a git
    // repository too).
    std::fs::write(root.join(".ignore"), "node_modules/\n").unwrap();
}
