//! The dialects whose arguments are XML-like elements: each value is text,
//! trimmed, and typed later by its parameter's schema
//! ([`super::typing`]).
//!
//! - Qwen3-Coder and Seed-OSS: `<function=name><parameter=key>value</parameter></function>`;
//! - GLM-4.5: `name<arg_key>key</arg_key><arg_value>value</arg_value>`;
//! - MiniMax-M2: `<invoke name="name"><parameter name="key">value</parameter></invoke>`;
//! - `<function name="name">{JSON}</function>`.

use super::json::{self, is_name, tool_name};
use super::{RawArguments, RawCall};
use crate::llm::recover::MAX_JSON_DEPTH;

/// The text between `open` and `close` at the start of `text` (after
/// whitespace), and what follows; an element cut off runs to the end.
fn element<'t>(text: &'t str, open: &str, close: &str) -> Option<(&'t str, &'t str)> {
    let body = text.trim_start().strip_prefix(open)?;
    Some(match body.find(close) {
        Some(end) => (&body[..end], &body[end + close.len()..]),
        None => (body, ""),
    })
}

/// The first attribute's value: `"x"`, `'x'` or `x` (other attributes
/// after it, `"x" string="true"`, are left out).
fn attribute(text: &str) -> &str {
    let text = text.trim();
    for quote in ['"', '\''] {
        if let Some(rest) = text.strip_prefix(quote) {
            return rest.split(quote).next().unwrap_or(rest);
        }
    }
    text.split_whitespace().next().unwrap_or(text)
}

/// A value as written between tags: surrounding blank lines and spaces
/// go, and a `<![CDATA[…]]>` section is its text.
fn value(text: &str) -> String {
    let text = text.trim();
    text.strip_prefix("<![CDATA[")
        .and_then(|t| t.strip_suffix("]]>"))
        .unwrap_or(text)
        .to_string()
}

/// Elements `open key sep value close`, one after another and nothing
/// else, as (key, trimmed value) pairs: `<parameter=k>v</parameter>`,
/// `<parameter name="k">v</parameter>`, Kimi K3's arguments.
fn pairs(
    mut rest: &str,
    (open, sep, close): (&str, &str, &str),
    name: &str,
) -> Result<Vec<(String, String)>, String> {
    let mut arguments = Vec::new();
    while !rest.trim().is_empty() {
        let Some((inner, after)) = element(rest, open, close) else {
            return Err(format!(
                "the call of `{name}` holds something other than {open}… elements"
            ));
        };
        let (key, text) = inner
            .split_once(sep)
            .ok_or_else(|| format!("a parameter of `{name}` has no `{sep}` after its name"))?;
        arguments.push((attribute(key).to_string(), value(text)));
        rest = after;
    }
    Ok(arguments)
}

/// Qwen3-Coder's parameters.
const QWEN3_PARAMETER: (&str, &str, &str) = ("<parameter=", ">", "</parameter>");

/// Qwen3-Coder XML, in a `<tool_call>` (several `<function=…>` elements)
/// or as the body of a `<function=` block (`name>` and the parameters).
pub fn qwen3(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let trimmed = body.trim_start();
    if trimmed.starts_with("<function=") {
        let mut calls = Vec::new();
        let mut rest = trimmed;
        while !rest.trim().is_empty() {
            let Some((inner, after)) = element(rest, "<function=", "</function>") else {
                return Some(Err(
                    "text follows the <function=…> elements in the call".into()
                ));
            };
            match one_function(inner) {
                Some(Ok(call)) => calls.push(call),
                Some(Err(e)) => return Some(Err(e)),
                None => return Some(Err("a <function=…> element holds no parameters".into())),
            }
            rest = after;
        }
        return Some(Ok(calls));
    }
    one_function(body).map(|call| call.map(|c| vec![c]))
}

