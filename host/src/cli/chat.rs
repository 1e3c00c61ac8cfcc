//! `toolcell chat "TASK"` (one task, then exit) and `toolcell chat` (an
//! interactive conversation): a model works on the workspace with its tools.

use super::events::JsonEvents;
use super::interrupts::Interrupts;
use super::view::TerminalView;
use super::{EXIT_ERROR, EXIT_INCOMPLETE, EXIT_INTERRUPTED, EXIT_OK, open_dispatcher};
use crate::agent::answer_schema::AnswerSchema;
use crate::agent::{Agent, AgentSettings, Outcome, fit, resume};
use crate::approval::inbox::InboxApprover;
use crate::approval::{Approver, StandingApprovals};
use crate::call::runner::Recording;
use crate::call::view::AgentView;
use crate::config::agent::MAX_ROUNDS_LIMIT;
use crate::llm::ProviderKind;
use crate::store::{RunKind, RunStatus, Store};
use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The task. Without it, an interactive conversation (one task per line;
    /// an empty line or end of input ends it).
    prompt: Option<String>,
    /// The model (overrides `name` under [model]).
    #[arg(long, short)]
    model: Option<String>,
    /// The server's protocol: `ollama` or `openai` (any OpenAI-compatible server).
    #[arg(long, value_parser = parse_provider)]
    provider: Option<ProviderKind>,
    /// The server's address (for `openai`, up to and including `/v1`).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The model's context size in tokens.
    #[arg(long, value_name = "TOKENS")]
    num_ctx: Option<u32>,
    /// Model requests per task before the run stops without an answer.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_ROUNDS_LIMIT as i64))]
    max_rounds: Option<u32>,
    /// Approve every call that would ask (trusted runs only).
    #[arg(long)]
    yes: bool,
    /// Approve calls of TOOL without asking (repeatable).
    #[arg(long = "approve", value_name = "TOOL")]
    approve: Vec<String>,
    /// Hide the model's thinking instead of showing it dimmed.
    #[arg(long)]
    hide_thinking: bool,
    /// Print every event as one JSON object per line on stdout (docs/chat-json.md).
    #[arg(long)]
    json: bool,
    /// Park calls nobody granted for up to DURATION for a person to decide with
    /// `toolcell approve` / `toolcell deny` (or the page), instead of asking on the terminal.
    #[arg(long, value_name = "DURATION", value_parser = crate::config::schedule::parse_duration)]
    wait_approval: Option<std::time::Duration>,
    /// Go on with run RUN's conversation in a new run linked to it: the
    /// model reads what was said and done (within its context); no call of
    /// RUN is run again.
    #[arg(long, value_name = "RUN")]
    resume: Option<i64>,
    /// Leave the workspace's TOOLCELL.md / AGENTS.md out of the prompt.
    #[arg(long)]
    no_project_instructions: bool,
    /// The final answer must be JSON that fits the JSON Schema in FILE; an
    /// answer that does not goes back to the model (within --max-rounds).
    #[arg(long, value_name = "FILE")]
    output_schema: Option<PathBuf>,
}

/// The largest schema file read: schemas are a few kilobytes; anything
/// near this is not one.
const MAX_SCHEMA_BYTES: u64 = 1024 * 1024;

/// The schema in `file`, checked before anything else happens.
fn read_schema(file: &Path) -> Result<AnswerSchema> {
    use std::io::Read;
    let shown = file.display();
    let mut text = String::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_SCHEMA_BYTES + 1).read_to_string(&mut text))
        .with_context(|| format!("cannot read the output schema {shown}"))?;
    if text.len() as u64 > MAX_SCHEMA_BYTES {
        bail!(
            "the output schema {shown} is over {} MiB\n  fix: give a JSON Schema file",
            MAX_SCHEMA_BYTES / 1024 / 1024
        );
    }
    let schema: Value = serde_json::from_str(&text).map_err(|e| {
        anyhow!(
            "the output schema {shown}:{}:{} is not JSON: {e}\n  fix: correct the file",
            e.line(),
            e.column()
        )
    })?;
    AnswerSchema::new(schema).map_err(|e| {
        anyhow!(
            "the output schema {shown}: {e}\n  fix: correct the schema (https://json-schema.org)"
        )
    })
}

fn parse_provider(text: &str) -> Result<ProviderKind, String> {
    ProviderKind::parse(text)
        .ok_or_else(|| format!("`{text}` is not a provider: use `ollama` or `openai`"))
}

/// How a run ended: its status, the exit code, the answer and the error.
type RunEnd = (RunStatus, i32, Option<String>, Option<String>);

