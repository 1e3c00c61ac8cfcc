//! What a run's conversation starts from: the run it continues (`toolcell
//! chat --resume RUN`: which runs can go on, and the link a new run keeps
//! to the one it continues), and the project instructions in its prompt.
//!
//! The new run holds the earlier conversation as its own first messages
//! (carried, not said again), so it reads, exports and continues on its
//! own, and keeps doing so when the earlier run is no longer kept.

use super::db::args;
use super::{RunDetail, RunId, Store};
use crate::llm::{Message, Role};
use anyhow::{Result, bail};

/// Why `run`'s conversation cannot go on in a new run, with the fix; `None`
/// when it can. The one rule for `chat --resume` and the page's Continue.
pub fn why_it_cannot_go_on(run: &RunDetail) -> Option<String> {
    let id = run.summary.id;
    let status = run.summary.status.as_str();
    if matches!(status, "running" | "waiting") {
        return Some(format!(
            "run {id} is still {status}: its conversation goes on there\n  fix: wait for it to end (or stop it), then continue it"
        ));
    }
    if run.messages.iter().all(|m| m.role == Role::System) {
        return Some(format!(
            "run {id} has no conversation to continue (a {} run that asked no model)\n  fix: start a new chat with `toolcell chat TASK`",
            run.summary.kind
        ));
    }
    let prompts = run
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .count();
    (prompts > 1).then(|| format!(
        "run {id} holds {prompts} conversations (one per agent() of its workflow), so there is no one conversation to continue\n  fix: start a new chat, and paste what it needs of `toolcell runs show {id}`"
    ))
}

impl Store {
    /// The conversation of `run` as recorded, system prompt included, to go
    /// on in a new run. Refused for a run that is still going (its
    /// conversation is not finished), one without a conversation (a
    /// workflow that asked no model) and one holding several (a workflow's
    /// `agent()` calls: which would go on is not for toolcell to guess).
    pub fn conversation(&self, run: RunId) -> Result<Vec<Message>> {
        let Some(detail) = self.run(run)? else {
            bail!("there is no run {run}\n  fix: `toolcell runs` lists the recorded runs");
        };
        if let Some(why) = why_it_cannot_go_on(&detail) {
            bail!("{why}");
        }
        Ok(detail.messages)
    }

    /// Records that `run` continues `earlier`, its first `carried`
    /// messages after the system prompt taken from it.
    pub fn link_resumed(&self, run: RunId, earlier: RunId, carried: usize) -> Result<()> {
        self.with(|conn| {
            conn.exec(
                "UPDATE runs SET resumes = ?2, carried = ?3 WHERE id = ?1",
                args![run, earlier, carried],
            )?;
            Ok(())
        })
    }
}

impl Store {
    /// Records which project instructions `run`'s prompt holds (the file,
    /// and whether it was cut).
    pub fn set_instructions(&self, run: RunId, described: &str) -> Result<()> {
        self.with(|conn| {
            conn.exec(
                "UPDATE runs SET instructions = ?2 WHERE id = ?1",
                args![run, described],
            )?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RunKind, RunStatus};

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        (dir, store)
    }

    #[test]
    fn an_ended_conversation_goes_on_and_the_new_run_says_which_it_continues() {
        let (_dir, store) = store();
        let old = store.start_run(RunKind::Chat, "first", None).unwrap();
        store.add_message(old, &Message::system("prompt")).unwrap();
        store.add_message(old, &Message::user("hi")).unwrap();
        store
            .finish_run(old, RunStatus::Succeeded, Some("hello"), None)
            .unwrap();
        let messages = store.conversation(old).unwrap();
        assert_eq!(messages.len(), 2);
        let new = store.start_run(RunKind::Chat, "second", None).unwrap();
        store.link_resumed(new, old, 1).unwrap();
        let summary = store.run(new).unwrap().unwrap().summary;
        assert_eq!((summary.resumes, summary.carried), (Some(old), 1));
    }

    #[test]
    fn runs_still_going_without_a_conversation_or_with_several_are_refused() {
        let (_dir, store) = store();
        let running = store.start_run(RunKind::Chat, "going", None).unwrap();
        store.add_message(running, &Message::user("hi")).unwrap();
        let e = store.conversation(running).unwrap_err().to_string();
        assert!(e.contains("still running"), "{e}");

        let workflow = store.start_run(RunKind::Workflow, "w", None).unwrap();
        store
            .finish_run(workflow, RunStatus::Succeeded, None, None)
            .unwrap();
        let e = store.conversation(workflow).unwrap_err().to_string();
        assert!(e.contains("no conversation"), "{e}");

        let agents = store.start_run(RunKind::Workflow, "two", None).unwrap();
        for text in ["a", "b"] {
            store.add_message(agents, &Message::system(text)).unwrap();
            store.add_message(agents, &Message::user(text)).unwrap();
        }
        store
            .finish_run(agents, RunStatus::Succeeded, None, None)
            .unwrap();
        let e = store.conversation(agents).unwrap_err().to_string();
        assert!(e.contains("2 conversations"), "{e}");

        let e = store.conversation(999).unwrap_err().to_string();
        assert!(e.contains("there is no run 999"), "{e}");
    }
}