/// `name>` and `<parameter=…>` elements (or none): `None` when the body
/// is something else (JSON arguments are another dialect's).
fn one_function(inner: &str) -> Option<Result<RawCall, String>> {
    let (name, rest) = inner.split_once('>')?;
    let name = attribute(name);
    let rest_start = rest.trim_start();
    if !rest_start.is_empty() && !rest_start.starts_with("<parameter=") {
        return None;
    }
    if let Err(e) = tool_name(name) {
        return Some(Err(e));
    }
    Some(pairs(rest, QWEN3_PARAMETER, name).map(|arguments| RawCall {
        name: name.to_string(),
        arguments: RawArguments::Text(arguments),
    }))
}

/// GLM-4.5: `name\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>…`.
pub fn glm(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let body = body.trim();
    let name_end = body.find("<arg_key>").unwrap_or(body.len());
    let name = body[..name_end].trim();
    if name_end == body.len() && (body.starts_with('{') || body.starts_with('<')) {
        return None;
    }
    if name_end == body.len() && !is_name(name) {
        return None;
    }
    if let Err(e) = tool_name(name) {
        return Some(Err(e));
    }
    let mut arguments = Vec::new();
    let mut rest = &body[name_end..];
    while !rest.trim().is_empty() {
        let Some((key, after_key)) = element(rest, "<arg_key>", "</arg_key>") else {
            return Some(Err(format!(
                "the call of `{name}` holds something other than <arg_key>/<arg_value> pairs"
            )));
        };
        let Some((text, after)) = element(after_key, "<arg_value>", "</arg_value>") else {
            return Some(Err(format!(
                "the parameter `{}` of `{name}` has no <arg_value>",
                key.trim()
            )));
        };
        arguments.push((key.trim().to_string(), value(text)));
        rest = after;
    }
    Some(Ok(vec![RawCall {
        name: name.to_string(),
        arguments: RawArguments::Text(arguments),
    }]))
}

/// MiniMax-M2: `<invoke name="x"><parameter name="k">v</parameter></invoke>`, repeated.
pub fn minimax(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.trim().is_empty() {
        let Some((inner, after)) = element(rest, "<invoke name=", "</invoke>") else {
            return Some(Err(
                "a MiniMax call is <invoke name=\"…\"> with <parameter name=\"…\"> elements".into(),
            ));
        };
        let Some((name, params)) = inner.split_once('>') else {
            return Some(Err("an <invoke> has no closing `>`".into()));
        };
        let name = attribute(name);
        if let Err(e) = tool_name(name) {
            return Some(Err(e));
        }
        let arguments = match pairs(params, ("<parameter name=", ">", "</parameter>"), name) {
            Ok(arguments) => arguments,
            Err(e) => return Some(Err(e)),
        };
        calls.push(RawCall {
            name: name.to_string(),
            arguments: RawArguments::Text(arguments),
        });
        rest = after;
    }
    Some(Ok(calls))
}

/// Kimi K3: `<|open|>call tool="x" index="1"<|sep|>` with
/// `<|open|>argument key="k" type="number"<|sep|>v<|close|>argument<|sep|>`
/// elements, `<|close|>call<|sep|>`; repeated.
pub fn kimi_k3(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    const CALL: &str = "<|open|>call tool=";
    const ARGUMENT: &str = "<|open|>argument key=";
    const SEP: &str = "<|sep|>";
    let mut calls = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let Some((inner, after)) = element(rest, CALL, "<|close|>call<|sep|>") else {
            return Some(Err(
                "a Kimi K3 call is <|open|>call tool=\"…\"<|sep|> with its arguments".into(),
            ));
        };
        let Some((head, arguments_text)) = inner.split_once(SEP) else {
            return Some(Err("a Kimi K3 call has no <|sep|> after its name".into()));
        };
        let name = attribute(head);
        if let Err(e) = tool_name(name) {
            return Some(Err(e));
        }
        let arguments = match pairs(
            arguments_text,
            (ARGUMENT, SEP, "<|close|>argument<|sep|>"),
            name,
        ) {
            Ok(arguments) => arguments,
            Err(e) => return Some(Err(e)),
        };
        calls.push(RawCall {
            name: name.to_string(),
            arguments: RawArguments::Text(arguments),
        });
        rest = after.trim();
    }
    Some(Ok(calls))
}

