//! What the person sees while a reply streams: its text without the
//! dialects' markers and calls, its reasoning as thinking. A reply that
//! starts like bare JSON or a list (`{`, `[`) may be nothing but calls, so
//! it is held back until the reply ends and shown only if it was not.
//! What follows a block of calls is held back too: if the reply turns out
//! to show the calls as examples, they are part of the text, in place.

use super::read::{read_segments, written};
use super::scan::{Scanner, Segment};
use super::{Reply, read_reply};
use crate::llm::ToolSpec;

/// A piece to show.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    Text(String),
    Thinking(String),
}

/// Turns streamed pieces into what to show.
#[derive(Debug, Default)]
pub struct StreamView {
    scanner: Scanner,
    /// Segments not yet shown.
    segments: Vec<Segment>,
    /// Every segment so far, to read the reply from when it ends (instead
    /// of scanning it again).
    read: Vec<Segment>,
    /// Bytes fed so far.
    fed: usize,
    /// Leading whitespace, until the first visible character says whether
    /// to hold the text back.
    leading: String,
    started: bool,
    /// Text held back: the reply may be a bare call.
    held: Option<String>,
    /// Everything from the first block of calls on: (whether it is a
    /// block, as written).
    after_block: Option<Vec<(bool, String)>>,
}

impl StreamView {
    /// What `piece` adds to show.
    pub fn feed(&mut self, piece: &str) -> Vec<Shown> {
        self.fed += piece.len();
        self.scanner.feed(piece, &mut self.segments);
        self.drain()
    }

    /// Once the reply has ended: what it says (`content` is the whole
    /// reply, `cut_off` whether the output limit ended it, `tools` as for
    /// [`read_reply`]), and what is left to show.
    pub fn finish(
        &mut self,
        content: &str,
        cut_off: bool,
        tools: &[ToolSpec],
    ) -> (Reply, Vec<Shown>) {
        self.scanner.finish(&mut self.segments);
        let mut shown = self.drain();
        // What streamed is the reply, unless the server sent more at the
        // end than it streamed.
        let reply = if self.fed == content.len() {
            read_segments(std::mem::take(&mut self.read), cut_off, tools)
        } else {
            read_reply(content, cut_off, tools)
        };
        if let Some(held) = self.held.take()
            && !reply.bare
        {
            shown.push(Shown::Text(held));
        }
        for (block, text) in self.after_block.take().unwrap_or_default() {
            if !block || reply.calls.is_empty() {
                shown.push(Shown::Text(text));
            }
        }
        (reply, shown)
    }

    fn drain(&mut self) -> Vec<Shown> {
        let mut shown = Vec::new();
        // The buffer is handed back after, to be filled again.
        let mut segments = std::mem::take(&mut self.segments);
        for segment in segments.drain(..) {
            // Kept for reading at the end; text joined as it comes.
            match (&segment, self.read.last_mut()) {
                (Segment::Text(t), Some(Segment::Text(last))) => last.push_str(t),
                _ => self.read.push(segment.clone()),
            }
            match segment {
                Segment::Thinking(t) => shown.push(Shown::Thinking(t)),
                Segment::Text(t) if self.after_block.is_some() => {
                    if let Some(tail) = &mut self.after_block {
                        match tail.last_mut() {
                            Some((false, last)) => last.push_str(&t),
                            _ => tail.push((false, t)),
                        }
                    }
                }
                Segment::Block {
                    marker,
                    body,
                    closed,
                    ..
                } => {
                    let text = written(marker, &body, closed);
                    self.after_block
                        .get_or_insert_with(Vec::new)
                        .push((true, text));
                }
                Segment::Text(t) => {
                    if let Some(held) = &mut self.held {
                        held.push_str(&t);
                    } else if self.started {
                        shown.push(Shown::Text(t));
                    } else {
                        self.leading.push_str(&t);
                        let Some(first) = self.leading.trim_start().chars().next() else {
                            continue;
                        };
                        self.started = true;
                        let text = std::mem::take(&mut self.leading);
                        if matches!(first, '{' | '[') {
                            self.held = Some(text);
                        } else {
                            shown.push(Shown::Text(text));
                        }
                    }
                }
                Segment::EndOfThinking => {}
            }
        }
        self.segments = segments;
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(text: &str, size: usize) -> String {
        let mut view = StreamView::default();
        let mut out = String::new();
        let chars: Vec<char> = text.chars().collect();
        let mut add = |shown: Vec<Shown>| {
            for s in shown {
                if let Shown::Text(t) = s {
                    out.push_str(&t);
                }
            }
        };
        for chunk in chars.chunks(size) {
            add(view.feed(&chunk.iter().collect::<String>()));
        }
        let (reply, rest) = view.finish(text, false, &[]);
        assert_eq!(
            reply,
            read_reply(text, false, &[]),
            "the same as read whole"
        );
        add(rest);
        out
    }

    #[test]
    fn markers_are_hidden_and_json_answers_shown_at_the_end() {
        for size in [1, 3, 100] {
            assert_eq!(
                show(
                    "Looking.\n<tool_call>{\"name\": \"x\"}</tool_call><|im_end|>",
                    size
                ),
                "Looking.\n"
            );
            assert_eq!(
                show("  [1, 2, 3] is the list", size),
                "  [1, 2, 3] is the list"
            );
        }
    }
}
