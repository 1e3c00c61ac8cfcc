//! The text format for tool calls (Hermes), for models without native tool
//! calling: the tools are described in the system prompt, the model writes
//! `<tool_call>{"name": …, "arguments": {…}}</tool_call>` in its text, and
//! results go back in a user turn as `<tool_response>…</tool_response>`.
//! The person at the terminal sees the text without the tags.

use crate::llm::ToolSpec;
use crate::llm::recover::{RecoveredCall, parse_lenient};
use serde_json::{Value, json};

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// The part of the system prompt that offers `tools` in the text format.
pub fn tools_prompt(tools: &[ToolSpec]) -> String {
    let specs: Vec<Value> = tools.iter().map(ToolSpec::to_wire).collect();
    format!(
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query. \
         The function signatures are within <tools></tools> XML tags:\n<tools>\n{}\n</tools>\n\n\
         For each function call, return a JSON object with the function name and arguments within \
         <tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n</tool_call>\n\
         The results come back within <tool_response></tool_response> tags. When you have the answer, reply without any tool call.",
        specs
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// Every `<tool_call>` block in `text`, wherever it is; the last may lack
/// its closing tag. A block that is not a call gives the reason.
pub fn calls_in(text: &str) -> Vec<Result<RecoveredCall, String>> {
    let mut calls = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(OPEN) {
        let body = &rest[start + OPEN.len()..];
        let (inner, after) = match body.find(CLOSE) {
            Some(end) => (&body[..end], &body[end + CLOSE.len()..]),
            None => (body, ""),
        };
        calls.push(parse_block(inner.trim()));
        rest = after;
    }
    calls
}

fn parse_block(inner: &str) -> Result<RecoveredCall, String> {
    let (value, _) =
        parse_lenient(inner).map_err(|e| format!("the <tool_call> block is not JSON: {e}"))?;
    let name = value
        .get("name")
        .and_then(Value::as_str)
        .ok_or("the <tool_call> block has no \"name\"")?
        .to_string();
    let arguments = match value.get("arguments").or_else(|| value.get("parameters")) {
        None => json!({}),
        Some(Value::String(text)) => parse_lenient(text)
            .map(|(v, _)| v)
            .map_err(|e| format!("its arguments are not JSON: {e}"))?,
        Some(other) => other.clone(),
    };
    Ok(RecoveredCall { name, arguments })
}

/// The results of one turn's calls as the user turn that carries them.
pub fn responses(results: &[(String, String)]) -> String {
    results
        .iter()
        .map(|(name, content)| {
            format!(
                "<tool_response>\n{}\n</tool_response>",
                json!({"name": name, "content": content})
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Removes `<tool_call>…</tool_call>` from streamed text, piece by piece,
/// holding back only what could be the start of a tag.
#[derive(Debug, Default)]
pub struct TagFilter {
    pending: String,
    inside: bool,
}

impl TagFilter {
    /// The visible part of `piece` (possibly empty).
    pub fn feed(&mut self, piece: &str) -> String {
        self.pending.push_str(piece);
        let mut visible = String::new();
        loop {
            let tag = if self.inside { CLOSE } else { OPEN };
            if let Some(at) = self.pending.find(tag) {
                if !self.inside {
                    visible.push_str(&self.pending[..at]);
                }
                self.pending.drain(..at + tag.len());
                self.inside = !self.inside;
                continue;
            }
            // Keep the longest tail that could still become the tag.
            let keep = (1..tag.len().min(self.pending.len() + 1))
                .rev()
                .find(|&n| {
                    self.pending.is_char_boundary(self.pending.len() - n)
                        && tag.starts_with(&self.pending[self.pending.len() - n..])
                })
                .unwrap_or(0);
            let cut = self.pending.len() - keep;
            if !self.inside {
                visible.push_str(&self.pending[..cut]);
            }
            self.pending.drain(..cut);
            return visible;
        }
    }

    /// What is left at the end of the turn.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        if self.inside { String::new() } else { rest }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_hidden_however_the_text_is_split() {
        let text = "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {}}\n</tool_call>\nDone <b>.";
        for size in [1, 2, 5, 11, text.len()] {
            let mut filter = TagFilter::default();
            let mut shown = String::new();
            let chars: Vec<char> = text.chars().collect();
            for chunk in chars.chunks(size) {
                shown.push_str(&filter.feed(&chunk.iter().collect::<String>()));
            }
            shown.push_str(&filter.finish());
            assert_eq!(shown, "Let me look.\n\nDone <b>.", "chunks of {size}");
        }
    }

    #[test]
    fn blocks_anywhere_and_an_unclosed_last_one() {
        let calls = calls_in(
            "First.\n<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": 1}}</tool_call> then <tool_call>{'name': 'b'",
        );
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].as_ref().unwrap().name, "a");
        assert_eq!(calls[1].as_ref().unwrap().name, "b");
        assert!(calls_in("<tool_call>nonsense</tool_call>")[0].is_err());
    }
}
