//! The dialects whose arguments are JSON: what sits between their markers,
//! and the bare forms (a reply that is only a call object, a list of them,
//! or `{"tool_calls": […]}`). Almost-JSON is repaired
//! ([`crate::llm::recover::parse_lenient`]) but a value cut off is never
//! completed.

use super::{RawArguments, RawCall};
use crate::llm::recover::parse_lenient;
use serde_json::{Map, Value};

/// Whether every bracket and quote in `text` is closed: a JSON value (or a
/// pythonic call) cut off by the end of the reply is not.
pub fn balanced(text: &str) -> bool {
    let mut depth: i64 = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' => quote = Some(c),
                '[' | '{' | '(' => depth += 1,
                ']' | '}' | ')' => depth -= 1,
                _ => {}
            },
        }
    }
    depth <= 0 && quote.is_none()
}

/// The first JSON value in `text` and what follows it. Strict JSON first;
/// then the whole text repaired, when it is balanced.
pub fn first_value(text: &str) -> Result<(Value, &str), String> {
    let text = text.trim_start();
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => {
            let end = values.byte_offset();
            Ok((value, &text[end..]))
        }
        _ if !balanced(text) => Err("it is cut off".into()),
        _ => parse_lenient(text)
            .map(|(value, _)| (value, ""))
            .map_err(|e| format!("it is not JSON: {e}")),
    }
}

/// The keys a call object may have besides its name and arguments.
const CALL_KEYS: &[&str] = &["id", "type", "tool_call_id", "index"];
/// The keys that name the tool, as models write them.
const NAME_KEYS: &[&str] = &["name", "tool_name", "tool", "function"];
/// The keys that hold the arguments, as models write them.
const ARGUMENT_KEYS: &[&str] = &["arguments", "parameters", "args", "params", "input"];

