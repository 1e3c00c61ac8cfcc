//! The limits a workflow runs under: the `[workflow]` table of
//! `toolcell.toml`, overridden by `toolcell run` flags.
//!
//! ```toml
//! [workflow]
//! timeout_s = 1800           # wall clock for the whole script
//! max_operations = 100000000 # rhai operations (about one expression each)
//! max_string_bytes = 16777216
//! env = ["HOME"]             # variables a script may read with env()
//! ```

use crate::util::problem::{Problem, Table};
use serde::Deserialize;
use std::time::Duration;

/// A long automation (many tools, an agent) finishes well within this; a
/// stuck one does not run all day.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// About a few seconds of pure script work on this kind of machine: loops
/// over thousands of files fit, an infinite loop stops quickly.
pub const DEFAULT_MAX_OPERATIONS: u64 = 100_000_000;
/// Function nesting: deep enough for any helper structure, shallow enough
/// to stop runaway recursion long before the stack.
pub const DEFAULT_MAX_CALL_LEVELS: usize = 64;
/// A tool result (a file's content) fits; a string doubled in a loop stops.
pub const DEFAULT_MAX_STRING_BYTES: usize = 16 * 1024 * 1024;
/// Entries of one array or map.
pub const DEFAULT_MAX_COLLECTION: usize = 1_000_000;

/// Resolved limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptLimits {
    pub timeout: Duration,
    pub max_operations: u64,
    pub max_call_levels: usize,
    pub max_string_bytes: usize,
    pub max_collection: usize,
}

impl Default for ScriptLimits {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_operations: DEFAULT_MAX_OPERATIONS,
            max_call_levels: DEFAULT_MAX_CALL_LEVELS,
            max_string_bytes: DEFAULT_MAX_STRING_BYTES,
            max_collection: DEFAULT_MAX_COLLECTION,
        }
    }
}

/// `[workflow]` resolved: limits and the environment a script may read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkflowConfig {
    pub limits: ScriptLimits,
    pub env: Vec<String>,
}

/// `[workflow]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWorkflowConfig {
    timeout_s: Option<u64>,
    max_operations: Option<u64>,
    max_string_bytes: Option<usize>,
    #[serde(default)]
    env: Vec<String>,
}

impl WorkflowConfig {
    pub fn from_raw(raw: RawWorkflowConfig, at: &Table) -> Result<Self, Problem> {
        let mut limits = ScriptLimits::default();
        if let Some(s) = raw.timeout_s {
            if s == 0 {
                return Err(at.problem(
                    Some("timeout_s"),
                    "workflow.timeout_s must be above 0",
                    "give the seconds a workflow may run, above 0",
                ));
            }
            limits.timeout = Duration::from_secs(s);
        }
        if let Some(n) = raw.max_operations {
            limits.max_operations = n;
        }
        if let Some(n) = raw.max_string_bytes {
            limits.max_string_bytes = n;
        }
        if let Some(bad) = raw.env.iter().find(|n| !crate::util::names::is_env_name(n)) {
            return Err(at.problem(
                Some("env"),
                format!("workflow.env: `{bad}` is not an environment variable name"),
                "list names such as \"HOME\"",
            ));
        }
        Ok(Self {
            limits,
            env: raw.env,
        })
    }
}
