//! Walking workspace folders by the names and types their directory streams
//! give (`toolcell:tool/folders`), with no `stat` of any entry: a walk then
//! costs about what `find` costs, where `std::fs::read_dir` asks the host
//! for every entry's metadata.
//!
//! The walk is depth first, each folder's entries in name order (stable
//! whatever the file system's order), and never follows a link. It can
//! honour `.gitignore`, `.ignore` and `.git/info/exclude` files as
//! ripgrep's walker does (the `ignore` crate's matcher; the rules of the
//! folders above the walked one apply too, up to the nearest repository),
//! and leave out hidden entries (names starting with `.`) unless an ignore
//! file lists them with `!`.

use crate::ToolError;
use crate::bindings::toolcell::tool::folders::{self, ListError};
use crate::error::io_error;
use crate::path::WorkspacePath;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

pub use crate::bindings::toolcell::tool::folders::EntryKind;

impl EntryKind {
    /// The entry's type as results name it, as [`crate::files::entry_kind`]
    /// names it from metadata.
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Directory => "directory",
            EntryKind::Symlink => "symlink",
            // Pipes, sockets and devices were always listed as files.
            EntryKind::File | EntryKind::Other => "file",
        }
    }
}

/// What a walk shows and where it stops.
#[derive(Debug, Clone, Copy)]
pub struct WalkOptions {
    /// Levels below the walked folder: 1 lists its entries only.
    pub max_depth: usize,
    pub include_hidden: bool,
    pub honour_ignore_files: bool,
    /// Each entry's size and modified time too ([`Visited::stat`]).
    pub stats: bool,
}

/// Entries whose `stat`s are asked of the host at once, when a walk gives
/// them: one host call for most folders, and a visitor that stops early
/// (a listing at its cap) has not had a large folder looked at whole.
const STATS_AT_ONCE: usize = 256;

/// One entry met by a walk.
#[derive(Debug, Clone, Copy)]
pub struct Visited<'a> {
    /// Workspace-relative (`src/main.rs`), to open it with.
    pub path: &'a str,
    /// Relative to the walked folder, as results show it.
    pub shown: &'a str,
    pub name: &'a str,
    pub kind: EntryKind,
    /// 1 for an entry of the walked folder itself.
    pub depth: usize,
    /// Its size (a link's own) and modified time (seconds since the Unix
    /// epoch), when the walk was asked for them and it could be looked at.
    pub stat: Option<(u64, Option<u64>)>,
}

