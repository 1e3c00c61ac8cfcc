//! The command line: flags parsed by clap, one file per subcommand.
//!
//! Exit codes (also in the README):
//! - 0: success;
//! - 1: toolcell could not do what was asked (bad config, bad manifest,
//!   install failure, I/O error);
//! - 2: the command line is wrong;
//! - 3: a tool ran (or was about to) and failed: invalid arguments, the
//!   tool's own error, a timeout, a trap, a limit;
//! - 4: a tool call was refused: denied by policy or by the user, or the
//!   tool is disabled;
//! - 5: an agent run ended without an answer (its round budget ran out);
//! - 130: the user stopped the run (Ctrl-C).

/// `eprintln!` for what toolcell says on stderr: the whole message goes
/// through [`crate::util::text::for_terminal`], so text from outside inside it (a
/// model server's error, a tool's name, a path) cannot drive the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::print_err(&format!($($arg)*), true)
    };
}

/// `eprint!` likewise: a prompt, with no line end.
macro_rules! say_inline {
    ($($arg:tt)*) => {
        $crate::cli::print_err(&format!($($arg)*), false)
    };
}

mod approvals;
mod chat;
mod daemon;
mod events;
mod interrupts;
mod manual;
mod mcp;
mod models;
mod rules;
mod run;
mod runs;
mod schedule;
mod tools;
mod trust;
mod ui;
mod undo;
mod view;

use crate::call::dispatch::Dispatcher;
use crate::config::WorkspaceConfig;
use crate::registry::Registry;
use crate::sandbox::{Allocation, EpochClock, Sandbox, SandboxOptions};
use crate::util::locations;
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: toolcell could not do what was asked.
pub const EXIT_ERROR: i32 = 1;
/// Exit code: the command line is wrong (clap's own code).
pub const EXIT_USAGE: i32 = 2;
/// Exit code: a tool call failed.
pub const EXIT_TOOL_FAILED: i32 = 3;
/// Exit code: a tool call was refused.
pub const EXIT_DENIED: i32 = 4;
/// Exit code: an agent run ended without an answer.
pub const EXIT_INCOMPLETE: i32 = 5;
/// Exit code: stopped by Ctrl-C (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Environment variable selecting log output, in `tracing` filter syntax
/// (`info`, `toolcell=debug`); warnings only by default.
pub const LOG_ENV: &str = "TOOLCELL_LOG";

/// toolcell runs the tools a language model (or a script) may use, each a
/// WebAssembly component in its own cell that sees only the folders it was
/// granted.
#[derive(Debug, Parser)]
#[command(name = "toolcell", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    chosen: Chosen,
    #[command(subcommand)]
    command: Command,
}

/// Which config, and which of its profiles: the flags every command takes.
#[derive(Debug, Clone, Args)]
pub struct Chosen {
    /// Workspace config to use instead of the nearest toolcell.toml.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Use [profile.NAME]'s model and agent settings.
    #[arg(long, global = true, value_name = "NAME")]
    profile: Option<String>,
}

impl Chosen {
    /// The config chosen (or found from `cwd`), with its profile in use.
    fn load(&self, cwd: &std::path::Path) -> Result<WorkspaceConfig> {
        let mut config = WorkspaceConfig::discover(self.config.as_deref(), cwd)?;
        if let Some(name) = &self.profile {
            config.use_profile(name)?;
        }
        Ok(config)
    }
}

