//! The store's side of schedules: scheduled runs with their trigger and
//! fire time, runs skipped because the previous one still ran, the latest
//! fire time handled per schedule (so catch-up works across restarts), and
//! pruning old runs.

use super::db::args;
use super::{RunId, RunKind, RunStatus, Store, now_ms};
use anyhow::Result;

/// What started a scheduled run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Its fire time came.
    Schedule,
    /// `toolcell schedule run NAME`.
    Manual,
    /// A fire time missed while the daemon was down (`catch_up = "latest"`).
    CatchUp,
    /// A failed run that changed nothing, tried again.
    Retry,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::Manual => "manual",
            Trigger::CatchUp => "catch-up",
            Trigger::Retry => "retry",
        }
    }
}

impl Store {
    /// Records the start of a run of `schedule`.
    pub fn start_scheduled_run(
        &self,
        schedule: &str,
        title: &str,
        trigger: Trigger,
        scheduled_at: i64,
    ) -> Result<RunId> {
        let owner = self.owner;
        self.with(|conn| {
            conn.value(
                "INSERT INTO runs (kind, title, status, started_at, pid, schedule, trigger, scheduled_at)
                 VALUES (?7, ?1, 'running', ?2, ?3, ?4, ?5, ?6) RETURNING id",
                args![
                    title,
                    now_ms(),
                    owner,
                    schedule,
                    trigger.as_str(),
                    scheduled_at,
                    RunKind::Schedule.as_str()
                ],
            )
        })
    }

    /// Records a fire of `schedule` that did not start a run, and why.
    pub fn record_skipped(
        &self,
        schedule: &str,
        title: &str,
        trigger: Trigger,
        scheduled_at: i64,
        why: &str,
    ) -> Result<RunId> {
        let run = self.start_scheduled_run(schedule, title, trigger, scheduled_at)?;
        self.finish_run(run, RunStatus::Skipped, None, Some(why))?;
        Ok(run)
    }

    /// The latest fire time of `schedule` that was handled (unix ms).
    pub fn last_fire(&self, schedule: &str) -> Result<Option<i64>> {
        self.with(|conn| {
            conn.row(
                "SELECT last_fire FROM schedule_state WHERE name = ?1",
                args![schedule],
            )?
            .map(|row| row.get(0))
            .transpose()
        })
    }

    /// Takes `schedule`'s fire time `at` as handled by this process: true
    /// if it was not handled yet (by this daemon or another sharing the
    /// store), false if it or a later one was. One statement, so of daemons
    /// racing for a fire time exactly one wins it.
    pub fn set_last_fire(&self, schedule: &str, at: i64) -> Result<bool> {
        self.with(|conn| {
            Ok(conn
                .row(
                    "INSERT INTO schedule_state (name, last_fire) VALUES (?1, ?2)
                     ON CONFLICT (name) DO UPDATE SET last_fire = excluded.last_fire
                       WHERE schedule_state.last_fire < excluded.last_fire
                     RETURNING last_fire",
                    args![schedule, at],
                )?
                .is_some())
        })
    }

