//! `toolcell rules check TOOL --args JSON`: what would decide a call —
//! a `[[rule]]`, the tool's approval, or toolcell's own policy — and how,
//! without running it.

use super::{EXIT_DENIED, EXIT_ERROR, EXIT_OK, load_workspace, print_out};
use anyhow::Result;
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
// clap builds a subcommand's flags only when it is the one run: a
// process's start-up pays for its own command alone.
#[command(defer = true)]
pub enum RulesCommand {
    /// Say what would decide a call of TOOL with these arguments, and how.
    Check {
        /// The tool's name.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long, value_name = "JSON", conflicts_with = "args_file")]
        args: Option<String>,
        /// Read the arguments from a file (`-` for stdin).
        #[arg(long, value_name = "FILE")]
        args_file: Option<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(config: &super::Chosen, command: RulesCommand) -> Result<i32> {
    let RulesCommand::Check {
        tool,
        args,
        args_file,
        json,
    } = command;
    let args = super::tools::call_arguments(args, args_file)?;
    let (workspace, registry) = load_workspace(config)?;
    // A tool of the workspace is checked without starting any program; only
    // another name may be an MCP server's, found by starting them.
    let dispatcher = if registry.get(&tool).is_some() {
        crate::call::dispatch::Dispatcher::new(workspace, registry, super::sandbox_options())?
    } else {
        super::dispatcher_over(workspace, registry, super::sandbox_options())?
    };
    let (decision, by, reason, code) = match dispatcher.would_decide(&tool, &args) {
        Ok((false, by, _)) => ("auto", by, None, EXIT_OK),
        Ok((true, by, policy)) => {
            let reason = policy.then(|| {
                "it changes toolcell's own policy (toolcell.toml, .toolcell/, a scheduled workflow), which only a person at a terminal approves".to_string()
            });
            ("ask", by, reason, EXIT_OK)
        }
        Err(refused) if refused.error.is_denial() => (
            "deny",
            refused.by.unwrap_or_default(),
            Some(refused.error.to_string()),
            EXIT_DENIED,
        ),
        Err(refused) => (
            "error",
            String::new(),
            Some(refused.error.to_string()),
            EXIT_ERROR,
        ),
    };
    if json {
        let mut answer = json!({"tool": tool, "decision": decision, "decided_by": by});
        if let Some(reason) = &reason {
            answer["reason"] = Value::String(reason.clone());
        }
        print_out(&serde_json::to_string_pretty(&answer)?)?;
        return Ok(code);
    }
    let said = match decision {
        "auto" => format!("`{tool}` would run without asking: {by}"),
        "ask" => format!("`{tool}` would be asked: {by}"),
        "deny" => format!("`{tool}` would be refused: {by}"),
        _ => format!("`{tool}` cannot be called so"),
    };
    let text = match reason {
        Some(reason) => format!("{said}\n  {reason}"),
        None => said,
    };
    print_out(&text)?;
    Ok(code)
}
