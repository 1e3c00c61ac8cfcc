//! `[store]`: where the run history is kept.
//!
//! ```toml
//! [store]
//! url = "postgres://toolcell@db.example:5432/toolcell?sslmode=require"
//! password_env = "TOOLCELL_STORE_PASSWORD"   # the password, never in the file
//! ca_file = "/etc/ssl/certs/ca-certificates.crt"   # else the public authorities
//! ```
//!
//! Without it, runs are kept in SQLite in the workspace's state folder.
//! With it, in PostgreSQL, where daemons of several machines share the
//! schedules (see the README, "Running on more than one machine"). It sends
//! what the runs hold (file contents kept for undo among them) to a server,
//! so it needs the config trusted, and a server on another machine is
//! reached over TLS with its certificate checked, unless the URL says
//! `sslmode=disable` on purpose.

use crate::util::problem::{Problem, Table};
use postgres::config::{Host, SslMode};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `[store]` as loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StoreSetting {
    /// SQLite in the workspace's state folder.
    #[default]
    Local,
    /// PostgreSQL at `url` (which holds no password), signing in with the
    /// password in the environment variable `password_env`, if any; over
    /// TLS when the URL says `sslmode=require`, the server's certificate
    /// checked against `ca_file` or the public authorities.
    Postgres {
        url: String,
        password_env: Option<String>,
        ca_file: Option<PathBuf>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStoreConfig {
    url: Option<String>,
    password_env: Option<String>,
    ca_file: Option<String>,
}

/// Whether every host `config` names is this machine: a Unix socket or a
/// loopback address, where nothing crosses a network.
fn only_this_machine(config: &postgres::Config) -> bool {
    // A `hostaddr` is where the client connects, whatever the host says.
    if !config
        .get_hostaddrs()
        .iter()
        .all(std::net::IpAddr::is_loopback)
    {
        return false;
    }
    !config.get_hosts().is_empty()
        && config.get_hosts().iter().all(|host| match host {
            Host::Unix(_) => true,
            Host::Tcp(name) => {
                name == "localhost"
                    || name
                        .trim_matches(|c| c == '[' || c == ']')
                        .parse::<std::net::IpAddr>()
                        .is_ok_and(|ip| ip.is_loopback())
            }
        })
}

impl StoreSetting {
    /// Where it is, for messages.
    pub fn describe(&self) -> String {
        match self {
            StoreSetting::Local => "the workspace's own store".into(),
            StoreSetting::Postgres { url, .. } => format!("PostgreSQL at {url}"),
        }
    }

    pub fn from_raw(raw: RawStoreConfig, at: &Table, folder: &Path) -> Result<Self, Problem> {
        const FORM: &str = "write it as postgres://USER@HOST:5432/DATABASE (with ?sslmode=require for another machine)";
        let Some(url) = raw.url else {
            if raw.password_env.is_some() || raw.ca_file.is_some() {
                return Err(at.problem(
                    None,
                    "[store] has settings but no url",
                    "add url = \"postgres://USER@HOST:5432/DATABASE\", or remove the table",
                ));
            }
            return Ok(Self::Local);
        };
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(at.problem(Some("url"), "store.url must be a postgres:// URL", FORM));
        }
        let config: postgres::Config = url.parse().map_err(|e| {
            at.problem(
                Some("url"),
                format!("store.url is not a PostgreSQL URL: {e}"),
                FORM,
            )
        })?;
        if config.get_password().is_some() {
            return Err(at.problem(
                Some("url"),
                "store.url holds a password, which a config file must not",
                "take the password out of the URL and name the environment variable that holds it: password_env = \"TOOLCELL_STORE_PASSWORD\"",
            ));
        }
        let tls = config.get_ssl_mode() == SslMode::Require;
        if !tls && config.get_ssl_mode() != SslMode::Disable && !only_this_machine(&config) {
            return Err(at.problem(
                Some("url"),
                "store.url reaches another machine without saying how: the runs (file contents among them) would cross the network in the clear",
                "add ?sslmode=require to the URL (and ca_file = \"…\" when its certificate comes from a private authority), or ?sslmode=disable to send them unencrypted on purpose",
            ));
        }
        let ca_file = match raw.ca_file {
            None => None,
            Some(_) if !tls => {
                return Err(at.problem(
                    Some("ca_file"),
                    "store.ca_file is read only when the URL says sslmode=require",
                    "add ?sslmode=require to the URL, or remove ca_file",
                ));
            }
            Some(file) => Some(folder.join(file)),
        };
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
            ca_file,
        })
    }
}
