//! `toolcell schedule export kubernetes`: the workspace's schedules as
//! manifests a cluster takes as they are — pure functions from the loaded
//! config to YAML (see `docs/kubernetes.md`).
//!
//! What it writes, in this order:
//! - one ConfigMap, `NAME-config`, holding `toolcell.toml` and the
//!   workflows (and, for a workflow that imports, every `.rhai` file beside
//!   and beneath it), each mounted read-only where it is in the workspace;
//! - one `batch/v1` CronJob per schedule, `NAME-SCHEDULE` ([`cronjob`]),
//!   running `toolcell schedule run SCHEDULE` in the image, the workspace
//!   a PersistentVolumeClaim mounted at [`WORKSPACE`].
//!
//! It refuses, naming the schedule or the key and saying what to do, what
//! a cluster would run differently than the daemon: a cron Kubernetes
//! cannot read ([`cron`]), `overlap = "queue"`, a path outside the
//! workspace (the pod has only the workspace), and a config not trusted
//! here (the pod trusts the config it is given, see [`cronjob`]).

pub mod cron;
pub mod cronjob;
pub mod yaml;

use crate::config::WorkspaceConfig;
use crate::config::store::StoreSetting;
use crate::registry::Registry;
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use yaml::{MapBuilder, Node};

/// Where the image keeps the workspace, and the pod mounts the claim: the
/// Containerfile makes this folder, owned by [`USER_ID`].
pub const WORKSPACE: &str = "/workspace";

/// The image's user and group: not root, and above the ids a distribution
/// hands out, so it owns nothing of the base image. The Containerfile
/// creates it with this id.
pub const USER_ID: i64 = 10001;

/// The image user's home: a writable emptyDir in the pod (the root file
/// system is read-only), where toolcell keeps its data (the trust of the
/// config) and its cache (compiled tools) under the XDG defaults.
pub const HOME: &str = "/home/toolcell";

/// The config's name in the pod, and the ConfigMap's key for it.
pub const CONFIG_FILE: &str = "toolcell.toml";

/// Object names when `--name` is not given.
pub const DEFAULT_NAME: &str = "toolcell";

/// The longest CronJob name: Kubernetes adds 11 characters for each Job,
/// whose name must stay within 63.
const MAX_CRONJOB_NAME: usize = 52;

/// The most a ConfigMap holds (etcd's object size limit).
const MAX_CONFIG_MAP_BYTES: usize = 1024 * 1024;

/// What the command line chose.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The image with toolcell (the Containerfile's).
    pub image: String,
    /// Where the objects go; `None`: kubectl's current namespace.
    pub namespace: Option<String>,
    /// The PersistentVolumeClaim holding the workspace.
    pub workspace_claim: String,
    /// The Secret holding the granted environment variables, by name.
    pub secret: String,
    /// The prefix of every object's name.
    pub name: String,
}

impl ExportOptions {
    /// The defaults for `image`: the claim `NAME-workspace`, the Secret
    /// `NAME-env`.
    pub fn new(image: String, name: Option<String>) -> Self {
        let name = name.unwrap_or_else(|| DEFAULT_NAME.to_string());
        Self {
            image,
            namespace: None,
            workspace_claim: format!("{name}-workspace"),
            secret: format!("{name}-env"),
            name,
        }
    }
}

/// One file of the ConfigMap: its key, and where it is in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    pub key: String,
    /// Relative to the workspace, with `/`.
    pub path: String,
}

