//! Script values as JSON and back, where they cross between a workflow
//! and the host: `json_stringify`, `json_parse`, `tool()` arguments and
//! results, `llm_json` schemas and answers, the workflow's result.
//!
//! rhai limits how large arrays, maps and strings grow but not how deeply
//! they nest, and every conversion (rhai's serde, serde_json's printer, a
//! JSON Schema validator, the approval prompt) recurses once per level: a
//! script-built array 20,000 levels deep overflows the thread's stack,
//! which aborts the whole process (a daemon and all its schedules with
//! it). So the depth is measured first, recursing no deeper than the
//! limit, and a value past it is refused with a catchable error before any
//! unbounded recursion starts.

use crate::call::error::ErrorKind;
use rhai::{Array, Dynamic, EvalAltResult, Map};
use serde_json::Value;

/// Levels of arrays and maps inside each other that a value may have when
/// it crosses into the host or back: one more than serde_json's parser
/// accepts, so whatever a tool, a model or `json_parse` produces fits, and
/// recursing this deep costs tens of KiB of stack, not megabytes.
pub const MAX_VALUE_DEPTH: usize = 128;

/// A value nested deeper than [`MAX_VALUE_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "arrays and maps nest deeper than {MAX_VALUE_DEPTH} levels in {what} (the limit for values the host takes from a script or gives it); flatten it or pass it in parts"
)]
pub struct TooDeep {
    /// What the value is, for the message ("the value passed to json_stringify").
    pub what: String,
}

/// Whether `value` nests arrays and maps more than `limit` levels deep;
/// looks no deeper than `limit + 1` levels.
pub fn dynamic_deeper_than(value: &Dynamic, limit: usize) -> bool {
    // `read_lock` also sees through shared (closure-captured) values.
    if let Some(array) = value.read_lock::<Array>() {
        return array_deeper_than(&array, limit);
    }
    if let Some(map) = value.read_lock::<Map>() {
        return map_deeper_than(&map, limit);
    }
    false
}

/// [`dynamic_deeper_than`] for an array, itself one level.
pub fn array_deeper_than(array: &Array, limit: usize) -> bool {
    limit == 0 || array.iter().any(|v| dynamic_deeper_than(v, limit - 1))
}

/// [`dynamic_deeper_than`] for a map, itself one level.
pub fn map_deeper_than(map: &Map, limit: usize) -> bool {
    limit == 0 || map.values().any(|v| dynamic_deeper_than(v, limit - 1))
}

/// Whether `value` nests arrays and objects more than `limit` levels deep;
/// looks no deeper than `limit + 1` levels.
pub fn json_deeper_than(value: &Value, limit: usize) -> bool {
    match value {
        Value::Array(items) => limit == 0 || items.iter().any(|v| json_deeper_than(v, limit - 1)),
        Value::Object(map) => limit == 0 || map.values().any(|v| json_deeper_than(v, limit - 1)),
        _ => false,
    }
}

/// `value` as JSON, refused past [`MAX_VALUE_DEPTH`]; `what` names it in
/// the error.
pub fn to_json(value: &Dynamic, what: &str) -> Result<Value, Box<EvalAltResult>> {
    if dynamic_deeper_than(value, MAX_VALUE_DEPTH) {
        return Err(too_deep(what));
    }
    rhai::serde::from_dynamic::<Value>(value)
}

/// `value` as a script value, refused past [`MAX_VALUE_DEPTH`].
pub fn to_dynamic(value: &Value, what: &str) -> Result<Dynamic, Box<EvalAltResult>> {
    if json_deeper_than(value, MAX_VALUE_DEPTH) {
        return Err(too_deep(what));
    }
    rhai::serde::to_dynamic(value)
}

/// The catchable script error for a value past the limit:
/// `#{kind: "too-deep", message}`; rhai adds the position of the call.
pub fn too_deep(what: &str) -> Box<EvalAltResult> {
    let message = TooDeep { what: what.into() }.to_string();
    let mut map = Map::new();
    map.insert("kind".into(), ErrorKind::TooDeep.as_str().into());
    map.insert("message".into(), message.into());
    EvalAltResult::ErrorRuntime(map.into(), rhai::Position::NONE).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An array `depth` levels deep, built without recursion.
    fn nested_array(depth: usize) -> Dynamic {
        let mut value = Dynamic::from_array(Array::new());
        for _ in 1..depth {
            value = Dynamic::from_array(vec![value]);
        }
        value
    }

    fn nested_json(depth: usize) -> Value {
        let mut value = json!({});
        for _ in 1..depth {
            value = json!({ "a": value });
        }
        value
    }

    /// Drops a deep value one level at a time (a plain drop recurses).
    fn drop_flat(mut value: Dynamic) {
        while value.is_array() {
            let mut array = value.cast::<Array>();
            let Some(inner) = array.pop() else { break };
            value = inner;
        }
    }

    fn drop_flat_json(mut value: Value) {
        while let Value::Object(map) = &mut value {
            let Some(inner) = map.remove("a") else { break };
            value = inner;
        }
    }

    #[test]
    fn depth_is_counted_in_levels_of_arrays_and_maps() {
        assert!(!dynamic_deeper_than(&Dynamic::from(1_i64), 0));
        assert!(!dynamic_deeper_than(&nested_array(3), 3));
        assert!(dynamic_deeper_than(&nested_array(4), 3));
        let mut map = Map::new();
        map.insert("a".into(), nested_array(2));
        assert!(dynamic_deeper_than(&Dynamic::from_map(map), 2));
        assert!(!json_deeper_than(&json!([[1], {"a": [2]}]), 3));
        assert!(json_deeper_than(&json!([[1], {"a": [[2]]}]), 3));
    }

    #[test]
    fn the_limit_itself_converts_and_one_more_level_is_refused() {
        let at_limit = nested_array(MAX_VALUE_DEPTH);
        let json = to_json(&at_limit, "the value").unwrap();
        assert!(!json_deeper_than(&json, MAX_VALUE_DEPTH));
        assert!(to_dynamic(&json, "the value").is_ok());
        let past = nested_array(MAX_VALUE_DEPTH + 1);
        let error = to_json(&past, "the value passed to json_stringify").unwrap_err();
        let EvalAltResult::ErrorRuntime(thrown, _) = *error else {
            panic!("not a catchable error: {error}");
        };
        let thrown = thrown.cast::<Map>();
        assert_eq!(thrown["kind"].to_string(), ErrorKind::TooDeep.as_str());
        let message = thrown["message"].to_string();
        assert!(
            message.starts_with(
                "arrays and maps nest deeper than 128 levels in the value passed to json_stringify"
            ) && message.contains("flatten it"),
            "{message}"
        );
    }

    // Regression: a 20,000-deep array (and a 5,000-deep map) overflowed the
    // stack in rhai's serde conversion and aborted the process. The test
    // thread has a 2 MiB stack, like the runtime's threads.
    #[test]
    fn a_very_deep_value_is_refused_without_recursing_into_it() {
        let deep = nested_array(20_000);
        assert!(to_json(&deep, "the value").is_err());
        drop_flat(deep);
        let deep = nested_json(5_000);
        assert!(to_dynamic(&deep, "the value").is_err());
        drop_flat_json(deep);
    }
}
