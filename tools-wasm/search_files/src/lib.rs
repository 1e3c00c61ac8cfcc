//! `search_files`: find files by name, or lines by content, in the workspace.
//!
//! Walks by names and types ([`toolcell_guest::walk`], no `stat` of any
//! entry), in name order: `.gitignore` and `.ignore` rules are honoured as
//! ripgrep honours them, hidden entries and symlinks are skipped, and so
//! are the usual generated folders. Content is matched with the `regex` crate (literal
//! queries are escaped, so they get its literal fast paths); names by glob
//! (`globset`) when the query has glob characters, else by substring. What
//! was not searched is counted by reason, so "no match" is never confused
//! with "not looked at".

use globset::{GlobBuilder, GlobMatcher};
use memchr::memmem::Finder;
use regex::bytes::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toolcell_guest::ToolError;
use toolcell_guest::bindings::toolcell::tool::files::{self, ReadError};
use toolcell_guest::error::io_error;
use toolcell_guest::files::has_nul;
use toolcell_guest::path::WorkspacePath;
use toolcell_guest::walk::{self, EntryKind, Event, Flow, WalkOptions};

/// Folders of generated or vendored files: searching them drowns real
/// matches and costs most of the time.
const GENERATED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "dist",
    "build",
    "vendor",
    "coverage",
];
/// Files above this size are skipped for content: minified bundles, data, logs.
const MAX_FILE_BYTES: u64 = 512 * 1024;
/// Bytes inspected for a NUL to decide a file is binary, as grep does.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;
/// Results returned when the caller gives no max_results.
const DEFAULT_MAX_RESULTS: usize = 100;
/// Upper bound on max_results: more would not fit a model's context.
const MAX_RESULTS_CAP: usize = 1000;
/// Matches reported per file; the rest are counted.
const MAX_MATCHES_PER_FILE: usize = 20;
/// Characters of a matching line returned, around the match.
const MAX_LINE_CHARS: usize = 200;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Name,
    #[default]
    Content,
    Both,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    query: String,
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    case_sensitive: bool,
    #[serde(default)]
    regex: bool,
    extensions: Option<Vec<String>>,
    max_results: Option<usize>,
}

#[derive(Serialize)]
struct NameMatch {
    path: String,
}

#[derive(Serialize)]
struct LineMatch {
    path: String,
    line: usize,
    column: usize,
    text: String,
}

#[derive(Serialize, Default)]
struct Found {
    path: String,
    query: String,
    /// Present (possibly empty) when names were searched, so a result's
    /// shape depends on the mode only, never on what was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    names: Option<Vec<NameMatch>>,
    /// Present (possibly empty) when contents were searched.
    #[serde(skip_serializing_if = "Option::is_none")]
    matches: Option<Vec<LineMatch>>,
    files_scanned: usize,
    /// Files not searched, by reason.
    files_skipped: BTreeMap<&'static str, usize>,
    /// Folders not entered (generated folders such as node_modules).
    folders_skipped: usize,
    /// Matches beyond the per-file cap, not listed.
    matches_not_listed: usize,
    truncated: bool,
}

impl Found {
    /// Names and lines listed so far.
    fn listed(&self) -> usize {
        self.names.as_ref().map_or(0, Vec::len) + self.matches.as_ref().map_or(0, Vec::len)
    }
}

toolcell_guest::tool!(search);

/// How file contents are matched.
enum ContentMatcher {
    /// A literal, found with `memchr`'s SIMD substring search.
    Literal(Finder<'static>),
    /// A case-insensitive ASCII literal: its rarest byte found with
    /// `memchr` (both cases of a letter at once), each place compared
    /// case-insensitively. No copy of the file is folded, and a rare byte
    /// (`_`, a digit, `q`) leaves few places to compare. Far faster in wasm
    /// than the case-variant automaton a case-insensitive regex builds.
    FoldedLiteral {
        /// ASCII-lowercased.
        needle: Vec<u8>,
        /// Where the rarest byte is in the needle.
        rare_at: usize,
    },
    Regex(Regex),
}

/// How common a byte is in text, lowest first: letters by their frequency
/// in English and code, other bytes after the letters as the rarest.
fn commonness(byte: u8) -> usize {
    const BY_FREQUENCY: &[u8] = b"etaoinsrhldcumfpgwybvkxjqz";
    let lower = byte.to_ascii_lowercase();
    match BY_FREQUENCY.iter().position(|&b| b == lower) {
        Some(rank) => BY_FREQUENCY.len() - rank + 100,
        // Spaces and line ends are the commonest of all; digits and
        // punctuation rarer than any letter.
        None if byte.is_ascii_whitespace() => 1000,
        None => byte as usize % 16,
    }
}

impl ContentMatcher {
    fn new(args: &Args) -> Result<Self, ToolError> {
        if !args.regex && args.case_sensitive {
            return Ok(ContentMatcher::Literal(
                Finder::new(args.query.as_bytes()).into_owned(),
            ));
        }
        if !args.regex && args.query.is_ascii() {
            let needle = args.query.to_ascii_lowercase().into_bytes();
            let rare_at = (0..needle.len())
                .min_by_key(|&i| commonness(needle[i]))
                .unwrap_or(0);
            return Ok(ContentMatcher::FoldedLiteral { needle, rare_at });
        }
        let pattern = if args.regex {
            args.query.clone()
        } else {
            regex::escape(&args.query)
        };
        RegexBuilder::new(&pattern)
            .case_insensitive(!args.case_sensitive)
            .build()
            .map(ContentMatcher::Regex)
            .map_err(|e| {
                ToolError::InvalidArgs(format!("query is not a valid regular expression: {e}"))
            })
    }

