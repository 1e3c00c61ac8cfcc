//! `toolcell:tool/folders`' `read-ahead`: the folders a walk will enter,
//! listed by the process's readers while the cell works on the folder it
//! has.
//!
//! A walk goes depth first, so the folders asked for last are needed first:
//! the folders waiting form a stack (a folder's subfolders, asked for when
//! the walk enters it, come before its siblings, asked for earlier). A
//! reader lists them from the top, one at a time; `packed-entries` takes a
//! listing made ahead, or else lists the folder itself and takes it off the
//! stack. Neither waits for the other long ([`PATIENCE`]): the cell for a
//! listing a reader is making, the reader for the next folders named.
//!
//! A hint only: every listing is made by the same code, judged by the same
//! rules (a copy of the cell's guard) and answered as `packed-entries`
//! alone would answer it, as the folder was when its listing began (a tool
//! that changes a folder after naming it sees it as it was: the contract
//! says so). What is held, listings and the paths waiting, is bounded by
//! the cell's memory limit, the stack by [`MAX_WAITING`] paths of at most
//! [`MAX_PATH_BYTES`]; what was not taken is dropped with the call. A
//! reader's time is not the cell's: a tool can keep one busy for its call,
//! no more (one job a cell, each listing a folder the cell may list).

use super::folders::{NotListed, Packed, packed_entries};
use super::fs_guard::FileGuard;
use super::readers::readers;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// Folders waiting at most: a walk's stack holds the folders still to enter
/// beside the path it is on, rarely more than a few hundred; past this the
/// ones asked for first (needed last) are forgotten, and listed by the
/// cell when it comes to them.
const MAX_WAITING: usize = 4096;

/// How long the cell waits for a listing a reader is making, and a reader
/// for more folders to list before its job ends: a listing takes tens of
/// microseconds, and a thread woken on another core here up to a
/// millisecond. Past it, the other thread's core is likely not running (a
/// busy host), and waiting on would cost more than the listing.
const PATIENCE: Duration = Duration::from_micros(200);

/// The longest path a folder can be opened by (Linux's `PATH_MAX`): a
/// longer one named ahead is left out rather than held.
const MAX_PATH_BYTES: usize = 4096;

/// Bytes a path waiting on the stack counts: its own and the stack's slot.
fn waiting_bytes(path: &str) -> usize {
    path.len() + std::mem::size_of::<String>()
}

/// Bytes a listing held ahead counts beyond its names and kinds (its path,
/// the map's entry): what a listing of an empty folder costs.
const LISTING_OVERHEAD: usize = 96;

/// One listing: the folder's entries, or why not.
type Listing = Result<Packed, NotListed>;

/// The folders one cell asked to have listed ahead, and the listings made.
/// Dropped (with the call), the readers list no more of them.
pub(in crate::sandbox) struct FoldersAhead(Arc<Shared>);

struct Shared {
    /// The cell's rules as they were when it first asked.
    guard: FileGuard,
    /// Bytes of listings and paths held, past which the readers stop
    /// listing until the cell takes some, and no more paths are taken: the
    /// cell's memory limit, where the listings are copied.
    max_held: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Folders to list, the next one last.
    waiting: Vec<String>,
    /// Folders a reader is listing now.
    listing: Vec<String>,
    /// Listings made and not taken.
    listed: HashMap<String, (Listing, usize)>,
    /// Bytes of `listed` and `waiting`.
    held: usize,
    /// A reader is at work on `waiting`.
    working: bool,
    /// The call is over: no more listings.
    closed: bool,
}

impl FoldersAhead {
    pub(super) fn new(guard: FileGuard, max_held: usize) -> Self {
        Self(Arc::new(Shared {
            guard,
            max_held,
            state: Mutex::new(State::default()),
        }))
    }

    /// Adds `paths` to be listed, the first of them next.
    ///
    /// A path too long to open is left out; so are paths past what the
    /// stack may hold (its bytes count against the same bound as the
    /// listings': a tool cannot make the host keep more than its memory).
    pub(super) fn push(&self, paths: Vec<String>) {
        let mut state = self.0.lock();
        for path in paths.into_iter().rev() {
            let bytes = waiting_bytes(&path);
            if path.len() > MAX_PATH_BYTES || state.held + bytes > self.0.max_held {
                continue;
            }
            state.held += bytes;
            state.waiting.push(path);
        }
        let over = state.waiting.len().saturating_sub(MAX_WAITING);
        for forgotten in state.waiting.drain(..over).collect::<Vec<_>>() {
            state.held -= waiting_bytes(&forgotten);
        }
        self.wake(&mut state);
    }

    /// The listing of `path`, if a reader has made it or makes it within
    /// [`PATIENCE`]; otherwise `None`, and the caller lists it: it is taken
    /// off the stack, and a listing a reader is making of it is dropped
    /// when made. The caller waits no longer for a reader, whose core may
    /// be busy or, in a virtual machine, not running at all for a while.
    pub(super) fn take(&self, path: &str) -> Option<Listing> {
        let asked = Instant::now();
        let mut state = self.0.lock();
        while state.listing.iter().any(|p| p == path) && asked.elapsed() < PATIENCE {
            drop(state);
            std::thread::yield_now();
            state = self.0.lock();
        }
        if let Some((listing, bytes)) = state.listed.remove(path) {
            state.held -= bytes;
            self.wake(&mut state);
            return Some(listing);
        }
        // Named twice, it is listed once (by the caller, now).
        let before = state.waiting.len();
        state.waiting.retain(|p| p != path);
        state.held -= (before - state.waiting.len()) * waiting_bytes(path);
        if let Some(at) = state.listing.iter().position(|p| p == path) {
            state.listing.swap_remove(at);
        }
        None
    }

