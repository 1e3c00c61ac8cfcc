//! Records of finished calls, written off the answer's path.
//!
//! `toolcell mcp` answers a read-only call first and records it after. A
//! commit per call on a thread of its own still cost the next call: the
//! hand-off woke a thread every time, and the commits (with the WAL's
//! checkpoints) competed with the calls for the two cores (BENCHMARKS.md,
//! "MCP latency"). Here the records queue up and one thread writes them in
//! batches: it is woken once per batch, waits [`GATHER`] for the calls that
//! follow, and writes them all in one transaction.
//!
//! What is queued is written before the recorder is dropped (the end of the
//! session). A process killed outright loses at most the last batch of
//! records; the calls in it changed nothing.

use super::{CallRun, Store};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the writer lets records gather after the first one arrives: at
/// a few hundred microseconds a call, dozens of calls share one commit,
/// and a record waits no longer than a blink.
const GATHER: Duration = Duration::from_millis(20);
/// Records queued at most: a writer starved that long (a saturated
/// machine) makes the callers write, rather than hold results without end.
const MAX_QUEUED: usize = 4096;

/// Writes queued call runs to a [`Store`] in batches, on its own thread.
pub struct DeferredRecorder {
    shared: Arc<Shared>,
    store: Arc<Store>,
    writer: Option<JoinHandle<()>>,
}

struct Shared {
    queue: Mutex<Queue>,
    arrived: Condvar,
}

#[derive(Default)]
struct Queue {
    runs: Vec<CallRun>,
    closed: bool,
}

impl DeferredRecorder {
    /// Starts the writer thread.
    pub fn start(store: Arc<Store>) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            arrived: Condvar::new(),
        });
        let writer = {
            let (shared, store) = (shared.clone(), store.clone());
            std::thread::Builder::new()
                .name("toolcell-recorder".into())
                .spawn(move || write_batches(&shared, &store))?
        };
        Ok(Self {
            shared,
            store,
            writer: Some(writer),
        })
    }

    /// Queues `run` to be written with the next batch. If the writer has
    /// fallen that far behind, the caller writes the queue itself.
    pub fn record(&self, run: CallRun) {
        let mut queue = self.shared.lock();
        queue.runs.push(run);
        if queue.runs.len() >= MAX_QUEUED {
            let batch = std::mem::take(&mut queue.runs);
            drop(queue);
            write(&self.store, &batch);
            return;
        }
        // Only the first record of a batch wakes the writer: it collects
        // the others itself after [`GATHER`].
        if queue.runs.len() == 1 {
            self.shared.arrived.notify_one();
        }
    }

    /// Writes what is queued now, on the calling thread: for a process
    /// about to end without dropping the recorder.
    pub fn flush(&self) {
        let batch = std::mem::take(&mut self.shared.lock().runs);
        write(&self.store, &batch);
    }
}

/// Writes `batch` in one transaction; if that fails, each record on its
/// own, so one bad record does not lose the others.
fn write(store: &Store, batch: &[CallRun]) {
    if batch.is_empty() || store.record_call_runs(batch).is_ok() {
        return;
    }
    for run in batch {
        if let Err(e) = store.record_call_runs(std::slice::from_ref(run)) {
            tracing::warn!("cannot record the MCP call of `{}`: {e:#}", run.tool);
        }
    }
}

impl Drop for DeferredRecorder {
    /// Writes what is queued, then stops the writer.
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.arrived.notify_one();
        if let Some(writer) = self.writer.take()
            && writer.join().is_err()
        {
            tracing::warn!("the recorder of MCP calls stopped with a panic");
        }
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The writer: waits for a record, lets others gather, writes them all.
fn write_batches(shared: &Shared, store: &Store) {
    // The writer holds the store's lock while it commits: on a machine
    // kept busy by other work, a call that records as it goes (one that
    // may change something) can wait for a commit that gets little CPU.
    crate::util::idle::run_only_when_idle("the recorder");
    loop {
        let closed = {
            let mut queue = shared.lock();
            while queue.runs.is_empty() && !queue.closed {
                queue = shared
                    .arrived
                    .wait(queue)
                    .unwrap_or_else(|p| p.into_inner());
            }
            queue.closed
        };
        if !closed {
            std::thread::sleep(GATHER);
        }
        let (batch, closed) = {
            let mut queue = shared.lock();
            (std::mem::take(&mut queue.runs), queue.closed)
        };
        write(store, &batch);
        if closed {
            return;
        }
    }
}