/// A call from a JSON object: `{"name": …, "arguments": {…}}`, also the
/// names `tool_name`, `tool`, `function` (a string), the arguments under
/// `parameters`, `args`, `params` or `input`, as a JSON string too, and
/// `{"function": {…}}` wrappers (the arguments inside or beside). A key
/// that is not the name, the arguments or a call's own (`id`, `type`) is
/// refused rather than dropped — a call run without an argument it was
/// given is not the call written — and so is a call that names its tool
/// twice or gives its arguments twice. (`strict`: a bare object in a
/// reply, which must look exactly like a call to be one; the same rules.)
pub fn call_object(value: &Value, _strict: bool) -> Result<RawCall, String> {
    let Value::Object(outer) = value else {
        return Err("a call is not a JSON object".into());
    };
    let (object, wrapper) = match outer.get("function") {
        Some(Value::Object(inner)) => (inner, true),
        _ => (outer, false),
    };
    let present = |o: &Map<String, Value>, keys: &[&'static str]| -> Vec<&'static str> {
        keys.iter()
            .copied()
            .filter(|k| o.contains_key(*k))
            .collect()
    };
    let names = present(object, NAME_KEYS);
    let name = match names.as_slice() {
        [key] => object[*key]
            .as_str()
            .ok_or("the name of a call is not a string")?
            .to_string(),
        [] => return Err("a call has no \"name\"".into()),
        keys => {
            return Err(format!(
                "a call names its tool twice ({}): give one \"name\"",
                keys.join(", ")
            ));
        }
    };
    let mut argument_keys: Vec<(&Map<String, Value>, &str)> = present(object, ARGUMENT_KEYS)
        .into_iter()
        .map(|k| (object, k))
        .collect();
    if wrapper {
        argument_keys.extend(
            present(outer, ARGUMENT_KEYS)
                .into_iter()
                .map(|k| (outer, k)),
        );
    }
    if argument_keys.len() > 1 {
        let keys: Vec<&str> = argument_keys.iter().map(|(_, k)| *k).collect();
        return Err(format!(
            "the call of `{name}` has its arguments twice ({})",
            keys.join(", ")
        ));
    }
    let arguments = match argument_keys.first().map(|(o, k)| &o[*k]) {
        None => Value::Object(Map::new()),
        Some(Value::String(text)) => parse_lenient(text)
            .map(|(v, _)| v)
            .map_err(|e| format!("the arguments of `{name}` are not JSON: {e}"))?,
        Some(other) => other.clone(),
    };
    if !arguments.is_object() {
        return Err(format!("the arguments of `{name}` are not a JSON object"));
    }
    let stray = |o: &Map<String, Value>, also: &[&str]| -> Option<String> {
        o.keys()
            .find(|k| {
                let k = k.as_str();
                !NAME_KEYS.contains(&k)
                    && !ARGUMENT_KEYS.contains(&k)
                    && !CALL_KEYS.contains(&k)
                    && !also.contains(&k)
            })
            .cloned()
    };
    let found = if wrapper {
        stray(outer, &["function"]).or_else(|| stray(object, &[]))
    } else {
        stray(outer, &[])
    };
    if let Some(key) = found {
        return Err(format!(
            "the call of `{name}` has a key `{}` that is not its name or its arguments: put every argument in \"arguments\"",
            crate::util::text::shorten(&key, 40)
        ));
    }
    Ok(RawCall {
        name,
        arguments: RawArguments::Json(arguments),
    })
}

/// A call object, or a list of them; also `{"tool_call": {…}}` and
/// `{"tool_calls": […]}` (with an empty `content` and the `assistant` role
/// beside it, as a message of OpenAI's API is written).
fn calls_of(value: &Value, strict: bool) -> Result<Vec<RawCall>, String> {
    match value {
        Value::Array(items) => items.iter().map(|v| call_object(v, strict)).collect(),
        Value::Object(o) if o.len() == 1 && o.contains_key("tool_call") => {
            calls_of(&o["tool_call"], strict)
        }
        Value::Object(o) if o.contains_key("tool_calls") && is_message_of_calls(o) => {
            calls_of(&o["tool_calls"], strict)
        }
        other => Ok(vec![call_object(other, strict)?]),
    }
}

/// `{"tool_calls": […]}`, alone or in a message with nothing else to say.
fn is_message_of_calls(o: &Map<String, Value>) -> bool {
    o.iter().all(|(k, v)| match k.as_str() {
        "tool_calls" => true,
        "content" => v.is_null() || v.as_str().is_some_and(|t| t.trim().is_empty()),
        "role" => v == "assistant",
        _ => false,
    })
}

/// JSON values one after another (separated by whitespace, `;` or `,`),
/// each a call or a list of calls, and nothing else.
fn value_run(text: &str, strict: bool) -> Result<Vec<RawCall>, String> {
    let mut calls = Vec::new();
    let mut rest = strip_fence(text.trim());
    while !rest.is_empty() {
        let (value, after) = first_value(rest)?;
        given_once(&rest[..rest.len() - after.len()])?;
        calls.extend(calls_of(&value, strict)?);
        rest = after
            .trim_start()
            .trim_start_matches([';', ','])
            .trim_start();
        // A bracket too many after a whole call (`{…}}}`), as small models
        // write: the call is whole, the bracket closes nothing.
        if !strict
            && !calls.is_empty()
            && rest
                .chars()
                .all(|c| matches!(c, '}' | ']') || c.is_whitespace())
        {
            break;
        }
    }
    Ok(calls)
}

/// Refuses a JSON value that gives a key twice in one object (`"name"`,
/// `"arguments"`, an argument): a parser keeps one of them, and the call
/// run would not be the one written. Text that is not strict JSON (what
/// the repair reads) is left to it.
fn given_once(text: &str) -> Result<(), String> {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};

    struct Once;
    struct Looking;
    impl<'de> Visitor<'de> for Looking {
        type Value = Once;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Once, A::Error> {
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key.clone()) {
                    return Err(A::Error::custom(format!(
                        "the key `{}` is given twice in one object",
                        crate::util::text::shorten(&key, 40)
                    )));
                }
                map.next_value::<Once>()?;
            }
            Ok(Once)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Once, A::Error> {
            while seq.next_element::<Once>()?.is_some() {}
            Ok(Once)
        }
        fn visit_bool<E>(self, _: bool) -> Result<Once, E> {
            Ok(Once)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Once, E> {
            Ok(Once)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Once, E> {
            Ok(Once)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Once, E> {
            Ok(Once)
        }
        fn visit_str<E>(self, _: &str) -> Result<Once, E> {
            Ok(Once)
        }
        fn visit_unit<E>(self) -> Result<Once, E> {
            Ok(Once)
        }
    }
    impl<'de> Deserialize<'de> for Once {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Once, D::Error> {
            d.deserialize_any(Looking)
        }
    }
    match serde_json::from_str::<Once>(text) {
        Err(e) if e.to_string().contains("given twice") => {
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message);
            Err(message.to_string())
        }
        _ => Ok(()),
    }
}

/// The inside of a Markdown code fence, if `text` is exactly one.
pub fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let Some(inner) = rest.trim_end().strip_suffix("```") else {
        return text;
    };
    inner
        .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
        .trim()
}

