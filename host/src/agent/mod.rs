//! The agent loop: the model calls tools, the host checks each call, asks
//! for approval where the policy says so, runs it in its cell and sends the
//! result back, until the model answers without tools or the round budget
//! ends.
//!
//! Everything a model can get wrong comes back to it in band, as the result
//! of the call that went wrong: an unknown tool (with the valid names),
//! arguments that are not JSON or do not fit the schema, arguments cut off
//! by the output limit, the tool's own error, a timeout, a denial, and the
//! same call repeated too often. Only the model server failing for good, or
//! the user stopping the run, ends a run early.

pub mod context;
pub mod fit;
pub mod hermes;
pub mod prompt;
pub mod repeat;
pub mod view;

use crate::approval::{ApprovalMode, Approver};
pub use crate::calls::Recording;
use crate::calls::{CallResult, ToolRunner};
use crate::dispatch::Dispatcher;
use crate::grant::ToolGrant;
use crate::llm::recover;
use crate::llm::{
    ChatProvider, ChatRequest, Finish, LlmError, Message, StreamEvent, ToolCall, ToolSpec, Turn,
};
use repeat::RepeatGuard;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use view::{AgentView, CallStatus};

/// Model requests per task when nothing else is set: enough for a
/// read-think-edit-check cycle over a few files, small enough that a model
/// stuck in a loop stops soon.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;

/// How an agent works.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// Model requests per task.
    pub max_rounds: u32,
    /// The model's context, for cutting results and trimming history.
    pub num_ctx: u32,
    /// Retries of a failed model request.
    pub max_retries: u32,
}

/// How a task ended.
#[derive(Debug)]
pub enum Outcome {
    /// The model answered without asking for tools.
    Answered(String),
    /// The round budget ran out first.
    BudgetExhausted { rounds: u32 },
    /// The user stopped it (Ctrl-C, or quit at an approval prompt).
    Cancelled,
    /// The model server failed, after retries.
    Failed(LlmError),
}

/// A conversation with a model that may use the workspace's tools.
pub struct Agent<'a> {
    dispatcher: &'a Dispatcher,
    provider: &'a dyn ChatProvider,
    approver: &'a dyn Approver,
    recording: Option<Recording<'a>>,
    settings: AgentSettings,
    tools: Vec<ToolSpec>,
    tools_bytes: usize,
    messages: Vec<Message>,
    repeat: RepeatGuard,
    /// Tool calls in the text format (Hermes) instead of native ones.
    text_tools: bool,
    /// The system prompt without the text-format tool section.
    system_base: String,
}

impl<'a> Agent<'a> {
    /// An agent over the dispatcher's tools. Tools that are disabled, or
    /// denied by the config, are not offered.
    pub fn new(
        dispatcher: &'a Dispatcher,
        provider: &'a dyn ChatProvider,
        approver: &'a dyn Approver,
        recording: Option<Recording<'a>>,
        settings: AgentSettings,
    ) -> Self {
        Self::with_tools(dispatcher, provider, approver, recording, settings, None)
    }

    /// An agent offered only the tools named in `only` (each must be one
    /// that [`Agent::new`] would offer).
    pub fn with_tools(
        dispatcher: &'a Dispatcher,
        provider: &'a dyn ChatProvider,
        approver: &'a dyn Approver,
        recording: Option<Recording<'a>>,
        settings: AgentSettings,
        only: Option<&[String]>,
    ) -> Self {
        let mut tools = offered_tools(dispatcher);
        if let Some(only) = only {
            tools.retain(|t| only.contains(&t.name));
        }
        let system_base = prompt::system_prompt(dispatcher.config(), &tools);
        let system = Message::system(system_base.clone());
        let mut agent = Self {
            dispatcher,
            provider,
            approver,
            recording,
            settings,
            tools_bytes: context::tools_bytes(&tools),
            tools,
            messages: Vec::new(),
            repeat: RepeatGuard::default(),
            text_tools: false,
            system_base,
        };
        agent.push(system);
        agent
    }

