//! The real MCP peers from npm (reference servers, the MCP Inspector) and
//! PyPI (the MCP Python SDK), as `tests/support/mcp-peers.sh` installs them
//! into the test cache. Shared
//! by the end-to-end tests and the MCP benchmark.

use crate::setup_script;
use std::path::PathBuf;
use std::sync::OnceLock;

/// What the script provides, run once.
fn provided() -> &'static setup_script::Provided {
    static PROVIDED: OnceLock<setup_script::Provided> = OnceLock::new();
    PROVIDED.get_or_init(|| setup_script::run("mcp-peers.sh", "node, npm and python3-venv"))
}

/// The `node_modules` folder holding the peers (installed on first use).
pub fn node_modules() -> PathBuf {
    provided().value("MCP_NODE_MODULES")
}

/// A Python with the official MCP SDK installed.
#[allow(dead_code)] // the end-to-end tests' (the benchmark uses the npm peers)
pub fn python() -> PathBuf {
    provided().value("MCP_PYTHON")
}