fn starts_json(text: &str) -> bool {
    let text = strip_fence(text.trim());
    text.starts_with('{') || text.starts_with('[')
}

/// Hermes: one call object (or several, or a list) per `<tool_call>`.
pub fn hermes(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    starts_json(body).then(|| value_run(body, false))
}

/// A bare reply: call objects (Llama 3.x, several separated by `;`), a
/// JSON list of them, or `{"tool_calls": […]}`. Only exact call shapes.
pub fn bare(text: &str) -> Option<Result<Vec<RawCall>, String>> {
    if !starts_json(text) {
        return None;
    }
    value_run(text, true).ok().map(Ok)
}

/// A JSON list (or one object) of calls: Granite, Nemotron, Command R7B.
pub fn list(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    Some(value_run(body, false))
}

/// `functools[…]` (Phi-4-mini, Firefunction).
pub fn functools(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    body.starts_with('[').then(|| value_run(body, false))
}

/// Apertus: `[{"name": {arguments}}, …]`.
pub fn named_objects(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let parsed = first_value(body).and_then(|(value, _)| {
        let items = match value {
            Value::Array(items) => items,
            other => vec![other],
        };
        items
            .into_iter()
            .map(|item| match item {
                Value::Object(o) if o.len() == 1 => {
                    let (name, arguments) = o.into_iter().next().expect("one entry");
                    if arguments.is_object() {
                        Ok(RawCall {
                            name,
                            arguments: RawArguments::Json(arguments),
                        })
                    } else {
                        Err(format!("the arguments of `{name}` are not a JSON object"))
                    }
                }
                _ => Err("each call is {\"name\": {arguments}}".into()),
            })
            .collect()
    });
    Some(parsed)
}

/// Mistral: after `[TOOL_CALLS]`, a JSON list of calls, or
/// `name[ARGS]{…}` (also `name[CALL_ID]id[ARGS]{…}`).
pub fn mistral(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let body = body.trim();
    if starts_json(body) {
        return Some(value_run(body, false));
    }
    let Some((head, args)) = body.split_once("[ARGS]") else {
        return Some(Err(
            "after [TOOL_CALLS] comes a JSON list of calls, or the name, [ARGS] and the JSON arguments".into(),
        ));
    };
    let name = head.split("[CALL_ID]").next().unwrap_or("").trim();
    Some(named_json(name, args))
}

/// A call from a name and its JSON arguments (nothing may follow them).
fn named_json(name: &str, arguments: &str) -> Result<Vec<RawCall>, String> {
    tool_name(name)?;
    let arguments = strip_fence(arguments.trim());
    let (value, rest) = if arguments.is_empty() {
        (Value::Object(Map::new()), "")
    } else {
        first_value(arguments).map_err(|e| format!("the arguments of `{name}`: {e}"))?
    };
    given_once(&arguments[..arguments.len() - rest.len()])
        .map_err(|e| format!("the arguments of `{name}`: {e}"))?;
    if !rest.trim().is_empty() {
        return Err(format!("text follows the arguments of `{name}`"));
    }
    if !value.is_object() {
        return Err(format!("the arguments of `{name}` are not a JSON object"));
    }
    Ok(vec![RawCall {
        name: name.to_string(),
        arguments: RawArguments::Json(value),
    }])
}

/// Whether `name` can be a tool's name: letters, digits, `_ - . :`.
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
}

/// `name` if it can be a tool's name; otherwise what to tell the model.
pub fn tool_name(name: &str) -> Result<&str, String> {
    if is_name(name) {
        Ok(name)
    } else {
        Err(format!(
            "`{}` is not a tool name",
            crate::util::text::shorten(name, 60)
        ))
    }
}

/// Functionary v3.1 and Llama 3.1: `<function=name>{…}</function>`.
pub fn function_tag(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let (name, args) = body.split_once('>')?;
    Some(named_json(name.trim(), args))
}

