//! The workspace config, `toolcell.toml`.
//!
//! Found in the current folder or its parents, or given with `--config`. It
//! says which folders the tools may see (the roots) and, per tool, whether it
//! is enabled, its approval and its limit overrides, and which of the
//! environment variables, network hosts and programs it asks for are granted. With no
//! config, the current folder is the one root, writable for tools that ask
//! to write.
//!
//! ```toml
//! [[roots]]
//! path = "."            # relative to this file; the first root is `.` for tools
//! access = "write"      # read | write
//!
//! [[roots]]
//! path = "../reference"
//! access = "read"
//! name = "reference"    # tools address it as `reference/...`
//!
//! [tools.write_file]
//! approval = "ask"      # ask | auto | deny
//!
//! [tools.fetch_weather]
//! enabled = true
//! network = ["api.weather.example"]
//! env = ["WEATHER_TOKEN"]
//! timeout_ms = 5000
//!
//! [tools.run_command]
//! process = ["git", "make"]   # programs it may run (off until granted)
//! ```

pub mod agent;
pub mod approvals;
pub mod cron;
pub mod mcp_server;
pub mod profile;
pub mod rule;
pub mod schedule;
pub mod store;
pub mod tools;
pub mod trust;
pub mod workflow;

use crate::config::agent::{AgentConfig, RawAgentConfig};
use crate::config::approvals::{ApprovalsConfig, RawApprovalsConfig};
use crate::config::mcp_server::{McpServerConfig, RawMcpServer};
use crate::config::profile::{Profile, RawProfile};
use crate::config::rule::RawRule;
use crate::config::schedule::{DaemonConfig, RawDaemonConfig, RawSchedule, ScheduleConfig};
use crate::config::store::{RawStoreConfig, StoreSetting};
use crate::config::tools::{RawToolSettings, ToolSettings};
use crate::config::workflow::{RawWorkflowConfig, WorkflowConfig};
use crate::llm::ModelSettings;
use crate::llm::settings::RawModelSettings;
use crate::policy::rules::{Rule, Rules};
use crate::policy::trust::TrustStore;
use crate::policy::{FileRules, PolicyFiles, SecretRules};
use crate::util::locations::{CONFIG_FILE, STATE_DIR};
use crate::util::problem::{Document, Problem, Table, key_at, line_col};
use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Spanned;

/// Whether tools may change a root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RootAccess {
    Read,
    #[default]
    Write,
}

/// A folder the tools may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Canonical host path.
    pub path: PathBuf,
    /// How tools address it: `.` for the first root, its name for others.
    pub mount: String,
    pub access: RootAccess,
}

/// A loaded workspace config.
#[derive(Debug, Clone)]
pub struct WorkspaceConfig {
    /// The file it came from; `None` when no config was found.
    pub file: Option<PathBuf>,
    /// The workspace folder: the config's folder, or the current folder.
    pub workspace: PathBuf,
    pub roots: Vec<Root>,
    pub tools: BTreeMap<String, ToolSettings>,
    /// `[model]`: the model server and model for the agent.
    pub model: ModelSettings,
    /// `[agent]`: how the agent loop works.
    pub agent: AgentConfig,
    /// `[profile.NAME]`: other `[model]` and `[agent]` settings, by name.
    pub profiles: BTreeMap<String, Profile>,
    /// The profile in use (`--profile`), if any.
    pub profile: Option<String>,
    /// `[workflow]`: limits and environment of workflow scripts.
    pub workflow: WorkflowConfig,
    /// `[[schedule]]`: workflows the daemon runs at cron times.
    pub schedules: Vec<ScheduleConfig>,
    /// `[daemon]`: how the daemon stops and what it keeps.
    pub daemon: DaemonConfig,
    /// `[[mcp_server]]`: external MCP servers whose tools join the registry.
    pub mcp_servers: Vec<McpServerConfig>,
    /// What no tool may change (the policy files) or read (`[secrets]`).
    pub files: Arc<FileRules>,
    /// `[[rule]]`: which calls run unasked, are asked, or are refused, by
    /// their arguments.
    pub rules: Rules,
    /// `[approvals]`: who is told of a call parked in the inbox.
    pub approvals: ApprovalsConfig,
    /// `[store]`: where runs are kept.
    pub store: StoreSetting,
    /// What this config asks but may not do, because the user has not
    /// trusted it as it is (see [`WorkspaceConfig::restrict_to_untrusted`]):
    /// one line each, for the warning. Empty when it asks nothing that
    /// needs trust, or is trusted.
    pub untrusted: Vec<String>,
    /// The SHA-256 of the file's bytes as loaded (what `toolcell trust`
    /// records); `None` for a config not read from a file.
    pub fingerprint: Option<String>,
    /// What the user should know of how this config was found, one
    /// message each (a config never trusted inside a trusted one's folder).
    pub notices: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    roots: Vec<Spanned<RawRoot>>,
    #[serde(default)]
    tools: BTreeMap<String, Spanned<RawToolSettings>>,
    model: Option<Spanned<RawModelSettings>>,
    agent: Option<Spanned<RawAgentConfig>>,
    workflow: Option<Spanned<RawWorkflowConfig>>,
    #[serde(default)]
    schedule: Vec<Spanned<RawSchedule>>,
    daemon: Option<Spanned<RawDaemonConfig>>,
    #[serde(default)]
    mcp_server: Vec<Spanned<RawMcpServer>>,
    secrets: Option<Spanned<RawSecrets>>,
    #[serde(default)]
    rule: Vec<Spanned<RawRule>>,
    approvals: Option<Spanned<RawApprovalsConfig>>,
    store: Option<Spanned<RawStoreConfig>>,
    #[serde(default)]
    profile: BTreeMap<String, Spanned<RawProfile>>,
}

