//! What the daemon tells its log: one [`Event`] per thing that happened,
//! said once and written as a JSON object (`--json-logs`) or a line of text.
//! The JSON is a wire format (log shippers read it): its keys stay as they are.

use crate::config::schedule::ScheduleConfig;
use crate::store::{RunId, RunStatus, Trigger};
use crate::util::text::one_line;
use jiff::Timestamp;
use serde_json::{Value, json};

/// Characters of a run's error on its `finished` line.
const SHOWN_ERROR: usize = 200;

/// Something the daemon did or saw.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The daemon is up for `workspace`.
    DaemonStarted {
        workspace: String,
        schedules: usize,
        pid: u32,
    },
    /// Fire times that passed while the daemon was not running.
    Missed {
        fires: usize,
        catch_up: bool,
    },
    Queued {
        behind: RunId,
        fire: Timestamp,
    },
    /// A daemon sharing the store took this fire time.
    Taken {
        fire: Timestamp,
    },
    Skipped {
        run: RunId,
        reason: String,
        fire: Timestamp,
    },
    Started {
        run: RunId,
        trigger: Trigger,
        fire: Timestamp,
        /// The fire time in the schedule's own zone, for the text.
        local: String,
        attempt: u32,
        retries: u32,
    },
    /// A run ended; `error` is `None` where the daemon did not wait for
    /// one (a run that ended during the shutdown).
    Finished {
        run: RunId,
        status: RunStatus,
        error: Option<String>,
    },
    NotRetried {
        run: RunId,
    },
    Retry {
        run: RunId,
        attempt: u32,
        retries: u32,
        in_s: u64,
    },
    ReloadHeld {
        widens: Vec<String>,
    },
    Reloaded {
        schedules: usize,
    },
    ReloadFailed {
        error: String,
    },
    Pruned {
        runs: usize,
        days: u32,
    },
    PruneFailed {
        error: String,
    },
    Stopping {
        running: usize,
        grace_s: u64,
    },
    Interrupted {
        run: RunId,
    },
    Stopped,
    Warning {
        message: String,
    },
    /// What the config names but may not start: it is not trusted as it is.
    Untrusted {
        not_started: Vec<String>,
    },
}

