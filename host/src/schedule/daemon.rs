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
//! state folder — unless the store is shared (PostgreSQL): then any number
//! of daemons, on any machines, split the schedules. Each fire time is
//! taken by one of them in the store ([`Store::set_last_fire`]), `overlap`
//! looks at the runs of every daemon, and the runs of a daemon that died
//! are found (its session's lock is gone) and marked interrupted by the
//! others at their next look, every [`reload::RELOAD_POLL`].

use super::DaemonOptions;
use super::clock::Clock;
use super::events::{Event, local_time};
use super::launch::unattended_launch;
use super::lock::DaemonLock;
use super::plan::{self, AfterFailure, Fire, OnFire};
pub use super::reload::RELOAD_POLL;
use super::reload::{
    self, ConfigWatch, Loaded, Reload, RunStamp, dispatcher_for, run_stamps, stamp,
};
use crate::call::dispatch::Dispatcher;
use crate::config::WorkspaceConfig;
use crate::config::schedule::ScheduleConfig;
use crate::config::store::StoreSetting;
use crate::store::{RunId, RunStatus, Store, Trigger};
use crate::workflow::Workflow;
use anyhow::Result;
use jiff::{SignedDuration, Timestamp};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod shared;

/// Old runs are pruned at start and then this often.
const PRUNE_EVERY: SignedDuration = SignedDuration::from_hours(24);

/// How long stopped runs get to wind down after the grace period before
/// they are recorded as interrupted anyway: a cancelled run stops at its
/// next script operation or epoch tick, in milliseconds.
const STOP_WAIT: Duration = Duration::from_secs(10);

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
    let config = options.load(config_file)?;
    let _lock = match config.store {
        StoreSetting::Local => Some(DaemonLock::acquire(&config.state_dir())?),
        StoreSetting::Postgres { .. } => None,
    };
    let store = Arc::new(Store::for_workspace(&config)?);
    // With the lock held, runs still `running` under this process id were
    // left by an earlier daemon that had the same id (a container's
    // PID 1, restarted): they did not finish.
    store.interrupt_scheduled_runs_of(store.owner())?;
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let mut daemon = Daemon {
        dispatcher: Arc::new(dispatcher_for(&config, &options)?),
        config_file: config_file.to_path_buf(),
        config_watch: ConfigWatch::new(config_stamp),
        run_stamps: run_stamps(&config),
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
        None,
        Event::DaemonStarted {
            workspace: daemon.config.workspace.display().to_string(),
            schedules: daemon.config.schedules.len(),
            pid: std::process::id(),
        },
    );
    daemon.install_schedules(Install::Startup);
    daemon.main_loop(stop, done_rx).await
}

