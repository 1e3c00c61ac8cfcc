//! The epoch clock of a process that makes one call: `SIGALRM` advances
//! the engine's epoch once, when the call's time is up, instead of a thread
//! advancing it every tick ([`super::engine::EpochClock::AtDeadline`]).
//!
//! Starting the ticking thread cost a small `tools call` about 0.3 ms of
//! its 4 (the thread's creation alone; BENCHMARKS.md, issue 21), and a
//! process that makes one call has no use for the ticks between: nothing
//! else waits for its thread, and Ctrl-C ends the process itself. What the
//! ticks gave besides the deadline is lost: a guest that spins without
//! ever waiting in the host (checking a pollable's `ready` in a loop,
//! never `block`ing on it) holds the thread, so tasks the host started for
//! it (a socket's writes) stand still until it waits or its time is up.
//!
//! The alarm serves one engine and one call at a time: the process's one
//! interval timer is set anew by each budget (the instantiation's, then the
//! call's), so two calls at once would share one deadline.

use std::sync::atomic::{AtomicPtr, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::Engine;

/// The engine whose epoch the alarm advances: a clone, leaked, so that the
/// handler may read it at any moment after it is set.
static ENGINE: AtomicPtr<Engine> = AtomicPtr::new(std::ptr::null_mut());

/// Makes `SIGALRM` advance `engine`'s epoch; once in a process. The
/// handler restarts the system call it interrupts (`SA_RESTART`), so an
/// alarm that comes while the host waits changes nothing but the epoch.
pub fn install(engine: &Engine) -> Result<()> {
    let leaked = Box::into_raw(Box::new(engine.clone()));
    let first = ENGINE.compare_exchange(
        std::ptr::null_mut(),
        leaked,
        Ordering::AcqRel,
        Ordering::Acquire,
    );
    if first.is_err() {
        // SAFETY: `leaked` was never published.
        drop(unsafe { Box::from_raw(leaked) });
        anyhow::bail!("the deadline alarm serves one engine in a process, and it has one");
    }
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
pub fn arm(after: Duration) -> std::io::Result<()> {
    // A zero timer would disarm it: the shortest alarm is a microsecond.
    set(after.max(Duration::from_micros(1)))
}

/// Stops the alarm, if it is set.
pub fn disarm() -> std::io::Result<()> {
    set(Duration::ZERO)
}

fn set(after: Duration) -> std::io::Result<()> {
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
    match unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

extern "C" fn advance_epoch(_signal: libc::c_int) {
    let engine = ENGINE.load(Ordering::Acquire);
    if !engine.is_null() {
        // SAFETY: `engine` came from `Box::into_raw` in `install` and is
        // never freed.
        unsafe { (*engine).increment_epoch() };
    }
}
