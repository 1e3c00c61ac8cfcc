//! The store in PostgreSQL (`[store] url = "postgres://…"`): the same
//! tables and migrations as SQLite ([`super::schema`]), reached through
//! [`PgSession`].
//!
//! The client is the blocking `postgres` crate, which drives its own small
//! runtime and so cannot be called from a thread of toolcell's: it lives on
//! a thread of its own, and each statement is handed to it with owned
//! values and waited for.
//!
//! Which runs are still alive is known by session, not by process: each
//! process that opens the store takes a number from a sequence (its
//! *owner*, written where SQLite writes the process id) and holds an
//! advisory lock on it for as long as it is connected. When a process dies
//! (a crash, a kill, a machine gone), the server ends its session and the
//! lock is released, so any other process sees its runs as interrupted.

use super::db::{Row, Value};
use super::schema;
use anyhow::{Context, Result, anyhow};
use postgres::config::SslMode;
use postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The first key of the advisory locks owners hold ("tc" in ASCII), so
/// they cannot be mistaken for another program's locks in the same
/// database.
const OWNER_SPACE: i32 = 0x7463;
/// The key of the lock that lets one process at a time migrate the tables.
const MIGRATION_LOCK: i64 = 0x7463_6d69_6772;
/// How long connecting may take before the store is said to be out of reach.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection that stops answering (a network cut without a reset) is
/// found by TCP keepalives after this idle time, and a send unacknowledged
/// this long ends it, rather than after the system's two hours.
const DEAD_LINK: Duration = Duration::from_secs(30);
/// The longest a statement is waited for: the store's statements take
/// milliseconds, so one that takes this long means the server or the link
/// is gone, and the session is given up (see [`PgSession::is_closed`]).
const STATEMENT_WAIT: Duration = Duration::from_secs(60);
/// The first key of the advisory lock a daemon holds while it decides
/// whether a fire of a schedule starts ("ts"), so two daemons never both
/// see no run going and start one.
pub const SCHEDULE_SPACE: i32 = 0x7473;

/// Where a PostgreSQL store is, and how to sign in (not `Debug`: it holds
/// the password).
#[derive(Clone)]
pub struct PgTarget {
    /// The URL as written, with no password in it.
    pub url: String,
    /// The password, from the environment variable the config names.
    pub password: Option<String>,
    /// The authorities a TLS server's certificate is checked against (a
    /// PEM file); `None`: the public ones.
    pub ca_file: Option<PathBuf>,
}

type Job = Box<dyn FnOnce(&mut Worker) + Send>;

/// A connection to the store's PostgreSQL, on its own thread.
pub struct PgSession {
    jobs: mpsc::Sender<Job>,
    owner: i64,
    /// A statement was not answered in [`STATEMENT_WAIT`].
    stalled: bool,
}

