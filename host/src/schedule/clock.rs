//! The daemon's clock: the real one, or one a test moves by hand so that
//! fire times, catch-up and retries can be tested without waiting.

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use tokio::sync::watch;

/// The wall clock the scheduler reads and waits on.
#[async_trait]
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> Timestamp;
    /// Returns once `now() >= at` (at once if it already is).
    async fn sleep_until(&self, at: Timestamp);
}

/// The machine's clock.
pub struct SystemClock;

#[async_trait]
impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    async fn sleep_until(&self, at: Timestamp) {
        let wait = at.duration_since(Timestamp::now());
        if let Ok(wait) = std::time::Duration::try_from(wait) {
            tokio::time::sleep(wait).await;
        }
    }
}

/// A clock that moves only when told to.
pub struct ManualClock {
    now: watch::Sender<Timestamp>,
}

impl ManualClock {
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: watch::Sender::new(start),
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: SignedDuration) {
        self.now.send_modify(|now| *now += by);
    }

    /// Sets the clock to `at`.
    pub fn set(&self, at: Timestamp) {
        self.now.send_replace(at);
    }
}

#[async_trait]
impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.borrow()
    }

    async fn sleep_until(&self, at: Timestamp) {
        let mut changes = self.now.subscribe();
        while *changes.borrow_and_update() < at {
            if changes.changed().await.is_err() {
                return;
            }
        }
    }
}
