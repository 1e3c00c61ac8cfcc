//! One schedule as a `batch/v1` CronJob, and the workflow files it needs.
//!
//! How each setting maps (the daemon's meaning kept, or refused):
//! - `cron`, `timezone` → `schedule`, `timeZone` (the machine's zone when
//!   the config names none);
//! - `overlap`: `skip` → `Forbid`, `allow` → `Allow`; `queue` is refused:
//!   Kubernetes can skip a fire or run it beside the last, not hold it;
//! - `catch_up`: `none` → `startingDeadlineSeconds` of the daemon's
//!   on-time window; `latest` → a deadline that lets the latest missed
//!   fire start late ([`super::cron::latest_deadline`]);
//! - `timeout` → the pod's `activeDeadlineSeconds`, per attempt as the
//!   daemon's is per run, with [`RECORD_MARGIN_S`] so toolcell's own limit
//!   ends the run first and records it;
//! - `retries` → `backoffLimit` only when the workflow can change nothing
//!   (every tool it may call is known and says `mutates = false`): the
//!   daemon retries only runs that changed nothing, and a Job cannot look;
//! - `enabled = false` → `suspend: true`.
//!
//! The pod runs as [`USER_ID`] with no privileges, a read-only root, its
//! home and `/tmp` on emptyDirs. An init container runs `toolcell trust`
//! on the config it mounts: applying these manifests is the user's word,
//! as `toolcell trust` is on a machine (the exporter refuses a config not
//! trusted where it runs). Granted environment variables come from the
//! Secret by reference.

use super::yaml::{MapBuilder, Node};
use super::{ConfigFile, ExportOptions, HOME, USER_ID, WORKSPACE, inside, labels, metadata};
use crate::config::WorkspaceConfig;
use crate::config::schedule::{CatchUp, Overlap, ScheduleConfig};
use crate::registry::Registry;
use crate::workflow::Workflow;
use crate::workflow::reach::{Reach, tools_reached};
use anyhow::{Result, bail};
use std::time::Duration;

/// Seconds beyond the workflow's timeout before Kubernetes ends the pod:
/// toolcell stops the run at its timeout and records it; this is the time
/// to do so.
pub const RECORD_MARGIN_S: i64 = 30;

/// What a schedule's workflow brings to the ConfigMap, and its retries.
pub struct WorkflowFiles {
    /// Each file: where it goes, and its text.
    pub files: Vec<(ConfigFile, String)>,
    /// `backoffLimit`, and why retries were dropped, if they were.
    pub retries: (i64, Option<String>),
}

/// The files `schedule` needs (its workflow; every `.rhai` file in its
/// folder and beneath when it imports), and how often a failed run may be
/// tried again.
pub fn workflow_files(
    config: &WorkspaceConfig,
    registry: &Registry,
    schedule: &ScheduleConfig,
) -> Result<WorkflowFiles> {
    let workflow = Workflow::load(&schedule.workflow)?;
    let engine = workflow.engine(&config.workflow.limits);
    let ast = match workflow.compile(&engine) {
        Ok(ast) => ast,
        Err(failure) => bail!(
            "schedule `{}`: its workflow does not compile:\n{failure}\n  fix: correct it (`toolcell run {}` shows the same)",
            schedule.name,
            schedule.workflow_display
        ),
    };
    let reach = tools_reached(&ast);
    let mut paths = vec![schedule.workflow.clone()];
    if ast
        .statements()
        .iter()
        .any(|s| matches!(s, rhai::Stmt::Import(..)))
    {
        paths = Vec::new();
        rhai_files(&workflow.folder, &mut paths)?;
    }
    let mut files = Vec::new();
    for path in paths {
        let Some(relative) = inside(&config.workspace, &path) else {
            bail!(
                "schedule `{}`: {} is outside the workspace\n  fix: keep its workflow and modules inside the workspace",
                schedule.name,
                path.display()
            );
        };
        let key = relative.replace('/', "_");
        if !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            bail!(
                "schedule `{}`: the workflow file `{relative}` has a name a ConfigMap cannot hold\n  fix: name workflow files with letters, digits, -, _ and .",
                schedule.name
            );
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        files.push((
            ConfigFile {
                key,
                path: relative,
            },
            text,
        ));
    }
    Ok(WorkflowFiles {
        files,
        retries: backoff_limit(schedule, registry, &reach),
    })
}

