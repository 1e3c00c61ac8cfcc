//! The process's entry: what Rust's runtime does before `main` that
//! toolcell needs, without what it does that a start pays for and toolcell
//! does not use.
//!
//! On Linux with glibc the binary defines the C `main` itself
//! (`#![no_main]` in `main.rs`), so Rust's `lang_start` does not run. That
//! skips its stack-overflow handler, whose set-up finds the main thread's
//! stack with `pthread_getattr_np`: glibc reads and parses
//! `/proc/self/maps` for it, and the kernel writes that file out, a tenth
//! of `toolcell --version`'s time (0.2 ms of 1.4–2.1, BENCHMARKS.md, issue
//! 21). Without the handler a stack overflow on any thread is a plain
//! `SIGSEGV`, not an abort with a message naming the thread: either way
//! the process ends (and toolcell's inputs are held to depth limits that
//! keep it from overflowing, `tests/all/depth.rs`). Panics name the main
//! thread `<unnamed>`, and backtraces are not cut at `main`.
//!
//! What the runtime does that toolcell relies on is done here:
//! [`prepare_process`] before anything else, [`exit_with`] at the end.
//! Arguments and the environment need nothing on glibc, which hands them
//! to std when the binary is loaded (elsewhere `main.rs` keeps Rust's own
//! `main`).

/// The exit code of a process whose `main` panicked, as Rust's runtime
/// gives it.
pub const EXIT_PANICKED: i32 = 101;

/// Before anything else in the process:
/// - file descriptors 0, 1 and 2, if closed, are opened on `/dev/null`, so
///   that no file the process opens later takes their place (and is
///   written to as stdout);
/// - `SIGPIPE` is ignored: a write to a closed pipe fails with an error
///   (`toolcell tools list | head` ends quietly on it) instead of killing
///   the process.
pub fn prepare_process() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only asks whether `fd` is open; `open` of a
        // constant path returns the lowest free descriptor, `fd` itself,
        // as every lower one is open.
        unsafe {
            let closed = libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
            if closed && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) == -1 {
                // As Rust's runtime does: a process whose stdout might be
                // a file it opens must not go on.
                libc::abort();
            }
        }
    }
    // SAFETY: setting a signal's disposition to "ignore".
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}

/// Runs `main` and ends the process with its exit code, or
/// [`EXIT_PANICKED`] if it panicked (its message printed by the panic
/// hook, as always); stdout is flushed on the way out.
///
/// The process ends with `_exit`, as a forked child does, not with
/// `exit`: what `exit` runs besides flushing stdout only tears down what
/// the kernel takes back with the process anyway. It ran the main
/// thread's thread-local destructors (wasmtime's signal stack unmapped)
/// and the allocator's exit handler, which hands its free memory back a
/// range at a time (six `madvise` calls after a small `tools call`):
/// 0.05–0.1 ms of a 2 ms process (BENCHMARKS.md, issue 21). Nothing of
/// toolcell's waits for them: its files, databases and child processes are
/// closed, stopped or flushed by `main` itself, by values dropped before
/// it returns; statics, which hold the rest, were never dropped.
pub fn exit_with(main: impl FnOnce() -> i32 + std::panic::UnwindSafe) -> ! {
    let code = std::panic::catch_unwind(main).unwrap_or(EXIT_PANICKED);
    end_process(code)
}

/// Flushes stdout, then ends the process at once with `code`.
///
/// Unlike std's own exit, which only tries stdout's lock, the flush waits
/// for it: a thread that held it while blocked on a full pipe would hold
/// up the end. None can by then: what writes stdout from another thread
/// (`toolcell mcp`'s answers) runs on a runtime dropped before `main`
/// returns.
fn end_process(code: i32) -> ! {
    use std::io::Write;
    // A failed flush (a reader gone) is what `exit` would have met too,
    // and said nothing about.
    let _ = std::io::stdout().lock().flush();
    // SAFETY: `_exit` ends the process; no Rust value is used after it.
    unsafe { libc::_exit(code) }
}
