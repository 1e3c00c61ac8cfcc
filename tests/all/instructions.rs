//! Project instructions end to end: `AGENTS.md` at the workspace root
//! reaches the model's system prompt as the owner's words, `runs show`
//! says which file was used, `--no-project-instructions` leaves it out,
//! and a link is never followed out of the workspace.

use crate::agent::{messages, workspace};
use crate::model_server::{ModelServer, ollama};

/// The system prompt of the model server's `n`th request.
fn system_prompt(server: &ModelServer, n: usize) -> String {
    messages(&server.requests()[n])[0]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn agents_md_reaches_the_prompt_as_the_owners_words_and_can_be_left_out() {
    let server = ModelServer::start(vec![ollama::answer("Bonjour."), ollama::answer("Hello.")]);
    let ws = workspace(&server, "ollama", "");
    ws.write("AGENTS.md", "Always answer in French.\n");
    let run = ws.run(&["chat", "hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    let prompt = system_prompt(&server, 0);
    assert!(
        prompt.contains("Project instructions, from AGENTS.md at the workspace root, written by the workspace's owner"),
        "{prompt}"
    );
    assert!(prompt.ends_with("Always answer in French."), "{prompt}");
    let shown = ws.run(&["runs", "show", "1"]);
    assert!(
        shown.stdout.contains("project instructions AGENTS.md"),
        "{shown:?}"
    );

    let run = ws.run(&["chat", "--no-project-instructions", "hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!system_prompt(&server, 1).contains("French"));
    let shown = ws.run(&["runs", "show", "2"]);
    assert!(!shown.stdout.contains("project instructions"), "{shown:?}");
}

#[test]
fn a_linked_agents_md_is_left_out_saying_why() {
    let server = ModelServer::start(vec![ollama::answer("ok")]);
    let ws = workspace(&server, "ollama", "");
    let outside = ws.marks().join("private.txt");
    std::fs::write(&outside, "SECRET KEY").unwrap();
    std::os::unix::fs::symlink(&outside, ws.root.join("AGENTS.md")).unwrap();
    let run = ws.run(&["chat", "hi"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!system_prompt(&server, 0).contains("SECRET"));
    assert!(
        run.stderr
            .contains("AGENTS.md at the workspace root is left out of the prompt: it is a link"),
        "{run:?}"
    );
}
