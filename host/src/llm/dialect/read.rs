//! Reading a whole reply: its text, its reasoning and its calls, in any
//! dialect, whatever the prompt asked for. What must not run does not:
//!
//! - a call inside reasoning (`<think>…</think>`, or before a `</think>`
//!   whose opening tag was in the prompt, or the harmony analysis channel);
//! - a call the model presents as an example: it says so just before, the
//!   call sits in a Markdown code block after prose, or in an explanation
//!   (prose before and after it);
//! - a call cut off: no closing marker when the reply ends, or (where the
//!   end of the reply may close it) arguments with brackets or quotes left
//!   open, or a reply cut off by the output limit;
//! - JSON or code that looks like a call inside a prose answer: the bare
//!   forms count only when they are the whole reply and call known tools.
//!
//! A block that is a call but cannot be read becomes a problem the model is
//! told about in band; it never runs.

use super::examples::{CUE_WINDOW, introduced_as_example};
use super::json::balanced;
use super::scan::{self, Segment};
use super::{Dialect, Marker, RawCall, registry, typing};
use crate::llm::ToolSpec;
use crate::llm::recover::RecoveredCall;

/// What a reply says.
#[derive(Debug, Default, PartialEq)]
pub struct Reply {
    /// The text to show and keep as the answer: calls, markers and
    /// reasoning removed, trimmed.
    pub text: String,
    /// Reasoning found in the text.
    pub thinking: String,
    /// The calls to run, in order; `Err` for a call that was meant but
    /// cannot be read (the reason, for the model).
    pub calls: Vec<Result<RecoveredCall, String>>,
    /// Whether the calls came from a bare reply (no markers): its text was
    /// held back while it streamed.
    pub bare: bool,
    /// The dialects read, for the record.
    pub dialects: Vec<&'static str>,
}

/// A closing tag some models write after calls whose opening tag they
/// left out.
const STRAY_CLOSE: &str = "</tool_call>";

enum Part {
    Text(String),
    Calls {
        dialect: &'static Dialect,
        /// The block as written, to show if it is not run.
        written: String,
        calls: Result<Vec<RawCall>, String>,
    },
}

/// Reads `content`, a whole reply; `cut_off` when the output limit ended
/// it. `tools` are the tools the model may know: bare calls must name one,
/// and their schemas type XML and pythonic values.
pub fn read_reply(content: &str, cut_off: bool, tools: &[ToolSpec]) -> Reply {
    read_segments(scan::segments(content), cut_off, tools)
}

/// Reads a reply already split into segments (as it streamed).
pub(super) fn read_segments(
    mut segments: Vec<Segment>,
    cut_off: bool,
    tools: &[ToolSpec],
) -> Reply {
    let mut reply = Reply::default();
    // A `</think>` without its opening tag: all before it was reasoning.
    if let Some(end) = segments.iter().position(|s| *s == Segment::EndOfThinking) {
        for segment in segments.drain(..=end) {
            match segment {
                Segment::Text(t) | Segment::Thinking(t) => reply.thinking.push_str(&t),
                Segment::Block { marker, body, .. } => {
                    reply.thinking.push_str(&written(marker, &body, true))
                }
                Segment::EndOfThinking => {}
            }
        }
    }
    let mut parts = Vec::new();
    let mut segments: std::collections::VecDeque<Segment> = segments.into();
    while let Some(segment) = segments.pop_front() {
        match segment {
            // Text comes in pieces (a tail held back is its own): one part.
            Segment::Text(t) => match parts.last_mut() {
                Some(Part::Text(last)) => last.push_str(&t),
                _ => parts.push(Part::Text(t)),
            },
            Segment::Thinking(t) => reply.thinking.push_str(&t),
            Segment::EndOfThinking => {}
            Segment::Block {
                dialect,
                marker,
                body,
                closed,
            } => match block(dialect, marker, body.clone(), closed, cut_off) {
                // A common word that opened no call (`functools.reduce`,
                // `>>>` in a REPL, ` to=`) is text, and what followed it is
                // read again: a real marker after it still opens a block.
                Part::Text(_) if marker.weak => {
                    let mut again = vec![Segment::Text(marker.open.to_string())];
                    again.extend(scan::segments(&body));
                    if closed {
                        let close = marker.close.first().copied().unwrap_or("");
                        again.push(Segment::Text(close.to_string()));
                    }
                    for segment in again.into_iter().rev() {
                        segments.push_front(segment);
                    }
                }
                part => parts.push(part),
            },
        }
    }
    unmake_examples(&mut parts);
    let mut text = String::new();
    let mut after_calls = false;
    for part in parts {
        match part {
            Part::Text(t) => {
                // Qwen3-Coder writes `</tool_call>` after calls it opened
                // with `<function=` only: it closes them.
                let t = match t.trim_start().strip_prefix(STRAY_CLOSE) {
                    Some(rest) if after_calls => rest.to_string(),
                    _ => t,
                };
                after_calls = false;
                text.push_str(&t);
            }
            Part::Calls { dialect, calls, .. } => {
                after_calls = true;
                if !reply.dialects.contains(&dialect.name) {
                    reply.dialects.push(dialect.name);
                }
                match calls {
                    Ok(calls) => reply
                        .calls
                        .extend(calls.into_iter().map(|c| Ok(typed(c, tools)))),
                    Err(reason) => reply.calls.push(Err(reason)),
                }
            }
        }
    }
    if reply.calls.is_empty()
        && let Some((dialect, calls, prose)) = bare_calls(&text, tools)
    {
        reply.calls = calls.into_iter().map(|c| Ok(typed(c, tools))).collect();
        reply.bare = true;
        reply.dialects.push(dialect.name);
        text = prose;
    }
    reply.text = text.trim().to_string();
    reply.thinking = reply.thinking.trim().to_string();
    reply
}

