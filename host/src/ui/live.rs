//! Server-sent events that tell an open page what it shows changed: the
//! page then redraws its body. The run store is the source, looked at
//! every [`LOOK_EVERY`], so runs of every process are followed alike; a
//! page nobody has open costs nothing.

use super::Ui;
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// How often an open page's run is looked at: a change shows within this
/// and the page's redraw (the bound is 200 ms).
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// `?since=`: the fingerprint the page was drawn from, so a change between
/// drawing it and opening the events is not missed.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Since {
    since: Option<String>,
}

/// Events of what `fingerprint` says, sent each time it changes from
/// `since`, and, with `turn` (a run started by a chat of this page), that
/// run's turn each time it grows. Looked at every [`LOOK_EVERY`], and at
/// once when a turn changes.
fn changes(
    ui: Arc<Ui>,
    since: Option<String>,
    turn: Option<i64>,
    fingerprint: impl Fn(&Ui) -> Option<String> + Send + 'static,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let woken = ui.streams.subscribe();
    let stream = futures_util::stream::unfold(
        (ui, since, 0u64, woken, fingerprint),
        move |(ui, mut last, mut turn_seen, mut woken, fingerprint)| async move {
            loop {
                let now = fingerprint(&ui);
                let mut event = None;
                if now.is_some() && now != last {
                    // Without `since`, the first look is the baseline.
                    if last.is_some() {
                        event = Some(
                            Event::default()
                                .event("change")
                                .data(now.clone().unwrap_or_default()),
                        );
                    }
                    last = now;
                }
                if event.is_none()
                    && let Some(current) = turn.and_then(|run| ui.streams.turn(run))
                    && current.version != turn_seen
                {
                    turn_seen = current.version;
                    let data = serde_json::to_string(&current).unwrap_or_default();
                    event = Some(Event::default().event("turn").data(data));
                }
                if let Some(event) = event {
                    return Some((Ok(event), (ui, last, turn_seen, woken, fingerprint)));
                }
                tokio::select! {
                    () = tokio::time::sleep(LOOK_EVERY) => {}
                    _ = woken.changed(), if turn.is_some() => {}
                    // The page stops: the events end, so the server can.
                    () = ui.stopping.cancelled() => return None,
                }
            }
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// `GET /api/runs/{id}/events`: a `change` each time the run does, and,
/// for a chat started from the page, a `turn` with what the model has
/// written of its current turn (`{"thinking", "text"}`) each time it
/// grows.
pub async fn run_events(
    State(ui): State<Arc<Ui>>,
    Path(id): Path<i64>,
    Query(since): Query<Since>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    changes(ui, since.since, Some(id), move |ui| {
        ui.store.run_fingerprint(id).ok().flatten()
    })
}

/// `GET /api/approvals/events`: a `change` each time a call is parked or
/// decided.
pub async fn approval_events(
    State(ui): State<Arc<Ui>>,
    Query(since): Query<Since>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    changes(ui, since.since, None, |ui| {
        ui.store.approvals_fingerprint().ok()
    })
}