/// `[secrets]`: secret files opened on purpose, and more to refuse.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSecrets {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoot {
    path: String,
    #[serde(default)]
    access: RootAccess,
    name: Option<String>,
}

/// toolcell's own folders outside the workspace, which a root may still
/// hold (a workspace in the home folder): the data folder (user tools, the
/// configs the user trusted) and the compiled-component cache.
fn toolcell_folders() -> Vec<PathBuf> {
    crate::util::locations::data_dir()
        .into_iter()
        .chain(crate::util::locations::cache_dir())
        .collect()
}

/// The largest config read: far beyond any real one, small enough that a
/// link to a device or a huge file cannot exhaust memory.
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The text of the config at `file`: a regular file of bounded size.
fn read_config(file: &Path) -> Result<String> {
    use std::io::Read;
    let opened = std::fs::File::open(file)
        .with_context(|| format!("cannot read the config {}", file.display()))?;
    let meta = opened
        .metadata()
        .with_context(|| format!("cannot read the config {}", file.display()))?;
    if !meta.is_file() {
        bail!(
            "the config {} is not a regular file\n  fix: point --config at a toolcell.toml",
            file.display()
        );
    }
    let mut text = String::new();
    opened
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read the config {} as UTF-8 text", file.display()))?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        bail!(
            "the config {} is larger than {MAX_CONFIG_BYTES} bytes\n  fix: a toolcell.toml is a few kilobytes; check the file",
            file.display()
        );
    }
    Ok(text)
}

impl WorkspaceConfig {
    /// Loads `explicit` if given, else the nearest `toolcell.toml` from `cwd`
    /// upwards, else the default config for `cwd`.
    pub fn discover(explicit: Option<&Path>, cwd: &Path) -> Result<Self> {
        if let Some(file) = explicit {
            let file = std::path::absolute(file)
                .with_context(|| format!("cannot resolve {}", file.display()))?;
            return Self::load(&file);
        }
        for dir in cwd.ancestors() {
            let candidate = dir.join(CONFIG_FILE);
            if candidate.is_file() {
                let mut config = Self::load(&candidate)?;
                config
                    .notices
                    .extend(trust::nested_in_trusted(&candidate, dir));
                return Ok(config);
            }
        }
        Self::default_for(cwd)
    }

    /// The config used when there is no file: `cwd` is the one root, writable.
    pub fn default_for(cwd: &Path) -> Result<Self> {
        let path = cwd
            .canonicalize()
            .with_context(|| format!("cannot open the current folder {}", cwd.display()))?;
        let workspace = path.clone();
        Ok(Self {
            file: None,
            workspace: path.clone(),
            roots: vec![Root {
                path,
                mount: ".".into(),
                access: RootAccess::Write,
            }],
            tools: BTreeMap::new(),
            model: ModelSettings::default(),
            agent: AgentConfig::default(),
            profiles: BTreeMap::new(),
            profile: None,
            workflow: WorkflowConfig::default(),
            schedules: Vec::new(),
            daemon: DaemonConfig::default(),
            mcp_servers: Vec::new(),
            files: Arc::new(FileRules {
                policy: PolicyFiles::new(None, &workspace, []).with_private(toolcell_folders()),
                secrets: SecretRules::default(),
            }),
            rules: Rules::default(),
            approvals: ApprovalsConfig::default(),
            store: StoreSetting::Local,
            untrusted: Vec::new(),
            fingerprint: None,
            notices: Vec::new(),
        })
    }

