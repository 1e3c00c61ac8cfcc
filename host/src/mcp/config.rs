//! `[[mcp_server]]` in `toolcell.toml`: external MCP servers whose tools
//! join the registry as `NAME__TOOL`.
//!
//! ```toml
//! [[mcp_server]]
//! name = "fs"                      # tools become fs__read_text_file, …
//! command = "npx"                  # looked up on PATH, or a path (relative to this file)
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "notes"]
//! env = { LOG_LEVEL = "warn" }     # added to a scrubbed environment
//! cwd = "."                        # relative to this file; default: the workspace
//! approval = "ask"                 # ask (default) | auto
//! timeout = "60s"                  # per call
//! startup_timeout = "30s"          # start + initialize + list tools
//! enabled = true
//! ```
//!
//! An external server is a program with the user's rights, not a cell:
//! its calls ask for approval unless the config says `approval = "auto"`
//! (for the server, or per tool under `[tools."fs__read_text_file"]`).

use crate::schedule::config::parse_duration;
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
/// Server names are the prefix of function names a model sees (at most 64
/// bytes in all): short names leave room for the tools' own.
const MAX_SERVER_NAME_LEN: usize = 32;

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

/// One external MCP server, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    pub name: String,
    pub command: PathBuf,
    pub args: Vec<String>,
    /// Added to the scrubbed environment the server starts with.
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
    pub approval: ServerApproval,
    pub call_timeout: Duration,
    pub startup_timeout: Duration,
    pub enabled: bool,
    /// `toolcell.toml:line:col`, for messages about this server.
    pub at: String,
}

impl McpServerConfig {
    /// The command line, for approval prompts and messages.
    /// The files this server runs that a tool could change: its command,
    /// when given as a path, and the arguments that name existing files
    /// (a script, as in `node server.mjs`).
    pub fn program_files(&self) -> Vec<PathBuf> {
        let command = (self.command.components().count() > 1).then(|| self.command.clone());
        let scripts = self
            .args
            .iter()
            .map(|arg| self.cwd.join(arg))
            .filter(|path| path.is_file());
        command.into_iter().chain(scripts).collect()
    }

    pub fn command_line(&self) -> String {
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
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    #[serde(default)]
    approval: ServerApproval,
    timeout: Option<String>,
    startup_timeout: Option<String>,
    enabled: Option<bool>,
}

impl McpServerConfig {
    /// Validates one `[[mcp_server]]` table found `at`; relative paths
    /// resolve against the config's folder, `workspace`.
    pub fn from_raw(raw: RawMcpServer, at: &str, workspace: &Path) -> Result<Self, String> {
        check_server_name(&raw.name).map_err(|problem| {
            format!(
                "invalid config {at}: mcp_server.name {problem}\n  fix: use a short name of lowercase letters, digits, `-` and `_`, such as \"fs\""
            )
        })?;
        let name = raw.name;
        if raw.command.trim().is_empty() {
            return Err(format!(
                "invalid config {at}: mcp_server `{name}` has an empty `command`\n  fix: name the program that starts the server, such as \"npx\""
            ));
        }
        // A bare name is looked up on PATH; anything with a slash is a path.
        let command = if raw.command.contains('/') {
            workspace.join(&raw.command)
        } else {
            PathBuf::from(&raw.command)
        };
        let cwd = match &raw.cwd {
            None => workspace.to_path_buf(),
            Some(dir) => {
                let path = workspace.join(dir);
                if !path.is_dir() {
                    return Err(format!(
                        "invalid config {at}: mcp_server `{name}`: cwd `{dir}` is not a folder\n  fix: create it, or correct `cwd` (relative to the config's folder)"
                    ));
                }
                path
            }
        };
        if let Some(bad) = raw.env.keys().find(|k| !crate::manifest::is_env_name(k)) {
            return Err(format!(
                "invalid config {at}: mcp_server `{name}`: `{bad}` is not an environment variable name\n  fix: use names such as \"API_TOKEN\""
            ));
        }
        let duration = |key: &str, value: &Option<String>, default: Duration| {
            match value {
            None => Ok(default),
            Some(text) => parse_duration(text).map_err(|e| {
                format!(
                    "invalid config {at}: mcp_server `{name}`: {key} {e}\n  fix: write it like \"30s\" or \"2m\""
                )
            }),
        }
        };
        let call_timeout = duration("timeout", &raw.timeout, DEFAULT_CALL_TIMEOUT)?;
        let longest = Duration::from_millis(*crate::limits::TIMEOUT_MS_RANGE.end());
        if call_timeout > longest {
            return Err(format!(
                "invalid config {at}: mcp_server `{name}`: timeout `{}` is longer than a call may take\n  fix: use at most \"{}s\"",
                raw.timeout.as_deref().unwrap_or_default(),
                longest.as_secs()
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
            command,
            args: raw.args,
            env: raw.env,
            cwd,
            approval: raw.approval,
            enabled: raw.enabled.unwrap_or(true),
            at: at.to_string(),
        })
    }
}

/// Server names: `^[a-z][a-z0-9_-]*$`, without `__` (the separator before
/// the tool's name) and not ending in `_`.
pub fn check_server_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_SERVER_NAME_LEN {
        return Err(format!(
            "`{name}` must be 1 to {MAX_SERVER_NAME_LEN} bytes long"
        ));
    }
    let valid = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !name.contains("__")
        && !name.ends_with('_');
    if valid {
        Ok(())
    } else {
        Err(format!("`{name}` is not a valid server name"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawMcpServer {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_and_paths() {
        let dir = tempfile::tempdir().unwrap();
        let server = McpServerConfig::from_raw(
            raw("name = \"fs\"\ncommand = \"bin/server\"\nargs = [\"a b\"]"),
            "t.toml:1:1",
            dir.path(),
        )
        .unwrap();
        assert_eq!(server.command, dir.path().join("bin/server"));
        assert_eq!(server.cwd, dir.path());
        assert_eq!(server.approval, ServerApproval::Ask);
        assert_eq!(server.call_timeout, DEFAULT_CALL_TIMEOUT);
        assert!(server.command_line().ends_with("bin/server \"a b\""));
    }

    #[test]
    fn bad_values_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let err = |text: &str| {
            McpServerConfig::from_raw(raw(text), "t.toml:3:1", dir.path()).unwrap_err()
        };
        assert!(err("name = \"a__b\"\ncommand = \"x\"").contains("mcp_server.name"));
        assert!(err("name = \"Fs\"\ncommand = \"x\"").contains("t.toml:3:1"));
        assert!(err("name = \"fs\"\ncommand = \"x\"\ntimeout = \"soon\"").contains("timeout"));
        assert!(err("name = \"fs\"\ncommand = \"x\"\ncwd = \"nope\"").contains("cwd `nope`"));
        assert!(err("name = \"fs\"\ncommand = \" \"").contains("empty `command`"));
        assert!(
            err("name = \"fs\"\ncommand = \"x\"\ntimeout = \"1h\"")
                .contains("use at most \"600s\"")
        );
    }
}