/// The separator token MiniMax-M3 writes between its elements.
const MINIMAX_M3_SEPARATOR: &str = "]<]minimax[>[";

/// MiniMax-M3: `<invoke name="x">` with one element per parameter
/// (`<city>Paris</city>`; objects as nested elements, arrays as `<item>`s),
/// every element after a separator token.
pub fn minimax_m3(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    if !body.contains(MINIMAX_M3_SEPARATOR) {
        return None;
    }
    let body = body.replace(MINIMAX_M3_SEPARATOR, "");
    let mut calls = Vec::new();
    let mut rest = body.as_str();
    while !rest.trim().is_empty() {
        let Some((inner, after)) = element(rest, "<invoke name=", "</invoke>") else {
            return Some(Err(
                "a MiniMax-M3 call is <invoke name=\"…\"> with one element per parameter".into(),
            ));
        };
        let Some((name, params)) = inner.split_once('>') else {
            return Some(Err("an <invoke> has no closing `>`".into()));
        };
        let name = attribute(name);
        if let Err(e) = tool_name(name) {
            return Some(Err(e));
        }
        let arguments = match elements(params, 0) {
            Ok((nodes, tail)) if tail.trim().is_empty() => nodes
                .into_iter()
                .map(|(key, node)| {
                    let value = match node {
                        // Typed by the schema later, as other XML values.
                        Node::Text(text) => serde_json::Value::String(text),
                        nested => nested.into_value(),
                    };
                    (key, value)
                })
                .collect(),
            Ok(_) => return Some(Err(format!("text follows the parameters of `{name}`"))),
            Err(e) => return Some(Err(format!("the parameters of `{name}`: {e}"))),
        };
        calls.push(RawCall {
            name: name.to_string(),
            arguments: RawArguments::Literal(arguments),
        });
        rest = after;
    }
    Some(Ok(calls))
}

/// An element's content: text, or elements.
enum Node {
    Text(String),
    Elements(Vec<Named>),
}

/// An element: its tag and content.
type Named = (String, Node);

impl Node {
    /// As JSON: elements all named `item` are a list, others an object;
    /// text a number or boolean when it reads as one.
    fn into_value(self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Text(text) => match serde_json::from_str::<Value>(&text) {
                Ok(value @ (Value::Number(_) | Value::Bool(_))) => value,
                _ => Value::String(text),
            },
            Node::Elements(nodes)
                if !nodes.is_empty() && nodes.iter().all(|(k, _)| k == "item") =>
            {
                Value::Array(nodes.into_iter().map(|(_, n)| n.into_value()).collect())
            }
            Node::Elements(nodes) => Value::Object(
                nodes
                    .into_iter()
                    .map(|(k, n)| (k, n.into_value()))
                    .collect(),
            ),
        }
    }
}

/// `<key>content</key>` elements one after another, up to a closing tag
/// or the end; and what follows them.
fn elements(mut text: &str, depth: usize) -> Result<(Vec<Named>, &str), String> {
    if depth > MAX_JSON_DEPTH {
        return Err(format!(
            "the values nest deeper than {MAX_JSON_DEPTH} levels"
        ));
    }
    let mut nodes = Vec::new();
    loop {
        let trimmed = text.trim_start();
        if trimmed.is_empty() || trimmed.starts_with("</") || !trimmed.starts_with('<') {
            return Ok((nodes, text));
        }
        let (tag, content) = trimmed[1..]
            .split_once('>')
            .ok_or("an element has no closing `>`")?;
        let close = format!("</{tag}>");
        let (node, after) =
            if content.trim_start().starts_with('<') && !content.trim_start().starts_with("</") {
                let (children, tail) = elements(content, depth + 1)?;
                let after = tail
                    .trim_start()
                    .strip_prefix(close.as_str())
                    .ok_or_else(|| format!("<{tag}> is not closed"))?;
                (Node::Elements(children), after)
            } else {
                let end = content
                    .find(&close)
                    .ok_or_else(|| format!("<{tag}> is not closed"))?;
                (
                    Node::Text(value(&content[..end])),
                    &content[end + close.len()..],
                )
            };
        nodes.push((tag.to_string(), node));
        text = after;
    }
}

