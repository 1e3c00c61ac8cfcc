//! Model servers: the conversation types the agent loop speaks, and one
//! [`ChatProvider`] per wire protocol.
//!
//! - [`ollama`]: Ollama's native `/api/chat`, streamed as NDJSON;
//! - [`openai`]: `/v1/chat/completions` streamed as server-sent events, as
//!   served by llama.cpp's llama-server, vLLM, LM Studio, DeepSeek, OpenAI
//!   and Ollama's own `/v1`.
//!
//! A provider turns one [`ChatRequest`] into one [`Turn`]: the assistant's
//! text, its thinking and its tool calls, accumulated from the stream while
//! the text is handed to a sink as it arrives. Retrying and cancelling are
//! the caller's: a provider makes exactly one HTTP request per call.

pub mod capabilities;
pub mod dialect;
pub mod lines;
pub mod ollama;
pub mod openai;
pub mod recover;
pub mod retry;
pub mod settings;
pub mod sse;
pub mod stream;

use async_trait::async_trait;
pub use capabilities::Capabilities;
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use settings::{ModelSettings, ProviderKind, Think, ToolFormat};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id the result must be paired with (made up by the host when
    /// the server sent none).
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model wrote them: JSON text, possibly
    /// malformed or cut off.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as a JSON object.
    pub fn parsed_arguments(&self) -> Result<Value, String> {
        let text = self.arguments.trim();
        if text.is_empty() {
            return Ok(Value::Object(Default::default()));
        }
        match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => Ok(value),
            Ok(other) => Err(format!(
                "the arguments must be a JSON object, not {}",
                json_kind(&other)
            )),
            Err(e) => Err(format!("the arguments are not valid JSON: {e}")),
        }
    }
}

/// The JSON type of `value`, for messages.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    /// The model's reasoning on an assistant message; sent back to servers
    /// that need it (DeepSeek rejects a tool-call turn without it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub thinking: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// On a tool result: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// On a tool result: the tool that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

impl Message {
    /// The bytes of its text, thinking and calls: what a token estimate
    /// counts (`agent::context`, the reply budget).
    pub fn text_bytes(&self) -> usize {
        self.content.len()
            + self.thinking.len()
            + self
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len())
                .sum::<usize>()
    }
}

impl Message {
    pub fn system(text: impl Into<String>) -> Self {
        Self::plain(Role::System, text.into())
    }

    pub fn user(text: impl Into<String>) -> Self {
        Self::plain(Role::User, text.into())
    }

    /// The result of `call`, to send back to the model.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call.id.clone()),
            tool_name: Some(call.name.clone()),
            ..Self::plain(Role::Tool, content.into())
        }
    }

    /// The assistant message that replays `turn` in the history.
    pub fn from_turn(turn: &Turn) -> Self {
        Self {
            thinking: turn.thinking.clone(),
            tool_calls: turn.tool_calls.clone(),
            ..Self::plain(Role::Assistant, turn.content.clone())
        }
    }

    fn plain(role: Role, content: String) -> Self {
        Self {
            role,
            content,
            thinking: String::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
        }
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
}

impl ToolSpec {
    /// The `{type: "function", function: {...}}` form both protocols use.
    pub fn to_wire(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// What a provider is asked for.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    /// A JSON Schema the answer must follow (Ollama `format`, OpenAI
    /// `response_format`), for structured output.
    pub format: Option<&'a Value>,
}

/// Bytes per token in a prompt's estimate: English text and JSON average
/// about 4 bytes per token in the tokenizers of common open models.
pub const BYTES_PER_TOKEN: usize = 4;
/// What a chat template adds to each message, in tokens.
const TOKENS_PER_MESSAGE: usize = 8;

impl ChatRequest<'_> {
    /// About how many tokens the prompt takes: its messages and tool
    /// definitions, at [`BYTES_PER_TOKEN`]. Servers count their own way;
    /// this is for a budget, not an exact count.
    pub fn estimated_tokens(&self) -> usize {
        let messages: usize = self.messages.iter().map(Message::text_bytes).sum();
        let tools: usize = self
            .tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
            .sum();
        (messages + tools) / BYTES_PER_TOKEN + self.messages.len() * TOKENS_PER_MESSAGE
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// It answered (or asked for tools: Ollama says `stop` then too).
    Stop,
    /// It asked for tools.
    ToolCalls,
    /// It hit the output limit: the turn, and any call in it, may be cut off.
    Length,
    /// Anything else the server said.
    Other(String),
}

impl Finish {
    pub fn from_wire(reason: &str) -> Self {
        match reason {
            "stop" | "" => Finish::Stop,
            "tool_calls" | "function_call" => Finish::ToolCalls,
            "length" => Finish::Length,
            other => Finish::Other(other.to_string()),
        }
    }
}

/// Token counts the server reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// One complete answer of the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub content: String,
    pub thinking: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish: Finish,
    pub usage: Option<Usage>,
}

