//! Approval by the inbox: a call nobody granted up front is parked in the
//! run store (see [`crate::store::approvals`]) with exactly what the
//! terminal prompt would show, and waits — the run `waiting` — until a
//! person decides it with `toolcell approve` or `toolcell deny` from any
//! process, or the wait runs out and the call is refused in band. For runs
//! nobody watches: schedules with `wait_for_approval`, `toolcell run
//! --wait-approval`.

use super::notify::{Notifier, Waiting};
use super::{Answer, ApprovalRequest, Approver, Decision, StandingApprovals, terminal};
use crate::store::approvals::{ParkedStatus, Parking};
use crate::store::{RunId, Store, now_ms};
use async_trait::async_trait;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a waiting call looks for its answer: a decision reaches the
/// run within this (the bound is a second).
const POLL: Duration = Duration::from_millis(200);

/// Grants made up front first, then the inbox.
pub struct InboxApprover {
    pub granted: StandingApprovals,
    pub store: Arc<Store>,
    /// The run the calls belong to, marked `waiting` while one is parked;
    /// `None` when each call says its own (an MCP session's).
    pub run: Option<RunId>,
    /// How long a parked call waits before it is refused.
    pub wait: Duration,
    /// Tools a person approved for the rest of the run.
    approved_for_run: Mutex<BTreeSet<String>>,
    /// Who is told of each parked call (`[approvals] on_waiting`).
    notifier: Option<Notifier>,
}

impl InboxApprover {
    pub fn new(
        granted: StandingApprovals,
        store: Arc<Store>,
        run: Option<RunId>,
        wait: Duration,
    ) -> Self {
        Self {
            granted,
            store,
            run,
            wait,
            approved_for_run: Mutex::default(),
            notifier: None,
        }
    }

    /// For a command's run (`toolcell run`, `toolcell chat`) with
    /// `--wait-approval`: what was granted on its command line, then the
    /// inbox instead of the terminal, and the config's `on_waiting` told.
    pub fn for_run(
        granted: StandingApprovals,
        store: Arc<Store>,
        run: RunId,
        wait: Duration,
        config: &crate::config::WorkspaceConfig,
    ) -> Self {
        let granted = StandingApprovals {
            ask: None,
            ..granted
        };
        Self::new(granted, store, Some(run), wait).telling(Notifier::from_config(config))
    }

    /// Tells `notifier` of each call parked from now on.
    pub fn telling(mut self, notifier: Option<Notifier>) -> Self {
        self.notifier = notifier;
        self
    }

    /// Parks `request` and waits for its answer.
    async fn wait_for_answer(&self, request: &ApprovalRequest<'_>) -> Answer {
        let wait_ms = i64::try_from(self.wait.as_millis()).unwrap_or(i64::MAX);
        let shown = terminal::shown(request);
        let run = self.run.or(request.run);
        let parking = Parking {
            run,
            tool: request.tool,
            arguments: &request.args.to_string(),
            shown: &shown,
            for_run: request.offers_for_run(),
            expires_at: now_ms().saturating_add(wait_ms),
        };
        let id = match self.store.park(&parking) {
            Ok(id) => id,
            Err(e) => {
                return Answer::nobody(Decision::Declined(format!(
                    "`{}` needs approval and could not be parked for it ({e:#})",
                    request.tool
                )));
            }
        };
        tracing::info!(
            "call {id} of `{}` waits for approval: toolcell approve {id}",
            request.tool
        );
        if let Some(notifier) = &self.notifier {
            notifier.tell(&Waiting {
                call: id,
                run,
                tool: request.tool,
                shown: &shown,
                expires_at_ms: parking.expires_at,
            });
        }
        let decision = loop {
            tokio::time::sleep(POLL).await;
            let call = match self.store.parked(id) {
                Ok(Some(call)) => call,
                Ok(None) => {
                    break Answer::nobody(Decision::Declined("its parked call was removed".into()));
                }
                Err(e) => {
                    tracing::warn!("cannot read parked call {id}: {e:#}");
                    continue;
                }
            };
            let by = call
                .decided_by
                .clone()
                .unwrap_or_else(|| super::ANSWERED_BY_PERSON.into());
            match call.status {
                ParkedStatus::Waiting if now_ms() >= call.expires_at => {
                    let why = format!(
                        "nobody approved it within {}s: it was not run",
                        self.wait.as_secs()
                    );
                    let timeout = format!("timeout after {}s", self.wait.as_secs());
                    match self
                        .store
                        .decide_parked(id, ParkedStatus::TimedOut, Some(&why), &timeout)
                    {
                        Ok(()) => {
                            break Answer::new(
                                Decision::Declined(format!(
                                    "`{}` {why}\n  fix: grant it up front, or decide it sooner with `toolcell approve ID`",
                                    request.tool
                                )),
                                timeout,
                            );
                        }
                        // Decided in the meantime: read again.
                        Err(_) => continue,
                    }
                }
                ParkedStatus::Waiting => continue,
                ParkedStatus::Approved => break Answer::new(Decision::Approved, by),
                ParkedStatus::ApprovedForRun => {
                    self.approved_for_run
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(request.tool.to_string());
                    break Answer::new(Decision::ApprovedForRun, by);
                }
                ParkedStatus::Denied | ParkedStatus::TimedOut | ParkedStatus::Void => {
                    let reason = call.reason.unwrap_or_default();
                    let decision = Decision::Declined(if reason.is_empty() {
                        format!("the user declined this call of `{}`", request.tool)
                    } else {
                        format!(
                            "the user declined this call of `{}`: {reason}",
                            request.tool
                        )
                    });
                    break Answer::new(decision, by);
                }
            }
        };
        if let Some(run) = run
            && let Err(e) = self.store.resume_run(run)
        {
            tracing::warn!("cannot mark run {run} running again: {e:#}");
        }
        decision
    }
}

#[async_trait]
impl Approver for InboxApprover {
    async fn decide(&self, request: &ApprovalRequest<'_>) -> Answer {
        if self.granted.covers(request) {
            return Answer::new(Decision::Approved, self.granted.grant_of(request));
        }
        if request.policy_change.is_some() {
            return Answer::nobody(super::policy_refusal(
                request,
                "a parked call is not answered at a terminal",
            ));
        }
        if request.offers_for_run()
            && self
                .approved_for_run
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(request.tool)
        {
            return Answer::new(Decision::Approved, super::APPROVED_FOR_RUN_BY_PERSON);
        }
        self.wait_for_answer(request).await
    }

    /// A call whose files changed since it was decided is parked again,
    /// with the change as it is now.
    fn can_ask_again(&self) -> bool {
        true
    }
}