/// Every `.rhai` file in `folder` and beneath, sorted.
fn rhai_files(folder: &std::path::Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(folder)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", folder.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rhai_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rhai") {
            out.push(path);
        }
    }
    Ok(())
}

/// `retries` when every tool the workflow may call changes nothing, else 0
/// and why.
fn backoff_limit(
    schedule: &ScheduleConfig,
    registry: &Registry,
    reach: &Reach,
) -> (i64, Option<String>) {
    let retries = i64::from(schedule.retries);
    if retries == 0 {
        return (0, None);
    }
    let why = match reach {
        Reach::Unknown(why) => format!("the tools it may call are not known ({why})"),
        Reach::Named(tools) => {
            // As the daemon: a tool not known to change nothing (an MCP
            // server's, one the pod lacks) counts as changing.
            let changing: Vec<&str> = tools
                .iter()
                .filter(|tool| registry.get(tool).is_none_or(|e| e.manifest.mutates))
                .map(String::as_str)
                .collect();
            if changing.is_empty() {
                return (retries, None);
            }
            format!(
                "it may call {}, which may change things",
                changing.join(", ")
            )
        }
    };
    (
        0,
        Some(format!(
            "schedule `{}`: backoffLimit 0, not its retries = {retries}: {why}",
            schedule.name
        )),
    )
}

/// One schedule's CronJob.
pub struct CronJob<'a> {
    pub schedule: &'a ScheduleConfig,
    pub name: &'a str,
    pub retries: (i64, Option<String>),
    /// `--profile`, passed on to the run.
    pub profile: Option<&'a str>,
    pub mounts: &'a [ConfigFile],
    pub env: &'a [String],
    /// `[workflow] timeout_s`, for a schedule with no `timeout`.
    pub default_timeout: Duration,
}

