//! The dialects whose calls are written like code:
//! - pythonic `[get(city='Paris', days=3), other()]` (Llama 3.2 small and
//!   Llama 4, LFM2, the function-calling leaderboard's prompt format);
//! - Gemma's ```` ```tool_code ```` blocks (`get(city="Paris")`, also
//!   wrapped in `print(…)`);
//! - FunctionGemma `call:get{city:<escape>Paris<escape>}`.
//!
//! Values are Python literals (strings in either quote, numbers, `True`,
//! `None`, lists, tuples, dicts); the schema types them after
//! ([`super::typing`]). Nesting is limited to
//! [`crate::llm::recover::MAX_JSON_DEPTH`], as for JSON.

use super::json::{self, is_name, tool_name};
use super::{RawArguments, RawCall};
use crate::llm::recover::MAX_JSON_DEPTH;
use serde_json::{Map, Number, Value};

/// A small reader of Python call syntax over the characters of a text.
struct Reader {
    chars: Vec<char>,
    at: usize,
}

type Read<T> = Result<T, String>;

impl Reader {
    fn new(text: &str) -> Self {
        Reader {
            chars: text.chars().collect(),
            at: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Read<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("expected `{c}` {what}"))
        }
    }

    fn at_end(&mut self) -> bool {
        self.skip_space();
        self.at >= self.chars.len()
    }

    /// A dotted name: `get_weather`, `brave_search.call`.
    fn name(&mut self) -> Option<String> {
        self.skip_space();
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-'))
        {
            self.at += 1;
        }
        (self.at > start).then(|| self.chars[start..self.at].iter().collect())
    }

    /// `name(key=value, …)`.
    fn call(&mut self) -> Read<RawCall> {
        let name = self.name().ok_or("expected a function name")?;
        self.expect('(', &format!("after `{name}`"))?;
        let mut arguments = Vec::new();
        loop {
            if self.eat(')') {
                break;
            }
            let key = self
                .name()
                .ok_or_else(|| format!("the arguments of `{name}` are not key=value"))?;
            self.expect('=', &format!("after `{key}` in the call of `{name}`"))?;
            arguments.push((key, self.literal(0)?));
            if !self.eat(',') {
                self.expect(')', &format!("to end the call of `{name}`"))?;
                break;
            }
        }
        // `get_weather` as a built-in tool's `get_weather.call`.
        let name = name.strip_suffix(".call").unwrap_or(&name).to_string();
        Ok(RawCall {
            name,
            arguments: RawArguments::Literal(arguments),
        })
    }

    fn literal(&mut self, depth: usize) -> Read<Value> {
        if depth > MAX_JSON_DEPTH {
            return Err(format!(
                "the arguments nest deeper than {MAX_JSON_DEPTH} levels"
            ));
        }
        self.skip_space();
        match self.peek().ok_or("a value is missing")? {
            '"' | '\'' => self.string().map(Value::String),
            '[' | '(' => {
                let close = if self.eat('[') {
                    ']'
                } else {
                    self.at += 1;
                    ')'
                };
                let mut items = Vec::new();
                loop {
                    if self.eat(close) {
                        break;
                    }
                    items.push(self.literal(depth + 1)?);
                    if !self.eat(',') {
                        self.expect(close, "to end a list")?;
                        break;
                    }
                }
                Ok(Value::Array(items))
            }
            '{' => {
                self.at += 1;
                let mut object = Map::new();
                loop {
                    if self.eat('}') {
                        break;
                    }
                    let key = match self.literal(depth + 1)? {
                        Value::String(key) => key,
                        other => other.to_string(),
                    };
                    self.expect(':', "after a key")?;
                    object.insert(key, self.literal(depth + 1)?);
                    if !self.eat(',') {
                        self.expect('}', "to end a dict")?;
                        break;
                    }
                }
                Ok(Value::Object(object))
            }
            _ => {
                let start = self.at;
                while self
                    .peek()
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
                {
                    self.at += 1;
                }
                let word: String = self.chars[start..self.at].iter().collect();
                bare_word(&word).ok_or_else(|| format!("`{word}` is not a value"))
            }
        }
    }

    /// A quoted string, either quote, single or triple, with escapes.
    fn string(&mut self) -> Read<String> {
        let quote = self.peek().ok_or("a string is missing")?;
        let triple = self.chars[self.at..].iter().take(3).all(|&c| c == quote)
            && self.chars.len() >= self.at + 3;
        self.at += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let c = self.peek().ok_or("a string is cut off")?;
            self.at += 1;
            if c == '\\' {
                let e = self.peek().ok_or("a string is cut off")?;
                self.at += 1;
                out.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    'u' => {
                        let hex: String = self.chars.iter().skip(self.at).take(4).collect();
                        self.at += 4;
                        u32::from_str_radix(&hex, 16)
                            .ok()
                            .and_then(char::from_u32)
                            .ok_or("a \\u escape is not a character")?
                    }
                    other => other,
                });
                continue;
            }
            if c == quote {
                if !triple {
                    return Ok(out);
                }
                if self.chars[self.at..].iter().take(2).all(|&d| d == quote)
                    && self.chars.len() >= self.at + 2
                {
                    self.at += 2;
                    return Ok(out);
                }
            }
            out.push(c);
        }
    }
}

