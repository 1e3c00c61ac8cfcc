//! What a config may do only once the user trusted it, and how a trusted
//! config is known again: its fingerprint (its text and where the folders
//! it names lead) under its folder's key, in the user's trust store.

use super::tools::ApprovalSetting;
use super::{Root, RootAccess, WorkspaceConfig, read_config};
use crate::contain::SandboxSetting;
use crate::policy::rules::RuleDecision;
use crate::policy::trust::{self, TrustStore};
use crate::util::locations::CONFIG_FILE;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// What a trust record names a config by: its folder, resolved, and its
/// name — not where a link named `toolcell.toml` leads, since the folder
/// holding the name is the workspace whose roots and programs it sets (a
/// link to a trusted config elsewhere is not trusted with it).
pub fn trust_key(file: &Path) -> std::io::Result<PathBuf> {
    let folder = file.parent().unwrap_or(Path::new("."));
    let folder = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    Ok(folder
        .canonicalize()?
        .join(file.file_name().unwrap_or_default()))
}

impl WorkspaceConfig {
    /// What trusting this config (parsed from `text`) means: its text,
    /// where each folder it names leads now — its roots, the folders its
    /// programs and servers may read or write, a server's working folder —
    /// and what the files that run on its word hold: servers' program
    /// files and scheduled workflows with their modules.
    /// A root swapped for a link (by a program that could write the
    /// workspace) changes where the config reaches, so it is untrusted
    /// again, as if its text had changed.
    pub fn trust_fingerprint(&self, text: &str) -> String {
        let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let mut leads: Vec<PathBuf> = self.roots.iter().map(|r| r.path.clone()).collect();
        for settings in self.tools.values() {
            leads.extend(settings.read.iter().chain(&settings.write).map(|p| real(p)));
        }
        for server in &self.mcp_servers {
            leads.push(real(&server.cwd));
            leads.extend(server.read.iter().chain(&server.write).map(|p| real(p)));
        }
        let mut bytes = text.as_bytes().to_vec();
        bytes.extend_from_slice(b"\0leads\0");
        for path in leads {
            bytes.extend_from_slice(path.as_os_str().as_encoded_bytes());
            bytes.push(0);
        }
        // What runs on the config's word: a server's script or a scheduled
        // workflow changed (by a tool of another workspace around this one,
        // by a server between its calls, by anyone) is untrusted with it.
        bytes.extend_from_slice(b"\0runs\0");
        for file in self.files.policy.run_files() {
            bytes.extend_from_slice(file.as_os_str().as_encoded_bytes());
            bytes.push(0);
            bytes.extend_from_slice(run_file_state(&file).as_bytes());
            bytes.push(0);
        }
        trust::fingerprint(&bytes)
    }

    /// Whether the user trusted this config's file as it was loaded.
    pub fn is_trusted(&self, trust: Option<&TrustStore>) -> bool {
        let (Some(file), Some(fingerprint)) = (&self.file, &self.fingerprint) else {
            return false;
        };
        let (Some(store), Ok(file)) = (trust, trust_key(file)) else {
            return false;
        };
        store.is_trusted(&file, fingerprint)
    }

