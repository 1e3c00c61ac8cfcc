//! `[[mcp_server]] url = …` end to end: toolcell as the client of MCP
//! servers that already run and speak Streamable HTTP — the reference
//! `server-everything` in its HTTP mode (from npm, installed and cached by
//! `tests/support/mcp-peers.sh`), `toolcell mcp --http` with its token, and
//! a bare listener that shows what a request carries.

use crate::harness::Workspace;
use crate::mcp::{Session, text};
use crate::mcp_client::{EVERYTHING_CORNERS, assert_everything_corners};
use crate::mcp_http::Server;
use serde_json::json;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Stdio};
use std::time::Duration;

/// `server-everything streamableHttp` on `port`, stopped when dropped.
struct Everything(Child);

impl Everything {
    /// Starts it and waits until it listens.
    fn start(port: u16) -> Self {
        let script = crate::mcp_client::peer("server-everything");
        let mut child = std::process::Command::new("node")
            .args([script.as_str(), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut said = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while !line.contains("listening on port") {
            line.clear();
            assert!(
                said.read_line(&mut line).unwrap() > 0,
                "server-everything ended before it listened"
            );
        }
        // Keep reading what it says, so it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut said, &mut std::io::sink()));
        Self(child)
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port free now on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_everything_server_over_http_gives_results_errors_and_timeouts_and_is_reconnected_after_a_restart()
 {
    let port = free_port();
    let everything = Everything::start(port);
    let ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &format!(
            "[[mcp_server]]\nname = \"ev\"\nurl = \"http://127.0.0.1:{port}/mcp\"\napproval = \"auto\"\ntimeout = \"2s\"\n"
        ),
    );
    let list = ws.run(&["tools", "list", "--json"]);
    assert_eq!(list.code, 0, "{list:?}");
    let tools = list.json();
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ev__echo")
        .unwrap_or_else(|| panic!("no ev__echo in {tools}"));
    assert_eq!(echo["source"], "mcp:ev");

    ws.write("corners.rhai", EVERYTHING_CORNERS);
    let run = ws.run(&["run", "corners.rhai", "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = &run.json()["result"];
    assert_everything_corners(out);
    let slow = out["slow"].as_str().unwrap();
    assert!(slow.contains("its session was ended"), "{slow}");

    // One long-lived session (toolcell serving its tools over stdio): the
    // server goes away between calls, then comes back.
    let mut session = Session::start(&ws, &[]);
    let first = session.call("ev__echo", json!({"message": "one"}));
    assert_eq!(text(&first), "Echo: one", "{first}");
    drop(everything);
    let gone = session.call("ev__echo", json!({"message": "two"}));
    assert_eq!(gone["isError"], true, "{gone}");
    let said = text(&gone);
    assert!(
        said.contains("the MCP server `ev`") && said.contains("Connection refused"),
        "{said}"
    );
    let _everything = Everything::start(port);
    let back = session.call("ev__echo", json!({"message": "three"}));
    assert_eq!(
        text(&back),
        "Echo: three",
        "a new session once it is back: {back}"
    );
}

#[test]
fn the_token_comes_from_the_environment_and_a_missing_or_wrong_one_is_said_plainly() {
    const TOKEN: &str = "a-token-of-thirty-two-characters-at-least";
    let server_side = Workspace::new();
    server_side.write("notes/plan.md", "ship it\n");
    let server = Server::start(&server_side, Some(TOKEN));

    let mut ws = Workspace::new();
    ws.write(
        "toolcell.toml",
        &format!(
            "[[mcp_server]]\nname = \"peer\"\nurl = \"{}\"\nbearer_token_env_var = \"PEER_TOKEN\"\napproval = \"auto\"\n",
            server.url
        ),
    );
    let args = [
        "tools",
        "call",
        "peer__read_file",
        "--args",
        r#"{"path":"notes/plan.md"}"#,
    ];

    let missing = ws.run(&args);
    assert_ne!(missing.code, 0);
    assert!(
        missing.stderr.contains(
            "the environment variable `PEER_TOKEN` (its `bearer_token_env_var`) is not set"
        ),
        "{missing:?}"
    );

    ws.env("PEER_TOKEN", "not-the-token-the-server-printed-at-all");
    let wrong = ws.run(&args);
    assert_ne!(wrong.code, 0);
    assert!(
        wrong
            .stderr
            .contains("HTTP 401 Unauthorized (the token sent was refused)"),
        "{wrong:?}"
    );

    ws.env("PEER_TOKEN", TOKEN);
    let read = ws.run(&[&args[..], &["--json"]].concat());
    assert_eq!(read.code, 0, "{read:?}");
    assert!(read.stdout.contains("ship it"), "{read:?}");
    // The server recorded the call as its own (a read is recorded just
    // after its answer).
    let recorded = std::time::Instant::now();
    loop {
        let runs = server_side.run(&["runs", "list", "--json"]);
        if runs.stdout.contains("read_file") {
            break;
        }
        assert!(
            recorded.elapsed() < Duration::from_secs(20),
            "the server never recorded the call: {runs:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn only_a_trusted_config_connects_and_every_request_carries_the_headers_named_by_variable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let config = format!(
        "[[mcp_server]]\nname = \"far\"\nurl = \"http://{address}/mcp\"\nbearer_token_env_var = \"FAR_TOKEN\"\nenv_http_headers = {{ \"X-Api-Key\" = \"FAR_KEY\" }}\nstartup_timeout = \"5s\"\n"
    );
    let mut ws = Workspace::new();
    ws.env("FAR_TOKEN", "token-from-the-environment");
    ws.env("FAR_KEY", "key-from-the-environment");

    // A config found as it is (not trusted) hands no secret to anyone.
    ws.write_untrusted("toolcell.toml", &config);
    let untrusted = ws.run(&["tools", "list"]);
    assert!(
        untrusted
            .stderr
            .contains(&format!(
                "the MCP server `far`: http://{address}/mcp, sent $FAR_TOKEN as its bearer token, $FAR_KEY as X-Api-Key"
            )),
        "{untrusted:?}"
    );
    listener.set_nonblocking(true).unwrap();
    assert!(
        listener.accept().is_err(),
        "an untrusted config connected to its server"
    );
    listener.set_nonblocking(false).unwrap();

    let seen = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).unwrap();
            assert!(n > 0, "the request ended early");
            request.extend_from_slice(&chunk[..n]);
        }
        let page = "<html>upstream is down</html>";
        write!(
            stream,
            "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        )
        .unwrap();
        String::from_utf8_lossy(&request).into_owned()
    });
    ws.write("toolcell.toml", &config);
    let list = ws.run(&["tools", "list"]);
    let request = seen.join().unwrap().to_ascii_lowercase();
    assert!(request.starts_with("post /mcp http/1.1"), "{request}");
    assert!(
        request.contains("authorization: bearer token-from-the-environment"),
        "{request}"
    );
    assert!(
        request.contains("x-api-key: key-from-the-environment"),
        "{request}"
    );
    assert!(
        list.stderr
            .contains("HTTP 502 Bad Gateway: <html>upstream is down</html>"),
        "{list:?}"
    );
    assert!(
        list.stderr.contains("its tools are not available"),
        "{list:?}"
    );
}
