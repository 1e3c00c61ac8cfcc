//! The inbox: calls parked for a person to decide later (a schedule's run
//! that reaches a call nobody granted, `toolcell run --wait-approval`).
//! The waiting process writes the call with exactly what the terminal
//! prompt would show and polls its row; `toolcell approve` and `toolcell
//! deny`, from any process, write the answer. A row whose waiting process
//! is gone is void: its run was interrupted and is never replayed.

use super::db::{Row, args};
use super::orphans::void_orphans;
use super::{RunId, Store, now_ms};
use anyhow::{Result, bail};
use serde::Serialize;

/// Where a parked call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParkedStatus {
    Waiting,
    Approved,
    ApprovedForRun,
    Denied,
    TimedOut,
    /// The process waiting for it stopped: nothing will run it.
    Void,
}

impl ParkedStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ParkedStatus::Waiting => "waiting",
            ParkedStatus::Approved => "approved",
            ParkedStatus::ApprovedForRun => "approved-for-run",
            ParkedStatus::Denied => "denied",
            ParkedStatus::TimedOut => "timed-out",
            ParkedStatus::Void => "void",
        }
    }

    fn from_word(word: &str) -> Self {
        [
            ParkedStatus::Waiting,
            ParkedStatus::Approved,
            ParkedStatus::ApprovedForRun,
            ParkedStatus::Denied,
            ParkedStatus::TimedOut,
        ]
        .into_iter()
        .find(|s| s.as_str() == word)
        .unwrap_or(ParkedStatus::Void)
    }
}

/// One parked call, as listed.
#[derive(Debug, Clone, Serialize)]
pub struct ParkedCall {
    pub id: i64,
    pub run: Option<RunId>,
    pub tool: String,
    pub arguments: String,
    /// What the terminal prompt would show for it.
    pub shown: String,
    /// Whether "yes for this run" may be given.
    pub for_run: bool,
    pub status: ParkedStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub asked_at: i64,
    pub expires_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
}

/// A call to park.
pub struct Parking<'a> {
    pub run: Option<RunId>,
    pub tool: &'a str,
    pub arguments: &'a str,
    pub shown: &'a str,
    pub for_run: bool,
    pub expires_at: i64,
}

const COLUMNS: &str = "id, run_id, tool, arguments, shown, for_run, status, reason, asked_at, expires_at, decided_at, decided_by";

fn parked(row: &Row) -> Result<ParkedCall> {
    Ok(ParkedCall {
        id: row.get(0)?,
        run: row.get(1)?,
        tool: row.get(2)?,
        arguments: row.get(3)?,
        shown: row.get(4)?,
        for_run: row.get(5)?,
        status: ParkedStatus::from_word(&row.get::<String>(6)?),
        reason: row.get(7)?,
        asked_at: row.get(8)?,
        expires_at: row.get(9)?,
        decided_at: row.get(10)?,
        decided_by: row.get(11)?,
    })
}

impl Store {
    /// Parks a call, and marks its run `waiting`; returns its id.
    pub fn park(&self, call: &Parking<'_>) -> Result<i64> {
        let owner = self.owner;
        self.with(|conn| {
            conn.transaction(|tx| {
                let id: i64 = tx.value(
                    "INSERT INTO approvals (run_id, tool, arguments, shown, for_run, status, asked_at, expires_at, pid)
                     VALUES (?1, ?2, ?3, ?4, ?5, 'waiting', ?6, ?7, ?8) RETURNING id",
                    args![
                        call.run,
                        call.tool,
                        call.arguments,
                        call.shown,
                        call.for_run,
                        now_ms(),
                        call.expires_at,
                        owner
                    ],
                )?;
                if let Some(run) = call.run {
                    tx.exec(
                        "UPDATE runs SET status = 'waiting' WHERE id = ?1 AND status = 'running'",
                        args![run],
                    )?;
                }
                Ok(id)
            })
        })
    }

    /// A parked call, as it stands now.
    pub fn parked(&self, id: i64) -> Result<Option<ParkedCall>> {
        self.with(|conn| {
            conn.row(
                &format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"),
                args![id],
            )?
            .as_ref()
            .map(parked)
            .transpose()
        })
    }

    /// The parked calls: those waiting, or all of them (`history`), newest
    /// first. Calls whose waiting process is gone are made void first.
    pub fn parked_calls(&self, history: bool) -> Result<Vec<ParkedCall>> {
        self.with(|conn| {
            void_orphans(conn)?;
            let filter = if history {
                ""
            } else {
                "WHERE status = 'waiting'"
            };
            conn.rows(
                &format!("SELECT {COLUMNS} FROM approvals {filter} ORDER BY id DESC"),
                &[],
            )?
            .iter()
            .map(parked)
            .collect()
        })
    }

    /// Decides a waiting call: `status` (approved, approved-for-run,
    /// denied, timed-out), with a reason and who decided. Refused, saying
    /// why, for a call that is not waiting or whose process is gone.
    pub fn decide_parked(
        &self,
        id: i64,
        status: ParkedStatus,
        reason: Option<&str>,
        by: &str,
    ) -> Result<()> {
        self.with(|conn| {
            void_orphans(conn)?;
            let changed = conn.exec(
                "UPDATE approvals SET status = ?2, reason = ?3, decided_at = ?4, decided_by = ?5
                 WHERE id = ?1 AND status = 'waiting'",
                args![id, status.as_str(), reason, now_ms(), by],
            )?;
            if changed == 1 {
                return Ok(());
            }
            let now: Option<String> = conn
                .row("SELECT status FROM approvals WHERE id = ?1", args![id])?
                .map(|row| row.get(0))
                .transpose()?;
            match now.as_deref() {
                None => bail!("there is no parked call {id}\n  fix: `toolcell approvals` lists the calls waiting"),
                Some("void") => bail!(
                    "call {id} is void: the process that waited for it stopped, so its run was interrupted and is never replayed\n  fix: run it again; the call will be asked anew"
                ),
                Some(other) => bail!("call {id} was decided already ({other})"),
            }
        })
    }

    /// Marks `run` running again after its parked call was decided.
    pub fn resume_run(&self, run: RunId) -> Result<()> {
        self.with(|conn| {
            conn.exec(
                "UPDATE runs SET status = 'running' WHERE id = ?1 AND status = 'waiting'",
                args![run],
            )?;
            Ok(())
        })
    }
}