    /// Takes out what a config may do only once the user trusted it — what
    /// a config found in a cloned repository must not do on its own — and
    /// says what, one line each:
    /// - start programs: its `[[mcp_server]]`s, programs granted to tools;
    /// - hand on secrets and data: environment variables granted to tools
    ///   or scripts, the model's key variable, a model server not on this
    ///   machine, network hosts granted, secret files opened (`[secrets]
    ///   allow`);
    /// - act unasked: `approval = "auto"`, `[[rule]]`s that decide `auto`,
    ///   a schedule's `approve` list;
    /// - reach beyond its folder: roots outside the workspace (a first
    ///   root outside becomes the workspace itself, read-only).
    pub fn restrict_to_untrusted(&mut self) -> Vec<String> {
        let line = |text: &str| crate::util::text::for_terminal_line(text).into_owned();
        let mut asks = Vec::new();
        for server in self.mcp_servers.iter_mut().filter(|s| s.enabled) {
            let sends: Vec<String> = server
                .remote
                .iter()
                .flat_map(|remote| {
                    let token = remote
                        .bearer_token_env
                        .iter()
                        .map(|variable| format!("${variable} as its bearer token"));
                    let headers = remote
                        .header_envs
                        .iter()
                        .map(|(header, variable)| format!("${variable} as {header}"));
                    token.chain(headers).collect::<Vec<_>>()
                })
                .collect();
            let sends = if sends.is_empty() {
                String::new()
            } else {
                format!(", sent {}", sends.join(", "))
            };
            asks.push(format!(
                "the MCP server `{}`: {}{}",
                line(&server.name),
                line(&server.command_line()),
                line(&sends)
            ));
            server.enabled = false;
        }
        for (name, settings) in &mut self.tools {
            let name = line(name);
            for (what, granted) in [
                ("programs", &mut settings.process),
                ("environment variables", &mut settings.env),
                ("network hosts", &mut settings.network),
            ] {
                if !granted.is_empty() {
                    asks.push(format!(
                        "{what} granted to `{name}`: {}",
                        line(&granted.join(", "))
                    ));
                    granted.clear();
                }
            }
            settings.sandbox = SandboxSetting::Confined;
            settings.read.clear();
            settings.write.clear();
            if settings.approval == Some(ApprovalSetting::Auto) {
                asks.push(format!(
                    "`{name}` approved automatically (approval = \"auto\")"
                ));
                settings.approval = None;
            }
        }
        // Rules that ask or refuse apply trusted or not: they only narrow.
        let loosening: Vec<String> = self
            .rules
            .rules
            .iter()
            .filter(|rule| rule.decision == RuleDecision::Auto)
            .map(|rule| format!("calls approved automatically by the {}", rule.label()))
            .collect();
        if !loosening.is_empty() {
            asks.extend(loosening);
            self.rules
                .rules
                .retain(|rule| rule.decision != RuleDecision::Auto);
        }
        if let Some(on_waiting) = self.approvals.on_waiting.take() {
            asks.push(format!(
                "the program told of parked calls: {}",
                line(&on_waiting.command_line())
            ));
        }
        if self.store != super::store::StoreSetting::Local {
            asks.push(format!(
                "runs kept in {} (the workspace's own store is used instead)",
                line(&self.store.describe())
            ));
            self.store = super::store::StoreSetting::Local;
        }
        // `[model]` and every profile: `--profile` puts a profile's in place.
        for (profile, model) in std::iter::once((None, &mut self.model)).chain(
            self.profiles
                .iter_mut()
                .map(|(name, profile)| (Some(name.as_str()), &mut profile.model)),
        ) {
            let of = profile.map_or(String::new(), |name| format!(" (profile `{}`)", line(name)));
            if let Some(key) = model.api_key_env.take() {
                asks.push(format!(
                    "the model server gets the key in ${}{of}",
                    line(&key)
                ));
            }
            if !model_server_is_local(&model.base_url) {
                asks.push(format!(
                    "the conversation is sent to {}, not on this machine{of}",
                    line(&model.base_url)
                ));
                model.base_url = model.provider.default_base_url().to_string();
            }
        }
        if let Some(opened) = self.files.secrets.opened() {
            asks.push(format!("secret files opened: {}", line(&opened.join(", "))));
            let mut files = (*self.files).clone();
            files.secrets = files.secrets.closed();
            self.files = std::sync::Arc::new(files);
        }
        if !self.workflow.env.is_empty() {
            asks.push(format!(
                "environment variables for scripts: {}",
                line(&self.workflow.env.join(", "))
            ));
            self.workflow.env.clear();
        }
        for schedule in &mut self.schedules {
            if !schedule.approve.is_empty() {
                asks.push(format!(
                    "tools approved for the schedule `{}`: {}",
                    line(&schedule.name),
                    line(&schedule.approve.join(", "))
                ));
                schedule.approve.clear();
            }
        }
        let workspace = self.workspace.clone();
        let outside: Vec<String> = self
            .roots
            .iter()
            .filter(|r| !r.path.starts_with(&workspace))
            .map(|r| {
                format!(
                    "the root {} (outside the workspace)",
                    line(&r.path.display().to_string())
                )
            })
            .collect();
        if !outside.is_empty() {
            asks.extend(outside);
            let first_outside = !self.roots[0].path.starts_with(&workspace);
            self.roots.retain(|r| r.path.starts_with(&workspace));
            if first_outside {
                self.roots.insert(
                    0,
                    Root {
                        path: workspace,
                        mount: ".".into(),
                        access: RootAccess::Read,
                    },
                );
            }
        }
        asks
    }

