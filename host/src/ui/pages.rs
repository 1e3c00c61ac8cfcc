//! The pages, written on the server from the run store and the config as
//! they are at each request. A request with `X-Fragment: 1` (the page's
//! own script, redrawing after a live event) gets the page's body alone.

use super::html::{attribute, badge, escape, page};
use super::{Ui, chat};
use crate::registry::Registry;
use crate::registry::grant::ToolGrant;
use crate::store::approvals::{ParkedCall, ParkedStatus};
use crate::store::views::CallChange;
use crate::store::{RunDetail, RunSummary, ToolCallRecord};
use crate::util::text::local_time;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Write;
use std::sync::Arc;

/// Runs on the list page: the newest, as `runs list --limit` would.
const RUNS_SHOWN: usize = 200;
/// Decided parked calls shown under the waiting ones.
const HISTORY_SHOWN: usize = 50;
/// Characters of a call's result shown on its card; the rest is cut, saying so.
const MAX_RESULT_CHARS: usize = 20_000;
/// Fire times shown per schedule.
const FIRE_TIMES: usize = 3;
/// The header the page's script sets to get a body alone.
const FRAGMENT_HEADER: &str = "x-fragment";

/// A whole page, or its body alone for the page's own redraw.
fn respond(
    headers: &HeaderMap,
    title: &str,
    section: &str,
    live: Option<&str>,
    body: String,
) -> Response {
    if headers.contains_key(FRAGMENT_HEADER) {
        return axum::response::Html(body).into_response();
    }
    page(title, section, live, &body).into_response()
}

/// A store that could not be read: said on the page, not a crash.
fn failed(error: anyhow::Error) -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("toolcell ui: {error:#}\n"),
    )
        .into_response()
}

#[derive(Debug, Default, Deserialize)]
pub struct RunFilter {
    status: Option<String>,
    kind: Option<String>,
    schedule: Option<String>,
}

/// `/`: the runs, newest first, filtered by status, kind and schedule.
pub async fn runs(
    State(ui): State<Arc<Ui>>,
    Query(filter): Query<RunFilter>,
    headers: HeaderMap,
) -> Response {
    fn given(v: &Option<String>) -> Option<&str> {
        v.as_deref().filter(|v| !v.is_empty())
    }
    let listed =
        match ui
            .store
            .list_runs(RUNS_SHOWN, given(&filter.status), given(&filter.schedule))
        {
            Ok(runs) => runs,
            Err(e) => return failed(e),
        };
    let runs: Vec<&RunSummary> = listed
        .iter()
        .filter(|r| given(&filter.kind).is_none_or(|k| r.kind == k))
        .collect();
    let mut body = String::from("<h1>Runs</h1>");
    body.push_str(&filter_form(&ui, &filter));
    if runs.is_empty() {
        body.push_str("<p class=\"empty\">No runs recorded yet.</p>");
    } else {
        body.push_str("<table class=\"runs\"><thead><tr><th>Run</th><th>Started</th><th>Status</th><th>Kind</th><th>Calls</th><th>Task</th></tr></thead><tbody>");
        for run in runs {
            let kind = match (&run.schedule, &run.trigger) {
                (Some(schedule), Some(trigger)) => format!("{schedule} ({trigger})"),
                _ => run.kind.clone(),
            };
            let _ = write!(
                body,
                "<tr data-run=\"{id}\"><td><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                local_time(run.started_at),
                badge(&run.status),
                escape(&kind),
                run.tool_calls,
                escape(&crate::util::text::one_line(&run.title, 100)),
                id = run.id,
            );
        }
        body.push_str("</tbody></table>");
    }
    respond(&headers, "Runs", "Runs", None, body)
}

