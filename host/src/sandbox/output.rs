//! Captured stdout/stderr of a tool: kept up to a cap, the rest counted and
//! dropped.
//!
//! A tool's output never reaches the terminal or the model directly; it is
//! kept for the user's logs. Writes past the cap succeed (so a chatty tool
//! does not fail because of its logging) but only their size is recorded.

use bytes::Bytes;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// How much a write may hand over at once; matches wasmtime's own pipes.
const WRITE_BUDGET: usize = 64 * 1024;

#[derive(Debug, Default)]
struct Buffer {
    kept: Vec<u8>,
    dropped: u64,
}

/// One captured stream; clones share the buffer.
#[derive(Debug, Clone)]
pub struct CappedOutput {
    cap: usize,
    buffer: Arc<Mutex<Buffer>>,
}

/// What a tool wrote to one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedOutput {
    pub text: String,
    /// Bytes written past the cap and dropped.
    pub dropped: u64,
}

impl CappedOutput {
    pub fn new(cap: usize) -> Self {
        Self {
            cap,
            buffer: Arc::default(),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let room = self.cap.saturating_sub(buffer.kept.len());
        let kept = bytes.len().min(room);
        buffer.kept.extend_from_slice(&bytes[..kept]);
        buffer.dropped += (bytes.len() - kept) as u64;
    }

    /// What was captured so far.
    pub fn captured(&self) -> CapturedOutput {
        let buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        CapturedOutput {
            text: String::from_utf8_lossy(&buffer.kept).into_owned(),
            dropped: buffer.dropped,
        }
    }
}

#[async_trait::async_trait]
impl Pollable for CappedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CappedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_BUDGET)
    }
}

impl tokio::io::AsyncWrite for CappedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for CappedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_cap_and_counts_the_rest() {
        let out = CappedOutput::new(4);
        out.push(b"abc");
        out.push(b"defg");
        let captured = out.captured();
        assert_eq!(captured.text, "abcd");
        assert_eq!(captured.dropped, 3);
    }
}
