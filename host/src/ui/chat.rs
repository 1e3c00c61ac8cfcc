//! A chat started from the page: `toolcell chat --json --wait-approval`
//! in a process of its own, as at a terminal — the same policy, the same
//! records — with its calls waiting in the inbox for the page (or
//! `toolcell approve`) to decide. The page's server reads its events and
//! keeps the turn being written (thinking and text) for the run's live
//! page; everything else the run's page reads from the store.

use super::Ui;
use super::html::{escape, page};
use crate::store::RunDetail;
use crate::store::conversation::why_it_cannot_go_on;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The longest task taken from the page.
const MAX_TASK_CHARS: usize = 20_000;
/// How long a chat has to record its run (it first asks the model server
/// what the model can do) before the page says it did not start.
const START_PATIENCE: Duration = Duration::from_secs(60);
/// How long a call of a page's chat waits for a decision.
const WAIT_FOR_APPROVAL: &str = "1h";
/// The most of a chat's error output shown when it does not start.
const MAX_SHOWN_ERROR_CHARS: usize = 2_000;

/// The turn each page-started run is writing now, by run.
#[derive(Default)]
pub struct Streams {
    turns: Mutex<HashMap<i64, Turn>>,
    /// Bumped at every change, so open pages wake.
    changed: tokio::sync::watch::Sender<u64>,
}

/// What the model has written of its current turn.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Turn {
    pub thinking: String,
    pub text: String,
    /// Stamped at every change of this turn (see [`Streams::update`]).
    #[serde(skip)]
    pub version: u64,
}

impl Streams {
    /// The turn `run` is writing, if a chat of this page is writing one.
    pub fn turn(&self, run: i64) -> Option<Turn> {
        self.turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&run)
            .cloned()
    }

    /// Wakes when any turn changes.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Changes the turns and stamps `run`'s with a version never used
    /// before (of all turns: a new turn never repeats an old one's).
    fn update(&self, run: i64, change: impl FnOnce(&mut HashMap<i64, Turn>)) {
        let mut turns = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut turns);
        let mut version = 0;
        self.changed.send_modify(|n| {
            *n += 1;
            version = *n;
        });
        if let Some(turn) = turns.get_mut(&run) {
            turn.version = version;
        }
    }
}

/// Reads `stream` to its end, keeping its last [`MAX_SHOWN_ERROR_CHARS`]
/// characters in `tail`.
async fn keep_tail(stream: tokio::process::ChildStderr, tail: Arc<Mutex<String>>) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut kept = tail.lock().unwrap_or_else(|p| p.into_inner());
        kept.push_str(&line);
        kept.push('\n');
        let excess = kept.chars().count().saturating_sub(MAX_SHOWN_ERROR_CHARS);
        if excess > 0 {
            let cut = kept
                .char_indices()
                .nth(excess)
                .map_or(kept.len(), |(i, _)| i);
            kept.drain(..cut);
        }
    }
}

/// Waits for `child` in the background, so it leaves no zombie.
fn reap(mut child: tokio::process::Child) {
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
}

/// `/chat`: a task for the workspace's model.
pub async fn form(State(ui): State<Arc<Ui>>) -> Response {
    let model = &ui.config.model;
    let body = format!(
        "<h1>Chat</h1><p>A task for <code>{}</code> at <code>{}</code> ({}), with the workspace's tools and policy. Calls that need approval wait for you on the run's page.</p>\
<label for=\"task\">Task</label><textarea id=\"task\" rows=\"5\" maxlength=\"{MAX_TASK_CHARS}\" placeholder=\"Summarise the TODOs in notes/ into todo.md\"></textarea>\
<p><button data-post=\"/api/chat\" data-field=\"task\" data-follow=\"run\" class=\"approve\">Start</button></p>",
        escape(model.name.as_deref().unwrap_or("(no model set)")),
        escape(&model.base_url),
        match model.provider {
            crate::llm::ProviderKind::Ollama => "ollama",
            crate::llm::ProviderKind::OpenAi => "openai",
        },
    );
    page("Chat", "Chat", None, &body).into_response()
}

/// Whether the page offers to go on with `run`'s conversation: when
/// `toolcell chat --resume` would take it.
pub fn can_continue(run: &RunDetail) -> bool {
    why_it_cannot_go_on(run).is_none()
}

