//! A fake model server on 127.0.0.1 that speaks the exact wire formats
//! (Ollama's NDJSON, the OpenAI-compatible SSE) from a script of replies,
//! and records every request it receives. Each connection takes the next
//! reply of the script; a reply is written in pieces, with pauses between
//! them, so streams can be split anywhere, cut off or stalled.

#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A piece of a reply's body.
#[derive(Debug, Clone)]
pub enum Part {
    Bytes(Vec<u8>),
    /// Wait before the next piece.
    Pause(Duration),
    /// Send nothing more and keep the connection open (a stalled server).
    Stall,
    /// Send these bytes again and again until the client hangs up (a
    /// stream that never ends).
    Forever(Vec<u8>),
}

/// One scripted HTTP reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub parts: Vec<Part>,
}

impl Reply {
    /// A streamed 200 reply whose body is `chunks`, written one by one.
    pub fn stream(content_type: &'static str, chunks: Vec<String>) -> Self {
        Self {
            status: 200,
            content_type,
            parts: chunks
                .into_iter()
                .map(|c| Part::Bytes(c.into_bytes()))
                .collect(),
        }
    }

    /// An error reply with a JSON body.
    pub fn error(status: u16, body: Value) -> Self {
        Self::json(status, body)
    }

    /// A reply with a JSON body.
    pub fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            content_type: "application/json",
            parts: vec![Part::Bytes(body.to_string().into_bytes())],
        }
    }

    /// The same reply with its body cut into pieces of `size` bytes
    /// (splitting lines, events and UTF-8 characters anywhere).
    pub fn rechunked(mut self, size: usize) -> Self {
        let bytes: Vec<u8> = self
            .parts
            .iter()
            .flat_map(|p| match p {
                Part::Bytes(b) => b.clone(),
                _ => Vec::new(),
            })
            .collect();
        self.parts = bytes
            .chunks(size)
            .flat_map(|c| {
                [
                    Part::Bytes(c.to_vec()),
                    Part::Pause(Duration::from_millis(1)),
                ]
            })
            .collect();
        self
    }

    /// Adds a piece at the end.
    pub fn then(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// The running server.
pub struct ModelServer {
    pub url: String,
    script: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Request>>>,
    probes: Arc<Mutex<Vec<Request>>>,
    descriptions: Descriptions,
}

/// The answers to the requests that describe a model, by path.
type Descriptions = Arc<Mutex<HashMap<String, Value>>>;

/// Whether `path` asks about a model rather than chats with it: such
/// requests are answered apart from the script (from [`ModelServer::describe`],
/// else 404) and recorded apart ([`ModelServer::probes`]).
fn is_probe(path: &str) -> bool {
    path == "/api/show" || path == "/props" || path.ends_with("/models")
}

impl ModelServer {
    /// Starts a server that answers with `replies`, in order.
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let script = Arc::new(Mutex::new(VecDeque::from(replies)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let probes = Arc::new(Mutex::new(Vec::new()));
        let descriptions = Descriptions::default();
        let server = Self {
            url,
            script: script.clone(),
            requests: requests.clone(),
            probes: probes.clone(),
            descriptions: descriptions.clone(),
        };
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (s, r, p, d) = (
                    script.clone(),
                    requests.clone(),
                    probes.clone(),
                    descriptions.clone(),
                );
                std::thread::spawn(move || serve(stream, &s, &r, &p, &d));
            }
        });
        server
    }

    /// Answers requests to `path` (`/api/show`, `/props`, `/v1/models`)
    /// with `body`, as often as they come.
    pub fn describe(&self, path: &str, body: Value) {
        self.descriptions
            .lock()
            .unwrap()
            .insert(path.to_string(), body);
    }

    /// Every request that asked about a model.
    pub fn probes(&self) -> Vec<Request> {
        self.probes.lock().unwrap().clone()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Replies not used yet.
    pub fn unused(&self) -> usize {
        self.script.lock().unwrap().len()
    }

    /// Waits (up to a generous limit) until `n` requests arrived.
    pub fn wait_for_requests(&self, n: usize) {
        for _ in 0..2000 {
            if self.requests.lock().unwrap().len() >= n {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the model server never received {n} requests");
    }
}

/// Rewrites the `n`th request (0-based) before a proxy forwards it.
pub type Rewrite = dyn Fn(usize, &mut Value) + Send + Sync;

impl ModelServer {
    /// A recording proxy in front of a real server at `upstream`
    /// (`http://host:port`): each request is recorded, passed through
    /// `rewrite`, and forwarded; the upstream's reply is copied back byte
    /// for byte as it arrives.
    pub fn proxy(upstream: &str, rewrite: Box<Rewrite>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let probes = Arc::new(Mutex::new(Vec::new()));
        let rewrite: Arc<Rewrite> = Arc::from(rewrite);
        let (r, p) = (requests.clone(), probes.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (r, p, rewrite, upstream) =
                    (r.clone(), p.clone(), rewrite.clone(), upstream.clone());
                std::thread::spawn(move || forward(stream, &upstream, &r, &p, &*rewrite));
            }
        });
        Self {
            url,
            script: Arc::new(Mutex::new(VecDeque::new())),
            requests,
            probes,
            descriptions: Descriptions::default(),
        }
    }
}

