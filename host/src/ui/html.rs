//! Escaping, and the frame every page shares.
//!
//! Pages are written as text on the server. Everything that comes from
//! outside — model output, file names, arguments, results, tool
//! descriptions — goes through [`escape`] (or [`attribute`]) on its way
//! in, so it shows as text; the page's policy allows no inline script, so
//! even markup that slipped through could not run.

use axum::response::Html;

/// `text` as HTML text: `&`, `<`, `>`, `"` and `'` written as references.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // What the terminal would not show as itself (controls,
            // direction overrides, zero-width and tag characters) shows
            // as its escape, as there: a name cannot read as another.
            c if crate::util::text::is_hidden(c) && c != '\n' && c != '\t' => {
                out.push_str(&c.escape_default().to_string())
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` as a quoted attribute value (the quotes included).
pub fn attribute(text: &str) -> String {
    format!("\"{}\"", escape(text))
}

/// The sections in the page's header, and where each is.
const SECTIONS: [(&str, &str); 5] = [
    ("Runs", "/"),
    ("Chat", "/chat"),
    ("Approvals", "/approvals"),
    ("Schedules", "/schedules"),
    ("Tools", "/tools"),
];

/// A whole page: `title` (text), the section it belongs to, and `body`
/// (HTML already). With `live`, the page follows those events and redraws
/// `#live-body`.
pub fn page(title: &str, section: &str, live: Option<&str>, body: &str) -> Html<String> {
    let nav: String = SECTIONS
        .iter()
        .map(|(name, href)| {
            let current = if *name == section {
                " aria-current=\"page\""
            } else {
                ""
            };
            format!("<a href=\"{href}\"{current}>{name}</a>")
        })
        .collect();
    let live = live
        .map(|url| format!(" data-live={}", attribute(url)))
        .unwrap_or_default();
    Html(format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} · toolcell</title>\
<link rel=\"stylesheet\" href=\"/static/app.css\">\
<script src=\"/static/app.js\" defer></script></head>\
<body{live}><header><strong>toolcell</strong><nav>{nav}</nav></header>\
<p id=\"status\" role=\"status\"></p><main id=\"live-body\">{body}</main></body></html>\n",
        title = escape(title),
    ))
}

/// A status as a badge: its word, styled by it.
pub fn badge(status: &str) -> String {
    let class: String = status
        .chars()
        .map(|c| if c == ' ' { '-' } else { c })
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("<span class=\"badge {class}\">{}</span>", escape(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_from_outside_is_text() {
        assert_eq!(
            escape("<img src=x onerror=alert(1)>"),
            "&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(attribute("a\" onclick=\"x"), "\"a&quot; onclick=&quot;x\"");
        assert_eq!(escape("it's & \u{1b}[2J"), "it&#39;s &amp; \\u{1b}[2J");
        assert_eq!(escape("report\u{202e}fdp.sh"), "report\\u{202e}fdp.sh");
        assert_eq!(
            badge("done\"><script>"),
            "<span class=\"badge donescript\">done&quot;&gt;&lt;script&gt;</span>"
        );
    }
}
