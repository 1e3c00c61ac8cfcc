//! The grant a benchmark's calls run under: approved without asking, one
//! folder (or none) preopened read-only as the workspace root `.`, nothing
//! else granted; shared by the benches that call the sandbox directly.

use std::path::Path;
use toolcell::registry::grant::{ApprovalMode, ApprovalSource, Preopen, ToolGrant};
use toolcell::tool::limits::Limits;

/// `tool`'s grant with `root` (if any) as `.`, read-only, under `limits`.
pub fn read_only(tool: &str, root: Option<&Path>, limits: Limits) -> ToolGrant {
    ToolGrant {
        tool: tool.into(),
        enabled: true,
        approval: ApprovalMode::Auto,
        approval_source: ApprovalSource::Manifest,
        preopens: root
            .map(|root| Preopen {
                host: root.to_path_buf(),
                guest: ".".into(),
                writable: false,
            })
            .into_iter()
            .collect(),
        env: Vec::new(),
        network: Vec::new(),
        process: Vec::new(),
        sandbox: Default::default(),
        read: Vec::new(),
        write: Vec::new(),
        limits,
        files: Default::default(),
        policy_changes: Vec::new(),
    }
}
