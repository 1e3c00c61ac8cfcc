//! HTML to readable text: what a person would see, as lines.
//!
//! The tree is walked with an explicit stack (a page of 100,000 nested
//! elements must not exhaust the call stack). Attribute names are matched
//! in any case and their values with entities decoded, so `HIDDEN` or
//! `style="display&#58;none"` hide as a browser would.

use tl::{HTMLTag, Node, NodeHandle, Parser, ParserOptions};

/// Elements whose content is never shown as text.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "object", "canvas",
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
];
/// A title is a line, not a document: longer ones are cut.
const MAX_TITLE_CHARS: usize = 300;

/// One step of the walk.
enum Step {
    /// Visit a node; `in_head` while inside `<head>` (nothing shown, only
    /// the title taken).
    Visit { node: NodeHandle, in_head: bool },
    /// A block element ends: a line break.
    EndBlock,
}

/// The page's title and its visible text.
pub fn readable(html: &str) -> (Option<String>, String) {
    let Ok(dom) = tl::parse(html, ParserOptions::default()) else {
        return (None, collapse(html));
    };
    let parser = dom.parser();
    let mut out = String::new();
    let mut title = None;
    let mut stack: Vec<Step> = dom
        .children()
        .iter()
        .rev()
        .map(|node| Step::Visit {
            node: *node,
            in_head: false,
        })
        .collect();
    while let Some(step) = stack.pop() {
        let (handle, in_head) = match step {
            Step::EndBlock => {
                out.push('\n');
                continue;
            }
            Step::Visit { node, in_head } => (node, in_head),
        };
        let Some(node) = handle.get(parser) else {
            continue;
        };
        match node {
            Node::Raw(text) if !in_head => out.push_str(&decode(&text.as_utf8_str())),
            Node::Raw(_) | Node::Comment(_) => {}
            Node::Tag(tag) => {
                let name = tag.name().as_utf8_str().to_ascii_lowercase();
                if SKIPPED.contains(&name.as_str()) || hidden(tag) {
                    continue;
                }
                if name == "title" {
                    if in_head && title.is_none() {
                        title = Some(title_text(tag, parser));
                    }
                    continue;
                }
                let in_head = in_head || name == "head";
                let block = !in_head && BLOCKS.contains(&name.as_str());
                if block {
                    out.push('\n');
                    stack.push(Step::EndBlock);
                }
                if name == "li" && !in_head {
                    out.push_str("- ");
                }
                let children: Vec<NodeHandle> = tag.children().top().iter().copied().collect();
                for child in children.into_iter().rev() {
                    stack.push(Step::Visit {
                        node: child,
                        in_head,
                    });
                }
            }
        }
    }
    (title.filter(|t: &String| !t.is_empty()), tidy(&out))
}

/// A `<title>`'s text, on one line, cut at [`MAX_TITLE_CHARS`].
fn title_text(tag: &HTMLTag, parser: &Parser) -> String {
    let text = collapse(&decode(&tag.inner_text(parser)));
    match text.char_indices().nth(MAX_TITLE_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// Whether the page hides `tag` from readers.
fn hidden(tag: &HTMLTag) -> bool {
    let mut hidden = false;
    for (name, value) in tag.attributes().iter() {
        let value = value
            .map(|v| decode(&v).to_ascii_lowercase())
            .unwrap_or_default();
        match name.to_ascii_lowercase().as_str() {
            "hidden" => hidden = true,
            "aria-hidden" => hidden |= value.trim() == "true",
            "style" => {
                let style: String = value.split_whitespace().collect();
                hidden |= style.contains("display:none") || style.contains("visibility:hidden");
            }
            _ => {}
        }
    }
    hidden
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
