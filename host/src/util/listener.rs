//! The sockets toolcell's HTTP servers (the page, MCP over HTTP) answer
//! on: each accepted connection sends at once. With Nagle's algorithm on,
//! an answer written in two pieces (headers, then the body or an event)
//! waits for the client's delayed acknowledgement, about 40 ms on Linux,
//! on every request of a kept-alive connection.

use axum::serve::{ListenerExt, TapIo};
use tokio::net::{TcpListener, TcpStream};

/// `listener`, with `TCP_NODELAY` set on each connection it accepts.
pub fn sending_at_once(listener: TcpListener) -> TapIo<TcpListener, fn(&mut TcpStream)> {
    listener.tap_io(no_delay)
}

fn no_delay(stream: &mut TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!("cannot set TCP_NODELAY on a connection: {e}");
    }
}
