//! The run store: every agent conversation (and later every workflow and
//! scheduled run) is a *run*, recorded in SQLite at `.toolcell/state.db` as
//! it happens: its messages, its tool calls (arguments, approval decision,
//! result, duration) and its outcome.
//!
//! A run is written `running` with the process id that owns it. When a store
//! is opened, runs still `running` whose process is gone were cut off (a
//! crash, a kill): they are marked `interrupted` and never replayed.

pub mod approvals;
pub mod conversation;
mod deferred;
mod models;
mod orphans;
mod schedules;
mod schema;
pub mod views;

pub use deferred::DeferredRecorder;
pub use models::{KnownBy, KnownModel};
pub use schedules::Trigger;

use crate::llm::Message;
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// The database's file name inside the workspace's state folder.
pub const DB_FILE: &str = "state.db";

/// Another toolcell writing at the same moment (a daemon, a second chat)
/// holds the lock for milliseconds; wait rather than fail.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Pause between attempts at opening a store SQLite says is busy.
const BUSY_RETRY: Duration = Duration::from_millis(20);

/// Whether `error` is SQLite saying another connection holds the store.
fn is_busy(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<rusqlite::Error>()
            .and_then(rusqlite::Error::sqlite_error_code)
            .is_some_and(|code| {
                matches!(
                    code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                )
            })
    })
}

/// A run's id.
pub type RunId = i64;

/// How a run ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    Running,
    /// The model answered (agent) or the script finished (workflow).
    Succeeded,
    /// The round budget ran out before an answer.
    Incomplete,
    Failed,
    /// Stopped by the user (Ctrl-C, or `q` at an approval).
    Cancelled,
    /// Cut off by a crash or a kill; found on a later start.
    Interrupted,
    /// Stopped by its wall-clock limit.
    TimedOut,
    /// Not started: the schedule's previous run was still running.
    Skipped,
    /// Running, and waiting for a person to decide a parked call
    /// (`toolcell approvals`).
    Waiting,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Incomplete => "incomplete",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
            RunStatus::TimedOut => "timed-out",
            RunStatus::Skipped => "skipped",
            RunStatus::Waiting => "waiting",
        }
    }
}

/// What made a run, as recorded in its `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    /// `toolcell chat`: an agent conversation.
    Chat,
    /// `toolcell run`: a workflow.
    Workflow,
    /// One call over `toolcell mcp`.
    Mcp,
    /// A scheduled workflow (`toolcell daemon`, `toolcell schedule run`).
    Schedule,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Chat => "chat",
            RunKind::Workflow => "workflow",
            RunKind::Mcp => "mcp",
            RunKind::Schedule => "schedule",
        }
    }
}

/// One run, as listed.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub id: RunId,
    pub kind: String,
    pub title: String,
    pub model: Option<String>,
    pub status: String,
    /// Unix milliseconds.
    pub started_at: i64,
    pub ended_at: Option<i64>,
    pub answer: Option<String>,
    pub error: Option<String>,
    pub tool_calls: i64,
    /// For a scheduled run: its schedule, what started it (schedule, manual,
    /// catch-up, retry) and the fire time it was for (unix ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduled_at: Option<i64>,
    /// The run this one continues (`toolcell chat --resume`), and how many
    /// messages after its system prompt were carried from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumes: Option<RunId>,
    #[serde(skip_serializing_if = "is_zero")]
    pub carried: i64,
    /// The project instructions file in its prompt (`AGENTS.md`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// One tool call, as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct ToolCallRecord {
    pub seq: i64,
    pub call_id: String,
    pub tool: String,
    pub arguments: String,
    /// auto | approved | approved-for-run | declined | quit | not-asked
    pub decision: Option<String>,
    /// Who or what decided: `rule "notes are free" (toolcell.toml:3)`,
    /// `grant: --approve write_file`, `person`, `nobody to ask`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// When, in Unix milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    /// running | done | failed | denied | cancelled
    pub status: String,
    pub result: Option<String>,
    pub error_kind: Option<String>,
    pub duration_ms: Option<f64>,
    pub started_at: i64,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct RunDetail {
    #[serde(flatten)]
    pub summary: RunSummary,
    pub messages: Vec<Message>,
    pub tool_calls: Vec<ToolCallRecord>,
    /// A workflow's output: `(level, text)`.
    pub logs: Vec<(String, String)>,
}

