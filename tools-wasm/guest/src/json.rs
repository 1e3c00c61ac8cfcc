//! JSON text written directly, for results too large to build as values
//! first (a listing of 20,000 entries): the same text `serde_json` writes
//! for the same strings, numbers and booleans, without the tree (held to
//! serde_json's escapes by the test
//! `list_directory_gives_names_json_must_escape_as_they_are`).

use std::fmt::Write;

/// The bytes a JSON string escapes: `"`, `\` and the control characters.
const ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Appends `text` to `out` as a JSON string, escaped as `serde_json`
/// escapes it: `"` and `\`, the short forms `\b \t \n \f \r`, and `\u00XX`
/// (lower-case) for the other control characters.
pub fn push_str(out: &mut String, text: &str) {
    out.push('"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (at, &byte) in bytes.iter().enumerate() {
        if !ESCAPED[byte as usize] {
            continue;
        }
        let escaped = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            b'\t' => "\\t",
            b'\n' => "\\n",
            0x0c => "\\f",
            b'\r' => "\\r",
            _ => "",
        };
        out.push_str(&text[start..at]);
        if escaped.is_empty() {
            // Infallible: writing to a String.
            let _ = write!(out, "\\u{:04x}", byte);
        } else {
            out.push_str(escaped);
        }
        start = at + 1;
    }
    out.push_str(&text[start..]);
    out.push('"');
}

/// Appends `"key":` to `out`; `key` is a plain identifier.
pub fn push_key(out: &mut String, key: &str) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
}

/// Appends the number `n` to `out`.
pub fn push_u64(out: &mut String, n: u64) {
    // Infallible: writing to a String.
    let _ = write!(out, "{n}");
}
