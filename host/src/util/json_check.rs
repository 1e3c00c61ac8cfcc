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
fn space(bytes: &[u8], mut at: usize, spaced: &mut bool) -> usize {
    let from = at;
    while at < bytes.len() && matches!(bytes[at], b' ' | b'\n' | b'\r' | b'\t') {
        at += 1;
    }
    *spaced |= at != from;
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
/// quote.
fn string(bytes: &[u8], open: usize) -> Option<usize> {
    let mut at = open + 1;
    loop {
        at = plain_run(bytes, at);
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => {
                at += 1;
                match *bytes.get(at)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 1,
                    b'u' => {
                        let digits = bytes.get(at + 1..at + 5)?;
                        if !digits.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        at += 5;
                    }
                    _ => return None,
                }
            }
            // A control character: JSON wants it escaped.
            _ => return None,
        }
    }
}

/// The index of the first byte from `at` that a string cannot hold as it
/// is: a quote, a backslash or a control character (or the end). Eight
/// bytes at a time: a file's text is most of a result.
fn plain_run(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // Whether any byte of `word` is zero.
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS != 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_ne_bytes(chunk.try_into().expect("eight bytes"));
        let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
        if below_space
            || has_zero(word ^ (ONES * u64::from(b'"')))
            || has_zero(word ^ (ONES * u64::from(b'\\')))
        {
            break;
        }
        at += 8;
    }
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
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    /// serde_json's answer: one document, within `limit` levels.
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
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
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
    fn long_strings_are_checked_a_word_at_a_time_to_their_last_byte() {
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
