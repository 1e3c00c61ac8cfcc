//! toolcell serving its tools to others: [`mcp`] is `toolcell mcp`, the
//! workspace's tools over stdio to any MCP client.

pub mod mcp;
