//! Workflow errors as people read them: the file, line and column, the
//! source line with a caret under the position, and the chain of function
//! calls and imports that led there.
//!
//! ```text
//! error: variable not found: totl
//!   --> report.rhai:4:12
//!    |
//!  4 |     return totl * 2;
//!    |            ^
//!   in function `double`, called at report.rhai:9:9
//! ```

use super::values::{MAX_VALUE_DEPTH, dynamic_deeper_than};
use super::{MAX_EXPR_DEPTH, MAX_FUNCTION_EXPR_DEPTH};
use crate::config::workflow::DEFAULT_MAX_CALL_LEVELS;
use crate::util::text::for_terminal_line;
use rhai::{Dynamic, EvalAltResult, ParseError, ParseErrorType, Position};
use std::path::Path;

/// Renders a parse error in `file` (as the user named it) with `source`.
pub fn parse_error(file: &str, source: &str, error: &ParseError) -> String {
    let hint = match error.err_type() {
        ParseErrorType::ExprTooDeep => Some(expression_hint()),
        _ => None,
    };
    located(
        &format!("syntax error: {}", error.err_type()),
        file,
        Some(source),
        error.position(),
        hint.as_deref(),
    )
}

/// `error: MESSAGE`, the location with its caret, and `fix: HINT`.
pub fn located(
    message: &str,
    file: &str,
    source: Option<&str>,
    pos: Position,
    hint: Option<&str>,
) -> String {
    let mut text = format!("error: {message}\n");
    text.push_str(&location(file, source, pos));
    if let Some(hint) = hint {
        text.push_str(&format!("  fix: {hint}\n"));
    }
    text
}

/// Renders a runtime error of the script `file`. Module sources are read
/// from `folder` (imports are relative to it).
pub fn runtime_error(file: &str, source: &str, folder: &Path, error: &EvalAltResult) -> String {
    let mut frames: Vec<String> = Vec::new();
    let mut current_file = file.to_string();
    let mut error = error;
    loop {
        match error {
            EvalAltResult::ErrorInFunctionCall(name, defined_in, inner, pos) => {
                frames.push(format!(
                    "in function `{name}`, called at {}",
                    at(&current_file, *pos)
                ));
                if !defined_in.is_empty() {
                    current_file = defined_in.clone();
                }
                error = inner;
            }
            EvalAltResult::ErrorInModule(path, inner, pos) => {
                frames.push(format!(
                    "in module `{path}`, imported at {}",
                    at(&current_file, *pos)
                ));
                current_file = format!("{path}.{}", super::modules::MODULE_EXTENSION);
                error = inner;
            }
            _ => break,
        }
    }
    let pos = error.position();
    let message = match error {
        EvalAltResult::ErrorRuntime(value, _) => thrown_message(value),
        EvalAltResult::ErrorParsing(kind, _) => format!("syntax error: {kind}"),
        other => without_position(&other.to_string()),
    };
    let text_of_file = if current_file == file {
        Some(source.to_string())
    } else {
        std::fs::read_to_string(folder.join(&current_file)).ok()
    };
    let mut text = located(
        &message,
        &current_file,
        text_of_file.as_deref(),
        pos,
        hint(error).as_deref(),
    );
    // Innermost call first, like a backtrace.
    for frame in frames.iter().rev() {
        text.push_str(&format!("  {frame}\n"));
    }
    text
}

/// What to do about a limit the script ran into.
fn hint(error: &EvalAltResult) -> Option<String> {
    Some(match error {
        EvalAltResult::ErrorTooManyOperations(_) => {
            "the script hit its operations limit (an endless loop?); if the work is real, raise max_operations under [workflow]".into()
        }
        EvalAltResult::ErrorDataTooLarge(..) => {
            "a string, array or map grew past its limit; raise max_string_bytes under [workflow] if it must be that large".into()
        }
        EvalAltResult::ErrorStackOverflow(_) => format!(
            "functions nest too deeply: at most {DEFAULT_MAX_CALL_LEVELS} calls inside each other (endless recursion?)"
        ),
        EvalAltResult::ErrorParsing(ParseErrorType::ExprTooDeep, _) => expression_hint(),
        _ => return None,
    })
}

