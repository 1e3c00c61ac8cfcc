//! `toolcell daemon`: runs the workspace's schedules in the foreground.
//!
//! The loop sleeps until the nearest fire time (nothing runs in between
//! but a check of the config file's modification time every few seconds),
//! then for each schedule handles the fire times that came:
//! - one on time: a run, unless the previous run still runs (`overlap`:
//!   skip records a skipped run, queue starts it when the previous ends,
//!   allow starts it beside it);
//! - older ones, missed while the daemon was down or the machine slept:
//!   with `catch_up = "latest"` one catch-up run for the latest, else none.
//!
//! The latest fire time handled is kept per schedule in the store, so a
//! restart neither replays nor forgets. A run cut off by a crash is marked
//! interrupted on the next start and never replayed. A failed or timed-out
//! run that changed nothing is retried after a backoff, up to `retries`.
//!
//! The config is reloaded when its file changes; an invalid one is logged
//! and the previous one kept. On SIGTERM or SIGINT no new run starts, the
//! running ones get `[daemon] grace` to finish, then are stopped and
//! recorded as interrupted. One daemon per workspace: a lock file in the
//! state folder.

use super::clock::Clock;
use super::config::{CatchUp, Overlap, ScheduleConfig};
use crate::approval::StandingApprovals;
use crate::config::WorkspaceConfig;
use crate::dispatch::Dispatcher;
use crate::policy::trust::TrustStore;
use crate::registry::Registry;
use crate::sandbox::SandboxOptions;
use crate::store::{RunId, RunStatus, Store, Trigger};
use crate::workflow::Workflow;
use crate::workflow::launch::Launch;
use anyhow::{Context, Result, bail};
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A fire time counts as on time (trigger `schedule`) when the daemon
/// handles it within this; later, it was missed (the daemon was down or the
/// machine asleep) and `catch_up` decides.
pub const ON_TIME: SignedDuration = SignedDuration::from_secs(60);

/// How often the config file is checked for changes: a `stat` every few
/// seconds costs nothing measurable, and an edit takes effect quickly.
pub const RELOAD_POLL: Duration = Duration::from_secs(2);

/// The first retry waits this long; each further one twice as long, up to
/// [`RETRY_MAX`]: long enough for a server to come back, short enough to
/// finish well before the next fire of most schedules.
pub const RETRY_FIRST: SignedDuration = SignedDuration::from_secs(30);
pub const RETRY_MAX: SignedDuration = SignedDuration::from_secs(600);

/// Fires waiting behind a running run (`overlap = "queue"`) at most; more
/// are recorded as skipped, so a run that hangs cannot pile up work.
pub const QUEUE_LIMIT: usize = 8;

/// Old runs are pruned at start and then this often.
const PRUNE_EVERY: SignedDuration = SignedDuration::from_hours(24);

/// Fire times looked at per schedule and wake-up at most: a `* * * * * *`
/// schedule after a week's downtime would otherwise list 600,000.
const MAX_FIRES_SCANNED: usize = 10_000;

/// How long stopped runs get to wind down after the grace period before
/// they are recorded as interrupted anyway: a cancelled run stops at its
/// next script operation or epoch tick, in milliseconds.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// The lock file that keeps a second daemon off a workspace.
pub const LOCK_FILE: &str = "daemon.lock";

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
}

/// What the daemon keeps per schedule.
struct Slot {
    config: ScheduleConfig,
    /// The latest fire time handled.
    handled: Timestamp,
    /// The first fire time after `handled`, kept so that waking up costs
    /// no cron search.
    next: Option<Timestamp>,
    running: Vec<(RunId, CancellationToken)>,
    queue: VecDeque<Fire>,
}

/// One run to start: for which fire time, why, and which attempt.
#[derive(Debug, Clone, Copy)]
struct Fire {
    at: Timestamp,
    trigger: Trigger,
    attempt: u32,
}

/// Why schedules are installed.
#[derive(Clone, Copy)]
enum Install {
    Startup,
    Reload,
}

/// A run that ended.
struct Finished {
    schedule: String,
    run: RunId,
    status: RunStatus,
    /// The run's error, as recorded; empty when it succeeded.
    error: String,
    fire: Fire,
}

