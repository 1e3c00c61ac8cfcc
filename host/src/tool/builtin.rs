//! The built-in tools, embedded in the binary at build time.

/// One built-in tool: its manifest text and its component.
pub struct BuiltinTool {
    /// The crate's folder under `tools-wasm/`, for error messages.
    pub crate_dir: &'static str,
    pub manifest: &'static str,
    pub wasm: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/builtin_tools.rs"));
