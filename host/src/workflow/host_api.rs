//! The functions a workflow script sees. The script runs on a blocking
//! thread; each function that needs the async host (a tool, a model, a
//! sleep) blocks on the runtime's handle, raced against the run's
//! cancellation, so Ctrl-C and timeouts reach whatever is running.
//!
//! | function | does |
//! |---|---|
//! | `tool(name, #{…})` | runs a tool: the same validation, policy, approval and sandbox as the agent's calls; returns its JSON result as a map; a failure throws `#{kind, message, tool}` |
//! | `agent(task, #{tools, model, max_rounds, calls})` | a model works on `task` with the tools; returns its answer (or `#{answer, calls}` with `calls: true`) |
//! | `llm(prompt, #{model, system})` | one completion without tools |
//! | `llm_json(prompt, schema)` | a map that follows the JSON Schema; retried once on invalid output |
//! | `args` | the `--arg key=value` values, a map of strings |
//! | `log(level, msg)`, `print(msg)` | output, also kept in the run record |
//! | `json_parse(text)`, `json_stringify(value)` | JSON |
//! | `now()`, `now_ms()`, `format_time(ms, fmt)`, `days_ago(n)` | time |
//! | `sleep(ms)` | waits (at most 60 s a call) |
//! | `env(name)` | a variable listed under `[workflow] env`; `()` if unset |
//! | `fail(why)` | stops the workflow with an error (cannot be caught) |
//!
//! Values crossing into the host or back (tool arguments and results,
//! `json_stringify`, `json_parse`, `llm_json`, log lines) nest at most
//! [`MAX_VALUE_DEPTH`] levels; deeper ones throw `#{kind: "too-deep"}`
//! (see [`super::values`]).

use super::values::{self, MAX_VALUE_DEPTH, dynamic_deeper_than, to_dynamic, to_json};
use crate::agent::answer_schema::AnswerSchema;
use crate::agent::fit::{Fitted, connect_fitted};
use crate::agent::{Agent, AgentSettings, Outcome};
use crate::approval::Approver;
use crate::call::dispatch::Dispatcher;
use crate::call::error::ErrorKind;
use crate::call::runner::{Failure, Record, Recording, Request, ToolRunner};
use crate::call::view::{AgentView, CallStatus};
use crate::llm::recover::MAX_JSON_DEPTH;
use crate::llm::{self, ChatRequest, Message, ModelSettings, StreamEvent, ToolCall};
use crate::store::{RunId, Store};
use rhai::{Dynamic, Engine, EvalAltResult, Map, Position};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Where a script's output goes: `(level, text)`, level `print` for print().
pub type OutputSink = dyn Fn(&str, &str) + Send + Sync;

/// Everything the host functions reach.
pub struct HostContext {
    pub dispatcher: Arc<Dispatcher>,
    pub approver: Arc<dyn Approver>,
    pub store: Option<Arc<Store>>,
    pub run: RunId,
    pub runtime: tokio::runtime::Handle,
    pub cancel: CancellationToken,
    pub model: ModelSettings,
    pub max_rounds: u32,
    pub env_allowed: BTreeSet<String>,
    pub args: BTreeMap<String, String>,
    pub output: Box<OutputSink>,
    /// Numbers the tool calls of the run.
    pub calls: AtomicU64,
}

type Fallible<T> = Result<T, Box<EvalAltResult>>;

/// A catchable error for the script: `#{kind, message}` plus extra fields.
fn thrown(
    kind: ErrorKind,
    message: impl Into<String>,
    extra: &[(&str, &str)],
) -> Box<EvalAltResult> {
    let mut map = Map::new();
    map.insert("kind".into(), kind.as_str().into());
    map.insert("message".into(), message.into().into());
    for (k, v) in extra {
        map.insert((*k).into(), (*v).into());
    }
    EvalAltResult::ErrorRuntime(map.into(), Position::NONE).into()
}

/// Stops the script (not catchable).
fn stop(reason: &str) -> Box<EvalAltResult> {
    EvalAltResult::ErrorTerminated(reason.into(), Position::NONE).into()
}

/// The token `on_progress` and the host functions stop a run with.
pub const CANCELLED: &str = "cancelled";

/// `value` as text for the host (log lines, a system prompt); showing a
/// value recurses once per level of it, so a value past the limit is refused.
fn text_of(value: &Dynamic, what: &str) -> Fallible<String> {
    if value.is_string() {
        return Ok(value.to_string());
    }
    if dynamic_deeper_than(value, MAX_VALUE_DEPTH) {
        return Err(values::too_deep(what));
    }
    Ok(value.to_string())
}

