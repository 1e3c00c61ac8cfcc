//! `toolcell ui`: a page on 127.0.0.1 to watch runs, decide parked calls,
//! undo changes and look at schedules and tools.
//!
//! - [`guard`]: who may ask (the token, its cookie, loopback `Host` and
//!   `Origin` only) and the headers every answer carries;
//! - [`html`]: escaping, and the frame every page shares;
//! - [`pages`]: the pages, rendered on the server from the run store and
//!   the config;
//! - [`actions`]: what a page may change (approve, deny, undo, run a
//!   schedule now), each the same step the command line takes;
//! - [`live`]: server-sent events that tell an open page its run changed,
//!   and the turn a chat started here is writing;
//! - [`chat`]: a chat started from the page, in a process of its own.
//!
//! The page holds no state of its own: every view is read from the run
//! store as it is, so runs of every process (the daemon, a chat in a
//! terminal, an MCP client) show, and a decision made here is the one
//! `toolcell approve` makes. A run started from here runs in a process of
//! its own, as on the command line: the page's server loads no tool.

pub mod actions;
pub mod chat;
pub mod guard;
pub mod html;
pub mod live;
pub mod pages;

use crate::config::WorkspaceConfig;
use crate::store::Store;
use anyhow::{Context, Result};
use axum::Router;
use axum::routing::{get, post};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

/// What every request of one `toolcell ui` shares.
pub struct Ui {
    pub config: WorkspaceConfig,
    pub store: Store,
    /// The secret in the printed URL: the page's script keeps it in the
    /// page's own storage and sends it in a header with every request
    /// that changes something. No page the server writes holds it.
    pub token: String,
    /// The secret of the cookie the first request sets, which lets the
    /// browser read the pages (and only read: a browser sends cookies of
    /// 127.0.0.1 to every port of it).
    pub session: String,
    /// The cookie's name: of this port, so two pages on one machine keep
    /// theirs.
    pub cookie: String,
    /// The `Host` values the page answers to: the loopback address and
    /// port it serves (and `localhost` on that port).
    pub hosts: Vec<String>,
    /// The `Origin` values a request may come from: the page itself.
    pub origins: Vec<String>,
    /// toolcell itself, to start runs in processes of their own.
    pub program: PathBuf,
    /// Cancelled when the page stops: its live events end with it.
    pub stopping: tokio_util::sync::CancellationToken,
    /// The turns the chats started here are writing.
    pub streams: chat::Streams,
}

impl Ui {
    /// For the page served at `address`.
    pub fn new(config: WorkspaceConfig, store: Store, address: SocketAddr) -> Result<Self> {
        let port = address.port();
        let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")];
        // A browser leaves out the default port.
        if port == 80 {
            hosts.extend(["127.0.0.1".to_string(), "localhost".to_string()]);
        }
        let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
        Ok(Self {
            config,
            store,
            token: crate::util::secret::new_token()?,
            session: crate::util::secret::new_token()?,
            cookie: format!("toolcell_{port}"),
            hosts,
            origins,
            program: std::env::current_exe().context("cannot find toolcell's own program")?,
            stopping: tokio_util::sync::CancellationToken::new(),
            streams: chat::Streams::default(),
        })
    }

    /// The URL to open: the page with its token.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.hosts[0], self.token)
    }

    /// `toolcell` in the workspace, on this page's config and profile:
    /// what a chat or a schedule started from the page runs as.
    pub fn toolcell(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        if let Some(file) = &self.config.file {
            command.arg("--config").arg(file);
        }
        if let Some(profile) = &self.config.profile {
            command.arg("--profile").arg(profile);
        }
        command.current_dir(&self.config.workspace);
        command
    }
}

/// Every route of the page, behind [`guard::guard`].
pub fn router(ui: Arc<Ui>) -> Router {
    Router::new()
        .route("/", get(pages::runs))
        .route("/runs/{id}", get(pages::run))
        .route("/approvals", get(pages::approvals))
        .route("/schedules", get(pages::schedules))
        .route("/tools", get(pages::tools))
        .route("/chat", get(chat::form))
        .route("/api/chat", post(chat::start))
        .route("/static/{file}", get(pages::asset))
        .route("/api/runs/{id}/events", get(live::run_events))
        .route("/api/approvals/events", get(live::approval_events))
        .route("/api/approvals/{id}", post(actions::decide))
        .route("/api/runs/{id}/undo", post(actions::undo))
        .route("/api/schedules/{name}/run", post(actions::run_schedule))
        .layer(axum::middleware::from_fn_with_state(
            ui.clone(),
            guard::guard,
        ))
        .with_state(ui)
}

/// Binds 127.0.0.1:`port` (0: a free port): never another address.
pub async fn bind(port: u16) -> Result<tokio::net::TcpListener> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    tokio::net::TcpListener::bind(address).await.with_context(|| {
        format!("cannot listen on {address}\n  fix: choose another port with --port, or --port 0 for a free one")
    })
}

/// Serves the page on `listener` until `stop` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    ui: Arc<Ui>,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let stopping = ui.stopping.clone();
    axum::serve(crate::util::listener::sending_at_once(listener), router(ui))
        .with_graceful_shutdown(async move {
            stop.await;
            // Open pages' live events would keep the server waiting.
            stopping.cancel();
        })
        .await
        .context("the page's server stopped")
}