struct Daemon<C: Clock> {
    config_file: PathBuf,
    config_watch: ConfigWatch,
    /// The files that run on the config's word (scheduled workflows and
    /// their modules, servers' scripts) as they were when it was loaded:
    /// one changed makes the config load again, as its trust covers them.
    run_stamps: Vec<RunStamp>,
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
        let mut lost = None;
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
                _ = reload.tick() => {
                    self.reload_if_changed(&loaded_tx);
                    if let Err(e) = self.look_at_shared_store() {
                        // Other daemons take its runs for interrupted now:
                        // they are stopped at once, not after the grace.
                        for (_, cancel) in self.slots.values().flat_map(|s| &s.running) {
                            cancel.cancel();
                        }
                        lost = Some(e);
                        break;
                    }
                }
                Some(loaded) = loaded_rx.recv() => self.apply_reload(loaded),
                Some(finished) = done_rx.recv() => self.finished(finished),
                () = stop.cancelled() => break,
            }
        }
        self.shutdown(done_rx).await;
        lost.map_or(Ok(()), Err)
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
            let Some(due) = plan::due(&slot.config, slot.handled, now) else {
                continue;
            };
            self.slots
                .get_mut(&name)
                .unwrap()
                .handled_up_to(due.handled);
            // Of daemons sharing a store, only one that will run a fire time
            // takes it: one with the schedule disabled leaves it to others.
            let runs = due.fire.is_some() || !self.store.is_shared();
            if runs && !self.take_fire(&name, due.handled) {
                continue;
            }
            if due.missed > 0 {
                let event = Event::Missed {
                    fires: due.missed,
                    catch_up: due.caught_up,
                };
                self.log(Some(&name), event);
            }
            if let Some(fire) = due.fire {
                self.fire(&name, fire);
            }
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

    /// A fire of `name`: started, queued or skipped as `overlap` says,
    /// decided under the schedule's lock when the store is shared.
    fn fire(&mut self, name: &str, fire: Fire) {
        self.under_schedule_lock(name, |daemon| daemon.decide_fire(name, fire));
    }

    fn decide_fire(&mut self, name: &str, fire: Fire) {
        let running = self.running_of(name);
        let slot = &self.slots[name];
        match plan::on_fire(slot.config.overlap, &running, slot.queue.len()) {
            OnFire::Start => self.start(name, fire),
            OnFire::Queue { behind } => {
                self.slots.get_mut(name).unwrap().queue.push_back(fire);
                self.log(
                    Some(name),
                    Event::Queued {
                        behind,
                        fire: fire.at,
                    },
                );
            }
            OnFire::Skip { reason } => {
                let title = slot.config.workflow_display.clone();
                match self.store.record_skipped(
                    name,
                    &title,
                    fire.trigger,
                    fire.at.as_millisecond(),
                    &reason,
                ) {
                    Ok(run) => self.log(
                        Some(name),
                        Event::Skipped {
                            run,
                            reason,
                            fire: fire.at,
                        },
                    ),
                    Err(e) => self.warn(name, format!("cannot record a skipped run: {e:#}")),
                }
            }
        }
    }

    /// Starts a run of `name` for `fire`.
    fn start(&mut self, name: &str, fire: Fire) {
        if let Some(why) = reload::changed_since_loaded(&self.config, &self.run_stamps) {
            self.config_watch.forget();
            return self.warn(name, why);
        }
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
            Some(name),
            Event::Started {
                run,
                trigger: fire.trigger,
                fire: fire.at,
                local: local_time(fire.at, &config),
                attempt: fire.attempt,
                retries: config.retries,
            },
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
        let failed = matches!(status, RunStatus::Failed | RunStatus::TimedOut);
        self.log(
            Some(&schedule),
            Event::Finished {
                run,
                status,
                error: Some(error),
            },
        );
        if failed && fire.attempt < retries {
            match plan::after_failure(fire, retries, self.changed_anything(run)) {
                AfterFailure::GiveUp => {}
                AfterFailure::NotRetried => self.log(Some(&schedule), Event::NotRetried { run }),
                AfterFailure::Retry { attempt, wait } => {
                    self.log(
                        Some(&schedule),
                        Event::Retry {
                            run,
                            attempt,
                            retries,
                            in_s: wait.as_secs(),
                        },
                    );
                    let retry = Fire {
                        at: fire.at,
                        trigger: Trigger::Retry,
                        attempt,
                    };
                    self.retries
                        .push((self.clock.now() + wait, schedule.clone(), retry));
                }
            }
        }
        let slot = &self.slots[&schedule];
        if slot.running.is_empty() && slot.config.enabled && !slot.queue.is_empty() {
            self.start_queued(&schedule);
        }
        if self.slots.values().all(|s| s.running.is_empty()) {
            crate::util::heap::release_free();
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
        let runs_now = run_stamps(&self.config);
        if runs_now != self.run_stamps {
            self.run_stamps = runs_now;
            self.config_watch.forget();
        }
        if !self.config_watch.poll(stamp(&self.config_file)) {
            return;
        }
        self.reloading = true;
        let (file, options, tx) = (
            self.config_file.clone(),
            self.options.clone(),
            loaded_tx.clone(),
        );
        let running = self.config.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(reload::load(&file, &options, &running));
        });
    }

    fn apply_reload(&mut self, loaded: Loaded) {
        self.reloading = false;
        match loaded {
            Ok(Reload::Held { wider, fingerprint }) => {
                // Looked at again at every poll, so that `toolcell trust`
                // applies it; said once per version of the file.
                self.config_watch.forget();
                if self.held != fingerprint {
                    self.held = fingerprint;
                    self.log(None, Event::ReloadHeld { widens: wider });
                }
            }
            Ok(Reload::Ready(ready)) => {
                let (dispatcher, config) = *ready;
                self.held = None;
                self.warn_untrusted(&config.untrusted);
                if config.store != self.config.store {
                    let message = format!(
                        "[store] changed to {}: this daemon keeps {} until it is started again",
                        config.store.describe(),
                        self.store.location()
                    );
                    self.log(None, Event::Warning { message });
                }
                self.dispatcher = Arc::new(dispatcher);
                self.run_stamps = run_stamps(&config);
                self.config = config;
                self.install_schedules(Install::Reload);
                let schedules = self.config.schedules.len();
                self.log(None, Event::Reloaded { schedules });
            }
            Err(e) => self.log(
                None,
                Event::ReloadFailed {
                    error: format!("{e:#}"),
                },
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
            Ok(runs) => self.log(None, Event::Pruned { runs, days }),
            Err(e) => self.log(
                None,
                Event::PruneFailed {
                    error: format!("{e:#}"),
                },
            ),
        }
    }

    /// Stops starting runs, lets the running ones finish within the grace
    /// period, then stops them and records them as interrupted.
    async fn shutdown(&mut self, mut done_rx: mpsc::UnboundedReceiver<Finished>) {
        let running: usize = self.slots.values().map(|s| s.running.len()).sum();
        let grace_s = self.config.daemon.grace.as_secs();
        self.log(None, Event::Stopping { running, grace_s });
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
                        self.log(Some(&finished.schedule), Event::Interrupted { run: finished.run });
                    } else {
                        let event = Event::Finished { run: finished.run, status: finished.status, error: None };
                        self.log(Some(&finished.schedule), event);
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    if cancelled_at.is_some() {
                        // Runs that did not stop when told: recorded as
                        // interrupted; their threads end with the process.
                        for run in &left {
                            let _ = self.store.finish_run(*run, RunStatus::Interrupted, None, Some(INTERRUPTED));
                            self.log(None, Event::Interrupted { run: *run });
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
        self.log(None, Event::Stopped);
    }

    fn remember_handled(&self, name: &str, at: Timestamp) {
        if let Err(e) = self.store.set_last_fire(name, at.as_millisecond()) {
            self.warn(name, format!("cannot record its last fire time: {e:#}"));
        }
    }

    fn warn(&self, schedule: &str, text: String) {
        self.log(Some(schedule), Event::Warning { message: text });
    }

    /// Says which programs the config names but may not start (it is not
    /// trusted as it is).
    fn warn_untrusted(&self, untrusted: &[String]) {
        if untrusted.is_empty() {
            return;
        }
        let not_started = untrusted.to_vec();
        self.log(None, Event::Untrusted { not_started });
    }

    fn log(&self, schedule: Option<&str>, event: Event) {
        let line = event.line(self.clock.now(), schedule, self.options.json_logs);
        (self.options.log)(&line);
    }
}
