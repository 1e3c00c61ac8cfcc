//! Builds the fixture components of `tests/fixtures/` (out-of-tree tools, as
//! a third-party author would build them) once per process. Shared by the
//! end-to-end tests and the benchmarks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `probe` test tool: its folder (with `tool.toml`) and built component.
pub struct Fixture {
    #[allow(dead_code, reason = "the benchmark needs only the component")]
    pub folder: PathBuf,
    pub wasm: PathBuf,
}

/// Builds `tests/fixtures/probe-tool` for wasm32-wasip2, once.
pub fn probe() -> &'static Fixture {
    static PROBE: OnceLock<Fixture> = OnceLock::new();
    PROBE.get_or_init(|| build("probe-tool", "probe"))
}

/// Builds `tests/fixtures/noop-tool` (returns `{}`, nothing else), once.
#[allow(dead_code, reason = "only the benchmark uses it")]
pub fn noop() -> &'static Fixture {
    static NOOP: OnceLock<Fixture> = OnceLock::new();
    NOOP.get_or_init(|| build("noop-tool", "noop"))
}

fn build(folder: &str, crate_name: &str) -> Fixture {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(folder);
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
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("running cargo for a fixture component");
    assert!(status.success(), "building the fixture {folder} failed");
    let wasm = target_dir
        .join("wasm32-wasip2/release")
        .join(format!("{crate_name}.wasm"));
    assert!(wasm.is_file(), "{} was not produced", wasm.display());
    Fixture { folder: root, wasm }
}