/// Reads one HTTP request: its path, headers and JSON body.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return None;
    }
    let mut words = request_line.split_whitespace();
    let method = words.next().unwrap_or("").to_string();
    let path = words.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                length = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

fn forward(
    client: TcpStream,
    upstream: &str,
    requests: &Mutex<Vec<Request>>,
    probes: &Mutex<Vec<Request>>,
    rewrite: &Rewrite,
) {
    let _ = client.set_nodelay(true);
    let mut reader = BufReader::new(client.try_clone().expect("clone stream"));
    let Some(mut request) = read_request(&mut reader) else {
        return;
    };
    let body = if is_probe(&request.path) {
        probes.lock().unwrap().push(request.clone());
        if request.method == "GET" {
            String::new()
        } else {
            request.body.to_string()
        }
    } else {
        let n = {
            let mut all = requests.lock().unwrap();
            all.push(request.clone());
            all.len() - 1
        };
        rewrite(n, &mut request.body);
        request.body.to_string()
    };
    let Ok(mut server) = TcpStream::connect(upstream) else {
        return;
    };
    let head = format!(
        "{} {} HTTP/1.1\r\nHost: {upstream}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        request.method,
        request.path,
        body.len()
    );
    if server
        .write_all(head.as_bytes())
        .and_then(|()| server.write_all(body.as_bytes()))
        .is_err()
    {
        return;
    }
    let mut client = client;
    let _ = std::io::copy(&mut server, &mut client);
}

fn serve(
    stream: TcpStream,
    script: &Mutex<VecDeque<Reply>>,
    requests: &Mutex<Vec<Request>>,
    probes: &Mutex<Vec<Request>>,
    descriptions: &Mutex<HashMap<String, Value>>,
) {
    // Pieces go out as written, as a streaming server sends them.
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    let reply = if is_probe(&request.path) {
        let described = descriptions.lock().unwrap().get(&request.path).cloned();
        probes.lock().unwrap().push(request);
        match described {
            Some(body) => Reply::json(200, body),
            None => Reply::error(404, json!({"error": "not found"})),
        }
    } else {
        requests.lock().unwrap().push(request);
        next_reply(script)
    };
    write_reply(stream, reply);
}

/// The next scripted reply, or a 500 when the script is used up.
fn next_reply(script: &Mutex<VecDeque<Reply>>) -> Reply {
    script.lock().unwrap().pop_front().unwrap_or_else(|| {
        Reply::error(
            500,
            json!({"error": "the fake server has no reply scripted for this request"}),
        )
    })
}

