//! What a call of a file-changing built-in tool would change, computed by
//! the host from the current files (read through the same root the tool may
//! access) for the approval prompt: a unified diff for `write_file` and
//! `replace_in_file`, a description for `move_path` and `delete_path`, the
//! exact command line (and the program and folder it resolves to) for
//! `run_command`.

use super::declared::{Change, change};
use crate::config::WorkspaceConfig;
use crate::effect::roots::{Entry, read_entry};
use crate::registry::grant::Preopen;
use crate::sandbox::bindings::toolcell::tool::process::RunRefusal;
use crate::sandbox::process_policy::ProcessPolicy;
use crate::util::text::is_hidden;
use serde_json::Value;
use similar::TextDiff;

/// Files larger than this are not diffed: the prompt says so instead.
const MAX_DIFF_FILE: u64 = 2 * 1024 * 1024;
/// Diff lines shown; the rest is counted, not shown.
const MAX_DIFF_LINES: usize = 200;
/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;
/// Characters of one argument shown in a command line.
const MAX_SHOWN_WORD_CHARS: usize = 200;

/// The change a call of the built-in `tool` with `args` would make (as
/// [`declared`](super::declared) says), or `None` for tools that change nothing.
pub fn preview(config: &WorkspaceConfig, tool: &str, args: &Value) -> Option<String> {
    Some(match change(tool, args)? {
        Change::WriteFile { path, content: new } => {
            let shown = one_line(path);
            match read_entry(config, path, MAX_DIFF_FILE) {
                Ok(Entry::Missing) => format!(
                    "create `{shown}` ({} lines, {} bytes)\n{}",
                    new.lines().count(),
                    new.len(),
                    diff("", new, &shown)
                ),
                Ok(Entry::File(old)) => match String::from_utf8(old) {
                    Ok(old) if old == new => format!("`{shown}` would not change"),
                    Ok(old) => diff(&old, new, &shown),
                    Err(_) => format!("replace the binary file `{shown}`"),
                },
                Ok(Entry::Folder { .. }) => format!("`{shown}` is a folder: the tool will refuse"),
                Ok(Entry::Other) => format!("replace `{shown}` (too large to show a diff)"),
                Err(e) => format!(
                    "cannot read `{shown}` to show the change: {}",
                    one_line(&e.to_string())
                ),
            }
        }
        Change::EditFile {
            path,
            old: old_text,
            new: new_text,
        } => {
            let shown = one_line(path);
            match read_entry(config, path, MAX_DIFF_FILE) {
                Ok(Entry::File(bytes)) => match String::from_utf8(bytes) {
                    Ok(old) => match old.matches(old_text).count() {
                        1 => diff(&old, &old.replacen(old_text, new_text, 1), &shown),
                        0 => {
                            format!("`old_text` does not occur in `{shown}`: the tool will refuse")
                        }
                        n => {
                            format!(
                                "`old_text` occurs {n} times in `{shown}`: the tool will refuse"
                            )
                        }
                    },
                    Err(_) => format!("`{shown}` is not UTF-8 text: the tool will refuse"),
                },
                Ok(Entry::Missing) => format!("`{shown}` does not exist: the tool will refuse"),
                Ok(_) => format!("edit `{shown}` (cannot show a diff of it)"),
                Err(e) => format!(
                    "cannot read `{shown}` to show the change: {}",
                    one_line(&e.to_string())
                ),
            }
        }
        Change::Move { from, to } => {
            let to_shown = one_line(to);
            let what = describe(config, from);
            let target = match read_entry(config, to, 0) {
                Ok(Entry::Missing) => String::new(),
                Ok(_) => format!("\n`{to_shown}` already exists: the tool will refuse"),
                Err(e) => format!("\ncannot check `{to_shown}`: {}", one_line(&e.to_string())),
            };
            format!("move {what} to `{to_shown}`{target}")
        }
        Change::Delete { path, recursive } => {
            let what = describe(config, path);
            let note = if recursive {
                " and everything in it"
            } else {
                ""
            };
            format!("delete {what}{note} (kept in .toolcell/trash)")
        }
        Change::Run { program, args, cwd } => {
            let argv: Vec<&str> = std::iter::once(program).chain(args).collect();
            let line = command_line(&argv);
            // What would run, and where, by the checks of the run itself.
            let roots = config
                .roots
                .iter()
                .map(|root| Preopen {
                    host: root.path.clone(),
                    guest: root.mount.clone(),
                    writable: false,
                })
                .collect();
            let granted = config.tool(tool).process.clone();
            let policy = ProcessPolicy::new(tool, granted, roots);
            match policy.resolve(program, cwd) {
                Ok(resolved) => format!(
                    "$ {line}\n  program: {}\n  in:      {}\n  ({} arguments)",
                    quote(&resolved.program.to_string_lossy()),
                    quote(&resolved.cwd.to_string_lossy()),
                    argv.len() - 1
                ),
                Err(refused) => format!(
                    "$ {line}\n  in: {}\n  toolcell will refuse it: {}",
                    quote(cwd),
                    run_error_message(&refused)
                ),
            }
        }
        // A new folder is said by the call itself.
        Change::CreateFolder { .. } => return None,
    })
}

