//! A server's standard streams: stdout filtered to the JSON-RPC messages the
//! SDK reads (stray lines dropped and remembered), the tail of stderr kept,
//! for errors that say what the server printed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// The largest message accepted from a server: the SDK's own limit. A
/// longer line is dropped (and reported) instead of filling memory.
pub(super) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Lines of a server's stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 12;
/// Characters kept of one stray line, for error messages.
const LINE_SHOWN_CHARS: usize = 200;

/// What a server printed besides protocol messages, and how it ended.
#[derive(Default)]
pub(super) struct Diagnostics {
    stderr: VecDeque<String>,
    stray_lines: usize,
    last_stray: Option<String>,
    pub(super) exit: Option<String>,
}

impl Diagnostics {
    /// `; it exited (…); it wrote …; its stderr ends: …` for error messages.
    pub(super) fn describe(&self) -> String {
        let mut text = String::new();
        if let Some(exit) = &self.exit {
            text.push_str(&format!("; it {exit}"));
        }
        text.push_str(&self.describe_output());
        text
    }

    /// What it printed: stray stdout lines and the end of its stderr.
    pub(super) fn describe_output(&self) -> String {
        let mut text = String::new();
        if let Some(line) = &self.last_stray {
            text.push_str(&format!(
                "; it wrote {} line(s) on stdout that are not MCP messages, the last: `{line}`",
                self.stray_lines
            ));
        }
        if !self.stderr.is_empty() {
            let lines: Vec<&str> = self.stderr.iter().map(String::as_str).collect();
            text.push_str(&format!("; its stderr ends: {}", lines.join(" | ")));
        }
        text
    }
}

/// Passes the server's stdout on to the SDK line by line, dropping (and
/// remembering) lines that are not JSON objects: a log line printed to the
/// wrong stream must not end the session. A line over
/// [`MAX_MESSAGE_BYTES`] is skipped to its end, not kept in memory.
pub(super) async fn filter_stdout(
    stdout: tokio::process::ChildStdout,
    mut to_sdk: tokio::io::DuplexStream,
    diagnostics: Arc<Mutex<Diagnostics>>,
) {
    let mut lines = CappedLines::new(stdout, MAX_MESSAGE_BYTES);
    while let Some((line, cut)) = lines.next().await {
        let stray = if cut {
            Some(format!("(a line over {MAX_MESSAGE_BYTES} bytes)"))
        } else {
            let text = String::from_utf8_lossy(line);
            if is_json_object(&text) {
                let sent = async {
                    to_sdk.write_all(line).await?;
                    to_sdk.write_all(b"\n").await
                };
                if sent.await.is_err() {
                    return;
                }
                None
            } else if text.trim().is_empty() {
                None
            } else {
                Some(text.chars().take(LINE_SHOWN_CHARS).collect())
            }
        };
        if let Some(stray) = stray {
            tracing::debug!("MCP server stdout (not a message): {stray}");
            let mut d = diagnostics.lock().unwrap_or_else(|p| p.into_inner());
            d.stray_lines += 1;
            d.last_stray = Some(stray);
        }
    }
}

/// The lines of a stream, each kept up to `cap` bytes: what is past the
/// cap is read and dropped as it comes, so a line that never ends cannot
/// fill toolcell's memory.
pub(super) struct CappedLines<R> {
    reader: tokio::io::BufReader<R>,
    cap: usize,
    line: Vec<u8>,
}

impl<R: tokio::io::AsyncRead + Unpin> CappedLines<R> {
    fn new(stream: R, cap: usize) -> Self {
        Self {
            reader: tokio::io::BufReader::new(stream),
            cap,
            line: Vec::new(),
        }
    }

    /// The next whole line, without its newline, as kept, and whether it
    /// was longer than the cap; `None` at the end of the stream.
    async fn next(&mut self) -> Option<(&[u8], bool)> {
        self.line.clear();
        let mut cut = false;
        loop {
            let chunk = match self.reader.fill_buf().await {
                Ok([]) | Err(_) => return None,
                Ok(chunk) => chunk,
            };
            let (part, ended) = match memchr::memchr(b'\n', chunk) {
                Some(at) => (&chunk[..at], true),
                None => (chunk, false),
            };
            let room = self.cap.saturating_sub(self.line.len());
            cut |= part.len() > room;
            self.line.extend_from_slice(&part[..part.len().min(room)]);
            let used = part.len() + usize::from(ended);
            self.reader.consume(used);
            if ended {
                return Some((&self.line, cut));
            }
        }
    }
}

/// Whether `line` is meant as a message: it opens a JSON object. Whether
/// it parses is the SDK's to judge (it ignores unparsable lines): parsing
/// every message twice would cost the most on the largest results.
fn is_json_object(line: &str) -> bool {
    line.trim_start().starts_with('{')
}

/// Keeps the last lines of the server's stderr, each cut to
/// [`LINE_SHOWN_CHARS`].
pub(super) async fn keep_stderr(
    stderr: tokio::process::ChildStderr,
    diagnostics: Arc<Mutex<Diagnostics>>,
) {
    // Four bytes a character at most: enough for the characters shown.
    let mut lines = CappedLines::new(stderr, LINE_SHOWN_CHARS * 4);
    while let Some((line, _)) = lines.next().await {
        let text: String = String::from_utf8_lossy(line)
            .chars()
            .take(LINE_SHOWN_CHARS)
            .collect();
        tracing::debug!("MCP server stderr: {text}");
        let mut d = diagnostics.lock().unwrap_or_else(|p| p.into_inner());
        if d.stderr.len() == STDERR_TAIL_LINES {
            d.stderr.pop_front();
        }
        d.stderr.push_back(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_never_ends_is_kept_only_up_to_its_cap() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (mut writer, reader) = tokio::io::duplex(64 * 1024);
            let writing = tokio::spawn(async move {
                writer
                    .write_all(&vec![b'x'; 4 * 1024 * 1024])
                    .await
                    .unwrap();
                writer.write_all(b"\nok\npartial").await.unwrap();
            });
            let mut lines = CappedLines::new(reader, 10);
            let (first, cut) = lines.next().await.unwrap();
            assert_eq!((first, cut), (&b"xxxxxxxxxx"[..], true));
            assert!(lines.line.capacity() < 1024 * 1024, "the rest was not kept");
            let (second, cut) = lines.next().await.unwrap();
            assert_eq!((second, cut), (&b"ok"[..], false));
            writing.await.unwrap();
            assert_eq!(lines.next().await, None, "an unended last line is dropped");
        });
    }
}
