//! One recorded workflow run, as `toolcell run`, `toolcell schedule run`
//! and the daemon all start it: the script on a thread of its own (see
//! [`Workflow::run`]) with the host's functions, its end written to the run
//! store. A panic in the script's thread is a failed run, never the
//! caller's.

use super::host_api::{HostContext, OutputSink};
use super::{Failure, Workflow};
use crate::approval::Approver;
use crate::call::dispatch::Dispatcher;
use crate::config::workflow::ScriptLimits;
use crate::llm::ModelSettings;
use crate::store::{RunId, RunStatus, Store};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Everything a workflow run needs besides its script.
pub struct Launch {
    pub dispatcher: Arc<Dispatcher>,
    pub store: Arc<Store>,
    /// The run's row, already started.
    pub run: RunId,
    pub approver: Arc<dyn Approver>,
    pub model: ModelSettings,
    pub args: BTreeMap<String, String>,
    pub limits: ScriptLimits,
    /// Stops the run (Ctrl-C, a daemon shutting down).
    pub cancel: CancellationToken,
    /// Where print() and the host's notes go.
    pub output: Box<OutputSink>,
}

impl Launch {
    /// Runs `workflow` to its end and records it; must be called inside a
    /// multi-threaded tokio runtime (the script blocks on it for tool and
    /// model calls).
    pub async fn run(self, workflow: Workflow) -> (RunStatus, Result<Value, Failure>) {
        let (store, run) = (self.store.clone(), self.run);
        let host = Arc::new(HostContext {
            env_allowed: self
                .dispatcher
                .config()
                .workflow
                .env
                .iter()
                .cloned()
                .collect(),
            max_rounds: self.dispatcher.config().agent.max_rounds,
            dispatcher: self.dispatcher,
            approver: self.approver,
            store: Some(self.store),
            run,
            runtime: tokio::runtime::Handle::current(),
            cancel: self.cancel,
            model: self.model,
            args: self.args,
            output: self.output,
            calls: Default::default(),
        });
        let limits = self.limits;
        let result = tokio::task::spawn_blocking(move || workflow.run(host, &limits))
            .await
            .unwrap_or_else(|e| Err(Failure::Failed(format!("the workflow thread failed: {e}"))));
        let status = match &result {
            Ok(_) => RunStatus::Succeeded,
            Err(Failure::Cancelled) => RunStatus::Cancelled,
            Err(Failure::TimedOut { .. }) => RunStatus::TimedOut,
            Err(_) => RunStatus::Failed,
        };
        let (answer, error) = match &result {
            Ok(value) => (Some(value.to_string()), None),
            Err(failure) => (None, Some(failure.to_string())),
        };
        if let Err(e) = store.finish_run(run, status, answer.as_deref(), error.as_deref()) {
            tracing::warn!("cannot record the end of run {run}: {e:#}");
        }
        (status, result)
    }
}
