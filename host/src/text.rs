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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_counts_characters_not_bytes() {
        assert_eq!(shorten("ééé", 2), "éé…");
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(one_line("a\nb\tc", 10), "a b c");
    }
}
