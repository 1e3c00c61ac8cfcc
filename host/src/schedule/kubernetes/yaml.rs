//! The YAML the exporter writes: a small tree of values written one way
//! only, so the same config always gives the same bytes.
//!
//! Keys keep the order they were added in (the order Kubernetes' own
//! documents use: `apiVersion`, `kind`, `metadata`, `spec`). A string is
//! written plain only when YAML cannot read it as anything but that string;
//! otherwise in double quotes with JSON's escapes, which YAML reads the
//! same. A file's text is a literal block (`|`) when that keeps it byte for
//! byte, else a quoted string.

/// One YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Str(String),
    Int(i64),
    Bool(bool),
    /// A file's text: a literal block where it can be one.
    Text(String),
    Map(Vec<(String, Node)>),
    List(Vec<Node>),
}

/// A mapping, built key by key.
#[derive(Debug, Default)]
pub struct MapBuilder(Vec<(String, Node)>);

impl MapBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, key: &str, value: impl Into<Node>) -> Self {
        self.0.push((key.to_string(), value.into()));
        self
    }

    /// Adds `key` only when `value` is `Some`.
    pub fn with_some(self, key: &str, value: Option<impl Into<Node>>) -> Self {
        match value {
            Some(value) => self.with(key, value),
            None => self,
        }
    }

    pub fn build(self) -> Node {
        Node::Map(self.0)
    }
}

impl From<&str> for Node {
    fn from(text: &str) -> Self {
        Node::Str(text.to_string())
    }
}

impl From<String> for Node {
    fn from(text: String) -> Self {
        Node::Str(text)
    }
}

impl From<i64> for Node {
    fn from(value: i64) -> Self {
        Node::Int(value)
    }
}

impl From<bool> for Node {
    fn from(value: bool) -> Self {
        Node::Bool(value)
    }
}

impl From<MapBuilder> for Node {
    fn from(map: MapBuilder) -> Self {
        map.build()
    }
}

impl From<Vec<Node>> for Node {
    fn from(items: Vec<Node>) -> Self {
        Node::List(items)
    }
}

/// `documents` as one YAML stream, each after a `---` line.
pub fn stream(documents: &[Node]) -> String {
    let mut out = String::new();
    for document in documents {
        out.push_str("---\n");
        write_block(&mut out, document, 0);
    }
    out
}

/// Writes `node` as the body of a block at `indent` (a map's entries or a
/// list's items, each on its own line).
fn write_block(out: &mut String, node: &Node, indent: usize) {
    match node {
        Node::Map(entries) if !entries.is_empty() => {
            for (key, value) in entries {
                pad(out, indent);
                out.push_str(&scalar(key));
                out.push(':');
                write_value(out, value, indent);
            }
        }
        Node::List(items) if !items.is_empty() => {
            for item in items {
                pad(out, indent);
                out.push('-');
                match item {
                    // The first key on the dash's line, the rest under it.
                    Node::Map(entries) if !entries.is_empty() => {
                        let mut first = String::new();
                        write_block(&mut first, item, indent + 2);
                        out.push(' ');
                        out.push_str(&first[indent + 2..]);
                    }
                    _ => write_value(out, item, indent),
                }
            }
        }
        other => {
            pad(out, indent);
            let mut line = String::new();
            write_value(&mut line, other, indent);
            out.push_str(line.trim_start());
        }
    }
}

