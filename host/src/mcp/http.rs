//! MCP's Streamable HTTP transport, client side: rmcp's transport worker
//! (sessions, the server's event streams, cancellation) over the reqwest
//! client toolcell already has for model servers. rmcp's own HTTP client is
//! built on a later reqwest, which would be a second copy of it and of its
//! TLS stack in the binary; the three requests it needs are here instead.
//!
//! What a server sends is bounded as over stdio: a JSON answer and one
//! event of a stream at most [`MAX_MESSAGE_BYTES`], an error page's text
//! at most [`ERROR_TEXT_BYTES`]. Redirects are not followed, so a token
//! is never sent to an address the config does not name.

use super::connection::{Live, client_config};
use crate::config::mcp_server::{McpServerConfig, RemoteEndpoint};
use anyhow::{Result, anyhow};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The largest answer or event accepted from a server: the same as a line
/// from a stdio server.
pub(super) const MAX_MESSAGE_BYTES: usize = super::stdio::MAX_MESSAGE_BYTES;
/// What is kept of an error page, for the message that reports it.
const ERROR_TEXT_BYTES: usize = 400;
/// Opening a connection takes milliseconds on a reachable host; a server
/// that does not accept in this long is reported, not waited for until the
/// call's own timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

type Failure = StreamableHttpError<reqwest::Error>;
/// A server's events, as the transport reads them.
type Events = BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

/// Opens a session with `server` at its URL by `deadline`: its secrets
/// read from the environment now, so a changed token is used on the next
/// start.
pub(super) async fn connect(
    server: &McpServerConfig,
    remote: &RemoteEndpoint,
    deadline: tokio::time::Instant,
) -> Result<Live> {
    let secret = |variable: &str, key: &str| {
        std::env::var(variable).map_err(|_| {
            anyhow!(
                "the environment variable `{variable}` (its `{key}`) is not set\n  fix: set it before starting toolcell, or correct `{key}` in [[mcp_server]] `{}` ({})",
                server.name,
                server.at
            )
        })
    };
    let unsendable = |variable: &str| {
        anyhow!(
            "the value of `{variable}` cannot be sent as an HTTP header (it is empty, or holds a line break or a control character)\n  fix: correct the variable's value"
        )
    };
    let mut config = StreamableHttpClientTransportConfig::with_uri(remote.url.as_str());
    config.max_sse_event_size = MAX_MESSAGE_BYTES;
    config.max_json_response_size = MAX_MESSAGE_BYTES;
    config.max_error_response_size = ERROR_TEXT_BYTES;
    if let Some(variable) = &remote.bearer_token_env {
        let token = secret(variable, "bearer_token_env_var")?;
        if token.trim().is_empty() || HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
            return Err(unsendable(variable));
        }
        config = config.auth_header(token);
    }
    let mut headers = HashMap::new();
    for (header, variable) in &remote.header_envs {
        let value = secret(variable, "env_http_headers")?;
        let name = HeaderName::from_bytes(header.as_bytes())?;
        let value = HeaderValue::from_str(&value).map_err(|_| unsendable(variable))?;
        headers.insert(name, value);
    }
    config = config.custom_headers(headers);
    let client = HttpClient::new(&reqwest::Url::parse(&remote.url)?).map_err(|e| anyhow!(e))?;
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let url = crate::util::text::for_terminal_line(&remote.url).into_owned();
    match tokio::time::timeout_at(deadline, client_config().serve(transport)).await {
        Ok(Ok(session)) => Ok(Live::remote(session)),
        Ok(Err(e)) => Err(anyhow!(
            "the MCP session did not start ({})\n  fix: check that the server runs and serves MCP over Streamable HTTP at {url}{}",
            why_not_started(&e),
            if remote.bearer_token_env.is_none() {
                ", and give its token with `bearer_token_env_var` if it wants one"
            } else {
                ""
            }
        )),
        Err(_) => Err(anyhow!(
            "it did not answer `initialize` within {}\n  fix: check that the server serves MCP over Streamable HTTP at {url}, or raise `startup_timeout`",
            crate::util::text::human_duration(server.startup_timeout)
        )),
    }
}

/// Why a session did not start, said plainly: what the request met, not
/// the SDK's layers.
fn why_not_started(e: &rmcp::service::ClientInitializeError) -> String {
    match e {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => {
            transport_failure(error.error.as_ref())
        }
        // An answer that is not the one expected is quoted whole.
        other => {
            crate::util::text::shorten(&crate::util::text::error_chain(other), ERROR_TEXT_BYTES)
        }
    }
}