    /// Sets a reader to work if there is work and room, and none is at it.
    fn wake(&self, state: &mut State) {
        if state.working || !self.0.has_work(state) {
            return;
        }
        let Some(pool) = readers() else {
            return;
        };
        state.working = true;
        // The job does not keep the listings alive: dropped meanwhile,
        // they are freed and the job ends.
        let shared = Arc::downgrade(&self.0);
        pool.spawn(move || list_waiting(&shared));
    }
}

impl Drop for FoldersAhead {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.closed = true;
        state.waiting.clear();
        state.listed.clear();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A state is changed in whole statements: usable after a panic.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn has_work(&self, state: &State) -> bool {
        !state.closed && !state.waiting.is_empty() && state.held < self.max_held
    }

    /// The top of the stack, taken off it.
    fn pop(&self, state: &mut State) -> Option<String> {
        let path = state.waiting.pop()?;
        state.held -= waiting_bytes(&path);
        Some(path)
    }

    /// The state once it has work, or once it has had none for
    /// [`PATIENCE`], or the call is over: a walk names the next folders as
    /// it enters one, often just after the last were listed, and a reader
    /// whose job had ended would have to be woken again (which here can
    /// take longer than listing the folder).
    fn next_work(&self) -> MutexGuard<'_, State> {
        let idle = Instant::now();
        loop {
            let state = self.lock();
            if self.has_work(&state) || state.closed || idle.elapsed() >= PATIENCE {
                return state;
            }
            drop(state);
            std::thread::yield_now();
        }
    }
}

/// A reader's job: lists the folder on top of the stack until none is
/// left for [`PATIENCE`], the call is over, or the listings held reach the
/// bound.
fn list_waiting(shared: &Weak<Shared>) {
    while let Some(shared) = shared.upgrade() {
        let path = {
            let mut state = shared.next_work();
            let next = if shared.has_work(&state) {
                shared.pop(&mut state)
            } else {
                None
            };
            let Some(path) = next else {
                state.working = false;
                return;
            };
            if state.listed.contains_key(&path) || state.listing.contains(&path) {
                continue;
            }
            state.listing.push(path.clone());
            path
        };
        // A listing that panicked is a failed one, not a stuck cell or
        // (on a reader, whose panic would abort) a stopped host.
        let listing =
            std::panic::catch_unwind(AssertUnwindSafe(|| packed_entries(&shared.guard, &path)))
                .unwrap_or_else(|_| {
                    Err(super::bindings::toolcell::tool::folders::ListError::Failed.into())
                });
        let bytes = LISTING_OVERHEAD
            + path.len()
            + listing
                .as_ref()
                .map_or(0, |(names, kinds)| names.len() + kinds.len());
        let mut state = shared.lock();
        // Not there any more: the cell listed it itself meanwhile.
        let Some(at) = state.listing.iter().position(|p| *p == path) else {
            continue;
        };
        state.listing.swap_remove(at);
        // Past the bound (a large folder), it is not kept: the cell lists
        // it when it comes to it.
        if !state.closed && state.held + bytes <= shared.max_held {
            state.held += bytes;
            state.listed.insert(path, (listing, bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::FileRules;

    /// A tool naming far more, and longer, paths than its memory holds:
    /// what the host keeps stays within the bound, whatever the readers
    /// have listed meanwhile (here, on no root: every listing a refusal).
    #[test]
    fn what_is_held_ahead_stays_within_the_cells_memory_limit() {
        const LIMIT: usize = 64 << 10;
        let guard = FileGuard::new(Arc::new(FileRules::default()), Vec::new());
        let ahead = FoldersAhead::new(guard, LIMIT);
        for round in 0..50 {
            let long = format!("{round}/{}", "x".repeat(1000));
            ahead.push(vec![long; 200]);
            ahead.push(vec!["y".repeat(MAX_PATH_BYTES + 1)]);
            let state = ahead.0.lock();
            let waiting: usize = state.waiting.iter().map(|p| waiting_bytes(p)).sum();
            let listed: usize = state.listed.values().map(|(_, bytes)| bytes).sum();
            assert_eq!(state.held, waiting + listed, "round {round}");
            assert!(state.held <= LIMIT, "round {round}: {} held", state.held);
            assert!(
                state.waiting.iter().all(|p| p.len() <= MAX_PATH_BYTES),
                "a path too long to open was kept"
            );
        }
        // Taking a path named many times takes every copy off the stack.
        ahead.push(vec!["z".into(); 10]);
        assert!(ahead.take("z").is_none_or(|listed| listed.is_err()));
        assert!(!ahead.0.lock().waiting.iter().any(|p| p == "z"));
    }
}
