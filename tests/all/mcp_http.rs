//! `toolcell mcp --http` end to end: the official MCP Python SDK, as a
//! client over Streamable HTTP, lists the tools and calls them with the same
//! policy and records as over stdio; raw requests check that the token,
//! the `Host` and the `Origin` are required, and that it will not listen
//! beyond loopback unless told to.

use crate::harness::Workspace;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};

/// `toolcell mcp --http 127.0.0.1:0`, stopped when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`
    pub url: String,
    /// The token it printed, if it made one.
    token: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn start(ws: &Workspace, token_env: Option<&str>) -> Self {
        let mut command = ws.command(&["mcp", "--http", "127.0.0.1:0"]);
        if let Some(token) = token_env {
            command.env("TOOLCELL_MCP_TOKEN", token);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut said = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        said.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("toolcell mcp: serving ")
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        let token = token_env.is_none().then(|| {
            let mut line = String::new();
            said.read_line(&mut line).unwrap();
            line.split_whitespace().nth(3).unwrap().to_string()
        });
        Self { child, url, token }
    }

    /// One raw HTTP/1.1 POST of a ping: the answer's status.
    fn raw_ping(&self, headers: &[(&str, &str)]) -> u16 {
        let address = self
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !headers.iter().any(|(k, _)| *k == "Host") {
            request.push_str(&format!("Host: {address}\r\n"));
        }
        for (key, value) in headers {
            request.push_str(&format!("{key}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status in {answer:?}"))
    }
}

/// One session of the Python SDK's client: the tools, and one call. With
/// `answer` (`accept` or `decline`) the client can ask its user, and its
/// user answers so.
fn python_client(
    server: &Server,
    token: &str,
    tool: &str,
    arguments: Value,
    answer: Option<&str>,
) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mcp/http_client.py"
    );
    let arguments = arguments.to_string();
    let mut args = vec![script, &server.url, token, tool, &arguments];
    args.extend(answer);
    let out = std::process::Command::new(crate::mcp_peers::python())
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[test]
fn the_python_sdk_calls_the_tools_over_http_with_the_same_policy_and_records() {
    let ws = Workspace::new();
    ws.write("notes/today.md", "# Today\nhttp works\n");
    let server = Server::start(&ws, None);
    let token = server.token.clone().unwrap();
    assert_eq!(token.len(), 64);

    let seen = python_client(
        &server,
        &token,
        "read_file",
        json!({"path": "notes/today.md"}),
        None,
    );
    assert_eq!(seen["server"], "toolcell");
    assert!(
        seen["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("write_file"))
    );
    assert_eq!(seen["is_error"], false);
    assert_eq!(seen["structured"]["content"], "# Today\nhttp works\n");

    // A change asks; this client cannot be asked, so it is refused, as over
    // stdio, and nothing is written.
    let refused = python_client(
        &server,
        &token,
        "write_file",
        json!({"path": "notes/new.md", "content": "x"}),
        None,
    );
    assert_eq!(refused["is_error"], true, "{refused}");
    assert!(
        refused["text"][0]
            .as_str()
            .unwrap()
            .contains("--approve write_file"),
        "{refused}"
    );
    assert!(!ws.root.join("notes/new.md").exists());
    assert_eq!(refused["asked"], json!([]));

    let runs = ws.run(&["runs", "list", "--json"]).json();
    let titles: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"mcp: read_file") && titles.contains(&"mcp: write_file"),
        "{titles:?}"
    );
}

