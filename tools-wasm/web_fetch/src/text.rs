//! HTML to readable text: what a person would see, as lines.

use tl::{HTMLTag, Node, NodeHandle, Parser, ParserOptions};

/// Elements whose content is never shown as text.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "object", "head", "canvas",
];
/// Elements that start a new line.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "section",
    "article",
    "header",
    "footer",
    "main",
    "nav",
    "aside",
    "pre",
    "blockquote",
    "table",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "hr",
    "form",
    "address",
    "title",
];

/// The page's title and its visible text.
pub fn readable(html: &str) -> (Option<String>, String) {
    let Ok(dom) = tl::parse(html, ParserOptions::default()) else {
        return (None, collapse(html));
    };
    let parser = dom.parser();
    let title = dom
        .query_selector("title")
        .and_then(|mut found| found.next())
        .and_then(|handle| handle.get(parser))
        .map(|node| decode(&node.inner_text(parser)))
        .map(|t| collapse(&t))
        .filter(|t| !t.is_empty());
    let mut out = String::new();
    for handle in dom.children() {
        walk(*handle, parser, &mut out);
    }
    (title, tidy(&out))
}

fn walk(handle: NodeHandle, parser: &Parser, out: &mut String) {
    let Some(node) = handle.get(parser) else {
        return;
    };
    match node {
        Node::Raw(text) => {
            out.push_str(&decode(&text.as_utf8_str()));
        }
        Node::Tag(tag) => {
            let name = tag.name().as_utf8_str().to_ascii_lowercase();
            if SKIPPED.contains(&name.as_str()) || hidden(tag) {
                return;
            }
            let block = BLOCKS.contains(&name.as_str());
            if block {
                out.push('\n');
            }
            if name == "li" {
                out.push_str("- ");
            }
            for child in tag.children().top().iter() {
                walk(*child, parser, out);
            }
            if block {
                out.push('\n');
            }
        }
        Node::Comment(_) => {}
    }
}

/// Whether the page hides `tag` from readers.
fn hidden(tag: &HTMLTag) -> bool {
    let attributes = tag.attributes();
    if attributes.contains("hidden") {
        return true;
    }
    let value = |name: &str| {
        attributes
            .get(name)
            .flatten()
            .map(|v| v.as_utf8_str().to_ascii_lowercase())
            .unwrap_or_default()
    };
    if value("aria-hidden") == "true" {
        return true;
    }
    let style: String = value("style").split_whitespace().collect();
    style.contains("display:none") || style.contains("visibility:hidden")
}

fn decode(text: &str) -> String {
    html_escape::decode_html_entities(text).into_owned()
}

/// Runs of whitespace as one space.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Each line's whitespace collapsed, empty lines dropped.
fn tidy(text: &str) -> String {
    text.lines()
        .map(collapse)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