/// Runs the daemon for the workspace of `config_file` until `stop` fires.
pub async fn run<C: Clock>(
    config_file: &Path,
    clock: Arc<C>,
    stop: CancellationToken,
    options: DaemonOptions,
) -> Result<()> {
    // Stamped before loading: an edit made while starting is seen later.
    let config_stamp = stamp(config_file);
    let config = WorkspaceConfig::load_with_trust(config_file, options.trust.as_ref())?;
    let _lock = DaemonLock::acquire(&config.state_dir())?;
    let store = Arc::new(Store::open(&config.state_dir())?);
    // With the lock held, runs still `running` under this process id were
    // left by an earlier daemon that had the same id (a container's
    // PID 1, restarted): they did not finish.
    store.interrupt_scheduled_runs_of(std::process::id())?;
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let mut daemon = Daemon {
        dispatcher: Arc::new(dispatcher_for(&config, &options)?),
        config_file: config_file.to_path_buf(),
        config_stamp,
        config,
        slots: BTreeMap::new(),
        retries: Vec::new(),
        store,
        clock,
        options,
        done_tx,
        last_prune: None,
        reloading: false,
        held: None,
    };
    let untrusted = daemon.config.untrusted.clone();
    daemon.warn_untrusted(&untrusted);
    daemon.log(
        "started",
        None,
        json!({"schedules": daemon.config.schedules.len(), "pid": std::process::id()}),
        format!(
            "daemon started for {} with {} schedule(s)",
            daemon.config.workspace.display(),
            daemon.config.schedules.len()
        ),
    );
    daemon.install_schedules(Install::Startup);
    daemon.main_loop(stop, done_rx).await
}

/// Holds the workspace's daemon lock while alive.
pub struct DaemonLock {
    _file: std::fs::File,
}

impl DaemonLock {
    /// Takes the lock, or says which process holds it.
    pub fn acquire(state_dir: &Path) -> Result<Self> {
        use std::io::{Read, Seek, Write};
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(state_dir)
            .with_context(|| format!("cannot create {}", state_dir.display()))?;
        let path = state_dir.join(LOCK_FILE);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        // SAFETY: flock on a file descriptor we own; no memory is shared.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !locked {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            bail!(
                "another toolcell daemon (pid {}) is running for this workspace\n  fix: stop it first, or run this one for another workspace",
                holder.trim()
            );
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        Ok(Self { _file: file })
    }
}

fn dispatcher_for(config: &WorkspaceConfig, options: &DaemonOptions) -> Result<Dispatcher> {
    let registry = Registry::load(options.user_tools.as_deref(), &config.workspace_tools_dir());
    let mut dispatcher = Dispatcher::new(config.clone(), registry, options.sandbox.clone())?;
    for problem in dispatcher.start_mcp_servers()? {
        tracing::warn!("{problem}");
    }
    Ok(dispatcher)
}

/// A config loaded for a reload: with its dispatcher, or held back because
/// it widens what schedules may do and the user has not confirmed it.
type Loaded = Result<Reload>;

/// What a reload found.
enum Reload {
    Ready(Box<(Dispatcher, WorkspaceConfig)>),
    Held {
        wider: Vec<String>,
        fingerprint: Option<String>,
    },
}

/// What tells that the config file changed: its modification time, size
/// and inode (a save within one timestamp tick still changes one of them,
/// or replaces the file).
type Stamp = Option<(std::time::SystemTime, u64, u64)>;

fn stamp(file: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(file).ok()?;
    Some((meta.modified().ok()?, meta.len(), meta.ino()))
}

struct Daemon<C: Clock> {
    config_file: PathBuf,
    config_stamp: Stamp,
    config: WorkspaceConfig,
    dispatcher: Arc<Dispatcher>,
    slots: BTreeMap<String, Slot>,
    /// Retries waiting for their time: `(due, schedule, fire)`.
    retries: Vec<(Timestamp, String, Fire)>,
    store: Arc<Store>,
    clock: Arc<C>,
    options: DaemonOptions,
    done_tx: mpsc::UnboundedSender<Finished>,
    /// A changed config is being loaded (its MCP servers started) on a
    /// blocking thread: the loop goes on firing meanwhile.
    reloading: bool,
    last_prune: Option<Timestamp>,
    /// The fingerprint of a changed config held back (it widens what
    /// schedules may do and was not confirmed), once said.
    held: Option<String>,
}

