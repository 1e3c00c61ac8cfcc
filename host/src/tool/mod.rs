//! What a tool is, before any workspace grants it anything: its manifest
//! (`tool.toml`) and its parameters' schema, the limits a call may have,
//! and the built-in tools.

pub mod builtin;
pub mod limits;
pub mod manifest;
pub mod parameters;