impl CronJob<'_> {
    /// The comments above it, and the object.
    pub fn build(&self, options: &ExportOptions) -> Result<(Vec<String>, Node)> {
        let s = self.schedule;
        let cron = super::cron::for_kubernetes(&s.name, s.cron.expression())
            .map_err(anyhow::Error::msg)?;
        let zone = s.cron.zone_name();
        if jiff::tz::TimeZone::get(zone).is_err() {
            bail!(
                "schedule `{}` has no timezone, and this machine's time zone has no IANA name\n  fix: set timezone = \"Europe/Berlin\" (or the zone it should run in)",
                s.name
            );
        }
        let concurrency = match s.overlap {
            Overlap::Skip => "Forbid",
            Overlap::Allow => "Allow",
            Overlap::Queue => bail!(
                "schedule `{}`: overlap = \"queue\" has no Kubernetes form: a CronJob skips a fire while the last run runs (Forbid), runs it beside (Allow) or ends the last (Replace), and never holds it\n  fix: set overlap = \"skip\" or \"allow\" for the schedules you export",
                s.name
            ),
        };
        let deadline = match s.catch_up {
            CatchUp::None => crate::schedule::plan::ON_TIME.as_secs(),
            CatchUp::Latest => super::cron::latest_deadline(&s.cron),
        };
        let timeout = s.timeout.unwrap_or(self.default_timeout).as_secs() as i64;
        let pod = MapBuilder::new()
            .with("restartPolicy", "Never")
            .with("activeDeadlineSeconds", timeout + RECORD_MARGIN_S)
            .with(
                "securityContext",
                MapBuilder::new()
                    .with("runAsNonRoot", true)
                    .with("runAsUser", USER_ID)
                    .with("runAsGroup", USER_ID)
                    .with("fsGroup", USER_ID)
                    .with(
                        "seccompProfile",
                        MapBuilder::new().with("type", "RuntimeDefault"),
                    ),
            )
            .with(
                "initContainers",
                vec![self.container(options, "trust", &["trust"], false)],
            )
            .with("containers", vec![self.run_container(options)])
            .with("volumes", volumes(options));
        let job = MapBuilder::new().with("backoffLimit", self.retries.0).with(
            "template",
            MapBuilder::new()
                .with(
                    "metadata",
                    MapBuilder::new().with("labels", labels(options)),
                )
                .with("spec", pod),
        );
        let spec = MapBuilder::new()
            .with("schedule", cron)
            .with("timeZone", zone)
            .with("concurrencyPolicy", concurrency)
            .with("startingDeadlineSeconds", deadline)
            .with("suspend", !s.enabled)
            .with(
                "jobTemplate",
                MapBuilder::new()
                    .with(
                        "metadata",
                        MapBuilder::new().with("labels", labels(options)),
                    )
                    .with("spec", job),
            );
        let object = MapBuilder::new()
            .with("apiVersion", "batch/v1")
            .with("kind", "CronJob")
            .with("metadata", metadata(options, self.name))
            .with("spec", spec)
            .build();
        let mut comments = vec![format!(
            "schedule `{}`: {} (`{}` in {zone})",
            s.name,
            s.workflow_display.replace(['\n', '\r'], " "),
            s.cron.expression()
        )];
        comments.extend(self.retries.1.iter().cloned());
        Ok((comments, object))
    }

    /// The container that runs the schedule, with the granted variables.
    fn run_container(&self, options: &ExportOptions) -> Node {
        let mut args = vec!["schedule", "run", self.schedule.name.as_str()];
        if let Some(profile) = self.profile {
            args.splice(0..0, ["--profile", profile]);
        }
        self.container(options, "toolcell", &args, true)
    }

    /// A container of the image running `toolcell --config … ARGS`.
    fn container(&self, options: &ExportOptions, name: &str, args: &[&str], secrets: bool) -> Node {
        let config = format!("{WORKSPACE}/{}", super::CONFIG_FILE);
        let mut argv = vec![Node::from("--config"), Node::from(config)];
        argv.extend(args.iter().map(|a| Node::from(*a)));
        let mut env = vec![
            MapBuilder::new()
                .with("name", "HOME")
                .with("value", HOME)
                .build(),
        ];
        if secrets {
            env.extend(self.env.iter().map(|variable| {
                MapBuilder::new()
                    .with("name", variable.as_str())
                    .with(
                        "valueFrom",
                        MapBuilder::new().with(
                            "secretKeyRef",
                            MapBuilder::new()
                                .with("name", options.secret.as_str())
                                .with("key", variable.as_str()),
                        ),
                    )
                    .build()
            }));
        }
        let mut mounts = vec![
            MapBuilder::new()
                .with("name", "workspace")
                .with("mountPath", WORKSPACE)
                .build(),
        ];
        for file in self.mounts {
            mounts.push(
                MapBuilder::new()
                    .with("name", "config")
                    .with("mountPath", format!("{WORKSPACE}/{}", file.path))
                    .with("subPath", file.key.as_str())
                    .with("readOnly", true)
                    .build(),
            );
        }
        mounts.push(
            MapBuilder::new()
                .with("name", "home")
                .with("mountPath", HOME)
                .build(),
        );
        mounts.push(
            MapBuilder::new()
                .with("name", "tmp")
                .with("mountPath", "/tmp")
                .build(),
        );
        MapBuilder::new()
            .with("name", name)
            .with("image", options.image.as_str())
            .with("args", argv)
            .with("workingDir", WORKSPACE)
            .with("env", env)
            .with(
                "securityContext",
                MapBuilder::new()
                    .with("allowPrivilegeEscalation", false)
                    .with("readOnlyRootFilesystem", true)
                    .with(
                        "capabilities",
                        MapBuilder::new().with("drop", vec![Node::from("ALL")]),
                    ),
            )
            .with("volumeMounts", mounts)
            .build()
    }
}

/// The pod's volumes: the claim, the ConfigMap, and two emptyDirs.
fn volumes(options: &ExportOptions) -> Vec<Node> {
    vec![
        MapBuilder::new()
            .with("name", "workspace")
            .with(
                "persistentVolumeClaim",
                MapBuilder::new().with("claimName", options.workspace_claim.as_str()),
            )
            .build(),
        MapBuilder::new()
            .with("name", "config")
            .with(
                "configMap",
                MapBuilder::new().with("name", format!("{}-config", options.name)),
            )
            .build(),
        MapBuilder::new()
            .with("name", "home")
            .with("emptyDir", MapBuilder::new())
            .build(),
        MapBuilder::new()
            .with("name", "tmp")
            .with("emptyDir", MapBuilder::new())
            .build(),
    ]
}