/// The filters of the runs page: a form that reloads it.
fn filter_form(ui: &Ui, filter: &RunFilter) -> String {
    let select = |name: &str, label: &str, options: &[String], chosen: &Option<String>| {
        let mut html =
            format!("<label>{label} <select name=\"{name}\"><option value=\"\">any</option>");
        for option in options {
            let selected = if chosen.as_deref() == Some(option.as_str()) {
                " selected"
            } else {
                ""
            };
            let _ = write!(
                html,
                "<option value={}{selected}>{}</option>",
                attribute(option),
                escape(option)
            );
        }
        html.push_str("</select></label>");
        html
    };
    let statuses: Vec<String> = [
        "running",
        "waiting",
        "succeeded",
        "incomplete",
        "failed",
        "cancelled",
        "interrupted",
        "timed-out",
        "skipped",
    ]
    .map(String::from)
    .to_vec();
    let kinds: Vec<String> = ["chat", "workflow", "schedule", "mcp"]
        .map(String::from)
        .to_vec();
    let schedules: Vec<String> = ui.config.schedules.iter().map(|s| s.name.clone()).collect();
    format!(
        "<form class=\"filters\" method=\"get\" action=\"/\">{}{}{}<button type=\"submit\">Filter</button></form>",
        select("status", "Status", &statuses, &filter.status),
        select("kind", "Kind", &kinds, &filter.kind),
        select("schedule", "Schedule", &schedules, &filter.schedule),
    )
}

/// `/runs/{id}`: a run's messages, each call as a card, its changes' diffs.
pub async fn run(State(ui): State<Arc<Ui>>, Path(id): Path<i64>, headers: HeaderMap) -> Response {
    let detail = match ui.store.run(id) {
        Ok(Some(detail)) => detail,
        Ok(None) => {
            return (
                StatusCode::NOT_FOUND,
                format!("toolcell ui: there is no run {id}\n"),
            )
                .into_response();
        }
        Err(e) => return failed(e),
    };
    let changes = match ui.store.call_changes(id) {
        Ok(changes) => changes,
        Err(e) => return failed(e),
    };
    let parked = match ui.store.parked_calls(false) {
        Ok(parked) => parked,
        Err(e) => return failed(e),
    };
    let waiting: Vec<&ParkedCall> = parked.iter().filter(|p| p.run == Some(id)).collect();
    let body = run_body(&detail, &changes, &waiting);
    let since = ui
        .store
        .run_fingerprint(id)
        .ok()
        .flatten()
        .unwrap_or_default();
    let live = format!("/api/runs/{id}/events?since={}", percent(&since));
    respond(&headers, &format!("Run {id}"), "Runs", Some(&live), body)
}

