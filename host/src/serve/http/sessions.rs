//! The sessions of `toolcell mcp --http`: rmcp's own
//! ([`LocalSessionManager`], which keeps each session's worker task), with
//! one shortcut. A tool call that cannot wait for a person is run as soon
//! as rmcp has checked its request, and its answer streamed straight back,
//! instead of travelling to the session's worker, on to the service's task
//! and back the same way — about five hand-offs between tasks, which cost
//! more than the call itself (BENCHMARKS.md, "MCP over HTTP"). A call that
//! may ask the client's user goes the long way, so that the question goes
//! out on the call's own stream, as MCP asks.
//!
//! Every other request, and every check of a request (token, `Host`,
//! `Origin`, headers, size, session), is rmcp's, unchanged. Since the
//! shortcut passes no event to a session's worker, a session's idleness is
//! judged here, from the requests that name it, not by the worker.

use crate::serve::mcp::ToolServer;
use futures_util::Stream;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ClientRequest, ErrorData,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use serde_json::Value;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A session no request has named for this long is closed (rmcp's own
/// default, which the worker applied before the shortcut bypassed it).
pub const IDLE: Duration = Duration::from_secs(300);

/// How often idle sessions are looked for: a session lives at most this
/// much beyond [`IDLE`].
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// The events of one request's answer.
type AnswerStream = Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync>>;

/// rmcp's sessions, with the shortcut for calls that cannot wait.
pub struct ToolSessions {
    local: LocalSessionManager,
    server: ToolServer,
    open: Mutex<HashMap<SessionId, Open>>,
}

/// What is known of an open session.
struct Open {
    /// The client, once it has said it is initialized (its capabilities
    /// known); until then its calls go the long way.
    client: Option<Peer<RoleServer>>,
    last_seen: Instant,
}

impl ToolSessions {
    /// `local`'s sessions for `server`'s tools. `local`'s own idle timeout
    /// is replaced by [`ToolSessions::sweep`].
    pub fn new(mut local: LocalSessionManager, server: ToolServer) -> Self {
        local.session_config.keep_alive = None;
        Self {
            local,
            server,
            open: Mutex::new(HashMap::new()),
        }
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Open>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks `id` as used now.
    fn seen(&self, id: &SessionId) {
        if let Some(open) = self.open().get_mut(id) {
            open.last_seen = Instant::now();
        }
    }

    /// Notes `client`, initialized, as the client of `id`.
    fn initialized(&self, id: &SessionId, client: Peer<RoleServer>) {
        if let Some(open) = self.open().get_mut(id) {
            open.client = Some(client);
        }
    }

    /// Closes every session idle for [`IDLE`] as of `now`; returns how many.
    pub async fn close_idle(&self, now: Instant) -> usize {
        let idle = idle_among(&self.open(), now);
        for id in &idle {
            if let Err(e) = self.close_session(id).await {
                tracing::warn!("cannot close idle MCP session {id}: {e}");
            }
        }
        idle.len()
    }

    /// Closes idle sessions every [`SWEEP_EVERY`] until `stop`.
    pub async fn sweep(self: Arc<Self>, stop: CancellationToken) {
        let mut ticks = tokio::time::interval(SWEEP_EVERY);
        loop {
            tokio::select! {
                _ = ticks.tick() => { self.close_idle(Instant::now()).await; }
                () = stop.cancelled() => return,
            }
        }
    }

    /// The answer of `message` in session `id` by the shortcut, if it is a
    /// tool call that cannot wait for a person; `None`: it goes the long way.
    fn answer_at_once(
        &self,
        id: &SessionId,
        message: &ClientJsonRpcMessage,
    ) -> Option<AnswerStream> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return None;
        };
        let ClientRequest::CallToolRequest(call) = &request.request else {
            return None;
        };
        let client = self.open().get(id)?.client.clone()?;
        let CallToolRequestParams {
            name, arguments, ..
        } = &call.params;
        let arguments = Value::Object(arguments.clone().unwrap_or_default());
        if self.server.could_wait(name, &arguments, &client) {
            return None;
        }
        let server = self.server.clone();
        let name = name.to_string();
        // Its own task: a client that goes away mid-call does not stop the
        // call half-way, and its record is finished as for any call.
        let answer =
            tokio::spawn(async move { server.call(&name, arguments, client, false).await });
        let request_id = request.id.clone();
        Some(Box::pin(futures_util::stream::once(async move {
            ServerSseMessage::from_message(match answer.await {
                Ok(result) => ServerJsonRpcMessage::response(
                    ServerResult::from(CallToolResponse::from(result)),
                    request_id,
                ),
                Err(e) => ServerJsonRpcMessage::error(
                    ErrorData::internal_error(
                        format!("the call failed inside toolcell: {e}"),
                        None,
                    ),
                    Some(request_id),
                ),
            })
        })))
    }
}

impl SessionManager for ToolSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.local.create_session().await?;
        self.open().insert(
            id.clone(),
            Open {
                client: None,
                last_seen: Instant::now(),
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.local.initialize_session(id, message).await
    }

    /// Asked first for every request that names a session: where its use is
    /// seen.
    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.seen(id);
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.open().remove(id);
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if let Some(answer) = self.answer_at_once(id, &message) {
            return Ok(answer);
        }
        let answer: AnswerStream = Box::pin(self.local.create_stream(id, message).await?);
        Ok(answer)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }
}

/// The MCP server of one HTTP session: [`ToolServer`], which also tells
/// [`ToolSessions`] its client once the client is initialized.
#[derive(Clone)]
pub struct SessionServer {
    pub sessions: Arc<ToolSessions>,
}

impl rmcp::ServerHandler for SessionServer {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        self.sessions.server.get_info()
    }

    async fn list_tools(
        &self,
        request: Option<rmcp::model::PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        self.sessions.server.list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.sessions.server.call_tool(request, context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let id = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get(SESSION_ID_HEADER))
            .and_then(|id| id.to_str().ok());
        if let Some(id) = id {
            self.sessions
                .initialized(&SessionId::from(id), context.peer);
        }
    }
}

/// The sessions of `open` no request has named for [`IDLE`] as of `now`.
fn idle_among(open: &HashMap<SessionId, Open>, now: Instant) -> Vec<SessionId> {
    open.iter()
        .filter(|(_, open)| now.saturating_duration_since(open.last_seen) >= IDLE)
        .map(|(id, _)| id.clone())
        .collect()
}

/// The header naming a request's session (MCP's Streamable HTTP transport).
const SESSION_ID_HEADER: &str = "mcp-session-id";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_idle_only_once_no_request_has_named_it_for_the_whole_time() {
        let start = Instant::now();
        let mut open = HashMap::new();
        for (id, last_seen) in [("early", start), ("late", start + IDLE / 2)] {
            open.insert(
                SessionId::from(id),
                Open {
                    client: None,
                    last_seen,
                },
            );
        }
        assert!(idle_among(&open, start + IDLE / 2).is_empty());
        assert_eq!(
            idle_among(&open, start + IDLE),
            vec![SessionId::from("early")]
        );
        let mut both = idle_among(&open, start + IDLE * 2);
        both.sort();
        assert_eq!(
            both,
            vec![SessionId::from("early"), SessionId::from("late")]
        );
    }
}
