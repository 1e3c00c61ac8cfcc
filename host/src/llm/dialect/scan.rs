//! Finding the dialects' markers in a model's text, streamed or whole, in
//! one pass: each byte is looked at once (a table says which markers can
//! start with it), and only a tail that could still become a marker is held
//! back between pieces. A marker split across pieces, or a special token
//! that arrives as plain text, is found the same way.

use super::{Dialect, Marker, Role, registry};
use std::sync::OnceLock;

/// One part of a model's text, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    /// Text to show.
    Text(String),
    /// Reasoning: shown dimmed, never read for calls.
    Thinking(String),
    /// A block that holds calls: which marker opened it, what was inside,
    /// and whether its closing marker came.
    Block {
        dialect: &'static Dialect,
        marker: &'static Marker,
        body: String,
        closed: bool,
    },
    /// A closing reasoning tag without its opening one: everything before
    /// it was reasoning (templates that open `<think>` in the prompt).
    EndOfThinking,
}

/// All opening markers, and for each first byte the markers that start
/// with it, longest first (so `<|start|>assistant to=functions.` wins over
/// `<|start|>assistant`).
struct Openers {
    by_first_byte: Vec<Vec<Opener>>,
}

type Opener = (&'static Dialect, &'static Marker);

fn openers() -> &'static Openers {
    static OPENERS: OnceLock<Openers> = OnceLock::new();
    OPENERS.get_or_init(|| {
        let mut by_first_byte: Vec<Vec<Opener>> = vec![Vec::new(); 256];
        for (dialect, marker) in registry::markers() {
            let list = &mut by_first_byte[marker.open.as_bytes()[0] as usize];
            // Dialects that share a marker share its block: the first
            // row's marker reads it, every sharing row may parse it.
            if !list.iter().any(|(_, m)| m.open == marker.open) {
                list.push((dialect, marker));
            }
        }
        for list in &mut by_first_byte {
            list.sort_by_key(|(_, m)| std::cmp::Reverse(m.open.len()));
        }
        Openers { by_first_byte }
    })
}

/// Where the next of a set of markers is in a text.
enum Found<T> {
    /// At this byte, this marker.
    At(usize, T),
    /// From this byte on, the text could still become one: wait for more.
    Maybe(usize),
    /// Nowhere.
    None,
}

/// At the end of the text (`at_end`) nothing more can come, so a tail that
/// only could have become a marker is not one.
fn next_opener(text: &str, from: usize, at_end: bool) -> Found<Opener> {
    let table = openers();
    let bytes = text.as_bytes();
    for i in from..bytes.len() {
        let candidates = &table.by_first_byte[bytes[i] as usize];
        if candidates.is_empty() {
            continue;
        }
        let rest = &bytes[i..];
        for &(dialect, marker) in candidates {
            let open = marker.open.as_bytes();
            if rest.len() >= open.len() {
                // The second byte first: most candidates differ there, and
                // a comparison that stops at once is cheaper than a call.
                if (open.len() < 2 || rest[1] == open[1]) && rest[..open.len()] == *open {
                    return Found::At(i, (dialect, marker));
                }
            } else if !at_end && open.starts_with(rest) {
                return Found::Maybe(i);
            }
        }
    }
    Found::None
}

/// Where the body of an open block of calls is, byte by byte: a closing
/// marker inside a JSON (or pythonic) string (`"content": "end with
/// </tool_call>"`) or inside an XML parameter's value does not end the
/// block — the call would be read cut short, or with the wrong argument.
/// A body that never closes this way (a value left open, a stray quote) is
/// closed at its first closing marker when the reply ends
/// ([`Scanner::finish`]).
#[derive(Debug, Default, Clone, Copy)]
struct BodyState {
    /// Brackets open outside strings and values: inside a JSON or pythonic
    /// value, where strings are looked for.
    depth: u32,
    /// The quote of the string the body is in, and whether the byte before
    /// was a backslash in it.
    quote: Option<u8>,
    escaped: bool,
    /// XML values open (`<parameter=…>`, `<arg_value>` without their end).
    values_open: u32,
    /// Inside a value between [`VALUE_QUOTES`].
    in_quoted_value: bool,
    /// Bytes of a tag just read still to pass over (its `"` is no quote).
    skip: usize,
}

/// Tags that open and close an XML dialect's value, whose text may hold
/// anything, a closing marker too.
const VALUE_OPENS: &[&str] = &[
    "<parameter=",
    "<parameter name=",
    "<param name=",
    "<arg_value>",
    "<｜DSML｜parameter ",
];
const VALUE_CLOSES: &[&str] = &[
    "</parameter>",
    "</param>",
    "</arg_value>",
    "</｜DSML｜parameter>",
];
/// Tags written on both sides of a value (FunctionGemma's `<escape>`,
/// Gemma 4's `<|"|>`): the first opens it, the next closes it.
const VALUE_QUOTES: &[&str] = &["<escape>", "<|\"|>"];

