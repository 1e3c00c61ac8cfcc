//! The Model Context Protocol, both ways:
//!
//! - [`server`]: `toolcell mcp` serves the workspace's tools (built-in and
//!   installed components, each call in a fresh cell with its limits and
//!   the workspace's policy) over stdio to any MCP client;
//! - [`client`]: external servers configured as `[[mcp_server]]`
//!   ([`config`]) lend their tools to the registry as `server__tool`
//!   ([`external`]), once their definitions match what was pinned
//!   ([`pins`]).

pub mod client;
pub mod config;
pub mod external;
pub mod pins;
pub mod server;
