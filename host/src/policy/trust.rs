//! Trust before programs: what a workspace config may do only once the user
//! trusted it, as it is, with `toolcell trust` — start programs, hand on
//! secrets, act unasked, reach outside its folder (the list is
//! `WorkspaceConfig::restrict_to_untrusted`). The record —
//! the config's path and the SHA-256 of its bytes — lives in the user's
//! data folder, outside every workspace, so no tool can write it; a config
//! changed since (by a tool, a `git pull`, anyone) is untrusted again and
//! starts nothing until trusted anew.

use super::record::JsonRecord;
use anyhow::Result;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

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
    record: JsonRecord,
}

type Records = BTreeMap<String, String>;

impl TrustStore {
    /// The record in the user's data folder (`TOOLCELL_DATA_DIR` or the
    /// XDG data folder); `None` when there is no such folder.
    pub fn for_user() -> Option<Self> {
        crate::util::locations::data_dir().map(|dir| Self::in_data_dir(&dir))
    }

    /// The record in the data folder `dir`.
    pub fn in_data_dir(dir: &Path) -> Self {
        Self {
            record: JsonRecord::new(dir.join(TRUST_FILE), MAX_TRUST_FILE, "no config is trusted"),
        }
    }

    /// Whether the config at `config` (canonical) was trusted with exactly
    /// this `fingerprint`.
    pub fn is_trusted(&self, config: &Path, fingerprint: &str) -> bool {
        self.record
            .read::<Records>()
            .get(&config.display().to_string())
            .is_some_and(|f| f == fingerprint)
    }

    /// Every config the user trusted (canonical paths).
    pub fn configs(&self) -> Vec<std::path::PathBuf> {
        self.record
            .read::<Records>()
            .into_keys()
            .map(std::path::PathBuf::from)
            .collect()
    }

    /// Whether a config at `config` (canonical) was ever trusted, as it is
    /// now or not: a config of any name the user uses (`--config ci.toml`).
    pub fn knows(&self, config: &Path) -> bool {
        self.record
            .read::<Records>()
            .contains_key(&config.display().to_string())
    }

    /// Records that the config at `config` (canonical) is trusted as it is
    /// (`fingerprint`), replacing what was recorded for it.
    pub fn trust(&self, config: &Path, fingerprint: &str) -> Result<()> {
        self.record.update(|records: &mut Records| {
            records.insert(config.display().to_string(), fingerprint.to_string());
            (true, ())
        })
    }

    /// Forgets the config at `config`; whether it was trusted.
    pub fn revoke(&self, config: &Path) -> Result<bool> {
        self.record.update(|records: &mut Records| {
            let was = records.remove(&config.display().to_string()).is_some();
            (was, was)
        })
    }
}
