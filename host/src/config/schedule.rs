//! `[[schedule]]` entries and the `[daemon]` table of `toolcell.toml`.
//!
//! ```toml
//! [[schedule]]
//! name = "morning-report"
//! workflow = "workflows/report.rhai"   # relative to the workspace
//! cron = "30 7 * * 1-5"                # 5 fields, or 6 with seconds; @daily-style aliases
//! timezone = "Europe/Berlin"           # IANA; default: the machine's
//! args = { days = "7" }
//! overlap = "skip"                     # skip | queue | allow (while the previous run still runs)
//! catch_up = "none"                    # none | latest (a fire time missed while the daemon was down)
//! timeout = "10m"                      # default: timeout_s under [workflow]
//! retries = 2                          # with backoff; only runs that changed nothing
//! approve = ["write_file"]             # tools pre-approved for this unattended run
//! enabled = true
//!
//! [daemon]
//! grace = "30s"                        # on SIGTERM, how long running runs may finish
//! keep_runs_days = 30                  # older scheduled runs are pruned; 0 keeps all
//! ```

use super::cron::CronSchedule;
use crate::util::problem::{Problem, Table};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Retries allowed at most: a schedule failing more often than this needs a
/// person, not another attempt.
pub const MAX_RETRIES: u32 = 10;

/// How long runs may finish after SIGTERM when `[daemon] grace` is not set:
/// systemd waits 90 s before it kills, so this leaves time to record.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

/// Days of scheduled runs kept when `[daemon] keep_runs_days` is not set.
pub const DEFAULT_KEEP_RUNS_DAYS: u32 = 30;

/// What to do when a schedule fires while its previous run still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Overlap {
    /// Record the fire as skipped.
    #[default]
    Skip,
    /// Start it when the previous run ends.
    Queue,
    /// Start it at once, beside the previous run.
    Allow,
}

/// What to do with fire times missed while the daemon was not running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CatchUp {
    /// Nothing: the next fire time is the next run.
    #[default]
    None,
    /// One run, for the latest missed fire time.
    Latest,
}

/// One `[[schedule]]` entry, checked.
#[derive(Debug, Clone)]
pub struct ScheduleConfig {
    pub name: String,
    /// The workflow file, absolute.
    pub workflow: PathBuf,
    /// The workflow as written in the config, for messages.
    pub workflow_display: String,
    pub cron: CronSchedule,
    pub args: BTreeMap<String, String>,
    pub overlap: Overlap,
    pub catch_up: CatchUp,
    /// `None`: the `[workflow]` timeout.
    pub timeout: Option<Duration>,
    pub retries: u32,
    pub approve: Vec<String>,
    /// A call nobody granted is parked this long for a person to decide
    /// (`toolcell approvals`) instead of refused; `None`: refused at once.
    pub wait_for_approval: Option<Duration>,
    pub enabled: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSchedule {
    name: String,
    workflow: String,
    cron: String,
    timezone: Option<String>,
    #[serde(default)]
    args: BTreeMap<String, toml::Value>,
    #[serde(default)]
    overlap: Overlap,
    #[serde(default)]
    catch_up: CatchUp,
    timeout: Option<String>,
    #[serde(default)]
    retries: u32,
    #[serde(default)]
    approve: Vec<String>,
    wait_for_approval: Option<String>,
    enabled: Option<bool>,
}

impl ScheduleConfig {
    /// Its next `count` fire times after `after`.
    pub fn next_fires(&self, after: jiff::Timestamp, count: usize) -> Vec<jiff::Timestamp> {
        let mut times = Vec::with_capacity(count);
        let mut cursor = after;
        while times.len() < count {
            let Some(at) = self.cron.next_after(cursor) else {
                break;
            };
            times.push(at);
            cursor = at;
        }
        times
    }

