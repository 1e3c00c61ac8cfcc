//! What is wrong in a TOML file toolcell reads — a tool's manifest or the
//! workspace config — said the same way for both: the file, the line and
//! column of the offending value, its key, what is wrong and how to fix it.
//!
//! ```text
//! invalid config ws/toolcell.toml:7:8 at key `schedule.cron`: the day of week field `1-8` …
//!   fix: …
//! ```

use super::text::for_terminal_line;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Which kind of file a problem is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// `toolcell.toml`.
    Config,
    /// A tool's `tool.toml`.
    Manifest,
}

impl Document {
    fn name(self) -> &'static str {
        match self {
            Document::Config => "config",
            Document::Manifest => "tool manifest",
        }
    }
}

/// One problem in a TOML file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub document: Document,
    pub file: PathBuf,
    /// The offending key, dotted (`limits.timeout_ms`, `tools.git.process`),
    /// when one is to blame.
    pub key: Option<String>,
    /// 1-based line and column of the offending value, when known.
    pub position: Option<(u32, u32)>,
    pub message: String,
    pub fix: String,
}

/// Always two lines, the problem and its fix: each part is shown on one
/// line ([`for_terminal_line`]), so a key, a name or a path written in the
/// file (a config found in a cloned repository) cannot add lines of its own
/// — a forged `fix:` — or hide what is around it.
impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file.display().to_string();
        let document = self.document.name();
        write!(f, "invalid {document} {}", for_terminal_line(&file))?;
        if let Some((line, col)) = self.position {
            write!(f, ":{line}:{col}")?;
        }
        if let Some(key) = &self.key {
            write!(f, " at key `{}`", for_terminal_line(key))?;
        }
        write!(
            f,
            ": {}\n  fix: {}",
            for_terminal_line(&self.message),
            for_terminal_line(&self.fix)
        )
    }
}

impl std::error::Error for Problem {}

/// One table of a TOML file (`[tools.git]`, a `[[schedule]]` entry), for
/// problems at its keys: each is placed at its key's own value.
#[derive(Debug, Clone)]
pub struct Table<'a> {
    pub document: Document,
    pub file: &'a Path,
    pub text: &'a str,
    /// Where the table is in `text`.
    pub span: Range<usize>,
    /// The table's dotted name (`tools.git`, `schedule`).
    pub name: String,
}

impl Table<'_> {
    /// `file:line:col` of the table, for messages about what it sets.
    pub fn place(&self) -> String {
        let (line, col) = line_col(self.text, self.span.start);
        format!("{}:{line}:{col}", self.file.display())
    }

    /// Line and column of `key`'s value, if the table writes it.
    pub fn position(&self, key: &str) -> Option<(u32, u32)> {
        value_offset(self.text, &self.span, key).map(|at| line_col(self.text, at))
    }

    /// A problem at `key` of this table (at the table itself for `None`,
    /// or a key not written in it).
    pub fn problem(
        &self,
        key: Option<&str>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Problem {
        let offset = key
            .and_then(|key| value_offset(self.text, &self.span, key))
            .unwrap_or(self.span.start);
        Problem {
            document: self.document,
            file: self.file.to_path_buf(),
            key: Some(match key {
                Some(key) => format!("{}.{key}", self.name),
                None => self.name.clone(),
            }),
            position: Some(line_col(self.text, offset)),
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// Where the value of `key` starts in the table that begins at `span` of
/// `text`: on the line `key = …` (the key bare or quoted), after the `=`.
/// A table runs from its header to the next header (the parser's span may
/// cover the header alone).
fn value_offset(text: &str, span: &Range<usize>, key: &str) -> Option<usize> {
    let mut at = span.start.min(text.len());
    // The table's own header line, then its keys up to the next header.
    let mut lines = text[at..].split_inclusive('\n');
    let first = lines.next()?;
    let mut rest_of_table =
        std::iter::once(first).chain(lines.take_while(|line| !line.trim_start().starts_with('[')));
    rest_of_table.find_map(|line| {
        let start = at;
        at += line.len();
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let after_key = trimmed
            .strip_prefix(key)
            .or_else(|| trimmed.strip_prefix(&format!("\"{key}\"")))?;
        let value = after_key.trim_start().strip_prefix('=')?;
        let skipped = value.len() - value.trim_start().len();
        Some(start + indent + (trimmed.len() - value.len()) + skipped)
    })
}

/// The dotted key whose line holds byte `offset` of a TOML `text`
/// (`capabilities.fs`), for naming keys in errors of the TOML parser.
pub fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let key = line.split('=').next()?.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') || key.starts_with('#') {
        return None;
    }
    let table = text[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(['[', ']']).trim().to_string());
    Some(match table {
        Some(table) => format!("{table}.{key}"),
        None => key.to_string(),
    })
}

/// 1-based line and column of byte `offset` in `text` (a TOML file toolcell
/// reads is at most a few MiB: both fit in 32 bits).
pub fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    let fit = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    (fit(line), fit(col))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn a_problem_is_placed_at_its_keys_value() {
        let text =
            "[model]\nname = \"m\"\n\n[[schedule]]\nname = \"bad\"\n  cron   =  \"0 7 * * 1-8\"\n";
        let start = text.find("[[schedule]]").unwrap();
        let table = Table {
            document: Document::Config,
            file: Path::new("ws/toolcell.toml"),
            text,
            span: start..text.len(),
            name: "schedule".into(),
        };
        let problem = table.problem(Some("cron"), "it is wrong", "mend it");
        assert_eq!(problem.position, Some((6, 13)));
        assert_eq!(
            problem.to_string(),
            "invalid config ws/toolcell.toml:6:13 at key `schedule.cron`: it is wrong\n  fix: mend it"
        );
        // A name with a line break and an escape stays on its line.
        let forged = Table {
            name: "tools.x\n  fix: run this\u{1b}[2J".into(),
            ..table.clone()
        };
        let shown = forged.problem(Some("cron"), "bad", "mend it").to_string();
        assert_eq!(shown.lines().count(), 2, "{shown}");
        assert!(shown.contains("tools.x\\n  fix: run this\\e[2J"), "{shown}");
        // A key not written: the table itself.
        let missing = table.problem(Some("timezone"), "x", "y");
        assert_eq!(missing.position, Some((4, 1)));
        assert_eq!(
            key_at(text, text.find("\"0 7").unwrap()).as_deref(),
            Some("schedule.cron")
        );
    }
}
