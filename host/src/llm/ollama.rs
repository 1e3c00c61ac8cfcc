//! Ollama's native chat API: `POST /api/chat`, answered with one JSON
//! object per line (NDJSON).
//!
//! What the stream really carries (see the protocol notes in ARCHITECTURE.md):
//! content and thinking in pieces; each tool call whole, but the calls of one
//! turn possibly on different lines (so they are appended, never replaced);
//! arguments as a JSON object; an `id` on newer servers only; a last line
//! with `done: true`; and, after an HTTP 200, possibly a line
//! `{"error": "…"}` that must surface as an error.

use super::capabilities::PROBE_TIMEOUT;
use super::lines::{LineSplitter, PushError};
use super::stream::{TurnDecoder, append_piece, client, error_text, exchange, fetch_json};
use super::{
    Capabilities, ChatProvider, ChatRequest, Finish, LlmError, Message, ModelSettings, Role,
    StreamEvent, StreamSink, Think, ToolCall, Turn, Usage,
};
use async_trait::async_trait;
use serde_json::{Map, Value, json};

/// A model served by Ollama.
pub struct Ollama {
    settings: ModelSettings,
    model: String,
    url: String,
    http: reqwest::Client,
}

impl Ollama {
    pub fn new(settings: &ModelSettings) -> Result<Self, LlmError> {
        Ok(Self {
            model: settings.model_name().map_err(LlmError::Setup)?.to_string(),
            url: settings.endpoint("api/chat"),
            settings: settings.clone(),
            http: client()?,
        })
    }

    /// The request body for `request`: the context size and a generation
    /// cap ([`ModelSettings::reply_tokens`]) always in `options`.
    pub fn body(&self, request: ChatRequest<'_>) -> Value {
        let mut options = Map::new();
        options.insert("num_ctx".into(), self.settings.num_ctx.into());
        let cap = self.settings.reply_tokens(request.estimated_tokens());
        options.insert("num_predict".into(), cap.into());
        if let Some(t) = self.settings.temperature {
            options.insert("temperature".into(), t.into());
        }
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(wire_message).collect::<Vec<_>>(),
            "stream": true,
            "options": options,
        });
        if !request.tools.is_empty() {
            body["tools"] = request.tools.iter().map(|t| t.to_wire()).collect();
        }
        if let Some(schema) = request.format {
            body["format"] = schema.clone();
        }
        match &self.settings.think {
            Some(Think::On(on)) => body["think"] = (*on).into(),
            Some(Think::Level(level)) => body["think"] = level.as_str().into(),
            None => {}
        }
        body
    }
}

#[async_trait]
impl ChatProvider for Ollama {
    fn describe(&self) -> String {
        format!(
            "{} on Ollama at {}",
            crate::util::text::for_terminal_line(&self.model),
            crate::util::text::for_terminal_line(&self.settings.base_url)
        )
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn server(&self) -> String {
        format!("ollama {}", self.settings.base_url.trim_end_matches('/'))
    }

    async fn probe(&self) -> Result<Capabilities, LlmError> {
        let url = self.settings.endpoint("api/show");
        let request = self.http.post(&url).json(&json!({ "model": self.model }));
        let show = fetch_json(request, &url, PROBE_TIMEOUT).await?;
        Ok(Capabilities::from_ollama_show(&show))
    }

    async fn chat(
        &self,
        request: ChatRequest<'_>,
        sink: &mut StreamSink<'_>,
    ) -> Result<Turn, LlmError> {
        let body = self.body(request);
        let idle = self.settings.idle_timeout;
        exchange::<NdjsonTurn>(self.http.post(&self.url), &self.url, &body, idle, sink).await
    }
}

/// One message in Ollama's form: the assistant's calls replayed with their
/// ids and object arguments, results with `tool_name` and `tool_call_id`.
fn wire_message(message: &Message) -> Value {
    let mut wire = json!({ "role": message.role.as_str(), "content": message.content });
    if message.role == Role::Assistant {
        if !message.thinking.is_empty() {
            wire["thinking"] = message.thinking.clone().into();
        }
        if !message.tool_calls.is_empty() {
            wire["tool_calls"] = message
                .tool_calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    // A call that never parsed is replayed as an empty
                    // object: Ollama requires an object here.
                    let arguments = call
                        .parsed_arguments()
                        .unwrap_or_else(|_| Value::Object(Map::new()));
                    json!({
                        "id": call.id,
                        "function": { "index": index, "name": call.name, "arguments": arguments },
                    })
                })
                .collect();
        }
    }
    if let Some(id) = &message.tool_call_id {
        wire["tool_call_id"] = id.clone().into();
    }
    if let Some(name) = &message.tool_name {
        wire["tool_name"] = name.clone().into();
    }
    wire
}

/// Accumulates one turn from NDJSON lines.
#[derive(Debug, Default)]
pub struct NdjsonTurn {
    lines: LineSplitter,
    content: String,
    thinking: String,
    tool_calls: Vec<ToolCall>,
    done_reason: Option<String>,
    usage: Option<Usage>,
}

impl TurnDecoder for NdjsonTurn {
    /// Feeds a chunk of the body; `Ok(true)` once the `done` line arrived.
    fn push(&mut self, chunk: &[u8], sink: &mut StreamSink<'_>) -> Result<bool, LlmError> {
        let Self {
            lines,
            content,
            thinking,
            tool_calls,
            done_reason,
            usage,
        } = self;
        let mut state = LineState {
            content,
            thinking,
            tool_calls,
            done_reason,
            usage,
        };
        lines
            .push(chunk, |line| state.line(line, sink))
            .map_err(|e| match e {
                PushError::Line(e) => e,
                PushError::TooLong => LlmError::Malformed {
                    expected: "NDJSON",
                    detail: "a line longer than 16 MiB".into(),
                },
            })?;
        Ok(self.done_reason.is_some())
    }