impl BodyState {
    /// Whether a closing marker at this byte ends the block.
    fn outside_values(&self) -> bool {
        self.quote.is_none() && self.values_open == 0 && !self.in_quoted_value
    }

    /// Takes in the byte at `i` of `text` (the body so far, from the block's
    /// start); `Err(())` when the bytes from `i` could still become a value
    /// tag and more text is needed to know.
    fn step(&mut self, text: &str, i: usize, at_end: bool) -> Result<(), ()> {
        if self.skip > 0 {
            self.skip -= 1;
            return Ok(());
        }
        let byte = text.as_bytes()[i];
        if let Some(quote) = self.quote {
            match (self.escaped, byte) {
                (true, _) => self.escaped = false,
                (false, b'\\') => self.escaped = true,
                (false, b) if b == quote => self.quote = None,
                _ => {}
            }
            return Ok(());
        }
        match byte {
            b'<' => {
                let rest = &text[i..];
                let tag =
                    |tags: &[&str]| tags.iter().find(|t| rest.starts_with(**t)).map(|t| t.len());
                let maybe = |tags: &[&str]| tags.iter().any(|t| t.starts_with(rest));
                if let Some(len) = tag(VALUE_QUOTES) {
                    self.in_quoted_value = !self.in_quoted_value;
                    self.skip = len - 1;
                } else if !at_end && maybe(VALUE_QUOTES) {
                    return Err(());
                } else if self.in_quoted_value {
                    // A value's text: no tag in it counts.
                    return Ok(());
                } else if tag(VALUE_OPENS).is_some() {
                    self.values_open += 1;
                } else if let Some(len) = tag(VALUE_CLOSES) {
                    self.values_open = self.values_open.saturating_sub(1);
                    self.skip = len - 1;
                } else if !at_end && (maybe(VALUE_OPENS) || maybe(VALUE_CLOSES)) {
                    return Err(());
                }
            }
            _ if self.values_open > 0 || self.in_quoted_value => {}
            b'{' | b'[' | b'(' => self.depth += 1,
            b'}' | b']' | b')' => self.depth = self.depth.saturating_sub(1),
            b'"' | b'\'' if self.depth > 0 => self.quote = Some(byte),
            _ => {}
        }
        Ok(())
    }
}

/// Whether the end of `body` (a block's body so far) is outside its
/// strings and values: a marker there is not text of an argument.
fn outside_strings(body: &str) -> bool {
    let mut state = BodyState::default();
    for i in 0..body.len() {
        let _ = state.step(body, i, true);
    }
    state.outside_values()
}

/// The next of `closers` in `text` from `from`: which one, and whether it
/// is kept (it also starts what follows). For a block of calls, `state`
/// follows the body from `from` on (see [`BodyState`]).
fn next_closer(
    text: &str,
    from: usize,
    marker: &Marker,
    at_end: bool,
    state: &mut BodyState,
) -> Found<(usize, bool)> {
    let calls = matches!(marker.role, Role::Calls);
    let bytes = text.as_bytes();
    let all = || {
        marker
            .close
            .iter()
            .map(|c| (*c, false))
            .chain(marker.close_before.iter().map(|c| (*c, true)))
    };
    // The first bytes of the closers, looked up for every byte of the body.
    let mut firsts = [0u8; MAX_CLOSERS];
    let mut count = 0;
    for (close, _) in all().take(MAX_CLOSERS) {
        firsts[count] = close.as_bytes()[0];
        count += 1;
    }
    for i in from..bytes.len() {
        if firsts[..count].contains(&bytes[i]) && (!calls || state.outside_values()) {
            let rest = &text[i..];
            for (close, kept) in all() {
                if rest.starts_with(close) {
                    return Found::At(i, (close.len(), kept));
                }
                if !at_end && close.starts_with(rest) {
                    return Found::Maybe(i);
                }
            }
        }
        if calls && state.step(text, i, at_end).is_err() {
            return Found::Maybe(i);
        }
    }
    Found::None
}

/// The most closing markers a block has (a unit test checks the table).
const MAX_CLOSERS: usize = 4;

/// Splits a text into [`Segment`]s as it arrives.
#[derive(Debug, Default)]
pub struct Scanner {
    /// Text not yet given out: a held-back tail, or an open block's body.
    pending: String,
    /// Where in `pending` the text not yet given out starts (given-out
    /// text is removed once per piece, not per marker: no shifting of a
    /// long text again and again).
    start: usize,
    /// How far the rest of `pending` has been searched already.
    searched: usize,
    /// The block being read, if one is open.
    open: Option<Opener>,
    /// Where its body is, up to `searched`.
    body: BodyState,
    /// How far the body of an open block of a common word has been
    /// searched for a marker that would end it ([`Scanner::stronger_opener`]).
    opener_searched: usize,
}

