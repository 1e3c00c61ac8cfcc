//! What an agent's file changes replaced, kept so `toolcell undo RUN` can
//! put it back.
//!
//! Before a call of a file-changing built-in tool runs, the host reads what
//! is at the paths it names (through the roots' capabilities, like the tool
//! itself); after the call succeeds it records that, with a fingerprint of
//! what the call left. Undo checks that every path still holds what the run
//! left (refusing, and touching nothing, if any was changed since), then
//! restores them newest first. A file is restored whole and atomically; a
//! move is moved back. A deleted folder is not restorable this way (it is
//! in `.toolcell/trash`), nor is a file larger than [`MAX_KEPT_FILE`].

use super::declared::{Change, change};
use crate::config::WorkspaceConfig;
use crate::effect::roots::{Entry, read_entry, resolve};
pub use crate::policy::Touch;
use crate::store::{ChangeRecord, RunId, Store};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;

/// Larger files are not kept: undo of their change is refused.
pub const MAX_KEPT_FILE: u64 = 16 * 1024 * 1024;

/// A path's state in the record: `absent`, `folder`, `other`, or the sha256
/// of a file.
pub fn fingerprint(entry: &Entry) -> String {
    match entry {
        Entry::Missing => "absent".into(),
        Entry::Folder { .. } => "folder".into(),
        Entry::Other => "other".into(),
        Entry::File(bytes) => hex::encode(Sha256::digest(bytes)),
    }
}

/// The paths a call of the built-in `tool` with `args` changes, and how
/// (as [`declared`](super::declared) says), for the approval prompt's
/// policy check, the check at execution that nothing changed since the
/// prompt, and undo. `None` for tools that change no files this way (or
/// arguments without the paths).
pub fn touched(tool: &str, args: &Value) -> Option<Vec<(String, Touch)>> {
    let touched = change(tool, args)?.touched();
    (!touched.is_empty()).then_some(touched)
}

/// What is at each of `paths` now, as fingerprints.
pub fn state_of(config: &WorkspaceConfig, paths: &[(String, Touch)]) -> Vec<(String, String)> {
    paths
        .iter()
        .map(|(path, _)| {
            let entry = read_entry(config, path, MAX_KEPT_FILE).unwrap_or(Entry::Other);
            (path.clone(), fingerprint(&entry))
        })
        .collect()
}

/// How a kept change is put back, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A file (or what was at its path) restored whole.
    File,
    /// A move, moved back.
    Move,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::File => "file",
            ChangeKind::Move => "move",
        }
    }

    pub fn from_word(word: &str) -> Option<Self> {
        [ChangeKind::File, ChangeKind::Move]
            .into_iter()
            .find(|kind| kind.as_str() == word)
    }
}

/// What a pending call may change, read before it runs.
#[derive(Debug)]
pub struct Snapshot {
    kind: ChangeKind,
    /// `(workspace path, what was there)`; for a move: from, then to.
    before: Vec<(String, Entry)>,
}

impl Snapshot {
    /// Reads the paths `tool` would change; `None` for tools the host cannot undo.
    pub fn take(config: &WorkspaceConfig, tool: &str, args: &Value) -> Option<Self> {
        let change = change(tool, args)?;
        let kind = match change {
            Change::WriteFile { .. } | Change::EditFile { .. } | Change::Delete { .. } => {
                ChangeKind::File
            }
            Change::Move { .. } => ChangeKind::Move,
            Change::CreateFolder { .. } | Change::Run { .. } => return None,
        };
        let paths = change.touched();
        let before = paths
            .into_iter()
            .map(|(path, _)| {
                let entry = read_entry(config, &path, MAX_KEPT_FILE).unwrap_or(Entry::Other);
                (path, entry)
            })
            .collect();
        Some(Self { kind, before })
    }

    /// Records the change after the call succeeded.
    pub fn record(
        self,
        config: &WorkspaceConfig,
        store: &Store,
        run: RunId,
        call_row: i64,
    ) -> Result<()> {
        for (index, (path, before)) in self.before.iter().enumerate() {
            let after = read_entry(config, path, MAX_KEPT_FILE).unwrap_or(Entry::Other);
            if after == *before {
                continue;
            }
            let partner = match (self.kind, index) {
                (ChangeKind::Move, 0) => Some(self.before[1].0.as_str()),
                (ChangeKind::Move, _) => continue,
                (ChangeKind::File, _) => None,
            };
            let kept = match before {
                Entry::File(bytes) => Some(bytes.as_slice()),
                _ => None,
            };
            store.add_change(&ChangeRecord {
                run,
                call_row,
                kind: self.kind.as_str().into(),
                path: path.clone(),
                partner: partner.map(String::from),
                before_state: fingerprint(before),
                before: kept.map(<[u8]>::to_vec),
                after_state: fingerprint(&after),
                partner_after_state: partner.map(|p| {
                    fingerprint(&read_entry(config, p, MAX_KEPT_FILE).unwrap_or(Entry::Other))
                }),
            })?;
        }
        Ok(())
    }
}

