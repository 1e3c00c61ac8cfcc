//! External MCP servers, whose tools the workspace uses: [`client`] starts
//! the servers configured as `[[mcp_server]]`
//! ([`crate::config::mcp_server`]) and calls them; [`external`] lends their
//! tools to the registry as `server__tool`, once their definitions match
//! what was pinned ([`pins`]). Each server is one `connection` (its
//! process and session, or its URL), its standard streams read by `stdio`,
//! its HTTP requests made by `http`; what a call gives is a [`result`]. Serving toolcell's own tools over MCP is
//! [`crate::serve::mcp`].

pub mod client;
mod connection;
pub mod external;
mod http;
pub mod pins;
pub mod result;
mod stdio;