/// The box to go on with run `run`'s conversation: a new run that
/// continues it, as `toolcell chat --resume RUN` does.
pub fn continue_form(run: i64) -> String {
    format!(
        "<h2>Continue</h2><p>Goes on in a new run, with this conversation as its history (nothing in it is run again).</p>\
<label for=\"task\">Your reply</label><textarea id=\"task\" rows=\"3\" maxlength=\"{MAX_TASK_CHARS}\"></textarea>\
<p><button data-post=\"/api/chat\" data-body=\"{{&quot;resume&quot;:{run}}}\" data-field=\"task\" data-follow=\"run\" class=\"approve\">Send</button></p>"
    )
}

/// A task from the page, and the run whose conversation it continues.
#[derive(Debug, Deserialize)]
pub struct Task {
    task: String,
    #[serde(default)]
    resume: Option<i64>,
}

/// `POST /api/chat`: starts the chat (going on with run `resume`'s
/// conversation, when given) and answers with its run once it is
/// recorded: `{"run": ID}`.
pub async fn start(State(ui): State<Arc<Ui>>, Json(task): Json<Task>) -> Response {
    let text = task.task.trim().to_string();
    if text.is_empty() {
        return (StatusCode::BAD_REQUEST, "write a task first").into_response();
    }
    if text.chars().count() > MAX_TASK_CHARS {
        return (
            StatusCode::BAD_REQUEST,
            format!("a task is at most {MAX_TASK_CHARS} characters"),
        )
            .into_response();
    }
    // Refused here at once, as the chat would refuse it.
    if let Some(run) = task.resume
        && let Err(e) = ui.store.conversation(run)
    {
        return (
            StatusCode::BAD_REQUEST,
            format!("cannot continue run {run}: {e:#}"),
        )
            .into_response();
    }
    let mut command = ui.toolcell();
    command.args(["chat", "--json", "--wait-approval", WAIT_FOR_APPROVAL]);
    if let Some(run) = task.resume {
        command.arg("--resume").arg(run.to_string());
    }
    command
        .arg("--")
        .arg(&text)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot start the chat: {e}"),
            )
                .into_response();
        }
    };
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.start_kill();
        reap(child);
        return (StatusCode::INTERNAL_SERVER_ERROR, "the chat has no output").into_response();
    };
    // Its error output, drained from the start so it never blocks on it;
    // the last of it says why, if it does not start.
    let said = Arc::new(Mutex::new(String::new()));
    tokio::spawn(keep_tail(stderr, said.clone()));
    let mut lines = BufReader::new(stdout).lines();
    // Its first events, until the run is recorded.
    let started = tokio::time::timeout(START_PATIENCE, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Ok(event) = serde_json::from_str::<Value>(&line)
                && event["type"] == "run_started"
            {
                return event["run"].as_i64();
            }
        }
        None
    })
    .await;
    let run = match started {
        Ok(Some(run)) => run,
        outcome => {
            let _ = child.start_kill();
            let waited = child.wait().await;
            let why = if outcome.is_err() {
                format!(
                    "the chat did not start within {}s",
                    START_PATIENCE.as_secs()
                )
            } else {
                let said = said.lock().unwrap_or_else(|p| p.into_inner()).clone();
                let said = said.trim();
                if said.is_empty() {
                    format!(
                        "it ended ({})",
                        waited.map(|s| s.to_string()).unwrap_or_default()
                    )
                } else {
                    said.to_string()
                }
            };
            return (
                StatusCode::BAD_GATEWAY,
                format!("the chat did not start: {why}"),
            )
                .into_response();
        }
    };
    ui.streams.update(run, |turns| {
        turns.insert(run, Turn::default());
    });
    let streams = ui.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(event) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            let text = event["text"].as_str().unwrap_or_default();
            match event["type"].as_str() {
                Some("thinking") => streams.streams.update(run, |turns| {
                    turns.entry(run).or_default().thinking.push_str(text)
                }),
                Some("text") => streams.streams.update(run, |turns| {
                    turns.entry(run).or_default().text.push_str(text)
                }),
                // The turn is complete (its message is being stored), or
                // void (its request is made again): a new one begins.
                Some("turn_end" | "turn_discarded") => streams.streams.update(run, |turns| {
                    turns.insert(run, Turn::default());
                }),
                _ => {}
            }
        }
        // Its output is closed before it is waited for: it cannot block
        // writing to it.
        drop(lines);
        let _ = child.wait().await;
        streams.streams.update(run, |turns| {
            turns.remove(&run);
        });
    });
    Json(serde_json::json!({"run": run})).into_response()
}