/// A file change kept for undo (see [`crate::effect::changes`]).
#[derive(Debug, Clone)]
pub struct ChangeRecord {
    pub run: RunId,
    pub call_row: i64,
    pub kind: String,
    pub path: String,
    pub partner: Option<String>,
    pub before_state: String,
    pub before: Option<Vec<u8>>,
    pub after_state: String,
    pub partner_after_state: Option<String>,
}

/// A stored change, with its row id.
#[derive(Debug, Clone)]
pub struct StoredChange {
    pub id: i64,
    pub kind: String,
    pub path: String,
    pub partner: Option<String>,
    pub before_state: String,
    pub before: Option<Vec<u8>>,
    pub after_state: String,
    pub partner_after_state: Option<String>,
}

/// The SQLite store of one workspace.
pub struct Store {
    conn: Mutex<Connection>,
    path: PathBuf,
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

/// How a call was decided, as recorded.
#[derive(Debug, Clone, Copy)]
pub struct DecisionRecord<'a> {
    /// auto | approved | approved-for-run | declined | quit | not-asked
    pub decision: &'a str,
    /// Who or what decided ([`ToolCallRecord::decided_by`]).
    pub by: Option<&'a str>,
    /// When, in Unix milliseconds.
    pub at: Option<i64>,
}

/// A run that was one tool call, already finished (see
/// [`Store::record_call_runs`]).
#[derive(Debug, Clone)]
pub struct CallRun {
    pub kind: RunKind,
    pub title: String,
    pub status: RunStatus,
    pub error: Option<String>,
    pub call_id: String,
    pub tool: String,
    pub arguments: String,
    /// done | failed | denied | cancelled
    pub call_status: &'static str,
    pub decision: &'static str,
    pub decided_by: Option<String>,
    pub decided_at: Option<i64>,
    pub result: String,
    pub error_kind: Option<&'static str>,
    pub duration: Duration,
    /// When the call ended, in Unix milliseconds ([`now_ms`]).
    pub ended_at: i64,
}

