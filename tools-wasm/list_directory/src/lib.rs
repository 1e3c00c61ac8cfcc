//! `list_directory`: the entries of a workspace folder, optionally recursive.
//!
//! Entries come from the folders' directory streams, names and types only
//! ([`toolcell_guest::walk`]): a size and a modified time cost a `stat` of
//! each entry, so they come only with `details` (made by the host within
//! each folder it opens once, `toolcell:tool/folders`' `stats`). Ignore files are honoured
//! as `search_files` honours them unless `include_ignored` is set.

use serde::Deserialize;
use toolcell_guest::path::WorkspacePath;
use toolcell_guest::walk::{self, EntryKind, Event, Flow, WalkOptions};
use toolcell_guest::{ToolError, json};

/// Depth of a recursive listing when none is given: shows a project's shape
/// without walking every dependency folder.
const DEFAULT_MAX_DEPTH: usize = 3;
/// Entries returned when the caller gives no `max_entries`: a model gains
/// nothing from thousands of names.
const DEFAULT_MAX_ENTRIES: usize = 500;
/// The most a caller may ask for: about 200 KB of names, near what a
/// model's context holds.
const MAX_ENTRIES_BOUND: usize = 5000;
/// Benchmark-only: an environment variable (granted in toolcell.toml with
/// `[tools.list_directory] env = [...]`) setting the default and the bound,
/// to compare a full walk with `find`.
const MAX_ENTRIES_ENV: &str = "TOOLCELL_LIST_MAX_ENTRIES";
/// Entries counted past the cap, at most: the count of what was left out
/// is exact below this, and said to be a lower bound above it.
const MAX_COUNTED: usize = 100_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    recursive: bool,
    max_depth: Option<usize>,
    #[serde(default)]
    include_hidden: bool,
    #[serde(default)]
    include_ignored: bool,
    /// Only files with these extensions (folders are still walked, not listed).
    extensions: Option<Vec<String>>,
    max_entries: Option<usize>,
    /// Sizes and modified times too.
    #[serde(default)]
    details: bool,
}

/// The listing's JSON, written as the walk goes: `{"path", "entries": [{"name",
/// "type", "size"?, "modified"?}], "truncated", "omitted"?, "omitted_at_least"?,
/// "hidden_skipped", "ignored_skipped"}`. Written directly, a listing of
/// thousands of entries is held once, as its text, not also as values.
struct Listing {
    /// The text so far: the object's opening and the entries listed.
    json: String,
    listed: usize,
    /// Entries that would have been listed past `max_entries`.
    omitted: usize,
    /// The walk stopped counting them at [`MAX_COUNTED`]: more were left out.
    omitted_at_least: bool,
    /// Entries left out because they are hidden (names starting with `.`).
    hidden_skipped: usize,
    /// Entries left out by `.gitignore` or `.ignore` files.
    ignored_skipped: usize,
}

/// Room the listing's text starts with: a listing of a few hundred
/// entries never grows it.
const LISTING_START_BYTES: usize = 32 << 10;

impl Listing {
    fn new(path: &str) -> Self {
        let mut json = String::with_capacity(LISTING_START_BYTES);
        json.push('{');
        json::push_key(&mut json, "path");
        json::push_str(&mut json, path);
        json.push(',');
        json::push_key(&mut json, "entries");
        json.push('[');
        Self {
            json,
            listed: 0,
            omitted: 0,
            omitted_at_least: false,
            hidden_skipped: 0,
            ignored_skipped: 0,
        }
    }

    fn push(&mut self, name: &str, kind: &str, details: Option<(u64, Option<u64>)>) {
        let out = &mut self.json;
        if self.listed > 0 {
            out.push(',');
        }
        self.listed += 1;
        out.push_str("{\"name\":");
        json::push_str(out, name);
        // The kinds are plain words.
        out.push_str(",\"type\":\"");
        out.push_str(kind);
        out.push('"');
        if let Some((size, modified)) = details {
            out.push(',');
            json::push_key(out, "size");
            json::push_u64(out, size);
            if let Some(modified) = modified {
                out.push(',');
                json::push_key(out, "modified");
                json::push_u64(out, modified);
            }
        }
        out.push('}');
    }

    fn finish(self) -> String {
        let mut out = self.json;
        out.push_str("],");
        json::push_key(&mut out, "truncated");
        out.push_str(if self.omitted > 0 { "true" } else { "false" });
        if self.omitted > 0 {
            out.push(',');
            json::push_key(&mut out, "omitted");
            json::push_u64(&mut out, self.omitted as u64);
        }
        if self.omitted_at_least {
            out.push(',');
            json::push_key(&mut out, "omitted_at_least");
            out.push_str("true");
        }
        out.push(',');
        json::push_key(&mut out, "hidden_skipped");
        json::push_u64(&mut out, self.hidden_skipped as u64);
        out.push(',');
        json::push_key(&mut out, "ignored_skipped");
        json::push_u64(&mut out, self.ignored_skipped as u64);
        out.push('}');
        out
    }
}

toolcell_guest::tool!(text: list);

fn list(args: Args) -> Result<String, ToolError> {
    let root = WorkspacePath::parse(&args.path)?;
    let max_depth = if args.recursive {
        args.max_depth.unwrap_or(DEFAULT_MAX_DEPTH).max(1)
    } else {
        1
    };
    // The benchmark's variable is both the default and the bound.
    let granted: Option<usize> = std::env::var(MAX_ENTRIES_ENV)
        .ok()
        .and_then(|v| v.parse().ok());
    let bound = granted.unwrap_or(MAX_ENTRIES_BOUND).max(1);
    let max_entries = args
        .max_entries
        .or(granted)
        .unwrap_or(DEFAULT_MAX_ENTRIES)
        .clamp(1, bound);
    let extensions: Option<Vec<String>> = args.extensions.map(|list| {
        list.iter()
            .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
            .collect()
    });
    let lists_file = |name: &str| match &extensions {
        None => true,
        Some(wanted) => {
            let ext = name
                .rsplit_once('.')
                .map(|(_, e)| e.to_ascii_lowercase())
                .unwrap_or_default();
            wanted.contains(&ext)
        }
    };
    let mut listing = Listing::new(root.as_str());
    let options = WalkOptions {
        max_depth,
        include_hidden: args.include_hidden,
        honour_ignore_files: !args.include_ignored,
        stats: args.details,
    };
    walk::walk(&root, options, &mut |event| {
        let visited = match event {
            Event::Entry(visited) => visited,
            Event::Hidden(_) => {
                listing.hidden_skipped += 1;
                return Flow::Continue;
            }
            Event::Ignored(_) => {
                listing.ignored_skipped += 1;
                return Flow::Continue;
            }
            Event::Unreadable(_) => return Flow::Continue,
        };
        let listed = match visited.kind {
            EntryKind::Directory => extensions.is_none(),
            _ => lists_file(visited.name),
        };
        if !listed {
            return Flow::Continue;
        }
        if listing.listed >= max_entries {
            listing.omitted += 1;
            if listing.omitted >= MAX_COUNTED {
                listing.omitted_at_least = true;
                return Flow::Stop;
            }
            return Flow::Continue;
        }
        // A folder's size is shown as 0.
        let details = visited.stat.map(|(size, modified)| {
            let size = if visited.kind == EntryKind::Directory {
                0
            } else {
                size
            };
            (size, modified)
        });
        listing.push(visited.shown, visited.kind.name(), details);
        Flow::Continue
    })?;
    Ok(listing.finish())
}