/// A block as it was written.
pub(super) fn written(marker: &Marker, body: &str, closed: bool) -> String {
    let close = if closed {
        marker.close.first().copied().unwrap_or("")
    } else {
        ""
    };
    format!("{}{body}{close}", marker.open)
}

/// A block of calls, read by the first dialect that knows its body.
fn block(
    dialect: &'static Dialect,
    marker: &'static Marker,
    body: String,
    closed: bool,
    cut_off: bool,
) -> Part {
    let shown = written(marker, &body, closed);
    let problem = |reason: String| {
        if marker.weak {
            Part::Text(shown.clone())
        } else {
            Part::Calls {
                dialect,
                written: shown.clone(),
                calls: Err(reason),
            }
        }
    };
    let open = marker.open.trim();
    if !closed && (!marker.ends_at_stop || cut_off) {
        return problem(format!(
            "the call after {open} was cut off before it ended, so it was not run"
        ));
    }
    if !closed && !balanced(&body) {
        return problem(format!(
            "the call after {open} ends before its brackets or quotes close, so it was cut off and not run"
        ));
    }
    // Ended by the end of the reply, a call is whole only if its arguments
    // are: a name alone, or a name and an empty place for them, is a call
    // cut off (`[TOOL_CALLS]read_fi`, `…<|message|>`), never one of `{}`.
    if !closed && !ends_like_arguments(&body) {
        return problem(format!(
            "the call after {open} ends before its arguments, so it was cut off and not run"
        ));
    }
    for &reader in registry::readers_of(marker.open) {
        let Some(parse) = reader.parse else { continue };
        match parse(&body) {
            None => continue,
            Some(Ok(calls)) if calls.is_empty() => return Part::Text(String::new()),
            Some(Ok(calls)) => {
                return Part::Calls {
                    dialect: reader,
                    written: shown,
                    calls: Ok(calls),
                };
            }
            Some(Err(reason)) => {
                return problem(format!("the call after {open} could not be read: {reason}"));
            }
        }
    }
    // No dialect that shares the marker knows the body: it is text.
    Part::Text(shown)
}

/// Whether a block's body ends as arguments do: a JSON object or list, a
/// pythonic call's `)` or a closing code fence, before any special tokens
/// (`<｜tool▁call▁end｜>`, `<|message|>`, `[ARGS]`), which are no arguments.
fn ends_like_arguments(body: &str) -> bool {
    let mut body = body.trim_end();
    loop {
        let token = if body.ends_with('>') {
            body.rfind('<')
        } else if body.ends_with(']') {
            // `[ARGS]`, `[CALL_ID]`: capitals and `_` in brackets.
            body.rfind('[').filter(|&at| {
                let inside = &body[at + 1..body.len() - 1];
                !inside.is_empty() && inside.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
            })
        } else {
            None
        };
        match token {
            Some(at) => body = body[..at].trim_end(),
            None => break,
        }
    }
    body.ends_with(['}', ']', ')']) || body.ends_with("```")
}