    /// The tools offered to the model.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    fn push(&mut self, message: Message) {
        if let Some(rec) = self.recording
            && let Err(e) = rec.store.add_message(rec.run, &message)
        {
            tracing::warn!(
                "cannot record a message in {}: {e:#}",
                rec.store.path().display()
            );
        }
        self.messages.push(message);
    }

    /// Works on `task` until the model answers, the budget ends, the model
    /// server fails or `cancel` fires.
    pub async fn ask(
        &mut self,
        task: &str,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> Outcome {
        self.push(Message::user(task));
        for _ in 0..self.settings.max_rounds {
            let dropped =
                context::trim(&mut self.messages, self.tools_bytes, self.settings.num_ctx);
            if dropped > 0 {
                view.notice(&format!(
                    "dropped the {dropped} oldest messages to stay within the context of {} tokens",
                    self.settings.num_ctx
                ));
            }
            let mut turn = match self.request(view, cancel).await {
                Ok(turn) => turn,
                Err(outcome) => return outcome,
            };
            view.turn_end();
            if self.text_tools {
                // The turn is replayed as written (tags and all); the calls
                // are read from its text.
                self.push(Message::from_turn(&turn));
                turn.tool_calls = self.text_calls(&turn.content);
                turn.content = hermes_clean(&turn.content);
            } else {
                self.recover_leaked_calls(&mut turn, view);
                self.push(Message::from_turn(&turn));
            }
            if turn.tool_calls.is_empty() {
                return Outcome::Answered(turn.content);
            }
            if self.run_calls(&turn, view, cancel).await.is_err() {
                return Outcome::Cancelled;
            }
        }
        Outcome::BudgetExhausted {
            rounds: self.settings.max_rounds,
        }
    }

    /// Switches to tool calls in the text format (Hermes): the tools go in
    /// the system prompt instead of the request. For models without native
    /// tool calling; done by itself when the server says the model does not
    /// support tools.
    pub fn use_text_tools(&mut self) {
        self.text_tools = true;
        let prompt = format!("{}{}", self.system_base, hermes::tools_prompt(&self.tools));
        if let Some(first) = self.messages.first_mut() {
            *first = Message::system(prompt);
        }
    }

    /// The calls written in `text` as `<tool_call>` blocks; a block that is
    /// not a call becomes a nameless call whose arguments say why.
    fn text_calls(&self, text: &str) -> Vec<ToolCall> {
        let round = self.messages.len();
        hermes::calls_in(text)
            .into_iter()
            .enumerate()
            .map(|(i, call)| {
                let id = format!("text_{round}_{i}");
                match call {
                    Ok(call) => ToolCall {
                        id,
                        name: call.name,
                        arguments: call.arguments.to_string(),
                    },
                    Err(reason) => ToolCall {
                        id,
                        name: String::new(),
                        arguments: reason,
                    },
                }
            })
            .collect()
    }

    /// A turn without structured calls whose whole text is calls to offered
    /// tools (a model that leaked them as text) gets them as structured
    /// calls; its text is dropped, so the history shows a proper call.
    fn recover_leaked_calls(&self, turn: &mut Turn, view: &mut dyn AgentView) {
        if !turn.tool_calls.is_empty() || turn.finish == Finish::Length {
            return;
        }
        let offered: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        let recovered = recover::leaked_calls(&turn.content, &offered);
        if recovered.is_empty() {
            return;
        }
        let round = self.messages.len();
        turn.tool_calls = recovered
            .into_iter()
            .enumerate()
            .map(|(i, call)| ToolCall {
                id: format!("recovered_{round}_{i}"),
                name: call.name,
                arguments: call.arguments.to_string(),
            })
            .collect();
        turn.content.clear();
        turn.finish = Finish::ToolCalls;
        view.notice(&format!(
            "the model wrote {} tool call(s) as text; running them as calls",
            turn.tool_calls.len()
        ));
    }

    /// One model request, retried on connection errors, 429 and 5xx.
    async fn request(
        &mut self,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> Result<Turn, Outcome> {
        let mut attempt = 0;
        loop {
            let request = ChatRequest {
                messages: &self.messages,
                tools: if self.text_tools { &[] } else { &self.tools },
                format: None,
            };
            let text_tools = self.text_tools;
            let mut filter = hermes::TagFilter::default();
            let result = {
                let mut sink = |event: StreamEvent<'_>| match event {
                    StreamEvent::Content(text) if text_tools => {
                        let visible = filter.feed(text);
                        if !visible.is_empty() {
                            view.stream(StreamEvent::Content(&visible));
                        }
                    }
                    other => view.stream(other),
                };
                tokio::select! {
                    result = self.provider.chat(request, &mut sink) => result,
                    () = cancel.cancelled() => return Err(Outcome::Cancelled),
                }
            };
            let rest = filter.finish();
            if !rest.is_empty() {
                view.stream(StreamEvent::Content(&rest));
            }
            match result {
                Ok(turn) => return Ok(turn),
                Err(error) if error.is_tools_unsupported() && !self.text_tools => {
                    view.notice(&format!(
                        "{error}; switching to tool calls in the text format for this model"
                    ));
                    if let Some(rec) = self.recording {
                        fit::remember_tools_refused(self.provider, rec.store);
                    }
                    self.use_text_tools();
                }
                Err(error) if error.is_retryable() && attempt < self.settings.max_retries => {
                    attempt += 1;
                    let wait = crate::llm::retry::backoff(attempt);
                    view.notice(&format!(
                        "{error}; retrying in {:.1} s ({attempt} of {})",
                        wait.as_secs_f64(),
                        self.settings.max_retries
                    ));
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = cancel.cancelled() => return Err(Outcome::Cancelled),
                    }
                }
                Err(error) => return Err(Outcome::Failed(error)),
            }
        }
    }

    /// Runs the calls of one turn in order and sends back one result per
    /// call. `Err` when the run was stopped; the calls not run then get a
    /// `cancelled` result, so every call still has its answer.
    async fn run_calls(
        &mut self,
        turn: &Turn,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> Result<(), ()> {
        let runner = ToolRunner {
            dispatcher: self.dispatcher,
            approver: self.approver,
            recording: self.recording,
        };
        let mut stopped = false;
        let mut text_results = Vec::new();
        for call in &turn.tool_calls {
            let row = runner.start(call);
            let mut result = if stopped || cancel.is_cancelled() {
                stopped = true;
                CallResult::cancelled("the run was stopped before this call ran")
            } else {
                self.run_call(&runner, call, turn.finish == Finish::Length, view, cancel)
                    .await
            };
            if result.quit || result.status == CallStatus::Cancelled {
                stopped = true;
            }
            let content = context::cut_tool_result(result.content.clone(), self.settings.num_ctx);
            view.call_status(
                call,
                result.status,
                Some(result.duration),
                Some(&crate::text::one_line(&content, 100)),
            );
            runner.finish(call, row, &mut result, &content);
            if self.text_tools {
                text_results.push((call.name.clone(), content));
            } else {
                self.push(Message::tool_result(call, content));
            }
        }
        if !text_results.is_empty() {
            self.push(Message::user(hermes::responses(&text_results)));
        }
        if stopped { Err(()) } else { Ok(()) }
    }

    /// One call: parse, guard against repeats, then the runner.
    async fn run_call(
        &mut self,
        runner: &ToolRunner<'_>,
        call: &ToolCall,
        cut_off: bool,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> CallResult {
        let started = Instant::now();
        let refused =
            |message: String, kind| CallResult::refused(message, kind, CallStatus::Failed, started);
        if call.name.is_empty() {
            return refused(
                format!(
                    "{}. Write each call as <tool_call>{{\"name\": \"…\", \"arguments\": {{…}}}}</tool_call>.",
                    call.arguments
                ),
                "invalid-call",
            );
        }
        let args = match call.parsed_arguments() {
            Ok(args) => args,
            Err(_) if cut_off => {
                return refused(
                    format!(
                        "the arguments of `{}` were cut off by the model's output limit, so the call was not run. Send it again with shorter arguments (for a long file, write a first part and add the rest with further edits).",
                        call.name
                    ),
                    "truncated",
                );
            }
            // Almost-JSON (single quotes, trailing commas, Python
            // literals…) is repaired; the schema still checks the result.
            Err(problem) => match recover::parse_lenient(&call.arguments) {
                Ok((args @ serde_json::Value::Object(_), _)) => args,
                _ => {
                    return refused(
                        format!(
                            "{problem}. The call was not run; send it again with a JSON object that fits the schema of `{}`.",
                            call.name
                        ),
                        "invalid-args",
                    );
                }
            },
        };
        if let Some(message) = self.repeat.check(&call.name, &args) {
            return refused(message, "repeated");
        }
        runner.run(call, &args, view, cancel).await
    }
}

/// The tools to offer: every registered tool that is enabled and not
/// denied, with its schema.
pub fn offered_tools(dispatcher: &Dispatcher) -> Vec<ToolSpec> {
    let registry = dispatcher.registry();
    registry
        .names()
        .into_iter()
        .filter_map(|name| {
            let entry = registry.get(name)?;
            let grant = ToolGrant::resolve(&entry.manifest, dispatcher.config()).ok()?;
            (grant.enabled && grant.approval != ApprovalMode::Deny).then(|| ToolSpec {
                name: name.to_string(),
                description: entry.manifest.description.clone(),
                parameters: entry.manifest.parameters.clone(),
            })
        })
        .collect()
}

/// A text-format answer without its `<tool_call>` blocks.
fn hermes_clean(text: &str) -> String {
    let mut filter = hermes::TagFilter::default();
    let mut clean = filter.feed(text);
    clean.push_str(&filter.finish());
    clean.trim().to_string()
}