/// A bare word as a value: a number, a Python or JSON constant.
fn bare_word(word: &str) -> Option<Value> {
    match word {
        "True" | "true" => Some(Value::Bool(true)),
        "False" | "false" => Some(Value::Bool(false)),
        "None" | "null" => Some(Value::Null),
        _ => {
            if let Ok(n) = word.parse::<i64>() {
                Some(Value::Number(n.into()))
            } else {
                word.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .and_then(Number::from_f64)
                    .map(Value::Number)
            }
        }
    }
}

/// Calls one after another (a list, or separated by newlines, `;` or `,`)
/// and nothing else.
fn calls(text: &str) -> Read<Vec<RawCall>> {
    let mut reader = Reader::new(text);
    let listed = reader.eat('[');
    let mut found = Vec::new();
    loop {
        if listed && reader.eat(']') {
            break;
        }
        found.push(reader.call()?);
        let separated = reader.eat(',') || reader.eat(';');
        if listed {
            if !separated {
                reader.expect(']', "to end the list of calls")?;
                break;
            }
        } else if reader.at_end() {
            break;
        }
    }
    if !reader.at_end() {
        let rest: String = reader.chars[reader.at..].iter().take(40).collect();
        return Err(format!("text follows the calls: `{rest}`"));
    }
    Ok(found)
}

/// Whether `text` starts like a call: `name(` or `[name(`.
fn looks_like_calls(text: &str) -> bool {
    let text = text.trim_start().trim_start_matches('[').trim_start();
    let end = text.find('(').unwrap_or(0);
    end > 0 && is_name(text[..end].trim_end())
}

/// A pythonic list (or JSON calls) between markers: LFM2, Llama 4.
pub fn list_or_json(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let body = json::strip_fence(body.trim());
    if body.starts_with('{') || body.starts_with("[{") || body.starts_with("[ {") {
        return json::list(body);
    }
    looks_like_calls(body).then(|| calls(body))
}

/// A bare reply that is only pythonic calls of tools.
pub fn bare(text: &str) -> Option<Result<Vec<RawCall>, String>> {
    let text = json::strip_fence(text.trim());
    if !looks_like_calls(text) {
        return None;
    }
    calls(text).ok().map(Ok)
}

/// Gemma's ```` ```tool_code ```` block: calls, perhaps in `print(…)`.
pub fn tool_code(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let body = body.trim();
    let body = body
        .strip_prefix("print(")
        .and_then(|b| b.strip_suffix(')'))
        .unwrap_or(body);
    looks_like_calls(body).then(|| calls(body))
}

/// FunctionGemma: `call:name{key:<escape>text<escape>,n:1}`; Gemma 4
/// writes `<|"|>` for `<escape>`.
pub fn function_gemma(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let body = body.trim();
    let rest = body.strip_prefix("call:")?;
    let Some(open) = rest.find('{') else {
        return Some(Err("a FunctionGemma call is call:name{…}".into()));
    };
    let name = rest[..open].trim();
    if let Err(e) = tool_name(name) {
        return Some(Err(e));
    }
    let escape = if rest.contains(GEMMA4_ESCAPE) {
        GEMMA4_ESCAPE
    } else {
        ESCAPE
    };
    let mut gemma = Gemma {
        text: &rest[open..],
        escape,
    };
    let parsed = gemma.object(0).and_then(|object| {
        if gemma.text.trim().is_empty() {
            Ok(object)
        } else {
            Err(format!("text follows the call of `{name}`"))
        }
    });
    Some(parsed.map(|object| {
        vec![RawCall {
            name: name.to_string(),
            arguments: RawArguments::Literal(object.into_iter().collect()),
        }]
    }))
}

