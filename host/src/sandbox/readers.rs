//! The process's readers: threads that make a cell's file-system calls
//! ahead of it (files read ahead, folders listed ahead) while the calling
//! thread runs the cell. Shared by every cell of the process.

use std::sync::OnceLock;

/// The readers: a thread a core past the caller's, started on first use;
/// `None` on one core, or where no thread could be started.
pub(super) fn readers() -> Option<&'static rayon::ThreadPool> {
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
