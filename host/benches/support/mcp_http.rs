//! A client of `toolcell mcp --http`, two ways, on one session:
//!
//! - on the wire, as lean as the stdio client beside it (a blocking
//!   keep-alive `TcpStream`, each request written whole, the answer read
//!   through a `BufReader`, chunked or sized): the transport and the
//!   server, without an HTTP library's own time — what the stdio figure is
//!   compared with;
//! - through reqwest (hyper's client, as Rust MCP SDKs send), to show what a
//!   client library adds.
//!
//! Either way each request is a POST whose answer comes as JSON or as a
//! short event stream, done when the answer has come (the stream's end is
//! read after the clock stops), strictly sequential.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A token for the server, from the environment variable it reads (at
/// least 32 characters).
const TOKEN: &str = "toolcell-bench-token-0123456789abcdef";

/// The client's read buffer: a whole answer (about 9 KB) in one read.
const READ_BUFFER: usize = 64 << 10;

/// `toolcell mcp --http 127.0.0.1:0 ARGS…`, with a session open.
pub struct HttpClient {
    child: Child,
    /// `127.0.0.1:PORT`, the `Host` sent.
    host: String,
    wire: BufReader<TcpStream>,
    runtime: tokio::runtime::Runtime,
    library: reqwest::Client,
    session: String,
    next_id: u64,
    /// When the last answer had come whole.
    answered_at: Instant,
    /// The body of the last answer read, for the client's parse cost.
    pub last_body: String,
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One answer read off the wire.
struct Answer {
    status: u16,
    session: Option<String>,
    body: String,
}

impl HttpClient {
    /// Starts the server from `command` (`toolcell mcp --http 127.0.0.1:0
    /// …`) and opens a session.
    pub fn start(command: &mut Command, protocol: &str) -> Self {
        let mut child = command
            .env("TOOLCELL_MCP_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start toolcell mcp --http");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let host = line
            .trim()
            .strip_prefix("toolcell mcp: serving http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        let stream = TcpStream::connect(&host).unwrap();
        stream.set_nodelay(true).unwrap();
        let mut client = Self {
            child,
            host,
            wire: BufReader::with_capacity(READ_BUFFER, stream),
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            library: reqwest::Client::new(),
            session: String::new(),
            next_id: 0,
            answered_at: Instant::now(),
            last_body: String::new(),
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "toolcell-bench", "version": "1"}}),
        );
        assert_eq!(init["serverInfo"]["name"], "toolcell", "{init}");
        let sent = client.send(
            "POST",
            "/mcp",
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        let answer = client.receive(|_| false);
        assert!(
            (200..300).contains(&answer.status),
            "{sent}: {}",
            answer.status
        );
        client
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.host)
    }

    /// Writes a request with what every request of the session carries;
    /// returns its first line, for messages.
    fn send(&mut self, method: &str, path: &str, body: &str) -> String {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if !self.session.is_empty() {
            head.push_str(&format!("Mcp-Session-Id: {}\r\n", self.session));
        }
        head.push_str("\r\n");
        head.push_str(body);
        self.wire.get_mut().write_all(head.as_bytes()).unwrap();
        format!("{method} {path}")
    }

    /// Reads one whole answer; `answered` is asked of the body read so far
    /// and notes the time once it says the answer has come.
    fn receive(&mut self, mut answered: impl FnMut(&str) -> bool) -> Answer {
        let mut line = String::new();
        self.wire.read_line(&mut line).unwrap();
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP status line: {line:?}"));
        let (mut length, mut chunked, mut session) = (0usize, false, None);
        loop {
            line.clear();
            self.wire.read_line(&mut line).unwrap();
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').expect("a header");
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().unwrap(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_string()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        let mut noted = false;
        let mut note = |body: &[u8], client: &mut Self| {
            if !noted && answered(std::str::from_utf8(body).unwrap()) {
                client.answered_at = Instant::now();
                noted = true;
            }
        };
        if chunked {
            loop {
                line.clear();
                self.wire.read_line(&mut line).unwrap();
                let size = line.trim_end().split(';').next().unwrap();
                let size = usize::from_str_radix(size, 16).unwrap();
                if size == 0 {
                    line.clear();
                    self.wire.read_line(&mut line).unwrap();
                    break;
                }
                let start = body.len();
                body.resize(start + size + 2, 0);
                self.wire.read_exact(&mut body[start..]).unwrap();
                body.truncate(start + size);
                note(&body, self);
            }
        } else {
            body.resize(length, 0);
            self.wire.read_exact(&mut body).unwrap();
            note(&body, self);
        }
        Answer {
            status,
            session,
            body: String::from_utf8(body).unwrap(),
        }
    }

    /// The answer to `id` in `body` once it is there: the JSON itself, or
    /// a whole event (ended by a blank line) whose data is it.
    fn answer(body: &str, id: u64) -> Option<Value> {
        let whole_events = body.rfind("\n\n").map_or("", |end| &body[..end]);
        let messages = std::iter::once(body).chain(
            whole_events
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim),
        );
        for text in messages {
            if let Ok(message) = serde_json::from_str::<Value>(text)
                && message["id"] == id
            {
                assert!(message.get("error").is_none(), "{message}");
                return Some(message["result"].clone());
            }
        }
        None
    }

    /// The next request's text and id.
    fn next(&mut self, method: &str, params: &Value) -> (String, u64) {
        self.next_id += 1;
        let id = self.next_id;
        let message =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        (message, id)
    }

    /// Sends the request on the wire and reads its whole answer, noting
    /// when the answer to `id` had come, as an SDK's client resolves the
    /// call on the answer's event.
    fn exchange(&mut self, message: &str, id: u64) -> Value {
        let sent = self.send("POST", "/mcp", message);
        let answer = self.receive(|body| Self::answer(body, id).is_some());
        assert!(
            (200..300).contains(&answer.status),
            "{sent}: HTTP {}",
            answer.status
        );
        if let Some(session) = answer.session {
            self.session = session;
        }
        let result = Self::answer(&answer.body, id)
            .unwrap_or_else(|| panic!("no answer to {id} in {:?}", answer.body));
        self.last_body = answer.body;
        result
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let (message, id) = self.next(method, &params);
        self.exchange(&message, id)
    }

    /// `count` timed `ping` round trips on the wire, after `warmup`
    /// unmeasured ones.
    pub fn pings(&mut self, warmup: usize, count: usize) -> Vec<Duration> {
        let mut samples = Vec::with_capacity(count);
        for i in 0..warmup + count {
            let (message, id) = self.next("ping", &json!({}));
            let start = Instant::now();
            let result = self.exchange(&message, id);
            let elapsed = self.answered_at - start;
            assert!(result.is_object(), "ping: {result}");
            if i >= warmup {
                samples.push(elapsed);
            }
        }
        samples
    }

    /// `count` timed requests the server answers before MCP is involved
    /// (a path it does not serve: 404), on the same connection: what any
    /// HTTP request costs here, loopback TCP and server together.
    pub fn http_floor(&mut self, warmup: usize, count: usize) -> Vec<Duration> {
        let mut samples = Vec::with_capacity(count);
        for i in 0..warmup + count {
            let start = Instant::now();
            self.send("GET", "/not-served", "");
            let answer = self.receive(|_| true);
            let elapsed = self.answered_at - start;
            assert_eq!(answer.status, 404);
            if i >= warmup {
                samples.push(elapsed);
            }
        }
        samples
    }

    /// One timed `tools/call` on the wire, from the POST to the parsed
    /// answer; the answer is handed to `check` after the clock stops.
    pub fn timed_call(&mut self, params: &Value, check: fn(&Value)) -> Duration {
        let (message, id) = self.next("tools/call", params);
        let start = Instant::now();
        let result = self.exchange(&message, id);
        let elapsed = self.answered_at - start;
        check(&result);
        elapsed
    }

    /// The same through reqwest, on its own kept-alive connection.
    pub fn timed_call_through_library(&mut self, params: &Value, check: fn(&Value)) -> Duration {
        let (message, id) = self.next("tools/call", params);
        let request = self
            .library
            .post(self.url())
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &self.session)
            .body(message);
        let start = Instant::now();
        let (result, elapsed, mut response) = self.runtime.block_on(async {
            let mut response = request.send().await.unwrap();
            assert!(response.status().is_success(), "HTTP {}", response.status());
            let mut body = String::new();
            loop {
                let chunk = response
                    .chunk()
                    .await
                    .unwrap()
                    .unwrap_or_else(|| panic!("the body ended without the answer: {body:?}"));
                body.push_str(std::str::from_utf8(&chunk).unwrap());
                if let Some(result) = Self::answer(&body, id) {
                    return (result, start.elapsed(), response);
                }
            }
        });
        self.runtime
            .block_on(async { while response.chunk().await.unwrap().is_some() {} });
        check(&result);
        elapsed
    }
}
