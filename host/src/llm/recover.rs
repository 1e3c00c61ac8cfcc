//! Recovering what models get wrong in their tool calls.
//!
//! - [`repair_json`]: arguments written as almost-JSON — single quotes,
//!   trailing commas, unquoted keys, Python literals (`True`, `None`),
//!   code fences, missing closing braces. Strict parsing comes first;
//!   repair only when it fails; schema validation after either. Text
//!   nested deeper than [`MAX_JSON_DEPTH`] is refused with a message that
//!   says so (both scans here are loops, never recursion).
//!
//! Calls a model writes as text, in any dialect, are read by
//! [`super::dialect`].

use serde_json::Value;

/// A call recovered from text: the tool and its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveredCall {
    pub name: String,
    pub arguments: Value,
}

/// The deepest nesting of arrays and objects that arguments may have:
/// what serde_json's parser accepts (its recursion limit of 128 counts the
/// level it refuses). Everything downstream (schema validation, the
/// approval prompt, the run store) then recurses at most this deep.
pub const MAX_JSON_DEPTH: usize = 127;

/// Parses `text` as a JSON value: strictly, then after repair. Returns the
/// value and whether it needed repair.
pub fn parse_lenient(text: &str) -> Result<(Value, bool), String> {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(value) => Ok((value, false)),
        Err(strict) => {
            if let Some((line, column)) = too_deep_at(text.trim()) {
                return Err(format!(
                    "the JSON nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects (at line {line}, column {column}); send it with less nesting"
                ));
            }
            let repaired = repair_json(text);
            serde_json::from_str::<Value>(&repaired)
                .map(|v| (v, true))
                .map_err(|_| strict.to_string())
        }
    }
}

/// Where `text` first opens an array or object past [`MAX_JSON_DEPTH`]
/// levels (1-based line and column, in characters), ignoring brackets
/// inside strings of either quote.
pub fn too_deep_at(text: &str) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut column) = (0usize, 1, 0);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        column += 1;
        if c == '\n' {
            (line, column) = (line + 1, 0);
        }
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_JSON_DEPTH {
                        return Some((line, column));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    None
}

/// `text` with the common almost-JSON mistakes fixed (see the module doc).
/// The result may still be invalid; the caller parses it.
pub fn repair_json(text: &str) -> String {
    let text = strip_fence(text.trim());
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack: Vec<char> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '\'' => {
                // A string, re-emitted with double quotes.
                let quote = c;
                out.push('"');
                i += 1;
                let mut closed = false;
                while i < chars.len() {
                    let d = chars[i];
                    if d == '\\' && i + 1 < chars.len() {
                        let next = chars[i + 1];
                        if quote == '\'' && next == '\'' {
                            out.push('\'');
                        } else {
                            out.push('\\');
                            out.push(next);
                        }
                        i += 2;
                        continue;
                    }
                    if d == quote {
                        closed = true;
                        i += 1;
                        break;
                    }
                    if d == '"' {
                        out.push_str("\\\"");
                    } else if d == '\n' {
                        out.push_str("\\n");
                    } else {
                        out.push(d);
                    }
                    i += 1;
                }
                out.push('"');
                if !closed {
                    break;
                }
                continue;
            }
            '{' | '[' => {
                stack.push(if c == '{' { '}' } else { ']' });
                out.push(c);
            }
            '}' | ']' => {
                trim_trailing_comma(&mut out);
                if stack.last() == Some(&c) {
                    stack.pop();
                }
                out.push(c);
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let mut j = i;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                let is_key = j < chars.len() && chars[j] == ':' && stack.last() == Some(&'}');
                match word.as_str() {
                    _ if is_key => {
                        out.push('"');
                        out.push_str(&word);
                        out.push('"');
                    }
                    "True" | "true" => out.push_str("true"),
                    "False" | "false" => out.push_str("false"),
                    "None" | "null" | "nil" => out.push_str("null"),
                    _ => out.push_str(&word),
                }
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    trim_trailing_comma(&mut out);
    while let Some(close) = stack.pop() {
        trim_trailing_comma(&mut out);
        out.push(close);
    }
    out
}

fn trim_trailing_comma(out: &mut String) {
    let trimmed = out.trim_end();
    if trimmed.ends_with(',') {
        let at = trimmed.len() - 1;
        out.truncate(at);
    }
}

/// The inside of a Markdown code fence, if `text` is exactly one.
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repairs() {
        let cases = [
            ("{'path': 'a.md'}", json!({"path": "a.md"})),
            ("{\"path\": \"a.md\",}", json!({"path": "a.md"})),
            (
                "{path: \"a.md\", recursive: True}",
                json!({"path": "a.md", "recursive": true}),
            ),
            ("{\"path\": \"a.md\"", json!({"path": "a.md"})),
            ("```json\n{\"x\": None}\n```", json!({"x": null})),
            (
                "{'text': 'it\\'s \"quoted\"'}",
                json!({"text": "it's \"quoted\""}),
            ),
            (
                "{\"a\": [1, 2,], \"b\": {\"c\": 1,},}",
                json!({"a": [1, 2], "b": {"c": 1}}),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_lenient(text).map(|(v, _)| v), Ok(expected), "{text}");
        }
    }

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn the_depth_limit_is_serde_json_s_and_past_it_the_error_says_so() {
        assert!(serde_json::from_str::<Value>(&nested(MAX_JSON_DEPTH)).is_ok());
        assert!(serde_json::from_str::<Value>(&nested(MAX_JSON_DEPTH + 1)).is_err());
        assert!(
            !parse_lenient(&nested(MAX_JSON_DEPTH)).unwrap().1,
            "no repair needed"
        );
        let error = parse_lenient(&nested(MAX_JSON_DEPTH + 1)).unwrap_err();
        assert!(
            error.starts_with("the JSON nests deeper than 127 levels")
                && error.contains("line 1, column 128"),
            "{error}"
        );
        // Brackets in strings are text, not nesting.
        let quoted = format!(
            "{{\"a\": \"{}\", 'b': '{}'}}",
            "[".repeat(500),
            "{".repeat(500)
        );
        assert_eq!(too_deep_at(&quoted), None);
        assert_eq!(
            too_deep_at(&format!("{{\n \"a\": {}", "[".repeat(200))),
            Some((2, 133))
        );
    }

    // Regression: a model's arguments `[[[[…` 100,000 levels deep, unclosed
    // (almost-JSON), must give an error, not a crash, in both parsers here.
    #[test]
    fn a_hundred_thousand_levels_from_a_model_are_an_error() {
        let deep = "[".repeat(100_000);
        let error = parse_lenient(&deep).unwrap_err();
        assert!(error.contains("deeper than 127 levels"), "{error}");
        let deep_object = format!("{{\"path\": {}", "{\"a\": ".repeat(100_000));
        assert!(parse_lenient(&deep_object).is_err());
        let leaked =
            format!("<tool_call>{{\"name\": \"read_file\", \"arguments\": {deep}</tool_call>");
        let reply = super::super::dialect::read_reply(&leaked, false, &[]);
        assert!(
            reply.calls.iter().all(Result::is_err),
            "{:?}",
            reply.calls.len()
        );
        // Repair alone is a loop too: it closes every bracket.
        assert_eq!(repair_json(&deep).len(), 200_000);
    }
}
