//! `[tools.NAME]`: the user's settings for one tool — whether it is
//! enabled, its approval, its limits, and what it is granted (environment
//! variables, hosts, programs, and what those programs may read and write).
//!
//! ```toml
//! [tools.run_command]
//! process = ["git"]          # programs it may run
//! approval = "ask"
//! timeout_ms = 60000
//!
//! [tools.run_python]
//! enabled = true             # a tool offered only on request
//! fs = "write"               # instead of the read-only access it asks
//! ```

use crate::contain::SandboxSetting;
use crate::tool::limits;
use crate::tool::manifest::FsAccess;
use crate::util::names::{check_host_pattern, check_program, is_env_name};
use crate::util::problem::{Problem, Table};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The user's approval choice for one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalSetting {
    Ask,
    Auto,
    Deny,
}

/// The keys of a tool's settings that grant what its manifest must ask for.
pub const GRANT_KEYS: [&str; 3] = ["env", "network", "process"];

/// The user's settings for one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSettings {
    /// `enabled = …`; unset: enabled, unless the tool's manifest says it
    /// is offered only on request (`opt_in`).
    pub enabled: Option<bool>,
    /// `fs = …`: the file-system access the user gives the tool, in place
    /// of what its manifest asks (`"write"` on purpose, `"read"` or
    /// `"none"` to narrow it); unset: as the manifest asks.
    pub fs: Option<FsAccess>,
    pub approval: Option<ApprovalSetting>,
    pub timeout_ms: Option<u64>,
    pub memory_mb: Option<u64>,
    pub max_output_bytes: Option<u64>,
    /// Environment names granted (only those the manifest asks for count).
    pub env: Vec<String>,
    /// Network hosts granted (only those the manifest asks for count).
    pub network: Vec<String>,
    /// Programs granted (only those the manifest asks for count).
    pub process: Vec<String>,
    /// Whether those programs run confined (`sandbox = "none"`: not).
    pub sandbox: SandboxSetting,
    /// Folders and files those programs may read besides the roots and the
    /// system's (`read = [...]`, expanded: `~/` under `$HOME`, relative
    /// paths under the config's folder).
    pub read: Vec<PathBuf>,
    /// Folders those programs may change besides the writable roots
    /// (`write = [...]`, expanded the same way).
    pub write: Vec<PathBuf>,
    /// Where the grants (`env`, `network`, `process`) are written in the
    /// config, as line and column: a grant the tool's manifest does not
    /// ask for is reported there.
    pub placed: BTreeMap<&'static str, (u32, u32)>,
}

impl ToolSettings {
    /// The settings of a tool the config does not mention: enabled, and
    /// everything else as its manifest says.
    pub const UNSET: ToolSettings = ToolSettings {
        enabled: None,
        fs: None,
        approval: None,
        timeout_ms: None,
        memory_mb: None,
        max_output_bytes: None,
        env: Vec::new(),
        network: Vec::new(),
        process: Vec::new(),
        sandbox: SandboxSetting::Confined,
        read: Vec::new(),
        write: Vec::new(),
        placed: BTreeMap::new(),
    };
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawToolSettings {
    enabled: Option<bool>,
    fs: Option<FsAccess>,
    approval: Option<ApprovalSetting>,
    timeout_ms: Option<u64>,
    memory_mb: Option<u64>,
    max_output_bytes: Option<u64>,
    #[serde(default)]
    env: Vec<String>,
    #[serde(default)]
    network: Vec<String>,
    #[serde(default)]
    process: Vec<String>,
    sandbox: Option<SandboxSetting>,
    #[serde(default)]
    read: Vec<String>,
    #[serde(default)]
    write: Vec<String>,
}

impl ToolSettings {
    /// Checks the settings of one tool, written in table `at`; relative
    /// paths resolve against the config's folder, `workspace`.
    pub fn from_raw(raw: RawToolSettings, at: &Table, workspace: &Path) -> Result<Self, Problem> {
        let workspace = workspace.to_path_buf();
        let in_range = |key: &str,
                        value: Option<u64>,
                        range: std::ops::RangeInclusive<u64>|
         -> Result<Option<u64>, Problem> {
            match value {
                Some(v) if !range.contains(&v) => Err(at.problem(
                    Some(key),
                    format!("{}.{key} = {v} is out of range", at.name),
                    format!("use a value from {} to {}", range.start(), range.end()),
                )),
                other => Ok(other),
            }
        };
        let settings = ToolSettings {
            enabled: raw.enabled,
            fs: raw.fs,
            approval: raw.approval,
            timeout_ms: in_range("timeout_ms", raw.timeout_ms, limits::TIMEOUT_MS_RANGE)?,
            memory_mb: in_range("memory_mb", raw.memory_mb, limits::MEMORY_MB_RANGE)?,
            max_output_bytes: in_range(
                "max_output_bytes",
                raw.max_output_bytes,
                limits::OUTPUT_BYTES_RANGE,
            )?,
            env: raw.env,
            network: raw.network,
            process: raw.process,
            sandbox: raw.sandbox.unwrap_or_default(),
            read: raw
                .read
                .iter()
                .map(|entry| crate::contain::expand_path(entry, &workspace))
                .collect(),
            write: raw
                .write
                .iter()
                .map(|entry| crate::contain::expand_path(entry, &workspace))
                .collect(),
            placed: GRANT_KEYS
                .into_iter()
                .filter_map(|key| Some((key, at.position(key)?)))
                .collect(),
        };
        if (raw.sandbox.is_some() || !raw.read.is_empty() || !raw.write.is_empty())
            && settings.process.is_empty()
        {
            let key = if raw.sandbox.is_some() {
                "sandbox"
            } else if raw.read.is_empty() {
                "write"
            } else {
                "read"
            };
            return Err(at
                .problem(
                    Some(key),
                    format!("{}: `sandbox`, `read` and `write` apply to the programs a tool runs, and it is granted none", at.name),
                    "grant programs with `process = [...]` first, or remove them",
                )
                );
        }
        if let Some((bad, why)) = settings.process.iter().find_map(|p| {
            let why = if p == "*" {
                Some("`*` would grant every program".to_string())
            } else {
                check_program(p).err()
            };
            why.map(|why| (p, why))
        }) {
            return Err(at
                .problem(
                    Some("process"),
                    format!("{}.process: {why}", at.name),
                    format!(
                        "grant programs one by one, by name or absolute path, such as \"git\" or \"/usr/bin/make\" (`{}` is not one)",
                        bad.escape_debug()
                    ),
                )
                );
        }
        if let Some((bad, why)) = settings
            .network
            .iter()
            .find_map(|h| check_host_pattern(h).err().map(|why| (h, why)))
        {
            return Err(at
                .problem(
                    Some("network"),
                    format!("{}.network: {why}", at.name),
                    format!("grant hosts such as \"api.example.com\", \"*.example.org\" or \"127.0.0.1:8080\" (`{bad}` is not one)"),
                )
                );
        }
        if let Some(bad) = settings.env.iter().find(|n| !is_env_name(n)) {
            return Err(at.problem(
                Some("env"),
                format!(
                    "{}.env: `{bad}` is not an environment variable name",
                    at.name
                ),
                "list names such as \"API_TOKEN\"",
            ));
        }
        Ok(settings)
    }
}
