//! The run store: every agent conversation, workflow, scheduled run and
//! MCP call is a *run*, recorded as it happens: its messages, its tool
//! calls (arguments, approval decision, result, duration), its file
//! changes and its outcome. It lives in SQLite at `.toolcell/state.db`, or
//! in PostgreSQL when `[store] url` says so (shared by machines), with the
//! same tables ([`db`] runs the same SQL on both).
//!
//! A run is written `running` with the owner that runs it: the process id
//! in SQLite, a session's number in PostgreSQL. When a store is opened,
//! runs still `running` whose owner is gone were cut off (a crash, a kill):
//! they are marked `interrupted` and never replayed.

pub mod approvals;
pub mod conversation;
pub mod db;
mod deferred;
mod models;
mod orphans;
mod postgres;
mod runs;
mod schedules;
mod schema;
pub mod views;

pub use deferred::DeferredRecorder;
pub use models::{KnownBy, KnownModel};
pub use schedules::Trigger;

pub use postgres::PgTarget;

use crate::config::WorkspaceConfig;
use crate::config::store::StoreSetting;
use crate::llm::Message;
use anyhow::{Context, Result};
use db::Conn;
use rusqlite::Connection;
use serde::Serialize;
use std::path::Path;
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

/// The run store of one workspace.
pub struct Store {
    conn: Mutex<Conn>,
    /// The SQLite file, or the PostgreSQL URL (no password in it).
    location: String,
    /// What this process's runs are written with: its process id in SQLite,
    /// its session's number in PostgreSQL.
    owner: i64,
    /// Whether other machines share it (PostgreSQL).
    shared: bool,
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
    /// The store `config` names: its `[store]`, else the SQLite file in
    /// its state folder.
    pub fn for_workspace(config: &WorkspaceConfig) -> Result<Self> {
        match &config.store {
            StoreSetting::Local => Self::open(&config.state_dir()),
            StoreSetting::Postgres {
                url,
                password_env,
                ca_file,
            } => {
                let password = match password_env {
                    None => None,
                    Some(variable) => Some(std::env::var(variable).map_err(|_| {
                        anyhow::anyhow!(
                            "the run store {url} signs in with the password in ${variable}, which is not set\n  fix: set {variable} in the environment toolcell runs in"
                        )
                    })?),
                };
                Self::open_postgres(&PgTarget {
                    url: url.clone(),
                    password,
                    ca_file: ca_file.clone(),
                })
            }
        }
    }

    /// Opens (creating if needed) the SQLite store in `state_dir`, and
    /// marks runs whose process is gone as interrupted. Errors name the
    /// file, and for a damaged one say what to do ([`store_error`]).
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
                let mut conn = Conn::Sqlite(conn);
                orphans::mark_interrupted(&mut conn)?;
                Ok(conn)
            });
            match opened {
                Ok(conn) => {
                    return Ok(Self {
                        conn: Mutex::new(conn),
                        location: path.display().to_string(),
                        owner: i64::from(std::process::id()),
                        shared: false,
                    });
                }
                Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(BUSY_RETRY);
                }
                Err(e) => return Err(store_error(&path, e)),
            }
        }
    }

    /// Opens the store in PostgreSQL at `target`, making its tables if
    /// there are none, and marks runs whose owner is gone as interrupted.
    pub fn open_postgres(target: &PgTarget) -> Result<Self> {
        let context = || format!("the run store {}", target.url);
        let session = postgres::PgSession::connect(target).with_context(context)?;
        let owner = session.owner();
        let mut conn = Conn::Postgres(session);
        orphans::mark_interrupted(&mut conn).with_context(context)?;
        Ok(Self {
            conn: Mutex::new(conn),
            location: target.url.clone(),
            owner,
            shared: true,
        })
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

    /// Where the store is, for messages: its file, or its URL.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// What this process's runs are written with ([`Store::owner`]).
    pub fn owner(&self) -> i64 {
        self.owner
    }

    /// Whether the connection to a shared store is gone for good (see
    /// [`postgres::PgSession::is_closed`]); a file store never is.
    pub fn is_lost(&self) -> bool {
        match &mut *self.conn() {
            Conn::Sqlite(_) => false,
            Conn::Postgres(session) => session.is_closed(),
        }
    }

    /// Whether daemons of other machines may share this store.
    pub fn is_shared(&self) -> bool {
        self.shared
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Conn> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the connection; its errors name the store ([`store_error`]).
    fn with<T>(&self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        f(&mut self.conn()).map_err(|e| {
            if self.shared {
                e.context(format!("the run store {}", self.location))
            } else {
                store_error(Path::new(&self.location), e)
            }
        })
    }
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
            .exec(
                "UPDATE runs SET pid = 2147483647 WHERE id = ?1",
                db::args![dead],
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
