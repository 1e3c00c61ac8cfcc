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
