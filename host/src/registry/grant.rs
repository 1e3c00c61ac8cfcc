//! What one tool is granted: the intersection of what its manifest asks and
//! what the user's config allows, never more.
//!
//! - File system: no roots for `fs = "none"`; every root read-only for
//!   `fs = "read"`; for `fs = "write"`, writable only where the root's
//!   `access` is `write`.
//! - Environment, network and programs: only names/hosts/programs the
//!   manifest asks for *and* the config grants in `[tools.NAME]` (a manifest
//!   asking for network or process `*` takes whatever the config grants, and
//!   reaches nothing until it does). Granting something the manifest
//!   does not ask for is a config error, so a typo cannot silently grant
//!   nothing.
//! - Limits: the manifest's, overridden by the config's.
//! - Approval: the manifest's default (`ask` for mutating tools), overridden
//!   by the config's `approval`, except that a manifest's `always` cannot be
//!   turned into `auto`; `tools show` says which one decided.

use crate::config::tools::ApprovalSetting;
use crate::config::{RootAccess, WorkspaceConfig};
use crate::contain::{Confinement, NetworkAccess, SandboxSetting};
use crate::policy::FileRules;
use crate::tool::limits::Limits;
use crate::tool::manifest::{FsAccess, ManifestApproval, ToolManifest};
use crate::util::locations::CONFIG_FILE;
use crate::util::problem::{Document, Problem};
use std::path::PathBuf;
use std::sync::Arc;

/// A directory preopened in the tool's cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preopen {
    pub host: PathBuf,
    /// The name the guest sees: `.` or the root's name.
    pub guest: String,
    pub writable: bool,
}

/// Who decided a tool's approval mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalSource {
    Manifest,
    Config,
}

/// Everything a call of one tool may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolGrant {
    /// The tool's name.
    pub tool: String,
    pub enabled: bool,
    pub approval: ApprovalMode,
    pub approval_source: ApprovalSource,
    pub preopens: Vec<Preopen>,
    /// Names of environment variables passed in (their values are read when
    /// the cell is built: at the call, or just before it for a cell built
    /// ahead).
    pub env: Vec<String>,
    /// Host patterns reachable over wasi:http.
    pub network: Vec<String>,
    /// Programs it may run through `toolcell:tool/process`.
    pub process: Vec<String>,
    /// How those programs run: confined to this grant, or not.
    pub sandbox: SandboxSetting,
    /// What those programs may read besides the roots and the system's.
    pub read: Vec<PathBuf>,
    /// What those programs may change besides the writable roots.
    pub write: Vec<PathBuf>,
    pub limits: Limits,
    /// The workspace's file rules, enforced in the cell.
    pub files: Arc<FileRules>,
    /// Policy files this call may change: approved for it, at a terminal.
    pub policy_changes: Vec<PathBuf>,
}

impl ToolGrant {
    /// Resolves the grant of the tool described by `manifest` under `config`.
    pub fn resolve(manifest: &ToolManifest, config: &WorkspaceConfig) -> Result<Self, Problem> {
        let settings = config.tool(&manifest.name);
        // A grant the manifest does not ask for: a problem at its key in the
        // config (the user asked for something the tool cannot use).
        let not_asked = |key: &'static str, what: &str| Problem {
            document: Document::Config,
            file: config.file.clone().unwrap_or_else(|| CONFIG_FILE.into()),
            key: Some(format!("tools.{}.{key}", manifest.name)),
            position: settings.placed.get(key).copied(),
            message: format!(
                "tools.{}.{key} grants `{what}`, which the tool does not ask for",
                manifest.name
            ),
            fix: format!("remove it, or use a tool whose manifest lists it in capabilities.{key}"),
        };
        if let Some(name) = settings
            .env
            .iter()
            .find(|name| !manifest.capabilities.env.contains(name))
        {
            return Err(not_asked("env", name));
        }
        // `*` in the manifest: whatever hosts the user grants (a general
        // fetch tool); the grant alone decides.
        let any_host = manifest.capabilities.network.iter().any(|h| h == "*");
        if let Some(host) = settings
            .network
            .iter()
            .find(|host| !any_host && !manifest.capabilities.network.contains(host))
        {
            return Err(not_asked("network", host));
        }
        let any_program = manifest.capabilities.process.iter().any(|p| p == "*");
        if let Some(program) = settings
            .process
            .iter()
            .find(|program| !any_program && !manifest.capabilities.process.contains(program))
        {
            return Err(not_asked("process", program));
        }

