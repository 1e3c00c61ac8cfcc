//! The Model Context Protocol. `toolcell mcp` serves the workspace's tools
//! (built-in and installed components, each call in a fresh cell with its
//! limits and the workspace's policy) over stdio to any MCP client.

pub mod server;
