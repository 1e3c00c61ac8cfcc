//! Schedules: workflows run unattended at cron times by `toolcell daemon`.
//!
//! [`daemon`] is the loop; it carries out what [`plan`] decides (pure
//! functions of the schedule, the time and what runs), logs [`events`],
//! holds the workspace's [`lock`], takes a changed config through
//! [`reload`] (held back while it would widen what runs, see
//! [`widening`]) and starts each run as [`launch`] makes it.
//! [`kubernetes`] writes the schedules as CronJobs for a cluster to run
//! instead of the daemon.

pub mod clock;
pub mod daemon;
pub mod events;
pub mod kubernetes;
pub mod launch;
pub mod lock;
pub mod plan;
pub mod reload;
pub mod widening;

use crate::policy::trust::TrustStore;
use crate::sandbox::SandboxOptions;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How a daemon is run.
#[derive(Clone)]
pub struct DaemonOptions {
    /// Log lines as JSON objects instead of text.
    pub json_logs: bool,
    /// How often the config file is checked for changes.
    pub reload_poll: Duration,
    /// Where log lines go.
    pub log: Arc<dyn Fn(&str) + Send + Sync>,
    pub sandbox: SandboxOptions,
    /// Where user-installed tools live.
    pub user_tools: Option<PathBuf>,
    /// The configs the user trusted (`toolcell trust`).
    pub trust: Option<TrustStore>,
    /// The config's profile to use (`--profile`), at start and at every
    /// reload.
    pub profile: Option<String>,
}

impl DaemonOptions {
    /// The config at `file`, as the user trusted it, with the profile in use.
    pub fn load(&self, file: &std::path::Path) -> anyhow::Result<crate::config::WorkspaceConfig> {
        let mut config =
            crate::config::WorkspaceConfig::load_with_trust(file, self.trust.as_ref())?;
        if let Some(name) = &self.profile {
            config.use_profile(name)?;
        }
        Ok(config)
    }
}
