//! JSON text checked in one pass: whether it is one document, how deep it
//! nests, and whether it has whitespace between its tokens.
//!
//! Every tool result is checked before the host passes it on
//! (`util::json_text`). serde_json's own check (reading the text as a
//! `RawValue`) and a second pass for the nesting and the whitespace took a
//! tenth of a 20,000-entry listing's process (issue 21); this is both in
//! one. It accepts exactly what serde_json reads as a `RawValue` (RFC 8259:
//! no trailing commas, comments or bare control characters in strings; a
//! `\u` escape is any four hex digits, as serde_json lets through when it
//! only checks), so a caller may fall back to serde_json for the message
//! when it says no. The tests compare the two on generated text.

use super::json_marks::{SHORT, marks, short_marks};

/// What a successful [`check`] learned about the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    /// Whitespace stands outside the strings (before, between or after
    /// tokens).
    pub spaced: bool,
}

/// The deepest nesting [`check`] can follow: one bit a level.
pub const MAX_LIMIT: usize = 128;

/// Whether `text` is one JSON document nesting arrays and objects no
/// deeper than `limit` (at most [`MAX_LIMIT`]); `None` if it is not.
pub fn check(text: &str, limit: usize) -> Option<Checked> {
    let limit = limit.min(MAX_LIMIT);
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut spaced = false;
    // One bit a level, the innermost lowest: set for an object.
    let mut objects: u128 = 0;
    let mut depth = 0usize;
    'value: loop {
        at = space(bytes, at, &mut spaced);
        match *bytes.get(at)? {
            open @ (b'{' | b'[') => {
                depth += 1;
                if depth > limit {
                    return None;
                }
                let object = open == b'{';
                objects = (objects << 1) | u128::from(object);
                at = space(bytes, at + 1, &mut spaced);
                let close = if object { b'}' } else { b']' };
                if bytes.get(at) == Some(&close) {
                    at += 1;
                    depth -= 1;
                    objects >>= 1;
                } else {
                    if object {
                        at = key(bytes, at, &mut spaced)?;
                    }
                    continue 'value;
                }
            }
            b'"' => at = string(bytes, at)?,
            b't' => at = literal(bytes, at, b"true")?,
            b'f' => at = literal(bytes, at, b"false")?,
            b'n' => at = literal(bytes, at, b"null")?,
            b'-' | b'0'..=b'9' => at = number(bytes, at)?,
            _ => return None,
        }
        // After a value: the end, or what comes next in its container.
        loop {
            at = space(bytes, at, &mut spaced);
            if depth == 0 {
                return (at == bytes.len()).then_some(Checked { spaced });
            }
            let object = objects & 1 == 1;
            match *bytes.get(at)? {
                b',' => {
                    at += 1;
                    if object {
                        at = space(bytes, at, &mut spaced);
                        at = key(bytes, at, &mut spaced)?;
                    }
                    continue 'value;
                }
                b'}' if object => {}
                b']' if !object => {}
                _ => return None,
            }
            at += 1;
            depth -= 1;
            objects >>= 1;
        }
    }
}

/// Skips JSON's whitespace from `at`, noting whether there was any.
fn space(bytes: &[u8], at: usize, spaced: &mut bool) -> usize {
    let past = skip_space(bytes, at);
    *spaced |= past != at;
    past
}

/// The index of the first byte at or after `at` that is not JSON's
/// whitespace (space, tab, line feed, carriage return).
pub fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && matches!(bytes[at], b' ' | b'\n' | b'\r' | b'\t') {
        at += 1;
    }
    at
}

/// A member's key at `at` and the colon after it: the index past the
/// colon.
fn key(bytes: &[u8], at: usize, spaced: &mut bool) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let at = space(bytes, string(bytes, at)?, spaced);
    (bytes.get(at) == Some(&b':')).then_some(at + 1)
}

/// The string whose opening quote is at `open`: the index past its closing
/// quote. Sixty-four bytes at a time while that many remain ([`chunk`]),
/// the rest a run at a time.
fn string(bytes: &[u8], open: usize) -> Option<usize> {
    let mut at = open + 1;
    if let Some(end) = short_end(bytes, at) {
        return Some(end);
    }
    let mut escaped_first = false;
    while let Some(block) = bytes.get(at..at + 64) {
        match chunk(
            bytes,
            at,
            block.try_into().expect("64 bytes"),
            &mut escaped_first,
        )? {
            Some(end) => return Some(end),
            None => at += 64,
        }
    }
    if escaped_first {
        // The last chunk ended in a backslash that escapes the next byte:
        // the rest is read from that backslash.
        at -= 1;
    }
    loop {
        at = plain_run(bytes, at);
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => at = escape(bytes, at)?,
            // A control character: JSON wants it escaped.
            _ => return None,
        }
    }
}

