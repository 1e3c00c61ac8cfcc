//! A tool's parameters: the JSON Schema of its arguments, made into a tree
//! only when it is first looked at.
//!
//! Every process reads every built-in manifest, and a process that makes
//! one call looks at one tool's schema (to check the call's arguments);
//! building the trees of all ten was a tenth of a small `tools call`'s
//! instructions, every key hashed into an ordered map (BENCHMARKS.md,
//! issue 21). A built-in manifest's schema is kept as the JSON text the
//! build made, checked to be JSON when the manifest is read, and parsed on
//! first use; a `tool.toml`'s is a tree from the start (it is checked
//! against the JSON Schema meta-schema when read).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

/// The schema; dereferences to its tree.
#[derive(Clone)]
pub struct Parameters {
    /// The JSON text, when the schema came as text.
    text: Option<Box<RawValue>>,
    tree: OnceLock<Value>,
}

impl Parameters {
    /// The tree of the schema.
    pub fn value(&self) -> &Value {
        self.tree.get_or_init(|| match &self.text {
            // Only a built-in manifest's schema comes as text: the build
            // made it from a `Value`, and the test
            // `every_builtin_manifest_passes_every_check` parses each one.
            Some(text) => serde_json::from_str(text.get())
                .expect("a built-in tool's parameter schema is JSON: build toolcell again"),
            None => Value::Null,
        })
    }
}

impl From<Value> for Parameters {
    fn from(tree: Value) -> Self {
        Self {
            text: None,
            tree: OnceLock::from(tree),
        }
    }
}

impl Deref for Parameters {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl fmt::Debug for Parameters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.value(), f)
    }
}

impl Serialize for Parameters {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
    }
}

/// Read as JSON text, checked to be JSON, not yet made a tree.
impl<'de> Deserialize<'de> for Parameters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Box::<RawValue>::deserialize(deserializer)?;
        Ok(Self {
            text: Some(text),
            tree: OnceLock::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_read_as_text_is_the_tree_it_writes() {
        let text = r#"{"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}, "required": ["b"]}"#;
        let read: Parameters = serde_json::from_str(text).unwrap();
        let tree: Value = serde_json::from_str(text).unwrap();
        assert_eq!(*read, tree);
        // Serialised and shown as the tree is (keys sorted, as serde_json
        // keeps an object's keys).
        assert_eq!(serde_json::to_string(&read).unwrap(), tree.to_string());
        assert_eq!(format!("{read:?}"), format!("{tree:?}"));
        let given = Parameters::from(json!({"type": "object"}));
        assert_eq!(given["type"], "object");
    }

    #[test]
    fn text_that_is_not_json_is_refused_when_read() {
        assert!(serde_json::from_str::<Parameters>(r#"{"type": "object""#).is_err());
    }
}
