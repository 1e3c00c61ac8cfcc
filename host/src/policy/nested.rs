//! Another workspace's policy inside a folder: a `toolcell.toml` or a
//! `.toolcell/` at any depth. Moving the folder puts that config where
//! toolcell will find it from elsewhere; removing it takes a workspace's
//! rules away — so either is a change of policy (asked of a person).

use super::protected::PolicyFile;
use crate::util::locations::{CONFIG_FILE, STATE_DIR};
use std::path::Path;

/// The most entries of a folder looked through for another workspace's
/// policy before a move or removal of it: a large project's tree in well
/// under a second; a larger folder is taken to hold one (asked of a
/// person, as the policy is).
pub const MAX_HOLDS_SCAN: usize = 200_000;

/// Another workspace's policy inside the folder `path` (a `toolcell.toml`
/// or a `.toolcell/` at any depth, links not followed): a move of the
/// folder puts that config where toolcell will find it from elsewhere, a
/// removal takes a workspace's rules away.
pub(super) fn nested_policy(path: &Path) -> Option<PolicyFile> {
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let mut seen = 0usize;
    let mut pending = vec![path.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_HOLDS_SCAN {
                return Some(PolicyFile::Holds { found: None });
            }
            let name = entry.file_name();
            if name == CONFIG_FILE || name == STATE_DIR {
                let found = entry.path();
                return Some(PolicyFile::Holds {
                    found: Some(found.strip_prefix(path).unwrap_or(&found).to_path_buf()),
                });
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
            }
        }
    }
    None
}
