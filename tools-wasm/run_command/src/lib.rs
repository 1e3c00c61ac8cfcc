//! `run_command`: run a program the user granted, with an argument list, in
//! a workspace folder, and report how it ended and what it printed.
//!
//! The host does the running (`toolcell:tool/process`): it refuses programs
//! that are not granted and folders outside the roots, scrubs the
//! environment and kills the program at its timeout. This tool shapes the
//! call and trims the output to what a model can use: the start and the end
//! of each stream, where the useful lines of a build or test log are.

use serde::{Deserialize, Serialize};
use toolcell_guest::ToolError;
use toolcell_guest::bindings::toolcell::tool::process::{self, Ending, RunRefusal, RunRequest};

/// How long a program may run unless the call says otherwise.
const DEFAULT_TIMEOUT_S: u32 = 60;
/// Characters of each stream returned: the first and last halves are kept.
const MAX_STREAM_CHARS: usize = 16_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    program: String,
    #[serde(default)]
    args: Vec<String>,
    cwd: Option<String>,
    timeout_s: Option<u32>,
}

#[derive(Serialize)]
struct Ran {
    /// The program and its arguments, exactly as run.
    argv: Vec<String>,
    cwd: String,
    /// None when it was ended by a signal or killed at the timeout.
    exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
    /// Output was cut (by the host's cap or to fit the model's context).
    truncated: bool,
    duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

toolcell_guest::tool!(run);

fn run(args: Args) -> Result<Ran, ToolError> {
    if args.program.trim().is_empty() {
        return Err(ToolError::InvalidArgs("`program` is empty".into()));
    }
    let cwd = args.cwd.unwrap_or_else(|| ".".into());
    let timeout_s = args.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
    let output = process::run(&RunRequest {
        program: args.program.clone(),
        args: args.args.clone(),
        cwd: cwd.clone(),
        timeout_ms: Some(timeout_s.saturating_mul(1000)),
    })
    .map_err(|refusal| match refusal {
        RunRefusal::Denied(why) => ToolError::Denied(why),
        RunRefusal::NotFound(why) => ToolError::NotFound(why),
        RunRefusal::Failed(why) => ToolError::Failed(why),
    })?;
    let (exit_code, signal) = match output.ended {
        Some(Ending::Exited(code)) => (Some(code), None),
        Some(Ending::Killed(signal)) => (None, Some(signal)),
        None => (None, None),
    };
    // When the host already dropped part of the output, the count below is
    // a lower bound: say so.
    let more = if output.truncated { "at least " } else { "" };
    let (stdout, cut_out) = head_and_tail(&output.stdout, MAX_STREAM_CHARS, more);
    let (stderr, cut_err) = head_and_tail(&output.stderr, MAX_STREAM_CHARS, more);
    let note = output.timed_out.then(|| {
        format!(
            "`{}` did not finish within {} ms and was killed; the output is what it printed until then",
            args.program, output.duration_ms
        )
    });
    let mut argv = vec![args.program];
    argv.extend(args.args);
    Ok(Ran {
        argv,
        cwd,
        exit_code,
        signal,
        stdout,
        stderr,
        timed_out: output.timed_out,
        truncated: output.truncated || cut_out || cut_err,
        duration_ms: output.duration_ms,
        note,
    })
}

/// `text` cut to at most `max` characters, keeping its start and its end
/// around a marker that says how much was left out (`more`: "at least ").
fn head_and_tail(text: &str, max: usize, more: &str) -> (String, bool) {
    let total = text.chars().count();
    if total <= max {
        return (text.to_string(), false);
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(total - half).collect();
    let left_out = total - 2 * half;
    (
        format!("{head}\n[… {more}{left_out} characters left out …]\n{tail}"),
        true,
    )
}
