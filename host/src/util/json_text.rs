//! JSON kept as the text it came in.
//!
//! A tool's result is checked once to be JSON and then passed on, recorded
//! and printed as the tool wrote it; it becomes a tree only where a tree is
//! needed (a workflow's value, an MCP answer's structured content). A
//! 20,000-entry listing took about 13 MB and 6–14 ms to build as a
//! `serde_json::Value`, and its first touches of fresh memory were most of
//! a `list_directory` process's page faults; checked as text it takes 1 ms
//! and no more memory than the text (BENCHMARKS.md, issue 21).
//!
//! The text is valid JSON by construction, so [`JsonText::compact`] and
//! [`JsonText::pretty`] only re-space it: strings are copied byte for byte
//! (their escapes too), and keys stay in the tool's order.

use std::borrow::Cow;

use super::json_check::{self, skip_space};
use serde_json::Value;
use serde_json::value::RawValue;

/// serde_json's own limit on nesting when it builds a tree (it refuses the
/// 128th level). Text that passes here becomes a [`Value`] unless it holds
/// what JSON's grammar allows and a tree cannot: a number out of `f64`'s
/// range (`1e400`) or half of a surrogate pair (`"\ud800"`); see
/// [`JsonText::to_value`].
const MAX_DEPTH: usize = 127;

/// A JSON document, checked and kept as text.
#[derive(Debug, Clone)]
pub struct JsonText {
    text: String,
    /// Whitespace outside its strings: [`JsonText::compact`] has some to drop.
    spaced: bool,
}

impl JsonText {
    /// Checks that `text` is one JSON document, nested no deeper than
    /// serde_json parses into a tree, and keeps it without copying.
    pub fn parse(text: String) -> Result<Self, serde_json::Error> {
        match json_check::check(&text, MAX_DEPTH) {
            Some(checked) => Ok(Self {
                text,
                spaced: checked.spaced,
            }),
            None => Err(refusal(&text)),
        }
    }

    /// The text of `value`, for results made in the host (an MCP server's).
    pub fn from_value(value: &Value) -> Self {
        let text = value.to_string();
        // A `Value` always serialises to a document `parse` takes.
        Self::parse(text).unwrap_or_else(|_| Self::null())
    }

    fn null() -> Self {
        Self {
            text: "null".into(),
            spaced: false,
        }
    }