/// Functionary v3: `>>>name\n{…}` (`>>>all` is text, removed earlier).
pub fn functionary(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let (name, args) = body.split_once('\n').unwrap_or((body, ""));
    let name = name.trim();
    is_name(name).then(|| named_json(name, args))
}

/// A reply that is a Functionary v3 call whose `>>>` was in the prompt:
/// the name on the first line, JSON arguments after it.
pub fn functionary_bare(text: &str) -> Option<Result<Vec<RawCall>, String>> {
    let (_, args) = text.split_once('\n')?;
    if !args.trim_start().starts_with('{') {
        return None;
    }
    functionary(text)
}

/// Llama 3.1 after `<|python_tag|>`: call objects separated by `;`, or a
/// built-in tool as `name.call(query="…")`.
pub fn python_tag(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    if starts_json(body) {
        return Some(value_run(body, false));
    }
    super::pythonic::list_or_json(body)
}

/// Kimi K2: `<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{…}<|tool_call_end|>`, repeated.
pub fn kimi(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let marks = Marks {
        dialect: "Kimi",
        begin: "<|tool_call_begin|>",
        sep: "<|tool_call_argument_begin|>",
        end: "<|tool_call_end|>",
        // The calls' section has its own closing marker: a body read here
        // was closed, and its last call's end may be that marker.
        end_required: false,
    };
    let calls = marks.calls(body, |head, after| {
        let head = head.trim();
        let head = head.strip_prefix("functions.").unwrap_or(head);
        let name = match head.rsplit_once(':') {
            Some((name, index)) if index.chars().all(|c| c.is_ascii_digit()) => name,
            _ => head,
        };
        (name, after)
    });
    Some(calls)
}

/// The markers of a dialect whose calls are marked one by one (DeepSeek,
/// Kimi): `begin`, a head naming the tool, `sep`, the arguments as one
/// JSON value, `end`, repeated.
struct Marks {
    dialect: &'static str,
    begin: &'static str,
    sep: &'static str,
    end: &'static str,
    /// Every call must end with `end`, the last too (the calls' own closing
    /// marker may be dropped by the server, so a call without its end may
    /// have been cut off); else only where text follows it.
    end_required: bool,
}

impl Marks {
    /// Each call read in order: its head and what follows `sep` are made
    /// into its name and arguments by `named`; the arguments are one JSON
    /// value (a marker inside one of its strings is text), in a Markdown
    /// fence or not; then its end. A body without `begin` is that of one
    /// call's own block, whose closing marker was its end.
    fn calls<'a>(
        &self,
        body: &'a str,
        named: impl Fn(&'a str, &'a str) -> (&'a str, &'a str),
    ) -> Result<Vec<RawCall>, String> {
        let mut calls = Vec::new();
        let mut rest = body.trim_start();
        let one = !rest.starts_with(self.begin);
        while !rest.is_empty() {
            let call = match rest.strip_prefix(self.begin) {
                Some(call) => call,
                None if one && calls.is_empty() => rest,
                // Between calls only white space.
                None => {
                    return Err(format!(
                        "text where a {} call was expected: `{}`",
                        self.dialect,
                        crate::util::text::shorten(rest, 40)
                    ));
                }
            };
            let Some((head, after)) = call.split_once(self.sep) else {
                return Err(format!(
                    "a {} call is its name, {} and the JSON arguments",
                    self.dialect, self.sep
                ));
            };
            let (name, arguments) = named(head, after);
            let name = tool_name(name.trim())?;
            let arguments = arguments.trim_start();
            let (fenced, arguments) = match arguments.strip_prefix("```") {
                Some(inside) => (
                    true,
                    inside.trim_start_matches(|c: char| c.is_ascii_alphanumeric()),
                ),
                None => (false, arguments),
            };
            let length =
                if arguments.trim().is_empty() || arguments.trim_start().starts_with(self.end) {
                    0
                } else {
                    let (_, after) = first_value(arguments)
                        .map_err(|e| format!("the arguments of `{name}`: {e}"))?;
                    arguments.len() - after.len()
                };
            calls.extend(named_json(name, &arguments[..length])?);
            let mut after = arguments[length..].trim_start();
            if fenced {
                after = after.strip_prefix("```").unwrap_or(after).trim_start();
            }
            rest = match after.strip_prefix(self.end) {
                Some(after) => after.trim_start(),
                None if after.is_empty() && (one || !self.end_required) => after,
                // A call that was begun ends with its own marker: without
                // it (the reply ended first) it was cut off, whatever its
                // arguments look like.
                None if after.is_empty() => {
                    return Err(format!(
                        "the call was cut off before its {}, so it was not run",
                        self.end
                    ));
                }
                None => {
                    return Err(format!(
                        "text follows the arguments of `{name}` before its {}",
                        self.end
                    ));
                }
            };
        }
        Ok(calls)
    }
}

