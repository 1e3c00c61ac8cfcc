//! The store's side of schedules: scheduled runs with their trigger and
//! fire time, runs skipped because the previous one still ran, the latest
//! fire time handled per schedule (so catch-up works across restarts), and
//! pruning old runs.

use super::{RunId, RunKind, RunStatus, Store, now_ms};
use anyhow::Result;
use rusqlite::{OptionalExtension, params};

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
        let conn = self.conn();
        conn.prepare_cached(
            "INSERT INTO runs (kind, title, status, started_at, pid, schedule, trigger, scheduled_at)
             VALUES (?7, ?1, 'running', ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            title,
            now_ms(),
            std::process::id(),
            schedule,
            trigger.as_str(),
            scheduled_at,
            RunKind::Schedule.as_str()
        ])?;
        Ok(conn.last_insert_rowid())
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
        Ok(self
            .conn()
            .prepare_cached("SELECT last_fire FROM schedule_state WHERE name = ?1")?
            .query_row(params![schedule], |row| row.get(0))
            .optional()?)
    }

    /// Records that `schedule`'s fire time `at` was handled.
    pub fn set_last_fire(&self, schedule: &str, at: i64) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO schedule_state (name, last_fire) VALUES (?1, ?2)
                 ON CONFLICT (name) DO UPDATE SET last_fire = MAX(last_fire, excluded.last_fire)",
            )?
            .execute(params![schedule, at])?;
        Ok(())
    }

    /// The tools `run` called that may have acted, for deciding whether a
    /// failed run changed anything: calls that completed, and calls that
    /// ended without saying whether they did their work (timed out,
    /// cancelled, interrupted, or an external server that died or broke
    /// off mid-call).
    pub fn tools_that_may_have_acted(&self, run: RunId) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut query = conn.prepare_cached(
            "SELECT DISTINCT tool FROM tool_calls WHERE run_id = ?1 AND (
               status IN ('done', 'running', 'cancelled', 'interrupted')
               OR error_kind IN ('timeout', 'server-failed'))",
        )?;
        let rows = query.query_map(params![run], |row| row.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Deletes finished scheduled runs that started before `before` (unix
    /// ms), with their messages, calls and logs; returns how many. Chats
    /// and `toolcell run` runs are the user's own record (and what undo
    /// works from): they stay.
    pub fn prune_runs(&self, before: i64) -> Result<usize> {
        Ok(self
            .conn()
            .prepare_cached(
                "DELETE FROM runs WHERE kind = 'schedule' AND started_at < ?1 AND status != 'running'",
            )?
            .execute(params![before])?)
    }

    /// Marks scheduled runs still `running` under process `pid` as
    /// interrupted: a daemon that just took the workspace's lock knows they
    /// are not its own, though an earlier daemon had the same id.
    pub fn interrupt_scheduled_runs_of(&self, pid: u32) -> Result<usize> {
        Ok(self
            .conn()
            .prepare_cached(
                "UPDATE runs SET status = 'interrupted', ended_at = ?2,
                   error = 'the daemon running it stopped before it finished'
                 WHERE kind = 'schedule' AND status = 'running' AND pid = ?1",
            )?
            .execute(params![pid, now_ms()])?)
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
        store.set_last_fire("report", 5).unwrap();
        store.set_last_fire("report", 3).unwrap();
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
        assert_eq!(
            store
                .interrupt_scheduled_runs_of(std::process::id())
                .unwrap(),
            1
        );
        assert_eq!(
            store.run(stale).unwrap().unwrap().summary.status,
            "interrupted"
        );
    }
}
