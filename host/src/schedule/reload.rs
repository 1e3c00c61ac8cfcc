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

/// What tells that the config file changed: its modification time, size
/// and inode (a save within one timestamp tick still changes one of them,
/// or replaces the file).
pub type Stamp = Option<(std::time::SystemTime, u64, u64)>;

pub fn stamp(file: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

/// Loads `file` for a reload of the daemon now running `running`.
pub fn load(file: &Path, options: &DaemonOptions, running: &WorkspaceConfig) -> Loaded {
    let config = WorkspaceConfig::load_with_trust(file, options.trust.as_ref())?;
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
