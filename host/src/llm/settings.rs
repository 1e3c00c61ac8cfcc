//! Which model server and model to use: the `[model]` table of
//! `toolcell.toml`, overridden by command-line flags.
//!
//! ```toml
//! [model]
//! provider = "ollama"                    # ollama | openai (any OpenAI-compatible server)
//! base_url = "http://127.0.0.1:11434"    # openai: up to and including /v1
//! name = "qwen3:8b"
//! num_ctx = 16384                        # always sent: Ollama's default (4096) drops tools silently
//! temperature = 0.2
//! think = true                           # or "low" | "medium" | "high"; unset: the model's default
//! api_key_env = "OPENAI_API_KEY"         # the key is read from this variable, never from the file
//! idle_timeout_ms = 300000
//! max_retries = 3
//! tool_format = "auto"                   # ask the server (once); "native" | "text" to decide yourself
//! ```
//!
//! Each request also carries a generation cap (Ollama `num_predict`, OpenAI
//! `max_tokens`) from what the prompt leaves of `num_ctx`: see
//! [`ModelSettings::reply_tokens`].

use crate::util::problem::{Problem, Table};
use serde::Deserialize;
use std::time::Duration;

/// The wire protocol of the model server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Ollama's native `/api/chat`.
    Ollama,
    /// `/v1/chat/completions` (llama-server, vLLM, LM Studio, DeepSeek, OpenAI).
    OpenAi,
}

impl ProviderKind {
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Ollama => "http://127.0.0.1:11434",
            ProviderKind::OpenAi => "http://127.0.0.1:8080/v1",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ollama" => Some(ProviderKind::Ollama),
            "openai" => Some(ProviderKind::OpenAi),
            _ => None,
        }
    }
}

/// How tools are offered to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolFormat {
    /// Native tool calling unless the server says the model lacks it (asked
    /// once per model and remembered); switched to `Text` by itself when
    /// the server refuses tools.
    #[default]
    Auto,
    /// The server's native tool calling, without asking first; still
    /// switched to `Text` when the server refuses tools.
    Native,
    /// The Hermes text format: tools in the system prompt, calls as
    /// `<tool_call>` blocks in the text.
    Text,
}

/// Whether the model should think before answering.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Think {
    On(bool),
    /// `low`, `medium` or `high`, for models that take a level.
    Level(String),
}

/// Ollama's default context on most machines; too small for tools, which is
/// why toolcell always sends its own.
pub const DEFAULT_NUM_CTX: u32 = 8192;
/// The smallest context worth running an agent in: the system prompt and
/// eight tool schemas take about 1,500 tokens.
pub const MIN_NUM_CTX: u32 = 2048;
/// The most tokens one reply may generate: an agent's turn is a few tool
/// calls or an answer, and 16k tokens is a 64 KB file written in one call;
/// a model that goes on longer is looping. It sets
/// [`super::stream::MAX_REPLY_BYTES`] too.
pub const MAX_REPLY_TOKENS: u32 = 16_384;
/// The fewest tokens a reply is allowed, even when the prompt (by the
/// estimate) fills the context: room for a tool call or a short answer.
pub const MIN_REPLY_TOKENS: u32 = 512;
/// A model loading into memory can take minutes before its first byte.
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 300_000;
/// Retries of one model request on connection errors, 429 and 5xx.
pub const DEFAULT_MAX_RETRIES: u32 = 3;

/// The resolved model settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSettings {
    pub provider: ProviderKind,
    pub base_url: String,
    /// The model; required to chat.
    pub name: Option<String>,
    pub num_ctx: u32,
    pub temperature: Option<f64>,
    pub think: Option<Think>,
    /// The environment variable holding the API key, if the server needs one.
    pub api_key_env: Option<String>,
    pub idle_timeout: Duration,
    pub max_retries: u32,
    pub tool_format: ToolFormat,
}

impl Default for ModelSettings {
    fn default() -> Self {
        Self {
            provider: ProviderKind::Ollama,
            base_url: ProviderKind::Ollama.default_base_url().into(),
            name: None,
            num_ctx: DEFAULT_NUM_CTX,
            temperature: None,
            think: None,
            api_key_env: None,
            idle_timeout: Duration::from_millis(DEFAULT_IDLE_TIMEOUT_MS),
            max_retries: DEFAULT_MAX_RETRIES,
            tool_format: ToolFormat::Auto,
        }
    }
}

/// `[model]` as written in the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawModelSettings {
    provider: Option<ProviderKind>,
    base_url: Option<String>,
    name: Option<String>,
    num_ctx: Option<u32>,
    temperature: Option<f64>,
    think: Option<Think>,
    api_key_env: Option<String>,
    idle_timeout_ms: Option<u64>,
    max_retries: Option<u32>,
    tool_format: Option<ToolFormat>,
}

/// A model setting that cannot be used: which key, what is wrong, the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSetting {
    pub key: &'static str,
    pub message: String,
    pub fix: String,
}

impl std::fmt::Display for BadSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n  fix: {}", self.message, self.fix)
    }
}

