//! Ctrl-C for long commands (`chat`, `run`): the first stops the current
//! task (its token is cancelled, and whatever runs under it winds down and
//! is recorded); the second exits at once.

use super::EXIT_INTERRUPTED;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Stops the current task on the first Ctrl-C and the process on the second.
pub struct Interrupts {
    current: Mutex<CancellationToken>,
}

impl Interrupts {
    pub fn start() -> Arc<Self> {
        let interrupts = Arc::new(Self {
            current: Mutex::new(CancellationToken::new()),
        });
        let handle = interrupts.clone();
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                let token = handle.token();
                if token.is_cancelled() {
                    say!("\ntoolcell: stopped at once");
                    crate::util::child::stop_all();
                    std::process::exit(EXIT_INTERRUPTED);
                }
                say!("\ntoolcell: stopping (Ctrl-C again to quit at once)");
                token.cancel();
            }
        });
        interrupts
    }

    pub fn token(&self) -> CancellationToken {
        self.current
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A fresh token for the next task.
    pub fn renew(&self) -> CancellationToken {
        let token = CancellationToken::new();
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = token.clone();
        token
    }
}