fn write_reply(mut stream: TcpStream, reply: Reply) {
    let head = format!(
        "HTTP/1.1 {} X\r\nContent-Type: {}\r\nConnection: close\r\n\r\n",
        reply.status, reply.content_type
    );
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    for part in reply.parts {
        match part {
            Part::Bytes(bytes) => {
                if stream
                    .write_all(&bytes)
                    .and_then(|()| stream.flush())
                    .is_err()
                {
                    return;
                }
            }
            Part::Pause(d) => std::thread::sleep(d),
            Part::Stall => {
                std::thread::sleep(Duration::from_secs(600));
                return;
            }
            Part::Forever(bytes) => {
                // Batched so the client reads at full speed.
                let batch = bytes.repeat((64 * 1024 / bytes.len().max(1)).max(1));
                while stream.write_all(&batch).is_ok() {}
                return;
            }
        }
    }
}

/// Ollama's `/api/chat` NDJSON lines.
pub mod ollama {
    use super::*;

    pub const CONTENT_TYPE: &str = "application/x-ndjson";

    pub fn content(text: &str) -> String {
        format!(
            "{}\n",
            json!({"model": "fake", "message": {"role": "assistant", "content": text}, "done": false})
        )
    }

    pub fn thinking(text: &str) -> String {
        format!(
            "{}\n",
            json!({"model": "fake", "message": {"role": "assistant", "content": "", "thinking": text}, "done": false})
        )
    }

    /// One line carrying whole calls: `(id, name, arguments)`; an empty id is left out.
    pub fn calls(calls: &[(&str, &str, Value)]) -> String {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (id, name, args))| {
                let mut call = json!({"function": {"index": i, "name": name, "arguments": args}});
                if !id.is_empty() {
                    call["id"] = json!(id);
                }
                call
            })
            .collect();
        format!(
            "{}\n",
            json!({"model": "fake", "message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": false})
        )
    }

    pub fn done() -> String {
        format!(
            "{}\n",
            json!({"model": "fake", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5})
        )
    }

    pub fn error_line(message: &str) -> String {
        format!("{}\n", json!({"error": message}))
    }

    /// A whole reply: `lines` then the done line.
    pub fn reply(mut lines: Vec<String>) -> Reply {
        lines.push(done());
        Reply::stream(CONTENT_TYPE, lines)
    }

    /// A reply that only answers `text`.
    pub fn answer(text: &str) -> Reply {
        reply(vec![content(text)])
    }
}

/// The OpenAI-compatible `/v1/chat/completions` SSE events.
pub mod openai {
    use super::*;

    pub const CONTENT_TYPE: &str = "text/event-stream";

    fn event(delta: Value, finish: Option<&str>) -> String {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "fake",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    }

    pub fn content(text: &str) -> String {
        event(json!({"content": text}), None)
    }

    pub fn reasoning(text: &str) -> String {
        event(json!({"reasoning_content": text}), None)
    }

    /// The first fragment of a call: index, id, name and empty arguments,
    /// as llama-server and vLLM send it.
    pub fn call_start(index: u64, id: &str, name: &str) -> String {
        event(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        )
    }

    /// A later fragment: more argument text for the call at `index`.
    pub fn call_args(index: u64, text: &str) -> String {
        event(
            json!({"tool_calls": [{"index": index, "function": {"arguments": text}}]}),
            None,
        )
    }

    /// A whole call in one fragment.
    pub fn call_whole(index: u64, id: &str, name: &str, args: &str) -> String {
        event(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": args}}]}),
            None,
        )
    }

    pub fn finish(reason: &str) -> String {
        event(json!({}), Some(reason))
    }

    pub fn done() -> String {
        "data: [DONE]\n\n".to_string()
    }

    /// A whole reply: `events`, then the finish reason and `[DONE]`.
    pub fn reply(mut events: Vec<String>, reason: &str) -> Reply {
        events.push(finish(reason));
        events.push(done());
        Reply::stream(CONTENT_TYPE, events)
    }

    pub fn answer(text: &str) -> Reply {
        reply(vec![content(text)], "stop")
    }
}
