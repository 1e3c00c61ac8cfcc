//! Splitting a byte stream into lines before decoding it: a multi-byte
//! UTF-8 character may straddle two network chunks, but never a `\n`.

/// Collects bytes and hands out complete lines (without the line end).
#[derive(Debug, Default)]
pub struct LineSplitter {
    pending: Vec<u8>,
}

/// The longest line kept: a model's single NDJSON line or SSE field is far
/// smaller; a server that never sends a newline must not exhaust memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

impl LineSplitter {
    /// Adds `chunk` and calls `on_line` for every line it completes. A `\r`
    /// before the `\n` is removed.
    pub fn push<E>(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), PushError<E>> {
        let mut rest = chunk;
        while let Some(at) = memchr_newline(rest) {
            let (head, tail) = rest.split_at(at);
            rest = &tail[1..];
            if self.pending.is_empty() {
                on_line(strip_cr(head)).map_err(PushError::Line)?;
            } else {
                self.pending.extend_from_slice(head);
                let line = std::mem::take(&mut self.pending);
                on_line(strip_cr(&line)).map_err(PushError::Line)?;
            }
        }
        if self.pending.len() + rest.len() > MAX_LINE_BYTES {
            return Err(PushError::TooLong);
        }
        self.pending.extend_from_slice(rest);
        Ok(())
    }

    /// The bytes after the last newline, at the end of the stream.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

/// Why [`LineSplitter::push`] stopped.
#[derive(Debug)]
pub enum PushError<E> {
    /// The line handler failed.
    Line(E),
    /// A line grew past [`MAX_LINE_BYTES`].
    TooLong,
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        for chunk in chunks {
            splitter
                .push::<()>(chunk, |line| {
                    lines.push(line.to_vec());
                    Ok(())
                })
                .unwrap();
        }
        (lines, splitter.finish())
    }

    #[test]
    fn a_character_split_across_chunks_survives() {
        let text = "{\"content\":\"é\"}\n".as_bytes();
        let at = text.iter().position(|&b| b == 0xC3).unwrap() + 1;
        let (lines, rest) = split(&[&text[..at], &text[at..]]);
        assert_eq!(lines, vec![b"{\"content\":\"\xC3\xA9\"}".to_vec()]);
        assert!(rest.is_empty());
        assert!(std::str::from_utf8(&lines[0]).is_ok());
    }

    #[test]
    fn several_lines_in_one_chunk_and_crlf() {
        let (lines, rest) = split(&[b"a\r\nb\nc", b"d\n", b"tail"]);
        assert_eq!(lines, vec![b"a".to_vec(), b"b".to_vec(), b"cd".to_vec()]);
        assert_eq!(rest, b"tail");
    }
}
