//! External MCP servers (`[[mcp_server]]`) as a source of tools, over stdio
//! with the official Rust SDK (`rmcp`).
//!
//! Each server is a child process in its own process group, started with a
//! scrubbed environment ([`child::PASSED_ENV`] plus the config's `env`). At the
//! start of a run every enabled server is started, initialized and asked
//! for its tools, all in parallel and within its `startup_timeout`; a
//! server that fails is reported and its tools are missing from that run,
//! the rest go on.
//!
//! The connections live on a runtime of their own ([`McpServers`]), so a
//! call can come from any runtime or thread (the agent's, a workflow's, the
//! daemon's). A call that outlives the server's `timeout`, or finds the
//! server gone, is an error for the model, never a hang: the server is
//! stopped (its whole process group) and started again on the next call.
//! Lines on the server's stdout that are not JSON-RPC messages are dropped
//! and remembered, as is the tail of its stderr, so an error can say what
//! the server printed.

use super::connection::Connection;
use super::result::McpCallError;
use crate::config::Root;
use crate::config::mcp_server::McpServerConfig;
use crate::policy::PolicyFiles;
use anyhow::{Context, Result};
use rmcp::model::Tool;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The servers of one workspace, each started at most once at a time.
pub struct McpServers {
    runtime: Option<tokio::runtime::Runtime>,
    servers: BTreeMap<String, Arc<Connection>>,
}

/// What starting one server gave.
pub struct Started {
    pub server: McpServerConfig,
    pub tools: Result<Vec<Tool>, String>,
}

impl McpServers {
    /// Starts every enabled server in `configs` and lists its tools,
    /// blocking until each has answered or failed (at most the longest
    /// `startup_timeout`).
    pub fn start(
        configs: &[McpServerConfig],
        roots: &[Root],
        policy: &PolicyFiles,
    ) -> Result<(Self, Vec<Started>)> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolcell-mcp")
            .enable_all()
            .build()
            .context("cannot start the MCP client runtime")?;
        let servers: BTreeMap<String, Arc<Connection>> = configs
            .iter()
            .filter(|c| c.enabled)
            .map(|c| {
                let connection = Connection::new(
                    c.clone(),
                    c.confinement(roots, policy),
                    roots.iter().map(|r| r.path.clone()).collect(),
                );
                (c.name.clone(), Arc::new(connection))
            })
            .collect();
        let (tx, rx) = std::sync::mpsc::channel();
        for connection in servers.values() {
            let (connection, tx) = (connection.clone(), tx.clone());
            runtime.spawn(async move {
                let tools = connection.list_tools().await;
                let _ = tx.send(Started {
                    server: connection.config.clone(),
                    tools,
                });
            });
        }
        drop(tx);
        let mut started: Vec<Started> = rx.iter().collect();
        started.sort_by(|a, b| a.server.name.cmp(&b.server.name));
        Ok((
            Self {
                runtime: Some(runtime),
                servers,
            },
            started,
        ))
    }

    /// Calls `tool` (its name on the server) of `server` with `arguments`,
    /// waiting at most `timeout`; gives the result as JSON (see
    /// [`result_value`]).
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, McpCallError> {
        let Some(connection) = self.servers.get(server).cloned() else {
            return Err(McpCallError::Server(format!(
                "the MCP server `{server}` is not configured"
            )));
        };
        let Some(runtime) = &self.runtime else {
            return Err(McpCallError::Server("the MCP client has stopped".into()));
        };
        let tool = tool.to_string();
        let mut task = AbortOnDrop(
            runtime.spawn(async move { connection.call(&tool, arguments, timeout).await }),
        );
        match (&mut task.0).await {
            Ok(result) => result,
            Err(e) => Err(McpCallError::Server(format!("the call was lost: {e}"))),
        }
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        for connection in self.servers.values() {
            connection.stop();
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Aborts a spawned call when its caller stops waiting (a cancelled run):
/// the SDK then tells the server the request is cancelled.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