fn run_body(detail: &RunDetail, changes: &[CallChange], waiting: &[&ParkedCall]) -> String {
    let run = &detail.summary;
    let mut body = format!(
        "<h1>Run {} {}</h1><dl class=\"facts\"><dt>Kind</dt><dd>{}</dd><dt>Started</dt><dd>{}</dd>",
        run.id,
        badge(&run.status),
        escape(&run.kind),
        local_time(run.started_at),
    );
    if let Some(ended) = run.ended_at {
        let _ = write!(body, "<dt>Ended</dt><dd>{}</dd>", local_time(ended));
    }
    if let Some(model) = &run.model {
        let _ = write!(body, "<dt>Model</dt><dd>{}</dd>", escape(model));
    }
    if let Some(schedule) = &run.schedule {
        let _ = write!(
            body,
            "<dt>Schedule</dt><dd>{} ({})</dd>",
            escape(schedule),
            escape(run.trigger.as_deref().unwrap_or_default())
        );
    }
    if let Some(file) = &run.instructions {
        let _ = write!(body, "<dt>Instructions</dt><dd>{}</dd>", escape(file));
    }
    if let Some(earlier) = run.resumes {
        let _ = write!(
            body,
            "<dt>Continues</dt><dd><a href=\"/runs/{earlier}\">run {earlier}</a></dd>"
        );
    }
    let _ = write!(
        body,
        "<dt>Task</dt><dd class=\"text\">{}</dd></dl>",
        escape(&run.title)
    );
    if let Some(error) = &run.error {
        let _ = write!(body, "<p class=\"error\">{}</p>", escape(error));
    }
    let undoable = changes.iter().any(|c| !c.undone);
    if undoable && !matches!(run.status.as_str(), "running" | "waiting") {
        let _ = write!(
            body,
            "<p><button data-post=\"/api/runs/{}/undo\" data-confirm=\"Restore what this run's file changes replaced?\">Undo this run's changes</button></p>",
            run.id
        );
    }
    if matches!(run.status.as_str(), "running" | "waiting") {
        // What the model is writing now, for a chat started from the page
        // (filled by the page's script from the run's live events).
        body.push_str("<section id=\"streaming\" hidden><h2>Now</h2><details open><summary>thinking</summary><pre class=\"thinking\"></pre></details><pre class=\"text\"></pre></section>");
    }
    if !waiting.is_empty() {
        // Each waiting call opens as a dialog over the run, as the
        // terminal's prompt stops it; closed, it stays here as a card.
        body.push_str("<h2>Waiting for you</h2>");
        for call in waiting {
            let _ = write!(
                body,
                "<dialog class=\"approval\" data-call=\"{}\" aria-label=\"A call waits for your approval\">{}<p><button type=\"button\" data-close>Decide later</button></p></dialog>",
                call.id,
                parked_card(call)
            );
        }
    }
    if !detail.messages.is_empty() {
        body.push_str("<h2>Conversation</h2><ol class=\"messages\">");
        // The messages carried from the run this one continues follow the
        // system prompt; their calls are history, with no card here.
        let carried = 1..=run.carried as usize;
        for (index, message) in detail.messages.iter().enumerate() {
            let history = carried.contains(&index);
            if history && index == 1 {
                let _ = write!(
                    body,
                    "<li class=\"earlier\">Earlier in this conversation (<a href=\"/runs/{0}\">run {0}</a>): history, not run again</li>",
                    run.resumes.unwrap_or_default()
                );
            }
            if message.role == crate::llm::Role::Tool {
                if history {
                    let _ = write!(
                        body,
                        "<li class=\"message tool carried\"><details><summary>result of <code>{}</code></summary><pre class=\"text\">{}</pre></details></li>",
                        escape(message.tool_name.as_deref().unwrap_or("a call")),
                        escape(&message.content)
                    );
                }
                continue; // shown on the call's card
            }
            if message.role == crate::llm::Role::System {
                let _ = write!(
                    body,
                    "<li class=\"message system\"><details><summary>system prompt</summary><pre class=\"text\">{}</pre></details></li>",
                    escape(&message.content)
                );
                continue;
            }
            let _ = write!(
                body,
                "<li class=\"message {0}{1}\"><h3>{0}</h3>",
                message.role.as_str(),
                if history { " carried" } else { "" }
            );
            if !message.thinking.is_empty() {
                let _ = write!(
                    body,
                    "<details class=\"thinking\"><summary>thinking</summary><pre>{}</pre></details>",
                    escape(&message.thinking)
                );
            }
            if !message.content.is_empty() {
                let _ = write!(
                    body,
                    "<pre class=\"text\">{}</pre>",
                    escape(&message.content)
                );
            }
            for call in &message.tool_calls {
                let _ = write!(
                    body,
                    "<p class=\"asks\">asks for <code>{}</code></p>",
                    escape(&call.name)
                );
            }
            body.push_str("</li>");
        }
        body.push_str("</ol>");
    }
    let _ = write!(body, "<h2>Tool calls ({})</h2>", detail.tool_calls.len());
    if detail.tool_calls.is_empty() {
        body.push_str("<p class=\"empty\">No tool calls.</p>");
    }
    for call in &detail.tool_calls {
        let parked = waiting
            .iter()
            .any(|p| p.tool == call.tool && p.arguments == call.arguments);
        let diffs: Vec<&CallChange> = changes.iter().filter(|c| c.seq == call.seq).collect();
        body.push_str(&call_card(call, parked, &diffs));
    }
    if !detail.logs.is_empty() {
        body.push_str("<h2>Output</h2><pre class=\"logs\">");
        for (level, line) in &detail.logs {
            let _ = writeln!(body, "[{}] {}", escape(level), escape(line));
        }
        body.push_str("</pre>");
    }
    if let Some(answer) = &run.answer {
        let _ = write!(
            body,
            "<h2>Answer</h2><pre class=\"text answer\">{}</pre>",
            escape(answer)
        );
    }
    if chat::can_continue(detail) {
        body.push_str(&chat::continue_form(run.id));
    }
    body
}