impl RawModelSettings {
    /// `over`'s keys over `base`'s (a profile over `[model]`).
    pub fn overlay(base: Option<&Self>, over: Option<Self>) -> Self {
        let base = base.cloned().unwrap_or_default();
        let Some(over) = over else { return base };
        // Another provider without an address of its own gets its default
        // address, not the other server's (as `--provider` does).
        let other_server = over.provider.is_some() && over.provider != base.provider;
        Self {
            provider: over.provider.or(base.provider),
            base_url: over
                .base_url
                .or(if other_server { None } else { base.base_url }),
            name: over.name.or(base.name),
            num_ctx: over.num_ctx.or(base.num_ctx),
            temperature: over.temperature.or(base.temperature),
            think: over.think.or(base.think),
            api_key_env: over.api_key_env.or(base.api_key_env),
            idle_timeout_ms: over.idle_timeout_ms.or(base.idle_timeout_ms),
            max_retries: over.max_retries.or(base.max_retries),
            tool_format: over.tool_format.or(base.tool_format),
        }
    }
}

impl ModelSettings {
    /// Validates `raw`; `at` is its table, for problems at its keys.
    pub fn from_raw(raw: RawModelSettings, at: &Table) -> Result<Self, Problem> {
        let provider = raw.provider.unwrap_or(ProviderKind::Ollama);
        let settings = Self {
            provider,
            base_url: raw
                .base_url
                .unwrap_or_else(|| provider.default_base_url().into()),
            name: raw.name,
            num_ctx: raw.num_ctx.unwrap_or(DEFAULT_NUM_CTX),
            temperature: raw.temperature,
            think: raw.think,
            api_key_env: raw.api_key_env,
            idle_timeout: Duration::from_millis(
                raw.idle_timeout_ms.unwrap_or(DEFAULT_IDLE_TIMEOUT_MS),
            ),
            max_retries: raw.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            tool_format: raw.tool_format.unwrap_or_default(),
        };
        settings
            .check()
            .map_err(|bad| at.problem(Some(bad.key), bad.message, bad.fix))?;
        Ok(settings)
    }

    /// Checks values that flags may also have set.
    pub fn check(&self) -> Result<(), BadSetting> {
        let bad = |key, message: String, fix: &str| {
            Err(BadSetting {
                key,
                message,
                fix: fix.to_string(),
            })
        };
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            let fix = format!("for example \"{}\"", self.provider.default_base_url());
            return bad(
                "base_url",
                format!("model.base_url `{}` is not an http(s) URL", self.base_url),
                &fix,
            );
        }
        if self.num_ctx < MIN_NUM_CTX {
            return bad(
                "num_ctx",
                format!("model.num_ctx = {} is too small for tools", self.num_ctx),
                &format!("use at least {MIN_NUM_CTX}"),
            );
        }
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return bad(
                "temperature",
                format!("model.temperature = {t} is out of range"),
                "use a value from 0 to 2",
            );
        }
        if let Some(Think::Level(level)) = &self.think
            && !matches!(level.as_str(), "low" | "medium" | "high")
        {
            return bad(
                "think",
                format!("model.think = \"{level}\" is not a level"),
                "use true, false, \"low\", \"medium\" or \"high\"",
            );
        }
        if self.idle_timeout.is_zero() {
            return bad(
                "idle_timeout_ms",
                "model.idle_timeout_ms must be above 0".into(),
                "give the milliseconds a reply may pause, such as 120000",
            );
        }
        if let Some(name) = &self.api_key_env
            && !crate::util::names::is_env_name(name)
        {
            return bad(
                "api_key_env",
                format!("model.api_key_env `{name}` is not an environment variable name"),
                "for example \"OPENAI_API_KEY\"",
            );
        }
        Ok(())
    }

    /// The model name, or an error saying how to set one.
    pub fn model_name(&self) -> Result<&str, String> {
        self.name.as_deref().ok_or_else(|| {
            "no model is set\n  fix: pass --model NAME, or set `name` under [model] in toolcell.toml"
                .to_string()
        })
    }

    /// The generation cap sent with a request (Ollama `options.num_predict`,
    /// OpenAI-compatible `max_tokens`) for a prompt of about `prompt_tokens`:
    /// what is left of `num_ctx` after the prompt, but at least
    /// [`MIN_REPLY_TOKENS`] and at most [`MAX_REPLY_TOKENS`].
    ///
    /// `num_ctx` is the context size: the configured one, lowered to the
    /// model's own when its server says (`agent::fit`). When neither says
    /// (an OpenAI-compatible server that does not report it, no `num_ctx`
    /// in the config), it is [`DEFAULT_NUM_CTX`], so the cap is then what
    /// that default context leaves.
    pub fn reply_tokens(&self, prompt_tokens: usize) -> u32 {
        let left = (self.num_ctx as usize).saturating_sub(prompt_tokens);
        u32::try_from(left)
            .unwrap_or(u32::MAX)
            .clamp(MIN_REPLY_TOKENS, MAX_REPLY_TOKENS)
    }

    /// `base_url` joined with `path`, without doubled slashes.
    pub fn endpoint(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reply_cap_is_what_the_prompt_leaves_within_bounds() {
        let settings = ModelSettings::default();
        assert_eq!(settings.reply_tokens(2000), DEFAULT_NUM_CTX - 2000);
        assert_eq!(settings.reply_tokens(9000), MIN_REPLY_TOKENS);
        let large = ModelSettings {
            num_ctx: 131_072,
            ..ModelSettings::default()
        };
        assert_eq!(large.reply_tokens(100), MAX_REPLY_TOKENS);
    }
}
