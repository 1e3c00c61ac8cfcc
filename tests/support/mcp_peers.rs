//! The real MCP peers from npm (reference servers, the MCP Inspector), as
//! `tests/support/mcp-peers.sh` installs them into the test cache. Shared
//! by the end-to-end tests and the MCP benchmark.

use crate::setup_script;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The `node_modules` folder holding the peers (installed on first use).
pub fn node_modules() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| setup_script::run("mcp-peers.sh", "node and npm").value("MCP_NODE_MODULES"))
}
