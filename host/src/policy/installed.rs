//! The workspace's installed tools (`.toolcell/tools`), each file and
//! folder stamped: where a program runs without mounts of its own to keep
//! them read-only, the check after its call finds a tool it planted.

use std::path::{Path, PathBuf};

/// A file's change time and inode: moved by any write, which no program can
/// set back.
pub type FileStamp = Option<(i64, i64, u64)>;

fn file_stamp(path: &Path) -> FileStamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.ctime(), meta.ctime_nsec(), meta.ino()))
}

/// The most entries of the installed tools looked at before and after a
/// call outside the cells: far more than any workspace installs.
const MAX_INSTALLED: usize = 2_000;

/// Every file and folder under `tools` (two levels: a tool's folder and
/// what it holds), stamped.
pub fn entries(tools: &Path) -> Vec<(PathBuf, FileStamp)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(tools) else {
        return found;
    };
    for entry in entries.flatten().take(MAX_INSTALLED) {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir())
            && let Ok(inside) = std::fs::read_dir(&path)
        {
            for file in inside.flatten().take(MAX_INSTALLED) {
                let file = file.path();
                found.push((file.clone(), file_stamp(&file)));
            }
        }
        found.push((path.clone(), file_stamp(&path)));
    }
    found.sort();
    found
}