    /// Reads and validates the config at `file`. If it starts programs and
    /// the user has not trusted it as it is, they are left out (see
    /// [`WorkspaceConfig::untrusted`]).
    pub fn load(file: &Path) -> Result<Self> {
        Self::load_with_trust(file, TrustStore::for_user().as_ref())
    }

    /// [`WorkspaceConfig::load`] with the user's trust kept in `trust`.
    pub fn load_with_trust(file: &Path, trust: Option<&TrustStore>) -> Result<Self> {
        let text = read_config(file)?;
        let mut config = Self::parse(file, &text)?;
        config.fingerprint = Some(config.trust_fingerprint(&text));
        let mut restricted = config.clone();
        let mut asks = restricted.restrict_to_untrusted();
        // A scheduled workflow whose modules cannot all be kept is not
        // covered by trust: what needs it stays out until it is moved.
        let crowded = config.crowded_workflows_said();
        if !asks.is_empty() && (!config.is_trusted(trust) || !crowded.is_empty()) {
            asks.extend(
                crowded
                    .into_iter()
                    .map(|why| format!("(nor can it be trusted while {why})")),
            );
            restricted.untrusted = asks;
            return Ok(restricted);
        }
        Ok(config)
    }

    /// Uses the settings of `[profile.NAME]` as `[model]` and `[agent]`.
    pub fn use_profile(&mut self, name: &str) -> Result<()> {
        let Some(profile) = self.profiles.get(name) else {
            let file = self
                .file
                .as_deref()
                .map_or("no config file".into(), |f| f.display().to_string());
            let known: Vec<&str> = self.profiles.keys().map(String::as_str).collect();
            let l = crate::util::text::for_terminal_line;
            let (name, file) = (l(name), l(&file));
            anyhow::bail!(
                "there is no profile `{name}` in {file}\n  fix: {}",
                if known.is_empty() {
                    format!("add a [profile.{name}] table, or leave out --profile")
                } else {
                    format!("use one of: {}", l(&known.join(", ")))
                }
            );
        };
        self.model = profile.model.clone();
        self.agent = profile.agent.clone();
        self.profile = Some(name.to_string());
        Ok(())
    }

    /// Validates config `text`; relative root paths resolve against `file`'s folder.
    pub fn parse(file: &Path, text: &str) -> Result<Self> {
        let table = |span: std::ops::Range<usize>, name: &str| Table {
            document: Document::Config,
            file,
            text,
            span,
            name: name.to_string(),
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            let fix = if message.starts_with("missing field") {
                "add it; see the README's \"Configuration\" section"
            } else {
                "correct or remove that key; see the README's \"Configuration\" section"
            };
            Problem {
                document: Document::Config,
                file: file.to_path_buf(),
                key: e.span().and_then(|s| key_at(text, s.start)),
                position: e.span().map(|s| line_col(text, s.start)),
                message,
                fix: fix.into(),
            }
        })?;
        let workspace = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let workspace = workspace
            .canonicalize()
            .with_context(|| format!("cannot open the config's folder {}", workspace.display()))?;

        let mut roots: Vec<Root> = Vec::new();
        for (index, spanned) in raw.roots.iter().enumerate() {
            let at = table(spanned.span(), "roots");
            let root = spanned.get_ref();
            let host = workspace.join(&root.path);
            let path = host.canonicalize().map_err(|e| {
                at.problem(
                    Some("path"),
                    format!("root `{}` cannot be opened ({e})", root.path),
                    "create the folder or correct `path`",
                )
            })?;
            if !path.is_dir() {
                return Err(at
                    .problem(
                        Some("path"),
                        format!("root `{}` is not a folder", root.path),
                        "point `path` at a folder",
                    )
                    .into());
            }
            let mount = if index == 0 {
                if let Some(name) = &root.name {
                    return Err(at
                        .problem(
                            Some("name"),
                            format!("the first root is always `.` for tools, it cannot be named `{name}`"),
                            "remove `name` from the first [[roots]] entry",
                        )
                        .into());
                }
                ".".to_string()
            } else {
                let name = match &root.name {
                    Some(name) => name.clone(),
                    None => path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .unwrap_or_default()
                        .to_string(),
                };
                let valid = !name.is_empty()
                    && name != "."
                    && name != ".."
                    && !name.contains(['/', '\\', '\0']);
                if !valid {
                    return Err(at
                        .problem(
                            Some("name"),
                            format!("`{name}` cannot name a root"),
                            "give `name` a single folder name such as \"docs\"",
                        )
                        .into());
                }
                if roots.iter().any(|r| r.mount == name) {
                    return Err(at
                        .problem(
                            Some("name"),
                            format!("two roots are named `{name}`"),
                            "give one of them another `name`",
                        )
                        .into());
                }
                name
            };
            roots.push(Root {
                path,
                mount,
                access: root.access,
            });
        }
        if roots.is_empty() {
            roots.push(Root {
                path: workspace.clone(),
                mount: ".".into(),
                access: RootAccess::Write,
            });
        }