struct Worker {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl PgSession {
    /// Connects, brings the tables up to date, and takes this process's
    /// owner number and lock.
    pub fn connect(target: &PgTarget) -> Result<Self> {
        let mut config: postgres::Config = target
            .url
            .parse()
            .with_context(|| format!("`{}` is not a PostgreSQL URL", target.url))?;
        if let Some(password) = &target.password {
            config.password(password);
        }
        // Named after the process, so a session is known in `pg_stat_activity`.
        config.application_name(&format!("toolcell pid {}", std::process::id()));
        config.connect_timeout(CONNECT_TIMEOUT);
        config.keepalives(true);
        config.keepalives_idle(DEAD_LINK);
        config.tcp_user_timeout(DEAD_LINK);
        let tls = match config.get_ssl_mode() {
            SslMode::Require => Some(tls_connector(target.ca_file.as_deref())?),
            _ => None,
        };
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready_tx, ready) = mpsc::channel::<Result<i64>>();
        std::thread::Builder::new()
            .name("toolcell-postgres".into())
            .spawn(move || {
                let connected = match tls {
                    Some(tls) => config.connect(tls),
                    None => config.connect(NoTls),
                };
                let worker = connected
                    .context("cannot connect")
                    .map(|client| Worker {
                        client,
                        statements: HashMap::new(),
                    })
                    .and_then(|mut worker| {
                        migrate(&mut worker.client).context("cannot set up its tables")?;
                        let owner = worker.take_owner()?;
                        Ok((worker, owner))
                    });
                let mut worker = match worker {
                    Ok((worker, owner)) => {
                        let _ = ready_tx.send(Ok(owner));
                        worker
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                while let Ok(job) = queue.recv() {
                    job(&mut worker);
                }
            })
            .context("cannot start the store's connection thread")?;
        let owner = ready
            .recv()
            .map_err(|_| anyhow!("the store's connection thread stopped"))??;
        Ok(Self {
            jobs,
            owner,
            stalled: false,
        })
    }

    /// This process's owner number: what its runs are written with.
    pub fn owner(&self) -> i64 {
        self.owner
    }

    fn call<T: Send + 'static>(
        &mut self,
        job: impl FnOnce(&mut Worker) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        if self.stalled {
            anyhow::bail!("the store stopped answering");
        }
        let (reply, answer) = mpsc::sync_channel(1);
        self.jobs
            .send(Box::new(move |worker| {
                let _ = reply.send(job(worker));
            }))
            .map_err(|_| anyhow!("the connection to the store was lost"))?;
        match answer.recv_timeout(STATEMENT_WAIT) {
            Ok(answer) => answer,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.stalled = true;
                anyhow::bail!("the store did not answer in {} s", STATEMENT_WAIT.as_secs())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                anyhow::bail!("the connection to the store was lost")
            }
        }
    }

    pub fn exec(&mut self, sql: &str, args: &[Value]) -> Result<usize> {
        let (sql, args) = (sql.to_owned(), args.to_vec());
        self.call(move |worker| {
            let statement = worker.statement(&sql)?;
            let changed = worker.client.execute(&statement, &refs(&args))?;
            Ok(usize::try_from(changed).unwrap_or(usize::MAX))
        })
    }

    pub fn rows(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
        let (sql, args) = (sql.to_owned(), args.to_vec());
        self.call(move |worker| {
            let statement = worker.statement(&sql)?;
            let rows = worker.client.query(&statement, &refs(&args))?;
            rows.iter()
                .map(|row| {
                    (0..row.len())
                        .map(|index| Ok(row.try_get::<_, Value>(index)?))
                        .collect::<Result<Vec<_>>>()
                        .map(Row)
                })
                .collect()
        })
    }

    pub fn batch(&mut self, sql: &str) -> Result<()> {
        let sql = sql.to_owned();
        self.call(move |worker| Ok(worker.client.batch_execute(&sql)?))
    }

    /// Whether the connection is gone (the server stopped, the network
    /// broke): it is not made again, since the owner's lock went with it
    /// and other processes have taken this one's runs for dead.
    pub fn is_closed(&mut self) -> bool {
        self.stalled
            || self
                .call(|worker| Ok(worker.client.is_closed()))
                .unwrap_or(true)
    }

    /// The owners whose sessions are connected now, in this database.
    pub fn live_owners(&mut self) -> Result<HashSet<i64>> {
        self.call(|worker| {
            let rows = worker.client.query(
                &format!(
                    "SELECT objid::int8 FROM pg_locks
                     WHERE locktype = 'advisory' AND classid = {OWNER_SPACE} AND objsubid = 2 AND granted
                       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                ),
                &[],
            )?;
            Ok(rows.iter().map(|row| row.get::<_, i64>(0)).collect())
        })
    }
}

impl Worker {
    /// The prepared statement for `sql`, its `?N` placeholders made `$N`.
    fn statement(&mut self, sql: &str) -> Result<Statement> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(&placeholders(sql))?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// Takes an owner number and holds its lock while connected. A number
    /// whose lock is held already (a store of another workspace in another
    /// schema of the same database, whose sequence gave the same number) is
    /// passed over.
    fn take_owner(&mut self) -> Result<i64> {
        loop {
            let owner: i64 = self
                .client
                .query_one("SELECT nextval('toolcell_owners')", &[])?
                .get(0);
            let key = i32::try_from(owner).context("the store's owner numbers ran out")?;
            let taken: bool = self
                .client
                .query_one("SELECT pg_try_advisory_lock($1, $2)", &[&OWNER_SPACE, &key])?
                .get(0);
            if taken {
                return Ok(owner);
            }
        }
    }
}

