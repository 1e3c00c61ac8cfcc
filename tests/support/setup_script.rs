//! Runs one of the `tests/support/*.sh` set-up scripts (they install pinned
//! peers and toolchains into the test cache) and reads what it prints: one
//! `KEY=value` line per thing it provides. Shared by the MCP peers and the
//! guest toolchains.

use std::process::Command;

/// What a set-up script printed, `KEY=value` per line.
pub struct Provided {
    script: &'static str,
    stdout: String,
}

impl Provided {
    /// The value of `key`; a script that did not print it is a failure.
    pub fn value(&self, key: &str) -> std::path::PathBuf {
        let prefix = format!("{key}=");
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .map(Into::into)
            .unwrap_or_else(|| panic!("{} printed {:?}, without {key}", self.script, self.stdout))
    }
}

/// Runs `tests/support/SCRIPT`; `needs` says what it needs when it fails.
pub fn run(script: &'static str, needs: &str) -> Provided {
    let path = format!("{}/../tests/support/{script}", env!("CARGO_MANIFEST_DIR"));
    let setup = Command::new("bash")
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    assert!(
        setup.status.success(),
        "{script} failed (it needs {needs}):\n{}",
        String::from_utf8_lossy(&setup.stderr)
    );
    Provided {
        script,
        stdout: String::from_utf8(setup.stdout).expect("UTF-8 output"),
    }
}