/// A card's state, from the record: requested, waiting for approval,
/// running, done, failed, denied or cancelled.
fn call_state(call: &ToolCallRecord, parked: bool) -> &str {
    match call.status.as_str() {
        "running" if parked => "waiting for approval",
        "running" if call.decision.is_none() && call.duration_ms.is_none() => "requested",
        other => other,
    }
}

fn call_card(call: &ToolCallRecord, parked: bool, changes: &[&CallChange]) -> String {
    let state = call_state(call, parked);
    let mut card = format!(
        "<article class=\"card call\" id=\"call-{}\" data-state={}><h3>{}. <code>{}</code> {}</h3><dl class=\"facts\">",
        call.seq,
        attribute(state),
        call.seq,
        escape(&call.tool),
        badge(state),
    );
    if let Some(decision) = &call.decision {
        let by = call
            .decided_by
            .as_deref()
            .map(|by| format!(" by {}", escape(by)))
            .unwrap_or_default();
        let at = call
            .decided_at
            .map(|at| format!(" at {}", local_time(at)))
            .unwrap_or_default();
        let _ = write!(
            card,
            "<dt>Decided</dt><dd>{}{by}{at}</dd>",
            escape(decision)
        );
    }
    if let Some(ms) = call.duration_ms {
        let _ = write!(card, "<dt>Took</dt><dd>{ms:.1} ms</dd>");
    }
    card.push_str("</dl>");
    let (arguments, texts) = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(args) => {
            let (args, texts) = crate::approval::texts_apart(&args);
            let pretty = serde_json::to_string_pretty(&args).unwrap_or_default();
            (pretty, texts)
        }
        Err(_) => (call.arguments.clone(), Vec::new()),
    };
    let _ = write!(
        card,
        "<details open><summary>Arguments</summary><pre>{}</pre></details>",
        escape(&arguments)
    );
    for (key, text) in texts {
        let _ = write!(
            card,
            "<details open><summary><code>{}</code></summary><pre class=\"code\">{}</pre></details>",
            escape(&key),
            // As at the terminal: nothing in the code may hide or reorder
            // what is shown (escape sequences, direction marks).
            escape(&crate::util::text::for_terminal(&text))
        );
    }
    for change in changes {
        let args = serde_json::from_str::<Value>(&change.arguments).unwrap_or_default();
        let shown = crate::effect::preview::recorded(
            &change.tool,
            &args,
            &change.path,
            change.before.as_deref(),
        );
        if let Some(shown) = shown {
            let undone = if change.undone { " (undone)" } else { "" };
            let _ = write!(
                card,
                "<details open class=\"change\"><summary>Change to <code>{}</code>{undone}</summary>{}</details>",
                escape(&change.path),
                diff_block(&shown)
            );
        }
    }
    if let Some(result) = &call.result {
        let shown = crate::util::text::shorten(result, MAX_RESULT_CHARS);
        let class = if call.error_kind.is_some() {
            " class=\"error\""
        } else {
            ""
        };
        let _ = write!(
            card,
            "<details{}><summary>Result</summary><pre{class}>{}</pre></details>",
            if call.error_kind.is_some() {
                " open"
            } else {
                ""
            },
            escape(&shown)
        );
    }
    card.push_str("</article>");
    card
}

/// `text` for a query string: everything but letters, digits and `-._~`
/// percent-encoded.
fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A diff (or a sentence) with its added and removed lines marked.
fn diff_block(text: &str) -> String {
    let mut html = String::from("<pre class=\"diff\">");
    for line in text.lines() {
        let class = match line.as_bytes().first() {
            Some(b'+') if !line.starts_with("+++") => "add",
            Some(b'-') if !line.starts_with("---") => "del",
            Some(b'@') => "hunk",
            _ => "ctx",
        };
        let _ = writeln!(html, "<span class=\"{class}\">{}</span>", escape(line));
    }
    html.push_str("</pre>");
    html
}