impl Slot {
    /// Marks the fire times up to `at` handled.
    fn handled_up_to(&mut self, at: Timestamp) {
        self.handled = at;
        self.next = self.config.cron.next_after(at);
    }
}

impl<C: Clock> Daemon<C> {
    /// Makes a slot for each schedule of the config, keeping the running
    /// runs and queues of schedules that stay. At start-up a schedule goes
    /// on from the last fire time the store has for it (so a downtime is
    /// caught up); a schedule added or given new times by a reload starts
    /// from now.
    fn install_schedules(&mut self, install: Install) {
        let now = self.clock.now();
        let mut slots = BTreeMap::new();
        for schedule in self.config.schedules.clone() {
            let name = schedule.name.clone();
            let slot = match self.slots.remove(&name) {
                Some(mut slot) => {
                    let retimed = slot.config.cron.expression() != schedule.cron.expression()
                        || slot.config.cron.zone_name() != schedule.cron.zone_name();
                    slot.config = schedule;
                    let handled = if retimed {
                        self.remember_handled(&name, now);
                        now
                    } else {
                        slot.handled
                    };
                    slot.handled_up_to(handled);
                    slot
                }
                None => {
                    let stored = match install {
                        Install::Startup => self.store.last_fire(&name),
                        Install::Reload => Ok(None),
                    };
                    let handled = match stored {
                        Ok(Some(ms)) => Timestamp::from_millisecond(ms).unwrap_or(now),
                        Ok(None) => {
                            // A new schedule starts from now: nothing to catch up.
                            self.remember_handled(&name, now);
                            now
                        }
                        Err(e) => {
                            self.warn(&name, format!("cannot read its last fire time: {e:#}"));
                            now
                        }
                    };
                    let mut slot = Slot {
                        config: schedule,
                        handled,
                        next: None,
                        running: Vec::new(),
                        queue: VecDeque::new(),
                    };
                    slot.handled_up_to(handled);
                    slot
                }
            };
            slots.insert(name, slot);
        }
        // Schedules removed from the config: their running runs go on (and
        // are awaited at shutdown), nothing new starts.
        for (name, slot) in std::mem::take(&mut self.slots) {
            if !slot.running.is_empty() {
                let mut slot = slot;
                slot.config.enabled = false;
                slot.queue.clear();
                slots.insert(name, slot);
            }
        }
        self.retries.retain(|(_, name, _)| slots.contains_key(name));
        self.slots = slots;
    }

