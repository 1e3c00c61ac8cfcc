//! Builds the fixture components of `tests/fixtures/` (out-of-tree tools, as
//! a third-party author would build them) once per process. Shared by the
//! end-to-end tests and the benchmarks.

use crate::cargo_component;
use std::path::{Path, PathBuf};
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
    let wasm = cargo_component::build(&root, crate_name, false);
    Fixture { folder: root, wasm }
}