/// Undoes the recorded changes of `run`; returns one line per change undone.
pub fn undo(config: &WorkspaceConfig, store: &Store, run: RunId) -> Result<Vec<String>> {
    let changes = store.changes(run)?;
    if changes.is_empty() {
        bail!("run {run} changed no files that toolcell can restore (or they were undone already)");
    }
    // Check everything first: undo all or nothing.
    let mut problems = Vec::new();
    for change in changes.iter().rev() {
        let now = |path: &str| {
            fingerprint(&read_entry(config, path, MAX_KEPT_FILE).unwrap_or(Entry::Other))
        };
        if now(&change.path) != change.after_state {
            problems.push(format!("`{}` was changed after the run", l(&change.path)));
        }
        match (ChangeKind::from_word(&change.kind), &change.partner) {
            (Some(ChangeKind::Move), Some(to)) => {
                if Some(now(to)) != change.partner_after_state {
                    problems.push(format!("`{}` was changed after the run", l(to)));
                }
            }
            _ => {
                if change.before.is_none() && change.before_state != "absent" {
                    problems.push(format!(
                        "`{}` was a {} before the run, which toolcell did not keep (a deleted folder is in .toolcell/trash)",
                        l(&change.path),
                        if change.before_state == "folder" { "folder" } else { "large or special file" }
                    ));
                }
            }
        }
    }
    if !problems.is_empty() {
        bail!(
            "cannot undo run {run}; nothing was changed:\n  - {}\n  fix: restore those paths by hand, or put back what the run left",
            problems.join("\n  - ")
        );
    }
    let mut done = Vec::new();
    for change in changes.iter().rev() {
        match (ChangeKind::from_word(&change.kind), &change.partner) {
            (Some(ChangeKind::Move), Some(to)) => {
                move_back(config, to, &change.path)?;
                done.push(format!("moved `{}` back to `{}`", l(to), l(&change.path)));
            }
            _ => match &change.before {
                Some(bytes) => {
                    write_atomically(config, &change.path, bytes)?;
                    done.push(format!("restored `{}`", l(&change.path)));
                }
                None => {
                    remove_file(config, &change.path)?;
                    done.push(format!(
                        "removed `{}`, which the run created",
                        l(&change.path)
                    ));
                }
            },
        }
        store.mark_undone(change.id)?;
    }
    Ok(done)
}

fn open(config: &WorkspaceConfig, path: &str) -> Result<(cap_std::fs::Dir, std::path::PathBuf)> {
    let resolved =
        resolve(config, path).with_context(|| format!("`{}` is outside the workspace", l(path)))?;
    let dir = resolved
        .open_root()
        .with_context(|| format!("cannot open the root holding `{}`", l(path)))?;
    Ok((dir, resolved.relative))
}

fn write_atomically(config: &WorkspaceConfig, path: &str, bytes: &[u8]) -> Result<()> {
    let (dir, relative) = open(config, path)?;
    let parent = relative.parent().unwrap_or(Path::new(""));
    let name = relative
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("file");
    let temp = parent.join(format!(".{name}.toolcell-undo-{}", std::process::id()));
    dir.write(&temp, bytes)
        .with_context(|| format!("cannot write next to `{}`", l(path)))?;
    dir.rename(&temp, &dir, &relative).with_context(|| {
        let _ = dir.remove_file(&temp);
        format!("cannot restore `{}`", l(path))
    })
}

fn remove_file(config: &WorkspaceConfig, path: &str) -> Result<()> {
    let (dir, relative) = open(config, path)?;
    dir.remove_file(&relative)
        .with_context(|| format!("cannot remove `{}`", l(path)))
}

fn move_back(config: &WorkspaceConfig, from: &str, to: &str) -> Result<()> {
    let (from_dir, from_rel) = open(config, from)?;
    let (to_dir, to_rel) = open(config, to)?;
    from_dir
        .rename(&from_rel, &to_dir, &to_rel)
        .with_context(|| format!("cannot move `{}` back to `{}`", l(from), l(to)))
}

/// A path from the run store (a model chose it), on one line in messages.
fn l(path: &str) -> std::borrow::Cow<'_, str> {
    crate::util::text::for_terminal_line(path)
}