    /// Start and end of every match in `haystack`, not overlapping.
    fn find_all(&self, haystack: &[u8]) -> Vec<(usize, usize)> {
        match self {
            ContentMatcher::Literal(finder) => {
                let len = finder.needle().len();
                finder
                    .find_iter(haystack)
                    .map(|at| (at, at + len))
                    .collect()
            }
            ContentMatcher::FoldedLiteral { needle, rare_at } => {
                folded_matches(haystack, needle, *rare_at)
            }
            ContentMatcher::Regex(regex) => regex
                .find_iter(haystack)
                .map(|m| (m.start(), m.end()))
                .collect(),
        }
    }
}

/// The places of `needle` (ASCII-lowercased) in `haystack`, whatever the
/// case of its letters, left to right and not overlapping.
fn folded_matches(haystack: &[u8], needle: &[u8], rare_at: usize) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let rare = needle[rare_at];
    let (lower, upper) = (rare, rare.to_ascii_uppercase());
    let mut from = rare_at;
    while from < haystack.len() {
        let hit = if lower == upper {
            memchr::memchr(lower, &haystack[from..])
        } else {
            memchr::memchr2(lower, upper, &haystack[from..])
        };
        let Some(offset) = hit else { break };
        let start = from + offset - rare_at;
        let end = start + needle.len();
        if end <= haystack.len() && haystack[start..end].eq_ignore_ascii_case(needle) {
            found.push((start, end));
            from = end + rare_at;
        } else {
            from += offset + 1;
        }
    }
    found
}

enum NameQuery {
    Glob(GlobMatcher),
    Substring(String),
}

fn search(args: Args) -> Result<Found, ToolError> {
    let root = WorkspacePath::parse(&args.path)?;
    if args.query.is_empty() {
        return Err(ToolError::InvalidArgs("query is empty".into()));
    }
    let max_results = args
        .max_results
        .unwrap_or(DEFAULT_MAX_RESULTS)
        .clamp(1, MAX_RESULTS_CAP);
    let meta = std::fs::metadata(root.as_path()).map_err(|e| io_error(root.as_str(), &e))?;
    if !meta.is_dir() {
        return Err(ToolError::InvalidArgs(format!(
            "`{}` is not a folder: give the folder to search in",
            root.as_str()
        )));
    }
    let extensions: Option<Vec<String>> = args.extensions.as_ref().map(|list| {
        list.iter()
            .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
            .collect()
    });

    let content = match args.mode {
        Mode::Name => None,
        Mode::Content | Mode::Both => Some(ContentMatcher::new(&args)?),
    };
    let name = match args.mode {
        Mode::Content => None,
        Mode::Name | Mode::Both if args.query.contains(['*', '?', '[', '{']) => {
            let glob = GlobBuilder::new(&args.query)
                .case_insensitive(!args.case_sensitive)
                .literal_separator(false)
                .build()
                .map_err(|e| ToolError::InvalidArgs(format!("query is not a valid glob: {e}")))?;
            Some(NameQuery::Glob(glob.compile_matcher()))
        }
        Mode::Name | Mode::Both => Some(NameQuery::Substring(if args.case_sensitive {
            args.query.clone()
        } else {
            args.query.to_lowercase()
        })),
    };

    let found = Found {
        path: root.as_str().into(),
        query: args.query.clone(),
        names: name.is_some().then(Vec::new),
        matches: content.is_some().then(Vec::new),
        ..Found::default()
    };
    let options = WalkOptions {
        max_depth: usize::MAX,
        include_hidden: false,
        honour_ignore_files: true,
        stats: false,
    };
    let mut search = Search {
        found,
        name,
        content,
        case_sensitive: args.case_sensitive,
        max_results,
        pending: Vec::new(),
        pending_files: 0,
        ahead: None,
        stopped: false,
    };
    walk::walk(&root, options, &mut |event| {
        let visited = match event {
            Event::Entry(visited) => visited,
            Event::Hidden(_) | Event::Ignored(_) => return Flow::Continue,
            Event::Unreadable(_) => return search.push(Step::Skip("unreadable")),
        };
        match visited.kind {
            EntryKind::Directory => {
                if GENERATED_DIRS.contains(&visited.name) {
                    search.push(Step::GeneratedFolder);
                    return Flow::SkipFolder;
                }
                Flow::Continue
            }
            EntryKind::Symlink => search.push(Step::Skip("symlink")),
            // A named pipe, socket or device: opening a pipe would wait
            // for a writer forever.
            EntryKind::Other => search.push(Step::Skip("not_a_file")),
            EntryKind::File => {
                if let Some(extensions) = &extensions {
                    let ext = visited
                        .name
                        .rsplit_once('.')
                        .map(|(_, e)| e.to_ascii_lowercase())
                        .unwrap_or_default();
                    if !extensions.contains(&ext) {
                        return search.push(Step::Skip("other_extension"));
                    }
                }
                search.push(Step::File {
                    path: visited.path.to_string(),
                    name: visited.name.to_string(),
                })
            }
        }
    })?;
    search.finish();
    Ok(search.found)
}