/// What a walk tells its visitor.
#[derive(Debug)]
pub enum Event<'a> {
    /// An entry the options let through.
    Entry(Visited<'a>),
    /// An entry left out: hidden, or listed in an ignore file.
    Hidden(Visited<'a>),
    Ignored(Visited<'a>),
    /// A folder below the walked one that could not be listed.
    Unreadable(Visited<'a>),
}

/// What the visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on (into the entry, if it is a folder within the depth).
    Continue,
    /// Go on, but not into this folder.
    SkipFolder,
    /// End the walk.
    Stop,
}

/// A folder's entries, sorted by name, as the host hands them: every name
/// ended by `/` (which no name holds) in one string, their kinds in the
/// same order.
pub struct Listed {
    names: String,
    /// Where each name starts in `names`, and one more: past the last `/`.
    /// Found once, a walk's passes over the names need not look for the
    /// `/`s again.
    starts: Vec<usize>,
    kinds: Vec<EntryKind>,
}

impl Listed {
    fn new(names: String, kinds: Vec<EntryKind>) -> Self {
        let mut starts = Vec::with_capacity(kinds.len() + 1);
        starts.push(0);
        starts.extend(
            (names.bytes().enumerate())
                .filter(|&(_, byte)| byte == b'/')
                .map(|(at, _)| at + 1),
        );
        Self {
            names,
            starts,
            kinds,
        }
    }

    /// Each entry's name and kind, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, EntryKind)> + Clone {
        // Each name ends just before the next one's start, at its `/`
        // (ASCII, so every slice is whole UTF-8).
        (self.starts.windows(2))
            .map(|pair| &self.names[pair[0]..pair[1] - 1])
            .zip(self.kinds.iter().copied())
    }

    fn has(&self, name: &str) -> bool {
        self.iter().any(|(listed, _)| listed == name)
    }
}

/// The entries of the folder at workspace-relative `path`, sorted by name.
pub fn entries(path: &WorkspacePath) -> Result<Listed, ToolError> {
    let (names, kinds) =
        folders::packed_entries(path.as_str()).map_err(|e| list_error(path.as_str(), e))?;
    let listed = Listed::new(names, kinds);
    // The host sorts them; checked, as it costs one comparison an entry.
    if listed.iter().is_sorted_by(|a, b| a.0 <= b.0) {
        return Ok(listed);
    }
    let mut entries: Vec<(&str, EntryKind)> = listed.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut names = String::with_capacity(listed.names.len());
    for (name, _) in &entries {
        names.push_str(name);
        names.push('/');
    }
    let kinds = entries.iter().map(|(_, kind)| *kind).collect();
    Ok(Listed::new(names, kinds))
}

/// The `stat`s of `entries` of the folder `dir`, in order (each `None`
/// if the folder cannot be looked at now).
fn stats_of(dir: &WorkspacePath, names: &[String]) -> Vec<Option<(u64, Option<u64>)>> {
    match folders::stats(dir.as_str(), names) {
        Ok(stats) => stats
            .into_iter()
            .map(|s| s.map(|s| (s.size, s.modified)))
            .collect(),
        Err(_) => vec![None; names.len()],
    }
}

/// Walks the folder `root`, telling `visit` of every entry in order.
pub fn walk(
    root: &WorkspacePath,
    options: WalkOptions,
    visit: &mut dyn FnMut(Event<'_>) -> Flow,
) -> Result<(), ToolError> {
    let top = entries(root)?;
    let mut rules = Vec::new();
    if options.honour_ignore_files {
        for ancestor in ancestors(root) {
            if let Ok(listed) = entries(&ancestor) {
                rules.push(IgnoreRules::of(&ancestor, &listed));
            }
        }
        rules.push(IgnoreRules::of(root, &top));
    }
    let mut walker = Walker {
        options,
        visit,
        rules,
        stopped: false,
        // The walked folder's own entries are named without it when it is
        // the workspace itself (`src`, not `./src`).
        path: match root.as_str() {
            "." => String::new(),
            dir => dir.to_string(),
        },
        shown: String::new(),
    };
    walker.folder(root, 1, top);
    Ok(())
}

struct Walker<'v> {
    options: WalkOptions,
    visit: &'v mut dyn FnMut(Event<'_>) -> Flow,
    /// The ignore rules of the folders from the top down to the current one.
    rules: Vec<IgnoreRules>,
    stopped: bool,
    /// The workspace-relative path of the entry being visited, and the
    /// same relative to the walked folder: built in place, one buffer each
    /// for the whole walk, not two strings an entry.
    path: String,
    shown: String,
}

