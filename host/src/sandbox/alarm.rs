//! The epoch clock of a process that makes one call: `SIGALRM` advances
//! the engine's epoch once, when the call's time is up, instead of a thread
//! advancing it every tick ([`super::engine::EpochClock::AtDeadline`]).
//!
//! Starting the ticking thread cost a small `tools call` about 0.3 ms of
//! its 4 (the thread's creation alone; BENCHMARKS.md, issue 21), and a
//! process that makes one call has no use for the ticks between: nothing
//! else waits for its thread, and Ctrl-C ends the process itself.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::Engine;

/// The engine whose epoch the alarm advances: the last one [`install`]ed.
/// Each is a leaked clone, never freed, as the handler may be reading the
/// one it replaced; a process installs one (a test process a few).
static ENGINE: AtomicPtr<Engine> = AtomicPtr::new(std::ptr::null_mut());

/// Makes `SIGALRM` advance `engine`'s epoch. The handler restarts the
/// system call it interrupts (`SA_RESTART`), so an alarm that comes while
/// the host waits (printing a result to a slow reader) changes nothing
/// but the epoch.
pub fn install(engine: &Engine) -> Result<()> {
    let leaked = Box::into_raw(Box::new(engine.clone()));
    ENGINE.store(leaked, Ordering::Release);
    // SAFETY: a zeroed `sigaction` is a valid value to fill in; the handler
    // is async-signal-safe (an atomic load and an atomic add).
    let installed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = advance_epoch as *const () as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut())
    };
    if installed != 0 {
        return Err(std::io::Error::last_os_error())
            .context("cannot install the call's deadline alarm");
    }
    Ok(())
}

/// Sets the alarm to go off once, `after` from now, in place of any set
/// before (each budget's alarm replaces the last: the instantiation's, then
/// the call's).
pub fn arm(after: Duration) {
    // A zero timer would disarm it: the shortest alarm is a microsecond.
    let after = after.max(Duration::from_micros(1));
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: libc::timeval {
            tv_sec: after.as_secs().try_into().unwrap_or(libc::time_t::MAX),
            tv_usec: after.subsec_micros().into(),
        },
    };
    // SAFETY: `timer` is a valid `itimerval`; the old value is not asked for.
    // It fails only for values out of range, which `timeval` cannot hold here.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) };
}

extern "C" fn advance_epoch(_signal: libc::c_int) {
    let engine = ENGINE.load(Ordering::Acquire);
    if !engine.is_null() {
        // SAFETY: `engine` came from `Box::into_raw` in `install` and is
        // never freed.
        unsafe { (*engine).increment_epoch() };
    }
}