/// The paths of the files among `steps`, in order.
fn file_paths(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .filter_map(|step| match step {
            Step::File { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect()
}

/// Files whose contents are asked for at once: enough to keep two host
/// threads busy, few enough that their contents (512 KiB at most each)
/// fit the tool's memory.
const READ_BATCH: usize = 64;

/// What the walk met, in its order, to be judged in that order.
enum Step {
    Skip(&'static str),
    GeneratedFolder,
    File { path: String, name: String },
}

/// A search under way: what the walk met is queued and judged in order, so
/// that a content search reads its files in batches
/// (`toolcell:tool/files`) and the result is still what judging each
/// entry as it came would give. A full batch is read ahead while the one
/// before it is judged: the host reads the one while the tool searches
/// the other.
struct Search {
    found: Found,
    name: Option<NameQuery>,
    content: Option<ContentMatcher>,
    case_sensitive: bool,
    max_results: usize,
    pending: Vec<Step>,
    pending_files: usize,
    /// The last full batch, its files being read ahead.
    ahead: Option<Vec<Step>>,
    stopped: bool,
}

impl Search {
    fn push(&mut self, step: Step) -> Flow {
        if matches!(step, Step::File { .. }) {
            self.pending_files += 1;
        }
        self.pending.push(step);
        if self.content.is_none() {
            let steps = self.take_pending();
            self.judge(steps, Vec::new());
        } else if self.pending_files >= READ_BATCH {
            self.read_ahead_and_judge_the_last();
        }
        if self.stopped {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    /// Has the queued batch read ahead, and judges the batch before it
    /// (read meanwhile). The new batch is named first: the host reads on
    /// to it from the last without a pause.
    fn read_ahead_and_judge_the_last(&mut self) {
        let batch = self.take_pending();
        files::read_ahead(&file_paths(&batch), MAX_FILE_BYTES);
        let last = self.ahead.take().map(|steps| {
            let contents = files::read_many(&file_paths(&steps), MAX_FILE_BYTES);
            (steps, contents)
        });
        self.ahead = Some(batch);
        if let Some((steps, contents)) = last {
            self.judge(steps, contents);
        }
    }

    /// Judges what is still queued, once the walk is over.
    fn finish(&mut self) {
        let rest = self.take_pending();
        if self.content.is_none() {
            return self.judge(rest, Vec::new());
        }
        let rest_paths = file_paths(&rest);
        if let Some(steps) = self.ahead.take() {
            if !self.stopped {
                if !rest_paths.is_empty() {
                    files::read_ahead(&rest_paths, MAX_FILE_BYTES);
                }
                let contents = files::read_many(&file_paths(&steps), MAX_FILE_BYTES);
                self.judge(steps, contents);
            }
            if self.stopped {
                // Nothing more is judged: the host need not read on.
                files::read_ahead(&[], MAX_FILE_BYTES);
                return;
            }
        }
        let contents = if rest_paths.is_empty() || self.stopped {
            Vec::new()
        } else {
            files::read_many(&rest_paths, MAX_FILE_BYTES)
        };
        self.judge(rest, contents);
    }

    fn take_pending(&mut self) -> Vec<Step> {
        self.pending_files = 0;
        std::mem::take(&mut self.pending)
    }

    /// Judges `steps` in order, the files with `contents` (theirs, in
    /// order) when the search reads them.
    fn judge(&mut self, steps: Vec<Step>, contents: Vec<Result<Vec<u8>, ReadError>>) {
        let mut contents = contents.into_iter();
        let reads = self.content.is_some();
        for step in steps {
            if self.stopped {
                return;
            }
            match step {
                Step::Skip(reason) => self.skip(reason),
                Step::GeneratedFolder => self.found.folders_skipped += 1,
                Step::File { path, name } => {
                    let read = if reads { contents.next() } else { None };
                    self.file(&path, &name, read);
                }
            }
        }
    }

    fn skip(&mut self, reason: &'static str) {
        *self.found.files_skipped.entry(reason).or_default() += 1;
    }

    /// Judges one file: its name, and its contents when they were read.
    fn file(&mut self, path: &str, file_name: &str, read: Option<Result<Vec<u8>, ReadError>>) {
        if self.found.listed() >= self.max_results {
            self.found.truncated = true;
            self.stopped = true;
            return;
        }
        self.found.files_scanned += 1;
        if let Some(query) = &self.name {
            let hit = match query {
                NameQuery::Glob(glob) => glob.is_match(file_name) || glob.is_match(path),
                NameQuery::Substring(s) if self.case_sensitive => file_name.contains(s.as_str()),
                NameQuery::Substring(s) => file_name.to_lowercase().contains(s.as_str()),
            };
            if hit {
                self.found
                    .names
                    .get_or_insert_with(Vec::new)
                    .push(NameMatch {
                        path: path.to_string(),
                    });
            }
        }
        if let Some(matcher) = &self.content {
            match read {
                Some(Ok(bytes)) => {
                    search_content(path, &bytes, matcher, self.max_results, &mut self.found)
                }
                Some(Err(ReadError::TooLarge)) => self.skip("too_large"),
                Some(Err(_)) | None => self.skip("unreadable"),
            }
        }
    }
}

/// Searches one file's lines, recording matches or why it was skipped.
fn search_content(
    relative: &str,
    buffer: &[u8],
    matcher: &ContentMatcher,
    max_results: usize,
    found: &mut Found,
) {
    let skip = |found: &mut Found, reason: &'static str| {
        *found.files_skipped.entry(reason).or_default() += 1
    };
    if has_nul(&buffer[..buffer.len().min(BINARY_SNIFF_BYTES)]) {
        return skip(found, "binary");
    }
    let mut in_file = 0;
    let mut line_number = 1;
    let mut line_start = 0;
    let mut counted_to = 0;
    for (start, _end) in matcher.find_all(buffer) {
        if start < line_start {
            continue; // a second match on a line already reported
        }
        line_number += memchr::memchr_iter(b'\n', &buffer[counted_to..start]).count();
        counted_to = start;
        line_start = memchr::memrchr(b'\n', &buffer[..start]).map_or(0, |i| i + 1);
        let line_end = memchr::memchr(b'\n', &buffer[start..]).map_or(buffer.len(), |i| start + i);
        in_file += 1;
        if in_file > MAX_MATCHES_PER_FILE {
            found.matches_not_listed += 1;
        } else if found.listed() >= max_results {
            found.truncated = true;
            return;
        } else {
            let line = String::from_utf8_lossy(&buffer[line_start..line_end]);
            let column = String::from_utf8_lossy(&buffer[line_start..start])
                .chars()
                .count()
                + 1;
            found.matches.get_or_insert_with(Vec::new).push(LineMatch {
                path: relative.to_string(),
                line: line_number,
                column,
                text: excerpt(line.trim_end_matches('\r'), column),
            });
        }
        // Next match must start on a later line.
        line_start = line_end + 1;
    }
}

/// The line, cut to [`MAX_LINE_CHARS`] characters around `column`.
fn excerpt(line: &str, column: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= MAX_LINE_CHARS {
        return line.to_string();
    }
    let start = column
        .saturating_sub(MAX_LINE_CHARS / 4)
        .min(chars.len() - MAX_LINE_CHARS);
    let cut: String = chars[start..start + MAX_LINE_CHARS].iter().collect();
    let head = if start > 0 { "…" } else { "" };
    let tail = if start + MAX_LINE_CHARS < chars.len() {
        "…"
    } else {
        ""
    };
    format!("{head}{cut}{tail}")
}
