//! `list_directory`: the entries of a workspace folder, optionally recursive.

use serde::{Deserialize, Serialize};
use std::time::UNIX_EPOCH;
use toolcell_guest::ToolError;
use toolcell_guest::error::io_error;
use toolcell_guest::files::entry_kind;
use toolcell_guest::path::WorkspacePath;

/// Depth of a recursive listing when none is given: shows a project's shape
/// without walking every dependency folder.
const DEFAULT_MAX_DEPTH: usize = 3;
/// Entries returned at most; a model gains nothing from thousands of names.
const MAX_ENTRIES: usize = 500;
/// Benchmark-only: an environment variable (granted in toolcell.toml with
/// `[tools.list_directory] env = [...]`) raising the cap to compare a full
/// walk with `find`.
const MAX_ENTRIES_ENV: &str = "TOOLCELL_LIST_MAX_ENTRIES";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    recursive: bool,
    max_depth: Option<usize>,
    #[serde(default)]
    include_hidden: bool,
    /// Only files with these extensions (folders are still walked, not listed).
    extensions: Option<Vec<String>>,
}

#[derive(Serialize)]
struct Entry {
    name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    size: u64,
    /// Seconds since the Unix epoch, if the file system reports it.
    modified: Option<u64>,
}

#[derive(Serialize)]
struct Listing {
    path: String,
    entries: Vec<Entry>,
    truncated: bool,
    /// Entries left out because they are hidden (names starting with `.`).
    hidden_skipped: usize,
}

/// Which entries a listing shows.
struct Filter {
    max_entries: usize,
    include_hidden: bool,
    extensions: Option<Vec<String>>,
}

impl Filter {
    /// Whether a file named `name` is listed (folders are always walked).
    fn lists_file(&self, name: &str) -> bool {
        match &self.extensions {
            None => true,
            Some(wanted) => {
                let ext = name
                    .rsplit_once('.')
                    .map(|(_, e)| e.to_ascii_lowercase())
                    .unwrap_or_default();
                wanted.contains(&ext)
            }
        }
    }
}

toolcell_guest::tool!(list);

fn list(args: Args) -> Result<Listing, ToolError> {
    let root = WorkspacePath::parse(&args.path)?;
    let max_depth = if args.recursive {
        args.max_depth.unwrap_or(DEFAULT_MAX_DEPTH).max(1)
    } else {
        1
    };
    let max_entries = std::env::var(MAX_ENTRIES_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_ENTRIES);
    let mut listing = Listing {
        path: root.as_str().to_string(),
        entries: Vec::new(),
        truncated: false,
        hidden_skipped: 0,
    };
    let filter = Filter {
        max_entries,
        include_hidden: args.include_hidden,
        extensions: args.extensions.map(|list| {
            list.iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect()
        }),
    };
    walk(&root, "", 1, max_depth, &filter, &mut listing)?;
    Ok(listing)
}

/// Lists `dir` into `out`; `prefix` is the entry names' path relative to the
/// listed folder, so recursive results read `src/main.rs`.
fn walk(
    dir: &WorkspacePath,
    prefix: &str,
    depth: usize,
    max_depth: usize,
    filter: &Filter,
    out: &mut Listing,
) -> Result<(), ToolError> {
    let read = std::fs::read_dir(dir.as_path()).map_err(|e| io_error(dir.as_str(), &e))?;
    let mut children: Vec<(String, std::fs::Metadata)> = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| io_error(dir.as_str(), &e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !filter.include_hidden && name.starts_with('.') {
            out.hidden_skipped += 1;
            continue;
        }
        // Not following symlinks: a link is listed as a link, never entered.
        // `DirEntry::metadata` stats relative to the open folder, far cheaper
        // than resolving the whole path again.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        children.push((name, meta));
    }
    children.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, meta) in children {
        if out.entries.len() >= filter.max_entries {
            out.truncated = true;
            return Ok(());
        }
        let kind = entry_kind(&meta);
        let shown = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let modified = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs());
        let listed = match kind {
            "directory" => filter.extensions.is_none(),
            _ => filter.lists_file(&name),
        };
        if listed {
            out.entries.push(Entry {
                name: shown.clone(),
                kind,
                size: if meta.is_dir() { 0 } else { meta.len() },
                modified,
            });
        }
        if kind == "directory" && depth < max_depth {
            walk(&dir.join(&name), &shown, depth + 1, max_depth, filter, out)?;
        }
    }
    Ok(())
}
