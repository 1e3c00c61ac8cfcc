//! Runs and parked calls whose owner is gone (a crash, a kill, a machine
//! that went away): runs are marked `interrupted` and never replayed,
//! parked calls `void`. Found whenever a store is opened, and before the
//! inbox is read or answered; a daemon sharing a store looks again before
//! each fire time.

use super::db::{Conn, args};
use super::now_ms;
use anyhow::Result;

/// The ids `select` (an `id, pid` query) gives whose owner is gone.
fn of_gone_owners(conn: &mut Conn, select: &str) -> Result<Vec<i64>> {
    let rows: Vec<(i64, i64)> = conn
        .rows(select, &[])?
        .iter()
        .filter_map(|row| Some((row.get(0).ok()?, row.get(1).ok()?)))
        .collect();
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let owners: Vec<i64> = rows.iter().map(|(_, owner)| *owner).collect();
    let alive = conn.alive(&owners)?;
    Ok(rows
        .into_iter()
        .zip(alive)
        .filter(|(_, alive)| !alive)
        .map(|((id, _), _)| id)
        .collect())
}

/// Marks the runs of owners that are gone as interrupted; returns them.
pub(super) fn mark_interrupted(conn: &mut Conn) -> Result<Vec<i64>> {
    // A run that waits for a person counts as running: its process waits.
    let orphans = of_gone_owners(
        conn,
        "SELECT id, pid FROM runs WHERE status IN ('running', 'waiting')",
    )?;
    for &id in &orphans {
        // Only if still running: another process may have marked it first.
        conn.exec(
            "UPDATE runs SET status = 'interrupted', ended_at = ?2,
               error = 'the process running it stopped before it finished'
             WHERE id = ?1 AND status IN ('running', 'waiting')",
            args![id, now_ms()],
        )?;
        conn.exec(
            "UPDATE tool_calls SET status = 'interrupted' WHERE run_id = ?1 AND status = 'running'",
            args![id],
        )?;
    }
    void_orphans(conn)?;
    Ok(orphans)
}

/// Makes void the waiting calls of owners that are gone.
pub(super) fn void_orphans(conn: &mut Conn) -> Result<()> {
    let orphans = of_gone_owners(
        conn,
        "SELECT id, pid FROM approvals WHERE status = 'waiting'",
    )?;
    for id in orphans {
        conn.exec(
            "UPDATE approvals SET status = 'void', decided_at = ?2,
               reason = 'the process waiting for it stopped' WHERE id = ?1 AND status = 'waiting'",
            args![id, now_ms()],
        )?;
    }
    Ok(())
}