/// What a request of the transport met, such as `cannot connect
/// (Connection refused)` or `HTTP 401 Unauthorized (no token was sent)`.
pub(super) fn transport_failure(e: &(dyn std::error::Error + 'static)) -> String {
    match e.downcast_ref::<Failure>() {
        Some(StreamableHttpError::Client(request)) => {
            let mut innermost: &dyn std::error::Error = request;
            while let Some(cause) = innermost.source() {
                innermost = cause;
            }
            let what = if request.is_connect() {
                "cannot connect"
            } else if request.is_timeout() {
                "the request timed out"
            } else {
                "the request failed"
            };
            format!("{what}: {innermost}")
        }
        Some(StreamableHttpError::UnexpectedServerResponse(text)) => text.to_string(),
        _ => crate::util::text::error_chain(e),
    }
}

/// The HTTP side of one server's transport.
#[derive(Clone)]
pub(super) struct HttpClient(reqwest::Client);

impl HttpClient {
    /// A client for a server at `url`: one on this machine is reached
    /// directly, never through a proxy from the environment (which would
    /// see its token); another the way the environment says.
    pub(super) fn new(url: &reqwest::Url) -> Result<Self, String> {
        let mut builder = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none());
        if crate::config::mcp_server::is_loopback(url) {
            builder = builder.no_proxy();
        }
        builder
            .build()
            .map(Self)
            .map_err(|e| format!("cannot create the HTTP client: {e}"))
    }

    /// A request with what every request of a session carries.
    fn request(
        &self,
        method: reqwest::Method,
        uri: &str,
        session_id: Option<&str>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let headers = headers
            .into_iter()
            .map(|(name, mut value)| {
                // Their values are secrets (kept out of debug output).
                value.set_sensitive(true);
                (name, value)
            })
            .collect();
        let mut request = self.0.request(method, uri).headers(headers);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session_id) = session_id {
            request = request.header(HEADER_SESSION_ID, session_id);
        }
        request
    }
}

/// The media type of a response, without its parameters, lowercased.
fn media_type(response: &reqwest::Response) -> Option<String> {
    let value = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    Some(
        value
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase(),
    )
}

/// Why a body was not read whole.
enum Unread {
    /// It is longer than the cap: what was read up to it.
    TooLong(Vec<u8>),
    /// Reading it failed: what was read before.
    Failed(Vec<u8>, reqwest::Error),
}

impl Unread {
    /// What was read, for an error page's text.
    fn read(self) -> Vec<u8> {
        match self {
            Unread::TooLong(read) | Unread::Failed(read, _) => read,
        }
    }
}

/// The body, up to `cap` bytes.
async fn body_within(response: reqwest::Response, cap: usize) -> Result<Vec<u8>, Unread> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => return Err(Unread::Failed(body, e)),
        };
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Err(Unread::TooLong(body));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Why a response with a failing status is refused, with the start of
/// what the server said.
async fn status_failure(response: reqwest::Response, token_sent: bool) -> Failure {
    let status = response.status();
    let hint = match status {
        StatusCode::UNAUTHORIZED if token_sent => " (the token sent was refused)",
        StatusCode::UNAUTHORIZED => " (no token was sent)",
        StatusCode::FORBIDDEN => " (the server refuses these credentials)",
        _ => "",
    };
    let body = body_within(response, ERROR_TEXT_BYTES)
        .await
        .unwrap_or_else(Unread::read);
    let text = String::from_utf8_lossy(&body);
    let said = match text.trim() {
        "" => String::new(),
        text => format!(": {text}"),
    };
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}{hint}{said}")))
}

/// An event stream's body, failing once one event grows past `cap` bytes
/// (an event ends at a blank line); the events before it pass.
fn event_stream(response: reqwest::Response, cap: usize) -> Events {
    let (mut line, mut event, mut failed) = (0usize, 0usize, false);
    let bounded = response
        .bytes_stream()
        .map(move |chunk| {
            // Nothing more is read once the stream failed (an empty list
            // ends it below).
            if failed {
                return Vec::new();
            }
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(e) => {
                    failed = true;
                    return vec![Err(BodyError::Read(e))];
                }
            };
            // Where the event under way began in this chunk.
            let mut event_start = 0;
            for (at, &byte) in chunk.iter().enumerate() {
                match byte {
                    b'\n' => {
                        if line == 0 {
                            event = 0;
                            event_start = at + 1;
                        }
                        line = 0;
                    }
                    b'\r' => {}
                    _ => {
                        line += 1;
                        event += 1;
                    }
                }
                if event > cap {
                    failed = true;
                    let whole = (event_start > 0).then(|| Ok(chunk.slice(..event_start)));
                    return whole
                        .into_iter()
                        .chain([Err(BodyError::EventTooLarge(cap))])
                        .collect();
                }
            }
            vec![Ok(chunk)]
        })
        .take_while(|items| std::future::ready(!items.is_empty()))
        .flat_map(futures_util::stream::iter);
    sse_stream::SseStream::from_bytes_stream(bounded).boxed()
}

