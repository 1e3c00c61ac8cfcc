//! Retrying a model request: connection errors, 429 and 5xx are retried with
//! exponential backoff. Only the model request is repeated; tools run after
//! a turn is complete, so a retry never runs a tool twice.

use std::time::Duration;

/// The first wait; doubled on each retry.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(8);

/// The wait before retry number `attempt` (1-based).
pub fn backoff(attempt: u32) -> Duration {
    let factor = 1u32 << attempt.saturating_sub(1).min(8);
    (FIRST_BACKOFF * factor).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_cap() {
        assert_eq!(backoff(1), Duration::from_millis(500));
        assert_eq!(backoff(2), Duration::from_secs(1));
        assert_eq!(backoff(10), MAX_BACKOFF);
    }
}