impl Scanner {
    /// The segments that `piece` completes (text and reasoning come out as
    /// they arrive; a block once it closes).
    pub fn feed(&mut self, piece: &str, out: &mut Vec<Segment>) {
        self.read(piece, false, out);
    }

    fn read(&mut self, piece: &str, at_end: bool, out: &mut Vec<Segment>) {
        self.pending.push_str(piece);
        self.scan(at_end, out);
        self.pending.drain(..self.start);
        self.start = 0;
    }

    /// The text not yet given out.
    fn rest(&self) -> &str {
        &self.pending[self.start..]
    }

    /// Takes the next `n` bytes of the rest.
    fn take(&mut self, n: usize) -> String {
        let taken = self.rest()[..n].to_string();
        self.start += n;
        taken
    }

    fn scan(&mut self, at_end: bool, out: &mut Vec<Segment>) {
        loop {
            match self.open {
                None => match next_opener(self.rest(), self.searched, at_end) {
                    Found::At(at, (dialect, marker)) => {
                        self.give_text(at, out);
                        self.start += marker.open.len();
                        self.searched = 0;
                        match marker.role {
                            Role::Drop => {}
                            Role::EndThinking => out.push(Segment::EndOfThinking),
                            Role::Thinking | Role::Calls => {
                                self.open = Some((dialect, marker));
                                self.body = BodyState::default();
                            }
                        }
                    }
                    Found::Maybe(at) => {
                        self.give_text(at, out);
                        self.searched = 0;
                        return;
                    }
                    Found::None => {
                        let all = self.rest().len();
                        self.give_text(all, out);
                        self.searched = 0;
                        return;
                    }
                },
                Some((dialect, marker)) => {
                    let searched = self.searched;
                    let mut state = self.body;
                    let found = next_closer(self.rest(), searched, marker, at_end, &mut state);
                    self.body = state;
                    if marker.weak
                        && let Some(at) = self.stronger_opener(&found, at_end)
                    {
                        // A common word (`functools`, `>>>`, ` to=`) with
                        // a real marker after it opened nothing: it is text,
                        // and the marker opens its block.
                        let text = format!("{}{}", marker.open, self.take(at));
                        out.push(Segment::Text(text));
                        self.searched = 0;
                        self.opener_searched = 0;
                        self.open = None;
                        self.body = BodyState::default();
                        continue;
                    }
                    match found {
                        Found::At(at, (len, kept)) => {
                            let body = self.take(at);
                            if !kept {
                                self.start += len;
                            }
                            self.searched = 0;
                            self.opener_searched = 0;
                            self.open = None;
                            self.body = BodyState::default();
                            close_block((dialect, marker), body, true, out);
                        }
                        Found::Maybe(at) => {
                            self.searched = at;
                            self.stream_thinking(marker, at, out);
                            return;
                        }
                        Found::None => {
                            let all = self.rest().len();
                            self.searched = all;
                            self.stream_thinking(marker, all, out);
                            return;
                        }
                    }
                }
            }
        }
    }

    /// In the body of an open block of a common word, where a marker that
    /// is not one (a block of calls, reasoning) opens before the block's
    /// end (`found`), if one does.
    fn stronger_opener(&mut self, found: &Found<(usize, bool)>, at_end: bool) -> Option<usize> {
        let (end, whole) = match found {
            Found::At(at, _) => (*at, true),
            Found::Maybe(at) => (*at, at_end),
            Found::None => (self.rest().len(), at_end),
        };
        let body = &self.rest()[..end];
        let mut from = self.opener_searched.min(end);
        loop {
            match next_opener(body, from, whole) {
                Found::At(at, (_, marker)) => {
                    if !marker.weak
                        && !matches!(marker.role, Role::Drop | Role::EndThinking)
                        && outside_strings(&body[..at])
                    {
                        return Some(at);
                    }
                    from = at + marker.open.len();
                }
                Found::Maybe(at) => {
                    self.opener_searched = at;
                    return None;
                }
                Found::None => {
                    self.opener_searched = end;
                    return None;
                }
            }
        }
    }

    /// The segments left when the text ends: a held-back tail is text, an
    /// open block ends unclosed.
    pub fn finish(&mut self, out: &mut Vec<Segment>) {
        self.read("", true, out);
        let rest = std::mem::take(&mut self.pending);
        self.start = 0;
        self.searched = 0;
        self.opener_searched = 0;
        self.body = BodyState::default();
        match self.open.take() {
            None => {
                if !rest.is_empty() {
                    out.push(Segment::Text(rest));
                }
            }
            Some(opener) => match first_closer(&rest, opener.1) {
                // Never closed outside its strings and values (one left
                // open, a stray quote): it ends at its first closing marker
                // after all, and what follows is read again.
                Some((at, len, kept)) if matches!(opener.1.role, Role::Calls) => {
                    let after = if kept { at } else { at + len };
                    close_block(opener, rest[..at].to_string(), true, out);
                    let mut again = Scanner::default();
                    again.feed(&rest[after..], out);
                    again.finish(out);
                }
                _ => close_block(opener, rest, false, out),
            },
        }
    }