#[derive(Debug, Subcommand)]
// clap builds a subcommand's flags only when it is the one run: a
// process's start-up pays for its own command alone.
#[command(defer = true)]
enum Command {
    /// List, inspect, call, install and remove tools.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Let a model work on the workspace with the tools: one task, or a conversation.
    Chat(chat::ChatArgs),
    /// What each model used so far can do (native tools, thinking, context).
    Models(models::ModelsArgs),
    /// List, show and export recorded runs.
    #[command(subcommand)]
    Runs(runs::RunsCommand),
    /// Run a workflow script.
    Run(run::RunArgs),
    /// Compile a workflow and check the tools it names, without running it.
    Check {
        /// The workflow script.
        file: PathBuf,
    },
    /// Workflows run at cron times: list them, run one now, install the daemon as a service.
    #[command(subcommand)]
    Schedule(schedule::ScheduleCommand),
    /// Serve the workspace's tools to MCP clients over stdio.
    Mcp(mcp::McpArgs),
    /// Run the workspace's schedules in the foreground (until SIGTERM or Ctrl-C).
    Daemon(daemon::DaemonArgs),
    /// Trust the workspace config as it is now, so it may start the programs it names.
    Trust(trust::TrustArgs),
    /// Calls parked for a person to decide (wait_for_approval, run --wait-approval).
    Approvals(approvals::ApprovalsArgs),
    /// Approve a parked call (`toolcell approvals` lists them).
    Approve {
        /// The parked call's id.
        id: i64,
        /// Also approve later calls of the same tool in that run.
        #[arg(long)]
        for_run: bool,
    },
    /// Deny a parked call; the reason reaches the run (and its model).
    Deny {
        /// The parked call's id.
        id: i64,
        /// Why, for the run and the record.
        #[arg(long)]
        reason: Option<String>,
    },
    /// The approval rules ([[rule]] in toolcell.toml): what would decide a call.
    #[command(subcommand)]
    Rules(rules::RulesCommand),
    /// Serve a page on 127.0.0.1 to watch runs, decide parked calls, undo and run schedules.
    Ui(ui::UiArgs),
    /// Restore what a run's file changes replaced (refused if those files changed since).
    Undo {
        /// The run's id (`toolcell runs list`).
        run: i64,
    },
    /// Print the shell's completions for toolcell (`toolcell completions bash > …`).
    Completions(manual::CompletionsArgs),
    /// Print the manual page, or write every command's page into a folder.
    Man(manual::ManArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    init_logging();
    let outcome = match cli.command {
        Command::Tools(command) => tools::run(&cli.chosen, command),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
        Command::Chat(args) => chat::run(&cli.chosen, args),
        Command::Models(args) => models::run(&cli.chosen, args),
        Command::Runs(command) => runs::run(&cli.chosen, command),
        Command::Undo { run } => undo::run(&cli.chosen, run),
        Command::Ui(args) => ui::run(&cli.chosen, args),
        Command::Trust(args) => trust::run(&cli.chosen, args),
        Command::Rules(command) => rules::run(&cli.chosen, command),
        Command::Approvals(args) => approvals::list(&cli.chosen, args),
        Command::Approve { id, for_run } => approvals::approve(&cli.chosen, id, for_run),
        Command::Deny { id, reason } => approvals::deny(&cli.chosen, id, reason),
        Command::Schedule(command) => schedule::run(&cli.chosen, command),
        Command::Daemon(args) => daemon::run(&cli.chosen, args),
        Command::Mcp(args) => mcp::run(&cli.chosen, args),
        Command::Run(args) => run::run(&cli.chosen, args),
        Command::Check { file } => run::check(&cli.chosen, file),
    };
    match outcome {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => EXIT_OK,
        Err(e) => {
            say!("error: {e:#}");
            EXIT_ERROR
        }
    }
}

/// What is logged unless `TOOLCELL_LOG` says otherwise: warnings, but not
/// the MCP SDK's own, since every failure of a server it reports reaches
/// the user through toolcell's message about it (with a fix) already.
const DEFAULT_LOG: &str = "warn,rmcp=off";

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env(LOG_ENV)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| SafeStderr)
        .with_ansi(false)
        .with_target(false)
        .without_time()
        .try_init();
}

/// A reader of stdout went away (`toolcell tools list | head`): not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Writes `text` and a newline to stdout: shown visibly
/// ([`crate::util::text::for_terminal`]) when stdout is a terminal, as it is
/// when piped (an export, an answer saved to a file keeps its bytes).
fn print_out(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    if stdout.is_terminal() {
        writeln!(stdout, "{}", crate::util::text::for_terminal(text))?;
    } else {
        writeln!(stdout, "{text}")?;
    }
    stdout.flush()?;
    Ok(())
}

/// Prints a JSON result laid out for people.
fn print_json(json: &crate::util::json_text::JsonText) -> Result<()> {
    print_laid_out(|out| json.write_pretty(out))
}