impl Event {
    /// The event's name, the `event` key of its JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Event::DaemonStarted { .. } => "started",
            Event::Missed { .. } => "missed",
            Event::Queued { .. } => "queued",
            Event::Taken { .. } => "taken",
            Event::Skipped { .. } => "skipped",
            Event::Started { .. } => "started",
            Event::Finished { .. } => "finished",
            Event::NotRetried { .. } => "not-retried",
            Event::Retry { .. } => "retry",
            Event::ReloadHeld { .. } => "reload-held",
            Event::Reloaded { .. } => "reloaded",
            Event::ReloadFailed { .. } => "reload-failed",
            Event::Pruned { .. } => "pruned",
            Event::PruneFailed { .. } => "prune-failed",
            Event::Stopping { .. } => "stopping",
            Event::Interrupted { .. } => "interrupted",
            Event::Stopped => "stopped",
            Event::Warning { .. } => "warning",
            Event::Untrusted { .. } => "untrusted",
        }
    }

    /// The event's own fields.
    pub fn fields(&self) -> Value {
        match self {
            Event::DaemonStarted { schedules, pid, .. } => {
                json!({"schedules": schedules, "pid": pid})
            }
            Event::Missed { fires, catch_up } => json!({"fires": fires, "catch_up": catch_up}),
            Event::Queued { behind, fire } => json!({"behind": behind, "for": fire.to_string()}),
            Event::Taken { fire } => json!({"for": fire.to_string()}),
            Event::Skipped { run, reason, fire } => {
                json!({"run": run, "reason": reason, "for": fire.to_string()})
            }
            Event::Started {
                run,
                trigger,
                fire,
                attempt,
                ..
            } => {
                json!({"run": run, "trigger": trigger.as_str(), "for": fire.to_string(), "attempt": attempt})
            }
            Event::Finished { run, status, error } => match error {
                Some(error) => json!({"run": run, "status": status.as_str(), "error": error}),
                None => json!({"run": run, "status": status.as_str()}),
            },
            Event::NotRetried { run } | Event::Interrupted { run } => json!({"run": run}),
            Event::Retry {
                run, attempt, in_s, ..
            } => json!({"run": run, "attempt": attempt, "in_s": in_s}),
            Event::ReloadHeld { widens } => json!({"widens": widens}),
            Event::Reloaded { schedules } => json!({"schedules": schedules}),
            Event::ReloadFailed { error } | Event::PruneFailed { error } => json!({"error": error}),
            Event::Pruned { runs, days } => json!({"runs": runs, "days": days}),
            Event::Stopping { running, grace_s } => json!({"running": running, "grace_s": grace_s}),
            Event::Stopped => json!({}),
            Event::Warning { message } => json!({"message": message}),
            Event::Untrusted { not_started } => json!({"not_started": not_started}),
        }
    }

    /// The event as a person reads it.
    pub fn text(&self) -> String {
        match self {
            Event::DaemonStarted {
                workspace,
                schedules,
                ..
            } => format!("daemon started for {workspace} with {schedules} schedule(s)"),
            Event::Missed { fires, catch_up } => format!(
                "missed {fires} fire time(s) while not running{}",
                if *catch_up {
                    "; catching up the latest"
                } else {
                    ""
                }
            ),
            Event::Queued { behind, .. } => format!("queued behind run {behind}, still running"),
            Event::Taken { fire } => format!("fire time {fire} taken by another daemon"),
            Event::Skipped { run, reason, .. } => format!("run {run} skipped: {reason}"),
            Event::Started {
                run,
                trigger,
                local,
                attempt,
                retries,
                ..
            } => format!(
                "run {run} started ({}{}, for {local})",
                trigger.as_str(),
                if *attempt > 0 {
                    format!(" {attempt} of {retries}")
                } else {
                    String::new()
                },
            ),
            Event::Finished { run, status, error } => match error.as_deref() {
                Some(error) if !error.is_empty() => format!(
                    "run {run} {}: {}",
                    status.as_str(),
                    one_line(error, SHOWN_ERROR)
                ),
                _ => format!("run {run} {}", status.as_str()),
            },
            Event::NotRetried { run } => {
                format!("run {run} is not retried: it changed something before it failed")
            }
            Event::Retry {
                run,
                attempt,
                retries,
                in_s,
            } => format!("run {run} will be retried in {in_s} s ({attempt} of {retries})"),
            Event::ReloadHeld { widens } => format!(
                "the changed config widens what schedules may do ({}); the previous config stays until you confirm it: run `toolcell trust` in the workspace",
                widens.join("; ")
            ),
            Event::Reloaded { schedules } => format!("config reloaded: {schedules} schedule(s)"),
            Event::ReloadFailed { error } => {
                format!("the changed config is invalid, keeping the previous one: {error}")
            }
            Event::Pruned { runs, days } => format!("pruned {runs} run(s) older than {days} days"),
            Event::PruneFailed { error } => format!("cannot prune old runs: {error}"),
            Event::Stopping { running, grace_s } => {
                format!("stopping: {running} run(s) still running get {grace_s} s to finish")
            }
            Event::Interrupted { run } => format!("run {run} interrupted"),
            Event::Stopped => "daemon stopped".into(),
            Event::Warning { message } => message.clone(),
            Event::Untrusted { not_started } => format!(
                "the config is not trusted as it is, so it runs without what only a trusted config may do ({}); run `toolcell trust` in the workspace to let it",
                not_started.join("; ")
            ),
        }
    }

    /// The log line of this event of `schedule` (if it is one schedule's)
    /// at `now`.
    pub fn line(&self, now: Timestamp, schedule: Option<&str>, json_logs: bool) -> String {
        if json_logs {
            let mut fields = self.fields();
            fields["at"] = now.to_string().into();
            fields["event"] = self.name().into();
            if let Some(name) = schedule {
                fields["schedule"] = name.into();
            }
            fields.to_string()
        } else {
            let at = now
                .to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S%.3f");
            match schedule {
                Some(name) => format!("{at} [{name}] {}", self.text()),
                None => format!("{at} {}", self.text()),
            }
        }
    }
}

/// `at` in the schedule's time zone, for log lines.
pub fn local_time(at: Timestamp, schedule: &ScheduleConfig) -> String {
    at.to_zoned(schedule.cron.zone().clone())
        .strftime("%Y-%m-%d %H:%M:%S %Z")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_json_object_or_one_line_of_text() {
        let now: Timestamp = "2026-03-01T08:00:00Z".parse().unwrap();
        let event = Event::Finished {
            run: 7,
            status: RunStatus::Failed,
            error: Some("it broke\nbadly".into()),
        };
        let json: Value = serde_json::from_str(&event.line(now, Some("tidy"), true)).unwrap();
        assert_eq!(
            json,
            json!({"run": 7, "status": "failed", "error": "it broke\nbadly", "event": "finished", "schedule": "tidy", "at": "2026-03-01T08:00:00Z"})
        );
        let text = event.line(now, Some("tidy"), false);
        assert!(
            text.ends_with("[tidy] run 7 failed: it broke badly"),
            "{text}"
        );
        assert!(!text.contains('\n'));
        assert_eq!(Event::Stopped.fields(), json!({}));
    }
}
