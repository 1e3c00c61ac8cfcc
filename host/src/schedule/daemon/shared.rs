//! The daemon's side of a shared store (PostgreSQL, `[store] url`): fire
//! times taken in the store, so that of the daemons sharing it exactly one
//! runs each; `overlap` judged by the runs of every daemon; the runs of a
//! daemon that died marked interrupted; fires queued behind another
//! daemon's run started when it ends. With the workspace's own store these
//! come down to what one daemon knows by itself.

use super::Daemon;
use crate::schedule::clock::Clock;
use crate::schedule::events::Event;
use crate::store::RunId;
use jiff::Timestamp;

impl<C: Clock> Daemon<C> {
    /// Takes fire time `at` of `name` in the store: false when another
    /// daemon sharing it took it (or it cannot be told, for a shared store).
    pub(super) fn take_fire(&self, name: &str, at: Timestamp) -> bool {
        match self.store.set_last_fire(name, at.as_millisecond()) {
            Ok(true) => true,
            Ok(false) => {
                self.log(Some(name), Event::Taken { fire: at });
                false
            }
            Err(e) => {
                self.warn(name, format!("cannot record its last fire time: {e:#}"));
                !self.store.is_shared()
            }
        }
    }

    /// The runs of `name` still going, oldest first: this daemon's, or
    /// with a shared store every daemon's.
    pub(super) fn running_of(&self, name: &str) -> Vec<RunId> {
        let mine = || {
            self.slots[name]
                .running
                .iter()
                .map(|(run, _)| *run)
                .collect()
        };
        if !self.store.is_shared() {
            return mine();
        }
        self.store.running_of_schedule(name).unwrap_or_else(|e| {
            self.warn(name, format!("cannot read its running runs: {e:#}"));
            mine()
        })
    }

    /// With a shared store: marks the runs of daemons that died as
    /// interrupted, and starts fires queued behind runs of other daemons
    /// that have ended. A connection lost for good is an error: the
    /// daemon stops (a supervisor starts it again, on a new connection)
    /// rather than run on with nothing recorded.
    pub(super) fn look_at_shared_store(&mut self) -> anyhow::Result<()> {
        if !self.store.is_shared() {
            return Ok(());
        }
        if self.store.is_lost() {
            anyhow::bail!(
                "lost the connection to the run store {}; other daemons sharing it take its runs for interrupted\n  fix: start the daemon again once the store is reachable (systemd's Restart=on-failure does)",
                self.store.location()
            );
        }
        match self.store.interrupt_orphans() {
            Ok(runs) => {
                for run in runs {
                    self.log(None, Event::Interrupted { run });
                }
            }
            Err(e) => self.log(
                None,
                Event::Warning {
                    message: format!("{e:#}"),
                },
            ),
        }
        let waiting: Vec<String> = (self.slots.iter())
            .filter(|(_, s)| s.running.is_empty() && s.config.enabled && !s.queue.is_empty())
            .map(|(name, _)| name.clone())
            .collect();
        for name in waiting {
            self.start_queued(&name);
        }
        Ok(())
    }

    /// Starts the first fire queued for `name` if no run of it is going
    /// (of any daemon, with a shared store), under the schedule's lock.
    pub(super) fn start_queued(&mut self, name: &str) {
        self.under_schedule_lock(name, |daemon| {
            if daemon.running_of(name).is_empty()
                && let Some(next) = daemon.slots.get_mut(name).unwrap().queue.pop_front()
            {
                daemon.start(name, next);
            }
        });
    }

    /// Runs `decide` holding `name`'s lock in a shared store, so no other
    /// daemon decides a fire of it meanwhile. A store that fails to lock
    /// is said in the log, and `decide` runs anyway, as for a daemon alone.
    pub(super) fn under_schedule_lock(&mut self, name: &str, decide: impl FnOnce(&mut Self)) {
        let locked = match self.store.lock_schedule(name) {
            Ok(()) => true,
            Err(e) => {
                self.warn(name, format!("cannot hold its lock in the store: {e:#}"));
                false
            }
        };
        decide(self);
        if locked && let Err(e) = self.store.unlock_schedule(name) {
            self.warn(
                name,
                format!("cannot let go of its lock in the store: {e:#}"),
            );
        }
    }
}
