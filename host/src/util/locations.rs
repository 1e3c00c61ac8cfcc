//! Where toolcell keeps things outside the workspace: tools installed for
//! the user, the configs the user trusted, and the compiled-component cache. Both follow the XDG base
//! directories and can be moved with environment variables (which the tests
//! use to stay inside a temporary folder).

use std::path::PathBuf;

/// Overrides the user data folder (default `$XDG_DATA_HOME/toolcell`).
pub const DATA_DIR_ENV: &str = "TOOLCELL_DATA_DIR";
/// Overrides the cache folder (default `$XDG_CACHE_HOME/toolcell`).
pub const CACHE_DIR_ENV: &str = "TOOLCELL_CACHE_DIR";

fn from_env_or(var: &str, default: Option<PathBuf>) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => default.map(|d| d.join("toolcell")),
    }
}

/// The user's data folder: user tools, the configs the user trusted.
pub fn data_dir() -> Option<PathBuf> {
    from_env_or(DATA_DIR_ENV, dirs::data_dir())
}

/// Tools installed for the user, available in every workspace.
pub fn user_tools_dir() -> Option<PathBuf> {
    from_env_or(DATA_DIR_ENV, dirs::data_dir()).map(|d| d.join("tools"))
}

/// Compiled components.
pub fn component_cache_dir() -> Option<PathBuf> {
    cache_dir().map(|d| d.join("components"))
}

/// toolcell's cache folder: compiled components, what was learned of the
/// machine.
pub fn cache_dir() -> Option<PathBuf> {
    from_env_or(CACHE_DIR_ENV, dirs::cache_dir())
}

/// The config file's name, looked for in the current folder and its parents.
pub const CONFIG_FILE: &str = "toolcell.toml";

/// Per-workspace state (installed tools, later the run store) lives here.
pub const STATE_DIR: &str = ".toolcell";
