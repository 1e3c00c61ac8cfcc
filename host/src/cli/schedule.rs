//! `toolcell schedule list | run NAME | install | export kubernetes`: the
//! workspace's schedules, their next fire times, a run now, a systemd user
//! unit for the daemon, and CronJobs for a cluster.

use super::{EXIT_ERROR, EXIT_OK, load_workspace, open_dispatcher, print_out};
use crate::config::schedule::ScheduleConfig;
use crate::schedule::kubernetes;
use crate::schedule::launch::unattended_launch;
use crate::store::{RunStatus, Store, Trigger};
use crate::util::text::for_terminal_line;
use crate::workflow::Workflow;
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Fire times listed per schedule when `--count` is not given.
const DEFAULT_COUNT: usize = 3;

#[derive(Debug, Subcommand)]
// clap builds a subcommand's flags only when it is the one run: a
// process's start-up pays for its own command alone.
#[command(defer = true)]
pub enum ScheduleCommand {
    /// Each schedule with its next fire times, in its time zone.
    List {
        /// How many fire times per schedule.
        #[arg(long, default_value_t = DEFAULT_COUNT)]
        count: usize,
        #[arg(long)]
        json: bool,
    },
    /// Run a schedule's workflow now, as the daemon would (recorded as manual).
    Run {
        /// The schedule's name.
        name: String,
    },
    /// Write a systemd user unit that runs the daemon for this workspace.
    Install,
    /// Write the schedules for another scheduler to run (docs/kubernetes.md).
    #[command(subcommand)]
    Export(ExportTarget),
}

#[derive(Debug, Subcommand)]
pub enum ExportTarget {
    /// One batch/v1 CronJob per schedule and a ConfigMap with the config and
    /// the workflows, for `kubectl apply -f`.
    Kubernetes(KubernetesArgs),
}

#[derive(Debug, clap::Args)]
pub struct KubernetesArgs {
    /// The image with toolcell (built from the Containerfile).
    #[arg(long, value_name = "IMAGE", default_value = concat!("toolcell:", env!("CARGO_PKG_VERSION")))]
    image: String,
    /// The namespace of every object (default: kubectl's current one).
    #[arg(long, value_name = "NS")]
    namespace: Option<String>,
    /// The PersistentVolumeClaim holding the workspace [default: NAME-workspace].
    #[arg(long, value_name = "CLAIM")]
    workspace_claim: Option<String>,
    /// The Secret the granted environment variables come from [default: NAME-env].
    #[arg(long, value_name = "SECRET")]
    secret: Option<String>,
    /// The prefix of every object's name.
    #[arg(long, value_name = "NAME", default_value = kubernetes::DEFAULT_NAME)]
    name: String,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<std::path::PathBuf>,
}

pub fn run(config: &super::Chosen, command: ScheduleCommand) -> Result<i32> {
    match command {
        // Listing and installing read the config: they start no program.
        ScheduleCommand::List { count, json } => {
            let (config, _) = load_workspace(config)?;
            list(&config.schedules, count, json)
        }
        ScheduleCommand::Run { name } => run_now(open_dispatcher(config)?, &name),
        ScheduleCommand::Install => install(&load_workspace(config)?.0),
        ScheduleCommand::Export(ExportTarget::Kubernetes(args)) => export_kubernetes(config, args),
    }
}

