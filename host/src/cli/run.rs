//! `toolcell run FILE.rhai` runs a workflow; `toolcell check FILE.rhai`
//! compiles it and the modules it imports (refusing import cycles) and
//! checks the tools it names, without running it.

use super::interrupts::Interrupts;
use super::{EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, load_workspace, open_dispatcher, print_out};
use crate::approval::StandingApprovals;
use crate::store::{RunKind, Store};
use crate::workflow::launch::Launch;
use crate::workflow::{Failure, Workflow};
use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The workflow script.
    file: PathBuf,
    /// A value for the script's `args` map (repeatable).
    #[arg(long = "arg", value_name = "KEY=VALUE", value_parser = parse_arg)]
    args: Vec<(String, String)>,
    /// Print the result (or the error) as JSON; print() output goes to stderr.
    #[arg(long)]
    json: bool,
    /// Approve every tool call that would ask (trusted workflows only).
    #[arg(long)]
    yes: bool,
    /// Approve calls of TOOL without asking (repeatable).
    #[arg(long = "approve", value_name = "TOOL")]
    approve: Vec<String>,
    /// Park a call nobody granted for up to DURATION ("30m", "2h") for a
    /// person to decide with `toolcell approve` / `toolcell deny`, instead of
    /// asking on the terminal or refusing it.
    #[arg(long, value_name = "DURATION", value_parser = crate::config::schedule::parse_duration)]
    wait_approval: Option<Duration>,
    /// Wall-clock limit in seconds (overrides timeout_s under [workflow]).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout: Option<u64>,
    /// The model for agent(), llm() and llm_json() (overrides [model] name).
    #[arg(long)]
    model: Option<String>,
}

fn parse_arg(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("`{text}` is not KEY=VALUE")),
    }
}

pub fn run(config: &super::Chosen, args: RunArgs) -> Result<i32> {
    let dispatcher = Arc::new(open_dispatcher(config)?);
    let workflow = Workflow::load(&args.file)?;
    let mut limits = dispatcher.config().workflow.limits.clone();
    if let Some(seconds) = args.timeout {
        limits.timeout = Duration::from_secs(seconds);
    }
    let mut model = dispatcher.config().model.clone();
    if let Some(name) = args.model {
        model.name = Some(name);
    }
    let store = Arc::new(Store::for_workspace(dispatcher.config())?);
    let run = store.start_run(RunKind::Workflow, &workflow.display, model.name.as_deref())?;
    let granted = StandingApprovals::interactive(
        args.yes,
        args.approve,
        "--approve {tool} (or --yes) to allow it",
    );
    let approver: Arc<dyn crate::approval::Approver> = match args.wait_approval {
        Some(wait) => Arc::new(crate::approval::inbox::InboxApprover::for_run(
            granted,
            store.clone(),
            run,
            wait,
            dispatcher.config(),
        )),
        None => Arc::new(granted),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let json_output = args.json;
    let (_, result) = runtime.block_on(async {
        let interrupts = Interrupts::start();
        let launch = Launch {
            dispatcher: dispatcher.clone(),
            store: store.clone(),
            run,
            approver,
            model,
            args: args.args.into_iter().collect::<BTreeMap<_, _>>(),
            limits,
            cancel: interrupts.token(),
            output: Box::new(move |level, text| {
                if level == "print" && !json_output {
                    let _ = super::print_out(text);
                } else if level == "print" {
                    // What the script prints is a block of its own.
                    super::print_err_block(text);
                } else {
                    // A log line is one line: what it quotes stays on it.
                    say!("[{level}] {}", crate::util::text::for_terminal_line(text));
                }
            }),
        };
        launch.run(workflow).await
    });
    let code = match &result {
        Ok(_) => EXIT_OK,
        Err(Failure::Cancelled) => EXIT_INTERRUPTED,
        Err(_) => EXIT_ERROR,
    };
    match result {
        Ok(value) if json_output => print_out(&serde_json::to_string_pretty(
            &json!({"ok": true, "result": value, "run": run}),
        )?)?,
        Ok(Value::Null) => {}
        Ok(Value::String(text)) => print_out(&text)?,
        Ok(value) => print_out(&serde_json::to_string_pretty(&value)?)?,
        Err(failure) => {
            if json_output {
                let kind = match &failure {
                    Failure::Script(_) => "script",
                    Failure::Failed(_) => "failed",
                    Failure::TimedOut { .. } => "timeout",
                    Failure::Cancelled => "cancelled",
                };
                print_out(&serde_json::to_string_pretty(
                    &json!({"ok": false, "error": {"kind": kind, "message": failure.to_string()}, "run": run}),
                )?)?;
            } else {
                say!("{failure}");
            }
        }
    }
    Ok(code)
}

/// `toolcell check FILE.rhai`.
pub fn check(config: &super::Chosen, file: PathBuf) -> Result<i32> {
    let (config, registry) = load_workspace(config)?;
    let workflow = Workflow::load(&file)?;
    let engine = workflow.engine(&config.workflow.limits);
    let ast = match workflow
        .compile(&engine)
        .and_then(|ast| workflow.check_imports(&engine, &ast).map(|()| ast))
    {
        Ok(ast) => ast,
        Err(failure) => {
            say!("{failure}");
            return Ok(EXIT_ERROR);
        }
    };
    let calls = workflow.tool_calls(&ast);
    let names = registry.names();
    let unknown: Vec<String> = calls
        .iter()
        .filter(|(name, _, _)| registry.get(name).is_none())
        .map(|(name, line, col)| {
            format!(
                "error: there is no tool named `{}`\n  --> {}:{line}:{col}\n  the tools are: {}",
                crate::util::text::for_terminal_line(name),
                crate::util::text::for_terminal_line(&workflow.display),
                crate::util::text::for_terminal_line(&names.join(", "))
            )
        })
        .collect();
    if !unknown.is_empty() {
        for problem in &unknown {
            say!("{problem}");
        }
        return Ok(EXIT_ERROR);
    }
    let mut used: Vec<&str> = calls.iter().map(|(n, _, _)| n.as_str()).collect();
    used.sort_unstable();
    used.dedup();
    print_out(&format!(
        "ok: {} compiles; {} tool call(s) name existing tools{}",
        workflow.display,
        calls.len(),
        if used.is_empty() {
            String::new()
        } else {
            format!(" ({})", used.join(", "))
        }
    ))?;
    Ok(EXIT_OK)
}