/// Shows tool calls of a script at the terminal, through the output sink.
struct ScriptView<'a>(&'a OutputSink);

impl AgentView for ScriptView<'_> {
    fn stream(&mut self, _: StreamEvent<'_>) {}

    fn call_status(
        &mut self,
        call: &ToolCall,
        status: CallStatus,
        duration: Option<Duration>,
        summary: Option<&str>,
    ) {
        if status == CallStatus::Running {
            return;
        }
        let line = crate::call::view::status_line(call, status, duration, summary);
        (self.0)("tool", &line);
    }

    fn notice(&mut self, text: &str) {
        (self.0)("info", text);
    }
}

impl HostContext {
    /// The model's provider, fitted to what the model can do (see
    /// [`crate::agent::fit`]); adjustments go to the script's output.
    fn connect_fitted(&self, model: &mut ModelSettings) -> Fallible<Fitted> {
        let fitted = self
            .runtime
            .block_on(connect_fitted(model, self.store.as_deref()))
            .map_err(|e| thrown(ErrorKind::Model, e.to_string(), &[]))?;
        for notice in &fitted.notices {
            (self.output)("info", notice);
        }
        Ok(fitted)
    }

    fn recording(&self) -> Option<Recording<'_>> {
        self.store.as_deref().map(|store| Recording {
            store,
            run: self.run,
        })
    }

    fn record_log(&self, level: &str, text: &str) {
        if let Some(store) = &self.store
            && let Err(e) = store.add_log(self.run, level, text)
        {
            tracing::warn!("cannot record workflow output: {e:#}");
        }
    }

    /// `print` and `log` output.
    pub fn emit(&self, level: &str, text: &str) {
        (self.output)(level, text);
        self.record_log(level, text);
    }

    /// `tool(name, args)`.
    pub fn tool(&self, name: &str, args: &Dynamic) -> Fallible<Dynamic> {
        let args = to_json(args, &format!("the arguments of `{name}`"))?;
        if !args.is_object() {
            return Err(thrown(
                ErrorKind::InvalidArgs,
                format!("the arguments of `{name}` must be a map, like #{{path: \"notes.md\"}}"),
                &[("tool", name)],
            ));
        }
        let n = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call = ToolCall {
            id: format!("script_{n}"),
            name: name.to_string(),
            arguments: args.to_string(),
        };
        let runner = ToolRunner {
            dispatcher: &self.dispatcher,
            approver: self.approver.as_ref(),
            record: Record::in_run(self.recording()),
            result_limit: None,
        };
        let mut view = ScriptView(self.output.as_ref());
        let result =
            self.runtime
                .block_on(runner.run(&call, Request::Run(args), &mut view, &self.cancel));
        if result.status == CallStatus::Cancelled || result.quit {
            return Err(stop(CANCELLED));
        }
        match result.value {
            Some(value) => match value.to_value() {
                Ok(tree) => to_dynamic(&tree, &format!("the result of `{name}`")),
                Err(e) => Err(thrown(
                    ErrorKind::InvalidResult,
                    format!(
                        "the result of `{name}` is JSON a script cannot hold as a value ({e}); \
                         its text is in the run's record (`toolcell runs show`)"
                    ),
                    &[("tool", name)],
                )),
            },
            None => {
                let error = result.error.unwrap_or(Failure {
                    kind: ErrorKind::Failed,
                    message: result.content,
                });
                Err(thrown(error.kind, error.message, &[("tool", name)]))
            }
        }
    }

    fn model_settings(&self, options: &Map) -> Fallible<ModelSettings> {
        let mut model = self.model.clone();
        if let Some(name) = options.get("model") {
            model.name = Some(name.clone().into_string().map_err(|t| {
                thrown(
                    ErrorKind::InvalidArgs,
                    format!("`model` must be a string, not {t}"),
                    &[],
                )
            })?);
        }
        Ok(model)
    }

    /// `agent(task, options)`.
    pub fn agent(&self, task: &str, options: &Map) -> Fallible<Dynamic> {
        let known: BTreeSet<&str> = ["tools", "model", "max_rounds", "calls"].into();
        if let Some(bad) = options.keys().find(|k| !known.contains(k.as_str())) {
            return Err(thrown(
                ErrorKind::InvalidArgs,
                format!(
                    "agent() has no option `{bad}`; the options are tools, model, max_rounds, calls"
                ),
                &[],
            ));
        }
        let mut model = self.model_settings(options)?;
        let fitted = self.connect_fitted(&mut model)?;
        let provider = fitted.provider;
        let only = match options.get("tools") {
            None => None,
            Some(list) => {
                let list: Vec<String> = rhai::serde::from_dynamic(list).map_err(|_| {
                    thrown(
                        ErrorKind::InvalidArgs,
                        "`tools` must be an array of tool names",
                        &[],
                    )
                })?;
                let offered = crate::call::offer::offered_tools(&self.dispatcher);
                if let Some(bad) = list.iter().find(|n| !offered.iter().any(|t| &t.name == *n)) {
                    let names: Vec<&str> = offered.iter().map(|t| t.name.as_str()).collect();
                    return Err(thrown(
                        ErrorKind::UnknownTool,
                        format!(
                            "agent() cannot offer `{bad}`: the tools are {}",
                            names.join(", ")
                        ),
                        &[],
                    ));
                }
                Some(list)
            }
        };
        let max_rounds = match options.get("max_rounds") {
            None => self.max_rounds,
            Some(n) => n
                .as_int()
                .ok()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=crate::config::agent::MAX_ROUNDS_LIMIT).contains(n))
                .ok_or_else(|| {
                    thrown(
                        ErrorKind::InvalidArgs,
                        format!(
                            "`max_rounds` must be a number from 1 to {}",
                            crate::config::agent::MAX_ROUNDS_LIMIT
                        ),
                        &[],
                    )
                })?,
        };
        let settings = AgentSettings {
            max_rounds,
            num_ctx: model.num_ctx,
            max_retries: model.max_retries,
            filter_tools_above: self.dispatcher.config().agent.filter_tools_above,
        };
        let mut agent = Agent::with_tools(
            &self.dispatcher,
            provider.as_ref(),
            self.approver.as_ref(),
            self.recording(),
            settings,
            only.as_deref(),
        );
        agent.ask_in_dialect(fitted.dialect);
        if fitted.text_tools {
            agent.use_text_tools();
        }
        let mut view = ScriptView(self.output.as_ref());
        let outcome = self
            .runtime
            .block_on(agent.ask(task, &mut view, &self.cancel));
        let answer = match outcome {
            Outcome::Answered(answer) => answer,
            Outcome::Cancelled => return Err(stop(CANCELLED)),
            Outcome::BudgetExhausted { rounds } => {
                return Err(thrown(
                    ErrorKind::Incomplete,
                    format!("the model used all {rounds} rounds without a final answer"),
                    &[],
                ));
            }
            Outcome::Failed(e) => return Err(thrown(ErrorKind::Model, e.to_string(), &[])),
        };
        if options.get("calls").and_then(|c| c.as_bool().ok()) == Some(true) {
            let calls: Vec<Value> = agent
                .messages()
                .iter()
                .flat_map(|m| m.tool_calls.iter())
                .map(|c| json!({"name": c.name, "arguments": c.parsed_arguments().unwrap_or(Value::Null)}))
                .collect();
            return to_dynamic(
                &json!({"answer": answer, "calls": calls}),
                "the agent's answer",
            );
        }
        Ok(answer.into())
    }

    /// One completion without tools.
    fn complete(
        &self,
        model: &ModelSettings,
        messages: &[Message],
        format: Option<&Value>,
    ) -> Fallible<String> {
        let mut model = model.clone();
        let provider = self.connect_fitted(&mut model)?.provider;
        let model = &model;
        let request = ChatRequest {
            messages,
            tools: &[],
            format,
        };
        let mut sink = |_: StreamEvent<'_>| {};
        let mut attempt = 0;
        loop {
            let result = self.runtime.block_on(async {
                tokio::select! {
                    result = provider.chat(request, &mut sink) => Some(result),
                    () = self.cancel.cancelled() => None,
                }
            });
            match result {
                None => return Err(stop(CANCELLED)),
                Some(Ok(turn)) => {
                    if let Some(store) = &self.store {
                        for message in messages
                            .iter()
                            .filter(|m| m.role == crate::llm::Role::User)
                            .take(1)
                        {
                            let _ = store.add_message(self.run, message);
                        }
                        let _ = store.add_message(self.run, &Message::from_turn(&turn));
                    }
                    return Ok(turn.content);
                }
                Some(Err(e)) if e.is_retryable() && attempt < model.max_retries => {
                    attempt += 1;
                    let wait = llm::retry::backoff(attempt);
                    self.emit(
                        "warn",
                        &format!("{e}; retrying in {:.1} s", wait.as_secs_f64()),
                    );
                    self.sleep_ms(wait.as_millis() as i64)?;
                }
                Some(Err(e)) => return Err(thrown(ErrorKind::Model, e.to_string(), &[])),
            }
        }
    }

    /// `llm(prompt, options)`.
    pub fn llm(&self, prompt: &str, options: &Map) -> Fallible<String> {
        let model = self.model_settings(options)?;
        let mut messages = Vec::new();
        if let Some(system) = options.get("system") {
            messages.push(Message::system(text_of(system, "the `system` of llm()")?));
        }
        messages.push(Message::user(prompt));
        self.complete(&model, &messages, None)
    }

    /// `llm_json(prompt, schema)`: structured output, validated, retried once.
    pub fn llm_json(&self, prompt: &str, schema: &Dynamic) -> Fallible<Dynamic> {
        let schema = to_json(schema, "the schema passed to llm_json")?;
        let expected = AnswerSchema::new(schema).map_err(|e| {
            thrown(
                ErrorKind::InvalidArgs,
                format!("the schema passed to llm_json: {e}"),
                &[],
            )
        })?;
        let model = self.model.clone();
        let mut messages = vec![Message::user(format!(
            "{prompt}\n\nAnswer with JSON only, following this JSON Schema:\n{}",
            expected.schema()
        ))];
        let mut last_problem = String::new();
        for _attempt in 0..2 {
            let text = self.complete(&model, &messages, Some(expected.schema()))?;
            match expected.check(&text) {
                Ok(value) => return to_dynamic(&value, "the model's answer"),
                Err(problem) => last_problem = problem,
            }
            messages.push(Message::from_turn(&crate::llm::Turn {
                content: text,
                thinking: String::new(),
                tool_calls: Vec::new(),
                finish: crate::llm::Finish::Stop,
                usage: None,
            }));
            messages.push(Message::user(expected.ask_again(&last_problem)));
        }
        Err(thrown(
            ErrorKind::InvalidOutput,
            format!("the model's answer did not fit the schema twice: {last_problem}"),
            &[],
        ))
    }

    /// `sleep(ms)`.
    pub fn sleep_ms(&self, ms: i64) -> Fallible<()> {
        if ms < 0 {
            return Err(thrown(
                ErrorKind::InvalidArgs,
                "sleep() takes a number of milliseconds from 0",
                &[],
            ));
        }
        let wait = Duration::from_millis(ms as u64);
        if wait > MAX_SLEEP {
            return Err(thrown(
                ErrorKind::InvalidArgs,
                format!(
                    "sleep() waits at most {} ms at a time",
                    MAX_SLEEP.as_millis()
                ),
                &[],
            ));
        }
        let cancelled = self.runtime.block_on(async {
            tokio::select! {
                () = tokio::time::sleep(wait) => false,
                () = self.cancel.cancelled() => true,
            }
        });
        if cancelled {
            Err(stop(CANCELLED))
        } else {
            Ok(())
        }
    }

    /// `env(name)`.
    pub fn env(&self, name: &str) -> Fallible<Dynamic> {
        if !self.env_allowed.contains(name) {
            return Err(thrown(
                ErrorKind::Denied,
                format!(
                    "the workflow may not read `{name}`: list it in `env` under [workflow] in toolcell.toml"
                ),
                &[],
            ));
        }
        Ok(std::env::var(name)
            .map(Dynamic::from)
            .unwrap_or(Dynamic::UNIT))
    }
}

