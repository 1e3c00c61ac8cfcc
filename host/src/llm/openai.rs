//! The OpenAI-compatible chat API: `POST {base_url}/chat/completions`,
//! streamed as server-sent events and ended by `data: [DONE]`.
//!
//! Served by llama.cpp's llama-server, vLLM, LM Studio, DeepSeek, OpenAI and
//! Ollama's `/v1`, each a little differently:
//! - tool calls come as fragments keyed by `index`: the first brings `id`
//!   and `function.name`, later ones append to `function.arguments` (a JSON
//!   *string*). Some servers send every call whole; old Ollama versions put
//!   every parallel call at index 0, so a new id at a used index starts a
//!   new call. Names are never concatenated.
//! - reasoning is `delta.reasoning_content` (DeepSeek, llama-server) or
//!   `delta.reasoning` (Ollama); it is kept and sent back as
//!   `reasoning_content` on assistant turns that called tools, which
//!   DeepSeek requires and the others ignore.
//! - `finish_reason` may come on a chunk of its own; `length` means the
//!   turn, and possibly its last call, was cut off.

use super::capabilities::PROBE_TIMEOUT;
use super::sse::{SseDecoder, SseError};
use super::stream::{TurnDecoder, append_piece, client, error_text, exchange, fetch_json};
use super::{
    Capabilities, ChatProvider, ChatRequest, Finish, LlmError, Message, ModelSettings, Role,
    StreamEvent, StreamSink, Think, ToolCall, Turn, Usage,
};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::HashMap;

/// A model behind an OpenAI-compatible server.
pub struct OpenAi {
    settings: ModelSettings,
    model: String,
    url: String,
    api_key: Option<String>,
    http: reqwest::Client,
}

impl OpenAi {
    pub fn new(settings: &ModelSettings) -> Result<Self, LlmError> {
        let api_key = match &settings.api_key_env {
            None => None,
            Some(name) => Some(std::env::var(name).map_err(|_| {
                LlmError::Setup(format!(
                    "model.api_key_env names `{name}`, but that environment variable is not set\n  fix: export {name}=<your key>"
                ))
            })?),
        };
        Ok(Self {
            model: settings.model_name().map_err(LlmError::Setup)?.to_string(),
            url: settings.endpoint("chat/completions"),
            settings: settings.clone(),
            api_key,
            http: client()?,
        })
    }

    /// The request body for `request`, with a generation cap
    /// ([`ModelSettings::reply_tokens`]) as `max_tokens`, which
    /// llama-server, vLLM, LM Studio, DeepSeek and Ollama's `/v1` all take.
    pub fn body(&self, request: ChatRequest<'_>) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(wire_message).collect::<Vec<_>>(),
            "stream": true,
            "stream_options": { "include_usage": true },
            "max_tokens": self.settings.reply_tokens(request.estimated_tokens()),
        });
        if !request.tools.is_empty() {
            body["tools"] = request.tools.iter().map(|t| t.to_wire()).collect();
        }
        if let Some(t) = self.settings.temperature {
            body["temperature"] = t.into();
        }
        if let Some(schema) = request.format {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": { "name": "answer", "schema": schema },
            });
        }
        if let Some(Think::Level(level)) = &self.settings.think {
            body["reasoning_effort"] = level.as_str().into();
        }
        body
    }
}

impl OpenAi {
    /// `request` with the API key, if there is one.
    fn authorized(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }
}

#[async_trait]
impl ChatProvider for OpenAi {
    fn describe(&self) -> String {
        format!(
            "{} on the OpenAI-compatible server at {}",
            crate::util::text::for_terminal_line(&self.model),
            crate::util::text::for_terminal_line(&self.settings.base_url)
        )
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn server(&self) -> String {
        format!("openai {}", self.settings.base_url.trim_end_matches('/'))
    }

    /// The model list, for the context length, and llama-server's `/props`
    /// (at the server's root, beside `/v1`), for tool support. Other
    /// servers have no `/props`; their tool support is learned from the
    /// first refusal. A request with a dummy tool would not tell:
    /// llama-server without `--jinja` silently drops the tools.
    async fn probe(&self) -> Result<Capabilities, LlmError> {
        let models_url = self.settings.endpoint("models");
        let listed = match fetch_json(
            self.authorized(self.http.get(&models_url)),
            &models_url,
            PROBE_TIMEOUT,
        )
        .await
        {
            Ok(models) => Capabilities::from_openai_models(&models, &self.model),
            Err(e @ (LlmError::Connect { .. } | LlmError::Idle { .. })) => return Err(e),
            Err(LlmError::Status {
                status: 401 | 403,
                message,
            }) => {
                return Err(LlmError::Status {
                    status: 401,
                    message,
                });
            }
            Err(_) => Capabilities::default(),
        };
        let root = self.settings.base_url.trim_end_matches('/');
        let props_url = format!("{}/props", root.strip_suffix("/v1").unwrap_or(root));
        let props = match fetch_json(
            self.authorized(self.http.get(&props_url)),
            &props_url,
            PROBE_TIMEOUT,
        )
        .await
        {
            Ok(props) => Capabilities::from_llama_props(&props),
            Err(_) => Capabilities::default(),
        };
        Ok(props.or(listed))
    }

    async fn chat(
        &self,
        request: ChatRequest<'_>,
        sink: &mut StreamSink<'_>,
    ) -> Result<Turn, LlmError> {
        let body = self.body(request);
        let post = self.authorized(self.http.post(&self.url));
        let idle = self.settings.idle_timeout;
        exchange::<SseTurn>(post, &self.url, &body, idle, sink).await
    }
}

fn wire_message(message: &Message) -> Value {
    let mut wire = json!({ "role": message.role.as_str(), "content": message.content });
    if message.role == Role::Assistant && !message.tool_calls.is_empty() {
        if message.content.is_empty() {
            wire["content"] = Value::Null;
        }
        wire["tool_calls"] = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": { "name": call.name, "arguments": call.arguments },
                })
            })
            .collect();
        if !message.thinking.is_empty() {
            wire["reasoning_content"] = message.thinking.clone().into();
        }
    }
    if let Some(id) = &message.tool_call_id {
        wire["tool_call_id"] = id.clone().into();
    }
    wire
}

