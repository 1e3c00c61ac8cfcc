//! What a model can do, as its server reports it: native tool calling,
//! thinking, and its context length. Each field is `None` when the server
//! does not say; the agent then assumes native tools and learns otherwise
//! from the server's first refusal.
//!
//! The servers' answers read here:
//! - Ollama, `POST /api/show {"model": …}`: `capabilities` (a list with
//!   `tools`, `thinking`, …) and `model_info["<arch>.context_length"]`.
//! - llama.cpp's llama-server, `GET /props`: `chat_template_caps.supports_tool_calls`
//!   (false unless it runs with `--jinja` and a template that has tools) and
//!   `default_generation_settings.n_ctx`, the context it serves, and
//!   `chat_template`.
//! - Both: the chat template shows the tool-call dialect the model was
//!   taught (Ollama's `template`, llama-server's `chat_template`).
//! - OpenAI-compatible `GET /v1/models`: the model's entry may carry its
//!   context as `meta.n_ctx` (llama-server), `max_model_len` (vLLM) or
//!   `context_length` (LM Studio and others).

use serde_json::Value;
use std::time::Duration;

/// How long a probe waits for each answer: describing a model reads a
/// manifest and loads nothing, so a server that takes longer is in trouble,
/// and the run goes on without the answer.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// A model's capabilities; `None` where the server did not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    pub tools: Option<bool>,
    pub thinking: Option<bool>,
    pub context_length: Option<u32>,
    /// The tool-call dialect its chat template teaches, by name
    /// ([`super::dialect::registry`]).
    pub dialect: Option<&'static str>,
}

impl Capabilities {
    /// Whether the server said anything at all.
    pub fn is_known(&self) -> bool {
        self.tools.is_some()
            || self.thinking.is_some()
            || self.context_length.is_some()
            || self.dialect.is_some()
    }

    /// `self`, with the gaps filled from `other`.
    pub fn or(self, other: Capabilities) -> Capabilities {
        Capabilities {
            tools: self.tools.or(other.tools),
            thinking: self.thinking.or(other.thinking),
            context_length: self.context_length.or(other.context_length),
            dialect: self.dialect.or(other.dialect),
        }
    }

    /// From Ollama's `/api/show` answer.
    pub fn from_ollama_show(show: &Value) -> Capabilities {
        let listed = show.get("capabilities").and_then(Value::as_array);
        let has = |name: &str| listed.map(|list| list.iter().any(|c| c.as_str() == Some(name)));
        let context_length = show
            .get("model_info")
            .and_then(Value::as_object)
            .and_then(|info| {
                info.iter()
                    .find(|(key, _)| key.ends_with(".context_length"))
                    .and_then(|(_, value)| context_value(value))
            });
        Capabilities {
            tools: has("tools"),
            thinking: has("thinking"),
            context_length,
            dialect: template_dialect(show.get("template")),
        }
    }

    /// From llama-server's `/props` answer.
    pub fn from_llama_props(props: &Value) -> Capabilities {
        Capabilities {
            tools: props
                .pointer("/chat_template_caps/supports_tool_calls")
                .and_then(Value::as_bool),
            thinking: None,
            context_length: props
                .pointer("/default_generation_settings/n_ctx")
                .and_then(context_value),
            dialect: template_dialect(props.get("chat_template")),
        }
    }

    /// From an OpenAI-compatible `/models` list: the entry for `model`.
    pub fn from_openai_models(models: &Value, model: &str) -> Capabilities {
        let entry = models
            .get("data")
            .and_then(Value::as_array)
            .and_then(|list| {
                list.iter()
                    .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
            });
        let context_length = entry.and_then(|m| {
            ["/meta/n_ctx", "/max_model_len", "/context_length"]
                .iter()
                .find_map(|p| m.pointer(p).and_then(context_value))
        });
        Capabilities {
            context_length,
            ..Capabilities::default()
        }
    }
}

/// The dialect a chat template teaches, if it shows one.
fn template_dialect(template: Option<&Value>) -> Option<&'static str> {
    super::dialect::from_template(template?.as_str()?).map(|d| d.name)
}

/// A context length, if `value` is a plausible one.
fn context_value(value: &Value) -> Option<u32> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ollama_show_gives_tools_thinking_and_context() {
        let show = json!({
            "capabilities": ["completion", "tools", "thinking"],
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960},
        });
        let caps = Capabilities::from_ollama_show(&show);
        assert_eq!(
            caps,
            Capabilities {
                tools: Some(true),
                thinking: Some(true),
                context_length: Some(40960),
                dialect: None,
            }
        );
        let plain = Capabilities::from_ollama_show(&json!({"capabilities": ["completion"]}));
        assert_eq!((plain.tools, plain.thinking), (Some(false), Some(false)));
        let old = Capabilities::from_ollama_show(&json!({"modelfile": "…"}));
        assert!(
            !old.is_known(),
            "an old server without capabilities says nothing"
        );
    }

    #[test]
    fn llama_props_and_models_list() {
        let props = json!({
            "default_generation_settings": {"n_ctx": 4096},
            "chat_template_caps": {"supports_tool_calls": false, "supports_tools": false},
        });
        let caps = Capabilities::from_llama_props(&props);
        assert_eq!((caps.tools, caps.context_length), (Some(false), Some(4096)));
        let gemma = json!({"chat_template": "{{ bos_token }}<start_of_turn>user\n"});
        assert_eq!(
            Capabilities::from_llama_props(&gemma).dialect,
            Some("gemma-tool-code")
        );
        let models = json!({"data": [
            {"id": "other", "max_model_len": 1},
            {"id": "qwen", "max_model_len": 32768},
        ]});
        assert_eq!(
            Capabilities::from_openai_models(&models, "qwen").context_length,
            Some(32768)
        );
        assert!(!Capabilities::from_openai_models(&models, "missing").is_known());
    }
}
