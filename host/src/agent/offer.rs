//! Which tools the agent offers the model, turn by turn: with many tools,
//! those relevant to the task (and those used already) plus `more_tools`,
//! through which the model asks for the others; the host answers that call
//! itself.

use super::filter::{self, MAX_MATCHED, MORE_TOOLS};
use super::{Agent, context};
use crate::call::error::ErrorKind;
use crate::call::runner::CallResult;
use crate::call::view::{AgentView, CallStatus};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Instant;

impl Agent<'_> {
    /// Offers the tools relevant to `task`, and those kept from earlier in
    /// the run, and says what that saves.
    pub(super) fn offer_for(&mut self, task: &str, view: &mut dyn AgentView) {
        let Some(index) = &self.filter else { return };
        let matched: Vec<String> = index
            .relevant(task, MAX_MATCHED)
            .into_iter()
            .map(|i| self.available[i].name.clone())
            .collect();
        let mut wanted = self.kept.clone();
        wanted.extend(matched);
        self.set_offered(wanted);
        view.notice(&format!(
            "offering {} of {} tools for this task (about {} instead of {} tokens of tool definitions); the model can ask for others with {MORE_TOOLS}",
            self.tools.len() - 1,
            self.available.len(),
            filter::definition_tokens(&self.tools),
            self.available_tokens,
        ));
    }

    /// Offers `names` too, from the next request on.
    pub(super) fn offer(&mut self, names: impl IntoIterator<Item = String>) {
        if self.filter.is_none() {
            return;
        }
        let mut wanted: BTreeSet<String> = self.tools.iter().map(|t| t.name.clone()).collect();
        wanted.extend(names);
        self.set_offered(wanted);
    }

    /// Offers the tools named in `wanted` (in their registry order) and
    /// `more_tools`.
    fn set_offered(&mut self, wanted: BTreeSet<String>) {
        self.tools = self
            .available
            .iter()
            .filter(|t| wanted.contains(&t.name))
            .cloned()
            .collect();
        self.tools.push(filter::more_tools_spec());
        self.tools_bytes = context::tools_bytes(&self.tools);
        self.refresh_system_prompt();
    }

    /// Answers a call of `more_tools`: the tools not offered yet that match
    /// its query (all of them without one), offered from now on.
    pub(super) fn more_tools(&mut self, args: &Value, started: Instant) -> CallResult {
        let Some(index) = &self.filter else {
            return CallResult::refused(
                format!("there is no tool `{MORE_TOOLS}`: every tool is offered already"),
                ErrorKind::UnknownTool,
                CallStatus::Failed,
                started,
            );
        };
        let offered: BTreeSet<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        let hidden = |i: &usize| !offered.contains(self.available[*i].name.as_str());
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        let mut picked: Vec<usize> = if query.is_empty() {
            Vec::new()
        } else {
            index
                .rank(query)
                .into_iter()
                .map(|(i, _)| i)
                .filter(hidden)
                .take(MAX_MATCHED)
                .collect()
        };
        if picked.is_empty() {
            picked = (0..self.available.len()).filter(hidden).collect();
        }
        let found: Vec<Value> = picked
            .iter()
            .map(|&i| json!({"name": self.available[i].name, "description": self.available[i].description}))
            .collect();
        let names: Vec<String> = picked
            .iter()
            .map(|&i| self.available[i].name.clone())
            .collect();
        self.kept.extend(names.iter().cloned());
        self.offer(names);
        CallResult::answered_by_host(
            json!({
                "offered_now": found,
                "note": if found.is_empty() { "every tool is offered already" } else { "these tools can be called from now on" },
            }),
            started,
        )
    }
}
