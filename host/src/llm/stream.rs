//! The HTTP side shared by the providers: send one JSON request, turn a
//! failed status into an error with the server's own message, and read the
//! body chunk by chunk with an idle timeout and a cap on its total size
//! ([`MAX_REPLY_BYTES`]), so a stream that never ends is cut off.

use super::{LlmError, StreamSink, Turn};
use futures_util::StreamExt;
use serde_json::Value;
use std::time::Duration;

/// How long to wait for the response head: covers a server that accepts
/// the connection and never answers.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest error body read for a message: error pages can be large.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The most bytes of one streamed reply read: the longest reply asked for
/// ([`super::settings::MAX_REPLY_TOKENS`]) at up to 1 KiB of wire per token
/// (an OpenAI-style chunk is ~250 bytes a token, an Ollama line ~120, a
/// call's arguments escaped once more); past it the server is not
/// answering but streaming without end.
pub const MAX_REPLY_BYTES: u64 = super::settings::MAX_REPLY_TOKENS as u64 * 1024;

/// An HTTP client for one provider.
pub fn client() -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .map_err(|e| LlmError::Setup(format!("cannot create the HTTP client: {e}")))
}

/// POSTs `body` to `url` and returns the response once its status is 2xx.
pub async fn post_json(
    request: reqwest::RequestBuilder,
    url: &str,
    body: &Value,
    idle: Duration,
) -> Result<reqwest::Response, LlmError> {
    send(request.json(body), url, idle).await
}

/// The largest answer [`fetch_json`] reads: a model's description with its
/// license and template is tens of KB; nothing it needs is larger.
const MAX_JSON_BODY: usize = 4 * 1024 * 1024;

/// Sends `request` and reads its whole answer as JSON (for the small
/// non-streamed requests: model descriptions and lists).
pub async fn fetch_json(
    request: reqwest::RequestBuilder,
    url: &str,
    idle: Duration,
) -> Result<Value, LlmError> {
    let response = send(request, url, idle).await?;
    let mut body = Vec::new();
    read_body(response, idle, |chunk| {
        body.extend_from_slice(chunk);
        if body.len() > MAX_JSON_BODY {
            return Err(LlmError::Malformed {
                expected: "a model description",
                detail: format!("the answer from {url} is larger than {MAX_JSON_BODY} bytes"),
            });
        }
        Ok(false)
    })
    .await?;
    serde_json::from_slice(&body).map_err(|e| LlmError::Malformed {
        expected: "JSON",
        detail: format!("the answer from {url}: {e}"),
    })
}

/// Sends `request` and returns the response once its status is 2xx; any
/// other status becomes an error with the server's own message.
async fn send(
    request: reqwest::RequestBuilder,
    url: &str,
    idle: Duration,
) -> Result<reqwest::Response, LlmError> {
    let send = request.send();
    let response = match tokio::time::timeout(idle, send).await {
        Err(_) => {
            return Err(LlmError::Idle {
                seconds: idle.as_secs(),
            });
        }
        Ok(Err(e)) => {
            return Err(LlmError::Connect {
                url: url.to_string(),
                message: crate::util::text::error_chain(&e),
            });
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Ok(Some(Ok(chunk))) = tokio::time::timeout(idle, stream.next()).await {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ERROR_BODY {
            break;
        }
    }
    Err(LlmError::Status {
        status: status.as_u16(),
        message: error_message(&body),
    })
}

/// Reads `response`'s body, handing each chunk to `on_chunk` until it says
/// the answer is complete (`Ok(true)`) or the body ends. Returns whether the
/// answer completed; waiting longer than `idle` for a chunk is an error.
pub async fn read_body(
    response: reqwest::Response,
    idle: Duration,
    mut on_chunk: impl FnMut(&[u8]) -> Result<bool, LlmError>,
) -> Result<bool, LlmError> {
    let mut stream = response.bytes_stream();
    loop {
        let next = tokio::time::timeout(idle, stream.next())
            .await
            .map_err(|_| LlmError::Idle {
                seconds: idle.as_secs().max(1),
            })?;
        match next {
            None => return Ok(false),
            Some(Err(_)) => return Err(LlmError::Truncated),
            Some(Ok(chunk)) => {
                if on_chunk(&chunk)? {
                    return Ok(true);
                }
            }
        }
    }
}

/// The text of an `error` field, in either server's shape: a string
/// (Ollama) or an object with a `message` (OpenAI); anything else as JSON.
pub fn error_text(error: &Value) -> String {
    let text = match error {
        Value::String(message) => message.clone(),
        other => match other.get("message").and_then(Value::as_str) {
            Some(message) => message.to_string(),
            None => other.to_string(),
        },
    };
    server_words(text.trim())
}

/// A model server's own words, as toolcell passes them on in a notice or
/// an error line: cut to [`MAX_SERVER_WORDS`] characters and on one line
/// (line breaks and control characters shown, `\n`), so they cannot add
/// a line that looks like toolcell's.
fn server_words(text: &str) -> String {
    let text = crate::util::text::shorten(text, MAX_SERVER_WORDS);
    crate::util::text::for_terminal_line(&text).into_owned()
}

/// The most characters of a server's error message passed on: enough for
/// any real one (a missing model, a context too long).
const MAX_SERVER_WORDS: usize = 500;

/// Appends a non-empty text `piece` to `target`; returns it for the sink.
pub fn append_piece<'v>(target: &mut String, piece: Option<&'v Value>) -> Option<&'v str> {
    let piece = piece?.as_str().filter(|p| !p.is_empty())?;
    target.push_str(piece);
    Some(piece)
}

/// The server's error message from an error body: `{"error": "…"}`
/// (Ollama), `{"error": {"message": "…"}}` (OpenAI), or the text itself.
pub fn error_message(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body)
        && let Some(error) = value.get("error")
    {
        return error_text(error);
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        "(no message)".into()
    } else {
        server_words(text)
    }
}

/// Accumulates one turn from a response body, whatever its wire format.
pub trait TurnDecoder: Default {
    /// Feeds a chunk of the body; `Ok(true)` once the answer is complete.
    fn push(&mut self, chunk: &[u8], sink: &mut StreamSink<'_>) -> Result<bool, LlmError>;
    /// The body ended before the end-of-answer marker.
    fn finish(&mut self, sink: &mut StreamSink<'_>) -> Result<(), LlmError>;
    /// The finished turn, or [`LlmError::Truncated`].
    fn into_turn(self) -> Result<Turn, LlmError>;
}

/// One model exchange: POST `body`, decode the streamed answer with `D`;
/// a reply past [`MAX_REPLY_BYTES`] is [`LlmError::ReplyTooLong`].
pub async fn exchange<D: TurnDecoder>(
    request: reqwest::RequestBuilder,
    url: &str,
    body: &Value,
    idle: Duration,
    sink: &mut StreamSink<'_>,
) -> Result<Turn, LlmError> {
    let response = post_json(request, url, body, idle).await?;
    let mut decoder = D::default();
    let mut received: u64 = 0;
    let done = read_body(response, idle, |chunk| {
        received += chunk.len() as u64;
        if received > MAX_REPLY_BYTES {
            return Err(LlmError::ReplyTooLong {
                limit: MAX_REPLY_BYTES,
            });
        }
        decoder.push(chunk, sink)
    })
    .await?;
    if !done {
        decoder.finish(sink)?;
    }
    decoder.into_turn()
}
