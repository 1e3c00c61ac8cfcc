//! `[store]`: where the run history is kept.
//!
//! ```toml
//! [store]
//! url = "postgres://toolcell@db.example:5432/toolcell"
//! password_env = "TOOLCELL_STORE_PASSWORD"   # the password, never in the file
//! ```
//!
//! Without it, runs are kept in SQLite in the workspace's state folder.
//! With it, in PostgreSQL, where daemons of several machines share the
//! schedules (see the README, "Running on more than one machine"). It sends
//! what the runs hold (file contents kept for undo among them) to a server,
//! so it needs the config trusted.

use crate::util::problem::{Problem, Table};
use serde::Deserialize;

/// `[store]` as loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StoreSetting {
    /// SQLite in the workspace's state folder.
    #[default]
    Local,
    /// PostgreSQL at `url` (which holds no password), signing in with the
    /// password in the environment variable `password_env`, if any.
    Postgres {
        url: String,
        password_env: Option<String>,
    },
}

impl StoreSetting {
    /// Where it is, for messages.
    pub fn describe(&self) -> String {
        match self {
            StoreSetting::Local => "the workspace's own store".into(),
            StoreSetting::Postgres { url, .. } => format!("PostgreSQL at {url}"),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStoreConfig {
    url: Option<String>,
    password_env: Option<String>,
}

impl StoreSetting {
    pub fn from_raw(raw: RawStoreConfig, at: &Table) -> Result<Self, Problem> {
        let Some(url) = raw.url else {
            if raw.password_env.is_some() {
                return Err(at.problem(
                    Some("password_env"),
                    "store.password_env is set but store.url is not",
                    "add url = \"postgres://USER@HOST:5432/DATABASE\", or remove password_env",
                ));
            }
            return Ok(Self::Local);
        };
        let config: postgres::Config = url.parse().map_err(|e| {
            at.problem(
                Some("url"),
                format!("store.url is not a PostgreSQL URL: {e}"),
                "write it as postgres://USER@HOST:5432/DATABASE",
            )
        })?;
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(at.problem(
                Some("url"),
                "store.url must be a postgres:// URL",
                "write it as postgres://USER@HOST:5432/DATABASE",
            ));
        }
        if config.get_password().is_some() {
            return Err(at.problem(
                Some("url"),
                "store.url holds a password, which a config file must not",
                "take the password out of the URL and name the environment variable that holds it: password_env = \"TOOLCELL_STORE_PASSWORD\"",
            ));
        }
        if let Some(variable) = &raw.password_env
            && (variable.is_empty()
                || !variable
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(at.problem(
                Some("password_env"),
                format!("store.password_env `{variable}` is not an environment variable's name"),
                "use letters, digits and underscores, such as TOOLCELL_STORE_PASSWORD",
            ));
        }
        Ok(Self::Postgres {
            url,
            password_env: raw.password_env,
        })
    }
}
