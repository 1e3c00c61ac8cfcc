//! The daemon's decisions, as pure functions of the schedule, the time and
//! what is running: which fire time has come and whether it runs
//! ([`due`]), what a fire does while a run is still going ([`on_fire`]),
//! and whether a failed run is tried again ([`after_failure`]). The loop
//! in [`super::daemon`] only carries them out, so each is tested here on
//! times set by hand.

use crate::config::schedule::{CatchUp, Overlap, ScheduleConfig};
use crate::store::{RunId, Trigger};
use jiff::{SignedDuration, Timestamp};
use std::time::Duration;

/// A fire time counts as on time (trigger `schedule`) when the daemon
/// handles it within this; later, it was missed (the daemon was down or the
/// machine asleep) and `catch_up` decides.
pub const ON_TIME: SignedDuration = SignedDuration::from_secs(60);
/// The first retry waits this long; each further one twice as long, up to
/// the most.
pub const RETRY_FIRST: SignedDuration = SignedDuration::from_secs(30);
pub const RETRY_MAX: SignedDuration = SignedDuration::from_secs(600);
/// Fires waiting behind a running run, at most (`overlap = "queue"`): a
/// run that hangs does not pile up an unbounded backlog.
pub const QUEUE_LIMIT: usize = 8;
/// Fire times looked at per schedule and wake-up: after a long sleep a
/// schedule firing every minute has thousands, and only the latest runs.
pub const MAX_FIRES_SCANNED: usize = 10_000;

/// What came of a schedule's fire times up to now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// The latest fire time handled now: the schedule's mark moves here.
    pub handled: Timestamp,
    /// Fire times that pass without a run (missed while not running), to
    /// be logged; 0 when none did.
    pub missed: usize,
    /// Whether a missed one is caught up (`catch_up = "latest"`).
    pub caught_up: bool,
    /// The run to start, if any: for the latest fire time.
    pub fire: Option<Fire>,
}

/// One run to start: for which fire time, why, and which attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fire {
    pub at: Timestamp,
    pub trigger: Trigger,
    pub attempt: u32,
}

/// The fire times of `schedule` after `handled` up to `now`, and what they
/// call for; `None` when none has come.
pub fn due(schedule: &ScheduleConfig, handled: Timestamp, now: Timestamp) -> Option<Due> {
    let fires = schedule.cron.fires_between(handled, now, MAX_FIRES_SCANNED);
    let &scanned = fires.last()?;
    // Past the scan's cap, the latest fire time is searched from now.
    let latest = if fires.len() == MAX_FIRES_SCANNED {
        schedule
            .cron
            .latest_at_or_before(now)
            .filter(|latest| *latest > scanned)
            .unwrap_or(scanned)
    } else {
        scanned
    };
    if !schedule.enabled {
        // A disabled schedule lets its fire times pass: enabling it later
        // catches nothing up.
        return Some(Due {
            handled: latest,
            missed: 0,
            caught_up: false,
            fire: None,
        });
    }
    let on_time = now.duration_since(latest) <= ON_TIME;
    let catch_up = schedule.catch_up == CatchUp::Latest;
    let trigger = if on_time {
        Some(Trigger::Schedule)
    } else if catch_up {
        Some(Trigger::CatchUp)
    } else {
        None
    };
    Some(Due {
        handled: latest,
        missed: if on_time {
            fires.len() - 1
        } else {
            fires.len()
        },
        caught_up: !on_time && catch_up,
        fire: trigger.map(|trigger| Fire {
            at: latest,
            trigger,
            attempt: 0,
        }),
    })
}

/// What a fire does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnFire {
    Start,
    /// Wait behind the run still running.
    Queue {
        behind: RunId,
    },
    /// Recorded as a skipped run, for this reason.
    Skip {
        reason: String,
    },
}

/// What a fire of a schedule with `overlap` does when `running` are its
/// runs still going (oldest first) and `queued` fires wait.
pub fn on_fire(overlap: Overlap, running: &[RunId], queued: usize) -> OnFire {
    let Some(&previous) = running.first() else {
        return OnFire::Start;
    };
    match overlap {
        Overlap::Allow => OnFire::Start,
        Overlap::Queue if queued < QUEUE_LIMIT => OnFire::Queue { behind: previous },
        Overlap::Queue => OnFire::Skip {
            reason: format!("{QUEUE_LIMIT} fires already wait behind run {previous}"),
        },
        Overlap::Skip => OnFire::Skip {
            reason: format!("run {previous} of this schedule was still running"),
        },
    }
}

/// What follows a failed (or timed-out) run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// No retries left (or none asked for).
    GiveUp,
    /// It changed something before it failed: running it again could do
    /// that twice.
    NotRetried,
    /// Tried again after `wait`, as this attempt.
    Retry { attempt: u32, wait: Duration },
}

/// Whether the run for `fire` that failed is tried again, with `retries`
/// allowed and `changed_anything` said of it.
pub fn after_failure(fire: Fire, retries: u32, changed_anything: bool) -> AfterFailure {
    if fire.attempt >= retries {
        AfterFailure::GiveUp
    } else if changed_anything {
        AfterFailure::NotRetried
    } else {
        let attempt = fire.attempt + 1;
        AfterFailure::Retry {
            attempt,
            wait: retry_wait(attempt),
        }
    }
}

