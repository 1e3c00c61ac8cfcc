//! The real MCP peers from npm (reference servers, the MCP Inspector), as
//! `tests/support/mcp-peers.sh` installs them into the test cache. Shared
//! by the end-to-end tests and the MCP benchmark.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The `node_modules` folder holding the peers (installed on first use).
pub fn node_modules() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/support/mcp-peers.sh");
        let setup = Command::new("bash")
            .arg(script)
            .output()
            .expect("run mcp-peers.sh");
        assert!(
            setup.status.success(),
            "mcp-peers.sh failed (it needs node and npm):\n{}",
            String::from_utf8_lossy(&setup.stderr)
        );
        let out = String::from_utf8(setup.stdout).unwrap();
        let dir = out
            .lines()
            .find_map(|l| l.strip_prefix("MCP_NODE_MODULES="))
            .unwrap_or_else(|| panic!("mcp-peers.sh printed {out:?}"));
        PathBuf::from(dir)
    })
}
