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

use rhai::{Dynamic, EvalAltResult, ParseError, Position};
use std::path::Path;

/// Renders a parse error in `file` (as the user named it) with `source`.
pub fn parse_error(file: &str, source: &str, error: &ParseError) -> String {
    let mut text = format!("error: syntax error: {}\n", error.err_type());
    text.push_str(&location(file, Some(source), error.position()));
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
    let mut text = format!("error: {message}\n");
    text.push_str(&location(&current_file, text_of_file.as_deref(), pos));
    if let Some(hint) = hint(error) {
        text.push_str(&format!("  fix: {hint}\n"));
    }
    // Innermost call first, like a backtrace.
    for frame in frames.iter().rev() {
        text.push_str(&format!("  {frame}\n"));
    }
    text
}

/// What to do about a limit the script ran into.
fn hint(error: &EvalAltResult) -> Option<&'static str> {
    Some(match error {
        EvalAltResult::ErrorTooManyOperations(_) => {
            "the script hit its operations limit (an endless loop?); if the work is real, raise max_operations under [workflow]"
        }
        EvalAltResult::ErrorDataTooLarge(..) => {
            "a string, array or map grew past its limit; raise max_string_bytes under [workflow] if it must be that large"
        }
        EvalAltResult::ErrorStackOverflow(_) => "functions nest too deeply (endless recursion?)",
        _ => return None,
    })
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
    if let Some(map) = value.read_lock::<rhai::Map>() {
        let get = |k: &str| map.get(k).map(|v| v.to_string());
        if let (Some(kind), Some(message)) = (get("kind"), get("message")) {
            return match get("tool") {
                Some(tool) => format!("tool `{tool}` failed ({kind}): {message}"),
                None => format!("{kind}: {message}"),
            };
        }
    }
    format!("uncaught exception: {value}")
}

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
    // The caret lines up under the character, tabs kept as tabs.
    let lead: String = code
        .chars()
        .take(col - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    text.push_str(&format!(" {pad} |\n {number} | {code}\n {pad} | {lead}^\n"));
    text
}