/// What ends an event stream early.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("reading the server's events failed: {0}")]
    Read(reqwest::Error),
    #[error("the server sent an event of over {0} bytes")]
    EventTooLarge(usize),
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.post_message_with_response_limits(uri, message, session_id, token, headers, {
            let mut limits = StreamableHttpResponseLimits::default();
            limits.max_sse_event_size = MAX_MESSAGE_BYTES;
            limits.max_json_response_size = MAX_MESSAGE_BYTES;
            limits.max_error_response_size = ERROR_TEXT_BYTES;
            limits
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let token_sent = token.is_some();
        let had_session = session_id.is_some();
        let response = self
            .request(
                reqwest::Method::POST,
                &uri,
                session_id.as_deref(),
                token,
                headers,
            )
            .header(
                ACCEPT,
                format!("{JSON_MIME_TYPE}, {EVENT_STREAM_MIME_TYPE}"),
            )
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && had_session {
            return Err(StreamableHttpError::SessionExpired);
        }
        let awaits_no_answer = matches!(
            message,
            ClientJsonRpcMessage::Notification(_)
                | ClientJsonRpcMessage::Response(_)
                | ClientJsonRpcMessage::Error(_)
        );
        let media = media_type(&response);
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let is_json = media.as_deref() == Some(JSON_MIME_TYPE);
        if !status.is_success() {
            // A JSON-RPC error is an answer, whatever the status says.
            if is_json && !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
                let body = body_within(response, limits.max_json_response_size)
                    .await
                    .unwrap_or_else(Unread::read);
                return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(error @ JsonRpcMessage::Error(_)) => {
                        Ok(StreamableHttpPostResponse::Json(error, session))
                    }
                    _ => {
                        let cut = &body[..body.len().min(ERROR_TEXT_BYTES)];
                        Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                            format!("HTTP {status}: {}", String::from_utf8_lossy(cut)),
                        )))
                    }
                };
            }
            return Err(status_failure(response, token_sent).await);
        }
        match media.as_deref() {
            Some(EVENT_STREAM_MIME_TYPE) => Ok(StreamableHttpPostResponse::Sse(
                event_stream(response, limits.max_sse_event_size),
                session,
            )),
            Some(JSON_MIME_TYPE) => {
                let cap = limits.max_json_response_size;
                let body = match body_within(response, cap).await {
                    Ok(body) => body,
                    Err(Unread::TooLong(_)) => {
                        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: cap });
                    }
                    Err(Unread::Failed(_, e)) => return Err(StreamableHttpError::Client(e)),
                };
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(answer) => Ok(StreamableHttpPostResponse::Json(answer, session)),
                    Err(_) if awaits_no_answer => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                        format!("its answer is not a JSON-RPC message ({e})"),
                    ))),
                }
            }
            // Some servers answer a notification with an empty 200.
            _ if awaits_no_answer => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        token: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let token_sent = token.is_some();
        let response = self
            .request(
                reqwest::Method::DELETE,
                &uri,
                Some(&session_id),
                token,
                headers,
            )
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        // A server may keep sessions until they time out.
        if response.status().is_success() || response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(status_failure(response, token_sent).await)
    }

    /// No stream is opened outside a call: toolcell asks nothing of a
    /// server between calls (it offers no sampling, roots or elicitation,
    /// and its tools were pinned when it started), and an answer stream
    /// that broke is not resumed: the call fails and the next one starts a
    /// new session. So no server can keep toolcell reconnecting, however
    /// its streams end (the transport takes this answer as final).
    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _token: Option<String>,
        _headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Failure> {
        Err(StreamableHttpError::ServerDoesNotSupportSse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_event_past_its_cap_ends_the_stream_and_smaller_ones_pass() {
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut socket, &mut request).await;
            let body = format!("data: small\n\ndata: {}\n\n", "x".repeat(100));
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
                body.len()
            );
            socket.write_all(head.as_bytes()).await.unwrap();
            socket.write_all(body.as_bytes()).await.unwrap();
        });
        let client = HttpClient::new(&format!("http://{address}/").parse().unwrap()).unwrap();
        let response = client
            .0
            .get(format!("http://{address}/"))
            .send()
            .await
            .unwrap();
        let mut events = event_stream(response, 50);
        let first = events.next().await.unwrap().unwrap();
        assert_eq!(first.data.as_deref(), Some("small"));
        let second = events.next().await.unwrap();
        assert!(
            second.unwrap_err().to_string().contains("over 50 bytes"),
            "the long event is refused"
        );
    }
}