    /// The schedules whose workflow sits in a folder too crowded for its
    /// modules to be kept and covered by trust, one line each, with how to
    /// mend it.
    pub fn crowded_workflows_said(&self) -> Vec<String> {
        self.files
            .policy
            .crowded_workflows()
            .into_iter()
            .map(|schedule| {
                format!(
                    "the workflow of the schedule `{}` sits in a folder too crowded to keep its modules (over 1,000 files and folders): move it into a folder of its own",
                    crate::util::text::for_terminal_line(&schedule)
                )
            })
            .collect()
    }

    /// Trusts the config at `file` as it is now (`toolcell trust`), if it
    /// is valid; returns the fingerprint recorded and the programs it may
    /// now start.
    pub fn trust(file: &Path) -> Result<(String, Vec<String>)> {
        let text = read_config(file)?;
        let config = Self::parse(file, &text)?;
        if let Some(crowded) = config.crowded_workflows_said().first() {
            anyhow::bail!("{} cannot be trusted: {crowded}", file.display());
        }
        let fingerprint = config.trust_fingerprint(&text);
        let programs = config.clone().restrict_to_untrusted();
        let store = TrustStore::for_user()
            .context("no user data folder to keep the trust in: set TOOLCELL_DATA_DIR or HOME")?;
        let file = trust_key(file).with_context(|| format!("cannot resolve {}", file.display()))?;
        store.trust(&file, &fingerprint)?;
        Ok((fingerprint, programs))
    }
}

/// The most bytes of a file that runs on a config's word read to know it
/// again: a script or a workflow is far smaller; a larger file (a program's
/// binary) is known by its size, inode and change time, which any write
/// moves.
const MAX_HASHED_RUN_FILE: u64 = 1024 * 1024;

/// What a file that runs on a config's word holds now, for its fingerprint:
/// the SHA-256 of its bytes, or for a large file its size, inode and change
/// time; `absent` when there is none.
fn run_file_state(file: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(file) else {
        return "absent".into();
    };
    if meta.is_file()
        && meta.len() <= MAX_HASHED_RUN_FILE
        && let Ok(bytes) = std::fs::read(file)
    {
        return trust::fingerprint(&bytes);
    }
    format!(
        "{} {} {}.{}",
        meta.len(),
        meta.ino(),
        meta.ctime(),
        meta.ctime_nsec()
    )
}

/// Whether a model server's address is on this machine: where an
/// untrusted config may send the conversation (and the files read in it).
fn model_server_is_local(base_url: &str) -> bool {
    reqwest::Url::parse(base_url).is_ok_and(|url| crate::config::mcp_server::is_loopback(&url))
}