#[test]
fn without_the_token_from_another_host_or_origin_it_is_refused() {
    let ws = Workspace::new();
    let chosen = "c".repeat(40);
    let server = Server::start(&ws, Some(&chosen));
    assert!(server.token.is_none(), "a chosen token is not printed");
    let bearer = format!("Bearer {chosen}");
    assert_eq!(server.raw_ping(&[("Authorization", &bearer)]), 200);
    assert_eq!(server.raw_ping(&[]), 401);
    assert_eq!(server.raw_ping(&[("Authorization", "Bearer wrong")]), 401);
    assert_eq!(
        server.raw_ping(&[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example")
        ]),
        403
    );
    // DNS rebinding: a name that resolves here, in another site's name.
    let port = server
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .to_string();
    assert_eq!(
        server.raw_ping(&[
            ("Authorization", &bearer),
            ("Host", &format!("evil.example:{port}"))
        ]),
        403
    );

    let wide = ws.run(&["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(wide.code, 1, "{wide:?}");
    assert!(wide.stderr.contains("--http-beyond-loopback"), "{wide:?}");
    let mut short = ws.command(&["mcp", "--http", "127.0.0.1:0"]);
    let short = short.env("TOOLCELL_MCP_TOKEN", "abc").output().unwrap();
    assert_eq!(short.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&short.stderr).contains("at least 32"),
        "{short:?}"
    );
}

#[test]
fn a_client_that_can_ask_its_user_is_asked_over_http_and_only_what_it_accepts_is_done() {
    let ws = Workspace::new();
    ws.write("notes/today.md", "as it was\n");
    let server = Server::start(&ws, None);
    let token = server.token.clone().unwrap();
    let write = |content: &str, answer: &str| {
        python_client(
            &server,
            &token,
            "write_file",
            json!({"path": "notes/today.md", "content": content}),
            Some(answer),
        )
    };

    let declined = write("declined\n", "decline");
    assert_eq!(declined["is_error"], true, "{declined}");
    let asked = declined["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{declined}");
    assert!(
        asked[0].as_str().unwrap().contains("write_file"),
        "{declined}"
    );
    assert_eq!(ws.read("notes/today.md"), "as it was\n");

    let accepted = write("accepted\n", "accept");
    assert_eq!(accepted["is_error"], false, "{accepted}");
    assert_eq!(accepted["asked"].as_array().unwrap().len(), 1, "{accepted}");
    assert_eq!(ws.read("notes/today.md"), "accepted\n");

    // A read needs no one's word, even where the client could be asked.
    let read = python_client(
        &server,
        &token,
        "read_file",
        json!({"path": "notes/today.md"}),
        Some("decline"),
    );
    assert_eq!(read["asked"], json!([]), "{read}");
    assert_eq!(read["structured"]["content"], "accepted\n", "{read}");
}

/// One raw HTTP/1.1 POST of `body` in `session`: the answer's status, headers
/// and body.
fn raw_post(
    server: &Server,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> (u16, String, String) {
    let address = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, rest) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), rest.to_string())
}

/// The JSON-RPC messages in the events of an answer's body (chunked or not).
fn events(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter(|data| !data.trim().is_empty())
        .map(|data| serde_json::from_str(data.trim()).unwrap_or_else(|e| panic!("{e}: {data:?}")))
        .collect()
}

#[test]
fn a_session_answers_each_call_with_exactly_its_own_result_and_ends_the_stream() {
    let ws = Workspace::new();
    ws.write("a.md", "first\n");
    ws.write("b.md", "second\n");
    let server = Server::start(&ws, None);
    let token = server.token.clone().unwrap();
    let (status, head, _) = raw_post(
        &server,
        &token,
        None,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    assert_eq!(status, 200);
    let session = head
        .lines()
        .find_map(|line| line.strip_prefix("mcp-session-id:"))
        .unwrap_or_else(|| panic!("no session in {head}"))
        .trim()
        .to_string();
    let (status, _, _) = raw_post(
        &server,
        &token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(status, 202);

    // Each answer's stream holds its one response and ends (the raw client
    // reads to the end), whatever the order of the calls.
    for (id, path, content) in [
        (7, "b.md", "second\n"),
        (3, "a.md", "first\n"),
        (9, "b.md", "second\n"),
    ] {
        let (status, _, body) = raw_post(
            &server,
            &token,
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "read_file", "arguments": {"path": path}}}),
        );
        assert_eq!(status, 200, "{body}");
        let answers = events(&body);
        assert_eq!(answers.len(), 1, "{body}");
        assert_eq!(answers[0]["id"], id, "{body}");
        assert_eq!(
            answers[0]["result"]["structuredContent"]["content"], content,
            "{body}"
        );
    }
    // A bad call is the tool's error, in the same way.
    let (_, _, body) = raw_post(
        &server,
        &token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "../outside"}}}),
    );
    let answers = events(&body);
    assert_eq!(answers[0]["id"], 11, "{body}");
    assert_eq!(answers[0]["result"]["isError"], true, "{body}");
    // A session that is not open is not found, shortcut or not.
    let (status, _, _) = raw_post(
        &server,
        &token,
        Some("no-such-session"),
        &json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "a.md"}}}),
    );
    assert_eq!(status, 404);
}
