//! `toolcell:tool/files`: many whole files read for a cell at once, on the
//! calling thread and the process's readers.
//!
//! Each path is resolved as the tool's own paths are (see
//! [`super::folders`]), judged by the file rules (a secret is refused, and
//! the refusal kept) where it really is, opened beneath its root
//! ([`open_beneath`]; a link as the last component is not followed, one on
//! the way only when it stays inside), checked to be a regular file, and
//! read whole: four system calls a file. A content search spends most of
//! its time in them; the calling thread and a reader a further core make
//! them side by side, as ripgrep does, each taking the next file.

use super::bindings::toolcell::tool::files::{Host, ReadError};
use super::cell::CellState;
use super::folders::{know_roots, resolve};
use super::fs_guard::Refusal;
use crate::util::openat::open_beneath;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

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
        // All of it must fit the cell's memory, where it is copied: a tool
        // cannot make the host hold more than that, however much it asks.
        let budget = AtomicU64::new(self.limiter.limit_bytes() as u64);
        let max_bytes = max_bytes.min(budget.load(Ordering::Relaxed));
        let guard = &self.files;
        // Judged and read side by side; a refusal is kept afterwards.
        let read = |path: &String| -> Outcome {
            let Some((root, inside)) = resolve(guard.root_dirs(), path) else {
                return (Err(ReadError::Denied), None);
            };
            // Not blocking: a named pipe put there since the tool listed
            // the folder would otherwise wait for a writer. A link as the
            // last component is not followed, as the tools' own reads.
            let flags = libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_NOFOLLOW;
            let (opened, host) = match open_beneath(root.dir.as_raw_fd(), &root.host, inside, flags)
            {
                Ok(opened) => opened,
                Err(e) => return (Err(read_error(&e)), None),
            };
            if let Some(refusal) = guard.secret_refusal(&host) {
                return (Err(ReadError::Denied), Some(refusal));
            }
            (read_whole(opened.into(), max_bytes, &budget), None)
        };
        let results = side_by_side(&paths, read);
        results
            .into_iter()
            .map(|(contents, refusal)| {
                if let Some(refusal) = refusal {
                    self.files.refuse(refusal);
                }
                contents
            })
            .collect()
    }
}

/// `read` of each of `paths`, in their order: made by the calling thread
/// and the readers side by side, each taking the next path as it is free.
fn side_by_side(paths: &[String], read: impl Fn(&String) -> Outcome + Sync) -> Vec<Outcome> {
    // A small batch starts no readers: a thread running beside the cell
    // makes every change of its mappings interrupt that core as well.
    let Some(pool) = (paths.len() >= PARALLEL_FROM).then(readers).flatten() else {
        return paths.iter().map(read).collect();
    };
    let next = AtomicUsize::new(0);
    // Which thread read which is found again by the order each took them.
    let taken = || {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(path) = paths.get(at) else {
                return done;
            };
            done.push((at, read(path)));
        }
    };
    let mut theirs: Vec<Vec<(usize, Outcome)>> = (0..pool.current_num_threads())
        .map(|_| Vec::new())
        .collect();
    let mut mine = Vec::new();
    pool.in_place_scope(|scope| {
        for part in theirs.iter_mut() {
            let taken = &taken;
            scope.spawn(move |_| *part = taken());
        }
        mine = taken();
    });
    // Each path was taken once (a panic would have ended the scope).
    let mut read: Vec<(usize, Outcome)> = mine
        .into_iter()
        .chain(theirs.into_iter().flatten())
        .collect();
    read.sort_unstable_by_key(|(at, _)| *at);
    read.into_iter().map(|(_, outcome)| outcome).collect()
}

/// The readers: a thread a core past the caller's, started on first use;
/// `None` on one core, or where no thread could be started.
fn readers() -> Option<&'static rayon::ThreadPool> {
    static READERS: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    READERS
        .get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            (cores > 1)
                .then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(cores - 1)
                        .thread_name(|i| format!("toolcell-read-{i}"))
                        .build()
                        .ok()
                })
                .flatten()
        })
        .as_ref()
}

/// The whole of the opened `file`, if it is a regular file of at most
/// `max_bytes` and the call's `budget` of bytes still holds it.
fn read_whole(
    mut file: std::fs::File,
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
    (&mut file)
        .take(wanted)
        .read_to_end(&mut contents)
        .map_err(|e| read_error(&e))?;
    Ok(contents)
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
