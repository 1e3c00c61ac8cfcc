//! Runs as they happen and as they are read back: a run's start and end,
//! its messages, its tool calls, its output lines and the file changes it
//! made (for undo).

use super::db::{Row, args};
use super::{
    CallRun, ChangeRecord, DecisionRecord, RunDetail, RunId, RunKind, RunStatus, RunSummary, Store,
    StoredChange, ToolCallRecord, now_ms,
};
use crate::llm::Message;
use anyhow::{Context, Result};
use serde_json::Value;
use std::time::Duration;

impl Store {
    /// Records the start of a run.
    pub fn start_run(&self, kind: RunKind, title: &str, model: Option<&str>) -> Result<RunId> {
        let owner = self.owner;
        self.with(|conn| {
            conn.value(
                "INSERT INTO runs (kind, title, model, status, started_at, pid) VALUES (?1, ?2, ?3, 'running', ?4, ?5) RETURNING id",
                args![kind.as_str(), title, model, now_ms(), owner],
            )
        })
    }

    /// Appends a message to a run's conversation.
    pub fn add_message(&self, run: RunId, message: &Message) -> Result<()> {
        let calls = if message.tool_calls.is_empty() {
            None
        } else {
            Some(serde_json::to_string(&message.tool_calls)?)
        };
        self.with(|conn| {
            conn.exec("INSERT INTO messages (run_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, at)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE run_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                args![
                    run,
                    message.role.as_str(),
                    &message.content,
                    &message.thinking,
                    calls,
                    &message.tool_call_id,
                    &message.tool_name,
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
            conn.value("INSERT INTO tool_calls (run_id, seq, call_id, tool, arguments, status, started_at)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM tool_calls WHERE run_id = ?1), ?2, ?3, ?4, 'running', ?5) RETURNING id",
                 args![run, call_id, tool, arguments, now_ms()])
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
            conn.exec("UPDATE tool_calls SET decision = ?2, status = ?3, result = ?4, error_kind = ?5, duration_ms = ?6, decided_by = ?7, decided_at = ?8 WHERE id = ?1",
                args![row, decided.decision, status, result, error_kind, duration.as_secs_f64() * 1000.0, decided.by, decided.at])?;
            Ok(())
        })
    }

    /// Records finished tool calls, each as a whole run, in one
    /// transaction: for callers that answer first and record after
    /// (`toolcell mcp`'s read-only calls, through [`super::DeferredRecorder`]),
    /// so no call's latency carries a commit.
    pub fn record_call_runs(&self, runs: &[CallRun]) -> Result<()> {
        let owner = self.owner;
        self.with(|conn| {
            conn.transaction(|tx| {
                for run in runs {
                    let ended = run.ended_at;
                    let started = ended - i64::try_from(run.duration.as_millis()).unwrap_or(0);
                    let id: i64 = tx.value("INSERT INTO runs (kind, title, status, started_at, ended_at, error, pid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
                        args![run.kind.as_str(), &run.title, run.status.as_str(), started, ended, &run.error, owner])?;
                    tx.exec("INSERT INTO tool_calls (run_id, seq, call_id, tool, arguments, status, started_at, decision, result, error_kind, duration_ms, decided_by, decided_at)
                         VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                        args![
                            id,
                            &run.call_id,
                            &run.tool,
                            &run.arguments,
                            run.call_status,
                            started,
                            run.decision,
                            &run.result,
                            run.error_kind,
                            run.duration.as_secs_f64() * 1000.0,
                            &run.decided_by,
                            run.decided_at
                        ])?;
                }
                Ok(())
            })
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
            conn.exec(
                "UPDATE runs SET status = ?2, ended_at = ?3, answer = ?4, error = ?5 WHERE id = ?1",
                args![run, status.as_str(), now_ms(), answer, error],
            )?;
            Ok(())
        })
    }

    /// Appends a line of a workflow's output.
    pub fn add_log(&self, run: RunId, level: &str, text: &str) -> Result<()> {
        self.with(|conn| {
            conn.exec("INSERT INTO run_logs (run_id, seq, level, text, at)
                 VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM run_logs WHERE run_id = ?1), ?2, ?3, ?4)",
                 args![run, level, text, now_ms()])?;
            Ok(())
        })
    }

    /// Keeps what a call changed.
    pub fn add_change(&self, change: &ChangeRecord) -> Result<()> {
        self.with(|conn| {
            conn.exec("INSERT INTO changes (run_id, call_row, kind, path, partner, before_state, before, after_state, partner_after_state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                 args![
                    change.run,
                    change.call_row,
                    &change.kind,
                    &change.path,
                    &change.partner,
                    &change.before_state,
                    &change.before,
                    &change.after_state,
                    &change.partner_after_state
                ])?;
            Ok(())
        })
    }

    /// The changes of `run` not undone yet, oldest first.
    pub fn changes(&self, run: RunId) -> Result<Vec<StoredChange>> {
        self.with(|conn| {
            conn.rows(
                "SELECT id, kind, path, partner, before_state, before, after_state, partner_after_state
                 FROM changes WHERE run_id = ?1 AND undone = 0 ORDER BY id",
                args![run],
            )?
            .iter()
            .map(|row| {
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
            })
            .collect()
        })
    }

    /// Marks a change as undone.
    pub fn mark_undone(&self, change: i64) -> Result<()> {
        self.with(|conn| {
            conn.exec("UPDATE changes SET undone = 1 WHERE id = ?1", args![change])?;
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
        // The filters are spelt out rather than written `(?2 IS NULL OR …)`,
        // which PostgreSQL cannot type.
        let mut filters = Vec::new();
        let mut values = vec![limit.into()];
        for (column, wanted) in [("status", status), ("schedule", schedule)] {
            if let Some(wanted) = wanted {
                values.push(wanted.into());
                filters.push(format!("r.{column} = ?{}", values.len()));
            }
        }
        let filter = if filters.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", filters.join(" AND "))
        };
        self.with(|conn| {
            conn.rows(
                &format!("{SUMMARY_SELECT}{filter} ORDER BY r.id DESC LIMIT ?1"),
                &values,
            )?
            .iter()
            .map(summary_from_row)
            .collect()
        })
    }

    /// One run with its messages and tool calls.
    pub fn run(&self, id: RunId) -> Result<Option<RunDetail>> {
        self.with(|conn| {
            let Some(summary) = conn.row(&format!("{SUMMARY_SELECT} WHERE r.id = ?1"), args![id])?
            else {
                return Ok(None);
            };
            let summary = summary_from_row(&summary)?;
            let messages = conn
                .rows(
                    "SELECT role, content, thinking, tool_calls, tool_call_id, tool_name FROM messages WHERE run_id = ?1 ORDER BY seq",
                    args![id],
                )?
                .iter()
                .map(|row| {
                    let calls: Option<String> = row.get(3)?;
                    let message = serde_json::json!({
                        "role": row.get::<String>(0)?,
                        "content": row.get::<String>(1)?,
                        "thinking": row.get::<String>(2)?,
                        "tool_calls": calls.and_then(|c| serde_json::from_str::<Value>(&c).ok()).unwrap_or(Value::Array(vec![])),
                        "tool_call_id": row.get::<Option<String>>(4)?,
                        "tool_name": row.get::<Option<String>>(5)?,
                    });
                    serde_json::from_value::<Message>(message)
                        .context("a stored message is unreadable")
                })
                .collect::<Result<Vec<_>>>()?;
            let tool_calls = conn
                .rows(
                    "SELECT seq, call_id, tool, arguments, decision, status, result, error_kind, duration_ms, started_at, decided_by, decided_at
                     FROM tool_calls WHERE run_id = ?1 ORDER BY seq",
                    args![id],
                )?
                .iter()
                .map(|row| {
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
                })
                .collect::<Result<Vec<_>>>()?;
            let logs = conn
                .rows(
                    "SELECT level, text FROM run_logs WHERE run_id = ?1 ORDER BY seq",
                    args![id],
                )?
                .iter()
                .map(|row| Ok((row.get(0)?, row.get(1)?)))
                .collect::<Result<Vec<_>>>()?;
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

fn summary_from_row(row: &Row) -> Result<RunSummary> {
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
