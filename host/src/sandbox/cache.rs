//! The on-disk cache of compiled components.
//!
//! Compiling a component takes from milliseconds (a small Rust tool) to
//! seconds (a Python one); loading a precompiled one takes about a
//! millisecond. Entries are keyed by the SHA-256 of the wasm *and* the
//! engine's compatibility hash (wasmtime version, target, settings), so a
//! changed tool or a new toolcell build never loads a stale artifact.
//!
//! Entries are written to a temporary file and renamed into place, so a
//! crash never leaves a half-written entry under a valid name. The cache
//! lives in the user's cache folder; whoever can write there can already run
//! code as the user, which is why loading an entry without re-validation is
//! sound.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStatus {
    /// Loaded precompiled from the cache.
    Hit,
    /// Compiled now and stored for next time.
    Compiled,
    /// Compiled now; there is no cache folder to store it in.
    Uncached,
}

/// The compiled-component cache of one engine.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

impl ComponentCache {
    /// A cache in `dir` (created on first store), or none.
    pub fn new(engine: &Engine, dir: Option<PathBuf>) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Self {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        }
    }

    /// The cache entry for `wasm`, if there is a cache.
    pub fn entry_path(&self, wasm: &[u8]) -> Option<PathBuf> {
        self.entry_for_digest(&hex::encode(Sha256::digest(wasm)))
    }

    /// The cache entry for the wasm whose SHA-256 is `digest` (hexadecimal).
    fn entry_for_digest(&self, digest: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|dir| dir.join(format!("{digest}-{}.cwasm", self.engine_key)))
    }

    /// Loads `wasm` precompiled from the cache, or compiles it and stores
    /// it. `sha256` is its digest where the caller knows it (a built-in
    /// tool's, made when it was built); else it is computed here.
    pub fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        sha256: Option<&str>,
    ) -> Result<(Component, CacheStatus)> {
        let entry = match sha256 {
            Some(digest) => self.entry_for_digest(digest),
            None => self.entry_path(wasm),
        };
        let Some(entry) = entry else {
            return Ok((Component::new(engine, wasm)?, CacheStatus::Uncached));
        };
        if entry.is_file() {
            // SAFETY: entries are written only by `store` below, atomically,
            // from `Component::serialize` of this engine configuration (the
            // key includes its compatibility hash).
            match unsafe { Component::deserialize_file(engine, &entry) } {
                Ok(component) => return Ok((component, CacheStatus::Hit)),
                Err(e) => {
                    tracing::warn!(entry = %entry.display(), "ignoring unusable cache entry: {e:#}")
                }
            }
        }
        let component = Component::new(engine, wasm)?;
        match component
            .serialize()
            .map_err(anyhow::Error::from)
            .and_then(|bytes| store(&entry, &bytes))
        {
            Ok(()) => Ok((component, CacheStatus::Compiled)),
            Err(e) => {
                tracing::warn!(entry = %entry.display(), "could not store the compiled component: {e:#}");
                Ok((component, CacheStatus::Uncached))
            }
        }
    }
}

fn store(entry: &Path, bytes: &[u8]) -> Result<()> {
    let dir = entry.parent().context("cache entry has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut temp, bytes)?;
    temp.persist(entry)?;
    Ok(())
}
