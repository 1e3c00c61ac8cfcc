//! Without a grant a tool gets no environment variables, no sockets and no
//! HTTP; with one it gets exactly what was granted.

use crate::harness::Workspace;
use serde_json::json;
use std::net::TcpListener;
use std::time::Duration;

#[test]
fn environment_variables_only_when_granted() {
    let mut ws = Workspace::new();
    ws.install_probe();
    ws.env("PROBE_VISIBLE", "granted-value");
    ws.env("TOOLCELL_TEST_SECRET", "must-not-leak");

    let (code, envelope) = ws.call("probe", json!({"action": "env"}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(
        envelope["result"]["vars"],
        json!([]),
        "no grant, no variables: {envelope}"
    );

    // The manifest asks for PROBE_VISIBLE; the config grants it.
    ws.write(
        "toolcell.toml",
        "[tools.probe]\nenv = [\"PROBE_VISIBLE\"]\n",
    );
    let (code, envelope) = ws.call("probe", json!({"action": "env"}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(
        envelope["result"]["vars"],
        json!(["PROBE_VISIBLE=granted-value"])
    );

    // Granting what the manifest does not ask for is a config error.
    ws.write(
        "toolcell.toml",
        "[tools.probe]\nenv = [\"TOOLCELL_TEST_SECRET\"]\n",
    );
    let (code, envelope) = ws.call("probe", json!({"action": "env"}));
    assert_eq!(code, 1, "{envelope}");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "tools.probe.env grants `TOOLCELL_TEST_SECRET`, which the tool does not ask for"
        ),
        "{message}"
    );
}

/// A listener on 127.0.0.1 that must never see a connection.
fn untouched_listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    (listener, addr)
}

fn assert_untouched(listener: &TcpListener) {
    std::thread::sleep(Duration::from_millis(50));
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the listener was reached: {other:?}"),
    }
}

#[test]
fn sockets_are_refused_without_a_grant() {
    let ws = Workspace::new();
    ws.install_probe();
    let (listener, addr) = untouched_listener();
    let (code, envelope) = ws.call("probe", json!({"action": "socket", "addr": addr}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(envelope["result"]["connected"], false, "{envelope}");
    assert_untouched(&listener);
}

#[test]
fn http_is_linked_but_refused_without_a_grant() {
    let ws = Workspace::new();
    ws.install_probe();
    let (listener, addr) = untouched_listener();
    let url = format!("http://{addr}/");
    let (code, envelope) = ws.call("probe", json!({"action": "http", "url": url}));
    assert_eq!(code, 0, "{envelope}");
    assert_eq!(envelope["result"]["ok"], false, "{envelope}");
    assert!(
        envelope["result"]["error"]
            .as_str()
            .unwrap()
            .contains("HttpRequestDenied"),
        "{envelope}"
    );
    assert_untouched(&listener);
}

/// An HTTP server on 127.0.0.1: `/small` (200, 5 bytes), `/big` (200, over
/// the response cap), `/redirect` (302 to `location`).
fn web_server(location: String) -> u16 {
    use crate::http_server::{redirect, serve, typed};
    serve(|_| {
        std::collections::HashMap::from([
            ("/small".to_string(), typed("text/plain", "hello")),
            ("/redirect".to_string(), redirect(location)),
            (
                "/big".to_string(),
                typed("text/plain", vec![b'x'; 40 * 1024 * 1024]),
            ),
        ])
    })
}

#[test]
fn http_reaches_only_the_granted_host_and_port_and_responses_are_capped() {
    let (other_port_listener, other_addr) = untouched_listener();
    let redirect_to = "http://localhost:9/small".to_string();
    let port = web_server(redirect_to);
    let granted = format!("127.0.0.1:{port}");
    // The probe, asking for exactly that host and port.
    let ws = Workspace::new();
    let probe = crate::fixture::probe();
    let tool_dir = ws.outer.join("probe-net");
    std::fs::create_dir(&tool_dir).unwrap();
    let manifest = std::fs::read_to_string(probe.folder.join("tool.toml"))
        .unwrap()
        .replace(
            "env = [\"PROBE_VISIBLE\"]",
            &format!("env = [\"PROBE_VISIBLE\"]\nnetwork = [\"{granted}\"]"),
        )
        .replace("timeout_ms = 2000", "timeout_ms = 20000");
    std::fs::write(tool_dir.join("tool.toml"), manifest).unwrap();
    std::fs::copy(&probe.wasm, tool_dir.join("probe.wasm")).unwrap();
    let add = ws.run(&["tools", "add", "--yes", tool_dir.to_str().unwrap()]);
    assert_eq!(add.code, 0, "{add:?}");
    ws.write(
        "toolcell.toml",
        &format!("[tools.probe]\nnetwork = [\"{granted}\"]\n"),
    );
    let get = |url: String, follow: bool| {
        let (code, envelope) = ws.call(
            "probe",
            json!({"action": "http", "url": url, "follow": follow}),
        );
        assert_eq!(code, 0, "{envelope}");
        envelope["result"].clone()
    };

    // The granted host and port: fetched, body and all.
    let small = get(format!("http://{granted}/small"), false);
    assert_eq!(small["ok"], true, "{small}");
    assert_eq!(small["status"], 200);
    assert_eq!(small["bytes"], 5);

    // Another port of the same host: refused before any connection.
    let other = get(format!("http://{other_addr}/small"), false);
    assert!(
        other["error"]
            .as_str()
            .unwrap()
            .contains("HttpRequestDenied"),
        "{other}"
    );
    assert_untouched(&other_port_listener);

    // Another host name: refused.
    let by_name = get(format!("http://localhost:{port}/small"), false);
    assert!(
        by_name["error"]
            .as_str()
            .unwrap()
            .contains("HttpRequestDenied"),
        "{by_name}"
    );

    // A redirect is not followed by the host; following it to a host that
    // is not granted is refused.
    let redirected = get(format!("http://{granted}/redirect"), true);
    assert_eq!(redirected["first"]["status"], 302, "{redirected}");
    assert!(
        redirected["followed"]["error"]
            .as_str()
            .unwrap()
            .contains("HttpRequestDenied"),
        "{redirected}"
    );

    // A response over the cap ends in an error, having passed at most the cap.
    let big = get(format!("http://{granted}/big"), false);
    assert_eq!(big["ok"], false, "{big}");
    assert!(big["error"].as_str().unwrap().contains("size"), "{big}");
    assert!(big["bytes"].as_u64().unwrap() <= 32 * 1024 * 1024, "{big}");
}
