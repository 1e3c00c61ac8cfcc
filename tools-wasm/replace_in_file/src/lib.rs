//! `replace_in_file`: replace one exact occurrence of a text in a file.
//!
//! The edit a model makes most: `old_text` must occur exactly once, so the
//! model cannot change the wrong place by accident. The file's UTF-8 BOM and
//! line endings are kept (a model writes `\n`; in a CRLF file that means
//! `\r\n`), the write is atomic, and `expected_sha256` guards against editing
//! a file that changed since the model read it.

use serde::{Deserialize, Serialize};
use std::io::Read;
use toolcell_guest::ToolError;
use toolcell_guest::error::io_error;
use toolcell_guest::files::{decode_text, refuse_state_dir, sha256_hex, write_atomic};
use toolcell_guest::path::WorkspacePath;

/// Files edited in place at most this large, like `write_file`'s content.
const MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;
/// Line numbers listed for an ambiguous `old_text`.
const MAX_LINES_LISTED: usize = 10;
/// Lines compared when looking for the closest line to a missing `old_text`.
const MAX_LINES_COMPARED: usize = 50_000;
const BOM: &str = "\u{feff}";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    old_text: String,
    new_text: String,
    expected_sha256: Option<String>,
}

#[derive(Serialize)]
struct Replaced {
    path: String,
    /// Line (1-based) where the replaced text started.
    line: usize,
    bytes: usize,
    /// Hash of the new content: pass it as expected_sha256 in the next edit.
    sha256: String,
}

toolcell_guest::tool!(replace);

fn replace(args: Args) -> Result<Replaced, ToolError> {
    let path = WorkspacePath::parse(&args.path)?;
    let shown = path.as_str();
    refuse_state_dir(&path)?;
    if args.old_text.is_empty() {
        return Err(ToolError::InvalidArgs(
            "old_text is empty: give the exact text to replace".into(),
        ));
    }
    // Looked at before it is opened: opening a named pipe waits for a
    // writer, forever.
    let kind = std::fs::metadata(path.as_path()).map_err(|e| io_error(shown, &e))?;
    if kind.is_dir() {
        return Err(ToolError::InvalidArgs(format!("`{shown}` is a directory")));
    }
    if !kind.is_file() {
        return Err(ToolError::InvalidArgs(format!(
            "`{shown}` is not a regular file (a named pipe, socket or device)"
        )));
    }
    let mut file = std::fs::File::open(path.as_path()).map_err(|e| io_error(shown, &e))?;
    let meta = file.metadata().map_err(|e| io_error(shown, &e))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ToolError::Denied(format!(
            "`{shown}` is {} bytes, over the {MAX_FILE_BYTES}-byte limit for editing",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(shown, &e))?;
    drop(file);
    let current_hash = sha256_hex(&bytes);
    if let Some(expected) = &args.expected_sha256
        && !expected.eq_ignore_ascii_case(&current_hash)
    {
        return Err(ToolError::Denied(format!(
            "`{shown}` changed since it was read: its sha256 is now {current_hash}, not {expected}; read it again"
        )));
    }
    let text = decode_text(shown, bytes)?;
    let (bom, body) = match text.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => ("", text.as_str()),
    };
    let crlf = body.contains("\r\n");
    let (old, new) = if crlf {
        (to_crlf(&args.old_text), to_crlf(&args.new_text))
    } else {
        (args.old_text.clone(), args.new_text.clone())
    };

    let matches: Vec<usize> = body.match_indices(&old).map(|(at, _)| at).collect();
    match matches.as_slice() {
        [] => Err(ToolError::NotFound(not_found_message(
            shown,
            body,
            &args.old_text,
        ))),
        [at] => {
            let mut updated = String::with_capacity(bom.len() + body.len() - old.len() + new.len());
            updated.push_str(bom);
            updated.push_str(&body[..*at]);
            updated.push_str(&new);
            updated.push_str(&body[at + old.len()..]);
            write_atomic(&path, updated.as_bytes())?;
            Ok(Replaced {
                path: shown.into(),
                line: line_of(body, *at),
                bytes: updated.len(),
                sha256: sha256_hex(updated.as_bytes()),
            })
        }
        many => {
            let lines: Vec<String> = many
                .iter()
                .take(MAX_LINES_LISTED)
                .map(|&at| line_of(body, at).to_string())
                .collect();
            let more = if many.len() > MAX_LINES_LISTED {
                ", …"
            } else {
                ""
            };
            Err(ToolError::InvalidArgs(format!(
                "old_text is ambiguous: it occurs {} times in `{shown}`, at lines {}{more}; include more of the surrounding text so it occurs once",
                many.len(),
                lines.join(", ")
            )))
        }
    }
}

/// `\n` line endings (not already `\r\n`) as `\r\n`.
fn to_crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// 1-based line number of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Says that `old_text` was not found, and which line of the file is most
/// like its first line, so the model can correct its quote.
fn not_found_message(shown: &str, body: &str, old_text: &str) -> String {
    let wanted = old_text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let closest = body
        .lines()
        .take(MAX_LINES_COMPARED)
        .enumerate()
        .map(|(i, line)| (similarity(wanted, line.trim()), i + 1, line))
        .filter(|(score, _, _)| *score > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match closest {
        Some((_, number, line)) => format!(
            "old_text was not found in `{shown}`; the closest line is {number}: `{}`. Quote the text exactly, including whitespace",
            line.trim_end()
        ),
        None => format!(
            "old_text was not found in `{shown}`; quote the text exactly, including whitespace"
        ),
    }
}

/// Dice coefficient of character bigrams: 1.0 for equal strings, 0.0 for
/// strings that share no pair of adjacent characters.
fn similarity(a: &str, b: &str) -> f64 {
    let pairs = |s: &str| -> Vec<(char, char)> {
        let chars: Vec<char> = s.chars().collect();
        chars.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (pa, mut pb) = (pairs(a), pairs(b));
    if pa.is_empty() || pb.is_empty() {
        return if a == b && !a.is_empty() { 1.0 } else { 0.0 };
    }
    let total = pa.len() + pb.len();
    let mut shared = 0;
    for pair in &pa {
        if let Some(i) = pb.iter().position(|p| p == pair) {
            pb.swap_remove(i);
            shared += 1;
        }
    }
    2.0 * shared as f64 / total as f64
}