pub fn run(config: &super::Chosen, args: ChatArgs) -> Result<i32> {
    let dispatcher = open_dispatcher(config)?;
    let mut model = dispatcher.config().model.clone();
    if let Some(provider) = args.provider {
        if args.base_url.is_none() && provider != model.provider {
            model.base_url = provider.default_base_url().into();
        }
        model.provider = provider;
    }
    if let Some(url) = args.base_url {
        model.base_url = url;
    }
    if let Some(name) = args.model {
        model.name = Some(name);
    }
    if let Some(num_ctx) = args.num_ctx {
        model.num_ctx = num_ctx;
    }
    model.check().map_err(|e| anyhow!("{e}"))?;
    let schema = args.output_schema.as_deref().map(read_schema).transpose()?;
    let answers_json = schema.is_some();
    let store = Store::for_workspace(dispatcher.config())?;
    // Refused before the model server is asked anything.
    let earlier = match args.resume {
        Some(run) => Some((
            run,
            resume::history(
                store
                    .conversation(run)
                    .with_context(|| format!("cannot continue run {run}"))?,
                run,
            ),
        )),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let events = args.json.then(JsonEvents::default);
    let mut view: Box<dyn AgentView> = match &events {
        Some(events) => Box::new(events.clone()),
        None => Box::new(TerminalView::new(!args.hide_thinking)),
    };
    let fitted = runtime
        .block_on(fit::connect_fitted(&mut model, Some(&store)))
        .map_err(|e| anyhow!("{e}"))?;
    for notice in &fitted.notices {
        view.notice(notice);
    }
    let provider = fitted.provider;
    let settings = AgentSettings {
        max_rounds: args
            .max_rounds
            .unwrap_or(dispatcher.config().agent.max_rounds),
        num_ctx: model.num_ctx,
        max_retries: model.max_retries,
        filter_tools_above: dispatcher.config().agent.filter_tools_above,
    };
    let title = match (&args.prompt, &earlier) {
        (Some(task), _) => task.clone(),
        (None, Some((from, _))) => format!("interactive chat, continuing run {from}"),
        (None, None) => "interactive chat".into(),
    };
    let run = store.start_run(RunKind::Chat, &title, Some(provider.model()))?;
    if let Some((from, history)) = &earlier {
        store.link_resumed(run, *from, history.len())?;
    }
    if let Some(events) = &events {
        events.started(run, provider.model(), &title, earlier.as_ref().map(|e| e.0));
    }
    let granted = StandingApprovals::interactive(
        args.yes,
        args.approve,
        "--approve {tool} (or --yes) to allow it",
    );
    let store = std::sync::Arc::new(store);
    let approver: Box<dyn Approver> = match args.wait_approval {
        Some(wait) => Box::new(InboxApprover::for_run(
            granted,
            store.clone(),
            run,
            wait,
            dispatcher.config(),
        )),
        None => Box::new(granted),
    };
    let (status, code, answer, error) = runtime.block_on(async {
        let interrupts = Interrupts::start();
        let mut agent = Agent::new(
            &dispatcher,
            provider.as_ref(),
            approver.as_ref(),
            Some(Recording { store: &store, run }),
            settings,
        );
        agent.ask_in_dialect(fitted.dialect);
        if fitted.text_tools {
            agent.use_text_tools();
        }
        if args.no_project_instructions {
            agent.without_project_instructions();
        }
        if let Some(schema) = schema {
            agent.answer_must_fit(schema);
        }
        if let Some((_, history)) = earlier {
            agent.carry(history);
        }
        match &args.prompt {
            Some(task) => {
                let outcome = agent.ask(task, view.as_mut(), &interrupts.token()).await;
                settle(outcome, agent.answer_misfit(), view.as_mut())
            }
            None => interactive(&mut agent, view.as_mut(), &interrupts).await,
        }
    });
    let recorded = store
        .finish_run(run, status, answer.as_deref(), error.as_deref())
        .context("cannot record the end of the run");
    // The stream ends with the run, recorded or not.
    if let Some(events) = &events {
        // With a schema, the answer is the JSON it fits.
        let answer = answer.as_deref().map(|text| match answers_json {
            true => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into())),
            false => Value::String(text.into()),
        });
        events.ended(run, status.as_str(), answer, error.as_deref());
    }
    recorded?;
    say!("toolcell: run {run} is recorded: toolcell runs show {run}");
    Ok(code)
}

/// The run's status, exit code, answer and error for `outcome`, after
/// saying what happened; `misfit` is why the model's last answer did not
/// fit `--output-schema`, if one did not.
fn settle(outcome: Outcome, misfit: Option<&str>, view: &mut dyn AgentView) -> RunEnd {
    match outcome {
        Outcome::Answered(answer) => (RunStatus::Succeeded, EXIT_OK, Some(answer), None),
        Outcome::BudgetExhausted { rounds } => {
            let message = match misfit {
                Some(misfit) => format!(
                    "stopped: the model used all {rounds} rounds of its budget without an answer that fits --output-schema (the last: {misfit}); raise --max-rounds, or simplify the schema"
                ),
                None => format!(
                    "stopped: the model used all {rounds} rounds of its budget without giving a final answer; raise --max-rounds (or max_rounds under [agent]) or make the task smaller"
                ),
            };
            view.notice(&message);
            (RunStatus::Incomplete, EXIT_INCOMPLETE, None, Some(message))
        }
        Outcome::Cancelled => {
            view.notice("stopped by the user");
            (
                RunStatus::Cancelled,
                EXIT_INTERRUPTED,
                None,
                Some("stopped by the user".into()),
            )
        }
        Outcome::Failed(error) => {
            let message = error.to_string();
            say!("error: {message}");
            if let Some(hint) = error.hint() {
                say!("  fix: {hint}");
            }
            (RunStatus::Failed, EXIT_ERROR, None, Some(message))
        }
    }
}

/// One task per line from stdin until an empty line or the end of input.
async fn interactive(
    agent: &mut Agent<'_>,
    view: &mut dyn AgentView,
    interrupts: &Interrupts,
) -> RunEnd {
    let mut last = (RunStatus::Succeeded, EXIT_OK, None, None);
    loop {
        let token = interrupts.renew();
        let line = tokio::select! {
            line = tokio::task::spawn_blocking(|| {
                let mut err = std::io::stderr();
                let _ = write!(err, "\nyou> ");
                let _ = err.flush();
                let mut line = String::new();
                std::io::stdin().lock().read_line(&mut line).map(|n| (n > 0).then_some(line))
            }) => line,
            () = token.cancelled() => return last,
        };
        let task = match line {
            Ok(Ok(Some(line))) if !line.trim().is_empty() => line.trim().to_string(),
            _ => return last,
        };
        let outcome = agent.ask(&task, view, &token).await;
        last = settle(outcome, agent.answer_misfit(), view);
        if last.0 == RunStatus::Failed {
            return last;
        }
    }
}