/// Turns calls that are shown as examples back into text.
fn unmake_examples(parts: &mut [Part]) {
    let is_call = |p: &Part| matches!(p, Part::Calls { .. });
    let (Some(first), Some(last)) = (
        parts.iter().position(is_call),
        parts.iter().rposition(is_call),
    ) else {
        return;
    };
    // Prose before and after the calls: they are part of an explanation.
    // (Prose only after them is what models write while they wait, and
    // the parsers of every server run those calls.)
    let prose = |range: &[Part]| {
        range
            .iter()
            .any(|p| matches!(p, Part::Text(t) if !t.replace("```", "").replace(STRAY_CLOSE, "").trim().is_empty()))
    };
    let explained = prose(&parts[..first]) && prose(&parts[last + 1..]);
    // What came before each call, read once: its last sentence, and
    // whether a code block that follows prose is open.
    let mut fences = Fences::default();
    let mut recent = String::new();
    for part in parts.iter_mut() {
        match part {
            Part::Text(t) => {
                fences.read(t);
                keep_tail(&mut recent, t);
            }
            Part::Calls { written, .. } => {
                if explained || introduced_as_example(&recent) || fences.open_after_prose {
                    let text = std::mem::take(written);
                    fences.read(&text);
                    keep_tail(&mut recent, &text);
                    *part = Part::Text(text);
                }
            }
        }
    }
}

/// Appends `text` to `recent`, keeping only its last [`CUE_WINDOW`] bytes
/// or so (at a character boundary).
fn keep_tail(recent: &mut String, text: &str) {
    recent.push_str(text);
    if recent.len() > 2 * CUE_WINDOW {
        let mut cut = recent.len() - CUE_WINDOW;
        while !recent.is_char_boundary(cut) {
            cut += 1;
        }
        recent.drain(..cut);
    }
}

/// Markdown code blocks in the text so far.
#[derive(Default)]
struct Fences {
    open: bool,
    /// The open block follows prose (a reply that is only a code block
    /// holding a call is a call).
    open_after_prose: bool,
    prose_so_far: bool,
}

impl Fences {
    fn read(&mut self, text: &str) {
        for (i, piece) in text.split("```").enumerate() {
            if i > 0 {
                self.open = !self.open;
                self.open_after_prose = self.open && self.prose_so_far;
            }
            self.prose_so_far |= !piece.trim().is_empty();
        }
    }
}

/// The bare calls of known tools in a reply: the whole reply, or a code
/// block that ends it after prose that does not call it an example. With
/// the prose before them.
fn bare_calls(text: &str, tools: &[ToolSpec]) -> Option<(&'static Dialect, Vec<RawCall>, String)> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let read = |text: &str| {
        registry::all().iter().find_map(|dialect| {
            let calls = dialect.bare?(text)?.ok()?;
            let known =
                !calls.is_empty() && calls.iter().all(|c| tools.iter().any(|t| t.name == c.name));
            known.then_some((*dialect, calls))
        })
    };
    if let Some((dialect, calls)) = read(text) {
        return Some((dialect, calls, String::new()));
    }
    let body = text.strip_suffix("```")?;
    let opened = body.rfind("```")?;
    let prose = &text[..opened];
    if prose.trim().is_empty() || introduced_as_example(prose) {
        return None;
    }
    let (dialect, calls) = read(&text[opened..])?;
    Some((dialect, calls, prose.to_string()))
}

