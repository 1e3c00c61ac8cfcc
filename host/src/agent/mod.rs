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

pub mod answer_schema;
pub mod context;
pub mod filter;
pub mod fit;
pub mod instructions;
mod offer;
pub mod prompt;
pub mod repeat;
pub mod resume;
pub mod text_tools;

use crate::approval::Approver;
use crate::call::dispatch::Dispatcher;
use crate::call::error::ErrorKind;
use crate::call::offer::offered_tools;
use crate::call::runner::{CallResult, Record, Recording, Request, ToolRunner};
use crate::call::view::{AgentView, CallStatus};
use crate::llm::dialect::{Dialect, HERMES, Reply, Shown, shown::StreamView};
use crate::llm::recover;
use crate::llm::{
    ChatProvider, ChatRequest, Finish, LlmError, Message, StreamEvent, ToolCall, ToolSpec, Turn,
};
use answer_schema::AnswerSchema;
use filter::{MORE_TOOLS, ToolIndex};
use instructions::ProjectInstructions;
use repeat::RepeatGuard;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How an agent works.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// Model requests per task.
    pub max_rounds: u32,
    /// The model's context, for cutting results and trimming history.
    pub num_ctx: u32,
    /// Retries of a failed model request.
    pub max_retries: u32,
    /// With more tools than this, offer each task only the relevant ones.
    pub filter_tools_above: usize,
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
    /// Every tool this agent may call.
    available: Vec<ToolSpec>,
    /// Whether `available` is a list given by the caller, not every tool.
    restricted: bool,
    /// The tools offered now: `available`, or its relevant part.
    tools: Vec<ToolSpec>,
    tools_bytes: usize,
    /// Set when there are too many tools to offer them all.
    filter: Option<ToolIndex>,
    /// The tools a reply may call: `available`, and `more_tools` when the
    /// filter offers it. Their names make bare calls calls, and their
    /// schemas type the values of XML and pythonic dialects. Made once:
    /// every reply is read against it.
    known: Vec<ToolSpec>,
    /// Estimated tokens of all of `available`'s definitions, for the
    /// filter's report.
    available_tokens: usize,
    /// Tools used or asked for in this run: they stay offered.
    kept: BTreeSet<String>,
    messages: Vec<Message>,
    repeat: RepeatGuard,
    /// Tool calls in the text format instead of native ones.
    text_tools: bool,
    /// The dialect the text format asks for.
    dialect: &'static Dialect,
    /// The system prompt without the text-format tool section.
    system_base: String,
    /// The workspace's project instructions, in the system prompt.
    instructions: Option<ProjectInstructions>,
    /// What the user should know before the first task (a project
    /// instructions file left out, and why).
    pending_notices: Vec<String>,
    /// Whether the system prompt is recorded: it is at the first task (or
    /// carried history), as sent then, after every setting of the agent.
    system_recorded: bool,
    /// The schema the final answer must fit, if any.
    answer_schema: Option<AnswerSchema>,
    /// What was wrong with the last answer that did not fit it.
    misfit: Option<String>,
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
        let mut available = offered_tools(dispatcher);
        if let Some(only) = only {
            available.retain(|t| only.contains(&t.name));
        }
        let definitions = filter::definition_tokens(&available);
        let filter = (available.len() > settings.filter_tools_above
            || definitions > settings.num_ctx as usize / 4)
            .then(|| ToolIndex::new(&available));
        let tools = if filter.is_some() {
            vec![filter::more_tools_spec()]
        } else {
            available.clone()
        };
        let mut known = available.clone();
        if filter.is_some() {
            known.push(filter::more_tools_spec());
        }
        let (instructions, pending_notices) =
            match instructions::load(&dispatcher.config().workspace) {
                Ok(found) => (found, Vec::new()),
                Err(why) => (None, vec![why]),
            };
        let system_base = prompt::system_prompt(dispatcher.config(), &tools, instructions.as_ref());
        let system = Message::system(system_base.clone());
        let mut agent = Self {
            dispatcher,
            provider,
            approver,
            recording,
            settings,
            available,
            known,
            restricted: only.is_some(),
            tools_bytes: context::tools_bytes(&tools),
            tools,
            filter,
            available_tokens: definitions,
            kept: BTreeSet::new(),
            messages: Vec::new(),
            repeat: RepeatGuard::default(),
            text_tools: false,
            dialect: &HERMES,
            system_base,
            instructions,
            pending_notices,
            system_recorded: false,
            answer_schema: None,
            misfit: None,
        };
        agent.messages.push(system);
        agent
    }

    /// Leaves the workspace's project instructions out of the prompt
    /// (`chat --no-project-instructions`).
    pub fn without_project_instructions(&mut self) {
        self.instructions = None;
        self.pending_notices.clear();
        self.refresh_system_prompt();
    }

    /// Makes the final answer JSON that fits `schema`: the system prompt
    /// says so, and an answer that does not fit goes back to the model in
    /// band, within the round budget.
    pub fn answer_must_fit(&mut self, schema: AnswerSchema) {
        self.answer_schema = Some(schema);
        self.refresh_system_prompt();
    }

    /// What was wrong with the model's last answer that did not fit the
    /// schema (see [`Agent::answer_must_fit`]), if one did not.
    pub fn answer_misfit(&self) -> Option<&str> {
        self.misfit.as_deref()
    }

    /// The project instructions in the prompt, if any.
    pub fn project_instructions(&self) -> Option<&ProjectInstructions> {
        self.instructions.as_ref()
    }

    /// Records the system prompt as it will be sent, and which project
    /// instructions it holds, once.
    fn record_system(&mut self) {
        if self.system_recorded {
            return;
        }
        self.system_recorded = true;
        if let Some(rec) = self.recording {
            let recorded = rec
                .store
                .add_message(rec.run, &self.messages[0])
                .and_then(|()| match &self.instructions {
                    Some(found) => rec.store.set_instructions(rec.run, &found.described()),
                    None => Ok(()),
                });
            if let Err(e) = recorded {
                tracing::warn!(
                    "cannot record the system prompt in {}: {e:#}",
                    rec.store.location()
                );
            }
        }
    }

    /// The tools offered to the model.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Goes on from an earlier conversation: `history` (see
    /// [`resume::history`]) follows the system prompt, recorded as this
    /// run's, and the tools it called stay offered. Nothing in it is run.
    pub fn carry(&mut self, history: Vec<Message>) {
        self.record_system();
        for message in history {
            for call in &message.tool_calls {
                self.kept.insert(call.name.clone());
            }
            self.push(message);
        }
    }

    fn push(&mut self, message: Message) {
        if let Some(rec) = self.recording
            && let Err(e) = rec.store.add_message(rec.run, &message)
        {
            tracing::warn!("cannot record a message in {}: {e:#}", rec.store.location());
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
        for notice in std::mem::take(&mut self.pending_notices) {
            view.notice(&notice);
        }
        if self.filter.is_some() {
            self.offer_for(task, view);
        }
        self.record_system();
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
            let (mut turn, reply) = match self.request(view, cancel).await {
                Ok(read) => read,
                Err(outcome) => return outcome,
            };
            view.turn_end(turn.usage);
            let mut note = None;
            if self.text_tools {
                // The turn is replayed as written (markers and all); the
                // calls are read from its text.
                self.push(Message::from_turn(&turn));
                turn.tool_calls = self.text_calls(&reply);
            } else {
                note = self.recover_leaked_calls(&mut turn, &reply, view);
                self.push(Message::from_turn(&turn));
            }
            turn.content = reply.text;
            if turn.tool_calls.is_empty() {
                match note {
                    // Something meant as a call could not be read: the
                    // model hears why and may try again.
                    Some(note) => {
                        self.push(Message::user(note));
                        continue;
                    }
                    None => match &self.answer_schema {
                        None => return Outcome::Answered(turn.content),
                        Some(schema) => match schema.check(&turn.content) {
                            Ok(value) => return Outcome::Answered(value.to_string()),
                            // It goes back to the model, as a call's
                            // error would.
                            Err(problem) => {
                                view.notice(&format!(
                                    "the answer does not fit the output schema ({problem}); the model is asked again"
                                ));
                                let again = schema.ask_again(&problem);
                                self.misfit = Some(problem);
                                self.push(Message::user(again));
                                continue;
                            }
                        },
                    },
                }
            }
            if self.run_calls(&turn, view, cancel).await.is_err() {
                return Outcome::Cancelled;
            }
            if let Some(note) = note {
                self.push(Message::user(note));
            }
        }
        Outcome::BudgetExhausted {
            rounds: self.settings.max_rounds,
        }
    }

    /// Switches to tool calls in the text format: the tools go in the
    /// system prompt instead of the request. For models without native tool
    /// calling; done by itself when the server says the model does not
    /// support tools.
    pub fn use_text_tools(&mut self) {
        self.text_tools = true;
        self.refresh_system_prompt();
    }

    /// Asks for calls in the text format in `dialect` (the model's own,
    /// when its server shows it); any dialect is read either way.
    pub fn ask_in_dialect(&mut self, dialect: &'static Dialect) {
        self.dialect = dialect;
        if self.text_tools {
            self.refresh_system_prompt();
        }
    }

    /// The system prompt for the tools offered now.
    fn refresh_system_prompt(&mut self) {
        self.system_base = prompt::system_prompt(
            self.dispatcher.config(),
            &self.tools,
            self.instructions.as_ref(),
        );
        if let Some(schema) = &self.answer_schema {
            self.system_base.push_str(&schema.prompt_section());
        }
        let prompt = if self.text_tools {
            format!(
                "{}{}",
                self.system_base,
                text_tools::tools_prompt(self.dialect, &self.tools)
            )
        } else {
            self.system_base.clone()
        };
        if let Some(first) = self.messages.first_mut() {
            *first = Message::system(prompt);
        }
    }

    /// The calls read from a text-format reply; a call that cannot be
    /// read becomes a nameless call whose arguments say why.
    fn text_calls(&self, reply: &Reply) -> Vec<ToolCall> {
        let round = self.messages.len();
        reply
            .calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let id = format!("text_{round}_{i}");
                match call {
                    Ok(call) => ToolCall {
                        id,
                        name: call.name.clone(),
                        arguments: call.arguments.to_string(),
                    },
                    Err(reason) => ToolCall {
                        id,
                        name: String::new(),
                        arguments: reason.clone(),
                    },
                }
            })
            .collect()
    }

    /// A turn without structured calls whose text holds calls (a model
    /// that leaked them as text, in any dialect) gets them as structured
    /// calls, with the text around them kept. Calls that cannot be read
    /// give the note to send the model.
    fn recover_leaked_calls(
        &self,
        turn: &mut Turn,
        reply: &Reply,
        view: &mut dyn AgentView,
    ) -> Option<String> {
        if !turn.tool_calls.is_empty() {
            turn.content = reply.text.clone();
            return None;
        }
        let round = self.messages.len();
        let mut problems = Vec::new();
        for (i, call) in reply.calls.iter().enumerate() {
            match call {
                Ok(call) => turn.tool_calls.push(ToolCall {
                    id: format!("recovered_{round}_{i}"),
                    name: call.name.clone(),
                    arguments: call.arguments.to_string(),
                }),
                Err(reason) => problems.push(reason.clone()),
            }
        }
        turn.content = reply.text.clone();
        if !reply.thinking.is_empty() {
            if !turn.thinking.is_empty() {
                turn.thinking.push('\n');
            }
            turn.thinking.push_str(&reply.thinking);
        }
        if !turn.tool_calls.is_empty() {
            turn.finish = Finish::ToolCalls;
            view.notice(&format!(
                "the model wrote {} tool call(s) as text ({}); running them as calls",
                turn.tool_calls.len(),
                reply.dialects.join(", ")
            ));
        }
        (!problems.is_empty()).then(|| {
            format!(
                "Not run: {}. Send the call again, complete, with the tools' own calling.",
                problems.join("; ")
            )
        })
    }

    /// One model request, retried on connection errors, 429 and 5xx: the
    /// turn, and what its text says.
    async fn request(
        &mut self,
        view: &mut dyn AgentView,
        cancel: &CancellationToken,
    ) -> Result<(Turn, Reply), Outcome> {
        let mut attempt = 0;
        loop {
            let request = ChatRequest {
                messages: &self.messages,
                tools: if self.text_tools { &[] } else { &self.tools },
                format: None,
            };
            // The text is shown without the dialects' markers and calls,
            // its reasoning as thinking.
            let mut shown = StreamView::default();
            let result = {
                let mut sink = |event: StreamEvent<'_>| match event {
                    StreamEvent::Content(text) => show(view, shown.feed(text)),
                    other => view.stream(other),
                };
                tokio::select! {
                    result = self.provider.chat(request, &mut sink) => result,
                    () = cancel.cancelled() => return Err(Outcome::Cancelled),
                }
            };
            match result {
                Ok(turn) => {
                    let (reply, rest) =
                        shown.finish(&turn.content, turn.finish == Finish::Length, &self.known);
                    show(view, rest);
                    return Ok((turn, reply));
                }
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
                    view.turn_discarded();
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
            record: Record::in_run(self.recording),
            result_limit: Some(context::tool_result_bytes(self.settings.num_ctx)),
        };
        let mut stopped = false;
        let mut text_results = Vec::new();
        for call in &turn.tool_calls {
            let request = if stopped || cancel.is_cancelled() {
                stopped = true;
                Request::Answered(Box::new(CallResult::cancelled(
                    "the run was stopped before this call ran",
                )))
            } else {
                self.call_request(call, turn.finish == Finish::Length)
            };
            let result = runner.run(call, request, view, cancel).await;
            if result.quit || result.status == CallStatus::Cancelled {
                stopped = true;
            }
            let content = result.content;
            if self.text_tools {
                text_results.push((call.name.clone(), content));
            } else {
                self.push(Message::tool_result(call, content));
            }
        }
        if !text_results.is_empty() {
            self.push(Message::user(text_tools::responses(
                self.dialect,
                &text_results,
            )));
        }
        if stopped { Err(()) } else { Ok(()) }
    }

    /// What the runner is asked to do with one call: run it with its
    /// parsed arguments, or give back the answer the agent made itself
    /// (`more_tools`, a call that cannot run: unknown, unreadable, cut off,
    /// repeated).
    fn call_request(&mut self, call: &ToolCall, cut_off: bool) -> Request {
        let started = Instant::now();
        let refused = |message: String, kind| {
            Request::Answered(Box::new(CallResult::refused(
                message,
                kind,
                CallStatus::Failed,
                started,
            )))
        };
        if call.name == MORE_TOOLS && self.filter.is_some() {
            let args = recover::parse_lenient(&call.arguments)
                .map(|(v, _)| v)
                .unwrap_or(Value::Null);
            return Request::Answered(Box::new(self.more_tools(&args, started)));
        }
        if !call.name.is_empty() && !self.tools.iter().any(|t| t.name == call.name) {
            if self.available.iter().any(|t| t.name == call.name) {
                // A tool left out by the filter: the model knows it anyway.
                self.kept.insert(call.name.clone());
                self.offer([call.name.clone()]);
            } else if self.restricted {
                let names: Vec<&str> = self.available.iter().map(|t| t.name.as_str()).collect();
                return refused(
                    format!(
                        "`{}` is not one of this agent's tools; they are: {}",
                        call.name,
                        names.join(", ")
                    ),
                    ErrorKind::UnknownTool,
                );
            }
        }
        if call.name.is_empty() {
            return refused(
                format!(
                    "{}. Send the call again, complete. {}",
                    call.arguments, self.dialect.how_to_call
                ),
                ErrorKind::InvalidCall,
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
                    ErrorKind::Truncated,
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
                        ErrorKind::InvalidArgs,
                    );
                }
            },
        };
        if let Some(message) = self.repeat.check(&call.name, &args) {
            return refused(message, ErrorKind::Repeated);
        }
        self.kept.insert(call.name.clone());
        Request::Run(args)
    }
}

/// Streams what a reply shows.
fn show(view: &mut dyn AgentView, pieces: Vec<Shown>) {
    for piece in pieces {
        match piece {
            Shown::Text(text) => view.stream(StreamEvent::Content(&text)),
            Shown::Thinking(text) => view.stream(StreamEvent::Thinking(&text)),
        }
    }
}