/// A call being assembled from fragments.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates one turn from SSE chunks.
#[derive(Debug, Default)]
pub struct SseTurn {
    sse: SseDecoder,
    state: ChunkState,
}

#[derive(Debug, Default)]
struct ChunkState {
    content: String,
    thinking: String,
    calls: Vec<PartialCall>,
    /// Which call each wire index currently feeds.
    slot_of_index: HashMap<u64, usize>,
    finish: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

impl TurnDecoder for SseTurn {
    /// Feeds a chunk of the body; `Ok(true)` once `[DONE]` arrived.
    fn push(&mut self, chunk: &[u8], sink: &mut StreamSink<'_>) -> Result<bool, LlmError> {
        let state = &mut self.state;
        self.sse
            .push(chunk, |data| state.event(data, sink))
            .map_err(sse_error)?;
        Ok(self.state.done)
    }

    /// The body ended without `[DONE]`.
    fn finish(&mut self, sink: &mut StreamSink<'_>) -> Result<(), LlmError> {
        let state = &mut self.state;
        self.sse
            .finish(|data| state.event(data, sink))
            .map_err(sse_error)
    }

    /// The finished turn. A stream that ended with neither `[DONE]` nor a
    /// finish reason was cut off.
    fn into_turn(self) -> Result<Turn, LlmError> {
        let state = self.state;
        let reason = match (state.finish, state.done) {
            (Some(reason), _) => reason,
            (None, true) => String::new(),
            (None, false) => return Err(LlmError::Truncated),
        };
        let tool_calls: Vec<ToolCall> = state
            .calls
            .into_iter()
            .enumerate()
            .map(|(position, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{position}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        let finish = match Finish::from_wire(&reason) {
            Finish::Stop if !tool_calls.is_empty() => Finish::ToolCalls,
            other => other,
        };
        Ok(Turn {
            content: state.content,
            thinking: state.thinking,
            tool_calls,
            finish,
            usage: state.usage,
        })
    }
}

fn sse_error(e: SseError<LlmError>) -> LlmError {
    match e {
        SseError::Event(e) => e,
        SseError::NotUtf8 => LlmError::Malformed {
            expected: "UTF-8 server-sent events",
            detail: "a line that is not UTF-8".into(),
        },
        SseError::TooLong => LlmError::Malformed {
            expected: "server-sent events",
            detail: "a line longer than 16 MiB".into(),
        },
    }
}

impl ChunkState {
    fn event(&mut self, data: &str, sink: &mut StreamSink<'_>) -> Result<(), LlmError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| LlmError::Malformed {
            expected: "a chat-completion chunk",
            detail: format!(
                "{e} in `{}`",
                crate::util::text::for_terminal_line(&crate::util::text::shorten(data, 200))
            ),
        })?;
        if let Some(error) = chunk.get("error") {
            return Err(LlmError::Server(error_text(error)));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let count = |key| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Some(Usage {
                prompt_tokens: count("prompt_tokens"),
                completion_tokens: count("completion_tokens"),
            });
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            for key in ["reasoning_content", "reasoning"] {
                if let Some(piece) = append_piece(&mut self.thinking, delta.get(key)) {
                    sink(StreamEvent::Thinking(piece));
                }
            }
            if let Some(piece) = append_piece(&mut self.content, delta.get("content")) {
                sink(StreamEvent::Content(piece));
            }
            if let Some(fragments) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, fragment) in fragments.iter().enumerate() {
                    self.fragment(fragment, position as u64);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(reason.to_string());
        }
        Ok(())
    }