        let mut tools = BTreeMap::new();
        for (name, spanned) in raw.tools {
            let at = table(spanned.span(), &format!("tools.{name}"));
            let settings = ToolSettings::from_raw(spanned.into_inner(), &at, &workspace)?;
            tools.insert(name, settings);
        }

        let mut profiles = BTreeMap::new();
        for (name, spanned) in raw.profile {
            let whole = spanned.span();
            let profile = Profile::from_raw(
                spanned.into_inner(),
                raw.model.as_ref().map(Spanned::get_ref),
                raw.agent.as_ref().map(Spanned::get_ref),
                table,
                &name,
                whole,
            )?;
            profiles.insert(name, profile);
        }
        let model = match raw.model {
            None => ModelSettings::default(),
            Some(spanned) => {
                let at = table(spanned.span(), "model");
                ModelSettings::from_raw(spanned.into_inner(), &at)?
            }
        };
        let agent = match raw.agent {
            None => AgentConfig::default(),
            Some(spanned) => {
                AgentConfig::from_raw(spanned.get_ref(), &table(spanned.span(), "agent"))?
            }
        };

        let workflow = match raw.workflow {
            None => WorkflowConfig::default(),
            Some(spanned) => {
                let at = table(spanned.span(), "workflow");
                WorkflowConfig::from_raw(spanned.into_inner(), &at)?
            }
        };

        let mut schedules: Vec<ScheduleConfig> = Vec::new();
        for spanned in raw.schedule {
            let at = table(spanned.span(), "schedule");
            let schedule = ScheduleConfig::from_raw(spanned.into_inner(), &at, &workspace)?;
            if schedules.iter().any(|s| s.name == schedule.name) {
                return Err(at
                    .problem(
                        Some("name"),
                        format!("two schedules are named `{}`", schedule.name),
                        "give one of them another `name`",
                    )
                    .into());
            }
            schedules.push(schedule);
        }
        let daemon = match raw.daemon {
            None => DaemonConfig::default(),
            Some(spanned) => {
                let at = table(spanned.span(), "daemon");
                DaemonConfig::from_raw(spanned.into_inner(), &at)?
            }
        };

        let mut mcp_servers: Vec<McpServerConfig> = Vec::new();
        for spanned in raw.mcp_server {
            let at = table(spanned.span(), "mcp_server");
            let server = McpServerConfig::from_raw(spanned.into_inner(), &at, &workspace)?;
            if mcp_servers.iter().any(|s| s.name == server.name) {
                return Err(at
                    .problem(
                        Some("name"),
                        format!("two MCP servers are named `{}`", server.name),
                        "give one of them another `name`",
                    )
                    .into());
            }
            mcp_servers.push(server);
        }