/// Prints what `write` lays out, and a newline. Shown visibly on a
/// terminal; elsewhere written as it is laid out, so a large result is not
/// copied again.
fn print_laid_out(write: impl Fn(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let stdout = std::io::stdout();
    if stdout.is_terminal() {
        let mut text = Vec::new();
        write(&mut text)?;
        return print_out(&String::from_utf8_lossy(&text));
    }
    /// Large enough that a big result takes few writes.
    const CHUNK: usize = 64 << 10;
    // Written to stdout's descriptor past std's line buffer, which looks
    // for the last newline in every write: a megabyte's scan for a result
    // whose newlines are escaped.
    let mut stdout = stdout.lock();
    stdout.flush()?;
    let descriptor = std::fs::File::from(stdout.as_fd().try_clone_to_owned()?);
    let mut out = std::io::BufWriter::with_capacity(CHUNK, descriptor);
    write(&mut out)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Writes `text` (and a newline, if `line`) to stderr, shown visibly, as a
/// message whose own lines are indented ([`for_terminal_message`]): what
/// [`say!`] and the log use. stderr is for people, whatever it is.
///
/// [`for_terminal_message`]: crate::util::text::for_terminal_message
pub(crate) fn print_err(text: &str, line: bool) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(crate::util::text::for_terminal_message(text).as_bytes());
    if line {
        let _ = stderr.write_all(b"\n");
    }
    let _ = stderr.flush();
}

/// Writes the block `text` and a newline to stderr, shown visibly with its
/// lines as they are: what a workflow prints, when stdout carries JSON.
pub(crate) fn print_err_block(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(crate::util::text::for_terminal(text).as_bytes());
    let _ = stderr.write_all(b"\n");
    let _ = stderr.flush();
}

/// stderr for the log: each event shown visibly.
struct SafeStderr;

impl Write for SafeStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        print_err(&String::from_utf8_lossy(buf), false);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// The workspace config and tool registry for this invocation.
fn load_workspace(config: &Chosen) -> Result<(WorkspaceConfig, Registry)> {
    let cwd = std::env::current_dir().context("cannot determine the current folder")?;
    let config = config.load(&cwd)?;
    warn_untrusted(&config);
    let registry = Registry::load(
        locations::user_tools_dir().as_deref(),
        &config.workspace_tools_dir(),
    );
    Ok((config, registry))
}

/// A dispatcher over the workspace, with the sandbox started.
fn open_dispatcher(config: &Chosen) -> Result<Dispatcher> {
    open_dispatcher_with(config, sandbox_options())
}

/// A dispatcher for a process that serves many calls (`toolcell mcp`):
/// each tool's next cell is built ahead, between calls.
fn open_dispatcher_for_many_calls(config: &Chosen) -> Result<Dispatcher> {
    let options = SandboxOptions {
        ready_ahead: true,
        ..sandbox_options()
    };
    open_dispatcher_with(config, options)
}

/// A dispatcher for a process that makes one call (`toolcell tools call`):
/// the sandbox is built on this thread when the call needs it, with
/// the component of the built-in tool named `tool`, if there is one (a tool
/// of the workspace by that name gets its own). See
/// [`crate::sandbox::PlannedSandbox`] for
/// why not on a thread of its own.
fn open_dispatcher_for_one_call(config: &Chosen, tool: &str) -> Result<Dispatcher> {
    let builtin = crate::tool::builtin::BUILTIN_TOOLS
        .iter()
        .find(|builtin| builtin.crate_dir == tool);
    let planned = Sandbox::planned(one_call_sandbox_options(), builtin);
    let (config, registry) = load_workspace(config)?;
    Ok(
        dispatcher_over(config, registry, one_call_sandbox_options())?
            .with_sandbox_planned(planned),
    )
}

/// A one-call process's sandbox: its cell's memory is mapped for it
/// alone (the pool of slots that makes each of many calls faster costs a
/// one-call process about 1 ms to reserve and release), left for the exit
/// to take down, and its call's time kept by an alarm, not a thread
/// (BENCHMARKS.md).
fn one_call_sandbox_options() -> SandboxOptions {
    SandboxOptions {
        allocation: Allocation::OnDemand,
        leave_used_cells_to_exit: true,
        clock: EpochClock::AtDeadline,
        ..sandbox_options()
    }
}

fn open_dispatcher_with(config: &Chosen, options: SandboxOptions) -> Result<Dispatcher> {
    let (config, registry) = load_workspace(config)?;
    dispatcher_over(config, registry, options)
}

/// A dispatcher over a loaded workspace, its MCP servers started.
fn dispatcher_over(
    config: WorkspaceConfig,
    registry: Registry,
    options: SandboxOptions,
) -> Result<Dispatcher> {
    let mut dispatcher = Dispatcher::new(config, registry, options)?;
    for problem in dispatcher.start_mcp_servers()? {
        say!("warning: {problem}");
    }
    for problem in dispatcher.grant_problems() {
        say!("warning: {problem}");
    }
    Ok(dispatcher)
}

/// Says which programs the config names but may not start, and how to
/// let it.
fn warn_untrusted(config: &WorkspaceConfig) {
    for notice in &config.notices {
        say!("warning: {notice}");
    }
    if config.untrusted.is_empty() {
        return;
    }
    let file = config
        .file
        .as_deref()
        .map(|f| f.display().to_string())
        .unwrap_or_default();
    say!(
        "warning: {file} is not trusted as it is now (it is new to toolcell, or it or a file it runs changed since it was trusted, or a folder it names now leads elsewhere), so it runs without what only a trusted config may do:\n  - {}\n  fix: read the file, then run `toolcell trust` to let it",
        config.untrusted.join("\n  - ")
    );
}

fn sandbox_options() -> SandboxOptions {
    SandboxOptions {
        cache_dir: locations::component_cache_dir(),
        allocation: Allocation::Pooling,
        ready_ahead: false,
        leave_used_cells_to_exit: false,
        clock: EpochClock::Ticking,
    }
}
