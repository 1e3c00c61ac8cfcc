//! How the C allocator (glibc's malloc, which Rust's global allocator is on
//! Linux) keeps memory a toolcell process frees.
//!
//! By default glibc gives the top of the heap back to the kernel as soon as
//! 128 KiB of it are free, and serves any block above a threshold that
//! starts at 128 KiB with a fresh `mmap`. A call that reads thousands of
//! files (a content search, a listing) allocates and frees a batch of
//! buffers again and again, and every page it touches anew is a page fault:
//! 28,800 faults for one search of the benchmark tree, a quarter of its
//! time (BENCHMARKS.md). Keeping what was freed for the next batch removes
//! them (about 1,000 faults are left).

/// Free memory at the top of the heap kept for reuse, at most: more than
/// any batch of a call, far less than the machine.
const TRIM_THRESHOLD: libc::c_int = 256 << 20;
/// Blocks served from the heap rather than their own mapping, below this
/// size: the biggest file a tool reads whole (a few MiB) fits.
const MMAP_THRESHOLD: libc::c_int = 32 << 20;

/// Applies the settings; a no-op where the C library is not glibc.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called at start,
    // before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
