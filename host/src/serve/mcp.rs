//! `toolcell mcp`: the workspace's tools served over MCP (stdio, with the
//! official Rust SDK, `rmcp`).
//!
//! Every tool the agent would be offered is listed with its manifest's
//! JSON Schema, and marked read-only or destructive from the manifest. A
//! call goes the same way as from the agent or a workflow (`call::runner`:
//! validation, policy, approval, a fresh cell, the run store): a path
//! outside the roots is refused exactly as on the command line. Nobody can
//! be asked on a terminal here; a call that needs approval runs if it was
//! granted up front (`--approve TOOL`, `--yes`, or `approval = "auto"`
//! under `[tools.NAME]`), else, when the client supports MCP elicitation,
//! the client's user is asked (the call, its arguments and the change it
//! would make); otherwise the call is refused with a message saying how to
//! grant it. Each call is recorded as a run of kind `mcp` (`toolcell runs
//! list`).

use crate::approval::inbox::InboxApprover;
use crate::approval::{Answer, ApprovalRequest, Approver, Decision, StandingApprovals};
use crate::call::dispatch::Dispatcher;
use crate::call::offer::offered_tools;
use crate::call::runner::{Record, Request, ToolRunner};
use crate::call::view::Silent;
use crate::llm::ToolCall;
use crate::store::{DeferredRecorder, RunKind, Store};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, Implementation, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{ElicitationMode, Peer, RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio_util::sync::CancellationToken;

/// The `_meta` key of a call result holding the microseconds the server
/// spent on it (named in reverse-DNS style, as MCP asks of `_meta` keys).
pub const SERVER_TIME_KEY: &str = "dev.toolcell/server_us";
/// The `_meta` key of a call result saying whether the call ran in a cell
/// built before it, between calls (see `sandbox::keeper`).
pub const BUILT_AHEAD_KEY: &str = "dev.toolcell/built_ahead";

/// The workspace's tools, as an MCP server. A clone serves another
/// session (MCP over HTTP) with the same tools, grants, inbox and records.
#[derive(Clone)]
pub struct ToolServer {
    pub dispatcher: Arc<Dispatcher>,
    pub store: Arc<Store>,
    /// What was granted on the command line.
    pub approvals: Arc<StandingApprovals>,
    /// Parks the calls of a client that cannot ask its user, for `toolcell
    /// approve` (`toolcell mcp --wait-approval`); `None`: they are refused.
    inbox: Option<Arc<InboxApprover>>,
    /// Writes the records of read-only calls after they have answered.
    recorder: Arc<DeferredRecorder>,
    /// Numbers the calls of every session, for their ids in the run records.
    calls: Arc<AtomicU64>,
}

impl ToolServer {
    pub fn new(
        dispatcher: Arc<Dispatcher>,
        store: Arc<Store>,
        approvals: Arc<StandingApprovals>,
    ) -> std::io::Result<Self> {
        Ok(Self {
            recorder: Arc::new(DeferredRecorder::start(store.clone())?),
            dispatcher,
            store,
            approvals,
            inbox: None,
            calls: Arc::new(AtomicU64::new(0)),
        })
    }

    /// Parks a call the client cannot ask its user about for up to `wait`,
    /// for a person to decide with `toolcell approve` or `toolcell deny`,
    /// instead of refusing it.
    pub fn with_inbox(mut self, wait: std::time::Duration) -> Self {
        let granted = StandingApprovals {
            all: self.approvals.all,
            tools: self.approvals.tools.clone(),
            ask: None,
            grant_hint: self.approvals.grant_hint,
            granted_as: self.approvals.granted_as,
        };
        let notifier = crate::approval::notify::Notifier::from_config(self.dispatcher.config());
        self.inbox = Some(Arc::new(
            InboxApprover::new(granted, self.store.clone(), None, wait).telling(notifier),
        ));
        self
    }

    /// The recorder of read-only calls, for a shutdown that cannot wait for
    /// the session to end.
    pub fn recorder(&self) -> Arc<DeferredRecorder> {
        self.recorder.clone()
    }

    /// The MCP definitions of the tools.
    fn tools(&self) -> Vec<Tool> {
        let registry = self.dispatcher.registry();
        offered_tools(&self.dispatcher)
            .into_iter()
            .map(|spec| {
                let schema = match spec.parameters {
                    Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                let mutates = registry
                    .get(&spec.name)
                    .is_none_or(|entry| entry.manifest.mutates);
                let mut annotations = ToolAnnotations::default().read_only(!mutates);
                if mutates {
                    annotations = annotations.destructive(true);
                }
                Tool::new(spec.name, spec.description, Arc::new(schema)).annotate(annotations)
            })
            .collect()
    }

    /// Whether a call of `name` with `arguments` could have to wait for a
    /// person: its policy asks for approval (granted or not: grants are
    /// checked when it runs), and `client` could be asked, or the call
    /// would wait in the inbox. A call that cannot is answered at once,
    /// whatever way it comes; one that is refused before its policy is
    /// known cannot wait either.
    pub(super) fn could_wait(
        &self,
        name: &str,
        arguments: &Value,
        client: &Peer<RoleServer>,
    ) -> bool {
        if !can_ask(client) && self.inbox.is_none() {
            return false;
        }
        self.dispatcher
            .would_decide(name, arguments)
            .is_ok_and(|(asked, _, _)| asked)
    }

    /// Runs one call through the one call path, recorded as a run of its
    /// own ([`Record::OwnRun`]: a call of a tool that changes nothing after
    /// it has answered, in batches, so its latency carries no commit — see
    /// BENCHMARKS.md "MCP latency"). `client`'s user is asked about a call
    /// that needs it only when `may_ask` (the answer goes back on a stream
    /// the question can go on first); otherwise such a call is decided by
    /// the grants (and the inbox) alone.
    pub(super) async fn call(
        &self,
        name: &str,
        arguments: Value,
        client: Peer<RoleServer>,
        may_ask: bool,
    ) -> CallToolResult {
        let entered = std::time::Instant::now();
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let approver = AskTheClient {
            client,
            may_ask,
            granted: &self.approvals,
            inbox: self.inbox.as_deref(),
        };
        let runner = ToolRunner {
            dispatcher: &self.dispatcher,
            approver: &approver,
            record: Record::OwnRun {
                store: &self.store,
                later: &self.recorder,
                kind: RunKind::Mcp,
            },
            result_limit: None,
        };
        let call = ToolCall {
            id: format!("mcp_{n}"),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let mut result = runner
            .run(
                &call,
                Request::Run(arguments),
                &mut Silent,
                &CancellationToken::new(),
            )
            .await;
        // The result as text, as the model would see it: also the answer's text.
        let content = std::mem::take(&mut result.content);
        let built_ahead = result.built_ahead;
        let mut answer = match result.value {
            Some(value) => {
                let mut done = CallToolResult::success(vec![ContentBlock::text(content)]);
                // Structured content is optional: a result a tree cannot
                // hold (a number out of range) goes as its text alone.
                done.structured_content =
                    value.is_object().then(|| value.to_value().ok()).flatten();
                done
            }
            None => CallToolResult::error(vec![ContentBlock::text(content)]),
        };
        // The time spent here (validation, policy, approval, a fresh cell,
        // the call, the result), apart from the transport's: for clients
        // and benchmarks that want to tell them apart.
        let mut meta = serde_json::Map::new();
        meta.insert(
            SERVER_TIME_KEY.into(),
            Value::from(u64::try_from(entered.elapsed().as_micros()).unwrap_or(u64::MAX)),
        );
        meta.insert(BUILT_AHEAD_KEY.into(), Value::Bool(built_ahead));
        answer.meta = Some(MetaObject(meta));
        answer
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("toolcell", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "The tools of a toolcell workspace. Each call runs in a sandbox that sees only the workspace's folders; paths are relative to the workspace."
                .into(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let client = context.peer.clone();
        Ok(self
            .call(&request.name, arguments, client, true)
            .await
            .into())
    }
}

/// Approvals for one call: what was granted up front, else the client's
/// user through MCP elicitation when the client offers it, else a denial
/// that says how to grant the tool.
struct AskTheClient<'a> {
    client: Peer<RoleServer>,
    /// The client may be asked on this call's answer stream.
    may_ask: bool,
    granted: &'a StandingApprovals,
    /// Where a call goes that the client cannot ask about, if anywhere.
    inbox: Option<&'a InboxApprover>,
}

/// Whether `client` said it can ask its user (MCP elicitation, as a form).
fn can_ask(client: &Peer<RoleServer>) -> bool {
    client
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

#[async_trait::async_trait]
impl Approver for AskTheClient<'_> {
    async fn decide(&self, request: &ApprovalRequest<'_>) -> Answer {
        if request.policy_change.is_some() {
            return Answer::nobody(crate::approval::policy_refusal(
                request,
                "an MCP client is not that terminal",
            ));
        }
        let granted = self.granted.covers(request);
        let can_ask = self.may_ask && can_ask(&self.client);
        if !granted
            && !can_ask
            && let Some(inbox) = self.inbox
        {
            return inbox.decide(request).await;
        }
        if granted || !can_ask {
            return self.granted.decide(request).await;
        }
        // An empty form: the client shows the message with accept / decline.
        let ask = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: approval_message(request),
            requested_schema: ElicitationSchema::new(Default::default()),
        };
        let decision = match self.client.create_elicitation(ask).await {
            Ok(answer) => match answer.action {
                ElicitationAction::Accept => Decision::Approved,
                ElicitationAction::Decline => {
                    Decision::Declined("the user declined it in the MCP client".into())
                }
                _ => Decision::Declined("the user cancelled it in the MCP client".into()),
            },
            Err(e) => {
                return Answer::nobody(Decision::Declined(format!(
                    "the MCP client could not ask the user ({e}); grant it with {}",
                    self.granted.grant_hint.replace("{tool}", request.tool)
                )));
            }
        };
        Answer::new(decision, "person (through the MCP client)")
    }
}

/// What the client's user is asked: the call, its arguments, the change it
/// would make and any warning, as the terminal prompt shows them.
fn approval_message(request: &ApprovalRequest<'_>) -> String {
    let mut text = format!(
        "toolcell: allow `{}` to run with {}?",
        request.tool, request.args
    );
    if let Some(warning) = &request.warning {
        text.push_str(&format!("\n\n{warning}"));
    }
    if let Some(preview) = &request.preview {
        text.push_str(&format!("\n\n{preview}"));
    }
    crate::util::text::for_terminal(&text).into_owned()
}