    /// The body ended: a last line without a newline still counts.
    fn finish(&mut self, sink: &mut StreamSink<'_>) -> Result<(), LlmError> {
        let rest = self.lines.finish();
        if rest.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let mut state = LineState {
            content: &mut self.content,
            thinking: &mut self.thinking,
            tool_calls: &mut self.tool_calls,
            done_reason: &mut self.done_reason,
            usage: &mut self.usage,
        };
        state.line(&rest, sink)
    }

    /// The finished turn, or [`LlmError::Truncated`] if no `done` line came.
    fn into_turn(self) -> Result<Turn, LlmError> {
        let Some(reason) = self.done_reason else {
            return Err(LlmError::Truncated);
        };
        Ok(Turn {
            content: self.content,
            thinking: self.thinking,
            finish: if self.tool_calls.is_empty() {
                Finish::from_wire(&reason)
            } else if reason == "length" {
                Finish::Length
            } else {
                Finish::ToolCalls
            },
            tool_calls: self.tool_calls,
            usage: self.usage,
        })
    }
}

struct LineState<'a> {
    content: &'a mut String,
    thinking: &'a mut String,
    tool_calls: &'a mut Vec<ToolCall>,
    done_reason: &'a mut Option<String>,
    usage: &'a mut Option<Usage>,
}

impl LineState<'_> {
    fn line(&mut self, line: &[u8], sink: &mut StreamSink<'_>) -> Result<(), LlmError> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let malformed = |detail: String| LlmError::Malformed {
            expected: "an Ollama NDJSON line",
            detail,
        };
        let text =
            std::str::from_utf8(line).map_err(|_| malformed("a line that is not UTF-8".into()))?;
        let value: Value = serde_json::from_str(text).map_err(|e| {
            malformed(format!(
                "{e} in `{}`",
                crate::util::text::shorten(text, 200)
            ))
        })?;
        if let Some(error) = value.get("error") {
            return Err(LlmError::Server(error_text(error)));
        }
        if let Some(message) = value.get("message") {
            if let Some(piece) = append_piece(self.thinking, message.get("thinking")) {
                sink(StreamEvent::Thinking(piece));
            }
            if let Some(piece) = append_piece(self.content, message.get("content")) {
                sink(StreamEvent::Content(piece));
            }
            if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    self.tool_calls
                        .push(parse_call(call, self.tool_calls.len())?);
                }
            }
        }
        if value.get("done").and_then(Value::as_bool) == Some(true) {
            let reason = value
                .get("done_reason")
                .and_then(Value::as_str)
                .unwrap_or("stop");
            *self.done_reason = Some(reason.to_string());
            let count = |key| value.get(key).and_then(Value::as_u64).unwrap_or(0);
            *self.usage = Some(Usage {
                prompt_tokens: count("prompt_eval_count"),
                completion_tokens: count("eval_count"),
            });
        }
        Ok(())
    }
}

/// One whole call from a line; older servers send no id, so one is made
/// from the call's position in the turn.
fn parse_call(call: &Value, position: usize) -> Result<ToolCall, LlmError> {
    let function = call.get("function").ok_or_else(|| LlmError::Malformed {
        expected: "an Ollama tool call",
        detail: format!("no `function` in {call}"),
    })?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    let id = match call.get("id").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("call_{position}"),
    };
    Ok(ToolCall {
        id,
        name,
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&[u8]]) -> Result<(Turn, String), LlmError> {
        let mut shown = String::new();
        let mut sink = |event: StreamEvent<'_>| {
            if let StreamEvent::Content(text) = event {
                shown.push_str(text)
            }
        };
        let mut turn = NdjsonTurn::default();
        let mut done = false;
        for chunk in chunks {
            done = turn.push(chunk, &mut sink)?;
        }
        if !done {
            turn.finish(&mut sink)?;
        }
        Ok((turn.into_turn()?, shown))
    }

    #[test]
    fn calls_on_several_lines_are_appended() {
        let body = concat!(
            r#"{"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_a","function":{"index":0,"name":"read_file","arguments":{"path":"a.md"}}}]},"done":false}"#,
            "\n",
            r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":1,"name":"list_directory","arguments":{}}}]},"done":false}"#,
            "\n",
            r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":12,"eval_count":7}"#,
            "\n",
        );
        let (turn, _) = decode(&[body.as_bytes()]).unwrap();
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].id, "call_a");
        assert_eq!(turn.tool_calls[0].arguments, r#"{"path":"a.md"}"#);
        assert_eq!(turn.tool_calls[1].id, "call_1");
        assert_eq!(turn.finish, Finish::ToolCalls);
        assert_eq!(turn.usage.unwrap().completion_tokens, 7);
    }

    #[test]
    fn an_error_line_after_200_is_an_error() {
        let body = b"{\"message\":{\"content\":\"Hel\"},\"done\":false}\n{\"error\":\"model runner crashed\"}\n";
        match decode(&[body]) {
            Err(LlmError::Server(message)) => assert_eq!(message, "model runner crashed"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn utf8_split_between_chunks_and_no_done_is_truncated() {
        let body = "{\"message\":{\"content\":\"né\"},\"done\":false}\n".as_bytes();
        let at = body.iter().position(|&b| b == 0xC3).unwrap() + 1;
        assert!(matches!(
            decode(&[&body[..at], &body[at..]]),
            Err(LlmError::Truncated)
        ));
        let done = b"{\"done\":true,\"done_reason\":\"stop\"}";
        let (turn, shown) = decode(&[&body[..at], &body[at..], done]).unwrap();
        assert_eq!(turn.content, "né");
        assert_eq!(shown, "né");
    }
}
