//! toolcell serving its tools to others: [`mcp`] is `toolcell mcp`, the
//! workspace's tools to any MCP client, over stdio or ([`http`]) MCP's
//! Streamable HTTP transport.

pub mod http;
pub mod mcp;
