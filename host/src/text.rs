//! Small text helpers for what toolcell shows people and models.

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
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    shorten(flat.trim(), max)
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

/// `text` with every hidden character ([`is_hidden`]) except line breaks
/// written as `\u{XXXX}`: what a person is asked to approve is what they
/// see, with nothing hidden or reordered.
pub fn reveal(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_hidden(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if c != '\n' && is_hidden(c) {
            shown.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            shown.push(c);
        }
    }
    std::borrow::Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reveal_shows_what_a_terminal_would_hide() {
        assert_eq!(reveal("plain\ntext"), "plain\ntext");
        assert_eq!(
            reveal("a\u{202e}b\u{1b}[8m\u{2066}\u{e0041}\u{ad}"),
            "a\\u{202e}b\\u{001b}[8m\\u{2066}\\u{e0041}\\u{00ad}"
        );
    }

    #[test]
    fn shorten_counts_characters_not_bytes() {
        assert_eq!(shorten("ééé", 2), "éé…");
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(one_line("a\nb\tc", 10), "a b c");
    }
}