    /// The text as the tool wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// As a tree: for callers that work on the value. Refused for the
    /// documents JSON's grammar allows and a tree cannot hold (a number out
    /// of range, a lone surrogate's escape); the text itself is passed on
    /// and laid out as written.
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.as_str())
    }

    /// Whether the document is an object.
    pub fn is_object(&self) -> bool {
        self.first_byte() == Some(b'{')
    }

    /// The string the document is, when it is one.
    pub fn as_string(&self) -> Option<String> {
        if self.first_byte() != Some(b'"') {
            return None;
        }
        serde_json::from_str(self.as_str()).ok()
    }

    fn first_byte(&self) -> Option<u8> {
        let bytes = self.as_str().as_bytes();
        bytes.get(skip_space(bytes, 0)).copied()
    }

    /// Without whitespace between tokens: what a model is shown.
    pub fn compact(&self) -> Cow<'_, str> {
        let text = self.as_str();
        if !self.spaced {
            return Cow::Borrowed(text);
        }
        // Strings copied whole, the whitespace between tokens dropped.
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(text.len());
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'"' => {
                    let end = string_end(bytes, at);
                    out.extend_from_slice(&bytes[at..end]);
                    at = end;
                }
                b' ' | b'\n' | b'\r' | b'\t' => at = skip_space(bytes, at),
                byte => {
                    out.push(byte);
                    at += 1;
                }
            }
        }
        // Only whitespace between whole tokens of a `str` was dropped.
        let out = String::from_utf8(out).unwrap_or_default();
        Cow::Owned(out)
    }

    /// Indented by two spaces, one member or element a line, `": "` after
    /// keys: the layout of `serde_json::to_string_pretty`, for people.
    pub fn pretty(&self) -> String {
        let mut out = Vec::with_capacity(self.as_str().len() * 3 / 2);
        self.write_pretty(&mut out)
            .expect("writing to a Vec cannot fail");
        // Only ASCII layout was added between whole tokens of a `str`.
        String::from_utf8(out).unwrap_or_default()
    }

    /// [`JsonText::pretty`], written to `out` as it is made: a large result
    /// needs no second copy in memory.
    pub fn write_pretty(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write_pretty_at(out, 0)
    }

    /// [`JsonText::write_pretty`] for a document written as a member of an
    /// object `depth` levels deep that the caller lays out around it (an
    /// envelope): its lines are indented for that depth. Wrapped without
    /// being parsed again, a document at the nesting limit stays printable.
    pub fn write_pretty_at(
        &self,
        out: &mut dyn std::io::Write,
        depth: usize,
    ) -> std::io::Result<()> {
        // Laid out in a buffer of its own, handed to `out` a chunk at a
        // time: a token is a copy, not a call through `dyn Write` (a
        // 20,000-entry listing has hundreds of thousands of them). One
        // loop over the bytes, no token made: the layout of such a listing
        // took as long as the cell's walk (issue 21).
        const CHUNK: usize = 64 << 10;
        /// A line break and the indent of the deepest levels most documents
        /// reach, sliced to the depth (two spaces a level).
        const LINE: &[u8; 65] =
            b"\n                                                                ";
        let newline = |laid: &mut Vec<u8>, depth: usize| {
            let indent = 2 * depth;
            if indent < SHORT_COPY {
                put_short(
                    laid,
                    LINE[..SHORT_COPY].try_into().expect("a short copy"),
                    1 + indent,
                );
            } else if indent < LINE.len() {
                laid.extend_from_slice(&LINE[..1 + indent]);
            } else {
                laid.push(b'\n');
                laid.resize(laid.len() + indent, b' ');
            }
        };
        let bytes = self.as_str().as_bytes();
        let mut laid = Vec::with_capacity(CHUNK + 256);
        let mut depth = depth;
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            match byte {
                b'"' => {
                    let end = string_end(bytes, at);
                    if end - at >= CHUNK {
                        // A long string (a file's text) goes out as it is,
                        // not copied into the buffer first.
                        out.write_all(&laid)?;
                        laid.clear();
                        out.write_all(&bytes[at..end])?;
                    } else {
                        put(&mut laid, bytes, at, end);
                    }
                    at = end;
                }
                b'{' | b'[' => {
                    // `}` and `]` are two past `{` and `[` in ASCII.
                    let close = byte + 2;
                    let inside = skip_space(bytes, at + 1);
                    if bytes.get(inside) == Some(&close) {
                        laid.extend_from_slice(&[byte, close]);
                        at = inside + 1;
                    } else {
                        laid.push(byte);
                        depth += 1;
                        newline(&mut laid, depth);
                        at = inside;
                    }
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    newline(&mut laid, depth);
                    laid.push(byte);
                    at += 1;
                }
                b',' => {
                    laid.push(b',');
                    newline(&mut laid, depth);
                    at += 1;
                }
                b':' => {
                    laid.extend_from_slice(b": ");
                    at += 1;
                }
                b' ' | b'\n' | b'\r' | b'\t' => at += 1,
                // A number or a literal, a byte at a time.
                _ => {
                    laid.push(byte);
                    at += 1;
                }
            }
            if laid.len() >= CHUNK {
                out.write_all(&laid)?;
                laid.clear();
            }
        }
        out.write_all(&laid)
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

/// What is wrong with `text`, which [`json_check::check`] refused: where
/// serde_json (which takes the same documents) finds fault, or its depth.
fn refusal(text: &str) -> serde_json::Error {
    match serde_json::from_str::<&RawValue>(text) {
        Err(e) => e,
        Ok(_) => serde::de::Error::custom(format!(
            "it is nested deeper than {MAX_DEPTH} arrays and objects"
        )),
    }
}

/// Bytes a short copy ([`put_short`]) always moves.
const SHORT_COPY: usize = 32;

/// Appends `bytes[from..to]` to `laid`: a run of at most [`SHORT_COPY`]
/// bytes (a key, a name, a short value) as a copy of that fixed size, where
/// the text has as many bytes from `from`.
fn put(laid: &mut Vec<u8>, bytes: &[u8], from: usize, to: usize) {
    if to - from <= SHORT_COPY
        && let Some(window) = bytes.get(from..from + SHORT_COPY)
    {
        put_short(laid, window.try_into().expect("a short copy"), to - from);
    } else {
        laid.extend_from_slice(&bytes[from..to]);
    }
}

/// Appends the first `len` bytes of `window` (at most [`SHORT_COPY`]) to
/// `laid`, by appending all of them and cutting back: a copy of a size the
/// compiler knows is two vector moves, where one of a size it does not is
/// a call to `memcpy`. A listing of 20,000 entries lays out some 300,000
/// such runs.
#[inline(always)]
fn put_short(laid: &mut Vec<u8>, window: &[u8; SHORT_COPY], len: usize) {
    let kept = laid.len() + len;
    laid.extend_from_slice(window);
    laid.truncate(kept);
}

