//! `toolcell:tool/files`: many whole files read for a cell at once, on the
//! calling thread and the process's readers, and files read ahead while
//! the cell works on the ones it has.
//!
//! Each path is resolved as the tool's own paths are (see
//! [`super::folders`]), judged by the file rules (a secret is refused, and
//! the refusal kept) where it really is, opened beneath its root
//! ([`open_beneath`]; a link as the last component is not followed, one on
//! the way only when it stays inside), checked to be a regular file, and
//! read whole: four system calls a file. A content search spends most of
//! its time in them; the calling thread and a reader a further core make
//! them side by side, as ripgrep does, each taking the next file.
//!
//! `read-ahead` hands the readers the next list while the cell searches
//! the last one (a content search's files are known a batch early), so
//! the reading of one batch and the searching of another overlap; a
//! `read-many` of the same list then takes what they read. The last two
//! lists are kept, so a cell can name its next list before it takes the
//! one read meanwhile, and the readers go on to it as that one is taken;
//! only the oldest is read before it is taken. It is a hint: every answer
//! is what `read-many` alone would give.

use super::bindings::toolcell::tool::files::{Host, ReadError};
use super::cell::CellState;
use super::folders::{know_roots, resolve};
use super::fs_guard::FileGuard;
use super::readers::readers;
use super::refusal::Refusal;
use crate::util::openat::open_beneath;
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Files in a batch below which the calling thread reads them all: waking
/// a reader costs about as much as reading a few small files.
const PARALLEL_FROM: usize = 8;

/// One file read: its contents or why not, and a refusal to keep.
type Outcome = (Result<Vec<u8>, ReadError>, Option<Refusal>);

impl Host for CellState {
    async fn read_many(
        &mut self,
        paths: Vec<String>,
        max_bytes: u64,
    ) -> Vec<Result<Vec<u8>, ReadError>> {
        know_roots(self);
        let ahead = (self.read_ahead.as_mut()).and_then(|ahead| ahead.take(&paths, max_bytes));
        let batch = ahead.unwrap_or_else(|| {
            // A list read ahead but not the one asked for is dropped
            // unread: what a tool makes the host hold stays one list.
            self.read_ahead = None;
            let batch = Batch::new(self, paths, max_bytes);
            batch.begin();
            batch
        });
        batch
            .finish()
            .into_iter()
            .map(|(contents, refusal)| {
                if let Some(refusal) = refusal {
                    self.files.refuse(refusal);
                }
                contents
            })
            .collect()
    }

    async fn read_ahead(&mut self, paths: Vec<String>, max_bytes: u64) {
        know_roots(self);
        if paths.is_empty() {
            self.read_ahead = None;
            return;
        }
        let batch = Batch::new(self, paths, max_bytes);
        self.read_ahead
            .get_or_insert_with(ReadAhead::default)
            .keep(batch);
    }
}

/// Lists read ahead that are kept at once: the last two asked for. A
/// content search names its next list before it takes the one read
/// meanwhile; the readers go on from the one to the other as it is taken,
/// without stopping (a reader left with nothing sleeps, and waking it was
/// a tenth of a search's time, BENCHMARKS.md, issue 21). Only the oldest
/// is read before it is taken: what a tool makes the host hold stays one
/// list, as when one list was kept.
const KEPT_LISTS: usize = 2;

/// The lists a cell asked to have read ahead, the oldest first, which the
/// readers read; a list dropped (for a newer one, with the cell, or passed
/// over by a `read-many` of a later one) is read no further.
#[derive(Default)]
pub(super) struct ReadAhead(VecDeque<Arc<Batch>>);

impl ReadAhead {
    /// The list that is `paths` read with `max_bytes`, taken, and the next
    /// one set to be read; the lists asked for before it are dropped.
    fn take(&mut self, paths: &[String], max_bytes: u64) -> Option<Arc<Batch>> {
        let at = (self.0.iter())
            .position(|batch| batch.asked_max_bytes == max_bytes && batch.paths == paths)?;
        self.0.drain(..at).for_each(|older| older.stop());
        let taken = self.0.pop_front()?;
        taken.begin();
        if let Some(next) = self.0.front() {
            next.begin();
        }
        Some(taken)
    }