impl Walker<'_> {
    fn folder(&mut self, dir: &WorkspacePath, depth: usize, listed: Listed) {
        let (path_base, shown_base) = (self.path.len(), self.shown.len());
        if depth < self.options.max_depth {
            self.list_ahead(dir, path_base, &listed);
        }
        let mut stats = Vec::new();
        let mut rest = listed.iter().enumerate();
        while let Some((at, (name, kind))) = rest.next() {
            if self.stopped {
                return;
            }
            if self.options.stats && at == stats.len() {
                let names: Vec<String> = std::iter::once(name)
                    .chain(rest.clone().map(|(_, (name, _))| name))
                    .take(STATS_AT_ONCE)
                    .map(String::from)
                    .collect();
                stats.extend(stats_of(dir, &names));
            }
            name_in(&mut self.path, path_base, name);
            name_in(&mut self.shown, shown_base, name);
            let visited = Visited {
                path: &self.path,
                shown: &self.shown,
                name,
                kind,
                depth,
                stat: stats.get(at).copied().flatten(),
            };
            let is_dir = kind == EntryKind::Directory;
            let event = match self.judged(name, is_dir) {
                Judged::Ignored => Event::Ignored(visited),
                Judged::Hidden => Event::Hidden(visited),
                Judged::Passed => Event::Entry(visited),
            };
            let passed = matches!(event, Event::Entry(_));
            match (self.visit)(event) {
                Flow::Stop => {
                    self.stopped = true;
                    return;
                }
                Flow::SkipFolder => continue,
                Flow::Continue => {}
            }
            if !passed || !is_dir || depth >= self.options.max_depth {
                continue;
            }
            let folder = dir.join(name);
            match entries(&folder) {
                Ok(inner) => {
                    if self.options.honour_ignore_files {
                        self.rules.push(IgnoreRules::of(&folder, &inner));
                    }
                    self.folder(&folder, depth + 1, inner);
                    if self.options.honour_ignore_files {
                        self.rules.pop();
                    }
                }
                Err(_) => {
                    if (self.visit)(Event::Unreadable(visited)) == Flow::Stop {
                        self.stopped = true;
                    }
                }
            }
        }
    }

    /// Whether the entry `name` at `self.path` is shown, hidden or ignored.
    fn judged(&self, name: &str, is_dir: bool) -> Judged {
        let verdict = if self.options.honour_ignore_files {
            matched(&self.rules, &self.path, is_dir)
        } else {
            Match::None
        };
        if verdict.is_ignore() {
            Judged::Ignored
        } else if verdict.is_none() && !self.options.include_hidden && name.starts_with('.') {
            Judged::Hidden
        } else {
            Judged::Passed
        }
    }

    /// Asks the host to list, while this folder's entries are visited, the
    /// subfolders of `dir` the walk will enter (those the options let
    /// through), in the order it will enter them.
    fn list_ahead(&mut self, dir: &WorkspacePath, path_base: usize, listed: &Listed) {
        let mut ahead = Vec::new();
        for (name, kind) in listed.iter() {
            if kind == EntryKind::Directory {
                name_in(&mut self.path, path_base, name);
                if self.judged(name, true) == Judged::Passed {
                    ahead.push(dir.join(name).as_str().to_string());
                }
            }
        }
        self.path.truncate(path_base);
        if !ahead.is_empty() {
            folders::read_ahead(&ahead);
        }
    }
}

/// What the walk's options make of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    Passed,
    Hidden,
    Ignored,
}

/// Makes `path`, whose first `base` bytes name a folder (none: the top of
/// the walk), name the entry `name` in it.
fn name_in(path: &mut String, base: usize, name: &str) {
    path.truncate(base);
    if base > 0 {
        path.push('/');
    }
    path.push_str(name);
}

/// The ignore files of one folder.
struct IgnoreRules {
    /// How much of a workspace-relative path below the folder names the
    /// folder (`src/` of `src/lib.rs`): the rules see the rest.
    prefix: usize,
    /// `.ignore`
    ignore: Option<IgnoreFile>,
    /// `.gitignore`
    git: Option<IgnoreFile>,
    /// `.git/info/exclude`, in a repository's top folder.
    exclude: Option<IgnoreFile>,
    /// The folder holds `.git`: rules of the folders above it do not
    /// reach into it, as git's own do not.
    has_git: bool,
}

/// The rules of one ignore file.
struct IgnoreFile {
    matcher: Gitignore,
    /// Every line names folders only (`node_modules/`, the usual kind): no
    /// file can match, and files are not put to the matcher at all.
    folders_only: bool,
}

impl IgnoreFile {
    /// The file at workspace-relative `path`; `None` if it has no rules
    /// (or cannot be read: it then adds none, as in ripgrep). Only a
    /// regular file is read: opening a named pipe would wait for a writer
    /// until the call's time ran out.
    fn load(path: &WorkspacePath) -> Option<Self> {
        if !std::fs::metadata(path.as_path()).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let bytes = std::fs::read(path.as_path()).ok()?;
        // Rooted at `.`, the matcher takes paths relative to the folder as
        // they are: given the folder as its root, it strips it from every
        // path itself, and off Unix (WebAssembly) it does so by parsing
        // both into components, a fifth of a listing's time.
        let mut builder = GitignoreBuilder::new(".");
        let mut folders_only = true;
        for (i, line) in lines(&bytes).enumerate() {
            // As the `ignore` crate reads a file (`GitignoreBuilder::add`):
            // a line that is not UTF-8 is passed over, a first line's BOM
            // dropped.
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            let line = if i == 0 {
                line.trim_start_matches('\u{feff}')
            } else {
                line
            };
            // A line ending in `/` once its trailing blanks are cut (as the
            // matcher cuts them) names folders only.
            let kept = line.trim_end();
            folders_only &= kept.is_empty() || kept.starts_with('#') || kept.ends_with('/');
            let _ = builder.add_line(Some(path.as_path().to_path_buf()), line);
        }
        let matcher = builder.build().ok().filter(|g| !g.is_empty())?;
        Some(Self {
            matcher,
            folders_only,
        })
    }