/// A TLS connector that checks the server's certificate and name against
/// the authorities in `ca_file`, or the public ones.
fn tls_connector(ca_file: Option<&Path>) -> Result<MakeRustlsConnect> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Some(file) => {
            let shown = || {
                format!(
                    "cannot read the authorities' certificates in {}",
                    file.display()
                )
            };
            for cert in CertificateDer::pem_file_iter(file).with_context(shown)? {
                roots.add(cert.with_context(shown)?).with_context(shown)?;
            }
            if roots.is_empty() {
                anyhow::bail!(
                    "{} holds no certificate\n  fix: point ca_file at the PEM file of the authority that signed the server's certificate",
                    file.display()
                );
            }
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .context("cannot set up TLS")?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Brings the tables up to date, one process at a time (an advisory lock
/// held for the transaction), recording how many migrations ran.
fn migrate(client: &mut Client) -> Result<()> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS toolcell_schema (version BIGINT NOT NULL);
         CREATE SEQUENCE IF NOT EXISTS toolcell_owners;",
    )?;
    let done: i64 = match tx.query_opt("SELECT version FROM toolcell_schema", &[])? {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO toolcell_schema (version) VALUES (0)", &[])?;
            0
        }
    };
    let known = i64::try_from(schema::MIGRATIONS.len()).unwrap_or(i64::MAX);
    if done > known {
        anyhow::bail!(
            "its tables were made by a newer toolcell (migration {done}; this one knows {known})\n  fix: use that toolcell, or a store of its own for this one"
        );
    }
    for (index, migration) in schema::MIGRATIONS.iter().enumerate().skip(done as usize) {
        tx.batch_execute(&schema::for_postgres(migration))
            .with_context(|| format!("migration {}", index + 1))?;
    }
    tx.execute("UPDATE toolcell_schema SET version = $1", &[&known])?;
    tx.commit()?;
    Ok(())
}

/// `sql` with SQLite's `?N` placeholders written as PostgreSQL's `$N`
/// (outside quoted text).
fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '?' && !quoted && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn refs(args: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for Value {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(n) => match *ty {
                Type::INT8 => n.to_sql(ty, out),
                Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*n)?.to_sql(ty, out),
                #[allow(clippy::cast_precision_loss)]
                Type::FLOAT8 => (*n as f64).to_sql(ty, out),
                Type::BOOL => (*n != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => n.to_string().as_str().to_sql(ty, out),
                _ => Err(format!("an integer cannot be written as {ty}").into()),
            },
            Value::Real(x) => match *ty {
                Type::FLOAT8 => x.to_sql(ty, out),
                #[allow(clippy::cast_possible_truncation)]
                Type::FLOAT4 => (*x as f32).to_sql(ty, out),
                _ => Err(format!("a number cannot be written as {ty}").into()),
            },
            // PostgreSQL's text holds no NUL, which SQLite's does (a tool's
            // output, a message): shown as U+FFFD rather than not recorded.
            Value::Text(s) if s.contains('\0') => {
                s.replace('\0', "\u{FFFD}").as_str().to_sql(ty, out)
            }
            Value::Text(s) => s.as_str().to_sql(ty, out),
            Value::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Value {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(match *ty {
            Type::INT8 => Value::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Value::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT2 => Value::Int(i16::from_sql(ty, raw)?.into()),
            Type::OID => Value::Int(u32::from_sql(ty, raw)?.into()),
            Type::BOOL => Value::Int(bool::from_sql(ty, raw)?.into()),
            Type::FLOAT8 => Value::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Value::Real(f32::from_sql(ty, raw)?.into()),
            Type::BYTEA => Value::Blob(Vec::<u8>::from_sql(ty, raw)?),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                Value::Text(String::from_sql(ty, raw)?)
            }
            _ => return Err(format!("a column of type {ty} is not read").into()),
        })
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Value::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::placeholders;

    #[test]
    fn placeholders_become_numbered_outside_quotes() {
        assert_eq!(
            placeholders("SELECT ?1, '?2', ?10 WHERE a = ?2"),
            "SELECT $1, '?2', $10 WHERE a = $2"
        );
    }
}