/// Writes the manifests; the registry is the one the pod has (built-in and
/// workspace tools: the user's own tools are not in the image).
fn export_kubernetes(chosen: &super::Chosen, args: KubernetesArgs) -> Result<i32> {
    let (config, _) = load_workspace(chosen)?;
    let registry = crate::registry::Registry::load(None, &config.workspace_tools_dir());
    let mut options = kubernetes::ExportOptions::new(args.image, Some(args.name));
    options.namespace = args.namespace;
    if let Some(claim) = args.workspace_claim {
        options.workspace_claim = claim;
    }
    if let Some(secret) = args.secret {
        options.secret = secret;
    }
    let text = kubernetes::export(&config, &registry, &options)?;
    match args.out {
        Some(path) => {
            std::fs::write(&path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            say!("wrote {}", path.display());
        }
        // The config's text is from outside: on a terminal it is escaped.
        None => print_out(text.strip_suffix('\n').unwrap_or(&text))?,
    }
    Ok(EXIT_OK)
}

fn list(schedules: &[ScheduleConfig], count: usize, json: bool) -> Result<i32> {
    let now = jiff::Timestamp::now();
    let next = |s: &ScheduleConfig| -> Vec<String> {
        s.next_fires(now, count)
            .into_iter()
            .map(|at| {
                at.to_zoned(s.cron.zone().clone())
                    .strftime("%Y-%m-%d %H:%M:%S %Z")
                    .to_string()
            })
            .collect()
    };
    if json {
        let list: Vec<_> = schedules
            .iter()
            .map(|s| {
                json!({
                    "name": s.name, "workflow": s.workflow_display, "cron": s.cron.expression(),
                    "timezone": s.cron.zone_name(), "enabled": s.enabled, "next": next(s),
                })
            })
            .collect();
        print_out(&serde_json::to_string_pretty(&list)?)?;
    } else if schedules.is_empty() {
        print_out("no schedules: add [[schedule]] entries to toolcell.toml (see the README)")?;
    } else {
        for s in schedules {
            print_out(&format!(
                "{}{}  {}  `{}` in {}",
                for_terminal_line(&s.name),
                if s.enabled { "" } else { " (disabled)" },
                for_terminal_line(&s.workflow_display),
                for_terminal_line(s.cron.expression()),
                for_terminal_line(s.cron.zone_name())
            ))?;
            for at in next(s) {
                print_out(&format!("    {at}"))?;
            }
        }
    }
    Ok(EXIT_OK)
}

fn run_now(dispatcher: crate::call::dispatch::Dispatcher, name: &str) -> Result<i32> {
    let Some(schedule) = dispatcher
        .config()
        .schedules
        .iter()
        .find(|s| s.name == name)
        .cloned()
    else {
        let names: Vec<&str> = dispatcher
            .config()
            .schedules
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        bail!(
            "there is no schedule `{}`\n  fix: the schedules are: {}",
            for_terminal_line(name),
            if names.is_empty() {
                "(none)".to_string()
            } else {
                for_terminal_line(&names.join(", ")).into_owned()
            }
        );
    };
    let workflow = Workflow::load(&schedule.workflow)?;
    let config = dispatcher.config().clone();
    let dispatcher = Arc::new(dispatcher);
    let store = Arc::new(Store::for_workspace(&config)?);
    let run = store.start_scheduled_run(
        name,
        &schedule.workflow_display,
        Trigger::Manual,
        jiff::Timestamp::now().as_millisecond(),
    )?;
    let launch = unattended_launch(
        &dispatcher,
        &store,
        &config,
        &schedule,
        run,
        CancellationToken::new(),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let (status, result) = runtime.block_on(launch.run(workflow));
    match result {
        Ok(value) => print_out(&format!("run {run} {}: {value}", status.as_str()))?,
        Err(failure) => say!("run {run} {}: {failure}", status.as_str()),
    }
    Ok(if status == RunStatus::Succeeded {
        EXIT_OK
    } else {
        EXIT_ERROR
    })
}

/// Writes `toolcell-<workspace>.service` into the user's systemd folder.
fn install(config: &crate::config::WorkspaceConfig) -> Result<i32> {
    let Some(file) = &config.file else {
        bail!(
            "no toolcell.toml here or above: the daemon needs a workspace config\n  fix: create toolcell.toml with [[schedule]] entries first"
        );
    };
    let exe = std::env::current_exe().context("cannot find the toolcell binary")?;
    let units = dirs::config_dir()
        .context("cannot find the user's config folder (set XDG_CONFIG_HOME)")?
        .join("systemd/user");
    std::fs::create_dir_all(&units)
        .with_context(|| format!("cannot create {}", units.display()))?;
    let unit = unit_name(&config.workspace);
    let path = units.join(&unit);
    let text = format!(
        "# Written by `toolcell schedule install` for {workspace}\n\
         [Unit]\n\
         Description=toolcell schedules for {workspace}\n\
         After=network-online.target\n\
         \n\
         [Service]\n\
         Type=simple\n\
         WorkingDirectory={workdir}\n\
         ExecStart={exe} --config {file} daemon\n\
         Restart=on-failure\n\
         RestartSec=10\n\
         # The daemon gives running runs [daemon] grace to finish on SIGTERM.\n\
         TimeoutStopSec={stop}\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        workspace = config.workspace.display(),
        workdir = unit_escape(&config.workspace.display().to_string()),
        exe = quoted(&exe),
        file = quoted(file),
        stop = config.daemon.grace.as_secs() + 30,
    );
    let temp = path.with_extension("service.tmp");
    std::fs::write(&temp, text).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    print_out(&format!(
        "wrote {}\nenable it with:\n  systemctl --user daemon-reload\n  systemctl --user enable --now {unit}\nto keep it running while you are logged out:\n  loginctl enable-linger \"$USER\"\nits log:\n  journalctl --user -u {unit} -f",
        path.display()
    ))?;
    Ok(EXIT_OK)
}

/// `toolcell-<folder>-<hash>.service`: readable, and unique per workspace.
fn unit_name(workspace: &Path) -> String {
    use sha2::{Digest, Sha256};
    let folder: String = workspace
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("workspace")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let hash = hex::encode(&Sha256::digest(workspace.as_os_str().as_encoded_bytes())[..4]);
    format!("toolcell-{folder}-{hash}.service")
}

/// A path as one word of a systemd command line: in double quotes, with
/// `\` and `"` escaped, and `%` (a systemd specifier) doubled.
fn quoted(path: &Path) -> String {
    let text = unit_escape(&path.display().to_string());
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `text` with systemd's `%` specifiers escaped; for settings that take a
/// path as it is (`WorkingDirectory=` takes no quotes).
fn unit_escape(text: &str) -> String {
    text.replace('%', "%%")
}