fn expression_hint() -> String {
    format!(
        "expressions nest at most {MAX_EXPR_DEPTH} levels deep ({MAX_FUNCTION_EXPR_DEPTH} inside a function); give the inner parts names with `let`, or move them into functions"
    )
}

/// rhai's message without the ` (line L, position P)` it appends.
fn without_position(message: &str) -> String {
    match message.rfind(" (line ") {
        Some(at) if message.ends_with(')') => message[..at].to_string(),
        _ => message.to_string(),
    }
}

/// The message of an uncaught `throw` or host-function error.
fn thrown_message(value: &Dynamic) -> String {
    // Showing a value recurses once per level of it.
    if dynamic_deeper_than(value, MAX_VALUE_DEPTH) {
        return format!(
            "uncaught exception: a value nested deeper than {MAX_VALUE_DEPTH} levels (not shown)"
        );
    }
    if let Some(map) = value.read_lock::<rhai::Map>() {
        let get = |k: &str| map.get(k).map(|v| v.to_string());
        if let (Some(kind), Some(message)) = (get("kind"), get("message")) {
            return match get("tool") {
                Some(tool) => format!(
                    "tool `{}` failed ({}): {message}",
                    for_terminal_line(&tool),
                    for_terminal_line(&kind)
                ),
                None => format!("{}: {message}", for_terminal_line(&kind)),
            };
        }
    }
    format!("uncaught exception: {value}")
}

/// Characters of a source line shown under an error: a screen's width.
const MAX_SHOWN_LINE: usize = 120;

fn at(file: &str, pos: Position) -> String {
    match (pos.line(), pos.position()) {
        (Some(line), Some(col)) => format!("{file}:{line}:{col}"),
        (Some(line), None) => format!("{file}:{line}"),
        _ => file.to_string(),
    }
}

/// `  --> file:line:col` and the source line with a caret.
fn location(file: &str, source: Option<&str>, pos: Position) -> String {
    let mut text = format!("  --> {}\n", at(file, pos));
    let (Some(line), Some(source)) = (pos.line(), source) else {
        return text;
    };
    let Some(code) = source.lines().nth(line - 1) else {
        return text;
    };
    let number = line.to_string();
    let pad = " ".repeat(number.len());
    let col = pos.position().unwrap_or(1).max(1);
    let chars: Vec<char> = code.chars().collect();
    // A long line (a generated script, 100,000 parentheses) is shown
    // around the caret only.
    let start = if chars.len() > MAX_SHOWN_LINE {
        (col - 1).saturating_sub(MAX_SHOWN_LINE / 2)
    } else {
        0
    };
    let end = (start + MAX_SHOWN_LINE).min(chars.len());
    let mut shown: String = chars[start.min(end)..end].iter().collect();
    let mut lead = String::new();
    if start > 0 {
        shown.insert(0, '…');
        lead.push(' ');
    }
    if end < chars.len() {
        shown.push('…');
    }
    // The caret lines up under the character, tabs kept as tabs.
    lead.extend(
        chars[start.min(end)..(col - 1).clamp(start, end)]
            .iter()
            .map(|&c| if c == '\t' { '\t' } else { ' ' }),
    );
    text.push_str(&format!(
        " {pad} |\n {number} | {shown}\n {pad} | {lead}^\n"
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_shown_around_the_caret() {
        let source = format!("{}x{}\n", "(".repeat(5_000), ")".repeat(5_000));
        let text = location("long.rhai", Some(&source), Position::new(1, 5_001));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  --> long.rhai:1:5001");
        assert!(lines[2].chars().count() < MAX_SHOWN_LINE + 10, "{text}");
        let code = lines[2].split_once("| ").unwrap().1;
        let caret = lines[3].split_once("| ").unwrap().1;
        let under = code.chars().nth(caret.chars().count() - 1);
        assert_eq!(under, Some('x'), "{text}");
        let short = location("short.rhai", Some("let a = b;\n"), Position::new(1, 9));
        assert!(short.contains(" 1 | let a = b;\n   |         ^"), "{short}");
    }
}
