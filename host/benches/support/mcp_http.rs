//! A client of `toolcell mcp --http`, as an MCP SDK's HTTP client works:
//! one keep-alive connection (reqwest), a session opened with `initialize`,
//! each request a POST whose answer comes as JSON or as a short event
//! stream, done when the answer has come (the stream's end is read after
//! the clock stops). Strictly sequential calls.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A token for the server, from the environment variable it reads (at
/// least 32 characters).
const TOKEN: &str = "toolcell-bench-token-0123456789abcdef";

/// `toolcell mcp --http 127.0.0.1:0 ARGS…`, with a session open.
pub struct HttpClient {
    child: Child,
    runtime: tokio::runtime::Runtime,
    client: reqwest::Client,
    url: String,
    session: String,
    next_id: u64,
    /// The body of the last answer read, for the client's parse cost.
    pub last_body: String,
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
        let url = line
            .trim()
            .strip_prefix("toolcell mcp: serving ")
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut client = Self {
            child,
            runtime,
            client: reqwest::Client::new(),
            url,
            session: String::new(),
            next_id: 0,
            last_body: String::new(),
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "toolcell-bench", "version": "1"}}),
        );
        assert_eq!(init["serverInfo"]["name"], "toolcell", "{init}");
        client.notify(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        client
    }

    /// A POST of `message` with what every request of the session carries.
    fn post(&self, message: String) -> reqwest::RequestBuilder {
        let request = self
            .client
            .post(&self.url)
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(message);
        if self.session.is_empty() {
            request
        } else {
            request.header("mcp-session-id", &self.session)
        }
    }

    /// Sends a notification; its answer has no body that matters.
    fn notify(&mut self, message: String) {
        let request = self.post(message);
        self.runtime.block_on(async {
            let response = request.send().await.unwrap();
            assert!(response.status().is_success(), "HTTP {}", response.status());
            response.bytes().await.unwrap();
        });
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

    /// Sends the request and reads until its answer has come, as an SDK's
    /// client does (it resolves the call on the answer's event); the rest
    /// of the body (the stream's end) is read afterwards, so the
    /// connection stays open for the next request, and is not timed.
    fn exchange(&mut self, message: String, id: u64) -> Value {
        let request = self.post(message);
        let (result, body, response) = self.runtime.block_on(async {
            let mut response = request.send().await.unwrap();
            assert!(response.status().is_success(), "HTTP {}", response.status());
            if let Some(session) = response.headers().get("mcp-session-id") {
                self.session = session.to_str().unwrap().to_string();
            }
            let mut body = String::new();
            loop {
                let chunk = response
                    .chunk()
                    .await
                    .unwrap()
                    .unwrap_or_else(|| panic!("the body ended without the answer: {body:?}"));
                body.push_str(std::str::from_utf8(&chunk).unwrap());
                if let Some(result) = Self::answer(&body, id) {
                    return (result, body, response);
                }
            }
        });
        self.runtime.block_on(response.bytes()).unwrap();
        self.last_body = body;
        result
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let (message, id) = self.next(method, &params);
        self.exchange(message, id)
    }

    /// `count` timed `ping` round trips, after `warmup` unmeasured ones.
    pub fn pings(&mut self, warmup: usize, count: usize) -> Vec<Duration> {
        let mut samples = Vec::with_capacity(count);
        for i in 0..warmup + count {
            let (message, id) = self.next("ping", &json!({}));
            let start = Instant::now();
            let result = self.exchange(message, id);
            let elapsed = start.elapsed();
            assert!(result.is_object(), "ping: {result}");
            if i >= warmup {
                samples.push(elapsed);
            }
        }
        samples
    }

    /// `count` timed requests the server answers before MCP is involved
    /// (a path it does not serve: 404), on the same connection: what any
    /// HTTP request costs here, client, loopback TCP and server together.
    pub fn http_floor(&mut self, warmup: usize, count: usize) -> Vec<Duration> {
        let url = self.url.replace("/mcp", "/not-served");
        let mut samples = Vec::with_capacity(count);
        for i in 0..warmup + count {
            let request = self.client.get(&url).bearer_auth(TOKEN);
            let start = Instant::now();
            let status = self.runtime.block_on(async {
                let response = request.send().await.unwrap();
                let status = response.status();
                response.bytes().await.unwrap();
                status
            });
            let elapsed = start.elapsed();
            assert_eq!(status, 404);
            if i >= warmup {
                samples.push(elapsed);
            }
        }
        samples
    }

    /// One timed `tools/call`, from the POST to the parsed answer; the
    /// answer is handed to `check` after the clock stops.
    pub fn timed_call(&mut self, params: &Value, check: fn(&Value)) -> Duration {
        let (message, id) = self.next("tools/call", params);
        let start = Instant::now();
        let result = self.exchange(message, id);
        let elapsed = start.elapsed();
        check(&result);
        elapsed
    }
}
