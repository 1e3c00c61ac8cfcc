//! External MCP tools in the registry: each listed tool becomes a
//! [`ToolManifest`] named `server__tool`, with the server's JSON Schema
//! (so arguments are validated before the server sees them), the server's
//! call timeout as its limit, and `ask` as its default approval unless the
//! server's config says `approval = "auto"`.
//!
//! Names and descriptions come from the server, a stranger: problems show
//! names through [`shown_name`] (one line, cut, with the full length said),
//! and a description is kept to [`MAX_DESCRIPTION_CHARS`].

use super::client::Started;
use crate::config::mcp_server::{McpServerConfig, ServerApproval};
use crate::registry::{McpTool, Registry, ToolProblem, shown_name};
use crate::tool::limits::{self, Limits};
use crate::tool::manifest::{Capabilities, ManifestApproval, ToolManifest};
use crate::util::names::{MAX_FUNCTION_NAME_LEN, function_name};
use serde_json::Value;

/// The longest description kept: it tells a model when to use the tool (the
/// reference servers' longest is ~600 characters), and every request
/// carries it.
pub const MAX_DESCRIPTION_CHARS: usize = 2048;
/// How much of a server's error about a tool a problem shows (a schema
/// error may quote the whole schema).
const SHOWN_ERROR_CHARS: usize = 300;

/// Adds the tools each started server listed to `registry`; returns a
/// problem for each server that did not start or tool that cannot be offered.
pub fn register(registry: &mut Registry, started: &[Started]) -> Vec<ToolProblem> {
    let mut problems = Vec::new();
    for Started { server, tools } in started {
        let location = format!("MCP server `{}` ({})", server.name, server.at);
        let tools = match tools {
            Ok(tools) => tools,
            Err(error) => {
                problems.push(ToolProblem {
                    location,
                    message: format!(
                        "did not start, so its tools are not available in this run: {error}"
                    ),
                });
                continue;
            }
        };
        for tool in tools {
            let name = function_name(&server.name, &tool.name);
            let problem = if name.len() > MAX_FUNCTION_NAME_LEN {
                let fix = if tool.name.chars().count() + 3 > MAX_FUNCTION_NAME_LEN {
                    "the server names it too long for any model; ask its authors for a shorter name, or disable that server"
                } else {
                    "give the server a shorter `name`"
                };
                Some(format!(
                    "its tool {} would be named {}, over the {MAX_FUNCTION_NAME_LEN} bytes models accept; it is left out\n  fix: {fix}",
                    shown_name(&tool.name),
                    shown_name(&name),
                ))
            } else if registry.get(&name).is_some() {
                Some(format!(
                    "two of its tools are both named `{name}` once made into function names; {} is left out",
                    shown_name(&tool.name)
                ))
            } else {
                None
            };
            if let Some(message) = problem {
                problems.push(ToolProblem {
                    location: location.clone(),
                    message,
                });
                continue;
            }
            match manifest_for(server, &name, tool) {
                Ok(manifest) => registry.insert_mcp(
                    manifest,
                    McpTool {
                        server: server.name.clone(),
                        tool: tool.name.to_string(),
                    },
                ),
                Err(message) => problems.push(ToolProblem {
                    location: location.clone(),
                    message: format!(
                        "its tool {} is left out: {}",
                        shown_name(&tool.name),
                        crate::util::text::shorten(
                            &crate::util::text::for_terminal_line(&message),
                            SHOWN_ERROR_CHARS
                        )
                    ),
                }),
            }
        }
    }
    problems
}

/// The server's description of `tool` (or its title), cut to
/// [`MAX_DESCRIPTION_CHARS`]. Its characters stay as they are: what reaches
/// a terminal is escaped there ([`crate::util::text::for_terminal`]).
fn description_of(tool: &rmcp::model::Tool) -> String {
    let given = tool
        .description
        .as_deref()
        .or(tool.title.as_deref())
        .unwrap_or("");
    crate::util::text::shorten(given.trim(), MAX_DESCRIPTION_CHARS)
}

/// The manifest of one external tool.
fn manifest_for(
    server: &McpServerConfig,
    name: &str,
    tool: &rmcp::model::Tool,
) -> Result<ToolManifest, String> {
    let parameters = Value::Object((*tool.input_schema).clone());
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err("its input schema does not describe an object".into());
    }
    jsonschema::validator_for(&parameters)
        .map_err(|e| format!("its input schema is not a usable JSON Schema: {e}"))?;
    let read_only = tool
        .annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false);
    let description = description_of(tool);
    let timeout_ms = u64::try_from(server.call_timeout.as_millis()).unwrap_or(u64::MAX);
    Ok(ToolManifest {
        name: name.to_string(),
        version: "mcp".into(),
        description: if description.is_empty() {
            format!("`{}` of the MCP server `{}`", tool.name, server.name)
        } else {
            description
        },
        // The server's hint is its own claim; it only marks the tool as
        // read-only for listings and retries, never skips approval.
        mutates: !read_only,
        approval: match server.approval {
            ServerApproval::Ask => ManifestApproval::Ask,
            ServerApproval::Auto => ManifestApproval::Auto,
        },
        opt_in: false,
        parameters: parameters.into(),
        capabilities: Capabilities::default(),
        limits: Limits {
            timeout_ms: timeout_ms.clamp(
                *limits::TIMEOUT_MS_RANGE.start(),
                *limits::TIMEOUT_MS_RANGE.end(),
            ),
            memory_mb: limits::DEFAULT_MEMORY_MB,
            max_output_bytes: limits::DEFAULT_OUTPUT_BYTES,
        },
    })
}
