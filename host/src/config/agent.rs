//! `[agent]`: how the agent loop works, and its defaults.
//!
//! ```toml
//! [agent]
//! max_rounds = 10          # model requests per task
//! filter_tools_above = 12  # with more tools, offer each task the relevant ones
//! ```

use crate::util::problem::{Problem, Table};
use serde::Deserialize;

/// Model requests per task when nothing else is set: enough for a
/// read-think-edit-check cycle over a few files, small enough that a model
/// stuck in a loop stops soon.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;

/// Offer every tool up to this many: the built-in file tools and a few
/// more fit any context of 8k tokens and up.
pub const DEFAULT_FILTER_TOOLS_ABOVE: usize = 12;

/// `[agent]`: how the agent loop works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// Model requests per task.
    pub max_rounds: u32,
    /// With more tools than this, each task is offered only the relevant
    /// ones (see [`crate::agent::filter`]).
    pub filter_tools_above: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_rounds: DEFAULT_MAX_ROUNDS,
            filter_tools_above: DEFAULT_FILTER_TOOLS_ABOVE,
        }
    }
}

/// The largest round budget accepted: beyond it a looping model costs more
/// than any task is worth.
pub const MAX_ROUNDS_LIMIT: u32 = 200;

#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgentConfig {
    max_rounds: Option<u32>,
    filter_tools_above: Option<u32>,
}

impl RawAgentConfig {
    /// `over`'s keys over `base`'s (a profile over `[agent]`).
    pub fn overlay(base: Option<&Self>, over: Option<Self>) -> Self {
        let base = base.cloned().unwrap_or_default();
        let Some(over) = over else { return base };
        Self {
            max_rounds: over.max_rounds.or(base.max_rounds),
            filter_tools_above: over.filter_tools_above.or(base.filter_tools_above),
        }
    }
}

impl AgentConfig {
    /// Checks `raw`; `at` says where it is for errors.
    pub fn from_raw(raw: &RawAgentConfig, at: &Table) -> Result<Self, Problem> {
        let mut agent = AgentConfig::default();
        if let Some(rounds) = raw.max_rounds {
            if !(1..=MAX_ROUNDS_LIMIT).contains(&rounds) {
                return Err(at.problem(
                    Some("max_rounds"),
                    format!("agent.max_rounds = {rounds} is out of range"),
                    format!("use a value from 1 to {MAX_ROUNDS_LIMIT}"),
                ));
            }
            agent.max_rounds = rounds;
        }
        if let Some(above) = raw.filter_tools_above {
            agent.filter_tools_above = above as usize;
        }
        Ok(agent)
    }
}