    /// The runs of `schedule` still going (running or waiting for a
    /// person), by any process sharing the store, oldest first; runs whose
    /// owner is gone are marked interrupted first.
    pub fn running_of_schedule(&self, schedule: &str) -> Result<Vec<RunId>> {
        self.with(|conn| {
            super::orphans::mark_interrupted(conn)?;
            conn.rows(
                "SELECT id FROM runs WHERE kind = 'schedule' AND schedule = ?1
                   AND status IN ('running', 'waiting') ORDER BY id",
                args![schedule],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect()
        })
    }

    /// With a shared store, takes the lock under which a daemon decides
    /// whether a fire of `schedule` starts — looks at the runs going and
    /// records its own — so that two daemons never both find none going
    /// and start one; waits while another daemon holds it. Nothing to take
    /// for a store of one daemon.
    pub fn lock_schedule(&self, schedule: &str) -> Result<()> {
        self.schedule_lock("SELECT pg_advisory_lock(?1, hashtext(?2))", schedule)
    }

    /// Lets go of the lock [`Store::lock_schedule`] took.
    pub fn unlock_schedule(&self, schedule: &str) -> Result<()> {
        self.schedule_lock("SELECT pg_advisory_unlock(?1, hashtext(?2))", schedule)
    }

    fn schedule_lock(&self, sql: &str, schedule: &str) -> Result<()> {
        if !self.shared {
            return Ok(());
        }
        self.with(|conn| {
            conn.exec(sql, args![super::postgres::SCHEDULE_SPACE, schedule])?;
            Ok(())
        })
    }

    /// Marks the runs whose owner is gone as interrupted (a daemon of
    /// another machine killed mid-run); returns them.
    pub fn interrupt_orphans(&self) -> Result<Vec<RunId>> {
        self.with(super::orphans::mark_interrupted)
    }

    /// The tools `run` called that may have acted, for deciding whether a
    /// failed run changed anything: calls that completed, and calls that
    /// ended without saying whether they did their work (timed out,
    /// cancelled, interrupted, or an external server that died or broke
    /// off mid-call).
    pub fn tools_that_may_have_acted(&self, run: RunId) -> Result<Vec<String>> {
        self.with(|conn| {
            conn.rows(
                "SELECT DISTINCT tool FROM tool_calls WHERE run_id = ?1 AND (
                   status IN ('done', 'running', 'cancelled', 'interrupted')
                   OR error_kind IN ('timeout', 'server-failed'))",
                args![run],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect()
        })
    }

    /// Deletes finished scheduled runs that started before `before` (unix
    /// ms), with their messages, calls and logs; returns how many. Chats
    /// and `toolcell run` runs are the user's own record (and what undo
    /// works from): they stay.
    pub fn prune_runs(&self, before: i64) -> Result<usize> {
        self.with(|conn| {
            conn.exec(
                "DELETE FROM runs WHERE kind = 'schedule' AND started_at < ?1 AND status NOT IN ('running', 'waiting')",
                args![before],
            )
        })
    }

    /// Marks scheduled runs still `running` under owner `owner` as
    /// interrupted: a daemon that just took the workspace's lock knows they
    /// are not its own, though an earlier daemon had the same id.
    pub fn interrupt_scheduled_runs_of(&self, owner: i64) -> Result<usize> {
        self.with(|conn| {
            conn.exec(
                "UPDATE runs SET status = 'interrupted', ended_at = ?2,
                   error = 'the daemon running it stopped before it finished'
                 WHERE kind = 'schedule' AND status = 'running' AND pid = ?1",
                args![owner, now_ms()],
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduled_runs_skips_fire_times_and_pruning() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let run = store
            .start_scheduled_run("report", "report.rhai", Trigger::CatchUp, 1_000)
            .unwrap();
        store
            .finish_run(run, RunStatus::Failed, None, Some("boom"))
            .unwrap();
        store
            .record_skipped(
                "report",
                "report.rhai",
                Trigger::Schedule,
                2_000,
                "still running",
            )
            .unwrap();
        let chat = store.start_run(RunKind::Chat, "other", None).unwrap();
        store
            .finish_run(chat, RunStatus::Succeeded, None, None)
            .unwrap();
        let failed = store.list_runs(10, Some("failed"), Some("report")).unwrap();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].trigger.as_deref(), Some("catch-up"));
        assert_eq!(failed[0].scheduled_at, Some(1_000));
        let all = store.list_runs(10, None, Some("report")).unwrap();
        assert_eq!(all[0].status, "skipped");

        assert_eq!(store.last_fire("report").unwrap(), None);
        assert!(store.set_last_fire("report", 5).unwrap());
        assert!(!store.set_last_fire("report", 3).unwrap(), "already past");
        assert!(!store.set_last_fire("report", 5).unwrap(), "taken once");
        assert_eq!(
            store.last_fire("report").unwrap(),
            Some(5),
            "never moves back"
        );

        let pruned = store.prune_runs(now_ms() + 1).unwrap();
        assert_eq!(pruned, 2, "the chat stays");
        assert_eq!(store.list_runs(10, None, None).unwrap().len(), 1);

        let stale = store
            .start_scheduled_run("report", "report.rhai", Trigger::Schedule, 3_000)
            .unwrap();
        assert_eq!(store.interrupt_scheduled_runs_of(store.owner()).unwrap(), 1);
        assert_eq!(
            store.run(stale).unwrap().unwrap().summary.status,
            "interrupted"
        );
    }
}
