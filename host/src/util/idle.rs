//! Threads that work only in a core's spare time.
//!
//! Some of toolcell's threads do work no call waits for: the MCP recorder
//! commits finished calls in batches (`store::deferred`), the cell keeper
//! builds the next call's cell and resets the last one's
//! (`sandbox::keeper`). At normal priority such a thread costs the calls it
//! serves twice on a small machine: it takes a core from the server or its
//! client while it works (a commit with the WAL's checkpoint and its
//! `fsync` takes milliseconds), and the call that wakes it pays for the
//! wake-up: handing the keeper a used store took 17 µs with the keeper at
//! normal priority and 5 µs with it in this class (two-core VM, BENCHMARKS.md
//! "Seventh step"; only the outcome was measured, not the kernel's path).
//! `nice 19` is not enough: a thread that mostly sleeps is let in at once
//! when it wakes, and `SCHED_BATCH` measured no better.
//!
//! In the `SCHED_IDLE` class a thread runs only on a core nothing else
//! wants. The cost: on a machine kept busy by other work it gets little
//! CPU, so what it would have done is done by the caller instead (each
//! such thread falls back when it is behind).

/// Puts the calling thread in the `SCHED_IDLE` class. `who` names the
/// thread in the debug log where the class is unavailable (the thread
/// then stays as it is).
pub fn run_only_when_idle(who: &str) {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` with pid 0 changes only the calling
    // thread, and `param` is a valid, initialised struct.
    let status = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    if status != 0 {
        tracing::debug!(
            "{who} keeps its priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_put_in_idle_time_runs_in_the_idle_class_and_others_do_not() {
        let class = || {
            // SAFETY: pid 0 asks about the calling thread.
            unsafe { libc::sched_getscheduler(0) }
        };
        let idle = std::thread::spawn(move || {
            run_only_when_idle("a test thread");
            class()
        });
        let other = std::thread::spawn(class);
        assert_eq!(idle.join().unwrap(), libc::SCHED_IDLE);
        assert_eq!(other.join().unwrap(), libc::SCHED_OTHER);
    }
}
