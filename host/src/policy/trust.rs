//! Trust before programs: what a workspace config may do only once the user
//! trusted it, as it is, with `toolcell trust` — start programs, hand on
//! secrets, act unasked, reach outside its folder (the list is
//! `WorkspaceConfig::restrict_to_untrusted`). The record —
//! the config's path and the SHA-256 of its bytes — lives in the user's
//! data folder, outside every workspace, so no tool can write it; a config
//! changed since (by a tool, a `git pull`, anyone) is untrusted again and
//! starts nothing until trusted anew.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The record's file name in the user's data folder.
const TRUST_FILE: &str = "trusted-configs.json";
/// A record larger than this is not read: it is not one toolcell wrote.
const MAX_TRUST_FILE: u64 = 4 * 1024 * 1024;

/// The SHA-256 of a config's bytes, as recorded.
pub fn fingerprint(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The configs the user trusted: path → fingerprint.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

impl TrustStore {
    /// The record in the user's data folder (`TOOLCELL_DATA_DIR` or the
    /// XDG data folder); `None` when there is no such folder.
    pub fn for_user() -> Option<Self> {
        crate::locations::data_dir().map(|dir| Self::in_data_dir(&dir))
    }

    /// The record in the data folder `dir`.
    pub fn in_data_dir(dir: &Path) -> Self {
        Self {
            file: dir.join(TRUST_FILE),
        }
    }

    fn read(&self) -> BTreeMap<String, String> {
        let Ok(meta) = std::fs::metadata(&self.file) else {
            return BTreeMap::new();
        };
        if !meta.is_file() || meta.len() > MAX_TRUST_FILE {
            tracing::warn!(
                "{} is not a trust record toolcell wrote; no config is trusted until it is removed",
                self.file.display()
            );
            return BTreeMap::new();
        }
        std::fs::read(&self.file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Whether the config at `config` (canonical) was trusted with exactly
    /// this `fingerprint`.
    pub fn is_trusted(&self, config: &Path, fingerprint: &str) -> bool {
        self.read()
            .get(&config.display().to_string())
            .is_some_and(|f| f == fingerprint)
    }

    /// Records that the config at `config` (canonical) is trusted as it is
    /// (`fingerprint`), replacing what was recorded for it.
    pub fn trust(&self, config: &Path, fingerprint: &str) -> Result<()> {
        let mut records = self.read();
        records.insert(config.display().to_string(), fingerprint.to_string());
        self.write(&records)
    }

    /// Forgets the config at `config`; whether it was trusted.
    pub fn revoke(&self, config: &Path) -> Result<bool> {
        let mut records = self.read();
        let was = records.remove(&config.display().to_string()).is_some();
        if was {
            self.write(&records)?;
        }
        Ok(was)
    }

    fn write(&self, records: &BTreeMap<String, String>) -> Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the data folder {}", dir.display()))?;
        let text = serde_json::to_string_pretty(records)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("cannot write in {}", dir.display()))?;
        std::io::Write::write_all(&mut temp, text.as_bytes())?;
        temp.persist(&self.file)
            .with_context(|| format!("cannot write {}", self.file.display()))?;
        Ok(())
    }
}
