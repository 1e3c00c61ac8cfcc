//! `toolcell mcp --http ADDRESS`: the workspace's tools over MCP's
//! Streamable HTTP transport, at `/mcp` — the same tools, policy and
//! records as over stdio (each session is a [`ToolServer`] sharing them).
//!
//! What guards it: every request carries the bearer token (generated and
//! printed once, or taken from [`TOKEN_ENV`]); a request whose `Host` is not
//! the address served is refused (DNS rebinding), and so is one whose
//! `Origin` is a page of another address (a browser's page may not drive
//! it); it listens on loopback unless told on purpose to listen wider.

mod sessions;

use super::mcp::ToolServer;
use crate::util::secret::same_token;
use anyhow::{Context, Result, bail};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sessions::{SessionServer, ToolSessions};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The environment variable that may hold the bearer token, for clients
/// configured with a token of their own.
pub const TOKEN_ENV: &str = "TOOLCELL_MCP_TOKEN";

/// The shortest token taken from [`TOKEN_ENV`]: 128 bits as hex.
pub const MIN_TOKEN_CHARS: usize = 32;

/// The path MCP is served at (the transport's convention).
pub const PATH: &str = "/mcp";

/// How the server listens.
pub struct HttpOptions {
    pub address: SocketAddr,
    /// Listening beyond loopback was asked for on purpose.
    pub beyond_loopback: bool,
    pub token: String,
    /// Ends the server, and every session.
    pub stop: CancellationToken,
}

/// The token clients must send: from [`TOKEN_ENV`], or a fresh one
/// (`Ok((token, true))`: generated, so it must be shown).
pub fn token_from_env() -> Result<(String, bool)> {
    match std::env::var(TOKEN_ENV) {
        Ok(token) => {
            let token = token.trim().to_string();
            if token.len() < MIN_TOKEN_CHARS || !token.bytes().all(|b| b.is_ascii_graphic()) {
                bail!(
                    "{TOKEN_ENV} holds a token of {} characters: a bearer token needs at least {MIN_TOKEN_CHARS} printable ones\n  fix: set it to a long random value (`openssl rand -hex 32`), or unset it to have one made",
                    token.chars().count()
                );
            }
            Ok((token, false))
        }
        Err(_) => Ok((crate::util::secret::new_token()?, true)),
    }
}

/// Binds `options.address` (refusing a non-loopback one not asked for on
/// purpose) and returns the listener and the address it got.
pub async fn bind(options: &HttpOptions) -> Result<(tokio::net::TcpListener, SocketAddr)> {
    if !options.address.ip().is_loopback() && !options.beyond_loopback {
        bail!(
            "{} is not a loopback address: anyone who can reach it and holds the token could use this workspace's tools\n  fix: serve 127.0.0.1:PORT, or add --http-beyond-loopback to do it on purpose",
            options.address
        );
    }
    let listener = tokio::net::TcpListener::bind(options.address)
        .await
        .with_context(|| format!("cannot listen on {}", options.address))?;
    let bound = listener.local_addr()?;
    Ok((listener, bound))
}

/// Serves `server`'s tools on `listener` until `options.stop`.
pub async fn serve(
    server: ToolServer,
    listener: tokio::net::TcpListener,
    bound: SocketAddr,
    options: HttpOptions,
) -> Result<()> {
    let port = bound.port();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(options.stop.child_token())
        // No priming event before each answer: it lets a client resume a
        // stream it lost, which a call's short answer stream does not need,
        // and costs every request an event, a write and a wakeup.
        .with_sse_retry(None)
        // A page on this machine may call only from the address served.
        .with_allowed_origins([
            format!("http://127.0.0.1:{port}"),
            format!("http://localhost:{port}"),
        ]);
    config = if options.beyond_loopback {
        config.disable_allowed_hosts()
    } else {
        config.with_allowed_hosts([format!("127.0.0.1:{port}"), format!("localhost:{port}")])
    };
    let sessions = Arc::new(ToolSessions::new(
        {
            let mut sessions = LocalSessionManager::default();
            // As above, for the answer streams the sessions open; and
            // with nothing to resume, an answer is not kept after it is
            // sent (a minute by default: at hundreds of calls a second,
            // a heap of copies of results no one will ask for again).
            sessions.session_config.sse_retry = None;
            sessions.session_config.completed_cache_ttl = std::time::Duration::ZERO;
            sessions
        },
        server,
    ));
    tokio::spawn(sessions.clone().sweep(options.stop.clone()));
    let service = StreamableHttpService::new(
        {
            let sessions = sessions.clone();
            move || {
                Ok(SessionServer {
                    sessions: sessions.clone(),
                })
            }
        },
        sessions,
        config,
    );
    let token = Arc::new(options.token);
    let app = axum::Router::new()
        .nest_service(PATH, service)
        .layer(axum::middleware::from_fn_with_state(token, bearer));
    let stop = options.stop.clone();
    axum::serve(crate::util::listener::sending_at_once(listener), app)
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
        .context("the MCP HTTP server failed")
}

/// Lets a request through only with `Authorization: Bearer TOKEN`.
async fn bearer(State(token): State<Arc<String>>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|given| same_token(given.trim(), &token)) {
        return next.run(request).await;
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "toolcell mcp: send the token toolcell mcp printed (or the one in TOOLCELL_MCP_TOKEN) as `Authorization: Bearer TOKEN`\n",
    )
        .into_response()
}
