//! A recorded conversation made ready to go on (`toolcell chat --resume`):
//! its messages after the system prompt (the new run writes its own, for
//! the tools and policy of now), with every call answered. The calls are
//! history: none is run again. A call the run ended before answering (it
//! was stopped, or its process died) gets a result saying so, since every
//! server wants each call of a turn answered before the next message.

use crate::llm::{Message, Role};

/// What a call the earlier run never answered gets as its result.
pub fn not_answered(run: i64) -> String {
    format!(
        "not run: run {run} ended before this call finished; it is not run again (ask for it anew if it is still needed)"
    )
}

/// `messages` (a recorded run's, in order) without the system prompt, each
/// call of an assistant message followed by a result.
pub fn history(messages: Vec<Message>, run: i64) -> Vec<Message> {
    let mut kept: Vec<Message> = Vec::with_capacity(messages.len());
    let mut messages = messages
        .into_iter()
        .filter(|m| m.role != Role::System)
        .peekable();
    while let Some(message) = messages.next() {
        let calls = message.tool_calls.clone();
        kept.push(message);
        if calls.is_empty() {
            continue;
        }
        // The results that follow this turn; ids repeat across turns
        // (`call_0` each turn), so only these answer its calls.
        let mut answered = Vec::new();
        while let Some(result) = messages.next_if(|m| m.role == Role::Tool) {
            answered.push(result.tool_call_id.clone());
            kept.push(result);
        }
        for call in calls {
            if !answered.contains(&Some(call.id.clone())) {
                kept.push(Message::tool_result(&call, not_answered(run)));
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Finish, ToolCall, Turn};

    fn turn(ids: &[&str]) -> Message {
        Message::from_turn(&Turn {
            content: String::new(),
            thinking: String::new(),
            tool_calls: ids
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "write_file".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            finish: Finish::ToolCalls,
            usage: None,
        })
    }

    fn result(id: &str) -> Message {
        Message::tool_result(
            &ToolCall {
                id: id.into(),
                name: "write_file".into(),
                arguments: "{}".into(),
            },
            "ok",
        )
    }

    #[test]
    fn the_system_prompt_goes_and_answered_calls_stay_as_they_were() {
        let recorded = vec![
            Message::system("old prompt"),
            Message::user("task"),
            turn(&["call_0"]),
            result("call_0"),
            Message::user("more"),
        ];
        let history = history(recorded.clone(), 3);
        assert_eq!(history, recorded[1..].to_vec());
    }

    #[test]
    fn a_call_the_run_ended_before_answering_is_answered_as_not_run() {
        let recorded = vec![
            Message::system("p"),
            Message::user("task"),
            turn(&["call_0"]),
            result("call_0"),
            // The next turn reuses the id; the run stopped part-way.
            turn(&["call_0", "call_1"]),
            result("call_0"),
        ];
        let history = history(recorded, 7);
        assert_eq!(history.len(), 6);
        let last = history.last().unwrap();
        assert_eq!(last.role, Role::Tool);
        assert_eq!(last.tool_call_id.as_deref(), Some("call_1"));
        assert!(last.content.starts_with("not run: run 7 ended"));
        // A turn whose results are all missing gets one per call.
        let history = super::history(vec![Message::user("t"), turn(&["a", "b"])], 1);
        assert_eq!(history.len(), 4);
    }
}
