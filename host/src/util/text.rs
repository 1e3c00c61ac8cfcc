//! Small text helpers for what toolcell shows people and models, and the
//! one way text from outside reaches a terminal ([`for_terminal`]).

use std::borrow::Cow;
use std::time::Duration;

/// A local date and time for unix milliseconds: `2026-12-02 09:30:00`.
pub fn local_time(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| {
            t.to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M:%S")
                .to_string()
        })
        .unwrap_or_else(|_| ms.to_string())
}

/// `text` cut to at most `max` characters, with an ellipsis when cut.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// `text` on one line (newlines and tabs shown as spaces), cut to `max`
/// characters.
pub fn one_line(text: &str, max: usize) -> String {
    // Only the first `max + 1` characters decide what is shown (the rest
    // is cut): a long result is not walked to its end.
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || c.is_control());
    let head: String = trimmed
        .chars()
        .take(max.saturating_add(1))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    shorten(&head, max)
}

/// Whether `c` is invisible or changes how text around it is shown on a
/// terminal: control characters, Unicode format characters (soft hyphen,
/// zero-width characters, direction marks and overrides, tags…) and the
/// line and paragraph separators.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
        )
}

/// A block of text from outside (a model's answer, a tool's output, a
/// file, an MCP server's words, the store) made safe for a terminal: every
/// control character, escape sequence and hidden or reordering character
/// ([`is_hidden`]) is shown as visible text (`\e[8m`, `\r`, `\u{202e}`), so
/// nothing from outside can move the cursor, hide or recolour text, set a
/// scroll region or reorder what a person reads. Line breaks and tabs stay.
/// This is the one way text from outside reaches the terminal; toolcell's
/// own colours are the only escapes it writes.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    shown_visibly(text, false)
}

/// A single-line field from outside (a tool or server name, a path, a
/// status): as [`for_terminal`], and line breaks and tabs shown too (`\n`,
/// `\t`), so a field cannot add lines to what is around it.
pub fn for_terminal_line(text: &str) -> Cow<'_, str> {
    shown_visibly(text, true)
}

/// A message for people (an error, a warning, a notice, a log line) that
/// may quote words from outside: as [`for_terminal`], but a line break is
/// kept only where what follows it is indented, blank or the end — the
/// shape of toolcell's own continuation lines (`  fix: …`, `  --> …`).
/// One followed by text at the line's start (`\n[done] write_file …`,
/// `\nerror: …`) is shown as `\n`: quoted words cannot start a line that
/// looks like toolcell's.
pub fn for_terminal_message(text: &str) -> Cow<'_, str> {
    let shown = for_terminal(text);
    let starts_a_line = |at: usize| {
        shown[at + 1..]
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace())
    };
    if !shown.match_indices('\n').any(|(at, _)| starts_a_line(at)) {
        return shown;
    }
    let mut text = String::with_capacity(shown.len() + 8);
    for (at, c) in shown.char_indices() {
        if c == '\n' && starts_a_line(at) {
            text.push_str("\\n");
        } else {
            text.push(c);
        }
    }
    Cow::Owned(text)
}

fn shown_visibly(text: &str, one_line: bool) -> Cow<'_, str> {
    let kept = |c: char| !is_hidden(c) || (!one_line && (c == '\n' || c == '\t'));
    if text.chars().all(kept) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if kept(c) => shown.push(c),
            // A Windows line end in a block is a line end.
            '\r' if !one_line && chars.peek() == Some(&'\n') => {}
            '\u{1b}' => shown.push_str("\\e"),
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            c => shown.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(shown)
}

/// `3 ms`, `1.2 s`.
pub fn human_duration(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// An error with its causes, `error: cause: cause`, each said once (an
/// error that already quotes its cause is not followed by it again).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !message.contains(&cause_text) {
            message.push_str(": ");
            message.push_str(&cause_text);
        }
        source = cause.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_text_shows_what_a_terminal_would_hide() {
        assert_eq!(
            for_terminal("plain\ntext\twith tab"),
            "plain\ntext\twith tab"
        );
        assert!(matches!(for_terminal("plain"), Cow::Borrowed(_)));
        assert_eq!(
            for_terminal("a\u{202e}b\u{1b}[8m\u{2066}\u{e0041}\u{ad}\u{9b}1;1r\x07"),
            "a\\u{202e}b\\e[8m\\u{2066}\\u{e0041}\\u{ad}\\u{9b}1;1r\\u{7}"
        );
        assert_eq!(for_terminal("dos\r\nline\rover"), "dos\nline\\rover");
        assert_eq!(
            for_terminal_line("x\n$ git status\tnow\r\n"),
            "x\\n$ git status\\tnow\\r\\n"
        );
    }

    #[test]
    fn a_message_keeps_its_own_indented_lines_and_no_other() {
        assert_eq!(
            for_terminal_message("error: x\n  fix: y\n\n  --> a:1\n"),
            "error: x\n  fix: y\n\n  --> a:1\n"
        );
        assert_eq!(
            for_terminal_message("error: boom\n[done] write_file\nerror: forged\n  fix: y"),
            "error: boom\\n[done] write_file\\nerror: forged\n  fix: y"
        );
        assert!(matches!(
            for_terminal_message("one line\n"),
            Cow::Borrowed(_)
        ));
        assert_eq!(for_terminal_message("\u{1b}[8m\nx"), "\\e[8m\\nx");
    }

    #[test]
    fn shorten_counts_characters_not_bytes() {
        assert_eq!(shorten("ééé", 2), "éé…");
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(one_line("a\nb\tc", 10), "a b c");
        assert_eq!(one_line(" \n abc \t\n", 10), "abc");
        assert_eq!(one_line(&"x".repeat(500), 5), "xxxxx…");
        assert_eq!(
            one_line(&format!("{}{}x", "a".repeat(4), " ".repeat(50)), 5),
            "aaaa …"
        );
    }
}
