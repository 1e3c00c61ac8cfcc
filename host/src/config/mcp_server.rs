//! `[[mcp_server]]` in `toolcell.toml`: external MCP servers whose tools
//! join the registry as `NAME__TOOL`.
//!
//! ```toml
//! [[mcp_server]]
//! name = "fs"                      # tools become fs__read_text_file, …
//! command = "npx"                  # looked up on PATH, or a path (relative to this file)
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "notes"]
//! env = { LOG_LEVEL = "warn" }     # added to a scrubbed environment (or a list of names passed on)
//! cwd = "."                        # relative to this file; default: the workspace
//! fs = "write"                     # none | read (default) | write: the roots, as a cell sees them
//! network = "any"                  # or hosts, such as ["api.example.com"]; default: none
//! read = ["~/.gitconfig"]          # more to read: paths, `~/`, or relative to this file
//! write = ["~/.npm"]               # more to change (npx's cache), the same way
//! sandbox = "none"                 # run it unconfined, with your rights (default: confined)
//! approval = "ask"                 # ask (default) | auto
//! timeout = "60s"                  # per call
//! startup_timeout = "30s"          # start + initialize + list tools
//! enabled = true
//! ```
//!
//! A server that already runs is reached over MCP's Streamable HTTP
//! transport instead of started; secrets for it come from the environment,
//! never from the file:
//!
//! ```toml
//! [[mcp_server]]
//! name = "docs"
//! url = "http://127.0.0.1:8931/mcp"
//! bearer_token_env_var = "DOCS_TOKEN"            # sent as `Authorization: Bearer …`
//! env_http_headers = { "X-Api-Key" = "DOCS_KEY" } # header = variable holding its value
//! ```
//!
//! An external server is a program, not a cell: it runs confined by the
//! kernel to the grant above ([`crate::contain`]), and its calls ask for
//! approval unless the config says `approval = "auto"` (for the server, or
//! per tool under `[tools."fs__read_text_file"]`).

mod remote;

use remote::remote_endpoint;
pub use remote::{RemoteEndpoint, is_loopback};

use crate::config::schedule::parse_duration;
use crate::config::{Root, RootAccess};
use crate::contain::{Confinement, NetworkAccess, SandboxSetting};
use crate::policy::PolicyFiles;
use crate::tool::manifest::FsAccess;
use crate::util::names::{check_host_pattern, check_server_name};
use crate::util::problem::{Problem, Table};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A call that takes longer is stopped: long enough for a slow tool, short
/// enough that a hung server does not stall an agent turn for long.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Starting includes `npx` resolving a cached package and Node loading it,
/// a few seconds on a slow machine; a server not ready by then is reported.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether calls of a server's tools ask first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ServerApproval {
    /// Every call asks (the default: the server is not sandboxed).
    #[default]
    Ask,
    /// Calls run without asking.
    Auto,
}

/// The network a server may reach: `network = "any"`, or hosts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum ServerNetwork {
    /// `"any"` (any other word is refused at load).
    Any(String),
    Hosts(Vec<String>),
}

impl Default for ServerNetwork {
    fn default() -> Self {
        ServerNetwork::Hosts(Vec::new())
    }
}

/// The environment a server gets besides the scrubbed one: values given,
/// or the names of toolcell's own variables to pass on.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum RawEnv {
    Values(BTreeMap<String, String>),
    Names(Vec<String>),
}

impl Default for RawEnv {
    fn default() -> Self {
        RawEnv::Values(BTreeMap::new())
    }
}

/// What prompts and listings say of how a server reached at a URL runs.
pub const REACHED_OVER_HTTP: &str =
    "a server toolcell does not run, reached over HTTP: it gets only what a call sends it";