/// A `json_parse` failure; serde_json's own depth limit (one level short
/// of [`MAX_VALUE_DEPTH`]) gets the error kind and advice of the others.
fn json_parse_error(e: serde_json::Error) -> Box<EvalAltResult> {
    // serde_json has no error category for it, only this message.
    if e.to_string().starts_with("recursion limit exceeded") {
        return thrown(
            ErrorKind::TooDeep,
            format!(
                "the text given to json_parse nests arrays and objects deeper than {MAX_JSON_DEPTH} levels (at its line {}, column {}); flatten it or parse it in parts",
                e.line(),
                e.column()
            ),
            &[],
        );
    }
    thrown(ErrorKind::InvalidJson, e.to_string(), &[])
}

/// Registers the host functions on `engine`.
pub fn register(engine: &mut Engine, host: &Arc<HostContext>) {
    let h = host.clone();
    engine.register_fn("tool", move |name: &str, args: Map| {
        h.tool(name, &Dynamic::from_map(args))
    });
    let h = host.clone();
    engine.register_fn("tool", move |name: &str| {
        h.tool(name, &Dynamic::from_map(Map::new()))
    });
    let h = host.clone();
    engine.register_fn("agent", move |task: &str, options: Map| {
        h.agent(task, &options)
    });
    let h = host.clone();
    engine.register_fn("agent", move |task: &str| h.agent(task, &Map::new()));
    let h = host.clone();
    engine.register_fn("llm", move |prompt: &str, options: Map| {
        h.llm(prompt, &options)
    });
    let h = host.clone();
    engine.register_fn("llm", move |prompt: &str| h.llm(prompt, &Map::new()));
    let h = host.clone();
    engine.register_fn("llm_json", move |prompt: &str, schema: Map| {
        h.llm_json(prompt, &Dynamic::from_map(schema))
    });
    let h = host.clone();
    engine.register_fn(
        "log",
        move |level: &str, message: Dynamic| -> Fallible<()> {
            if !matches!(level, "debug" | "info" | "warn" | "error") {
                return Err(thrown(
                    ErrorKind::InvalidArgs,
                    format!("log level `{level}` is not one of debug, info, warn, error"),
                    &[],
                ));
            }
            h.emit(level, &text_of(&message, "the message passed to log")?);
            Ok(())
        },
    );
    let h = host.clone();
    engine.on_print(move |text| h.emit("print", text));
    let h = host.clone();
    engine.on_debug(move |text, _, _| h.emit("debug", text));
    engine.register_fn("json_parse", |text: &str| -> Fallible<Dynamic> {
        let value: Value = serde_json::from_str(text).map_err(json_parse_error)?;
        to_dynamic(&value, "the value json_parse read")
    });
    engine.register_fn("json_stringify", |value: Dynamic| -> Fallible<String> {
        Ok(to_json(&value, "the value passed to json_stringify")?.to_string())
    });
    engine.register_fn("now", || -> String {
        jiff::Zoned::now()
            .strftime("%Y-%m-%dT%H:%M:%S%:z")
            .to_string()
    });
    engine.register_fn("now_ms", || -> i64 { crate::store::now_ms() });
    engine.register_fn("days_ago", |days: i64| -> i64 {
        crate::store::now_ms() - days * 86_400_000
    });
    engine.register_fn("format_time", |ms: i64, format: &str| -> Fallible<String> {
        let at = jiff::Timestamp::from_millisecond(ms)
            .map_err(|e| thrown(ErrorKind::InvalidArgs, e.to_string(), &[]))?;
        Ok(at
            .to_zoned(jiff::tz::TimeZone::system())
            .strftime(format)
            .to_string())
    });
    let h = host.clone();
    engine.register_fn("sleep", move |ms: i64| h.sleep_ms(ms));
    let h = host.clone();
    engine.register_fn("env", move |name: &str| h.env(name));
    engine.register_fn("fail", |why: &str| -> Fallible<()> {
        let mut map = Map::new();
        map.insert("fail".into(), why.into());
        Err(EvalAltResult::ErrorTerminated(map.into(), Position::NONE).into())
    });
}

