//! One way of running the store's SQL on either database it can live in:
//! SQLite (a file in the workspace's state folder, the default) or
//! PostgreSQL (`[store] url`, shared by machines; see [`super::postgres`]).
//!
//! Every statement is written once, with `?N` placeholders and the SQL both
//! understand; values go in and come out as [`Value`]s, so no query knows
//! which database answers it.

use super::postgres::PgSession;
use anyhow::{Context, Result, bail};

/// A value bound to a placeholder or read from a column.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

macro_rules! int_values {
    ($($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Self {
                Value::Int(i64::from(n))
            }
        }
    )*};
}
int_values!(i64, i32, u32, bool);

impl From<usize> for Value {
    fn from(n: usize) -> Self {
        Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Self {
        Value::Real(x)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Self {
        Value::Text(s.clone())
    }
}

impl From<&[u8]> for Value {
    fn from(b: &[u8]) -> Self {
        Value::Blob(b.to_vec())
    }
}

impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Self {
        Value::Blob(b)
    }
}

impl From<&Vec<u8>> for Value {
    fn from(b: &Vec<u8>) -> Self {
        Value::Blob(b.clone())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

impl<T: Clone + Into<Value>> From<&Option<T>> for Value {
    fn from(v: &Option<T>) -> Self {
        v.clone().map_or(Value::Null, Into::into)
    }
}

/// The values of a statement's placeholders, in order: `args![a, b]`.
macro_rules! args {
    ($($value:expr),* $(,)?) => {
        &[$($crate::store::db::Value::from($value)),*][..]
    };
}
pub(crate) use args;

/// A type a column's [`Value`] can be read as.
pub trait FromValue: Sized {
    fn from_value(value: &Value) -> Result<Self>;
}

impl FromValue for i64 {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Int(n) => Ok(*n),
            other => bail!("expected an integer, found {other:?}"),
        }
    }
}

impl FromValue for u32 {
    fn from_value(value: &Value) -> Result<Self> {
        Ok(u32::try_from(i64::from_value(value)?)?)
    }
}

impl FromValue for bool {
    fn from_value(value: &Value) -> Result<Self> {
        Ok(i64::from_value(value)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Real(x) => Ok(*x),
            #[allow(clippy::cast_precision_loss)]
            Value::Int(n) => Ok(*n as f64),
            other => bail!("expected a number, found {other:?}"),
        }
    }
}

impl FromValue for String {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Text(s) => Ok(s.clone()),
            other => bail!("expected text, found {other:?}"),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            other => bail!("expected bytes, found {other:?}"),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Result<Self> {
        match value {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// One row of a query's answer.
#[derive(Debug, Clone)]
pub struct Row(pub Vec<Value>);

impl Row {
    /// Column `index`, as a `T`.
    pub fn get<T: FromValue>(&self, index: usize) -> Result<T> {
        let value = self
            .0
            .get(index)
            .with_context(|| format!("the query has no column {index}"))?;
        T::from_value(value).with_context(|| format!("column {index}"))
    }
}

/// An open connection to the store's database.
pub enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(PgSession),
}

impl Conn {
    /// Runs one statement; returns how many rows it changed.
    pub fn exec(&mut self, sql: &str, args: &[Value]) -> Result<usize> {
        match self {
            Conn::Sqlite(conn) => Ok(conn
                .prepare_cached(sql)?
                .execute(rusqlite::params_from_iter(args.iter()))?),
            Conn::Postgres(session) => session.exec(sql, args),
        }
    }

    /// The rows one query answers.
    pub fn rows(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Row>> {
        match self {
            Conn::Sqlite(conn) => {
                let mut statement = conn.prepare_cached(sql)?;
                let columns = statement.column_count();
                let mut rows = statement.query(rusqlite::params_from_iter(args.iter()))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    let mut values = Vec::with_capacity(columns);
                    for index in 0..columns {
                        values.push(from_sqlite(row.get_ref(index)?));
                    }
                    out.push(Row(values));
                }
                Ok(out)
            }
            Conn::Postgres(session) => session.rows(sql, args),
        }
    }

    /// The first row a query answers, if any.
    pub fn row(&mut self, sql: &str, args: &[Value]) -> Result<Option<Row>> {
        Ok(self.rows(sql, args)?.into_iter().next())
    }

    /// The first column of the first row a query answers, which must exist:
    /// an `INSERT … RETURNING id`, a `COUNT(*)`.
    pub fn value<T: FromValue>(&mut self, sql: &str, args: &[Value]) -> Result<T> {
        self.row(sql, args)?
            .context("the query answered no row")?
            .get(0)
    }

    /// Runs `f` in one transaction: all of it is kept, or none.
    pub fn transaction<T>(&mut self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        self.batch("BEGIN")?;
        match f(self) {
            Ok(value) => match self.batch("COMMIT") {
                Ok(()) => Ok(value),
                Err(e) => {
                    let _ = self.batch("ROLLBACK");
                    Err(e)
                }
            },
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Runs statements with no placeholders (a migration, `BEGIN`).
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        match self {
            Conn::Sqlite(conn) => Ok(conn.execute_batch(sql)?),
            Conn::Postgres(session) => session.batch(sql),
        }
    }

    /// Of `owners` (the `pid` a run or a parked call was written with),
    /// which are still alive: a process on this machine for SQLite, a
    /// connected session of any machine for PostgreSQL.
    pub fn alive(&mut self, owners: &[i64]) -> Result<Vec<bool>> {
        match self {
            Conn::Sqlite(_) => Ok(owners.iter().map(|&pid| process_alive(pid)).collect()),
            Conn::Postgres(session) => {
                let live = session.live_owners()?;
                Ok(owners.iter().map(|owner| live.contains(owner)).collect())
            }
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(n) => ValueRef::Integer(*n),
            Value::Real(x) => ValueRef::Real(*x),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::Int(n),
        ValueRef::Real(x) => Value::Real(x),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// Whether process `pid` of this machine still exists.
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
