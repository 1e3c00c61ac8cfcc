//! Schedules: workflows run unattended at cron times by `toolcell daemon`.

pub mod clock;
pub mod daemon;
pub mod events;
pub mod launch;
pub mod lock;
pub mod memory;
pub mod plan;
pub mod reload;
pub mod widening;
