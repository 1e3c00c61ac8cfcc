//! A small HTTP/1.1 server on 127.0.0.1 answering fixed routes, for tests
//! of what tools (and `tools add`) fetch. Each answer closes its connection.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;

/// One canned answer: status, headers, body.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// Serves the routes `routes(port)` gives (by path; others are 404) until
/// the test process ends; returns the port.
pub fn serve(routes: impl FnOnce(u16) -> HashMap<String, Answer>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let routes = Arc::new(routes(port));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let routes = routes.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    return;
                }
                loop {
                    let mut header = String::new();
                    match reader.read_line(&mut header) {
                        Ok(0) | Err(_) => break,
                        Ok(_) if header.trim().is_empty() => break,
                        Ok(_) => {}
                    }
                }
                let path = request.split_whitespace().nth(1).unwrap_or("/");
                let (status, headers, body) =
                    routes
                        .get(path)
                        .cloned()
                        .unwrap_or((404, vec![], b"not here".to_vec()));
                let mut head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            });
        }
    });
    port
}

/// A 200 answer with a content type.
pub fn typed(content_type: &str, body: impl Into<Vec<u8>>) -> Answer {
    (
        200,
        vec![("content-type".into(), content_type.into())],
        body.into(),
    )
}

/// A 302 to `to`.
pub fn redirect(to: String) -> Answer {
    (302, vec![("location".into(), to)], Vec::new())
}
