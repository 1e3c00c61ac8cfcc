//! Runs and parked calls whose process is gone (a crash, a kill): runs are
//! marked `interrupted` and never replayed, parked calls `void`. Found
//! whenever a store is opened, and before the inbox is read or answered.

use super::now_ms;
use anyhow::Result;
use rusqlite::{Connection, params};

/// The ids `select` (an `id, pid` query) gives whose process is gone.
fn of_dead_processes(conn: &Connection, select: &str) -> Result<Vec<i64>> {
    let mut query = conn.prepare_cached(select)?;
    let rows = query
        .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?)))?
        .filter_map(|row| row.ok())
        .filter(|(_, pid)| !process_alive(*pid))
        .map(|(id, _)| id)
        .collect();
    Ok(rows)
}

/// Marks the runs of processes that are gone as interrupted.
pub(super) fn mark_interrupted(conn: &Connection) -> Result<()> {
    // A run that waits for a person counts as running: its process waits.
    let orphans = of_dead_processes(
        conn,
        "SELECT id, pid FROM runs WHERE status IN ('running', 'waiting')",
    )?;
    for id in orphans {
        conn.prepare_cached(
            "UPDATE runs SET status = 'interrupted', ended_at = ?2,
               error = 'the process running it stopped before it finished' WHERE id = ?1",
        )?
        .execute(params![id, now_ms()])?;
        conn.prepare_cached(
            "UPDATE tool_calls SET status = 'interrupted' WHERE run_id = ?1 AND status = 'running'",
        )?
        .execute(params![id])?;
    }
    void_orphans(conn)
}

/// Whether process `pid` still exists.
fn process_alive(pid: i64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // Signal 0 checks for existence without sending anything; EPERM means
    // it exists but belongs to someone else.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Makes void the waiting calls of processes that are gone.
pub(super) fn void_orphans(conn: &rusqlite::Connection) -> Result<()> {
    let orphans = of_dead_processes(
        conn,
        "SELECT id, pid FROM approvals WHERE status = 'waiting'",
    )?;
    for id in orphans {
        conn.prepare_cached(
            "UPDATE approvals SET status = 'void', decided_at = ?2,
               reason = 'the process waiting for it stopped' WHERE id = ?1",
        )?
        .execute(params![id, now_ms()])?;
    }
    Ok(())
}