    /// Gives out `pending[..at]` as text.
    fn give_text(&mut self, at: usize, out: &mut Vec<Segment>) {
        if at > 0 {
            let text = self.take(at);
            out.push(Segment::Text(text));
        }
    }

    /// Reasoning is shown as it comes: gives out `pending[..upto]` of an
    /// open reasoning block. A block of calls is held whole.
    fn stream_thinking(&mut self, marker: &Marker, upto: usize, out: &mut Vec<Segment>) {
        if matches!(marker.role, Role::Thinking) && upto > 0 {
            let text = self.take(upto);
            out.push(Segment::Thinking(text));
            self.searched = 0;
        }
    }
}

/// The first of `marker`'s closers in `text`, anywhere: where, how long,
/// and whether it is kept.
fn first_closer(text: &str, marker: &Marker) -> Option<(usize, usize, bool)> {
    marker
        .close
        .iter()
        .map(|c| (*c, false))
        .chain(marker.close_before.iter().map(|c| (*c, true)))
        .filter_map(|(close, kept)| text.find(close).map(|at| (at, close.len(), kept)))
        .min_by_key(|(at, _, _)| *at)
}

fn close_block((dialect, marker): Opener, body: String, closed: bool, out: &mut Vec<Segment>) {
    match marker.role {
        Role::Thinking => {
            if !body.is_empty() {
                out.push(Segment::Thinking(body));
            }
        }
        _ => out.push(Segment::Block {
            dialect,
            marker,
            body,
            closed,
        }),
    }
}

/// The segments of a whole text.
pub fn segments(text: &str) -> Vec<Segment> {
    let mut scanner = Scanner::default();
    let mut out = Vec::new();
    scanner.feed(text, &mut out);
    scanner.finish(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adjacent text (and reasoning) segments joined, as a reader sees them.
    fn joined(segments: Vec<Segment>) -> Vec<Segment> {
        let mut out: Vec<Segment> = Vec::new();
        for segment in segments {
            match (out.last_mut(), segment) {
                (Some(Segment::Text(a)), Segment::Text(b)) => a.push_str(&b),
                (Some(Segment::Thinking(a)), Segment::Thinking(b)) => a.push_str(&b),
                (_, segment) => out.push(segment),
            }
        }
        out
    }

    #[test]
    fn the_same_segments_however_the_text_is_split() {
        let text = "<think>look <tool_call>{}</tool_call> first</think>Reading.\n<tool_call>\n{\"name\": \"read_file\"}\n</tool_call>[TOOL_CALLS]a[ARGS]{}</s><|im_end|> <b> done";
        let whole = joined(segments(text));
        assert!(
            matches!(&whole[0], Segment::Thinking(t) if t == "look <tool_call>{}</tool_call> first"),
            "{whole:?}"
        );
        assert_eq!(whole[1], Segment::Text("Reading.\n".into()));
        assert!(
            matches!(&whole[2], Segment::Block { marker, body, closed: true, .. } if marker.open == "<tool_call>" && body.contains("read_file"))
        );
        assert!(
            matches!(&whole[3], Segment::Block { marker, closed: true, .. } if marker.open == "[TOOL_CALLS]")
        );
        assert_eq!(whole[4], Segment::Text(" <b> done".into()));
        let chars: Vec<char> = text.chars().collect();
        for size in [1, 2, 3, 7, 13] {
            let mut scanner = Scanner::default();
            let mut out = Vec::new();
            for chunk in chars.chunks(size) {
                scanner.feed(&chunk.iter().collect::<String>(), &mut out);
            }
            scanner.finish(&mut out);
            assert_eq!(joined(out), whole, "pieces of {size} characters");
        }
    }

    #[test]
    fn no_block_has_more_closers_than_looked_for() {
        for (_, marker) in registry::markers() {
            assert!(
                marker.close.len() + marker.close_before.len() <= MAX_CLOSERS,
                "{}",
                marker.open
            );
        }
    }

    #[test]
    fn an_unclosed_block_is_said_to_be_unclosed() {
        let parts = segments("<tool_call>{\"name\": \"read_");
        assert!(matches!(&parts[0], Segment::Block { closed: false, .. }));
        // A tail that could have become a marker is text at the end.
        assert_eq!(
            joined(segments("a <tool_ca")),
            vec![Segment::Text("a <tool_ca".into())]
        );
    }
}
