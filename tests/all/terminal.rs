//! Text from outside never drives the terminal: each channel that prints
//! what a model, a model server, a tool, an MCP server, a file or the store
//! wrote is run on a real pseudo-terminal, and the raw bytes it showed hold
//! no escape but toolcell's own dimming, and no raw hidden or reordering
//! character; what was sent is shown visibly instead (`\e[8m`, `\u{202e}`).

use crate::agent::{chat_on_terminal, workspace};
use crate::harness::Workspace;
use crate::model_server::{ModelServer, Reply, ollama};
use serde_json::json;

/// What a hostile party writes to take over a terminal: hide text, set a
/// scroll region, clear the screen, retitle the window (ended by BEL), a
/// C1 control sequence introducer, and a right-to-left override.
const HOSTILE: &str =
    "\u{1b}[8mhidden\u{1b}[1;1r\u{1b}[2J\u{1b}]0;title\u{7}\u{9b}31m\u{202e}esrever";

/// The only escapes toolcell writes itself: dim, reverse video (the
/// approval prompt's own lines), and back to normal.
const OWN_ESCAPES: [&str; 3] = ["\u{1b}[2m", "\u{1b}[7m", "\u{1b}[0m"];

/// `shown` without toolcell's own escapes, to read its lines.
fn plain(shown: &str) -> String {
    OWN_ESCAPES
        .iter()
        .fold(shown.to_string(), |text, own| text.replace(own, ""))
}

/// Asserts that `shown` (the raw bytes a terminal got) holds nothing from
/// outside that a terminal acts on, and that the hostile text was shown
/// visibly.
fn assert_shown_visibly(shown: &str) {
    assert_terminal_safe(shown);
    assert!(
        shown.contains("\\e[8mhidden\\e[1;1r\\e[2J\\e]0;title\\u{7}\\u{9b}31m\\u{202e}esrever"),
        "the hostile text is shown visibly: {shown:?}"
    );
}

/// Asserts that `shown` holds nothing from outside that a terminal acts on.
fn assert_terminal_safe(shown: &str) {
    let mut rest = shown.to_string();
    for own in OWN_ESCAPES {
        rest = rest.replace(own, "");
    }
    for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(
            !rest.contains(raw),
            "a raw {:?} reached the terminal: {shown:?}",
            raw
        );
    }
}

#[test]
fn the_models_answer_and_thinking_are_shown_visibly() {
    let server = ModelServer::start(vec![ollama::reply(vec![
        ollama::thinking(&format!("thinking {HOSTILE}")),
        ollama::content(&format!("answer {HOSTILE}\n")),
    ])]);
    let ws = workspace(&server, "ollama", "");
    let (code, shown) = chat_on_terminal(&ws, &["chat", "Hello"], "");
    assert_eq!(code, 0, "{shown}");
    assert_shown_visibly(&shown);
    assert_eq!(
        shown.matches("\\e[8mhidden").count(),
        2,
        "answer and thinking: {shown:?}"
    );
    // `runs show` prints the same text from the store.
    let (code, shown) = chat_on_terminal(&ws, &["runs", "show", "1"], "");
    assert_eq!(code, 0, "{shown}");
    assert_shown_visibly(&shown);
}

#[test]
fn a_tool_name_the_model_invents_and_a_path_it_chooses_stay_on_their_line() {
    let server = ModelServer::start(vec![
        ollama::reply(vec![ollama::calls(&[(
            "c1",
            &format!("evil\n[done] read_file {HOSTILE}"),
            json!({}),
        )])]),
        ollama::reply(vec![ollama::calls(&[(
            "c2",
            "write_file",
            json!({"path": format!("a\n? `write_file` wants to run with: nothing {HOSTILE}"), "content": "x"}),
        )])]),
        ollama::answer("Done."),
    ]);
    let ws = workspace(&server, "ollama", "");
    let (code, shown) = chat_on_terminal(&ws, &["chat", "Go"], "n\n");
    assert_eq!(code, 0, "{shown}");
    assert_shown_visibly(&shown);
    let shown = plain(&shown);
    assert!(shown.contains("evil\\n[done] read_file"), "{shown:?}");
    assert!(
        !shown
            .lines()
            .any(|l| l.trim_start().starts_with("[done] read_file")),
        "a forged status line: {shown:?}"
    );
    assert_eq!(
        shown
            .lines()
            .filter(|l| l
                .trim_start()
                .starts_with("? `write_file` wants to run with"))
            .count(),
        1,
        "one real prompt, the forged one inside a path: {shown:?}"
    );
    assert!(shown.contains("a\\n? `write_file` wants"), "{shown:?}");
    // The run as the store keeps it: the invented name on its row.
    let (code, shown) = chat_on_terminal(&ws, &["runs", "show", "1"], "");
    assert_eq!(code, 0, "{shown}");
    assert_shown_visibly(&shown);
    assert!(shown.contains("evil\\n[done] read_file"), "{shown:?}");
    assert!(
        !shown
            .lines()
            .any(|l| l.trim_start().starts_with("[done] read_file")),
        "a forged row in `runs show`: {shown:?}"
    );
}