        let preopens = match settings.fs.unwrap_or(manifest.capabilities.fs) {
            FsAccess::None => Vec::new(),
            access => config
                .roots
                .iter()
                .map(|root| Preopen {
                    host: root.path.clone(),
                    guest: root.mount.clone(),
                    writable: access == FsAccess::Write && root.access == RootAccess::Write,
                })
                .collect(),
        };

        let (approval, approval_source) = match settings.approval {
            // `always` in the manifest: `auto` in the config cannot loosen it.
            Some(ApprovalSetting::Auto) if manifest.approval == ManifestApproval::Always => {
                (ApprovalMode::Ask, ApprovalSource::Manifest)
            }
            Some(ApprovalSetting::Ask) => (ApprovalMode::Ask, ApprovalSource::Config),
            Some(ApprovalSetting::Auto) => (ApprovalMode::Auto, ApprovalSource::Config),
            Some(ApprovalSetting::Deny) => (ApprovalMode::Deny, ApprovalSource::Config),
            None => match manifest.approval {
                ManifestApproval::Ask | ManifestApproval::Always => {
                    (ApprovalMode::Ask, ApprovalSource::Manifest)
                }
                ManifestApproval::Auto => (ApprovalMode::Auto, ApprovalSource::Manifest),
            },
        };

        Ok(Self {
            tool: manifest.name.clone(),
            enabled: settings.enabled.unwrap_or(!manifest.opt_in),
            approval,
            approval_source,
            preopens,
            env: settings.env.clone(),
            network: settings.network.clone(),
            process: settings.process.clone(),
            sandbox: settings.sandbox,
            read: settings.read.clone(),
            write: settings.write.clone(),
            limits: Limits {
                timeout_ms: settings.timeout_ms.unwrap_or(manifest.limits.timeout_ms),
                memory_mb: settings.memory_mb.unwrap_or(manifest.limits.memory_mb),
                max_output_bytes: settings
                    .max_output_bytes
                    .unwrap_or(manifest.limits.max_output_bytes),
            },
            files: config.files.clone(),
            policy_changes: Vec::new(),
        })
    }

    /// What the programs this tool runs are confined to (`None` for
    /// `sandbox = "none"`): the roots to read, the writable ones to change,
    /// `read = [...]`, and the granted hosts' ports.
    pub fn confinement(&self) -> Option<Confinement> {
        if self.sandbox == SandboxSetting::None {
            return None;
        }
        Some(Confinement {
            read: self
                .preopens
                .iter()
                .map(|p| p.host.clone())
                .chain(self.read.iter().cloned())
                .collect(),
            write: self
                .preopens
                .iter()
                .filter(|p| p.writable)
                .map(|p| p.host.clone())
                .chain(self.write.iter().cloned())
                .collect(),
            granted: self.read.iter().chain(&self.write).cloned().collect(),
            network: NetworkAccess::for_hosts(&self.network),
            read_only: self.files.policy.held_read_only(),
            roots: self.preopens.iter().map(|p| p.host.clone()).collect(),
        })
    }

    /// The environment passed into the cell: granted names that are set.
    pub fn env_values(&self) -> Vec<(String, String)> {
        self.env
            .iter()
            .filter_map(|name| std::env::var(name).ok().map(|v| (name.clone(), v)))
            .collect()
    }
}

/// What the policy says about calls of one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Run without asking.
    Auto,
    /// Ask the user before every call.
    Ask,
    /// Never run.
    Deny,
}

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ApprovalMode::Auto => "auto",
            ApprovalMode::Ask => "ask",
            ApprovalMode::Deny => "deny",
        })
    }
}
