//! What the page (`toolcell ui`) reads of the store beside the runs
//! themselves: each call's file changes, and a run's fingerprint, which
//! changes whenever anything shown of the run does.

use super::{RunId, Store};
use anyhow::Result;
use rusqlite::{OptionalExtension, params};

/// A file change a call made, with the call it belongs to.
#[derive(Debug, Clone)]
pub struct CallChange {
    /// The call's place in its run (`ToolCallRecord::seq`).
    pub seq: i64,
    pub tool: String,
    pub arguments: String,
    /// `file` or `move`.
    pub kind: String,
    pub path: String,
    /// A move's destination.
    pub partner: Option<String>,
    /// The file's bytes before the call; `None` if it did not exist or was
    /// not a file.
    pub before: Option<Vec<u8>>,
    pub undone: bool,
}

impl Store {
    /// Every file change of `run`, undone or not, in order.
    pub fn call_changes(&self, run: RunId) -> Result<Vec<CallChange>> {
        self.with(|conn| {
            let mut query = conn.prepare_cached(
                "SELECT t.seq, t.tool, t.arguments, c.kind, c.path, c.partner, c.before, c.undone
                 FROM changes c JOIN tool_calls t ON t.id = c.call_row
                 WHERE c.run_id = ?1 ORDER BY c.id",
            )?;
            let rows = query
                .query_map(params![run], |row| {
                    Ok(CallChange {
                        seq: row.get(0)?,
                        tool: row.get(1)?,
                        arguments: row.get(2)?,
                        kind: row.get(3)?,
                        path: row.get(4)?,
                        partner: row.get(5)?,
                        before: row.get(6)?,
                        undone: row.get::<_, i64>(7)? != 0,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// What changes whenever anything shown of `run` does: its status, its
    /// messages, its calls and their states, its output, its parked calls
    /// and undone changes. `None` if there is no such run.
    pub fn run_fingerprint(&self, run: RunId) -> Result<Option<String>> {
        self.with(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT r.status || '/' || COALESCE(r.ended_at, 0)
                        || '/' || (SELECT COUNT(*) FROM messages WHERE run_id = r.id)
                        || '/' || (SELECT COUNT(*) || ':' || COALESCE(SUM(status = 'running'), 0) || ':' || COALESCE(MAX(seq), 0) FROM tool_calls WHERE run_id = r.id)
                        || '/' || (SELECT COUNT(*) FROM run_logs WHERE run_id = r.id)
                        || '/' || (SELECT COUNT(*) || ':' || COALESCE(SUM(status = 'waiting'), 0) FROM approvals WHERE run_id = r.id)
                        || '/' || (SELECT COALESCE(SUM(undone), 0) FROM changes WHERE run_id = r.id)
                     FROM runs r WHERE r.id = ?1",
                )?
                .query_row(params![run], |row| row.get(0))
                .optional()?)
        })
    }

    /// What changes whenever a call is parked or decided.
    pub fn approvals_fingerprint(&self) -> Result<String> {
        self.with(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || COALESCE(SUM(status = 'waiting'), 0) || ':' || COALESCE(MAX(decided_at), 0) FROM approvals",
                )?
                .query_row([], |row| row.get(0))?)
        })
    }
}
