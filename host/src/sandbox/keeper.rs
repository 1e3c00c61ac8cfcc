//! Cells made ready before their call and put away after it, on a thread
//! of their own.
//!
//! Around a call's own work the host builds its cell (the preopened
//! folders, a store, a fresh instance) and tears it down after (the pool
//! slot's memory reset): for a small read that is as much time as the work
//! itself (BENCHMARKS.md, "MCP latency"). A long-lived process that serves
//! many calls (`toolcell mcp`) does both between calls instead, on the
//! keeper's thread: after each call the keeper builds a *spare* cell for
//! the same tool and grant — instantiated, never called — then drops the
//! used store. The next call of that tool takes the spare, or builds its
//! own when there is none (yet).
//!
//! Every call still runs in an instance nothing ran in before, with what
//! its grant gives at the time of the call:
//!
//! - a spare is used once, by one call of the tool and grant it was built
//!   for (a different grant — a changed config — never matches);
//! - spares are built only for tools that run without asking
//!   ([`ApprovalMode::Auto`]) and run no programs: instantiating runs a
//!   component's start functions, and nothing of a tool that needs
//!   approval runs before its call is approved;
//! - a spare whose preopened folders are no longer the folders at their
//!   paths (a root deleted and created again, or renamed) is thrown away;
//! - the call's clocks (its deadline, the epoch budget) start when it
//!   takes the spare, not when the spare was built.
//!
//! What it holds: at most [`MAX_SPARES`] spares and [`BACKLOG`] used
//! stores waiting, each a slot of the instance pool (see `engine`). It
//! works only in a core's spare time (`util::idle`): no call waits for it.

use super::EpochClock;
use super::bindings::CommandToolPre;
use super::cell::{Cell, CellState};
use crate::registry::grant::ApprovalMode;
use crate::registry::grant::ToolGrant;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use wasmtime::{Engine, Store};

/// Spares kept at once: one per tool in use. A session calls a handful of
/// tools in turn (the built-in ones are about a dozen); each spare holds a
/// pool slot (64 in all) and its open folders.
const MAX_SPARES: usize = 16;
/// Used stores waiting for the keeper. When it falls behind, calls drop
/// their used store themselves rather than letting used slots pile up.
const BACKLOG: usize = 8;

/// Whether cells of a tool with `grant` may be built before its call.
fn builds_ahead(grant: &ToolGrant) -> bool {
    grant.approval == ApprovalMode::Auto && grant.process.is_empty()
}

/// The identity of a folder: which one it is, whatever its path. The birth
/// time tells a folder created again apart from the one it replaced when
/// the file system hands out the same inode number again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FolderId {
    dev: u64,
    ino: u64,
    born: Option<SystemTime>,
}

impl FolderId {
    fn of(path: &std::path::Path) -> Option<Self> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Self {
            dev: meta.dev(),
            ino: meta.ino(),
            born: meta.created().ok(),
        })
    }
}

/// A cell built ahead for one tool and grant.
struct Spare {
    tool: u64,
    grant: ToolGrant,
    /// The preopened folders, as found at their paths before and after
    /// they were opened.
    folders: Vec<FolderId>,
    cell: Cell,
}

/// What the keeper is asked to do after a call: drop its store, and build
/// a spare for the next call of the tool when it may.
struct AfterCall {
    used: Store<CellState>,
    next: Option<(u64, CommandToolPre<CellState>, ToolGrant)>,
}

/// The keeper: its thread, the jobs it is given and the spares it made.
pub(super) struct Keeper {
    jobs: SyncSender<AfterCall>,
    spares: Arc<Mutex<Vec<Spare>>>,
    /// Set when the sandbox is dropped: what is still queued is only
    /// dropped, not built for.
    closing: Arc<AtomicBool>,
}

impl Keeper {
    /// Starts the keeper's thread for cells on `engine`.
    pub fn start(engine: Engine) -> std::io::Result<Self> {
        let (jobs, inbox) = std::sync::mpsc::sync_channel(BACKLOG);
        let spares = Arc::new(Mutex::new(Vec::new()));
        let closing = Arc::new(AtomicBool::new(false));
        let (shelf, closed) = (spares.clone(), closing.clone());
        std::thread::Builder::new()
            .name("toolcell-keeper".into())
            .spawn(move || keep(&engine, &inbox, &shelf, &closed))?;
        Ok(Self {
            jobs,
            spares,
            closing,
        })
    }

