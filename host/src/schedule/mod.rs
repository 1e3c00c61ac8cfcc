//! Schedules: workflows run unattended at cron times by `toolcell daemon`.

pub mod clock;
pub mod config;
pub mod cron;
pub mod daemon;
pub mod memory;
pub mod widening;