/// The end of the string whose first byte is at `at` (the index past its
/// closing quote), if its first [`SHORT`] bytes hold that quote before any
/// backslash or control character: a listing's keys and names, most of a
/// large result's strings, end there. Marking a 64-byte block for each
/// cost a listing's check twice what these two vectors do.
pub(super) fn short_end(bytes: &[u8], at: usize) -> Option<usize> {
    let window: &[u8; SHORT] = bytes.get(at..at + SHORT)?.try_into().ok()?;
    let (quotes, stops) = short_marks(window);
    let quote = quotes.trailing_zeros();
    (quote < stops.trailing_zeros()).then(|| at + quote as usize + 1)
}

/// The escape whose backslash is at `at`: the index past it.
fn escape(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(at + 2),
        b'u' => {
            let digits = bytes.get(at + 2..at + 6)?;
            digits.iter().all(u8::is_ascii_hexdigit).then_some(at + 6)
        }
        _ => None,
    }
}

/// Sixty-four bytes of a string at `at` (`block`), checked at once: `None`
/// if they break it, `Some(Some(end))` if it ends in them (the index past
/// its closing quote), `Some(None)` if it goes on. `escaped_first` says
/// whether the block's first byte is escaped (by a backslash that ended
/// the block before), and is set for the next.
///
/// The quotes, backslashes and control characters are marked a bit a byte
/// ([`super::json_marks`]); which bytes a backslash escapes is found for all of them
/// at once by the subtraction simdjson uses (a run of backslashes escapes
/// the byte after it when the run is odd), so that only the escaped bytes
/// are looked at one by one: a line of text costs no more than its share
/// of a block, whatever its escaped newline.
fn chunk(
    bytes: &[u8],
    at: usize,
    block: &[u8; 64],
    escaped_first: &mut bool,
) -> Option<Option<usize>> {
    /// Every odd bit: where a run of backslashes starting at an even bit
    /// would have to end to leave the byte after it escaped.
    const ODD_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    let marks = marks(block);
    let carried = u64::from(*escaped_first);
    let escaped = if marks.backslashes == 0 {
        *escaped_first = false;
        carried
    } else {
        // A backslash escaped by the one before cannot escape another.
        let escapers = marks.backslashes & !carried;
        let codes = (((escapers << 1) | ODD_BITS).wrapping_sub(escapers)) ^ ODD_BITS;
        let escaped = codes ^ (marks.backslashes | carried);
        *escaped_first = (codes & marks.backslashes) >> 63 == 1;
        escaped
    };
    let closing = marks.quotes & !escaped;
    // The bytes of the string in this block: those before its closing quote.
    let within = match closing {
        0 => u64::MAX,
        closing => (1u64 << closing.trailing_zeros()) - 1,
    };
    if marks.controls & within != 0 {
        // A control character: JSON wants it escaped.
        return None;
    }
    // An escaped quote, backslash or `n` (a newline, the most common by
    // far) is an escape as it stands; the rest are looked at one by one.
    let mut letters = escaped & within & !(marks.quotes | marks.backslashes | marks.ns);
    while letters != 0 {
        let escaped_at = at + letters.trailing_zeros() as usize;
        letters &= letters - 1;
        escape(bytes, escaped_at - 1)?;
    }
    Some((closing != 0).then(|| at + closing.trailing_zeros() as usize + 1))
}

/// The index of the first byte from `at` that a string cannot hold as it
/// is: a quote, a backslash or a control character (or the end). A byte
/// at a time: only the last 63 bytes of a text come here, the rest goes a
/// block at a time ([`chunk`]).
fn plain_run(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && !matches!(bytes[at], b'"' | b'\\' | 0..=0x1f) {
        at += 1;
    }
    at
}

/// `word` (`true`, `false`, `null`) at `at`: the index past it.
fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    bytes[at..].starts_with(word).then_some(at + word.len())
}