/// A piece of the answer as it streams in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEvent<'a> {
    Content(&'a str),
    Thinking(&'a str),
}

/// Where streamed text goes while a turn is being read.
pub type StreamSink<'s> = dyn FnMut(StreamEvent<'_>) + Send + 's;

/// Why a model request failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach the model server at {url}: {message}")]
    Connect { url: String, message: String },
    #[error("the model server answered HTTP {status}: {message}")]
    Status { status: u16, message: String },
    #[error("the model server reported an error: {0}")]
    Server(String),
    #[error("the model server sent something that is not {expected}: {detail}")]
    Malformed {
        expected: &'static str,
        detail: String,
    },
    #[error("the model server's stream ended before the answer was complete")]
    Truncated,
    #[error(
        "the model server sent nothing for {seconds} s; raise `idle_timeout_ms` under [model] in toolcell.toml if the model is slow to load"
    )]
    Idle { seconds: u64 },
    /// The reply went past [`stream::MAX_REPLY_BYTES`]; never retried, as
    /// the same request would stream on the same way.
    #[error(
        "the model server's reply went past {} MiB without ending (the cap on one reply, llm::stream::MAX_REPLY_BYTES); it was cut off there and not retried",
        .limit >> 20
    )]
    ReplyTooLong { limit: u64 },
    #[error("{0}")]
    Setup(String),
}

impl LlmError {
    /// Whether repeating the same request may succeed: the connection failed
    /// or dropped, the server is busy (429) or failing (5xx).
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Connect { .. } | LlmError::Truncated => true,
            LlmError::Status { status, .. } => *status == 429 || *status >= 500,
            _ => false,
        }
    }

    /// What the user can do about it, when toolcell can tell.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            LlmError::Connect { .. } => Some(
                "is the model server running at that address? (`ollama serve`, `llama-server --jinja …`); set base_url under [model] or pass --base-url",
            ),
            LlmError::Status { status: 404, .. } => Some(
                "the server does not know that model (or that path): for Ollama, `ollama pull NAME`; for OpenAI-compatible servers, base_url must end in /v1",
            ),
            LlmError::Status {
                status: 401 | 403, ..
            } => Some(
                "the server wants an API key: set api_key_env under [model] to the name of the variable that holds it",
            ),
            LlmError::Status {
                status: 400,
                message,
            } if message.contains("does not support tools") => Some(
                "this model has no native tool calling: choose a model with tools (`ollama show NAME` lists its capabilities)",
            ),
            LlmError::Status {
                status: 400,
                message,
            } if message.contains("does not support thinking") => {
                Some("this model cannot think: remove `think` under [model]")
            }
            LlmError::ReplyTooLong { .. } => Some(
                "the model (or the server) was repeating itself without end: ask again, perhaps more narrowly, or use another model; a server that ignores max_tokens / num_predict is the cause if it happens every time",
            ),
            _ => None,
        }
    }

    /// The server refuses tools for this model: Ollama's 400 "does not
    /// support tools", an older llama-server without `--jinja`, vLLM without
    /// a tool-call parser.
    pub fn is_tools_unsupported(&self) -> bool {
        const REFUSALS: &[&str] = &[
            "does not support tools",
            "tools param requires --jinja",
            "requires --enable-auto-tool-choice",
        ];
        matches!(self, LlmError::Status { status: 400..=599, message } if REFUSALS.iter().any(|r| message.contains(r)))
    }
}

/// A model server speaking one protocol. One call is one HTTP request; the
/// caller retries and cancels (by dropping the future).
#[async_trait]
pub trait ChatProvider: Send + Sync {
    /// For messages: the protocol, model and server.
    fn describe(&self) -> String;

    /// The server, as the key under which what is known of its models is
    /// kept: the protocol and the base URL.
    fn server(&self) -> String;

    /// Asks the server what the model can do. `Ok` with unknown fields when
    /// the server does not say; `Err` only when it cannot be reached or
    /// refuses (an unknown model, a bad key).
    async fn probe(&self) -> Result<Capabilities, LlmError>;

    /// The model's name, for the run record.
    fn model(&self) -> &str;

    /// Sends the conversation and reads the streamed answer, handing text to
    /// `sink` as it arrives.
    async fn chat(
        &self,
        request: ChatRequest<'_>,
        sink: &mut StreamSink<'_>,
    ) -> Result<Turn, LlmError>;
}

/// The provider `settings` select.
pub fn connect(settings: &ModelSettings) -> Result<Box<dyn ChatProvider>, LlmError> {
    Ok(match settings.provider {
        ProviderKind::Ollama => Box::new(ollama::Ollama::new(settings)?),
        ProviderKind::OpenAi => Box::new(openai::OpenAi::new(settings)?),
    })
}