    /// Checks `raw`; `at` says where it is for errors, `workspace` is the
    /// folder relative workflow paths start from.
    pub fn from_raw(raw: RawSchedule, at: &Table, workspace: &Path) -> Result<Self, Problem> {
        let fail = |key: &str, message: String, fix: &str| Err(at.problem(Some(key), message, fix));
        let name = raw.name.trim().to_string();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return fail(
                "name",
                format!("schedule name `{}` is not a name", raw.name),
                "use letters, digits, - and _ (for example \"morning-report\")",
            );
        }
        let cron = match CronSchedule::parse(&raw.cron, raw.timezone.as_deref()) {
            Ok(cron) => cron,
            Err(e) => {
                return fail(
                    "cron",
                    format!("schedule `{name}`: {e}"),
                    "correct `cron` or `timezone`",
                );
            }
        };
        let workflow = workspace.join(&raw.workflow);
        if !workflow.is_file() {
            return fail(
                "workflow",
                format!(
                    "schedule `{name}`: workflow `{}` does not exist",
                    raw.workflow
                ),
                "point `workflow` at a .rhai file, relative to the workspace",
            );
        }
        let mut args = BTreeMap::new();
        for (key, value) in raw.args {
            let text = match value {
                toml::Value::String(s) => s,
                toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
                    value.to_string()
                }
                other => {
                    return fail(
                        "args",
                        format!("schedule `{name}`: args.{key} is a {}", other.type_str()),
                        "give args as strings, numbers or booleans",
                    );
                }
            };
            args.insert(key, text);
        }
        let timeout = match raw.timeout.as_deref().map(parse_duration).transpose() {
            Ok(timeout) => timeout,
            Err(e) => {
                return fail(
                    "timeout",
                    format!("schedule `{name}`: timeout {e}"),
                    "write it like \"90s\", \"10m\" or \"1h30m\"",
                );
            }
        };
        let wait_for_approval = match raw
            .wait_for_approval
            .as_deref()
            .map(parse_duration)
            .transpose()
        {
            Ok(wait) => wait,
            Err(e) => {
                return fail(
                    "wait_for_approval",
                    format!("schedule `{name}`: wait_for_approval {e}"),
                    "write it like \"30m\" or \"2h\"",
                );
            }
        };
        if raw.retries > MAX_RETRIES {
            return fail(
                "retries",
                format!("schedule `{name}`: retries = {} is too many", raw.retries),
                &format!("use 0 to {MAX_RETRIES}"),
            );
        }
        if let Some(bad) = raw.approve.iter().find(|t| {
            crate::util::names::check_tool_name(t).is_err()
                && !crate::util::names::is_function_name(t)
        }) {
            return fail(
                "approve",
                format!("schedule `{name}`: `{bad}` in approve is not a tool name"),
                "list tool names as `toolcell tools list` shows them",
            );
        }
        Ok(Self {
            name,
            workflow,
            workflow_display: raw.workflow,
            cron,
            args,
            overlap: raw.overlap,
            catch_up: raw.catch_up,
            timeout,
            retries: raw.retries,
            approve: raw.approve,
            wait_for_approval,
            enabled: raw.enabled.unwrap_or(true),
        })
    }
}

/// `[daemon]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonConfig {
    pub grace: Duration,
    /// 0 keeps every run.
    pub keep_runs_days: u32,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            grace: DEFAULT_GRACE,
            keep_runs_days: DEFAULT_KEEP_RUNS_DAYS,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDaemonConfig {
    grace: Option<String>,
    keep_runs_days: Option<u32>,
}

impl DaemonConfig {
    pub fn from_raw(raw: RawDaemonConfig, at: &Table) -> Result<Self, Problem> {
        let mut config = Self::default();
        if let Some(grace) = raw.grace {
            config.grace = parse_duration(&grace).map_err(|e| {
                at.problem(
                    Some("grace"),
                    format!("daemon.grace {e}"),
                    "write it like \"30s\" or \"2m\"",
                )
            })?;
        }
        if let Some(days) = raw.keep_runs_days {
            config.keep_runs_days = days;
        }
        Ok(config)
    }
}

/// A duration written like `90s`, `10m`, `1h30m` or `2 hours`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let parsed: jiff::SignedDuration = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration"))?;
    Duration::try_from(parsed)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("`{text}` must be above zero"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("-5m").is_err());
    }
}