/// The change a recorded call of `tool` with `args` made to the file at
/// `path`, from what the file held before (`before`, `None` when it did
/// not exist): a unified diff for written and edited files, a sentence for
/// moves and deletions. For the run's page: the file may have changed
/// since, so nothing is read from it now.
pub fn recorded(tool: &str, args: &Value, path: &str, before: Option<&[u8]>) -> Option<String> {
    let shown = one_line(path);
    let text = |bytes: Option<&[u8]>| match bytes {
        None => Some(String::new()),
        Some(bytes) => String::from_utf8(bytes.to_vec()).ok(),
    };
    Some(match change(tool, args)? {
        Change::WriteFile { content, .. } => match text(before) {
            Some(old) if old == content => format!("`{shown}` did not change"),
            Some(old) => diff(&old, content, &shown),
            None => format!("replaced the binary file `{shown}`"),
        },
        Change::EditFile { old, new, .. } => match text(before) {
            Some(was) => diff(&was, &was.replacen(old, new, 1), &shown),
            None => format!("edited `{shown}`"),
        },
        Change::Move { from, to } => format!("moved `{}` to `{}`", one_line(from), one_line(to)),
        Change::Delete { .. } => match text(before) {
            Some(old) if before.is_some() => diff(&old, "", &shown),
            _ => format!("deleted `{shown}` (kept in .toolcell/trash)"),
        },
        Change::CreateFolder { .. } | Change::Run { .. } => return None,
    })
}

/// `argv` as a command line a person reads (and could paste into a shell):
/// each word quoted when it needs to be.
pub fn command_line(argv: &[&str]) -> String {
    argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// One word, quoted for a POSIX shell when it holds anything but plain
/// characters. Hidden characters (controls, direction marks…) are written
/// as escapes (`$'…'`), so an argument can never hide or forge lines of the
/// prompt; a very long word is cut (the prompt's arguments say how long).
fn quote(word: &str) -> String {
    let (word, cut) = match word.char_indices().nth(MAX_SHOWN_WORD_CHARS) {
        Some((at, _)) => (
            &word[..at],
            format!("…[{} more characters]", word[at..].chars().count()),
        ),
        None => (word, String::new()),
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return format!("{word}{cut}");
    }
    if word.chars().any(is_hidden) {
        let escaped: String = word
            .chars()
            .map(|c| match c {
                '\\' => "\\\\".to_string(),
                '\'' => "\\'".to_string(),
                '\n' => "\\n".to_string(),
                '\t' => "\\t".to_string(),
                '\r' => "\\r".to_string(),
                c if c.is_control() && (c as u32) < 0x100 => format!("\\x{:02x}", c as u32),
                c if is_hidden(c) => format!("\\u{:04x}", c as u32),
                c => c.to_string(),
            })
            .collect();
        return format!("$'{escaped}'{cut}");
    }
    format!("'{}'{cut}", word.replace('\'', "'\\''"))
}

fn run_error_message(error: &RunRefusal) -> &str {
    match error {
        RunRefusal::Denied(m) | RunRefusal::NotFound(m) | RunRefusal::Failed(m) => m,
    }
}

fn describe(config: &WorkspaceConfig, path: &str) -> String {
    let shown = one_line(path);
    match read_entry(config, path, MAX_DIFF_FILE) {
        Ok(Entry::File(bytes)) => format!("the file `{shown}` ({} bytes)", bytes.len()),
        Ok(Entry::Folder { entries }) => format!("the folder `{shown}` ({entries} entries)"),
        Ok(Entry::Missing) => format!("`{shown}` (which does not exist: the tool will refuse)"),
        Ok(Entry::Other) => format!("`{shown}` (a large or special file)"),
        Err(e) => format!("`{shown}` (cannot be read: {})", one_line(&e.to_string())),
    }
}

/// A path from the model, on one line: it cannot add lines to the prompt.
fn one_line(path: &str) -> String {
    crate::util::text::for_terminal_line(path).into_owned()
}

/// A unified diff of `old` → `new`, cut to [`MAX_DIFF_LINES`].
fn diff(old: &str, new: &str, path: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let text = diff
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    let total = text.lines().count();
    if total <= MAX_DIFF_LINES {
        return text;
    }
    let mut shown: String = text
        .lines()
        .take(MAX_DIFF_LINES)
        .flat_map(|l| [l, "\n"])
        .collect();
    shown.push_str(&format!("… {} more diff lines\n", total - MAX_DIFF_LINES));
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn write_and_replace_show_diffs_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let config = WorkspaceConfig::default_for(dir.path()).unwrap();
        let shown = preview(
            &config,
            "write_file",
            &json!({"path": "a.txt", "content": "one\n2\nthree\n"}),
        )
        .unwrap();
        assert!(shown.contains("-two\n+2\n"), "{shown}");
        let shown = preview(
            &config,
            "replace_in_file",
            &json!({"path": "a.txt", "old_text": "three", "new_text": "3"}),
        )
        .unwrap();
        assert!(shown.contains("-three\n+3\n"), "{shown}");
        let shown = preview(
            &config,
            "write_file",
            &json!({"path": "../x", "content": ""}),
        )
        .unwrap();
        assert!(shown.contains("outside the workspace"), "{shown}");
        let shown = preview(&config, "delete_path", &json!({"path": "a.txt"})).unwrap();
        assert!(shown.contains("the file `a.txt` (14 bytes)"), "{shown}");
    }

    #[test]
    fn command_lines_are_quoted_and_never_hide_characters() {
        assert_eq!(command_line(&["git", "log", "-5"]), "git log -5");
        assert_eq!(
            command_line(&["echo", "a b", "it's", ""]),
            "echo 'a b' 'it'\\''s' ''"
        );
        assert_eq!(
            command_line(&["rm", "x\n$ git status", "\u{1b}[8m", "a\u{202e}b"]),
            "rm $'x\\n$ git status' $'\\x1b[8m' $'a\\u202eb'"
        );
        let long = "x".repeat(500);
        assert_eq!(
            command_line(&["echo", &long]),
            format!("echo {}…[300 more characters]", "x".repeat(200))
        );
        assert_eq!(command_line(&["echo", "a\u{2066}b"]), "echo $'a\\u2066b'");
    }
}