/// One external MCP server, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    pub name: String,
    /// `Some` for a server reached at a URL: nothing is started, and the
    /// keys about starting and confining a program (`command`, `args`,
    /// `env`, `cwd`, `fs`, `network`, `read`, `write`, `sandbox`) are
    /// refused at load, so `command` is empty and `args`, `env` too.
    pub remote: Option<RemoteEndpoint>,
    pub command: PathBuf,
    pub args: Vec<String>,
    /// Added to the scrubbed environment the server starts with.
    pub env: BTreeMap<String, String>,
    /// toolcell's own variables passed on by name (those that are set).
    pub env_passed: Vec<String>,
    pub cwd: PathBuf,
    /// The roots it sees: none, all read-only, or writable where a root is.
    pub fs: FsAccess,
    pub network: NetworkAccess,
    /// More it may read (expanded paths).
    pub read: Vec<PathBuf>,
    /// More it may change.
    pub write: Vec<PathBuf>,
    pub sandbox: SandboxSetting,
    pub approval: ServerApproval,
    pub call_timeout: Duration,
    pub startup_timeout: Duration,
    pub enabled: bool,
    /// `toolcell.toml:line:col`, for messages about this server.
    pub at: String,
}

impl McpServerConfig {
    /// Whether toolcell starts this server (not reaches it at a URL).
    pub fn is_started(&self) -> bool {
        self.remote.is_none()
    }

    /// The files this server runs that a tool could change: its command,
    /// when given as a path, and its script (as in `node server.mjs`).
    pub fn program_files(&self) -> Vec<PathBuf> {
        if !self.is_started() {
            return Vec::new();
        }
        let command = (self.command.components().count() > 1).then(|| self.command.clone());
        command.into_iter().chain(self.script()).collect()
    }

    /// The script the server's program runs: its first argument that
    /// names a file (`node server.mjs`); later file arguments are its data
    /// (a database, a log), which it may need to change.
    pub fn script(&self) -> Option<PathBuf> {
        self.args
            .iter()
            .map(|arg| self.cwd.join(arg))
            .find(|path| path.is_file())
    }

    /// What the server (and all it starts) is confined to over `roots`,
    /// `policy` kept read-only: `None` for `sandbox = "none"`. Its program's installation and the
    /// script it is given are added when it starts. `None` too for a
    /// server reached at a URL, which toolcell does not run.
    pub fn confinement(&self, roots: &[Root], policy: &PolicyFiles) -> Option<Confinement> {
        if self.sandbox == SandboxSetting::None || !self.is_started() {
            return None;
        }
        let seen: Vec<&Root> = match self.fs {
            FsAccess::None => Vec::new(),
            _ => roots.iter().collect(),
        };
        Some(Confinement {
            read: seen
                .iter()
                .map(|r| r.path.clone())
                .chain(self.read.iter().cloned())
                .collect(),
            write: seen
                .iter()
                .filter(|r| self.fs == FsAccess::Write && r.access == RootAccess::Write)
                .map(|r| r.path.clone())
                .chain(self.write.iter().cloned())
                .collect(),
            granted: self.read.iter().chain(&self.write).cloned().collect(),
            network: self.network.clone(),
            read_only: policy.held_read_only(),
            roots: seen.iter().map(|r| r.path.clone()).collect(),
        })
    }

    /// The same server, started the same way (where it was written aside).
    pub fn same_launch(&self, other: &Self) -> bool {
        Self {
            at: String::new(),
            ..self.clone()
        } == Self {
            at: String::new(),
            ..other.clone()
        }
    }

