//! Keeping a long-lived daemon's memory small. glibc's allocator gives each
//! thread that allocates an arena of its own (up to eight per core) and
//! keeps freed memory for reuse: after a burst of runs on many threads, a
//! daemon that then sleeps for hours would hold tens of MB it does not
//! use. Other allocators need nothing here.

/// Arenas kept: one for the scheduler, one shared by the runs; contention
/// between them costs nothing measurable at a daemon's pace.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENAS: libc::c_int = 2;

/// Caps the allocator's arenas; call before starting threads.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, ARENAS);
    }
}

/// Returns freed memory to the system; call when the daemon goes idle.
pub fn release_free() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free.
    unsafe {
        libc::malloc_trim(0);
    }
}