/// The longest single `sleep()`.
pub const MAX_SLEEP: Duration = Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::MAX_JSON_DEPTH;
    use serde_json::Value;

    fn parsed(text: String) -> Value {
        serde_json::from_str(&text).unwrap()
    }

    // Arguments and schemas reach jsonschema (a tool's schema check,
    // llm_json) at most as deep as serde_json parses; compiling and
    // validating that deep must fit a 2 MiB stack (this test thread's, like
    // the runtime's threads) with room to spare.
    #[test]
    fn json_schema_at_the_parser_s_depth_fits_a_small_stack() {
        let levels = MAX_JSON_DEPTH - 1;
        let schema = parsed(format!(
            "{}{{\"type\": \"array\", \"maxItems\": 0}}{}",
            "{\"items\": ".repeat(levels),
            "}".repeat(levels)
        ));
        let validator = jsonschema::validator_for(&schema).unwrap();
        let instance = parsed(format!(
            "{}{}",
            "[".repeat(MAX_JSON_DEPTH),
            "]".repeat(MAX_JSON_DEPTH)
        ));
        assert!(validator.is_valid(&instance));
        let wrong = parsed(format!(
            "{}1{}",
            "[".repeat(MAX_JSON_DEPTH),
            "]".repeat(MAX_JSON_DEPTH)
        ));
        assert!(validator.iter_errors(&wrong).count() > 0);

        let recursive = serde_json::json!({"type": "array", "items": {"$ref": "#"}});
        let validator = jsonschema::validator_for(&recursive).unwrap();
        assert!(validator.is_valid(&instance));
        assert!(!validator.is_valid(&wrong));
        let pretty = serde_json::to_string_pretty(&wrong).unwrap();
        assert!(pretty.len() > MAX_JSON_DEPTH);
    }
}
