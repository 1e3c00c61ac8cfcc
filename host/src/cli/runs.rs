//! `toolcell runs list | show ID | export ID`: the recorded runs.

use super::{EXIT_OK, load_workspace, print_out};
use crate::store::{RunDetail, RunSummary, Store};
use crate::util::text::local_time as when;
use anyhow::{Result, bail};
use clap::Subcommand;

/// Runs listed when no `--limit` is given.
const DEFAULT_LIST_LIMIT: usize = 20;

#[derive(Debug, Subcommand)]
// clap builds a subcommand's flags only when it is the one run: a
// process's start-up pays for its own command alone.
#[command(defer = true)]
pub enum RunsCommand {
    /// The latest runs, newest first.
    List {
        /// How many.
        #[arg(long, default_value_t = DEFAULT_LIST_LIMIT)]
        limit: usize,
        /// Only runs with this status (running, succeeded, incomplete, failed, cancelled,
        /// interrupted, timed-out, skipped).
        #[arg(long)]
        status: Option<String>,
        /// Only runs of this schedule.
        #[arg(long, value_name = "NAME")]
        schedule: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// One run: its messages and tool calls.
    Show {
        id: i64,
        #[arg(long)]
        json: bool,
    },
    /// One run as JSON lines: the run, then each message and tool call.
    Export { id: i64 },
}

pub fn run(config: &super::Chosen, command: RunsCommand) -> Result<i32> {
    let (config, _) = load_workspace(config)?;
    let store = Store::for_workspace(&config)?;
    match command {
        RunsCommand::List {
            limit,
            status,
            schedule,
            json,
        } => {
            let runs = store.list_runs(limit, status.as_deref(), schedule.as_deref())?;
            if json {
                print_out(&serde_json::to_string_pretty(&runs)?)?;
            } else if runs.is_empty() {
                print_out("no runs recorded yet")?;
            } else {
                for run in &runs {
                    print_out(&summary_line(run))?;
                }
            }
        }
        RunsCommand::Show { id, json } => {
            let detail = find(&store, id)?;
            if json {
                print_out(&serde_json::to_string_pretty(&detail)?)?;
            } else {
                print_out(&render(&detail))?;
            }
        }
        RunsCommand::Export { id } => {
            let detail = find(&store, id)?;
            let mut summary = serde_json::to_value(&detail.summary)?;
            summary["type"] = "run".into();
            print_out(&summary.to_string())?;
            for message in &detail.messages {
                let mut line = serde_json::to_value(message)?;
                line["type"] = "message".into();
                print_out(&line.to_string())?;
            }
            for call in &detail.tool_calls {
                let mut line = serde_json::to_value(call)?;
                line["type"] = "tool_call".into();
                print_out(&line.to_string())?;
            }
        }
    }
    Ok(EXIT_OK)
}

fn find(store: &Store, id: i64) -> Result<RunDetail> {
    match store.run(id)? {
        Some(detail) => Ok(detail),
        None => bail!(
            "there is no run {id} in {}\n  fix: `toolcell runs list` shows the recorded runs",
            store.location()
        ),
    }
}

fn summary_line(run: &RunSummary) -> String {
    let kind = match (&run.schedule, &run.trigger) {
        (Some(schedule), Some(trigger)) => format!("{schedule} ({trigger})"),
        _ => run.kind.clone(),
    };
    let kind = crate::util::text::for_terminal_line(&kind);
    format!(
        "{:>5}  {}  {:<11}  {:<8}  {:>2} calls  {}",
        run.id,
        when(run.started_at),
        run.status,
        kind,
        run.tool_calls,
        crate::util::text::one_line(&run.title, 60)
    )
}

/// A run whole, for `runs show`: every field from the store is on its own
/// line, so each is shown with its line breaks visible (a title or tool
/// name with a `\n` cannot add a row); only the answer is a block.
fn render(detail: &RunDetail) -> String {
    use crate::util::text::for_terminal_line as l;
    let run = &detail.summary;
    let mut text = format!(
        "run {}  {}  {}\nstarted {}{}\nmodel {}\ntask  {}\n",
        run.id,
        l(&run.kind),
        l(&run.status),
        when(run.started_at),
        run.ended_at
            .map(|e| format!(", ended {}", when(e)))
            .unwrap_or_default(),
        l(run.model.as_deref().unwrap_or("-")),
        l(&run.title)
    );
    if let (Some(schedule), Some(trigger)) = (&run.schedule, &run.trigger) {
        text.push_str(&format!(
            "schedule {} ({}{})\n",
            l(schedule),
            l(trigger),
            run.scheduled_at
                .map(|at| format!(", for {}", when(at)))
                .unwrap_or_default()
        ));
    }
    if let Some(file) = &run.instructions {
        text.push_str(&format!("project instructions {}\n", l(file)));
    }
    if let Some(earlier) = run.resumes {
        text.push_str(&format!(
            "continues run {earlier} ({} messages carried from it: history, not run again)\n",
            run.carried
        ));
    }
    if let Some(error) = &run.error {
        text.push_str(&format!("error {}\n", l(error)));
    }
    text.push_str(&format!("\ntool calls ({}):\n", detail.tool_calls.len()));
    for call in &detail.tool_calls {
        text.push_str(&format!(
            "  {:>3}. {} {}  [{}{}] {}\n       → {}\n",
            call.seq,
            l(&call.tool),
            crate::util::text::one_line(&call.arguments, 80),
            l(&call.status),
            match (&call.decision, &call.decided_by) {
                (Some(d), Some(by)) => format!(
                    ", {} by {}{}",
                    l(d),
                    l(by),
                    call.decided_at
                        .map(|at| format!(" at {}", when(at)))
                        .unwrap_or_default()
                ),
                (Some(d), None) => format!(", {}", l(d)),
                (None, Some(by)) => format!(", by {}", l(by)),
                (None, None) => String::new(),
            },
            call.duration_ms
                .map(|d| format!("{d:.1} ms"))
                .unwrap_or_default(),
            crate::util::text::one_line(call.result.as_deref().unwrap_or(""), 100),
        ));
    }
    if !detail.logs.is_empty() {
        text.push_str("\noutput:\n");
        for (level, line) in &detail.logs {
            text.push_str(&format!("  [{}] {}\n", l(level), l(line)));
        }
    }
    if let Some(answer) = &run.answer {
        text.push_str(&format!("\nanswer:\n{answer}\n"));
    }
    text
}
