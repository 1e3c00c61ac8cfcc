//! Server-sent events, as the OpenAI-compatible servers stream them: only
//! `data:` fields matter; a blank line ends an event; `:` lines are
//! comments (keep-alives). Written against the WHATWG event-stream rules,
//! small enough to own and synchronous, so the same decoder runs in tests
//! and benchmarks without a network.

use super::lines::{LineSplitter, PushError};

/// Decodes an event stream into the `data` of each event.
#[derive(Debug, Default)]
pub struct SseDecoder {
    lines: LineSplitter,
    data: String,
    has_data: bool,
}

/// Why decoding stopped.
#[derive(Debug)]
pub enum SseError<E> {
    /// A line is not UTF-8.
    NotUtf8,
    /// A line grew past the limit.
    TooLong,
    /// The event handler failed.
    Event(E),
}

impl SseDecoder {
    /// Feeds `chunk`, calling `on_event` with the data of every event it
    /// completes.
    pub fn push<E>(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), SseError<E>> {
        let Self {
            lines,
            data,
            has_data,
        } = self;
        lines
            .push(chunk, |line| {
                Self::line(data, has_data, line, &mut on_event)
            })
            .map_err(|e| match e {
                PushError::Line(e) => e,
                PushError::TooLong => SseError::TooLong,
            })
    }

    /// Ends the stream: an event not closed by a blank line still counts
    /// (some servers end with `data: [DONE]` and no blank line).
    pub fn finish<E>(
        &mut self,
        mut on_event: impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), SseError<E>> {
        let rest = self.lines.finish();
        if !rest.is_empty() {
            Self::line(&mut self.data, &mut self.has_data, &rest, &mut on_event)?;
        }
        Self::line(&mut self.data, &mut self.has_data, b"", &mut on_event)
    }

    fn line<E>(
        data: &mut String,
        has_data: &mut bool,
        line: &[u8],
        on_event: &mut impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), SseError<E>> {
        if line.is_empty() {
            if std::mem::take(has_data) {
                let result = on_event(data).map_err(SseError::Event);
                data.clear();
                return result;
            }
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            if *has_data {
                data.push('\n');
            }
            data.push_str(value);
            *has_data = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&str]) -> Vec<String> {
        let mut decoder = SseDecoder::default();
        let mut events = Vec::new();
        for chunk in chunks {
            decoder
                .push::<()>(chunk.as_bytes(), |data| {
                    events.push(data.to_string());
                    Ok(())
                })
                .unwrap();
        }
        decoder
            .finish::<()>(|data| {
                events.push(data.to_string());
                Ok(())
            })
            .unwrap();
        events
    }

    #[test]
    fn events_split_anywhere() {
        let events = decode(&["da", "ta: {\"a\":1}\n", "\ndata:{\"b\"", ":2}\r\n\r\n"]);
        assert_eq!(events, vec!["{\"a\":1}", "{\"b\":2}"]);
    }

    #[test]
    fn comments_other_fields_and_multiline_data() {
        let events = decode(&[": keep-alive\n\nevent: x\nid: 3\ndata: a\ndata: b\n\n"]);
        assert_eq!(events, vec!["a\nb"]);
    }

    #[test]
    fn last_event_without_blank_line() {
        assert_eq!(decode(&["data: [DONE]"]), vec!["[DONE]"]);
    }
}
