//! `toolcell completions` and `toolcell man`, made from the command line's
//! definition: each shell parses its script and bash completes with it;
//! groff reads every manual page without a warning (through preconv, as
//! man does).

use crate::harness::Workspace;
use std::process::Command;

/// What bash's completion of `words` (the last one being completed)
/// offers, with toolcell's script loaded.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = format!(
        "source {script:?}; COMP_WORDS=({words}); COMP_CWORD={last}; _toolcell toolcell {current:?} {previous:?}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = words.join(" "),
        last = words.len() - 1,
        current = words[words.len() - 1],
        previous = words[words.len() - 2],
    );
    let out = Command::new("bash").args(["-c", &line]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn completions_parse_in_each_shell_and_bash_completes_commands_and_flags() {
    let ws = Workspace::new();
    for (shell, check) in [
        ("bash", vec!["bash", "-n"]),
        ("zsh", vec!["zsh", "-n"]),
        ("fish", vec!["fish", "--no-execute"]),
    ] {
        let made = ws.run(&["completions", shell]);
        assert_eq!(made.code, 0, "{made:?}");
        let file = ws.write(&format!("completions.{shell}"), &made.stdout);
        let parsed = Command::new(check[0])
            .args(&check[1..])
            .arg(&file)
            .output()
            .unwrap_or_else(|e| panic!("{shell} is needed to check its completions: {e}"));
        assert!(parsed.status.success(), "{shell}: {parsed:?}");
    }
    let script = ws.root.join("completions.bash");
    assert!(bash_completes(&script, &["toolcell", "ch"]).contains(&"chat".to_string()));
    let flags = bash_completes(&script, &["toolcell", "chat", "--res"]);
    assert_eq!(flags, ["--resume"]);
    let refused = ws.run(&["completions", "tcsh"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("possible values"), "{refused:?}");
}

#[test]
fn every_manual_page_reads_without_a_warning() {
    let ws = Workspace::new();
    let one = ws.run(&["man"]);
    assert_eq!(one.code, 0, "{one:?}");
    assert!(
        one.stdout.starts_with(".ie \\n(.g .ds Aq"),
        "{}",
        &one.stdout[..80]
    );
    let dir = ws.root.join("man");
    let all = ws.run(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(all.code, 0, "{all:?}");
    let pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let names: Vec<String> = pages
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in [
        "toolcell.1",
        "toolcell-chat.1",
        "toolcell-runs-show.1",
        "toolcell-tools-call.1",
    ] {
        assert!(names.contains(&expected.to_string()), "{names:?}");
    }
    for page in &pages {
        let read = Command::new("groff")
            .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
            .arg(page)
            .output()
            .expect("groff is needed to check the manual pages");
        assert!(
            read.status.success() && read.stderr.is_empty(),
            "{page:?}: {read:?}"
        );
    }
    let chat = std::fs::read_to_string(dir.join("toolcell-chat.1")).unwrap();
    assert!(chat.contains("resume"), "{chat}");
}