/// A parked call with what the prompt shows and its answers.
fn parked_card(call: &ParkedCall) -> String {
    let run = call
        .run
        .map(|r| format!(" of <a href=\"/runs/{r}\">run {r}</a>"))
        .unwrap_or_default();
    let mut card = format!(
        "<article class=\"card parked\" id=\"parked-{id}\"><h3>Call {id}{run}: <code>{}</code> {}</h3><p class=\"when\">asked {}, waits until {}</p><pre class=\"shown\">{}</pre>",
        escape(&call.tool),
        badge("waiting"),
        local_time(call.asked_at),
        local_time(call.expires_at),
        escape(call.shown.trim_start_matches('\n')),
        id = call.id,
    );
    let _ = write!(
        card,
        "<div class=\"answers\"><button data-post=\"/api/approvals/{id}\" data-body='{{\"decision\":\"approve\"}}' class=\"approve\">Approve</button>",
        id = call.id
    );
    if call.for_run {
        let _ = write!(
            card,
            "<button data-post=\"/api/approvals/{id}\" data-body='{{\"decision\":\"approve-for-run\"}}'>Approve for this run</button>",
            id = call.id
        );
    }
    let _ = write!(
        card,
        "<input id=\"reason-{id}\" placeholder=\"reason (optional)\" maxlength=\"500\"><button data-post=\"/api/approvals/{id}\" data-body='{{\"decision\":\"deny\"}}' data-reason=\"reason-{id}\" class=\"deny\">Deny</button></div></article>",
        id = call.id
    );
    card
}

/// `/approvals`: the calls waiting for a person, then those decided.
pub async fn approvals(State(ui): State<Arc<Ui>>, headers: HeaderMap) -> Response {
    let all = match ui.store.parked_calls(true) {
        Ok(all) => all,
        Err(e) => return failed(e),
    };
    let (waiting, decided): (Vec<&ParkedCall>, Vec<&ParkedCall>) =
        all.iter().partition(|c| c.status == ParkedStatus::Waiting);
    let mut body = String::from("<h1>Approvals</h1>");
    if waiting.is_empty() {
        body.push_str("<p class=\"empty\">No call waits for approval.</p>");
    }
    for call in &waiting {
        body.push_str(&parked_card(call));
    }
    if !decided.is_empty() {
        body.push_str("<h2>Decided</h2><table><thead><tr><th>Call</th><th>Run</th><th>Tool</th><th>Status</th><th>By</th><th>When</th><th>Reason</th></tr></thead><tbody>");
        for call in decided.iter().take(HISTORY_SHOWN) {
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                call.id,
                call.run
                    .map(|r| format!("<a href=\"/runs/{r}\">{r}</a>"))
                    .unwrap_or_default(),
                escape(&call.tool),
                badge(call.status.as_str()),
                escape(call.decided_by.as_deref().unwrap_or_default()),
                call.decided_at.map(local_time).unwrap_or_default(),
                escape(call.reason.as_deref().unwrap_or_default()),
            );
        }
        body.push_str("</tbody></table>");
    }
    let since = ui.store.approvals_fingerprint().unwrap_or_default();
    let live = format!("/api/approvals/events?since={}", percent(&since));
    respond(&headers, "Approvals", "Approvals", Some(&live), body)
}