/// The manifests for `config`'s schedules; `registry` says which tools
/// change nothing (what the pod has: built-in and workspace tools).
pub fn export(
    config: &WorkspaceConfig,
    registry: &Registry,
    options: &ExportOptions,
) -> Result<String> {
    check_options(options)?;
    let Some(file) = &config.file else {
        bail!(
            "no toolcell.toml here or above: there are no schedules to export\n  fix: create toolcell.toml with [[schedule]] entries first"
        );
    };
    if !config.untrusted.is_empty() {
        bail!(
            "{} is not trusted here, and the pod would trust it: it asks\n  - {}\n  fix: read it, run `toolcell trust`, then export",
            file.display(),
            config.untrusted.join("\n  - ")
        );
    }
    if config.schedules.is_empty() {
        bail!(
            "{} has no [[schedule]] entries: nothing to export\n  fix: add one (see `toolcell schedule list`)",
            file.display()
        );
    }
    check_paths(config)?;
    let mut files = BTreeMap::new();
    files.insert(
        CONFIG_FILE.to_string(),
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?,
    );
    let mut mounts = vec![ConfigFile {
        key: CONFIG_FILE.into(),
        path: CONFIG_FILE.into(),
    }];
    let mut jobs = Vec::new();
    let mut names = BTreeMap::new();
    let mut schedules: Vec<_> = config.schedules.iter().collect();
    schedules.sort_by(|a, b| a.name.cmp(&b.name));
    for schedule in &schedules {
        let job = format!("{}-{}", options.name, schedule.name)
            .to_ascii_lowercase()
            .replace('_', "-");
        check_name(
            &job,
            MAX_CRONJOB_NAME,
            &format!("schedule `{}`", schedule.name),
        )?;
        if let Some(other) = names.insert(job.clone(), schedule.name.clone()) {
            bail!(
                "schedules `{other}` and `{}` would both be the CronJob `{job}` (names are lower case, _ becomes -)\n  fix: rename one of them",
                schedule.name
            );
        }
        let workflow = cronjob::workflow_files(config, registry, schedule)?;
        for (path, text) in workflow.files {
            if files.contains_key(&path.key) {
                continue;
            }
            files.insert(path.key.clone(), text);
            mounts.push(path);
        }
        jobs.push((schedule, job, workflow.retries));
    }
    let keys: BTreeSet<String> = mounts.iter().map(|m| m.key.clone()).collect();
    if keys.len() != mounts.len() {
        bail!(
            "two workflow files would have the same ConfigMap key\n  fix: give the workflow files names that differ by more than / and _"
        );
    }
    let size: usize = files.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_CONFIG_MAP_BYTES {
        bail!(
            "the config and the workflows are {size} bytes, more than a ConfigMap holds ({MAX_CONFIG_MAP_BYTES})\n  fix: make the workflows smaller"
        );
    }
    mounts.sort_by(|a, b| a.path.cmp(&b.path));
    let env = granted_env(config);
    let mut documents = vec![(Vec::new(), config_map(options, files))];
    for (schedule, job, retries) in jobs {
        let job = cronjob::CronJob {
            schedule,
            name: &job,
            retries,
            profile: config.profile.as_deref(),
            mounts: &mounts,
            env: &env,
            default_timeout: config.workflow.limits.timeout,
        };
        documents.push(job.build(options)?);
    }
    let mut out = String::from(
        "# Written by `toolcell schedule export kubernetes`; apply with `kubectl apply -f`.\n",
    );
    for (comments, document) in &documents {
        let text = yaml::stream(std::slice::from_ref(document));
        let (start, body) = text.split_at("---\n".len());
        out.push_str(start);
        for line in comments {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(body);
    }
    Ok(out)
}

/// The labels of every object, and of the pods.
pub fn labels(options: &ExportOptions) -> MapBuilder {
    MapBuilder::new()
        .with("app.kubernetes.io/name", "toolcell")
        .with("app.kubernetes.io/instance", options.name.as_str())
}

/// `metadata` of an object named `name`.
pub fn metadata(options: &ExportOptions, name: &str) -> MapBuilder {
    MapBuilder::new()
        .with("name", name)
        .with_some("namespace", options.namespace.as_deref())
        .with("labels", labels(options))
}

fn config_map(options: &ExportOptions, files: BTreeMap<String, String>) -> Node {
    let mut data = MapBuilder::new();
    for (key, text) in files {
        data = data.with(&key, Node::Text(text));
    }
    MapBuilder::new()
        .with("apiVersion", "v1")
        .with("kind", "ConfigMap")
        .with(
            "metadata",
            metadata(options, &format!("{}-config", options.name)),
        )
        .with("data", data)
        .build()
}

/// Every environment variable the config grants to something, by name:
/// the model's key, the shared store's password, tools' and scripts'
/// grants, what MCP servers are passed or send. The pod takes each from the Secret, never a value.
/// `HOME` is the pod's own.
pub fn granted_env(config: &WorkspaceConfig) -> Vec<String> {
    let mut names = BTreeSet::new();
    names.extend(config.model.api_key_env.iter().cloned());
    if let StoreSetting::Postgres {
        password_env: Some(variable),
        ..
    } = &config.store
    {
        names.insert(variable.clone());
    }
    for settings in config.tools.values() {
        names.extend(settings.env.iter().cloned());
    }
    names.extend(config.workflow.env.iter().cloned());
    for server in config.mcp_servers.iter().filter(|s| s.enabled) {
        names.extend(server.env_passed.iter().cloned());
        if let Some(remote) = &server.remote {
            names.extend(remote.bearer_token_env.iter().cloned());
            names.extend(remote.header_envs.values().cloned());
        }
    }
    names.remove("HOME");
    names.into_iter().collect()
}

/// Refuses what names a path outside the workspace: the pod has the
/// workspace only.
fn check_paths(config: &WorkspaceConfig) -> Result<()> {
    let outside = |what: String, path: &Path| -> Result<()> {
        match inside(&config.workspace, path) {
            Some(_) => Ok(()),
            None => bail!(
                "{what} is {}, outside the workspace {}: a pod has only the workspace\n  fix: keep what the schedules need inside the workspace, or leave it out of the config you export",
                path.display(),
                config.workspace.display()
            ),
        }
    };
    for root in &config.roots {
        outside(format!("the root `{}`", root.mount), &root.path)?;
    }
    for (name, settings) in &config.tools {
        for path in settings.read.iter().chain(&settings.write) {
            outside(format!("a path granted to `{name}`"), path)?;
        }
    }
    for server in config.mcp_servers.iter().filter(|s| s.is_started()) {
        let name = &server.name;
        outside(
            format!("the folder of the MCP server `{name}`"),
            &server.cwd,
        )?;
        for path in server.read.iter().chain(&server.write) {
            outside(format!("a path granted to the MCP server `{name}`"), path)?;
        }
    }
    if let StoreSetting::Postgres {
        ca_file: Some(file),
        ..
    } = &config.store
    {
        outside("the run store's ca_file".into(), file)?;
    }
    for schedule in &config.schedules {
        outside(
            format!("the workflow of schedule `{}`", schedule.name),
            &schedule.workflow,
        )?;
    }
    Ok(())
}

/// `path` relative to `workspace`, with `/`, when it is inside it as
/// written and where it leads (a link out is outside).
pub fn inside(workspace: &Path, path: &Path) -> Option<String> {
    let mut lexical = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let relative = lexical.strip_prefix(workspace).ok()?;
    let real = path.canonicalize().unwrap_or(lexical.clone());
    real.strip_prefix(workspace).ok()?;
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

fn check_options(options: &ExportOptions) -> Result<()> {
    if options.image.trim().is_empty() || options.image.chars().any(char::is_whitespace) {
        bail!(
            "--image `{}` is not an image reference\n  fix: give one like registry.example/toolcell:1.0",
            options.image
        );
    }
    check_name(&options.name, MAX_CRONJOB_NAME - 2, "--name")?;
    check_name(&options.workspace_claim, 253, "--workspace-claim")?;
    check_name(&options.secret, 253, "--secret")?;
    if let Some(namespace) = &options.namespace {
        check_name(namespace, 63, "--namespace")?;
    }
    Ok(())
}

/// Refuses `name` unless Kubernetes takes it as an object's name: lower
/// case letters, digits and `-`, starting and ending with a letter or digit.
fn check_name(name: &str, max: usize, what: &str) -> Result<()> {
    let fits = !name.is_empty()
        && name.len() <= max
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !fits {
        bail!(
            "{what}: `{name}` is not a Kubernetes name of at most {max} characters\n  fix: use lower-case letters, digits and -, starting and ending with a letter or digit"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_the_workspace_as_written_and_as_it_leads() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir_all(ws.join("flows")).unwrap();
        std::fs::write(ws.join("flows/a.rhai"), "1").unwrap();
        assert_eq!(
            inside(&ws, &ws.join("flows/a.rhai")).as_deref(),
            Some("flows/a.rhai")
        );
        assert_eq!(
            inside(&ws, &ws.join("./flows/../flows/a.rhai")).as_deref(),
            Some("flows/a.rhai")
        );
        assert_eq!(inside(&ws, &ws.join("../elsewhere.rhai")), None);
        std::os::unix::fs::symlink(temp.path(), ws.join("out")).unwrap();
        assert_eq!(inside(&ws, &ws.join("out")), None);
    }

    #[test]
    fn names_kubernetes_takes() {
        assert!(check_name("toolcell-nightly-2", 52, "x").is_ok());
        for bad in ["", "Upper", "-lead", "trail-", "dot.ted", &"a".repeat(53)] {
            assert!(check_name(bad, 52, "x").is_err(), "{bad}");
        }
    }
}
