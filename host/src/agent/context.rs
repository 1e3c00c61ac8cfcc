//! Keeping the conversation inside the model's context window.
//!
//! Servers count tokens their own way; the host estimates with a fixed
//! ratio, which is enough to stay clear of the limit. A tool result longer
//! than a share of the context is cut with a note; when the conversation
//! outgrows `num_ctx`, the oldest exchanges go first, while the system
//! prompt and the current task stay.

use crate::llm::{Message, Role, ToolSpec};

/// Bytes per token in the estimate: English text and JSON average about 4
/// bytes per token in the tokenizers of common open models.
pub const BYTES_PER_TOKEN: usize = 4;
/// The share of the context one tool result may take.
pub const TOOL_RESULT_SHARE: usize = 4;
/// The share of the context kept free for the model's answer.
pub const ANSWER_RESERVE_SHARE: usize = 4;
/// Overhead the chat template adds per message, in tokens.
const TOKENS_PER_MESSAGE: usize = 8;

/// Estimated tokens of `messages` and `tools`.
pub fn estimate(messages: &[Message], tools_json_bytes: usize) -> usize {
    let bytes: usize = messages.iter().map(Message::text_bytes).sum();
    (bytes + tools_json_bytes) / BYTES_PER_TOKEN + messages.len() * TOKENS_PER_MESSAGE
}

/// The size of the tool definitions as sent.
pub fn tools_bytes(tools: &[ToolSpec]) -> usize {
    tools.iter().map(|t| t.to_wire().to_string().len()).sum()
}

/// The most of one tool result that fits its share of a `num_ctx` context.
pub fn tool_result_bytes(num_ctx: u32) -> usize {
    num_ctx as usize * BYTES_PER_TOKEN / TOOL_RESULT_SHARE
}

/// Drops the oldest exchanges until the estimate fits `num_ctx` (minus the
/// answer's reserve). Keeps the system prompt, the last user message (the
/// current task) and the latest exchange; an assistant message goes
/// together with its tool results, so every result keeps its call. Returns
/// how many messages were dropped.
pub fn trim(messages: &mut Vec<Message>, tools_json_bytes: usize, num_ctx: u32) -> usize {
    let budget = num_ctx as usize - num_ctx as usize / ANSWER_RESERVE_SHARE;
    let mut dropped = 0;
    while estimate(messages, tools_json_bytes) > budget {
        let task = messages.iter().rposition(|m| m.role == Role::User);
        // The first message that may go: after the system prompt, skipping
        // the current task.
        let Some(start) =
            (1..messages.len()).find(|&i| Some(i) != task && messages[i].role != Role::System)
        else {
            break;
        };
        let mut end = start + 1;
        if messages[start].role == Role::Assistant {
            while end < messages.len() && messages[end].role == Role::Tool {
                end += 1;
            }
        }
        // Never the latest exchange: the model needs what it just asked for.
        let latest = messages.iter().rposition(|m| m.role == Role::Assistant);
        if end >= messages.len() || latest.is_some_and(|l| start >= l) {
            break;
        }
        messages.drain(start..end);
        dropped += end - start;
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Finish, ToolCall, Turn};

    fn exchange(id: &str, result_len: usize) -> Vec<Message> {
        let call = ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{}".into(),
        };
        let turn = Turn {
            content: String::new(),
            thinking: String::new(),
            tool_calls: vec![call.clone()],
            finish: Finish::ToolCalls,
            usage: None,
        };
        vec![
            Message::from_turn(&turn),
            Message::tool_result(&call, "x".repeat(result_len)),
        ]
    }

    #[test]
    fn oldest_exchanges_go_first_and_pairs_stay_whole() {
        let mut messages = vec![Message::system("s"), Message::user("old task")];
        messages.extend(exchange("a", 4000));
        messages.push(Message::user("task"));
        messages.extend(exchange("b", 4000));
        messages.extend(exchange("c", 4000));
        let dropped = trim(&mut messages, 0, 2048);
        assert!(dropped >= 3, "{dropped}");
        assert_eq!(messages[0].role, Role::System);
        assert!(messages.iter().any(|m| m.content == "task"));
        // Every tool result still follows its call.
        for (i, m) in messages.iter().enumerate() {
            if m.role == Role::Tool {
                let id = m.tool_call_id.as_deref().unwrap();
                assert!(
                    messages[..i]
                        .iter()
                        .any(|p| p.tool_calls.iter().any(|c| c.id == id))
                );
            }
        }
        assert_eq!(messages.last().unwrap().tool_call_id.as_deref(), Some("c"));
    }

    #[test]
    fn long_results_are_cut_on_a_character_boundary() {
        let cut = crate::call::runner::cut_result("é".repeat(5000), tool_result_bytes(2048));
        assert!(cut.contains("[cut: the result has 10000 bytes"));
    }
}