/// DeepSeek V3.2's DSML: MiniMax's elements with a `｜DSML｜` prefix.
pub fn dsml(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    minimax(&body.replace("｜DSML｜", ""))
}

/// `<atem:invoke name="x"><atem:parameter name="k">v</atem:parameter>`.
pub fn atem(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    minimax(&body.replace("atem:", ""))
}

/// `<function name="x">{JSON}</function>` (a Hermes variant), or with
/// `<param name="k">v</param>` elements (MiniCPM).
pub fn function_attribute(body: &str) -> Option<Result<Vec<RawCall>, String>> {
    let (name, args) = body.split_once('>')?;
    let name = attribute(name);
    if is_name(name) && args.trim_start().starts_with("<param name=") {
        let mut arguments = Vec::new();
        let mut rest = args;
        while !rest.trim().is_empty() {
            let Some(p) = rest.trim_start().strip_prefix("<param name=") else {
                return Some(Err(format!(
                    "the call of `{name}` holds something other than <param name=…> elements"
                )));
            };
            let Some((key, text)) = p.split_once('>') else {
                return Some(Err(format!("a parameter of `{name}` has no closing `>`")));
            };
            // A CDATA section may hold `</param>` itself.
            let from = match text.trim_start().strip_prefix("<![CDATA[") {
                Some(cdata) => text.len() - cdata.len() + cdata.find("]]>").unwrap_or(0),
                None => 0,
            };
            let end = text[from..]
                .find("</param>")
                .map_or(text.len(), |e| from + e);
            arguments.push((attribute(key).to_string(), value(&text[..end])));
            rest = text.get(end + "</param>".len()..).unwrap_or("");
        }
        return Some(Ok(vec![RawCall {
            name: name.to_string(),
            arguments: RawArguments::Text(arguments),
        }]));
    }
    if !is_name(name) || !args.trim_start().starts_with('{') {
        return None;
    }
    let (value, rest) = match json::first_value(args) {
        Ok(found) => found,
        Err(e) => return Some(Err(format!("the arguments of `{name}`: {e}"))),
    };
    if !rest.trim().is_empty() || !value.is_object() {
        return Some(Err(format!(
            "the arguments of `{name}` are not one JSON object"
        )));
    }
    Some(Ok(vec![RawCall {
        name: name.to_string(),
        arguments: RawArguments::Json(value),
    }]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_args(call: &RawCall) -> Vec<(String, String)> {
        match &call.arguments {
            RawArguments::Text(a) => a.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn xml_values_are_trimmed_text() {
        let calls = qwen3("<function=write>\n<parameter=path>\na.md\n</parameter>\n<parameter=n>1</parameter>\n</function>")
            .unwrap()
            .unwrap();
        assert_eq!(calls[0].name, "write");
        assert_eq!(
            text_args(&calls[0]),
            [("path".into(), "a.md".into()), ("n".into(), "1".into())]
        );
        assert!(
            qwen3("x>{\"a\": 1}").is_none(),
            "JSON arguments are Functionary's"
        );
        let calls = glm("get\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>")
            .unwrap()
            .unwrap();
        assert_eq!(text_args(&calls[0]), [("city".into(), "Paris".into())]);
        assert!(glm("{\"name\": \"x\"}").is_none());
        let calls = minimax("<invoke name=\"get\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n<invoke name=\"b\"></invoke>")
            .unwrap()
            .unwrap();
        assert_eq!(calls.len(), 2);
    }
}
