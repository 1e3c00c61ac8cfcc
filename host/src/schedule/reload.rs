//! A changed config, loaded while the daemon goes on: with the dispatcher
//! its schedules will run through, or held back because it widens what
//! they may do and the user has not confirmed it (`toolcell trust`).

use super::DaemonOptions;
use crate::call::dispatch::Dispatcher;
use crate::config::WorkspaceConfig;
use crate::registry::Registry;
use anyhow::Result;
use std::path::Path;

pub fn dispatcher_for(config: &WorkspaceConfig, options: &DaemonOptions) -> Result<Dispatcher> {
    let registry = Registry::load(options.user_tools.as_deref(), &config.workspace_tools_dir());
    let mut dispatcher = Dispatcher::new(config.clone(), registry, options.sandbox.clone())?;
    for problem in dispatcher.start_mcp_servers()? {
        tracing::warn!("{problem}");
    }
    for problem in dispatcher.grant_problems() {
        tracing::warn!("{problem}");
    }
    Ok(dispatcher)
}

/// A config loaded for a reload: with its dispatcher, or held back because
/// it widens what schedules may do and the user has not confirmed it.
pub type Loaded = Result<Reload>;

/// What a reload found.
pub enum Reload {
    Ready(Box<(Dispatcher, WorkspaceConfig)>),
    Held {
        wider: Vec<String>,
        fingerprint: Option<String>,
    },
}

/// How often the config file is checked for changes: a `stat` every few
/// seconds costs nothing measurable, and an edit takes effect quickly (at
/// the second poll that finds it unchanged since, so a file being written
/// is never loaded half-written).
pub const RELOAD_POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// What tells that the config file changed: its modification time, size
/// and inode (a save within one timestamp tick still changes one of them,
/// or replaces the file).
pub type Stamp = Option<(std::time::SystemTime, u64, u64)>;

pub fn stamp(file: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

/// What tells that a file that runs on the config's word changed: its
/// change time (which no program can set back, as it can the modification
/// time), size and inode.
pub type RunStamp = Option<(i64, i64, u64, u64)>;

fn run_stamp(file: &Path) -> RunStamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).ok()?;
    Some((meta.ctime(), meta.ctime_nsec(), meta.len(), meta.ino()))
}

/// The stamps of the files that run on `config`'s word (scheduled
/// workflows and their modules, servers' scripts): one changed makes the
/// config load again, as its trust covers them.
pub fn run_stamps(config: &WorkspaceConfig) -> Vec<RunStamp> {
    config
        .files
        .policy
        .run_files()
        .iter()
        .map(|file| run_stamp(file))
        .collect()
}

/// Why a fire may not run now, if so: the files that run on the config's
/// word changed since `loaded`, and the reload that judges them (trusted
/// again, or run without what only a trusted config may do) has not come
/// yet. Until it has, nothing runs under the trust of the old files.
pub fn changed_since_loaded(config: &WorkspaceConfig, loaded: &[RunStamp]) -> Option<String> {
    (run_stamps(config) != loaded).then(|| {
        "a scheduled workflow, a module beside it or a server's script changed since the config was loaded: this fire is skipped, and the config is loaded again (it keeps what only a trusted config may do once you run `toolcell trust`)".to_string()
    })
}

/// When a config file polled now and then is to be loaded again: once it
/// changed since it was loaded and has stopped changing, the same at two
/// polls in a row. A save that truncates the file and then writes it,
/// caught between the two, would otherwise load as an empty config (no
/// schedules), and a broken edit after it keep that.
#[derive(Debug)]
pub struct ConfigWatch {
    /// The file as it was last loaded (`None`: load it again once settled).
    loaded: Stamp,
    /// A change seen at the last poll.
    settling: Option<Stamp>,
}

impl ConfigWatch {
    /// Watching a file loaded as `loaded` was.
    pub fn new(loaded: Stamp) -> Self {
        Self {
            loaded,
            settling: None,
        }
    }

    /// Whether the file, `now` at this poll, is to be loaded now (and is
    /// then taken as loaded).
    pub fn poll(&mut self, now: Stamp) -> bool {
        if now == self.loaded {
            self.settling = None;
            return false;
        }
        if self.settling != Some(now) {
            self.settling = Some(now);
            return false;
        }
        self.settling = None;
        self.loaded = now;
        true
    }

    /// Looks at the file again at the polls to come, changed or not (a
    /// config held back until `toolcell trust`).
    pub fn forget(&mut self) {
        self.loaded = None;
    }
}

/// Loads `file` for a reload of the daemon now running `running`.
pub fn load(file: &Path, options: &DaemonOptions, running: &WorkspaceConfig) -> Loaded {
    let config = options.load(file)?;
    let wider = super::widening::widening(running, &config);
    if !wider.is_empty() && !config.is_trusted(options.trust.as_ref()) {
        return Ok(Reload::Held {
            wider,
            fingerprint: config.fingerprint,
        });
    }
    Ok(Reload::Ready(Box::new((
        dispatcher_for(&config, options)?,
        config,
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fire_after_its_workflow_changed_is_skipped_until_the_config_is_loaded_again() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        std::fs::create_dir_all(w.join("flows/lib")).unwrap();
        std::fs::write(w.join("flows/job.rhai"), "\"ok\"").unwrap();
        std::fs::write(w.join("flows/lib/util.rhai"), "fn f() { 1 }").unwrap();
        let file = w.join("toolcell.toml");
        let text = "[[schedule]]\nname = \"job\"\ncron = \"0 3 * * *\"\nworkflow = \"flows/job.rhai\"\napprove = [\"write_file\"]\n";
        std::fs::write(&file, text).unwrap();
        let config = WorkspaceConfig::parse(&file, text).unwrap();
        let loaded = run_stamps(&config);
        assert!(changed_since_loaded(&config, &loaded).is_none());
        // Same size, and its modification time set back: the change time
        // still moves.
        let module = w.join("flows/lib/util.rhai");
        let modified = std::fs::metadata(&module).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&module, "fn f() { 2 }").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&module)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        let why = changed_since_loaded(&config, &loaded).unwrap();
        assert!(why.contains("this fire is skipped"), "{why}");
    }
    use std::time::{Duration, SystemTime};

    fn at(seconds: u64, len: u64) -> Stamp {
        Some((
            SystemTime::UNIX_EPOCH + Duration::from_secs(seconds),
            len,
            7,
        ))
    }

    #[test]
    fn a_change_is_loaded_once_the_file_has_stopped_changing() {
        let mut watch = ConfigWatch::new(at(1, 100));
        assert!(!watch.poll(at(1, 100)), "unchanged");
        // Truncated, then written: neither is loaded while it changes.
        assert!(!watch.poll(at(2, 0)));
        assert!(!watch.poll(at(2, 120)));
        assert!(watch.poll(at(2, 120)), "the same at two polls");
        assert!(!watch.poll(at(2, 120)), "loaded once");
        // Gone and back as it was: nothing to load.
        assert!(!watch.poll(None));
        assert!(!watch.poll(at(2, 120)));
    }

    #[test]
    fn a_forgotten_file_is_loaded_again_once_settled() {
        let mut watch = ConfigWatch::new(at(1, 100));
        watch.forget();
        assert!(!watch.poll(at(1, 100)));
        assert!(watch.poll(at(1, 100)));
    }
}
