//! Fitting a run to its model. The first time a model is used the host asks
//! its server what the model can do (Ollama's `/api/show`; llama-server's
//! `/props` and the `/v1/models` list) and remembers the answer in the
//! store; every run then adapts before its first request:
//! - a model without native tool calling gets the text format at once,
//!   instead of a refused request first;
//! - the context sent is never larger than the model's (a server given more
//!   silently drops the oldest messages, tools and system prompt first);
//! - thinking is not asked of a model that cannot (Ollama refuses that).
//!
//! What the server refuses later (tools) is remembered too, so the next run
//! starts right.

use crate::llm::dialect::{self, Dialect};
use crate::llm::{self, Capabilities, ChatProvider, LlmError, ModelSettings, Think, ToolFormat};
use crate::store::{KnownBy, Store};

/// The model's provider, fitted to what the model can do.
pub struct Fitted {
    pub provider: Box<dyn ChatProvider>,
    /// Offer the tools in the text format from the start.
    pub text_tools: bool,
    /// The dialect to ask for in the text format: the model's own when its
    /// chat template shows it, Hermes otherwise.
    pub dialect: &'static Dialect,
    /// What was adjusted, for the user.
    pub notices: Vec<String>,
}

/// Connects to `settings`' model and fits `settings` to it, probing the
/// server once per model (the answer is kept in `store`). A probe that
/// fails changes nothing: the run's own first request then reports the
/// problem with its fix.
pub async fn connect_fitted(
    settings: &mut ModelSettings,
    store: Option<&Store>,
) -> Result<Fitted, LlmError> {
    let provider = llm::connect(settings)?;
    let caps = match store {
        Some(store) => capabilities(provider.as_ref(), store).await,
        None => provider.probe().await.unwrap_or_default(),
    };
    let mut notices = Vec::new();
    let before = (settings.num_ctx, settings.think.clone());
    if let Some(length) = caps.context_length
        && length < settings.num_ctx
    {
        notices.push(format!(
            "{} has a context of {length} tokens; using that instead of num_ctx = {}",
            provider.model(),
            settings.num_ctx
        ));
        settings.num_ctx = length;
    }
    if caps.thinking == Some(false)
        && matches!(
            &settings.think,
            Some(Think::Level(_)) | Some(Think::On(true))
        )
    {
        notices.push(format!(
            "{} cannot think; not asking it to (unset `think` under [model])",
            provider.model()
        ));
        settings.think = None;
    }
    let text_tools = match settings.tool_format {
        ToolFormat::Text => true,
        ToolFormat::Native => false,
        ToolFormat::Auto => caps.tools == Some(false),
    };
    if text_tools && settings.tool_format == ToolFormat::Auto {
        notices.push(format!(
            "{} has no native tool calling; using tool calls in the text format",
            provider.model()
        ));
    }
    let dialect = caps
        .dialect
        .and_then(dialect::by_name)
        .unwrap_or(&dialect::HERMES);
    if text_tools && dialect.name != dialect::HERMES.name {
        notices.push(format!(
            "asking {} for tool calls in its own dialect ({}), as its chat template shows",
            provider.model(),
            dialect.name
        ));
    }
    let provider = if (settings.num_ctx, settings.think.clone()) == before {
        provider
    } else {
        llm::connect(settings)?
    };
    Ok(Fitted {
        provider,
        text_tools,
        dialect,
        notices,
    })
}

/// What `store` knows of the provider's model, probing the server the
/// first time.
async fn capabilities(provider: &dyn ChatProvider, store: &Store) -> Capabilities {
    let server = provider.server();
    match store.known_model(&server, provider.model()) {
        Ok(Some(known)) => return known.capabilities(),
        Ok(None) => {}
        Err(e) => tracing::warn!("cannot read what is known of the model: {e:#}"),
    }
    match provider.probe().await {
        Ok(caps) => {
            if let Err(e) = store.remember_model(&server, provider.model(), caps, KnownBy::Probe) {
                tracing::warn!("cannot remember what the model can do: {e:#}");
            }
            caps
        }
        Err(e) => {
            tracing::debug!("probing {} failed: {e}", provider.describe());
            Capabilities::default()
        }
    }
}

/// Remembers that the server refused tools for the provider's model, so
/// later runs start in the text format.
pub fn remember_tools_refused(provider: &dyn ChatProvider, store: &Store) {
    let server = provider.server();
    let known = store
        .known_model(&server, provider.model())
        .ok()
        .flatten()
        .map(|k| k.capabilities())
        .unwrap_or_default();
    let caps = Capabilities {
        tools: Some(false),
        ..known
    };
    if let Err(e) = store.remember_model(&server, provider.model(), caps, KnownBy::Refusal) {
        tracing::warn!("cannot remember that the model has no tools: {e:#}");
    }
}