        let mut secrets = SecretRules::default();
        if let Some(spanned) = raw.secrets {
            let at = table(spanned.span(), "secrets");
            let raw = spanned.into_inner();
            let bad = |list: &[String]| {
                list.iter().find_map(|p| {
                    SecretRules::check_pattern(p)
                        .err()
                        .map(|why| (p.clone(), why))
                })
            };
            let found = match bad(&raw.allow) {
                Some(found) => Some(("allow", found)),
                None => bad(&raw.deny).map(|found| ("deny", found)),
            };
            if let Some((key, (pattern, why))) = found {
                return Err(at
                    .problem(
                        Some(key),
                        format!("secrets: `{}` is not a pattern: {why}", pattern.escape_debug()),
                        "give paths or patterns inside a root, such as \".env.test\" or \"fixtures/**/*.pem\"",
                    )
                    .into());
            }
            secrets = SecretRules::new(raw.allow, raw.deny);
        }
        let mut rules = Rules::default();
        for spanned in raw.rule {
            let at = table(spanned.span(), "rule");
            let (line, _) = line_col(text, spanned.span().start);
            let place = format!(
                "{}:{line}",
                file.file_name().unwrap_or_default().to_string_lossy()
            );
            rules
                .rules
                .push(Rule::from_raw(spanned.into_inner(), &at, place)?);
        }
        let approvals = match raw.approvals {
            None => ApprovalsConfig::default(),
            Some(spanned) => {
                let at = table(spanned.span(), "approvals");
                ApprovalsConfig::from_raw(spanned.into_inner(), &at, &workspace)?
            }
        };
        let store = match raw.store {
            None => StoreSetting::Local,
            Some(spanned) => {
                let at = table(spanned.span(), "store");
                let folder = file.parent().unwrap_or(Path::new("."));
                StoreSetting::from_raw(spanned.into_inner(), &at, folder)?
            }
        };
        let policy = PolicyFiles::new(
            Some(file),
            &workspace,
            schedules
                .iter()
                .map(|s| (s.workflow.as_path(), s.name.as_str())),
        )
        .with_programs(
            mcp_servers
                .iter()
                .flat_map(|server| {
                    server
                        .program_files()
                        .into_iter()
                        .map(|file| (file, format!("the MCP server `{}`", server.name)))
                })
                .chain(
                    approvals
                        .on_waiting
                        .iter()
                        .filter_map(|on| on.program_file())
                        .map(|file| (file, "[approvals] on_waiting".to_string())),
                ),
        )
        .with_private(toolcell_folders());

        Ok(Self {
            file: Some(file.to_path_buf()),
            workspace,
            roots,
            tools,
            model,
            agent,
            profiles,
            profile: None,
            workflow,
            schedules,
            daemon,
            mcp_servers,
            files: Arc::new(FileRules { policy, secrets }),
            rules,
            approvals,
            store,
            untrusted: Vec::new(),
            fingerprint: None,
            notices: Vec::new(),
        })
    }

    /// The user's settings for `tool`, or the defaults.
    pub fn tool(&self, tool: &str) -> &ToolSettings {
        static UNSET: ToolSettings = ToolSettings::UNSET;
        self.tools.get(tool).unwrap_or(&UNSET)
    }

    /// The workspace's state folder (installed tools, the run store).
    pub fn state_dir(&self) -> PathBuf {
        self.workspace.join(STATE_DIR)
    }

    /// Where workspace-installed tools live.
    pub fn workspace_tools_dir(&self) -> PathBuf {
        self.workspace.join(STATE_DIR).join("tools")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE);
        let err = WorkspaceConfig::parse(&file, "[[roots]]\npath = \".\"\nacess = \"read\"\n")
            .unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains(":3:1"), "{msg}");
        assert!(msg.contains("unknown field `acess`"), "{msg}");
    }

    #[test]
    fn roots_resolve_relative_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        let file = dir.path().join(CONFIG_FILE);
        let text = "[[roots]]\npath = \".\"\naccess = \"read\"\n[[roots]]\npath = \"docs\"\n";
        let config = WorkspaceConfig::parse(&file, text).unwrap();
        assert_eq!(config.roots.len(), 2);
        assert_eq!(config.roots[0].mount, ".");
        assert_eq!(config.roots[0].access, RootAccess::Read);
        assert_eq!(config.roots[1].mount, "docs");
    }

    #[test]
    fn network_grants_are_host_patterns() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE);
        let err = WorkspaceConfig::parse(
            &file,
            "[tools.web_fetch]\nnetwork = [\"https://example.com\"]\n",
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("tools.web_fetch.network"),
            "{err:#}"
        );
        let err = WorkspaceConfig::parse(&file, "[tools.web_fetch]\nnetwork = [\"*:8080\"]\n")
            .unwrap_err();
        assert!(format!("{err:#}").contains("`*:8080`"), "{err:#}");
        assert!(
            WorkspaceConfig::parse(
                &file,
                "[tools.web_fetch]\nnetwork = [\"*\", \"127.0.0.1:8080\"]\n"
            )
            .is_ok()
        );
    }

    #[test]
    fn missing_root_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(CONFIG_FILE);
        let err = WorkspaceConfig::parse(&file, "[[roots]]\npath = \"nope\"\n").unwrap_err();
        assert!(format!("{err:#}").contains("root `nope` cannot be opened"));
    }
}