    async fn main_loop(
        &mut self,
        stop: CancellationToken,
        mut done_rx: mpsc::UnboundedReceiver<Finished>,
    ) -> Result<()> {
        // One interval for the whole loop: recreated each pass, a timer
        // would never ring while fires or finished runs wake the loop
        // more often than it.
        let mut reload = tokio::time::interval(self.options.reload_poll);
        reload.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        reload.tick().await;
        let (loaded_tx, mut loaded_rx) = mpsc::unbounded_channel();
        loop {
            self.prune_if_due();
            self.handle_due_fires();
            self.start_due_retries();
            let next = self.next_wake();
            let clock = self.clock.clone();
            tokio::select! {
                () = async {
                    match next {
                        Some(at) => clock.sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => {}
                _ = reload.tick() => self.reload_if_changed(&loaded_tx),
                Some(loaded) = loaded_rx.recv() => self.apply_reload(loaded),
                Some(finished) = done_rx.recv() => self.finished(finished),
                () = stop.cancelled() => break,
            }
        }
        self.shutdown(done_rx).await;
        Ok(())
    }

    /// The nearest fire time or retry.
    fn next_wake(&self) -> Option<Timestamp> {
        let fires = self.slots.values().filter_map(|s| s.next);
        let retries = self.retries.iter().map(|(due, _, _)| *due);
        fires.chain(retries).min()
    }

    /// Handles every fire time that has come.
    fn handle_due_fires(&mut self) {
        let now = self.clock.now();
        let names: Vec<String> = self.slots.keys().cloned().collect();
        for name in names {
            let slot = &self.slots[&name];
            if slot.next.is_none_or(|next| next > now) {
                continue;
            }
            let fires = slot
                .config
                .cron
                .fires_between(slot.handled, now, MAX_FIRES_SCANNED);
            let Some(&scanned) = fires.last() else {
                continue;
            };
            // Past the scan's cap, the latest fire time is searched from now.
            let latest = if fires.len() == MAX_FIRES_SCANNED {
                slot.config
                    .cron
                    .latest_at_or_before(now)
                    .filter(|latest| *latest > scanned)
                    .unwrap_or(scanned)
            } else {
                scanned
            };
            if !slot.config.enabled {
                // A disabled schedule lets its fire times pass: enabling it
                // later catches nothing up.
                self.slots.get_mut(&name).unwrap().handled_up_to(latest);
                self.remember_handled(&name, latest);
                continue;
            }
            let missed = fires.len() - 1;
            let catch_up = slot.config.catch_up;
            self.slots.get_mut(&name).unwrap().handled_up_to(latest);
            self.remember_handled(&name, latest);
            let on_time = now.duration_since(latest) <= ON_TIME;
            let skipped_fires = if on_time { missed } else { fires.len() };
            if skipped_fires > 0 {
                let caught = !on_time && catch_up == CatchUp::Latest;
                self.log(
                    "missed",
                    Some(&name),
                    json!({"fires": skipped_fires, "catch_up": caught}),
                    format!(
                        "missed {skipped_fires} fire time(s) while not running{}",
                        if caught {
                            "; catching up the latest"
                        } else {
                            ""
                        }
                    ),
                );
            }
            let trigger = if on_time {
                Trigger::Schedule
            } else if catch_up == CatchUp::Latest {
                Trigger::CatchUp
            } else {
                continue;
            };
            self.fire(
                &name,
                Fire {
                    at: latest,
                    trigger,
                    attempt: 0,
                },
            );
        }
    }

    fn start_due_retries(&mut self) {
        let now = self.clock.now();
        let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.retries)
            .into_iter()
            .partition(|(at, _, _)| *at <= now);
        self.retries = waiting;
        for (_, name, fire) in due {
            if self.slots.get(&name).is_some_and(|s| s.config.enabled) {
                self.fire(&name, fire);
            }
        }
    }

    /// A fire of `name`: started, queued or skipped as `overlap` says.
    fn fire(&mut self, name: &str, fire: Fire) {
        let slot = &self.slots[name];
        if slot.running.is_empty() {
            return self.start(name, fire);
        }
        let previous = slot.running[0].0;
        match slot.config.overlap {
            Overlap::Allow => self.start(name, fire),
            Overlap::Queue if slot.queue.len() < QUEUE_LIMIT => {
                self.slots.get_mut(name).unwrap().queue.push_back(fire);
                self.log(
                    "queued",
                    Some(name),
                    json!({"behind": previous, "for": fire.at.to_string()}),
                    format!("queued behind run {previous}, still running"),
                );
            }
            overlap => {
                let why = if overlap == Overlap::Queue {
                    format!("{QUEUE_LIMIT} fires already wait behind run {previous}")
                } else {
                    format!("run {previous} of this schedule was still running")
                };
                let title = slot.config.workflow_display.clone();
                match self.store.record_skipped(
                    name,
                    &title,
                    fire.trigger,
                    fire.at.as_millisecond(),
                    &why,
                ) {
                    Ok(run) => self.log(
                        "skipped",
                        Some(name),
                        json!({"run": run, "reason": why, "for": fire.at.to_string()}),
                        format!("run {run} skipped: {why}"),
                    ),
                    Err(e) => self.warn(name, format!("cannot record a skipped run: {e:#}")),
                }
            }
        }
    }

    /// Starts a run of `name` for `fire`.
    fn start(&mut self, name: &str, fire: Fire) {
        let config = self.slots[name].config.clone();
        let run = match self.store.start_scheduled_run(
            name,
            &config.workflow_display,
            fire.trigger,
            fire.at.as_millisecond(),
        ) {
            Ok(run) => run,
            Err(e) => return self.warn(name, format!("cannot record a run: {e:#}")),
        };
        let cancel = CancellationToken::new();
        self.slots
            .get_mut(name)
            .unwrap()
            .running
            .push((run, cancel.clone()));
        self.log(
            "started",
            Some(name),
            json!({"run": run, "trigger": fire.trigger.as_str(), "for": fire.at.to_string(), "attempt": fire.attempt}),
            format!(
                "run {run} started ({}{}, for {})",
                fire.trigger.as_str(),
                if fire.attempt > 0 {
                    format!(" {} of {}", fire.attempt, config.retries)
                } else {
                    String::new()
                },
                local_time(fire.at, &config)
            ),
        );
        let launch = unattended_launch(
            &self.dispatcher,
            &self.store,
            &self.config,
            &config,
            run,
            cancel,
        );
        let done = self.done_tx.clone();
        let store = self.store.clone();
        let schedule = name.to_string();
        tokio::spawn(async move {
            let (status, error) = match Workflow::load(&config.workflow) {
                Ok(workflow) => {
                    let (status, result) = launch.run(workflow).await;
                    (
                        status,
                        result.err().map(|f| f.to_string()).unwrap_or_default(),
                    )
                }
                Err(e) => {
                    let error = format!("{e:#}");
                    let _ = store.finish_run(run, RunStatus::Failed, None, Some(&error));
                    (RunStatus::Failed, error)
                }
            };
            let _ = done.send(Finished {
                schedule,
                run,
                status,
                error,
                fire,
            });
        });
    }

    /// A run ended: log it, retry it if it failed without changing
    /// anything, start what was queued behind it.
    fn finished(&mut self, finished: Finished) {
        let Finished {
            schedule,
            run,
            status,
            error,
            fire,
        } = finished;
        let Some(slot) = self.slots.get_mut(&schedule) else {
            return;
        };
        slot.running.retain(|(id, _)| *id != run);
        let retries = slot.config.retries;
        self.log(
            "finished",
            Some(&schedule),
            json!({"run": run, "status": status.as_str(), "error": error}),
            format!(
                "run {run} {}{}",
                status.as_str(),
                if error.is_empty() {
                    String::new()
                } else {
                    format!(": {}", crate::text::one_line(&error, 200))
                }
            ),
        );
        if matches!(status, RunStatus::Failed | RunStatus::TimedOut) && fire.attempt < retries {
            if self.changed_anything(run) {
                self.log(
                    "not-retried",
                    Some(&schedule),
                    json!({"run": run}),
                    format!("run {run} is not retried: it changed something before it failed"),
                );
            } else {
                let attempt = fire.attempt + 1;
                let wait = retry_wait(attempt);
                let due = self.clock.now() + wait;
                self.log(
                    "retry",
                    Some(&schedule),
                    json!({"run": run, "attempt": attempt, "in_s": wait.as_secs()}),
                    format!(
                        "run {run} will be retried in {} s ({attempt} of {retries})",
                        wait.as_secs()
                    ),
                );
                self.retries.push((
                    due,
                    schedule.clone(),
                    Fire {
                        at: fire.at,
                        trigger: Trigger::Retry,
                        attempt,
                    },
                ));
            }
        }
        let slot = self.slots.get_mut(&schedule).unwrap();
        if slot.running.is_empty()
            && slot.config.enabled
            && let Some(next) = slot.queue.pop_front()
        {
            self.start(&schedule, next);
        }
        if self.slots.values().all(|s| s.running.is_empty()) {
            super::memory::release_free();
        }
    }

    /// Whether `run` called a tool that changes things, and the call may
    /// have done its work.
    fn changed_anything(&self, run: RunId) -> bool {
        let registry = self.dispatcher.registry();
        match self.store.tools_that_may_have_acted(run) {
            Ok(tools) => tools.iter().any(|tool| {
                registry
                    .get(tool)
                    .is_none_or(|entry| entry.manifest.mutates)
            }),
            // Unknown: assume it did, never retry blindly.
            Err(_) => true,
        }
    }

    /// Starts loading the config on a blocking thread if it changed (its
    /// MCP servers may take seconds to start); the result comes back
    /// through `loaded_tx` to [`Self::apply_reload`].
    fn reload_if_changed(&mut self, loaded_tx: &mpsc::UnboundedSender<Loaded>) {
        if self.reloading {
            return;
        }
        let now_stamp = stamp(&self.config_file);
        if now_stamp == self.config_stamp {
            return;
        }
        self.config_stamp = now_stamp;
        self.reloading = true;
        let (file, options, tx) = (
            self.config_file.clone(),
            self.options.clone(),
            loaded_tx.clone(),
        );
        let running = self.config.clone();
        tokio::task::spawn_blocking(move || {
            let loaded = WorkspaceConfig::load_with_trust(&file, options.trust.as_ref()).and_then(
                |config| {
                    let wider = crate::schedule::widening::widening(&running, &config);
                    if !wider.is_empty() && !config.is_trusted(options.trust.as_ref()) {
                        return Ok(Reload::Held {
                            wider,
                            fingerprint: config.fingerprint,
                        });
                    }
                    Ok(Reload::Ready(Box::new((
                        dispatcher_for(&config, &options)?,
                        config,
                    ))))
                },
            );
            let _ = tx.send(loaded);
        });
    }

    fn apply_reload(&mut self, loaded: Loaded) {
        self.reloading = false;
        match loaded {
            Ok(Reload::Held { wider, fingerprint }) => {
                // Looked at again at every poll, so that `toolcell trust`
                // applies it; said once per version of the file.
                self.config_stamp = None;
                if self.held != fingerprint {
                    self.held = fingerprint;
                    self.log(
                        "reload-held",
                        None,
                        json!({"widens": wider}),
                        format!(
                            "the changed config widens what schedules may do ({}); the previous config stays until you confirm it: run `toolcell trust` in the workspace",
                            wider.join("; ")
                        ),
                    );
                }
            }
            Ok(Reload::Ready(ready)) => {
                let (dispatcher, config) = *ready;
                self.held = None;
                self.warn_untrusted(&config.untrusted);
                self.dispatcher = Arc::new(dispatcher);
                self.config = config;
                self.install_schedules(Install::Reload);
                self.log(
                    "reloaded",
                    None,
                    json!({"schedules": self.config.schedules.len()}),
                    format!(
                        "config reloaded: {} schedule(s)",
                        self.config.schedules.len()
                    ),
                );
            }
            Err(e) => self.log(
                "reload-failed",
                None,
                json!({"error": format!("{e:#}")}),
                format!("the changed config is invalid, keeping the previous one: {e:#}"),
            ),
        }
    }

    fn prune_if_due(&mut self) {
        let now = self.clock.now();
        if self
            .last_prune
            .is_some_and(|at| now.duration_since(at) < PRUNE_EVERY)
        {
            return;
        }
        self.last_prune = Some(now);
        let days = self.config.daemon.keep_runs_days;
        if days == 0 {
            return;
        }
        let before = now - SignedDuration::from_hours(24 * i64::from(days));
        match self.store.prune_runs(before.as_millisecond()) {
            Ok(0) => {}
            Ok(n) => self.log(
                "pruned",
                None,
                json!({"runs": n, "days": days}),
                format!("pruned {n} run(s) older than {days} days"),
            ),
            Err(e) => self.log(
                "prune-failed",
                None,
                json!({"error": format!("{e:#}")}),
                format!("cannot prune old runs: {e:#}"),
            ),
        }
    }

    /// Stops starting runs, lets the running ones finish within the grace
    /// period, then stops them and records them as interrupted.
    async fn shutdown(&mut self, mut done_rx: mpsc::UnboundedReceiver<Finished>) {
        let running: usize = self.slots.values().map(|s| s.running.len()).sum();
        self.log(
            "stopping",
            None,
            json!({"running": running, "grace_s": self.config.daemon.grace.as_secs()}),
            format!(
                "stopping: {running} run(s) still running get {} s to finish",
                self.config.daemon.grace.as_secs()
            ),
        );
        const INTERRUPTED: &str = "the daemon stopped before the run finished";
        let mut left: Vec<RunId> = self
            .slots
            .values()
            .flat_map(|s| s.running.iter().map(|(run, _)| *run))
            .collect();
        let grace_end = tokio::time::Instant::now() + self.config.daemon.grace;
        let mut cancelled_at: Option<tokio::time::Instant> = None;
        while !left.is_empty() {
            let deadline = cancelled_at.map_or(grace_end, |at| at + STOP_WAIT);
            tokio::select! {
                Some(finished) = done_rx.recv() => {
                    left.retain(|run| *run != finished.run);
                    if cancelled_at.is_some() && finished.status == RunStatus::Cancelled {
                        let _ = self.store.finish_run(finished.run, RunStatus::Interrupted, None, Some(INTERRUPTED));
                        self.log("interrupted", Some(&finished.schedule), json!({"run": finished.run}),
                            format!("run {} interrupted", finished.run));
                    } else {
                        self.log("finished", Some(&finished.schedule),
                            json!({"run": finished.run, "status": finished.status.as_str()}),
                            format!("run {} {}", finished.run, finished.status.as_str()));
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    if cancelled_at.is_some() {
                        // Runs that did not stop when told: recorded as
                        // interrupted; their threads end with the process.
                        for run in &left {
                            let _ = self.store.finish_run(*run, RunStatus::Interrupted, None, Some(INTERRUPTED));
                            self.log("interrupted", None, json!({"run": run}), format!("run {run} interrupted"));
                        }
                        break;
                    }
                    cancelled_at = Some(tokio::time::Instant::now());
                    for slot in self.slots.values() {
                        for (_, cancel) in &slot.running {
                            cancel.cancel();
                        }
                    }
                }
            }
        }
        self.log("stopped", None, json!({}), "daemon stopped".into());
    }

    fn remember_handled(&self, name: &str, at: Timestamp) {
        if let Err(e) = self.store.set_last_fire(name, at.as_millisecond()) {
            self.warn(name, format!("cannot record its last fire time: {e:#}"));
        }
    }

    fn warn(&self, schedule: &str, text: String) {
        self.log(
            "warning",
            Some(schedule),
            json!({"message": text}),
            text.clone(),
        );
    }

    /// Says which programs the config names but may not start (it is not
    /// trusted as it is).
    fn warn_untrusted(&self, untrusted: &[String]) {
        if untrusted.is_empty() {
            return;
        }
        self.log(
            "untrusted",
            None,
            json!({"not_started": untrusted}),
            format!(
                "the config is not trusted as it is, so it runs without what only a trusted config may do ({}); run `toolcell trust` in the workspace to let it",
                untrusted.join("; ")
            ),
        );
    }

    fn log(&self, event: &str, schedule: Option<&str>, mut fields: Value, text: String) {
        let now = self.clock.now();
        let line = if self.options.json_logs {
            fields["at"] = now.to_string().into();
            fields["event"] = event.into();
            if let Some(name) = schedule {
                fields["schedule"] = name.into();
            }
            fields.to_string()
        } else {
            let at = now
                .to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S%.3f");
            match schedule {
                Some(name) => format!("{at} [{name}] {text}"),
                None => format!("{at} {text}"),
            }
        };
        (self.options.log)(&line);
    }
}

/// The wait before retry `attempt` (1-based).
fn retry_wait(attempt: u32) -> Duration {
    let factor = 1i32 << attempt.saturating_sub(1).min(16);
    let wait = (RETRY_FIRST * factor).min(RETRY_MAX);
    Duration::try_from(wait).unwrap_or(Duration::from_secs(30))
}

/// `at` in the schedule's time zone, for log lines.
fn local_time(at: Timestamp, schedule: &ScheduleConfig) -> String {
    at.to_zoned(schedule.cron.zone().clone())
        .strftime("%Y-%m-%d %H:%M:%S %Z")
        .to_string()
}

/// A workflow run of `schedule` with nobody to ask: only the tools in its
/// `approve` list are approved, other calls needing approval are denied in
/// band, and its output goes to the run's log only.
pub fn unattended_launch(
    dispatcher: &Arc<Dispatcher>,
    store: &Arc<Store>,
    config: &WorkspaceConfig,
    schedule: &ScheduleConfig,
    run: RunId,
    cancel: CancellationToken,
) -> Launch {
    let mut limits = config.workflow.limits.clone();
    if let Some(timeout) = schedule.timeout {
        limits.timeout = timeout;
    }
    Launch {
        dispatcher: dispatcher.clone(),
        store: store.clone(),
        run,
        approver: Arc::new(StandingApprovals {
            all: false,
            tools: schedule.approve.iter().cloned().collect(),
            ask: None,
            grant_hint: "`approve = [\"{tool}\"]` in this [[schedule]] to allow it",
        }),
        model: config.model.clone(),
        args: schedule.args.clone(),
        limits,
        cancel,
        output: Box::new(|_, _| {}),
    }
}
