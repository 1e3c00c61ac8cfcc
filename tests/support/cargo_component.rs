//! Builds a tool crate for wasm32-wasip2 with cargo, in release, as a
//! third-party author would: the fixtures and the Rust scaffold of
//! `toolcell tools new`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the component crate in `dir` (named `crate_name`) for
/// wasm32-wasip2 in release, as a third-party author would, and gives the
/// `.wasm`. `offline`: resolve crates from the local registry only (for a
/// crate without a lock file).
pub fn build(dir: &Path, crate_name: &str, offline: bool) -> PathBuf {
    // The build script's guest target folder: its compiled dependencies
    // (wit-bindgen, serde) are reused.
    let target_dir = PathBuf::from(env!("TOOLCELL_GUEST_TARGET_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .args(offline.then_some("--offline"))
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("running cargo for a component crate");
    assert!(status.success(), "building {} failed", dir.display());
    let wasm = target_dir
        .join("wasm32-wasip2/release")
        .join(format!("{crate_name}.wasm"));
    assert!(wasm.is_file(), "{} was not produced", wasm.display());
    wasm
}