    /// The command line, or the URL of a server reached over HTTP, for
    /// approval prompts and messages.
    pub fn command_line(&self) -> String {
        if let Some(remote) = &self.remote {
            return remote.url.clone();
        }
        std::iter::once(self.command.display().to_string())
            .chain(self.args.iter().cloned())
            .map(|part| {
                if part.contains(char::is_whitespace) || part.is_empty() {
                    format!("{part:?}")
                } else {
                    part
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMcpServer {
    name: String,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<RawEnv>,
    cwd: Option<String>,
    fs: Option<FsAccess>,
    network: Option<ServerNetwork>,
    read: Option<Vec<String>>,
    write: Option<Vec<String>>,
    sandbox: Option<SandboxSetting>,
    url: Option<String>,
    bearer_token_env_var: Option<String>,
    env_http_headers: Option<BTreeMap<String, String>>,
    #[serde(default)]
    approval: ServerApproval,
    timeout: Option<String>,
    startup_timeout: Option<String>,
    enabled: Option<bool>,
}

impl McpServerConfig {
    /// Validates one `[[mcp_server]]` table found `at`; relative paths
    /// resolve against the config's folder, `workspace`.
    pub fn from_raw(raw: RawMcpServer, at: &Table, workspace: &Path) -> Result<Self, Problem> {
        check_server_name(&raw.name).map_err(|problem| {
            at.problem(
                Some("name"),
                format!("mcp_server.name {problem}"),
                "use a short name of lowercase letters, digits, `-` and `_`, such as \"fs\"",
            )
        })?;
        let name = raw.name.clone();
        let remote = remote_endpoint(&raw, at)?;
        let command = match (&remote, raw.command.as_deref()) {
            (Some(_), _) => PathBuf::new(),
            (None, None) => {
                return Err(at.problem(
                    None,
                    format!("mcp_server `{name}` has neither `command` nor `url`"),
                    "give `command` for a server toolcell starts (such as \"npx\"), or `url` for one that already runs (such as \"http://127.0.0.1:8931/mcp\")",
                ));
            }
            (None, Some(command)) if command.trim().is_empty() => {
                return Err(at.problem(
                    Some("command"),
                    format!("mcp_server `{name}` has an empty `command`"),
                    "name the program that starts the server, such as \"npx\"",
                ));
            }
            // A bare name is looked up on PATH; anything with a slash is a path.
            (None, Some(command)) if command.contains('/') => workspace.join(command),
            (None, Some(command)) => PathBuf::from(command),
        };
        let cwd = match &raw.cwd {
            None => workspace.to_path_buf(),
            Some(dir) => {
                let path = workspace.join(dir);
                if !path.is_dir() {
                    return Err(at.problem(
                        Some("cwd"),
                        format!("mcp_server `{name}`: cwd `{dir}` is not a folder"),
                        "create it, or correct `cwd` (relative to the config's folder)",
                    ));
                }
                path
            }
        };
        let (env, env_passed) = match raw.env.unwrap_or_default() {
            RawEnv::Values(values) => (values, Vec::new()),
            RawEnv::Names(names) => (BTreeMap::new(), names),
        };
        if let Some(bad) = env
            .keys()
            .chain(&env_passed)
            .find(|k| !crate::util::names::is_env_name(k))
        {
            return Err(at.problem(
                Some("env"),
                format!("mcp_server `{name}`: `{bad}` is not an environment variable name"),
                "use names such as \"API_TOKEN\"",
            ));
        }
        let duration = |key: &str, value: &Option<String>, default: Duration| match value {
            None => Ok(default),
            Some(text) => parse_duration(text).map_err(|e| {
                at.problem(
                    Some(key),
                    format!("mcp_server `{name}`: {key} {e}"),
                    "write it like \"30s\" or \"2m\"",
                )
            }),
        };
        let network = match raw.network.unwrap_or_default() {
            ServerNetwork::Any(word) if word == "any" => NetworkAccess::Any,
            ServerNetwork::Any(word) => {
                return Err(at.problem(
                    Some("network"),
                    format!(
                        "mcp_server `{name}`: network = \"{}\" is not a grant",
                        word.escape_debug()
                    ),
                    "write network = \"any\" for a server that fetches from anywhere, or list hosts, such as [\"api.example.com\"]",
                ));
            }
            ServerNetwork::Hosts(hosts) => {
                if let Some((bad, why)) = hosts
                    .iter()
                    .find_map(|h| check_host_pattern(h).err().map(|why| (h, why)))
                {
                    return Err(at.problem(
                        Some("network"),
                        format!("mcp_server `{name}`: network: {why}"),
                        format!("grant hosts such as \"api.example.com\" or \"127.0.0.1:8080\", or \"any\" (`{bad}` is not one)"),
                    ));
                }
                NetworkAccess::for_hosts(&hosts)
            }
        };
        let call_timeout = duration("timeout", &raw.timeout, DEFAULT_CALL_TIMEOUT)?;
        let longest = Duration::from_millis(*crate::tool::limits::TIMEOUT_MS_RANGE.end());
        if call_timeout > longest {
            return Err(at.problem(
                Some("timeout"),
                format!(
                    "mcp_server `{name}`: timeout `{}` is longer than a call may take",
                    raw.timeout.as_deref().unwrap_or_default()
                ),
                format!("use at most \"{}s\"", longest.as_secs()),
            ));
        }
        Ok(Self {
            call_timeout,
            startup_timeout: duration(
                "startup_timeout",
                &raw.startup_timeout,
                DEFAULT_STARTUP_TIMEOUT,
            )?,
            name,
            remote,
            command,
            args: raw.args.unwrap_or_default(),
            env,
            env_passed,
            cwd,
            fs: raw.fs.unwrap_or(FsAccess::Read),
            network,
            read: raw
                .read
                .unwrap_or_default()
                .iter()
                .map(|entry| crate::contain::expand_path(entry, workspace))
                .collect(),
            write: raw
                .write
                .unwrap_or_default()
                .iter()
                .map(|entry| crate::contain::expand_path(entry, workspace))
                .collect(),
            sandbox: raw.sandbox.unwrap_or_default(),
            approval: raw.approval,
            enabled: raw.enabled.unwrap_or(true),
            at: at.place(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn raw(text: &str) -> RawMcpServer {
        toml::from_str(text).unwrap()
    }

    pub(super) fn table(text: &str) -> Table<'_> {
        Table {
            document: crate::util::problem::Document::Config,
            file: Path::new("t.toml"),
            text,
            span: 0..text.len(),
            name: "mcp_server".into(),
        }
    }

    #[test]
    fn defaults_and_paths() {
        let dir = tempfile::tempdir().unwrap();
        let text = "name = \"fs\"\ncommand = \"bin/server\"\nargs = [\"a b\"]";
        let server = McpServerConfig::from_raw(raw(text), &table(text), dir.path()).unwrap();
        assert_eq!(server.command, dir.path().join("bin/server"));
        assert_eq!(server.cwd, dir.path());
        assert_eq!(server.approval, ServerApproval::Ask);
        assert_eq!(server.call_timeout, DEFAULT_CALL_TIMEOUT);
        assert_eq!(server.fs, FsAccess::Read, "read-only unless it says so");
        assert_eq!(server.network, NetworkAccess::None);
        assert_eq!(server.sandbox, SandboxSetting::Confined);
        assert!(server.command_line().ends_with("bin/server \"a b\""));
    }

    #[test]
    fn bad_values_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let err = |text: &str| {
            McpServerConfig::from_raw(raw(text), &table(text), dir.path())
                .unwrap_err()
                .to_string()
        };
        assert!(err("name = \"a__b\"\ncommand = \"x\"").contains("mcp_server.name"));
        assert!(
            err("name = \"Fs\"\ncommand = \"x\"").contains("t.toml:1:8 at key `mcp_server.name`")
        );
        assert!(err("name = \"fs\"\ncommand = \"x\"\ntimeout = \"soon\"").contains("timeout"));
        assert!(err("name = \"fs\"\ncommand = \"x\"\ncwd = \"nope\"").contains("cwd `nope`"));
        assert!(err("name = \"fs\"\ncommand = \" \"").contains("empty `command`"));
        assert!(
            err("name = \"fs\"\ncommand = \"x\"\nnetwork = \"all\"").contains("network = \"all\"")
        );
        assert!(err("name = \"fs\"\ncommand = \"x\"\nenv = [\"A B\"]").contains("`A B`"));
        assert!(
            err("name = \"fs\"\ncommand = \"x\"\ntimeout = \"1h\"")
                .contains("use at most \"600s\"")
        );
    }
}
