//! `{{name}}`: counts the lines, words and bytes of a UTF-8 text file of the
//! workspace. Args `{"path": "notes/todo.md"}`; result
//! `{"path": ..., "lines": N, "words": N, "bytes": N}`.
//!
//! The workspace root is preopened as `.`, so plain `std::fs` with the
//! workspace-relative path is all it takes; a path outside the roots
//! (`../x`, `/etc/passwd`) fails inside the sandbox.

wit_bindgen::generate!({ world: "tool-component", path: "wit" });

use exports::toolcell::tool::tool::{Error, Guest};
use std::io::ErrorKind;

struct Tool;

impl Guest for Tool {
    fn call(args: String) -> Result<String, Error> {
        let args: serde_json::Value = serde_json::from_str(&args)
            .map_err(|e| Error::InvalidArgs(format!("the arguments are not JSON: {e}")))?;
        let path = args
            .get("path")
            .and_then(|p| p.as_str())
            .ok_or_else(|| Error::InvalidArgs("`path` must be a string".into()))?;
        if path.trim().is_empty() {
            return Err(Error::InvalidArgs(
                "`path` is empty: give a workspace-relative file path, e.g. notes/todo.md".into(),
            ));
        }

        let data = std::fs::read(path).map_err(|e| match e.kind() {
            ErrorKind::NotFound => Error::NotFound(format!(
                "{path}: no such file (paths are relative to the workspace root)"
            )),
            ErrorKind::PermissionDenied => Error::Denied(format!(
                "{path}: not accessible: paths are relative to the workspace root and cannot leave it"
            )),
            ErrorKind::IsADirectory => Error::Failed(format!("{path} is a directory, not a file")),
            _ => Error::Failed(format!("{path}: cannot read it: {e}")),
        })?;
        let text = std::str::from_utf8(&data)
            .map_err(|_| Error::InvalidArgs(format!("{path} is not UTF-8 text")))?;

        let (lines, words, bytes) = count(text);
        Ok(serde_json::json!({ "path": path, "lines": lines, "words": words, "bytes": bytes })
            .to_string())
    }
}

/// Lines: newlines, plus one for a last line without one. Words: runs of
/// characters other than ASCII whitespace (space, \t, \n, \r, \v, \f).
/// Bytes: the file's size. The Python and JS templates count the same way.
fn count(text: &str) -> (usize, usize, usize) {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    let lines = newlines + usize::from(!text.is_empty() && !text.ends_with('\n'));
    let words = text
        .split(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'))
        .filter(|w| !w.is_empty())
        .count();
    (lines, words, text.len())
}

export!(Tool);