/// Bytes of a string looked at one by one before [`string_end`] searches
/// for its quote: the keys and names of a listing end within them.
const SHORT_STRING: usize = 64;

/// The index just past the string of valid JSON whose opening quote is at
/// `open`.
///
/// It looks only for quotes: a quote ends the string unless an odd number
/// of backslashes stands right before it (in valid JSON every backslash
/// in a string begins an escape, and `\\` is one). Text has far more
/// escapes than quotes (a file's lines are one `\n` each): stopping at
/// each escape made the string of a 4 KB file of 63-byte lines 65
/// searches instead of one.
fn string_end(bytes: &[u8], open: usize) -> usize {
    // Most strings are short (keys, names, paths): two vectors find the end
    // of one that ends within 32 bytes and holds no escape before it
    // (`json_check::short_end`), a plain loop the end of one a little
    // longer; a long one is searched for.
    if let Some(end) = json_check::short_end(bytes, open + 1) {
        return end;
    }
    let mut at = open + 1;
    let scanned = (at + SHORT_STRING).min(bytes.len());
    while at < scanned {
        match bytes[at] {
            b'"' => return at + 1,
            // An escape's second byte is never the string's end.
            b'\\' => at += 2,
            _ => at += 1,
        }
    }
    if at >= bytes.len() {
        return bytes.len();
    }
    while let Some(offset) = memchr::memchr(b'"', &bytes[at..]) {
        let quote = at + offset;
        let backslashes = bytes[at..quote]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return quote + 1;
        }
        at = quote + 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> JsonText {
        JsonText::parse(s.to_string()).unwrap()
    }

    #[test]
    fn pretty_is_laid_out_as_serde_json_lays_it_out() {
        // Keys in order already, so serde_json's tree keeps the same order.
        let cases = [
            r#"{"a":[1,2,{"x":null}],"b":1,"e":{},"f":[],"s":"a \"q\" \\ , : { ["}"#,
            "[]",
            "{}",
            r#""just a string""#,
            "-1.5",
            r#"[[[]],{"k":[{}]},true]"#,
        ];
        for case in cases {
            let tree: Value = serde_json::from_str(case).unwrap();
            let expected = serde_json::to_string_pretty(&tree).unwrap();
            assert_eq!(text(case).pretty(), expected, "{case}");
        }
        // The tool's order is kept.
        assert_eq!(
            text(r#"{"b":1,"a":[1,{}]}"#).pretty(),
            "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    {}\n  ]\n}"
        );
    }

    #[test]
    fn a_document_laid_out_inside_an_envelope_is_the_envelope_laid_out() {
        let inner = r#"{"a":[1,{"b":[]}],"c":"x"}"#;
        let mut out = b"{\n  \"ok\": true,\n  \"result\": ".to_vec();
        text(inner).write_pretty_at(&mut out, 1).unwrap();
        out.extend_from_slice(b"\n}");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            text(&format!(r#"{{"ok":true,"result":{inner}}}"#)).pretty()
        );
    }

    #[test]
    fn compact_and_pretty_keep_strings_and_drop_only_the_space_between_tokens() {
        let spaced = text(" {\n \"a b\" : [ 1 , \"x ,\\\" y\" ] ,\t\"c\" : { } } ");
        assert_eq!(spaced.compact(), r#"{"a b":[1,"x ,\" y"],"c":{}}"#);
        assert!(matches!(text(r#"{"a":[1]}"#).compact(), Cow::Borrowed(_)));
        // Strings and numbers stay as written, escapes too.
        let written = r#"{"s":"é \u00e9 \n \/","n":1.5e3}"#;
        assert_eq!(text(written).compact(), written);
        assert_eq!(
            text(written).pretty(),
            "{\n  \"s\": \"é \\u00e9 \\n \\/\",\n  \"n\": 1.5e3\n}"
        );
        let again = text(&spaced.pretty());
        assert_eq!(again.compact(), spaced.compact());
        assert_eq!(again.to_value().unwrap(), spaced.to_value().unwrap());
    }

    #[test]
    fn generated_documents_are_laid_out_as_serde_json_lays_them_out() {
        // Strings of every length around the short copy's 32 bytes, with
        // escapes (a quote, a backslash, a newline, `\u`) at every place
        // and none; arrays and one-key objects nested to depths whose
        // indent is shorter and longer than the short copy; the end of a
        // string near the end of the text. Each compared with serde_json.
        let mut next = crate::util::json_check::tests::xorshift(0x5eed_cafe_f00d_beef);
        let pieces = ["a", "é", "\"", "\\", "\n", "\u{1}", "/", " "];
        for _ in 0..400 {
            let depth = (next() % 24) as usize;
            let mut case = String::new();
            for level in 0..depth {
                case.push_str(if level % 2 == 0 { "[1," } else { r#"{"k":"# });
            }
            case.push('[');
            let strings = 1 + next() % 6;
            for i in 0..strings {
                let length = (next() % 70) as usize;
                let string: String = (0..length)
                    .map(|_| {
                        let piece = next() % 40;
                        pieces.get(piece as usize).copied().unwrap_or("x")
                    })
                    .collect();
                if i > 0 {
                    case.push(',');
                }
                case.push_str(&serde_json::to_string(&string).unwrap());
            }
            case.push(']');
            for level in (0..depth).rev() {
                case.push(if level % 2 == 0 { ']' } else { '}' });
            }
            let tree: Value = serde_json::from_str(&case).unwrap();
            assert_eq!(
                text(&case).pretty(),
                serde_json::to_string_pretty(&tree).unwrap(),
                "{case}"
            );
        }
    }

    #[test]
    fn a_string_longer_than_the_layout_buffer_is_laid_out_whole() {
        // Written past the buffer, between what was laid out before and
        // after it: the order must hold.
        let long = "line\\n\\\"".repeat(20_000);
        let case = format!(r#"{{"a":1,"content":"{long}","lines":[1,2]}}"#);
        let tree: Value = serde_json::from_str(&case).unwrap();
        assert_eq!(
            text(&case).pretty(),
            serde_json::to_string_pretty(&tree).unwrap()
        );
    }

    #[test]
    fn a_string_ends_at_the_first_quote_no_escape_holds() {
        // Runs of backslashes before quotes, even and odd, and brackets,
        // commas and spaces inside strings: the layout must skip them all.
        let cases = [
            r#"["\\",1]"#,
            r#"["\\\\","\\\"",["\\\\\\"]]"#,
            r#"{"a\\":"b \" [ { , \\\" } ] ","c":["\\\"\\"]}"#,
            r#""\"\"\"""#,
            r#"["","\\"," "]"#,
        ];
        for case in cases {
            let tree: Value = serde_json::from_str(case).unwrap();
            assert_eq!(
                text(case).pretty(),
                serde_json::to_string_pretty(&tree).unwrap(),
                "{case}"
            );
            assert_eq!(text(case).compact(), case, "{case}");
            let spaced = text(&text(case).pretty());
            assert_eq!(spaced.compact(), case, "{case}");
        }
        // Brackets in strings do not count towards the nesting limit.
        let deep = format!(r#"["\\{}\"", 1]"#, "[".repeat(MAX_DEPTH + 5));
        assert!(JsonText::parse(deep).is_ok());
    }

    #[test]
    fn what_is_not_one_json_document_is_refused() {
        for bad in ["", "{", "{} {}", "{\"a\":1,}", "\"\u{1}\"", "nan"] {
            assert!(JsonText::parse(bad.to_string()).is_err(), "{bad:?}");
        }
        let deep = |n: usize| "[".repeat(n) + "]".repeat(n).as_str();
        assert!(
            JsonText::parse(deep(MAX_DEPTH + 1)).is_err(),
            "past the nesting limit"
        );
        let deepest = JsonText::parse(deep(MAX_DEPTH)).unwrap();
        assert!(
            deepest.to_value().unwrap().is_array(),
            "what passes becomes a tree"
        );
        assert!(
            JsonText::parse(format!(r#"["{}"]"#, "[".repeat(500))).is_ok(),
            "in a string"
        );
    }

    #[test]
    fn json_a_tree_cannot_hold_passes_as_text_and_is_refused_as_a_tree() {
        for case in [r#"{"n":1e400}"#, r#"["\ud800"]"#, r#""\udc00x""#] {
            let checked = text(case);
            assert_eq!(checked.compact(), case);
            assert!(checked.to_value().is_err(), "{case}");
        }
    }

    #[test]
    fn kinds_and_values() {
        assert!(text(" {\"a\":1}").is_object());
        assert!(!text("[1]").is_object());
        assert_eq!(text(r#""a\nb""#).as_string().as_deref(), Some("a\nb"));
        assert_eq!(text("1").as_string(), None);
        assert_eq!(
            text(r#"{"a":[1]}"#).to_value().unwrap(),
            serde_json::json!({"a": [1]})
        );
        let value = serde_json::json!({"z": 1, "a": "é"});
        assert_eq!(JsonText::from_value(&value).to_value().unwrap(), value);
    }
}