/// DeepSeek's special tokens, as the tokenizer writes them and as they
/// arrive written with ASCII bars (`<|tool▁sep|>`).
const DEEPSEEK_TOKENS: &[&str] = &[
    "tool▁calls▁begin",
    "tool▁calls▁end",
    "tool▁call▁begin",
    "tool▁call▁end",
    "tool▁sep",
];

/// `body` with DeepSeek's tokens written with ASCII bars made the
/// tokenizer's (and nothing else: a `|` in an argument stays).
fn deepseek_tokens(body: &str) -> String {
    let mut body = body.to_string();
    for token in DEEPSEEK_TOKENS {
        let spelled = token.replace('▁', "_");
        for written in [format!("<|{token}|>"), format!("<|{spelled}|>")] {
            body = body.replace(&written, &format!("<｜{token}｜>"));
        }
    }
    body
}

/// DeepSeek R1 / V3: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>name\n```json\n{…}\n```<｜tool▁call▁end｜>`;
/// V3.1: `<｜tool▁call▁begin｜>name<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`.
pub fn deepseek(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let marks = Marks {
        dialect: "DeepSeek",
        begin: "<｜tool▁call▁begin｜>",
        sep: "<｜tool▁sep｜>",
        end: "<｜tool▁call▁end｜>",
        // The calls' closing marker may be a stop token the server drops.
        end_required: true,
    };
    let body = deepseek_tokens(body);
    let calls = marks.calls(&body, |head, after| {
        if head.trim() == "function" {
            after.split_once('\n').unwrap_or((after, ""))
        } else {
            (head, after)
        }
    });
    Some(calls)
}

/// GPT-OSS harmony, after `to=functions.`: `name <|constrain|>json<|message|>{…}`
/// (or `name<|channel|>commentary json<|message|>{…}`).
pub fn harmony(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let end = body
        .find(|c: char| c.is_whitespace() || c == '<')
        .unwrap_or(body.len());
    let name = &body[..end];
    let Some((_, args)) = body.rsplit_once("<|message|>") else {
        return Some(Err(format!(
            "the call of `{name}` has no <|message|> with its arguments"
        )));
    };
    Some(named_json(name, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_args(calls: &[RawCall]) -> Vec<(String, Value)> {
        calls
            .iter()
            .map(|c| match &c.arguments {
                RawArguments::Json(v) => (c.name.clone(), v.clone()),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn cut_json_is_never_completed() {
        assert!(first_value("{\"a\": [1, 2").is_err());
        assert!(first_value("{'a': 1,}").is_ok(), "repaired when whole");
        let (value, rest) = first_value("{\"a\": 1} ; {\"b\": 2}").unwrap();
        assert_eq!((value["a"].as_i64(), rest), (Some(1), " ; {\"b\": 2}"));
    }

    #[test]
    fn bodies() {
        let calls = mistral("get[CALL_ID]abc123def[ARGS]{\"x\": 1}")
            .unwrap()
            .unwrap();
        assert_eq!(
            json_args(&calls),
            [("get".into(), serde_json::json!({"x": 1}))]
        );
        assert!(mistral("read_fi").unwrap().is_err(), "a name cut off");
        let calls =
            deepseek("function<｜tool▁sep｜>get\n```json\n{\"x\": 1}\n```<｜tool▁call▁end｜>")
                .unwrap()
                .unwrap();
        assert_eq!(calls[0].name, "get");
        let calls = harmony("get_weather <|constrain|>json<|message|>{\"city\": \"SF\"}")
            .unwrap()
            .unwrap();
        assert_eq!(calls[0].name, "get_weather");
        let calls = kimi("<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{\"y\": 2}<|tool_call_end|>")
            .unwrap()
            .unwrap();
        assert_eq!(calls.len(), 2);
        assert!(
            bare("{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {}}")
                .unwrap()
                .is_ok()
        );
        assert!(
            bare("{\"name\": \"Ada\", \"age\": 36}").is_none(),
            "not a call's shape"
        );
    }
}