/// A warning when `found` (the config nearest the current folder, in
/// `dir`) was never trusted but lies inside the folder of a config above it
/// that was: the nearest config is the one used, so the rules of the one
/// above (secrets refused, approvals, read-only roots) do not hold here —
/// as a program that may write the workspace could arrange by writing one.
pub fn nested_in_trusted(found: &Path, dir: &Path) -> Option<String> {
    let outer = dir
        .ancestors()
        .skip(1)
        .map(|up| up.join(CONFIG_FILE))
        .find(|file| file.is_file())?;
    let store = TrustStore::for_user()?;
    let key = |file: &Path| trust_key(file).ok();
    let (outer_key, found_key) = (key(&outer)?, key(found)?);
    if !store.knows(&outer_key) || store.knows(&found_key) {
        return None;
    }
    Some(format!(
        "{} is used here, inside the workspace of {} (which you trusted), but you never trusted it: the rules of the one above (secrets refused, approvals, read-only roots) do not apply in this folder\n  fix: if you did not write it, remove it; if you did, run `toolcell trust` here",
        crate::util::text::for_terminal_line(&found.display().to_string()),
        crate::util::text::for_terminal_line(&outer.display().to_string())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(dir: &Path, text: &str) -> WorkspaceConfig {
        let file = dir.join("toolcell.toml");
        std::fs::write(&file, text).unwrap();
        WorkspaceConfig::parse(&file, text).unwrap()
    }

    #[test]
    fn an_untrusted_config_opens_no_secret_and_sends_nothing_off_this_machine() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = parse(
            dir.path(),
            "[secrets]\nallow = [\".env\"]\n\
             [model]\nbase_url = \"http://203.0.113.9:11434\"\napi_key_env = \"KEY\"\n\
             [profile.far.model]\nprovider = \"openai\"\nbase_url = \"https://example.org/v1\"\napi_key_env = \"FAR_KEY\"\n\
             [profile.near.model]\nbase_url = \"http://localhost:11434\"\n",
        );
        assert_eq!(config.files.secrets.secret(Path::new(".env")), None);
        let asks = config.restrict_to_untrusted().join("\n");
        for said in [
            "secret files opened: .env",
            "the model server gets the key in $KEY",
            "the conversation is sent to http://203.0.113.9:11434, not on this machine",
            "$FAR_KEY (profile `far`)",
            "https://example.org/v1, not on this machine (profile `far`)",
        ] {
            assert!(asks.contains(said), "{said}: {asks}");
        }
        assert!(
            !asks.contains("localhost"),
            "a server on this machine needs no trust: {asks}"
        );
        assert_eq!(config.files.secrets.secret(Path::new(".env")), Some(".env"));
        assert_eq!(config.model.api_key_env, None);
        assert_eq!(config.model.base_url, "http://127.0.0.1:11434");
        config.use_profile("far").unwrap();
        assert_eq!(config.model.api_key_env, None);
        assert_eq!(config.model.base_url, "http://127.0.0.1:8080/v1");
        config.use_profile("near").unwrap();
        assert_eq!(config.model.base_url, "http://localhost:11434");
    }

    #[test]
    fn a_workflow_in_a_folder_too_crowded_to_keep_is_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        for i in 0..1_001 {
            std::fs::create_dir_all(w.join(format!("flows/d{i}"))).unwrap();
        }
        std::fs::write(w.join("flows/job.rhai"), "\"ok\"").unwrap();
        let text = "[[schedule]]\nname = \"job\"\ncron = \"0 3 * * *\"\nworkflow = \"flows/job.rhai\"\napprove = [\"write_file\"]\n";
        let file = w.join("toolcell.toml");
        std::fs::write(&file, text).unwrap();
        let e = WorkspaceConfig::trust(&file).unwrap_err().to_string();
        assert!(e.contains("too crowded") && e.contains("`job`"), "{e}");
        let trust = TrustStore::in_data_dir(&w.join("data"));
        let config = WorkspaceConfig::load_with_trust(&file, Some(&trust)).unwrap();
        assert!(config.schedules[0].approve.is_empty());
        assert!(
            config.untrusted.iter().any(|l| l.contains("too crowded")),
            "{:?}",
            config.untrusted
        );
    }

    #[test]
    fn trust_covers_what_runs_on_the_config_s_word() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        std::fs::create_dir_all(w.join("flows/lib")).unwrap();
        std::fs::create_dir_all(w.join("srv")).unwrap();
        std::fs::write(w.join("flows/report.rhai"), "print(1);").unwrap();
        std::fs::write(w.join("flows/lib/util.rhai"), "fn f() {}").unwrap();
        std::fs::write(w.join("srv/server.py"), "print('server')").unwrap();
        let text = "[[schedule]]\nname = \"nightly\"\nworkflow = \"flows/report.rhai\"\ncron = \"0 3 * * *\"\n\
                    [[mcp_server]]\nname = \"s\"\ncommand = \"python3\"\nargs = [\"srv/server.py\"]\n";
        let config = parse(w, text);
        let trusted = config.trust_fingerprint(text);
        assert_eq!(config.trust_fingerprint(text), trusted, "the same files");
        for (file, changed) in [
            ("srv/server.py", "print('attacker')"),
            ("flows/report.rhai", "print(2);"),
            ("flows/lib/util.rhai", "fn f() { 2 }"),
            ("flows/lib/new.rhai", ""),
        ] {
            let was = std::fs::read(w.join(file)).ok();
            std::fs::write(w.join(file), changed).unwrap();
            assert_ne!(config.trust_fingerprint(text), trusted, "{file} changed");
            match was {
                Some(bytes) => std::fs::write(w.join(file), bytes).unwrap(),
                None => std::fs::remove_file(w.join(file)).unwrap(),
            }
            assert_eq!(config.trust_fingerprint(text), trusted, "{file} put back");
        }
    }
}