#[test]
fn what_was_typed_at_a_prompt_the_model_forged_answers_no_real_one() {
    use crate::model_server::Part;
    // The model writes a prompt of its own (no escape needed), waits, and
    // then calls the tool: the `y` typed at its prompt must not approve.
    let forged = "\n? `read_file` wants to run with:\n    {\"path\": \"a.txt\"}\n  [y] yes  [n] no (add a reason: `n too risky`)  [q] quit\n> ";
    let reply = ollama::reply(vec![ollama::content(forged)])
        .then(Part::Pause(std::time::Duration::from_millis(3000)));
    let mut parts = reply.parts;
    let done = parts.remove(1);
    parts.push(Part::Bytes(
        ollama::calls(&[(
            "w1",
            "write_file",
            json!({"path": "a.txt", "content": "pwned\n"}),
        )])
        .into_bytes(),
    ));
    parts.push(done);
    let server = ModelServer::start(vec![
        Reply {
            parts,
            ..ollama::answer("")
        },
        ollama::answer("Done."),
    ]);
    let ws = workspace(&server, "ollama", "");
    ws.write("a.txt", "hello\n");
    // `y` at the forged prompt, `n` at the real one.
    let (code, shown) = chat_on_terminal(&ws, &["chat", "Go"], "y\nn\n");
    assert_eq!(code, 0, "{shown}");
    assert_eq!(
        ws.read("a.txt"),
        "hello\n",
        "approved by what was typed before: {shown}"
    );
    assert_eq!(shown.matches("[q] quit").count(), 2, "{shown}");
    // The real prompt's own lines are marked; the forged one's are not.
    assert_eq!(
        shown
            .matches("\u{1b}[7m? `write_file` wants to run with:")
            .count(),
        1,
        "{shown:?}"
    );
    assert!(!shown.contains("\u{1b}[7m? `read_file`"), "{shown:?}");
}

#[test]
fn a_model_servers_error_text_is_shown_visibly() {
    let server = ModelServer::start(vec![Reply::error(
        400,
        json!({"error": format!("bad request {HOSTILE}\n[done] write_file {{\"path\": \"notes.md\"}} forged")}),
    )]);
    let ws = workspace(&server, "ollama", "");
    let (code, shown) = chat_on_terminal(&ws, &["chat", "Hello"], "");
    assert_ne!(code, 0, "{shown}");
    assert_shown_visibly(&shown);
    assert!(
        !plain(&shown)
            .lines()
            .any(|l| l.trim_start().starts_with("[done] write_file")),
        "the server's words added a line: {shown:?}"
    );
}

/// A workspace with the misbehaving MCP server in `escapes` mode.
fn hostile_server() -> Workspace {
    let ws = Workspace::new();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/mcp/misbehaving.mjs"
    );
    ws.write(
        "toolcell.toml",
        &format!(
            "[[mcp_server]]\nname = \"bad\"\ncommand = \"node\"\nargs = [{script:?}, \"escapes\", {:?}]\napproval = \"auto\"\n{}",
            ws.marks().join("starts").display().to_string(),
            ws.marks_grant()
        ),
    );
    ws
}

#[test]
fn an_mcp_servers_description_answers_stderr_and_stray_output_are_shown_visibly() {
    let mut ws = hostile_server();
    let (code, shown) = chat_on_terminal(&ws, &["tools", "show", "bad__answer"], "");
    assert_eq!(code, 0, "{shown}");
    assert_shown_visibly(&shown);
    let (code, shown) = chat_on_terminal(
        &ws,
        &[
            "tools",
            "call",
            "bad__answer",
            "--args",
            "{\"text\": \"hi\"}",
        ],
        "",
    );
    assert_eq!(code, 0, "{shown}");
    // The result is printed as JSON, whose strings escape controls.
    assert_terminal_safe(&shown);
    assert!(shown.contains("\\u001b[8mhidden"), "{shown:?}");
    // Its stderr, in the error of a call that killed it.
    let (code, shown) = chat_on_terminal(&ws, &["tools", "call", "bad__crash", "--args", "{}"], "");
    assert_ne!(code, 0, "{shown}");
    assert_shown_visibly(&shown);
    assert!(shown.contains("crashing"), "{shown:?}");
    // Its stray stdout and its stderr, in the log.
    ws.env("TOOLCELL_LOG", "debug");
    let (_, shown) = chat_on_terminal(&ws, &["tools", "list"], "");
    assert_terminal_safe(&shown);
    assert!(shown.contains("stray \\x1b[8mhidden"), "{shown:?}");
    assert!(
        shown.contains("Answers \\e[8mhidden") && shown.contains("esrever\\nfake line"),
        "a row of the list is one line: {shown:?}"
    );
}

#[test]
fn a_manifests_name_in_an_error_is_shown_visibly() {
    let ws = Workspace::new();
    ws.write(
        "bad/tool.toml",
        &format!(
            "name = \"evil{}\"\nversion = \"0.1.0\"\ndescription = \"x\"\n[parameters]\ntype = \"object\"\n",
            HOSTILE.replace('\u{1b}', "\\u001b").replace('\u{7}', "\\u0007").replace('\u{9b}', "\\u009b").replace('\u{202e}', "\\u202e")
        ),
    );
    ws.write("bad/tool.wasm", "not wasm");
    let manifest = ws.root.join("bad/tool.toml");
    let wasm = ws.root.join("bad/tool.wasm");
    let (code, shown) = chat_on_terminal(
        &ws,
        &[
            "tools",
            "add",
            "--yes",
            manifest.to_str().unwrap(),
            wasm.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(code, 1, "{shown}");
    assert_shown_visibly(&shown);
}