/// FunctionGemma's argument syntax: `{k:v,…}`, `[v,…]`,
/// `<escape>text<escape>`, bare words.
struct Gemma<'t> {
    text: &'t str,
    /// The token around text values.
    escape: &'static str,
}

const ESCAPE: &str = "<escape>";
const GEMMA4_ESCAPE: &str = "<|\"|>";

impl Gemma<'_> {
    fn eat(&mut self, token: &str) -> bool {
        let trimmed = self.text.trim_start();
        match trimmed.strip_prefix(token) {
            Some(rest) => {
                self.text = rest;
                true
            }
            None => false,
        }
    }

    fn object(&mut self, depth: usize) -> Read<Map<String, Value>> {
        if !self.eat("{") {
            return Err("expected `{`".into());
        }
        let mut object = Map::new();
        loop {
            if self.eat("}") {
                return Ok(object);
            }
            let trimmed = self.text.trim_start();
            let key_end = trimmed.find(':').ok_or("a key has no `:`")?;
            let key = trimmed[..key_end].trim().trim_matches('"').to_string();
            self.text = &trimmed[key_end + 1..];
            object.insert(key, self.value(depth + 1)?);
            if !self.eat(",") {
                if self.eat("}") {
                    return Ok(object);
                }
                return Err("expected `,` or `}`".into());
            }
        }
    }

    fn value(&mut self, depth: usize) -> Read<Value> {
        if depth > MAX_JSON_DEPTH {
            return Err(format!(
                "the arguments nest deeper than {MAX_JSON_DEPTH} levels"
            ));
        }
        if self.eat(self.escape) {
            let end = self
                .text
                .find(self.escape)
                .ok_or("a text value is cut off")?;
            let value = self.text[..end].to_string();
            self.text = &self.text[end + self.escape.len()..];
            return Ok(Value::String(value));
        }
        if self.text.trim_start().starts_with('{') {
            return self.object(depth).map(Value::Object);
        }
        if self.eat("[") {
            let mut items = Vec::new();
            loop {
                if self.eat("]") {
                    return Ok(Value::Array(items));
                }
                items.push(self.value(depth + 1)?);
                if !self.eat(",") {
                    if self.eat("]") {
                        return Ok(Value::Array(items));
                    }
                    return Err("expected `,` or `]`".into());
                }
            }
        }
        let trimmed = self.text.trim_start();
        let end = trimmed.find([',', '}', ']']).unwrap_or(trimmed.len());
        let word = trimmed[..end].trim();
        self.text = &trimmed[end..];
        Ok(bare_word(word).unwrap_or_else(|| Value::String(word.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn literal(call: &RawCall) -> Value {
        match &call.arguments {
            RawArguments::Literal(a) => Value::Object(a.iter().cloned().collect()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn python_calls() {
        let found =
            calls("[get(city='Paris', days=3, deep={'a': [1, 2.5, None]}), other()]").unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(
            literal(&found[0]),
            json!({"city": "Paris", "days": 3, "deep": {"a": [1, 2.5, null]}})
        );
        assert_eq!(found[1].name, "other");
        assert!(calls("[get(city='Par").is_err(), "cut off");
        assert!(calls("get(city='x') and then some").is_err());
        let found = calls("brave_search.call(query=\"it's \\\"q\\\"\")").unwrap();
        assert_eq!(found[0].name, "brave_search");
        assert_eq!(literal(&found[0]), json!({"query": "it's \"q\""}));
        assert_eq!(
            tool_code("print(read_file(path=\"a.txt\"))")
                .unwrap()
                .unwrap()[0]
                .name,
            "read_file"
        );
    }

    #[test]
    fn function_gemma_calls() {
        let found = function_gemma(
            "call:get{city:<escape>Paris, FR<escape>,days:3,tags:[<escape>a<escape>]}",
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            literal(&found[0]),
            json!({"city": "Paris, FR", "days": 3, "tags": ["a"]})
        );
    }

    #[test]
    fn deep_literals_are_an_error() {
        let deep = format!("f(a={})", "[".repeat(100_000));
        assert!(calls(&deep).is_err());
    }
}