    /// Applies one tool-call fragment.
    fn fragment(&mut self, fragment: &Value, position: u64) {
        let index = fragment
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position);
        let id = fragment.get("id").and_then(Value::as_str).unwrap_or("");
        let function = fragment.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let arguments = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let slot = match self.slot_of_index.get(&index) {
            Some(&slot) => {
                let call = &self.calls[slot];
                let new_id = !id.is_empty() && !call.id.is_empty() && id != call.id;
                // A name at a slot that already has its name and some
                // arguments is a whole new call without an id.
                let new_unnamed = id.is_empty()
                    && !name.is_empty()
                    && !call.name.is_empty()
                    && !call.arguments.is_empty();
                if new_id || new_unnamed {
                    None
                } else {
                    Some(slot)
                }
            }
            None => None,
        };
        let slot = slot.unwrap_or_else(|| {
            self.calls.push(PartialCall::default());
            let slot = self.calls.len() - 1;
            self.slot_of_index.insert(index, slot);
            slot
        });
        let call = &mut self.calls[slot];
        if call.id.is_empty() && !id.is_empty() {
            call.id = id.to_string();
        }
        if call.name.is_empty() && !name.is_empty() {
            call.name = name.to_string();
        }
        call.arguments.push_str(&arguments);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(body: &str, chunk_size: usize) -> Result<Turn, LlmError> {
        let mut sink = |_: StreamEvent<'_>| {};
        let mut turn = SseTurn::default();
        let mut done = false;
        for chunk in body.as_bytes().chunks(chunk_size) {
            done = turn.push(chunk, &mut sink)?;
            if done {
                break;
            }
        }
        if !done {
            turn.finish(&mut sink)?;
        }
        turn.into_turn()
    }

    fn data(chunk: Value) -> String {
        format!("data: {chunk}\n\n")
    }

    fn call_fragment(index: u64, id: Option<&str>, name: Option<&str>, args: &str) -> String {
        let mut function = json!({ "arguments": args });
        if let Some(name) = name {
            function["name"] = name.into();
        }
        let mut fragment = json!({ "index": index, "function": function });
        if let Some(id) = id {
            fragment["id"] = id.into();
            fragment["type"] = "function".into();
        }
        data(json!({ "choices": [{ "index": 0, "delta": { "tool_calls": [fragment] } }] }))
    }

    #[test]
    fn fragments_accumulate_by_index_whatever_the_chunking() {
        let body = [
            call_fragment(0, Some("call_1"), Some("read_file"), ""),
            call_fragment(1, Some("call_2"), Some("list_directory"), ""),
            call_fragment(0, None, None, "{\"pa"),
            call_fragment(1, None, None, "{}"),
            call_fragment(0, None, None, "th\": \"a.md\"}"),
            data(
                json!({ "choices": [{ "index": 0, "delta": {}, "finish_reason": "tool_calls" }] }),
            ),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        for size in [1, 7, 64, body.len()] {
            let turn = decode(&body, size).unwrap();
            assert_eq!(turn.finish, Finish::ToolCalls);
            let calls: Vec<_> = turn
                .tool_calls
                .iter()
                .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
                .collect();
            assert_eq!(
                calls,
                vec![
                    ("call_1", "read_file", "{\"path\": \"a.md\"}"),
                    ("call_2", "list_directory", "{}")
                ]
            );
        }
    }

    #[test]
    fn a_new_id_at_a_used_index_starts_a_new_call() {
        let body = [
            call_fragment(0, Some("call_a"), Some("read_file"), "{\"path\":\"a\"}"),
            call_fragment(0, Some("call_b"), Some("read_file"), "{\"path\":\"b\"}"),
            data(json!({ "choices": [{ "delta": {}, "finish_reason": "tool_calls" }] })),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let turn = decode(&body, 5).unwrap();
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[1].id, "call_b");
        assert_eq!(turn.tool_calls[1].name, "read_file");
        assert_eq!(turn.tool_calls[1].arguments, "{\"path\":\"b\"}");
    }

    #[test]
    fn length_cut_arguments_stay_unparsable() {
        let body = [
            call_fragment(
                0,
                Some("c"),
                Some("write_file"),
                "{\"path\":\"a\",\"content\":\"lo",
            ),
            data(json!({ "choices": [{ "delta": {}, "finish_reason": "length" }] })),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let turn = decode(&body, 100).unwrap();
        assert_eq!(turn.finish, Finish::Length);
        assert!(turn.tool_calls[0].parsed_arguments().is_err());
    }

    #[test]
    fn reasoning_and_error_events() {
        let body = [
            data(json!({ "choices": [{ "delta": { "reasoning_content": "hmm" } }] })),
            data(json!({ "choices": [{ "delta": { "content": "Hi" }, "finish_reason": "stop" }] })),
        ]
        .concat();
        let turn = decode(&body, 3).unwrap();
        assert_eq!(
            (turn.thinking.as_str(), turn.content.as_str()),
            ("hmm", "Hi")
        );
        let err = decode(&data(json!({ "error": { "message": "overloaded" } })), 10).unwrap_err();
        assert!(matches!(err, LlmError::Server(m) if m == "overloaded"));
        assert!(matches!(
            decode(
                &data(json!({ "choices": [{ "delta": { "content": "x" } }] })),
                4
            ),
            Err(LlmError::Truncated)
        ));
    }
}