/// A call with its arguments typed by its tool's schema.
fn typed(call: RawCall, tools: &[ToolSpec]) -> RecoveredCall {
    let schema = tools
        .iter()
        .find(|t| t.name == call.name)
        .map(|t| &t.parameters);
    let name = call.name.clone();
    RecoveredCall {
        arguments: typing::arguments(call, schema),
        name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "read_file".into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
    }

    fn names(reply: &Reply) -> Vec<String> {
        reply
            .calls
            .iter()
            .map(|c| {
                c.as_ref()
                    .map(|c| c.name.clone())
                    .unwrap_or_else(|e| format!("error: {e}"))
            })
            .collect()
    }

    #[test]
    fn prose_before_calls_is_text_and_the_calls_run_in_order() {
        let reply = read_reply(
            "Let me look.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}</tool_call>\n<tool_call>\n<function=read_file>\n<parameter=path>\n2\n</parameter>\n</function>\n</tool_call><|im_end|>",
            false,
            &tools(),
        );
        assert_eq!(reply.text, "Let me look.");
        assert_eq!(names(&reply), ["read_file", "read_file"]);
        assert_eq!(
            reply.calls[1].as_ref().unwrap().arguments,
            json!({"path": "2"})
        );
    }

    /// Outputs found by trying the reader with new ones, the way real
    /// models vary the dialects: each runs exactly its call, with its
    /// arguments, or nothing (`None`); a cut-off call is an error for the
    /// model, never a call.
    #[test]
    fn variations_of_real_outputs_run_the_call_written_or_nothing() {
        let call = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>";
        let read_a = Some(json!({"path": "a.txt"}));
        let cases: Vec<(String, Option<Value>)> = vec![
            // Cue words in ordinary prose do not make a call an example.
            (format!("Let me check the format of a.txt first.\n{call}"), read_a.clone()),
            (format!("I'll start with the small files (e.g. a.txt).\n{call}"), read_a.clone()),
            (format!("Sure, you can use the file as the source. Reading it now.\n{call}"), read_a.clone()),
            (format!("The syntax error is probably in a.txt. Let me read it.\n{call}"), read_a.clone()),
            // A sentence that introduces what follows does.
            (format!("Here is what a call to read_file looks like:\n\n{call}"), None),
            (format!("Sample call:\n{call}"), None),
            // A common word that opens no call leaves the rest to be read.
            (format!("The script uses functools.reduce. Let me read it.\n{call}"), read_a.clone()),
            (format!("In a REPL you'd type >>> open('a.txt').read(). Let me just read it.\n{call}"), read_a.clone()),
            (format!("Set retries to=3 later. Reading now.\n{call}"), read_a.clone()),
            ("Set x to=1 first.<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\"path\":\"a.txt\"}<|call|>".into(), read_a.clone()),
            // Call shapes: other keys for the name and the arguments.
            ("<tool_call>\n{\"tool\": \"read_file\", \"args\": {\"path\": \"a.txt\"}}\n</tool_call>".into(), read_a.clone()),
            ("<tool_call>\n{\"function\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}}\n</tool_call>".into(), read_a.clone()),
            ("<tool_call>\n{\"name\": \"read_file\", \"params\": {\"path\": \"a.txt\"}}\n</tool_call>".into(), read_a.clone()),
            ("<tool_call>\n{\"name\": \"read_file\", \"input\": {\"path\": \"a.txt\"}}\n</tool_call>".into(), read_a.clone()),
            ("<tool_call>\n{\"tool_call\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}}\n</tool_call>".into(), read_a.clone()),
            ("{\"tool_call\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}}".into(), read_a.clone()),
            ("{\"content\": \"\", \"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}}]}".into(), read_a.clone()),
            ("{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}}]}".into(), read_a.clone()),
            ("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}}\n</tool_call>".into(), read_a.clone()),
            ("<|start_header_id|>assistant<|end_header_id|>\n\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}}<|eot_id|>".into(), read_a.clone()),
            ("<seed:tool_call>\n<function=read_file>\n<parameter=path>a.txt</parameter>\n</function>\n</seed:tool_call><seed:eos>".into(), read_a.clone()),
            // A sentence that says what the model does next is no example.
            (format!("Let me see what a.txt looks like:\n{call}"), read_a.clone()),
            (format!("To see what the file looks like, I'll read it now:\n{call}"), read_a.clone()),
            (format!("Here's how I'll start:\n{call}"), read_a.clone()),
            (format!("I'll look at a sample of the data:\n{call}"), read_a.clone()),
            (format!("For example:\n{call}\nNow I'll actually read the file.\n{call}"), read_a.clone()),
            // Examples, introduced in the ways models write them.
            (format!("Tools are called with a JSON object. Here’s how you'd call it:\n\n{call}"), None),
            (format!("Example usage:\n{call}"), None),
            (format!("Syntax:\n{call}"), None),
            (format!("To call it, you would write:\n{call}"), None),
            (format!("A typical call:\n{call}"), None),
            (format!("Here's an example of calling read_file. Note the JSON arguments:\n{call}"), None),
            // Said outright, an example stays one, whoever shows it.
            (format!("Let me show you an example:\n{call}"), None),
            (format!("Now I can give an example of the call:\n{call}"), None),
            (format!("Let me demonstrate the format:\n{call}"), None),
            (format!("**Usage:**\n{call}"), None),
            (format!("## Example\n\n{call}"), None),
            (format!("Let me find an example of the bug in a.txt.\n{call}"), read_a.clone()),
            ("<|tool_call>call:read_file{path:<|\"|>it's <tool_call|> x<|\"|>}<tool_call|>".into(), Some(json!({"path": "it's <tool_call|> x"}))),
            ("<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{\"path\": \"x <|tool_call_end|> y\"}<|tool_call_end|><|tool_calls_section_end|>".into(), Some(json!({"path": "x <|tool_call_end|> y"}))),
            // Lead-ins that say what the model does are no examples.
            (format!("Checking the file format:\n{call}"), read_a.clone()),
            (format!("Reading the usage notes in a.txt:\n{call}"), read_a.clone()),
            (format!("a.txt is an example config. Reading it now:\n{call}"), read_a.clone()),
            (format!("For example, a.txt might hold notes.\n\nAnyway, reading it:\n{call}"), read_a.clone()),
            // A real marker inside a string of a call after a common word.
            ("functools[{\"name\": \"read_file\", \"arguments\": {\"path\": \"Use <tool_call> tags\"}}]".into(), Some(json!({"path": "Use <tool_call> tags"}))),
            // Values between their own delimiters hold quotes of any kind.
            ("<start_function_call>call:read_file{path:<escape>it's \" <end_function_call><escape>}<end_function_call>\nNext.".into(), Some(json!({"path": "it's \" <end_function_call>"}))),
            // The arguments wrapped, or beside the wrapper.
            ("<tool_call>\n{\"function\": {\"name\": \"read_file\"}, \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>".into(), read_a.clone()),
            // Closing markers inside strings and values, in dialects whose
            // body starts with a name or a tag.
            ("[TOOL_CALLS]read_file[ARGS]{\"path\": \"x </s> y\"}</s>".into(), Some(json!({"path": "x </s> y"}))),
            ("<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{\"path\": \"x <|call|> y\"}<|call|>".into(), Some(json!({"path": "x <|call|> y"}))),
            ("<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>x </tool_call> y</arg_value>\n</tool_call>".into(), Some(json!({"path": "x </tool_call> y"}))),
            ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"x <｜tool▁call▁end｜> y|z\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>".into(), Some(json!({"path": "x <｜tool▁call▁end｜> y|z"}))),
            ("<|tool_call_start|>[read_file(path='a 55\" TV </x>')]<|tool_call_end|>".into(), Some(json!({"path": "a 55\" TV </x>"}))),
            // Malformed so that the block never closes outside its values:
            // it ends at its first closing marker, as it did before.
            ("<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</function>\n</tool_call>".into(), read_a.clone()),
            ("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\"\n</tool_call>".into(), None),
            // A closing marker inside an argument's value does not end the block.
            ("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a</tool_call>b.txt\"}}\n</tool_call>".into(), Some(json!({"path": "a</tool_call>b.txt"}))),
            ("<tool_call>\n<function=read_file>\n<parameter=path>\nEnd each call with </tool_call>.\n</parameter>\n</function>\n</tool_call>".into(), Some(json!({"path": "End each call with </tool_call>."}))),
        ];
        for (text, expected) in cases {
            let reply = read_reply(&text, false, &tools());
            match &expected {
                Some(arguments) => {
                    assert_eq!(names(&reply), ["read_file"], "{text}: {reply:?}");
                    assert_eq!(
                        &reply.calls[0].as_ref().unwrap().arguments,
                        arguments,
                        "{text}"
                    );
                    // (An example before the call is shown as written.)
                    if !text.contains("example") {
                        assert!(!reply.text.contains("<tool_call>"), "{text}: {reply:?}");
                    }
                }
                None => assert!(!reply.calls.iter().any(Result::is_ok), "{text}: {reply:?}"),
            }
            // The same, streamed a character at a time.
            let mut scanner = scan::Scanner::default();
            let mut segments = Vec::new();
            for c in text.chars() {
                scanner.feed(&c.to_string(), &mut segments);
            }
            scanner.finish(&mut segments);
            let streamed = read_segments(segments, false, &tools());
            assert_eq!(streamed.calls, reply.calls, "{text}, streamed");
        }
        // Cut off where the reply may end the block: an error, never a call.
        let cut = [
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{\"path\": \"a.txt\"}",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"a\"}",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_fi",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>",
            "[TOOL_CALLS]read_file[ARGS]",
            "<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>",
        ];
        for text in cut {
            let reply = read_reply(text, false, &tools());
            assert!(!reply.calls.iter().any(Result::is_ok), "{text}: {reply:?}");
        }
        // The prose around a common word is shown whole.
        let reply = read_reply(
            &format!("Set retries to=3 later. Reading now.\n{call}"),
            false,
            &tools(),
        );
        assert_eq!(reply.text, "Set retries to=3 later. Reading now.");
        // Ambiguous calls are refused in band, never run one way or another.
        let refused = [
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}, \"name\": \"delete_path\"}\n</tool_call>",
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\", \"path\": \"b\"}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"read_file\", \"tool\": \"list_directory\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>",
            "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}, \"start_line\": 2}\n</tool_call>",
            "<tool_call>\n{\"name\": \"read_file\", \"args\": {}, \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>",
        ];
        for text in refused {
            let reply = read_reply(text, false, &tools());
            assert!(
                !reply.calls.is_empty() && reply.calls.iter().all(Result::is_err),
                "{text}: {reply:?}"
            );
        }
        // A name cut off after `>>>` is no call of any tool.
        let reply = read_reply(">>>read_fi", false, &tools());
        assert!(!reply.calls.iter().any(Result::is_ok), "{reply:?}");
    }

    #[test]
    fn what_never_runs() {
        let no_calls = [
            "<think>I could <tool_call>{\"name\": \"read_file\"}</tool_call></think>The answer is 4.",
            "I could <tool_call>{\"name\": \"read_file\"}</tool_call></think>The answer is 4.",
            "For example, you could write:\n<tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call>",
            "Use it like this:\n```\n<tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call>\n```",
            "First <tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call> then it answers.",
            "The object {\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}} is a call.",
            "{\"name\": \"Ada\", \"parameters\": {\"age\": 36}}",
        ];
        for text in no_calls {
            let reply = read_reply(text, false, &tools());
            assert!(reply.calls.is_empty(), "{text}: {reply:?}");
        }
        let cut = [
            "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}",
            "<tool_call>{\"name\": \"read_fi",
            "[TOOL_CALLS]read_fi",
            "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"a",
        ];
        for text in cut {
            let reply = read_reply(text, false, &tools());
            assert!(
                reply.calls.len() == 1 && reply.calls[0].is_err(),
                "{text}: {reply:?}"
            );
        }
        let reply = read_reply(
            "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {}}]",
            true,
            &tools(),
        );
        assert!(
            reply.calls[0].is_err(),
            "the output limit cut it: {reply:?}"
        );
    }

    #[test]
    fn bare_calls_only_as_the_whole_reply() {
        let reply = read_reply(
            "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a\"}}",
            false,
            &tools(),
        );
        assert_eq!(
            (names(&reply), reply.bare),
            (vec!["read_file".to_string()], true)
        );
        let reply = read_reply("[read_file(path=1)]", false, &tools());
        assert_eq!(
            reply.calls[0].as_ref().unwrap().arguments,
            json!({"path": "1"})
        );
        let reply = read_reply("{\"name\": \"other\", \"parameters\": {}}", false, &tools());
        assert!(
            reply.calls.is_empty(),
            "an unknown name in a bare object is text"
        );
        // In a marked block an unknown name is a call: the model hears it
        // is unknown.
        let reply = read_reply(
            "<tool_call>{\"name\": \"other\", \"arguments\": {}}</tool_call>",
            false,
            &tools(),
        );
        assert_eq!(names(&reply), ["other"]);
    }
}