    /// The spare built for `tool` under `grant`, if there is one whose
    /// folders are still the folders at their paths.
    pub fn take(&self, tool: u64, grant: &ToolGrant) -> Option<Cell> {
        if !builds_ahead(grant) {
            return None;
        }
        let spare = {
            let mut spares = lock(&self.spares);
            let at = spares
                .iter()
                .position(|s| s.tool == tool && s.grant == *grant)?;
            spares.swap_remove(at)
        };
        if current_folders(grant).is_some_and(|now| now == spare.folders) {
            Some(spare.cell)
        } else {
            // Built for folders that have since been replaced: the call
            // builds its own cell on the folders there now.
            self.after_call(spare.cell.store, None);
            None
        }
    }

    /// Hands the keeper the used store of a call of `tool` (`pre`) under
    /// `grant`, to drop, and asks for a spare for the tool's next call. If
    /// the keeper is behind, the store is dropped here.
    pub fn after_call_of(
        &self,
        used: Store<CellState>,
        tool: u64,
        pre: &CommandToolPre<CellState>,
        grant: &ToolGrant,
    ) {
        let next = builds_ahead(grant).then(|| (tool, pre.clone(), grant.clone()));
        self.after_call(used, next);
    }

    fn after_call(
        &self,
        used: Store<CellState>,
        next: Option<(u64, CommandToolPre<CellState>, ToolGrant)>,
    ) {
        // Full or gone: the job (and the store in it) is dropped here.
        let _ = self.jobs.try_send(AfterCall { used, next });
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.closing.store(true, Ordering::Relaxed);
    }
}

fn lock(spares: &Mutex<Vec<Spare>>) -> std::sync::MutexGuard<'_, Vec<Spare>> {
    spares.lock().unwrap_or_else(|p| p.into_inner())
}

/// The identities of the grant's preopened folders now, or `None` if one
/// cannot be read.
fn current_folders(grant: &ToolGrant) -> Option<Vec<FolderId>> {
    grant
        .preopens
        .iter()
        .map(|preopen| FolderId::of(&preopen.host))
        .collect()
}

/// The keeper's thread: for each finished call, build the spare for the
/// next one unless there is one already, then drop the used store (the
/// spare first: the next call may be on its way). Ends when the sandbox
/// is dropped.
fn keep(
    engine: &Engine,
    inbox: &Receiver<AfterCall>,
    spares: &Mutex<Vec<Spare>>,
    closing: &AtomicBool,
) {
    // Handing a store over woke this thread at the end of each call, and
    // the call paid for the wake (a used store's hand-off 17 -> 5 µs, in
    // `toolcell mcp`). Starved, the keeper falls behind and the calls
    // build their own cells and drop their own stores (see `take`,
    // `after_call`): slower, never wrong.
    crate::util::idle::run_only_when_idle("the cell keeper");
    // Instantiation is async (the tools' imports are); nothing it awaits
    // needs more than a runtime on this thread.
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        tracing::warn!("the cell keeper cannot start; calls build their own cells");
        return;
    };
    while let Ok(AfterCall { used, next }) = inbox.recv() {
        if let Some((tool, pre, grant)) = next
            && !closing.load(Ordering::Relaxed)
        {
            make_spare(engine, &runtime, spares, tool, &pre, grant);
        }
        drop(used);
    }
}

/// Builds a spare for `tool` under `grant` and shelves it, unless one is
/// there already or the folders changed while it was built.
fn make_spare(
    engine: &Engine,
    runtime: &tokio::runtime::Runtime,
    spares: &Mutex<Vec<Spare>>,
    tool: u64,
    pre: &CommandToolPre<CellState>,
    grant: ToolGrant,
) {
    let wanted = |s: &Spare| s.tool == tool && s.grant == grant;
    if lock(spares).iter().any(wanted) {
        return;
    }
    // The folders are looked at before and after they are opened: a
    // spare is kept only if the same folders were there throughout.
    let Some(before) = current_folders(&grant) else {
        return;
    };
    // A keeper serves a process of many calls, whose clock ticks
    // (`Sandbox::new` takes no other with it).
    let Ok(cell) = runtime.block_on(Cell::build(engine, pre, &grant, EpochClock::Ticking)) else {
        // The call that needs it will build its own and report why.
        return;
    };
    if current_folders(&grant).as_ref() != Some(&before) {
        return;
    }
    let spare = Spare {
        tool,
        grant,
        folders: before,
        cell,
    };
    // The spare least recently built goes when the shelf is full.
    let evicted = {
        let mut spares = lock(spares);
        spares.push(spare);
        (spares.len() > MAX_SPARES).then(|| spares.remove(0))
    };
    drop(evicted);
}
