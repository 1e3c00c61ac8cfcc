//! Which of the workspace's tools a model (or an MCP client) is offered:
//! the same list for the agent, `agent()` in a workflow and `toolcell mcp`.

use crate::call::dispatch::Dispatcher;
use crate::llm::ToolSpec;
use crate::registry::grant::ApprovalMode;

/// The tools to offer a model or a client: every registered tool that is enabled, not denied
/// and able to reach what it is for, with its schema.
pub fn offered_tools(dispatcher: &Dispatcher) -> Vec<ToolSpec> {
    let registry = dispatcher.registry();
    registry
        .names()
        .into_iter()
        .filter_map(|name| {
            let entry = registry.get(name)?;
            // A grant that did not resolve is a problem shown when the
            // dispatcher started (`Dispatcher::grant_problems`).
            let grant = dispatcher.grant(name)?.as_ref().ok()?;
            // A tool for any host or program the user grants (`web_fetch`,
            // `run_command`) reaches nothing until they grant one: offering
            // it would only invite calls that fail. A tool for programs
            // asks for hosts too (its programs'): the programs decide.
            let any = |asked: &[String]| asked.iter().any(|a| a == "*");
            let caps = &entry.manifest.capabilities;
            let unreachable = if any(&caps.process) {
                grant.process.is_empty()
            } else {
                any(&caps.network) && grant.network.is_empty()
            };
            (grant.enabled && grant.approval != ApprovalMode::Deny && !unreachable).then(|| {
                ToolSpec {
                    name: name.to_string(),
                    description: entry.manifest.description.clone(),
                    parameters: entry.manifest.parameters.value().clone(),
                }
            })
        })
        .collect()
}
