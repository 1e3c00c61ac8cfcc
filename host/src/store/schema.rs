//! The store's tables, created or upgraded when a store is opened. Each
//! entry of [`MIGRATIONS`] runs once, in order. SQLite's `user_version`
//! records how many have run; PostgreSQL runs the same migrations, their
//! types named as it names them ([`for_postgres`]), and records the count in
//! a table of its own ([`super::postgres`]).

use rusqlite::Connection;

pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,              -- chat | workflow | schedule
    title       TEXT NOT NULL,
    model       TEXT,
    status      TEXT NOT NULL,              -- see RunStatus
    started_at  INTEGER NOT NULL,           -- unix ms
    ended_at    INTEGER,
    pid         INTEGER NOT NULL,           -- the process running it
    answer      TEXT,
    error       TEXT
);
CREATE TABLE messages (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    role         TEXT NOT NULL,
    content      TEXT NOT NULL,
    thinking     TEXT NOT NULL,
    tool_calls   TEXT,                      -- JSON array of ToolCall
    tool_call_id TEXT,
    tool_name    TEXT,
    at           INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE tool_calls (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq         INTEGER NOT NULL,
    call_id     TEXT NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,              -- as the model wrote them
    decision    TEXT,
    status      TEXT NOT NULL,
    result      TEXT,
    error_kind  TEXT,
    duration_ms REAL,
    started_at  INTEGER NOT NULL
);
CREATE INDEX tool_calls_by_run ON tool_calls(run_id, seq);
CREATE INDEX runs_by_status ON runs(status, id);
"#,
    r#"
CREATE TABLE changes (
    id                  INTEGER PRIMARY KEY,
    run_id              INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    call_row            INTEGER NOT NULL,
    kind                TEXT NOT NULL,      -- file | move
    path                TEXT NOT NULL,      -- a move: its source
    partner             TEXT,               -- a move: its destination
    before_state        TEXT NOT NULL,      -- absent | folder | other | sha256
    before              BLOB,               -- a file's bytes before the call
    after_state         TEXT NOT NULL,
    partner_after_state TEXT,
    undone              INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX changes_by_run ON changes(run_id, id);
"#,
    r#"
CREATE TABLE run_logs (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    level  TEXT NOT NULL,               -- print | debug | info | warn | error | tool
    text   TEXT NOT NULL,
    at     INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"#,
    r#"
CREATE TABLE models (
    server         TEXT NOT NULL,       -- protocol and base URL
    model          TEXT NOT NULL,
    tools          INTEGER,             -- 1 | 0 | NULL: the server did not say
    thinking       INTEGER,
    context_length INTEGER,
    source         TEXT NOT NULL,       -- probe | refusal
    checked_at     INTEGER NOT NULL,    -- unix ms
    PRIMARY KEY (server, model)
);
"#,
    r#"
ALTER TABLE runs ADD COLUMN schedule TEXT;           -- the schedule that started it
ALTER TABLE runs ADD COLUMN trigger TEXT;            -- schedule | manual | catch-up | retry
ALTER TABLE runs ADD COLUMN scheduled_at INTEGER;    -- unix ms: the fire time it was for
CREATE INDEX runs_by_schedule ON runs(schedule, id);
CREATE TABLE schedule_state (
    name      TEXT PRIMARY KEY,
    last_fire INTEGER NOT NULL                       -- unix ms: the latest fire time handled
);
"#,
    r#"
ALTER TABLE models ADD COLUMN dialect TEXT;          -- the tool-call dialect its template teaches
"#,
    r#"
ALTER TABLE tool_calls ADD COLUMN decided_by TEXT;   -- a rule, the grant, a person, nobody to ask
ALTER TABLE tool_calls ADD COLUMN decided_at INTEGER; -- unix ms: when that was decided
"#,
    r#"
CREATE TABLE approvals (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER REFERENCES runs(id) ON DELETE CASCADE,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    shown       TEXT NOT NULL,          -- what the terminal prompt would show
    for_run     INTEGER NOT NULL,       -- 1: "yes for this run" may be given
    status      TEXT NOT NULL,          -- waiting | approved | approved-for-run | denied | timed-out | void
    reason      TEXT,
    asked_at    INTEGER NOT NULL,       -- unix ms
    expires_at  INTEGER NOT NULL,
    decided_at  INTEGER,
    decided_by  TEXT,
    pid         INTEGER NOT NULL        -- the process waiting for it
);
CREATE INDEX approvals_by_status ON approvals(status, id);
"#,
    r#"
ALTER TABLE runs ADD COLUMN resumes INTEGER;                 -- the run it continues (chat --resume)
ALTER TABLE runs ADD COLUMN carried INTEGER NOT NULL DEFAULT 0; -- messages after the system prompt carried from it
ALTER TABLE runs ADD COLUMN instructions TEXT;            -- the project instructions file in its prompt
"#,
];

/// Brings the schema up to date. Each step re-reads the version inside an
/// immediate transaction, so two processes opening a new store at once do
/// not both run it.
pub fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let done: usize = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        let step = if done > index {
            Ok(())
        } else {
            conn.execute_batch(migration)
                .and_then(|()| conn.execute_batch(&format!("PRAGMA user_version = {}", index + 1)))
        };
        match step {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
    Ok(())
}

/// A migration as PostgreSQL takes it: SQLite's row ids become identity
/// columns, and its storage classes PostgreSQL's types of the same range
/// (64-bit integers, double precision, bytes).
pub fn for_postgres(migration: &str) -> String {
    let sql = migration.replace(
        "INTEGER PRIMARY KEY",
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    );
    let mut out = String::with_capacity(sql.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(match word.as_str() {
            "INTEGER" => "BIGINT",
            "REAL" => "DOUBLE PRECISION",
            "BLOB" => "BYTEA",
            other => other,
        });
        word.clear();
    };
    for c in sql.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_gets_the_same_tables_in_its_types() {
        let first = for_postgres(MIGRATIONS[0]);
        assert!(first.contains("id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"));
        assert!(first.contains("duration_ms DOUBLE PRECISION"));
        assert!(!first.contains("INTEGER"));
        assert!(for_postgres(MIGRATIONS[1]).contains("before              BYTEA"));
    }
}