/// The wait before retry `attempt` (1-based).
pub fn retry_wait(attempt: u32) -> Duration {
    let factor = 1i32 << attempt.saturating_sub(1).min(16);
    let wait = (RETRY_FIRST * factor).min(RETRY_MAX);
    Duration::try_from(wait).unwrap_or(Duration::from_secs(30))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::cron::CronSchedule;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn every_hour(catch_up: CatchUp) -> ScheduleConfig {
        ScheduleConfig {
            name: "tidy".into(),
            workflow: "/w/tidy.rhai".into(),
            workflow_display: "tidy.rhai".into(),
            cron: CronSchedule::parse("0 * * * *", Some("UTC")).unwrap(),
            args: Default::default(),
            overlap: Overlap::Skip,
            catch_up,
            timeout: None,
            retries: 0,
            approve: Vec::new(),
            wait_for_approval: None,
            enabled: true,
        }
    }

    #[test]
    fn a_fire_time_on_time_runs_and_nothing_before_it_is_due() {
        let schedule = every_hour(CatchUp::None);
        let handled = at("2026-03-01T08:00:00Z");
        assert_eq!(due(&schedule, handled, at("2026-03-01T08:59:59Z")), None);
        let due = due(&schedule, handled, at("2026-03-01T09:00:30Z")).unwrap();
        assert_eq!(due.handled, at("2026-03-01T09:00:00Z"));
        assert_eq!(due.missed, 0);
        assert_eq!(
            due.fire,
            Some(Fire {
                at: at("2026-03-01T09:00:00Z"),
                trigger: Trigger::Schedule,
                attempt: 0
            })
        );
    }

    #[test]
    fn fire_times_missed_while_asleep_run_once_only_when_caught_up() {
        let handled = at("2026-03-01T08:00:00Z");
        let woke = at("2026-03-01T12:30:00Z");
        let skipped = due(&every_hour(CatchUp::None), handled, woke).unwrap();
        assert_eq!(skipped.handled, at("2026-03-01T12:00:00Z"));
        assert_eq!(
            (skipped.missed, skipped.caught_up, skipped.fire),
            (4, false, None)
        );
        let caught = due(&every_hour(CatchUp::Latest), handled, woke).unwrap();
        assert_eq!((caught.missed, caught.caught_up), (4, true));
        assert_eq!(caught.fire.unwrap().trigger, Trigger::CatchUp);
        assert_eq!(caught.fire.unwrap().at, at("2026-03-01T12:00:00Z"));
        // On time, with earlier ones missed: the on-time one runs.
        let late = due(
            &every_hour(CatchUp::None),
            handled,
            at("2026-03-01T12:00:10Z"),
        )
        .unwrap();
        assert_eq!(
            (late.missed, late.fire.unwrap().trigger),
            (3, Trigger::Schedule)
        );
    }

    #[test]
    fn a_disabled_schedule_lets_its_fire_times_pass() {
        let mut schedule = every_hour(CatchUp::Latest);
        schedule.enabled = false;
        let due = due(
            &schedule,
            at("2026-03-01T08:00:00Z"),
            at("2026-03-01T12:00:05Z"),
        )
        .unwrap();
        assert_eq!(due.handled, at("2026-03-01T12:00:00Z"));
        assert_eq!((due.missed, due.fire), (0, None));
    }

    #[test]
    fn a_fire_beside_a_running_run_follows_overlap() {
        assert_eq!(on_fire(Overlap::Skip, &[], 0), OnFire::Start);
        assert_eq!(on_fire(Overlap::Allow, &[3], 0), OnFire::Start);
        assert_eq!(
            on_fire(Overlap::Queue, &[3, 4], 2),
            OnFire::Queue { behind: 3 }
        );
        assert!(matches!(
            on_fire(Overlap::Queue, &[3], QUEUE_LIMIT),
            OnFire::Skip { reason } if reason.contains("already wait behind run 3")
        ));
        assert!(matches!(
            on_fire(Overlap::Skip, &[3], 0),
            OnFire::Skip { reason } if reason == "run 3 of this schedule was still running"
        ));
    }

    #[test]
    fn a_failed_run_is_retried_with_backoff_only_if_it_changed_nothing() {
        let fire = Fire {
            at: at("2026-03-01T08:00:00Z"),
            trigger: Trigger::Schedule,
            attempt: 0,
        };
        assert_eq!(after_failure(fire, 0, false), AfterFailure::GiveUp);
        assert_eq!(after_failure(fire, 2, true), AfterFailure::NotRetried);
        assert_eq!(
            after_failure(fire, 2, false),
            AfterFailure::Retry {
                attempt: 1,
                wait: Duration::from_secs(30)
            }
        );
        let second = Fire { attempt: 1, ..fire };
        assert_eq!(
            after_failure(second, 2, false),
            AfterFailure::Retry {
                attempt: 2,
                wait: Duration::from_secs(60)
            }
        );
        assert_eq!(
            after_failure(Fire { attempt: 2, ..fire }, 2, false),
            AfterFailure::GiveUp
        );
        assert_eq!(retry_wait(30), Duration::from_secs(600));
    }
}
