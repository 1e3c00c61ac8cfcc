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

/// One session of the Python SDK's client: the tools, and one call.
fn python_client(server: &Server, token: &str, tool: &str, arguments: Value) -> Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mcp/http_client.py"
    );
    let out = std::process::Command::new(crate::mcp_peers::python())
        .args([script, &server.url, token, tool, &arguments.to_string()])
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