/// A number at `at` (`-`, then `0` or digits not starting with `0`, then
/// an optional fraction and exponent): the index past it.
fn number(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |at: usize| {
        bytes[at.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    if bytes[at] == b'-' {
        at += 1;
    }
    match bytes.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at += digits(at),
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        let n = digits(at + 1);
        if n == 0 {
            return None;
        }
        at += 1 + n;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let n = digits(at);
        if n == 0 {
            return None;
        }
        at += n;
    }
    Some(at)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::value::RawValue;

    /// serde_json's answer: one document, within `limit` levels.
    /// A xorshift generator from `seed`: the same texts on every run.
    pub(in crate::util) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    fn serde_says(text: &str, limit: usize) -> bool {
        RawValue::from_string(text.to_string()).is_ok() && depth_of(text) <= limit
    }

    /// The nesting of text serde_json took, counted outside strings.
    fn depth_of(text: &str) -> usize {
        let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
        for b in text.bytes() {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        deepest
    }

    #[test]
    fn it_takes_and_refuses_what_serde_json_does() {
        let cases = [
            "",
            " ",
            "0",
            "-0",
            "01",
            "-",
            "1.",
            ".5",
            "1.5",
            "1e5",
            "1E+5",
            "1e-05",
            "1e",
            "1e+",
            "-01",
            "2.0e3x",
            "true",
            "tru",
            "truex",
            "false",
            "null",
            "nul",
            "NaN",
            "\"\"",
            "\"",
            "\"a\\\"\"",
            "\"\\u00e9\"",
            "\"\\ud800\"",
            "\"\\u12\"",
            "\"\\x\"",
            "\"\t\"",
            "\"\u{7f}\"",
            "\"é\"",
            "[]",
            "[",
            "]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[1,2]",
            "{}",
            "{\"a\":1}",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "{\"a\":}",
            "{1:2}",
            "{\"a\":1 \"b\":2}",
            " {\"a\" : [ 1 , { } ] } ",
            "{} {}",
            "[] x",
            "\"a\"\"b\"",
            "[\"a\\\\\"]",
            "{\"a\":[{\"b\":[[]]}]}",
            "[1]]",
            "{]",
            "[}",
            "[\"\\/\"]",
            "\u{feff}1",
            "1\u{0c}",
            "[\n1\r,\t2 ]",
        ];
        for case in cases {
            assert_eq!(
                check(case, 127).is_some(),
                serde_says(case, 127),
                "{case:?}"
            );
        }
    }

    #[test]
    fn generated_text_is_judged_as_serde_json_judges_it() {
        // Short strings of JSON's own bytes, shuffled: most are broken in
        // some way, and the two must agree on every one.
        const ALPHABET: &[u8] = b"{}[],:\"\\ 0-1.eE+tnru fl ax\t\n";
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut accepted = 0;
        for _ in 0..200_000 {
            let len = (next() % 12) as usize;
            let text: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize] as char)
                .collect();
            let ours = check(&text, 4).is_some();
            assert_eq!(ours, serde_says(&text, 4), "{text:?}");
            accepted += usize::from(ours);
        }
        assert!(
            accepted > 1_000,
            "the generator makes valid documents too: {accepted}"
        );
    }

    #[test]
    fn long_strings_of_escapes_are_judged_as_serde_json_judges_them() {
        // Strings across several blocks of sixty-four bytes, mostly plain
        // with runs of backslashes, escape letters, quotes and control
        // bytes: every run length at every place across a block's edge.
        // Pieces a string may hold, and pieces that break it (alone, or by
        // what they escape of the next piece).
        const FINE: &[&str] = &[
            "a", "a", "a", "é", "\\\\", "\\\\\\\\", "\\n", "\\\"", "\\u00e9", "\\/", "n", "u", "0",
        ];
        const BREAKING: &[&str] = &["\\", "\\u0", "\\x", "\"", "\n", "\\\\\\"];
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut accepted = 0;
        for round in 0..40_000 {
            let pieces = 20 + (next() % 120) as usize;
            let inner: String = (0..pieces)
                .map(|_| {
                    // Every other string breaks about once in forty pieces.
                    if round % 2 == 1 && next().is_multiple_of(40) {
                        BREAKING[(next() % BREAKING.len() as u64) as usize]
                    } else {
                        FINE[(next() % FINE.len() as u64) as usize]
                    }
                })
                .collect();
            let text = format!("[\"{inner}\",1]");
            let ours = check(&text, 4).is_some();
            assert_eq!(ours, serde_says(&text, 4), "{text:?}");
            accepted += usize::from(ours);
        }
        assert!(
            (20_000..39_000).contains(&accepted),
            "the generator makes both: {accepted} valid"
        );
    }

    #[test]
    fn nesting_is_counted_outside_strings_up_to_the_limit() {
        let deep = |n: usize| "[".repeat(n) + "]".repeat(n).as_str();
        assert!(check(&deep(127), 127).is_some());
        assert!(check(&deep(128), 127).is_none());
        assert!(check(&deep(128), 128).is_some());
        assert!(
            check(&deep(129), 500).is_none(),
            "no deeper than one bit a level"
        );
        assert!(check(&format!("[\"{}\"]", "[".repeat(300)), 2).is_some());
        let objects = "{\"a\":".repeat(127) + "1" + "}".repeat(127).as_str();
        assert!(check(&objects, 127).is_some());
    }

    #[test]
    fn whitespace_is_noticed_only_outside_strings() {
        assert_eq!(
            check(r#"{"a b":["x y"]}"#, 8),
            Some(Checked { spaced: false })
        );
        for spaced in [
            " 1",
            "1\n",
            "[1, 2]",
            "{\"a\" :1}",
            "{\"a\": 1}",
            "[ ]",
            "{\t}",
        ] {
            assert_eq!(
                check(spaced, 8),
                Some(Checked { spaced: true }),
                "{spaced:?}"
            );
        }
    }

    #[test]
    fn long_strings_are_checked_a_block_at_a_time_to_their_last_byte() {
        let long = "x".repeat(1003);
        assert!(check(&format!("\"{long}\""), 1).is_some());
        for bad in ['\u{1}', '\n', '"'] {
            for at in [0, 7, 8, 500, 1002] {
                let mut text: Vec<char> = long.chars().collect();
                text[at] = bad;
                let text = format!("\"{}\"", text.into_iter().collect::<String>());
                assert_eq!(
                    check(&text, 1).is_some(),
                    serde_says(&text, 1),
                    "{bad:?} at {at}"
                );
            }
        }
        let escaped = format!("\"{}\\n{}\"", "y".repeat(20), "z".repeat(20));
        assert!(check(&escaped, 1).is_some());
    }
}