/// Writes what follows `key:` or `-`: a scalar on the same line, or a
/// nested block on the next lines.
fn write_value(out: &mut String, node: &Node, indent: usize) {
    match node {
        Node::Map(entries) if entries.is_empty() => out.push_str(" {}\n"),
        Node::List(items) if items.is_empty() => out.push_str(" []\n"),
        Node::Map(_) => {
            out.push('\n');
            write_block(out, node, indent + 2);
        }
        // Lists under a key sit at the key's own indent, as kubectl writes them.
        Node::List(_) => {
            out.push('\n');
            write_block(out, node, indent);
        }
        Node::Text(text) => match literal_block(text, indent + 2) {
            Some(block) => {
                out.push_str(" |\n");
                out.push_str(&block);
            }
            None => {
                out.push(' ');
                out.push_str(&quoted(text));
                out.push('\n');
            }
        },
        Node::Str(text) => {
            out.push(' ');
            out.push_str(&scalar(text));
            out.push('\n');
        }
        Node::Int(value) => out.push_str(&format!(" {value}\n")),
        Node::Bool(value) => out.push_str(&format!(" {value}\n")),
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// `text` as a literal block at `indent`, if the block reads back as
/// exactly `text`: one final line break, no carriage returns or other
/// control characters, no first line starting with a space (which would
/// need an indentation indicator).
fn literal_block(text: &str, indent: usize) -> Option<String> {
    let body = text.strip_suffix('\n')?;
    let fits = !body.is_empty()
        && !body.ends_with('\n')
        && !body.starts_with([' ', '\t'])
        && !body
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}');
    if !fits {
        return None;
    }
    let mut block = String::new();
    for line in body.split('\n') {
        if !line.is_empty() {
            pad(&mut block, indent);
            block.push_str(line);
        }
        block.push('\n');
    }
    Some(block)
}

/// A string plain where that is safe, else quoted.
pub fn scalar(text: &str) -> String {
    if is_plain(text) {
        text.to_string()
    } else {
        quoted(text)
    }
}

/// Double-quoted, with JSON's escapes (a JSON string is a YAML one).
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

/// Whether `text` reads back as the same string when written plain: only
/// name-like characters, not starting with what YAML takes as syntax, and
/// not a number, a boolean or null in either YAML 1.1 or 1.2.
fn is_plain(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let safe = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    let starts_well = first.is_ascii_alphabetic() || first == '/';
    let lower = text.to_ascii_lowercase();
    let reserved = matches!(
        lower.as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "nan" | "inf"
    );
    safe && starts_well && !reserved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_that_yaml_would_read_otherwise_are_quoted() {
        assert_eq!(scalar("Forbid"), "Forbid");
        assert_eq!(scalar("batch/v1"), "batch/v1");
        assert_eq!(scalar("/workspace"), "/workspace");
        for text in [
            "",
            "yes",
            "No",
            "on",
            "null",
            "0 3 * * *",
            "10",
            "1.5",
            "a: b",
            "@daily",
        ] {
            assert!(scalar(text).starts_with('"'), "{text} must be quoted");
        }
        assert_eq!(scalar("say \"hi\"\n"), r#""say \"hi\"\n""#);
    }

    #[test]
    fn nested_maps_and_lists_in_kubectl_shape() {
        let doc = MapBuilder::new()
            .with("kind", "CronJob")
            .with(
                "spec",
                MapBuilder::new().with(
                    "containers",
                    vec![
                        MapBuilder::new()
                            .with("name", "toolcell")
                            .with("args", vec![Node::from("run"), Node::from("a b")])
                            .build(),
                    ],
                ),
            )
            .with("empty", MapBuilder::new())
            .with("count", 60)
            .build();
        assert_eq!(
            stream(&[doc]),
            "---\nkind: CronJob\nspec:\n  containers:\n  - name: toolcell\n    args:\n    - run\n    - \"a b\"\nempty: {}\ncount: 60\n"
        );
    }

    #[test]
    fn text_is_a_literal_block_only_when_it_reads_back_the_same() {
        let doc = |text: &str| {
            stream(&[MapBuilder::new()
                .with("data", MapBuilder::new().with("f", Node::Text(text.into())))
                .build()])
        };
        assert_eq!(
            doc("a = 1\n\nb\n"),
            "---\ndata:\n  f: |\n    a = 1\n\n    b\n"
        );
        assert_eq!(doc("no newline"), "---\ndata:\n  f: \"no newline\"\n");
        assert_eq!(doc("two\n\n"), "---\ndata:\n  f: \"two\\n\\n\"\n");
        assert_eq!(doc(" lead\n"), "---\ndata:\n  f: \" lead\\n\"\n");
        assert_eq!(doc("cr\r\n"), "---\ndata:\n  f: \"cr\\r\\n\"\n");
    }
}
