//! What the page (`toolcell ui`) reads of the store beside the runs
//! themselves: each call's file changes, and a run's fingerprint, which
//! changes whenever anything shown of the run does.

use super::db::args;
use super::{RunId, Store};
use anyhow::Result;

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
            conn.rows(
                "SELECT t.seq, t.tool, t.arguments, c.kind, c.path, c.partner, c.before, c.undone
                 FROM changes c JOIN tool_calls t ON t.id = c.call_row
                 WHERE c.run_id = ?1 ORDER BY c.id",
                args![run],
            )?
            .iter()
            .map(|row| {
                Ok(CallChange {
                    seq: row.get(0)?,
                    tool: row.get(1)?,
                    arguments: row.get(2)?,
                    kind: row.get(3)?,
                    path: row.get(4)?,
                    partner: row.get(5)?,
                    before: row.get(6)?,
                    undone: row.get(7)?,
                })
            })
            .collect()
        })
    }

    /// What changes whenever anything shown of `run` does: its status, its
    /// messages, its calls and their states, its output, its parked calls
    /// and undone changes. `None` if there is no such run.
    pub fn run_fingerprint(&self, run: RunId) -> Result<Option<String>> {
        self.with(|conn| {
            conn.row(
                "SELECT r.status || '/' || COALESCE(r.ended_at, 0)
                    || '/' || (SELECT COUNT(*) FROM messages WHERE run_id = r.id)
                    || '/' || (SELECT COUNT(*) || ':' || COUNT(CASE WHEN status = 'running' THEN 1 END) || ':' || COALESCE(MAX(seq), 0) FROM tool_calls WHERE run_id = r.id)
                    || '/' || (SELECT COUNT(*) FROM run_logs WHERE run_id = r.id)
                    || '/' || (SELECT COUNT(*) || ':' || COUNT(CASE WHEN status = 'waiting' THEN 1 END) FROM approvals WHERE run_id = r.id)
                    || '/' || (SELECT COUNT(CASE WHEN undone != 0 THEN 1 END) FROM changes WHERE run_id = r.id)
                 FROM runs r WHERE r.id = ?1",
                args![run],
            )?
            .map(|row| row.get(0))
            .transpose()
        })
    }

    /// What changes whenever a call is parked or decided.
    pub fn approvals_fingerprint(&self) -> Result<String> {
        self.with(|conn| {
            conn.value(
                "SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || COUNT(CASE WHEN status = 'waiting' THEN 1 END) || ':' || COALESCE(MAX(decided_at), 0) FROM approvals",
                &[],
            )
        })
    }
}
