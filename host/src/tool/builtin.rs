//! The built-in tools, embedded in the binary at build time.

/// One built-in tool: its manifest text and its component.
pub struct BuiltinTool {
    /// The crate's folder under `tools-wasm/`, for error messages.
    pub crate_dir: &'static str,
    /// Its `tool.toml`, as written: what the tests make every check on
    /// (only they read it, so only their build holds it).
    #[cfg(test)]
    pub manifest: &'static str,
    /// The same manifest as JSON, converted when the binary was built: what
    /// a process reads ([`crate::tool::manifest::ToolManifest::parse_builtin`]).
    pub manifest_fields: &'static str,
    pub wasm: &'static [u8],
    /// The SHA-256 of `wasm` in hexadecimal, made when it was built.
    pub wasm_sha256: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/builtin_tools.rs"));

#[cfg(test)]
mod tests {
    use super::BUILTIN_TOOLS;
    use sha2::{Digest, Sha256};

    #[test]
    fn each_digest_is_its_components() {
        for tool in BUILTIN_TOOLS {
            assert_eq!(
                tool.wasm_sha256,
                hex::encode(Sha256::digest(tool.wasm)),
                "{}",
                tool.crate_dir
            );
        }
    }
}
