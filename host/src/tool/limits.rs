//! Resource limits of one tool call, with the defaults and the bounds the
//! host enforces whatever a manifest or config says.

use std::ops::RangeInclusive;

/// A tool that has not answered in 30 s is stuck, or doing a job that
/// belongs in a workflow; the manifest may ask more.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// Ten minutes: longer calls block an agent turn far past usefulness.
pub const TIMEOUT_MS_RANGE: RangeInclusive<u64> = 1..=600_000;
/// Enough for a Rust tool handling files of a few MiB.
pub const DEFAULT_MEMORY_MB: u64 = 64;
/// 4 GiB is the most a 32-bit linear memory can address.
pub const MEMORY_MB_RANGE: RangeInclusive<u64> = 1..=4096;
/// 1 MiB of JSON is already far more than a model's context holds.
pub const DEFAULT_OUTPUT_BYTES: u64 = 1024 * 1024;
/// 64 MiB: results are held in memory and may be stored in the run record.
pub const OUTPUT_BYTES_RANGE: RangeInclusive<u64> = 1..=64 * 1024 * 1024;

/// The limits one call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout_ms: u64,
    pub memory_mb: u64,
    pub max_output_bytes: u64,
}

impl Limits {
    /// The memory limit in bytes.
    pub fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mb * 1024 * 1024).unwrap_or(usize::MAX)
    }
}