impl Store {
    /// Opens (creating if needed) the store in `state_dir`, and marks runs
    /// whose process is gone as interrupted. Errors name the file, and for
    /// a damaged one say what to do ([`store_error`]).
    pub fn open(state_dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(state_dir)
            .with_context(|| format!("cannot create {}", state_dir.display()))?;
        let path = state_dir.join(DB_FILE);
        // Opening can meet a moment SQLite answers "busy" at once, without
        // waiting: another process opening the same store, or the last one
        // leaving it (checkpointing its log). Tried again for a while.
        let started = std::time::Instant::now();
        loop {
            let opened = Self::connect(&path).and_then(|conn| {
                orphans::mark_interrupted(&conn)?;
                Ok(conn)
            });
            match opened {
                Ok(conn) => {
                    return Ok(Self {
                        conn: Mutex::new(conn),
                        path,
                    });
                }
                Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(BUSY_RETRY);
                }
                Err(e) => return Err(store_error(&path, e)),
            }
        }
    }

    /// The connection to `path`, set up and migrated.
    fn connect(path: &Path) -> Result<Connection> {
        let conn = Connection::open(path).context("cannot open it")?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // Asked only when it is not yet a write-ahead log: changing the
        // mode takes a lock that is not waited for.
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            conn.pragma_update(None, "journal_mode", "WAL")?;
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&conn).context("cannot set up its tables")?;
        Ok(conn)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the connection; its errors name the file ([`store_error`]).
    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        f(&mut self.conn()).map_err(|e| store_error(&self.path, e))
    }

    /// Records the start of a run.
    pub fn start_run(&self, kind: RunKind, title: &str, model: Option<&str>) -> Result<RunId> {
        self.with(|conn| {
            conn.prepare_cached("INSERT INTO runs (kind, title, model, status, started_at, pid) VALUES (?1, ?2, ?3, 'running', ?4, ?5)")?.execute(params![kind.as_str(), title, model, now_ms(), std::process::id()])?;
            Ok(conn.last_insert_rowid())
        })
    }

    /// Appends a message to a run's conversation.
    pub fn add_message(&self, run: RunId, message: &Message) -> Result<()> {
        self.with(|conn| {
            let calls = if message.tool_calls.is_empty() {
                None
            } else {
                Some(serde_json::to_string(&message.tool_calls)?)
            };
            conn.prepare_cached("INSERT INTO messages (run_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, at)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE run_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?.execute(params![
                    run,
                    message.role.as_str(),
                    message.content,
                    message.thinking,
                    calls,
                    message.tool_call_id,
                    message.tool_name,
                    now_ms()
                ])?;
            Ok(())
        })
    }

    /// Records a tool call as it starts; returns its row for [`Self::finish_tool_call`].
    pub fn start_tool_call(
        &self,
        run: RunId,
        call_id: &str,
        tool: &str,
        arguments: &str,
    ) -> Result<i64> {
        self.with(|conn| {
            conn.prepare_cached("INSERT INTO tool_calls (run_id, seq, call_id, tool, arguments, status, started_at)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tool_calls WHERE run_id = ?1), ?2, ?3, ?4, 'running', ?5)")?.execute(params![run, call_id, tool, arguments, now_ms()])?;
            Ok(conn.last_insert_rowid())
        })
    }

    /// Records how a tool call ended, and who decided it ([`DecisionRecord`]).
    pub fn finish_tool_call(
        &self,
        row: i64,
        decided: &DecisionRecord<'_>,
        status: &str,
        result: &str,
        error_kind: Option<&str>,
        duration: Duration,
    ) -> Result<()> {
        self.with(|conn| {
            conn.prepare_cached("UPDATE tool_calls SET decision = ?2, status = ?3, result = ?4, error_kind = ?5, duration_ms = ?6, decided_by = ?7, decided_at = ?8 WHERE id = ?1")?.execute(params![row, decided.decision, status, result, error_kind, duration.as_secs_f64() * 1000.0, decided.by, decided.at])?;
            Ok(())
        })
    }

    /// Records finished tool calls, each as a whole run, in one
    /// transaction: for callers that answer first and record after
    /// (`toolcell mcp`'s read-only calls, through [`DeferredRecorder`]), so
    /// no call's latency carries a commit.
    pub fn record_call_runs(&self, runs: &[CallRun]) -> Result<()> {
        self.with(|conn| {
            let tx = conn.transaction()?;
            for run in runs {
                let ended = run.ended_at;
                let started = ended - i64::try_from(run.duration.as_millis()).unwrap_or(0);
                tx.prepare_cached("INSERT INTO runs (kind, title, status, started_at, ended_at, error, pid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?
                    .execute(params![run.kind.as_str(), run.title, run.status.as_str(), started, ended, run.error, std::process::id()])?;
                let id = tx.last_insert_rowid();
                tx.prepare_cached("INSERT INTO tool_calls (run_id, seq, call_id, tool, arguments, status, started_at, decision, result, error_kind, duration_ms, decided_by, decided_at)
                     VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)")?
                    .execute(params![
                        id,
                        run.call_id,
                        run.tool,
                        run.arguments,
                        run.call_status,
                        started,
                        run.decision,
                        run.result,
                        run.error_kind,
                        run.duration.as_secs_f64() * 1000.0,
                        run.decided_by,
                        run.decided_at
                    ])?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// Records how a run ended.
    pub fn finish_run(
        &self,
        run: RunId,
        status: RunStatus,
        answer: Option<&str>,
        error: Option<&str>,
    ) -> Result<()> {
        self.with(|conn| {
            conn.prepare_cached(
                "UPDATE runs SET status = ?2, ended_at = ?3, answer = ?4, error = ?5 WHERE id = ?1",
            )?
            .execute(params![run, status.as_str(), now_ms(), answer, error])?;
            Ok(())
        })
    }

    /// Appends a line of a workflow's output.
    pub fn add_log(&self, run: RunId, level: &str, text: &str) -> Result<()> {
        self.with(|conn| {
            conn.prepare_cached("INSERT INTO run_logs (run_id, seq, level, text, at)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_logs WHERE run_id = ?1), ?2, ?3, ?4)")?.execute(params![run, level, text, now_ms()])?;
            Ok(())
        })
    }

    /// Keeps what a call changed.
    pub fn add_change(&self, change: &ChangeRecord) -> Result<()> {
        self.with(|conn| {
            conn.prepare_cached("INSERT INTO changes (run_id, call_row, kind, path, partner, before_state, before, after_state, partner_after_state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")?.execute(params![
                    change.run,
                    change.call_row,
                    change.kind,
                    change.path,
                    change.partner,
                    change.before_state,
                    change.before,
                    change.after_state,
                    change.partner_after_state
                ])?;
            Ok(())
        })
    }

    /// The changes of `run` not undone yet, oldest first.
    pub fn changes(&self, run: RunId) -> Result<Vec<StoredChange>> {
        self.with(|conn| {
            let mut query = conn.prepare(
                "SELECT id, kind, path, partner, before_state, before, after_state, partner_after_state
                 FROM changes WHERE run_id = ?1 AND undone = 0 ORDER BY id",
            )?;
            let rows = query
                .query_map(params![run], |row| {
                    Ok(StoredChange {
                        id: row.get(0)?,
                        kind: row.get(1)?,
                        path: row.get(2)?,
                        partner: row.get(3)?,
                        before_state: row.get(4)?,
                        before: row.get(5)?,
                        after_state: row.get(6)?,
                        partner_after_state: row.get(7)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// Marks a change as undone.
    pub fn mark_undone(&self, change: i64) -> Result<()> {
        self.with(|conn| {
            conn.prepare_cached("UPDATE changes SET undone = 1 WHERE id = ?1")?
                .execute(params![change])?;
            Ok(())
        })
    }

    /// The latest runs, newest first; only those with `status`, and of
    /// `schedule`, when given.
    pub fn list_runs(
        &self,
        limit: usize,
        status: Option<&str>,
        schedule: Option<&str>,
    ) -> Result<Vec<RunSummary>> {
        self.with(|conn| {
            let mut query = conn.prepare(&format!(
                "{SUMMARY_SELECT} WHERE (?2 IS NULL OR r.status = ?2) AND (?3 IS NULL OR r.schedule = ?3)
                 ORDER BY r.id DESC LIMIT ?1"
            ))?;
            let rows = query
                .query_map(params![limit as i64, status, schedule], summary_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows)
        })
    }

    /// One run with its messages and tool calls.
    pub fn run(&self, id: RunId) -> Result<Option<RunDetail>> {
        self.with(|conn| {
            let summary = conn
                .query_row(
                    &format!("{SUMMARY_SELECT} WHERE r.id = ?1"),
                    params![id],
                    summary_from_row,
                )
                .optional()?;
            let Some(summary) = summary else {
                return Ok(None);
            };
            let mut query = conn.prepare(
                "SELECT role, content, thinking, tool_calls, tool_call_id, tool_name FROM messages WHERE run_id = ?1 ORDER BY seq",
            )?;
            let messages = query
                .query_map(params![id], |row| {
                    let role: String = row.get(0)?;
                    let calls: Option<String> = row.get(3)?;
                    Ok(serde_json::json!({
                        "role": role,
                        "content": row.get::<_, String>(1)?,
                        "thinking": row.get::<_, String>(2)?,
                        "tool_calls": calls.and_then(|c| serde_json::from_str::<Value>(&c).ok()).unwrap_or(Value::Array(vec![])),
                        "tool_call_id": row.get::<_, Option<String>>(4)?,
                        "tool_name": row.get::<_, Option<String>>(5)?,
                    }))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?
                .into_iter()
                .map(serde_json::from_value)
                .collect::<Result<Vec<Message>, _>>()
                .context("a stored message is unreadable")?;
            let mut query = conn.prepare(
                "SELECT seq, call_id, tool, arguments, decision, status, result, error_kind, duration_ms, started_at, decided_by, decided_at
                 FROM tool_calls WHERE run_id = ?1 ORDER BY seq",
            )?;
            let tool_calls = query
                .query_map(params![id], |row| {
                    Ok(ToolCallRecord {
                        seq: row.get(0)?,
                        call_id: row.get(1)?,
                        tool: row.get(2)?,
                        arguments: row.get(3)?,
                        decision: row.get(4)?,
                        status: row.get(5)?,
                        result: row.get(6)?,
                        error_kind: row.get(7)?,
                        duration_ms: row.get(8)?,
                        started_at: row.get(9)?,
                        decided_by: row.get(10)?,
                        decided_at: row.get(11)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut query =
                conn.prepare("SELECT level, text FROM run_logs WHERE run_id = ?1 ORDER BY seq")?;
            let logs = query
                .query_map(params![id], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Some(RunDetail {
                summary,
                messages,
                tool_calls,
                logs,
            }))
        })
    }
}

const SUMMARY_SELECT: &str =
    "SELECT r.id, r.kind, r.title, r.model, r.status, r.started_at, r.ended_at, r.answer, r.error,
    (SELECT COUNT(*) FROM tool_calls t WHERE t.run_id = r.id), r.schedule, r.trigger, r.scheduled_at,
    r.resumes, r.carried, r.instructions
    FROM runs r";

fn summary_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        id: row.get(0)?,
        kind: row.get(1)?,
        title: row.get(2)?,
        model: row.get(3)?,
        status: row.get(4)?,
        started_at: row.get(5)?,
        ended_at: row.get(6)?,
        answer: row.get(7)?,
        error: row.get(8)?,
        tool_calls: row.get(9)?,
        schedule: row.get(10)?,
        trigger: row.get(11)?,
        scheduled_at: row.get(12)?,
        resumes: row.get(13)?,
        carried: row.get(14)?,
        instructions: row.get(15)?,
    })
}

/// `error`, met using the store at `path`, with the file named. When SQLite
/// says the file is damaged ("file is not a database", "database disk image
/// is malformed") it also says what to do: nothing toolcell does can repair
/// it, and a new store is made when there is none.
fn store_error(path: &Path, error: anyhow::Error) -> anyhow::Error {
    let damaged = error.chain().find_map(|cause| {
        let sqlite = cause.downcast_ref::<rusqlite::Error>()?;
        matches!(
            sqlite.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
        )
        .then_some(sqlite)
    });
    let Some(damaged) = damaged else {
        return error.context(format!("the run store {}", path.display()));
    };
    let shown = path.display();
    let folder = path.parent().unwrap_or(Path::new(".")).display();
    anyhow::anyhow!(
        "the run store {shown} is damaged ({damaged})\n  fix: move it away, with the {DB_FILE}-wal and {DB_FILE}-shm files beside it (`mkdir {folder}/broken && mv {shown}* {folder}/broken/`); toolcell then makes a new, empty store, and the old runs stay in the moved file (`sqlite3 {folder}/broken/{DB_FILE} .recover` may save some)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_a_dead_process_is_interrupted_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let live = store.start_run(RunKind::Chat, "live", None).unwrap();
        let dead = store.start_run(RunKind::Chat, "dead", None).unwrap();
        store.add_message(dead, &Message::user("hi")).unwrap();
        let row = store
            .start_tool_call(dead, "c1", "read_file", "{}")
            .unwrap();
        assert!(row > 0);
        // No process has pid i32::MAX on Linux (pid_max is at most 2^22).
        store
            .conn()
            .execute(
                "UPDATE runs SET pid = 2147483647 WHERE id = ?1",
                params![dead],
            )
            .unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        let runs = store.list_runs(10, None, None).unwrap();
        let status = |id| runs.iter().find(|r| r.id == id).unwrap().status.clone();
        assert_eq!(status(live), "running");
        assert_eq!(status(dead), "interrupted");
        let detail = store.run(dead).unwrap().unwrap();
        assert_eq!(detail.messages, vec![Message::user("hi")]);
        assert_eq!(detail.tool_calls[0].status, "interrupted");
    }
}
