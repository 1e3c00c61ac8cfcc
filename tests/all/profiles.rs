//! `[profile.NAME]` and `--profile NAME` end to end: a profile's keys
//! override `[model]` and `[agent]` one by one for the run, an unknown
//! profile is refused before anything runs, and the daemon and the page
//! keep the profile they were started with.

use crate::agent::workspace;
use crate::model_server::{ModelServer, ollama};

#[test]
fn a_profile_overrides_model_and_agent_keys_and_an_unknown_one_is_refused() {
    let server = ModelServer::start(vec![ollama::answer("one"), ollama::answer("two")]);
    let ws = workspace(
        &server,
        "ollama",
        "temperature = 0.5\n\n[profile.small]\nmodel = { name = \"small-model\" }\nagent = { max_rounds = 3 }\n",
    );
    let plain = ws.run(&["chat", "hi"]);
    assert_eq!(plain.code, 0, "{plain:?}");
    let small = ws.run(&["--profile", "small", "chat", "hi"]);
    assert_eq!(small.code, 0, "{small:?}");
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "fake-model");
    assert_eq!(requests[1].body["model"], "small-model");
    // What the profile leaves out stays as [model] says.
    assert_eq!(requests[1].body["options"]["temperature"], 0.5);
    let shown = ws.run(&["runs", "show", "2"]);
    assert!(shown.stdout.contains("model small-model"), "{shown:?}");

    let unknown = ws.run(&["chat", "--profile", "large", "hi"]);
    assert_eq!(unknown.code, 1, "{unknown:?}");
    assert!(
        unknown.stderr.contains("there is no profile `large`")
            && unknown.stderr.contains("use one of: small"),
        "{unknown:?}"
    );
    assert_eq!(server.requests().len(), 2);
}