/// `/schedules`: each schedule's next fire times, last run, and *Run now*.
pub async fn schedules(State(ui): State<Arc<Ui>>, headers: HeaderMap) -> Response {
    let mut body = String::from("<h1>Schedules</h1>");
    if ui.config.schedules.is_empty() {
        body.push_str(
            "<p class=\"empty\">No schedules: add [[schedule]] entries to toolcell.toml.</p>",
        );
    }
    let now = jiff::Timestamp::now();
    for schedule in &ui.config.schedules {
        let last = match ui.store.list_runs(1, None, Some(&schedule.name)) {
            Ok(runs) => runs.into_iter().next(),
            Err(e) => return failed(e),
        };
        let next: String = schedule
            .next_fires(now, FIRE_TIMES)
            .iter()
            .map(|at| {
                format!(
                    "<li>{}</li>",
                    escape(
                        &at.to_zoned(schedule.cron.zone().clone())
                            .strftime("%Y-%m-%d %H:%M:%S %Z")
                            .to_string()
                    )
                )
            })
            .collect();
        let last = match last {
            Some(run) => format!(
                "<a href=\"/runs/{id}\">run {id}</a> {} {}",
                local_time(run.started_at),
                badge(&run.status),
                id = run.id
            ),
            None => "never".to_string(),
        };
        let _ = write!(
            body,
            "<article class=\"card schedule\" data-schedule={name_attr}><h3>{name}{disabled}</h3><dl class=\"facts\"><dt>Workflow</dt><dd><code>{workflow}</code></dd><dt>When</dt><dd><code>{cron}</code> in {zone}</dd><dt>Last run</dt><dd>{last}</dd><dt>Next</dt><dd><ul>{next}</ul></dd></dl><button data-post={run_now}>Run now</button></article>",
            name_attr = attribute(&schedule.name),
            name = escape(&schedule.name),
            disabled = if schedule.enabled { "" } else { " (disabled)" },
            workflow = escape(&schedule.workflow_display),
            cron = escape(schedule.cron.expression()),
            zone = escape(schedule.cron.zone_name()),
            run_now = attribute(&format!("/api/schedules/{}/run", percent(&schedule.name))),
        );
    }
    respond(&headers, "Schedules", "Schedules", None, body)
}

/// `/tools`: each tool's source, capabilities, grant and approval. MCP
/// servers are named, not started: the page starts no program to list.
pub async fn tools(State(ui): State<Arc<Ui>>, headers: HeaderMap) -> Response {
    let registry = Registry::load(
        crate::util::locations::user_tools_dir().as_deref(),
        &ui.config.workspace_tools_dir(),
    );
    let mut body = String::from(
        "<h1>Tools</h1><table class=\"tools\"><thead><tr><th>Tool</th><th>Source</th><th>Approval</th><th>Files</th><th>Network</th><th>Programs</th><th>Environment</th><th>Description</th></tr></thead><tbody>",
    );
    for entry in registry.tools() {
        let manifest = &entry.manifest;
        let (approval, network, process, env) = match ToolGrant::resolve(manifest, &ui.config) {
            Ok(grant) if !grant.enabled => (
                "disabled".to_string(),
                String::new(),
                String::new(),
                String::new(),
            ),
            Ok(grant) => (
                grant.approval.to_string(),
                grant.network.join(", "),
                grant.process.join(", "),
                grant.env.join(", "),
            ),
            Err(problem) => (
                format!("invalid: {problem}"),
                String::new(),
                String::new(),
                String::new(),
            ),
        };
        let _ = write!(
            body,
            "<tr data-tool={}><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            attribute(&manifest.name),
            escape(&manifest.name),
            escape(&entry.origin()),
            escape(&approval),
            escape(&manifest.capabilities.fs.to_string()),
            escape(&network),
            escape(&process),
            escape(&env),
            escape(&manifest.description),
        );
    }
    body.push_str("</tbody></table>");
    let servers: Vec<_> = ui.config.mcp_servers.iter().collect();
    if !servers.is_empty() {
        body.push_str("<h2>MCP servers</h2><ul>");
        for server in servers {
            let _ = write!(
                body,
                "<li><code>{}</code>: {}{}</li>",
                escape(&server.name),
                escape(&server.command_line()),
                if server.enabled {
                    ""
                } else {
                    " (not started: the config is not trusted, or it is disabled)"
                }
            );
        }
        body.push_str("</ul>");
    }
    respond(&headers, "Tools", "Tools", None, body)
}

/// The page's script and style, built into toolcell: nothing is fetched
/// from the network.
pub async fn asset(Path(file): Path<String>) -> Response {
    let (kind, text) = match file.as_str() {
        "app.js" => (
            "text/javascript; charset=utf-8",
            include_str!("assets/app.js"),
        ),
        "app.css" => ("text/css; charset=utf-8", include_str!("assets/app.css")),
        _ => return (StatusCode::NOT_FOUND, "toolcell ui: no such file\n").into_response(),
    };
    ([(header::CONTENT_TYPE, kind)], text).into_response()
}