    fn matched(&self, path: &str, is_dir: bool) -> Match<()> {
        if self.folders_only && !is_dir {
            return Match::None;
        }
        match self.matcher.matched(path, is_dir) {
            Match::None => Match::None,
            Match::Ignore(_) => Match::Ignore(()),
            Match::Whitelist(_) => Match::Whitelist(()),
        }
    }
}

impl IgnoreRules {
    fn of(dir: &WorkspacePath, listed: &Listed) -> Self {
        let has = |name: &str| listed.has(name);
        let load = |file: &str| IgnoreFile::load(&dir.join(file));
        let has_git = has(".git");
        Self {
            prefix: if dir.is_root() {
                0
            } else {
                dir.as_str().len() + 1
            },
            ignore: has(".ignore").then(|| load(".ignore")).flatten(),
            git: has(".gitignore").then(|| load(".gitignore")).flatten(),
            exclude: has_git.then(|| load(".git/info/exclude")).flatten(),
            has_git,
        }
    }
}

/// The lines of `bytes` as `BufRead::lines` gives them: each without its
/// `\n` or `\r\n`, a last line without one kept as it is.
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').map(|line| {
        line.strip_suffix(b"\r\n")
            .or_else(|| line.strip_suffix(b"\n"))
            .unwrap_or(line)
    })
}

/// Whether the rules, deepest folder first, ignore or whitelist `path`:
/// `.ignore` before `.gitignore` before `.git/info/exclude`, the deepest
/// folder with a matching line deciding each, and git's rules stopping at
/// the nearest repository (the `ignore` crate's precedence).
fn matched(rules: &[IgnoreRules], path: &str, is_dir: bool) -> Match<()> {
    let mut by_ignore = Match::None;
    let mut by_git = Match::None;
    let mut by_exclude = Match::None;
    let mut saw_git = false;
    let judge = |file: &Option<IgnoreFile>, prefix: usize| match file {
        // Every path the walk judges is below each folder of `rules`.
        Some(file) => file.matched(path.get(prefix..).unwrap_or(path), is_dir),
        None => Match::None,
    };
    for level in rules.iter().rev() {
        if by_ignore.is_none() {
            by_ignore = judge(&level.ignore, level.prefix);
        }
        if !saw_git && by_git.is_none() {
            by_git = judge(&level.git, level.prefix);
        }
        if !saw_git && by_exclude.is_none() {
            by_exclude = judge(&level.exclude, level.prefix);
        }
        saw_git |= level.has_git;
    }
    by_ignore.or(by_git).or(by_exclude)
}

/// The folders above `root` inside the workspace, top first (`.`, `src`
/// for `src/lib`); none for the workspace itself.
fn ancestors(root: &WorkspacePath) -> Vec<WorkspacePath> {
    let mut found = Vec::new();
    let mut at = root.parent();
    while let Some(dir) = at {
        at = dir.parent();
        found.push(dir);
    }
    found.reverse();
    found
}

/// The contract's error for a folder that could not be listed, worded as
/// for any other file operation.
fn list_error(path: &str, error: ListError) -> ToolError {
    let kind = match error {
        ListError::NotFound => std::io::ErrorKind::NotFound,
        ListError::NotAFolder => std::io::ErrorKind::NotADirectory,
        ListError::Denied => std::io::ErrorKind::PermissionDenied,
        ListError::Failed => std::io::ErrorKind::Other,
    };
    io_error(path, &std::io::Error::from(kind))
}
