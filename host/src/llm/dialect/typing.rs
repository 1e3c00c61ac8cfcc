//! Typing arguments by the tool's schema. XML dialects write every value
//! as text and pythonic ones as Python literals, so `1` may be meant as
//! the string `"1"` and `true` as a boolean: the parameter's declared type
//! decides. A value that cannot be what the schema says is left as written
//! (the schema check then tells the model). JSON arguments are taken as
//! they are.

use super::{RawArguments, RawCall};
use crate::llm::recover::parse_lenient;
use serde_json::{Map, Value};

/// The arguments of `call` as a JSON object, typed by `parameters` (the
/// tool's JSON Schema, when the tool is known).
pub fn arguments(call: RawCall, parameters: Option<&Value>) -> Value {
    let declared = |key: &str| -> Option<&str> {
        let property = parameters?.get("properties")?.get(key)?;
        match property.get("type")? {
            Value::String(t) => Some(t.as_str()),
            // `["string", "null"]`: the first type that is not null.
            Value::Array(types) => types
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null"),
            _ => None,
        }
    };
    match call.arguments {
        RawArguments::Json(value) => value,
        RawArguments::Text(pairs) => Value::Object(
            pairs
                .into_iter()
                .map(|(key, text)| {
                    let value = from_text(text, declared(&key));
                    (key, value)
                })
                .collect::<Map<_, _>>(),
        ),
        RawArguments::Literal(pairs) => Value::Object(
            pairs
                .into_iter()
                .map(|(key, value)| {
                    let value = from_literal(value, declared(&key));
                    (key, value)
                })
                .collect::<Map<_, _>>(),
        ),
    }
}

/// A text value as the declared type; without one, JSON when it reads as
/// a number, boolean, null, array or object, else the text.
fn from_text(text: String, declared: Option<&str>) -> Value {
    match declared {
        Some("string") => Value::String(text),
        Some("integer" | "number") => number(&text).unwrap_or(Value::String(text)),
        Some("boolean") => boolean(&text).unwrap_or(Value::String(text)),
        Some("object" | "array") => match parse_lenient(&text) {
            Ok((value @ (Value::Object(_) | Value::Array(_)), _)) => value,
            _ => Value::String(text),
        },
        _ => match serde_json::from_str::<Value>(&text) {
            Ok(value) if !value.is_string() => value,
            _ => Value::String(text),
        },
    }
}

/// A literal as the declared type.
fn from_literal(value: Value, declared: Option<&str>) -> Value {
    match (declared, value) {
        (Some("string"), Value::String(s)) => Value::String(s),
        (Some("string"), other @ (Value::Number(_) | Value::Bool(_))) => {
            Value::String(other.to_string())
        }
        (Some("integer" | "number"), Value::String(s)) => number(&s).unwrap_or(Value::String(s)),
        (Some("boolean"), Value::String(s)) => boolean(&s).unwrap_or(Value::String(s)),
        (Some("object" | "array"), Value::String(s)) => match parse_lenient(&s) {
            Ok((value @ (Value::Object(_) | Value::Array(_)), _)) => value,
            _ => Value::String(s),
        },
        (_, other) => other,
    }
}

fn number(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(n) = text.parse::<i64>() {
        return Some(Value::Number(n.into()));
    }
    text.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

fn boolean(text: &str) -> Option<Value> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_types_the_values() {
        let schema = json!({"properties": {
            "id": {"type": "string"}, "n": {"type": "integer"}, "on": {"type": "boolean"},
            "tags": {"type": "array"}, "opt": {"type": ["string", "null"]},
        }});
        let call = |arguments| RawCall {
            name: "t".into(),
            arguments,
        };
        let text = RawArguments::Text(vec![
            ("id".into(), "1".into()),
            ("n".into(), "42".into()),
            ("on".into(), "True".into()),
            ("tags".into(), "[\"a\", 'b']".into()),
            ("opt".into(), "7".into()),
            ("free".into(), "3.5".into()),
        ]);
        assert_eq!(
            arguments(call(text), Some(&schema)),
            json!({"id": "1", "n": 42, "on": true, "tags": ["a", "b"], "opt": "7", "free": 3.5})
        );
        let literal = RawArguments::Literal(vec![
            ("id".into(), json!(1)),
            ("n".into(), json!("5")),
            ("on".into(), json!(false)),
        ]);
        assert_eq!(
            arguments(call(literal), Some(&schema)),
            json!({"id": "1", "n": 5, "on": false})
        );
    }
}