    /// Keeps `batch`, read now if it is the only list, dropping the oldest
    /// list past [`KEPT_LISTS`].
    fn keep(&mut self, batch: Arc<Batch>) {
        self.0.push_back(batch);
        while self.0.len() > KEPT_LISTS {
            if let Some(oldest) = self.0.pop_front() {
                oldest.stop();
            }
        }
        if let Some(oldest) = self.0.front() {
            oldest.begin();
        }
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.0.iter().for_each(|batch| batch.stop());
    }
}

/// One list of files being read, by the calling thread and the readers
/// side by side, each taking the next path as it is free.
struct Batch {
    paths: Vec<String>,
    /// `max-bytes` as the cell asked it (a later `read-many` is matched
    /// with it), and as it holds: never past the memory budget.
    asked_max_bytes: u64,
    max_bytes: u64,
    /// Bytes the list may still take. All of it must fit the cell's
    /// memory, where it is copied: a tool cannot make the host hold more
    /// than that, however much it asks.
    budget: AtomicU64,
    /// The cell's rules as they were when the list was asked for.
    guard: FileGuard,
    /// The next path to take, and how many were read.
    next: AtomicUsize,
    done: AtomicUsize,
    /// The readers were set to the list.
    begun: AtomicBool,
    outcomes: Vec<Mutex<Option<Outcome>>>,
}

impl Batch {
    /// The list `paths` for `state`, not yet read.
    fn new(state: &CellState, paths: Vec<String>, max_bytes: u64) -> Arc<Self> {
        let budget = state.limiter.limit_bytes() as u64;
        Arc::new(Self {
            outcomes: paths.iter().map(|_| Mutex::new(None)).collect(),
            paths,
            asked_max_bytes: max_bytes,
            max_bytes: max_bytes.min(budget),
            budget: AtomicU64::new(budget),
            guard: state.files.judging_copy(),
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            begun: AtomicBool::new(false),
        })
    }

    /// Sets the readers to the list (once), when it is long enough to be
    /// worth waking one; the calling thread reads what they leave.
    fn begin(self: &Arc<Self>) {
        if self.paths.len() < PARALLEL_FROM || self.begun.swap(true, Ordering::Relaxed) {
            return;
        }
        let Some(pool) = readers() else {
            return;
        };
        // A job waiting for a busy reader does not keep the list alive: one
        // dropped meanwhile is freed, and the job is void.
        for _ in 0..pool.current_num_threads() {
            let batch = Arc::downgrade(self);
            pool.spawn(move || {
                if let Some(batch) = batch.upgrade() {
                    batch.take_and_read();
                }
            });
        }
    }

    /// Has the readers take no more of the list (those reading go on to
    /// the end of their file).
    fn stop(&self) {
        self.next.store(self.paths.len(), Ordering::Relaxed);
    }

    /// Every outcome, in the list's order: the calling thread reads what
    /// no reader took yet, then waits for the few a reader is reading (it
    /// is at work on them, so the wait is short and spent spinning).
    fn finish(&self) -> Vec<Outcome> {
        self.take_and_read();
        while self.done.load(Ordering::Acquire) < self.paths.len() {
            std::thread::yield_now();
        }
        self.outcomes
            .iter()
            .map(|slot| lock(slot).take().unwrap_or((Err(ReadError::Failed), None)))
            .collect()
    }

    /// Reads the next path not taken yet, until none is left.
    fn take_and_read(&self) {
        loop {
            let at = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(path) = self.paths.get(at) else {
                return;
            };
            // A read that panicked is a failed read, not a stuck list or
            // (on a reader, whose panic would abort) a stopped host.
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| self.read(path)))
                .unwrap_or((Err(ReadError::Failed), None));
            *lock(&self.outcomes[at]) = Some(outcome);
            self.done.fetch_add(1, Ordering::Release);
        }
    }

    /// One path, judged and read; a refusal is kept by the caller.
    fn read(&self, path: &str) -> Outcome {
        let Some((root, inside)) = resolve(self.guard.root_dirs(), path) else {
            return (Err(ReadError::Denied), None);
        };
        // Not blocking: a named pipe put there since the tool listed
        // the folder would otherwise wait for a writer. A link as the
        // last component is not followed, as the tools' own reads.
        let flags = libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_NOFOLLOW;
        let (opened, host) = match open_beneath(root.dir.as_raw_fd(), &root.host, inside, flags) {
            Ok(opened) => opened,
            Err(e) => return (Err(read_error(&e)), None),
        };
        if let Some(refusal) = self.guard.secret_refusal(&host) {
            return (Err(ReadError::Denied), Some(refusal));
        }
        (
            read_whole(opened.into(), self.max_bytes, &self.budget),
            None,
        )
    }
}

