//! A JSON record of the user's decisions in the data folder — the configs
//! trusted ([`super::trust`]), the MCP tools pinned
//! (`crate::mcp::pins`): outside every workspace, so no tool or contained
//! program can write it; read with a size cap, written whole (a temporary
//! file renamed over it), and changed under a lock, so two toolcell
//! processes never lose each other's changes.

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// One record file.
#[derive(Debug, Clone)]
pub struct JsonRecord {
    file: PathBuf,
    /// A larger file is not read: it is not one toolcell wrote.
    max_bytes: u64,
    /// What an unreadable record means, for the warning ("no config is
    /// trusted").
    if_unreadable: &'static str,
}

impl JsonRecord {
    pub fn new(file: PathBuf, max_bytes: u64, if_unreadable: &'static str) -> Self {
        Self {
            file,
            max_bytes,
            if_unreadable,
        }
    }

    /// The record, or an empty one when there is none (or it is not one
    /// toolcell wrote, which is warned about).
    pub fn read<T: DeserializeOwned + Default>(&self) -> T {
        let Ok(meta) = std::fs::metadata(&self.file) else {
            return T::default();
        };
        if !meta.is_file() || meta.len() > self.max_bytes {
            tracing::warn!(
                "{} is not a record toolcell wrote; {} until it is removed",
                self.file.display(),
                self.if_unreadable
            );
            return T::default();
        }
        std::fs::read(&self.file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Reads the record, lets `change` change it, and writes it back if
    /// `change` says it changed: all under the record's lock (a file
    /// beside it). Gives what `change` gave.
    pub fn update<T, R>(&self, change: impl FnOnce(&mut T) -> (bool, R)) -> Result<R>
    where
        T: DeserializeOwned + Default + Serialize,
    {
        let _lock = self.lock();
        let mut record = self.read();
        let (changed, given) = change(&mut record);
        if changed {
            self.write(&record)?;
        }
        Ok(given)
    }

    fn lock(&self) -> Option<std::fs::File> {
        let _ = self.file.parent().map(std::fs::create_dir_all);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.file.with_extension("lock"))
            .ok()?;
        // SAFETY: flock(2) on a descriptor we own; released when it closes.
        unsafe {
            libc::flock(file.as_raw_fd(), libc::LOCK_EX);
        }
        Some(file)
    }

    fn write<T: Serialize>(&self, record: &T) -> Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the data folder {}", dir.display()))?;
        let text = serde_json::to_string_pretty(record)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot write in {}", dir.display()))?;
        std::io::Write::write_all(&mut temp, text.as_bytes())?;
        temp.persist(&self.file)
            .with_context(|| format!("cannot write {}", self.file.display()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_record_is_changed_whole_and_one_not_written_by_toolcell_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let record = JsonRecord::new(dir.path().join("r.json"), 64, "nothing is kept");
        let put = record
            .update(|r: &mut BTreeMap<String, String>| {
                (true, r.insert("a".into(), "1".into()).is_none())
            })
            .unwrap();
        assert!(put);
        let read: BTreeMap<String, String> = record.read();
        assert_eq!(read["a"], "1");
        std::fs::write(dir.path().join("r.json"), "x".repeat(65)).unwrap();
        assert!(record.read::<BTreeMap<String, String>>().is_empty());
    }
}
