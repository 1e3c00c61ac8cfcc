//! `[profile.NAME]`: named sets of model and agent settings, chosen with
//! `--profile NAME`. A profile's keys override `[model]`'s and `[agent]`'s
//! one by one; what it leaves out stays as they say. Each profile is
//! checked at load, whole, as `[model]` and `[agent]` are, so a bad one is
//! refused with its line and column before anything runs.
//!
//! ```toml
//! [model]
//! name = "qwen3:8b"
//!
//! [profile.small]
//! model = { name = "qwen3:1.7b", num_ctx = 4096 }
//! agent = { max_rounds = 6 }
//! ```

use crate::config::agent::{AgentConfig, RawAgentConfig};
use crate::llm::ModelSettings;
use crate::llm::settings::RawModelSettings;
use crate::util::problem::{Problem, Table};
use serde::Deserialize;
use toml::Spanned;

/// `[profile.NAME]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    model: Option<Spanned<RawModelSettings>>,
    agent: Option<Spanned<RawAgentConfig>>,
}

/// A profile's settings, whole: `[model]` and `[agent]` with its keys over them.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub model: ModelSettings,
    pub agent: AgentConfig,
}

impl Profile {
    /// Checks `raw` laid over the base tables; `at` makes a table of the
    /// profile's part at a span, for its problems.
    pub fn from_raw<'a>(
        raw: RawProfile,
        base_model: Option<&RawModelSettings>,
        base_agent: Option<&RawAgentConfig>,
        at: impl Fn(std::ops::Range<usize>, &str) -> Table<'a>,
        name: &str,
        whole: std::ops::Range<usize>,
    ) -> Result<Self, Problem> {
        let model_span = raw.model.as_ref().map_or(whole.clone(), Spanned::span);
        let model = RawModelSettings::overlay(base_model, raw.model.map(Spanned::into_inner));
        let model =
            ModelSettings::from_raw(model, &at(model_span, &format!("profile.{name}.model")))?;
        let agent_span = raw.agent.as_ref().map_or(whole, Spanned::span);
        let agent = RawAgentConfig::overlay(base_agent, raw.agent.map(Spanned::into_inner));
        let agent =
            AgentConfig::from_raw(&agent, &at(agent_span, &format!("profile.{name}.agent")))?;
        Ok(Self { model, agent })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::WorkspaceConfig;
    use crate::llm::ProviderKind;

    fn parse(text: &str) -> WorkspaceConfig {
        let dir = tempfile::tempdir().unwrap();
        WorkspaceConfig::parse(&dir.path().join("toolcell.toml"), text).unwrap()
    }

    #[test]
    fn a_profile_overrides_key_by_key_and_another_provider_gets_its_own_address() {
        let mut config = parse(
            "[model]\nname = \"big\"\nbase_url = \"http://127.0.0.1:9/\"\ntemperature = 0.2\n\
             [agent]\nmax_rounds = 7\n\
             [profile.quick]\nmodel = { name = \"small\" }\n\
             [profile.remote.model]\nprovider = \"openai\"\n",
        );
        config.use_profile("quick").unwrap();
        assert_eq!(config.model.name.as_deref(), Some("small"));
        assert_eq!(config.model.base_url, "http://127.0.0.1:9/");
        assert_eq!(config.model.temperature, Some(0.2));
        assert_eq!(config.agent.max_rounds, 7);
        assert_eq!(config.profile.as_deref(), Some("quick"));
        config.use_profile("remote").unwrap();
        assert_eq!(config.model.provider, ProviderKind::OpenAi);
        assert_eq!(
            config.model.base_url,
            ProviderKind::OpenAi.default_base_url()
        );
        assert_eq!(config.model.name.as_deref(), Some("big"));
        let e = config.use_profile("nope").unwrap_err().to_string();
        assert!(e.contains("use one of: quick, remote"), "{e}");
    }
}
