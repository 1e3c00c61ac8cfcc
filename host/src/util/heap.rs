//! The process's allocator: mimalloc, in place of glibc's malloc.
//!
//! A content search reads its files on a reader thread and hands them to
//! the cell on the calling thread, which frees them: with glibc every such
//! free took the reader's arena lock, and the two threads queued on it a
//! thousand times a search (1,026 context switches, a core and a half
//! used where ripgrep uses nearly two). mimalloc frees another thread's
//! block without a lock: the same search took 105 ms against ripgrep's 72,
//! and takes 80 (BENCHMARKS.md, issue 21). It keeps freed memory for the
//! next batch of a call, and gives back what has been free for
//! [`PURGE_DELAY_MS`] as it next allocates or frees: a long-lived process
//! (`mcp`, `ui`) holds a burst's memory only until its next request, and
//! the daemon gives it back as it goes idle ([`release_free`]). (glibc, as
//! it was set up before, kept up to 256 MiB freed at the top of its heap.)
//!
//! Its cost is at the start: its size classes each take pages of their
//! own, some 70 page faults more for a small process (about 0.1 ms).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long freed memory is kept for reuse before it goes back to the
/// system. mimalloc's own 10 ms gave back a listing's buffers while it was
/// still making them, and each page taken again was a fault and a page
/// zeroed: an eighth of a 20,000-entry listing's time. A second spans any
/// call's bursts and is nothing to a process that then sleeps.
pub const PURGE_DELAY_MS: libc::c_long = 1000;

/// `mi_option_purge_delay` of mimalloc's second version (`mimalloc.h`,
/// `enum mi_option_e`), which the bindings do not name.
const OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets the allocator's options: first thing in a process, before it has
/// freed anything.
pub fn configure() {
    // SAFETY: setting an option of the allocator, a plain store.
    unsafe { libmimalloc_sys::mi_option_set(OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
}

/// Returns to the system now, rather than after mimalloc's delay, the
/// memory this thread has freed and that of threads that have ended: for
/// a process about to go idle for long.
pub fn release_free() {
    // SAFETY: a collection of this thread's heap and of memory freed by
    // others; no block in use is touched.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_is_the_option_set() {
        configure();
        // SAFETY: reading an option.
        let delay = unsafe { libmimalloc_sys::mi_option_get(OPTION_PURGE_DELAY) };
        assert_eq!(delay, PURGE_DELAY_MS);
        // Whether a purge decommits is option 5, 1 unless the environment
        // says otherwise: read there, the index is mimalloc v2's.
        if std::env::var_os("MIMALLOC_PURGE_DECOMMITS").is_none() {
            // SAFETY: reading an option.
            let decommits = unsafe { libmimalloc_sys::mi_option_get(OPTION_PURGE_DELAY - 10) };
            assert_eq!(decommits, 1, "option 5 is purge_decommits in mimalloc v2");
        }
    }
}