/// A slot's lock (poisoned or not: a slot is written whole, in one
/// statement); a slot left empty reads as a failure.
fn lock(slot: &Mutex<Option<Outcome>>) -> std::sync::MutexGuard<'_, Option<Outcome>> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// The whole of the opened `file`, if it is a regular file of at most
/// `max_bytes` and the call's `budget` of bytes still holds it.
fn read_whole(
    file: std::fs::File,
    max_bytes: u64,
    budget: &AtomicU64,
) -> Result<Vec<u8>, ReadError> {
    let meta = file.metadata().map_err(|e| read_error(&e))?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile);
    }
    if meta.len() > max_bytes {
        return Err(ReadError::TooLarge);
    }
    let wanted = meta.len();
    budget
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(wanted)
        })
        .map_err(|_| ReadError::TooLarge)?;
    // What it held when it was looked at, at most: one read fills the
    // buffer, and the read that would find the end is not made (a file
    // that grew since is searched as it was; one that shrank, as it is).
    let mut contents = Vec::with_capacity(wanted as usize);
    fill(&file, &mut contents, wanted as usize).map_err(|e| read_error(&e))?;
    Ok(contents)
}

/// Reads `file` into `contents` until it holds `wanted` bytes or the file
/// ends, straight into the vector's spare room: one `read` for a file as
/// large as it was said to be. (`Read::read_to_end` reads 8 KiB first
/// when it is not told the size, and zeroing the room first would touch
/// every byte once more.)
fn fill(file: &std::fs::File, contents: &mut Vec<u8>, wanted: usize) -> std::io::Result<()> {
    contents.reserve(wanted.saturating_sub(contents.len()));
    populate(contents.spare_capacity_mut());
    while contents.len() < wanted {
        let missing = wanted - contents.len();
        let room = &mut contents.spare_capacity_mut()[..missing];
        // SAFETY: `room` is writable memory of `room.len()` bytes the
        // vector owns; the kernel writes at most that many.
        let read = unsafe { libc::read(file.as_raw_fd(), room.as_mut_ptr().cast(), room.len()) };
        match read {
            0 => break,
            // SAFETY: the kernel initialised `read` bytes of the room.
            1.. => unsafe { contents.set_len(contents.len() + read as usize) },
            _ => {
                let error = std::io::Error::last_os_error();
                if error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
    Ok(())
}

/// Room at least this large is made present before a read fills it: a
/// megabyte is 256 pages, and a fault for each as the kernel copies into
/// them cost twice what one `madvise` that makes them all does (BENCHMARKS.md,
/// issue 21). Below it the call would cost more than it saves.
const POPULATE_FROM_BYTES: usize = 256 << 10;

/// Makes the whole pages of `room` present and writable at once
/// (`MADV_POPULATE_WRITE`, Linux 5.14+). A hint: where it is refused, the
/// read faults the pages in as before.
fn populate(room: &mut [std::mem::MaybeUninit<u8>]) {
    if room.len() < POPULATE_FROM_BYTES {
        return;
    }
    const PAGE: usize = 4096;
    let start = (room.as_ptr() as usize).next_multiple_of(PAGE);
    let end = (room.as_ptr() as usize + room.len()) / PAGE * PAGE;
    if end > start {
        // SAFETY: the range is whole pages within `room`, memory this
        // process owns and may write; populating changes no byte of it.
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end - start,
                libc::MADV_POPULATE_WRITE,
            )
        };
    }
}

/// The contract's error for what opening or reading said.
fn read_error(error: &std::io::Error) -> ReadError {
    match error.raw_os_error() {
        Some(libc::ENOENT | libc::ENOTDIR) => ReadError::NotFound,
        Some(libc::EISDIR | libc::ELOOP) => ReadError::NotAFile,
        Some(libc::EXDEV | libc::EACCES | libc::EPERM) => ReadError::Denied,
        _ => ReadError::Failed,
    }
}
