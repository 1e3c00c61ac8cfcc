//! Approval by the inbox: a call nobody granted up front is parked in the
//! run store (see [`crate::store::approvals`]) with exactly what the
//! terminal prompt would show, and waits — the run `waiting` — until a
//! person decides it with `toolcell approve` or `toolcell deny` from any
//! process, or the wait runs out and the call is refused in band. For runs
//! nobody watches: schedules with `wait_for_approval`, `toolcell run
//! --wait-approval`.

use super::{ApprovalRequest, Approver, Decision, StandingApprovals, terminal};
use crate::store::approvals::{ParkedStatus, Parking};
use crate::store::{RunId, Store, now_ms};
use async_trait::async_trait;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a waiting call looks for its answer: a decision reaches the
/// run within this (the bound is a second).
const POLL: Duration = Duration::from_millis(200);

/// Grants made up front first, then the inbox.
pub struct InboxApprover {
    pub granted: StandingApprovals,
    pub store: Arc<Store>,
    /// The run the calls belong to, marked `waiting` while one is parked.
    pub run: Option<RunId>,
    /// How long a parked call waits before it is refused.
    pub wait: Duration,
    /// Tools a person approved for the rest of the run.
    approved_for_run: Mutex<BTreeSet<String>>,
    /// Who answered each call, by its tool and arguments, for the record.
    answered: Mutex<BTreeMap<String, String>>,
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
            answered: Mutex::default(),
        }
    }

    fn key(request: &ApprovalRequest<'_>) -> String {
        format!("{}\0{}", request.tool, request.args)
    }

    fn answered_as(&self, request: &ApprovalRequest<'_>, by: String) {
        self.answered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(Self::key(request), by);
    }

    /// Parks `request` and waits for its answer.
    async fn wait_for_answer(&self, request: &ApprovalRequest<'_>) -> Decision {
        let wait_ms = i64::try_from(self.wait.as_millis()).unwrap_or(i64::MAX);
        let shown = terminal::shown(request);
        let parking = Parking {
            run: self.run,
            tool: request.tool,
            arguments: &request.args.to_string(),
            shown: &shown,
            for_run: request.offers_for_run(),
            expires_at: now_ms().saturating_add(wait_ms),
        };
        let id = match self.store.park(&parking) {
            Ok(id) => id,
            Err(e) => {
                self.answered_as(request, super::ANSWERED_BY_NOBODY.into());
                return Decision::Declined(format!(
                    "`{}` needs approval and could not be parked for it ({e:#})",
                    request.tool
                ));
            }
        };
        tracing::info!(
            "call {id} of `{}` waits for approval: toolcell approve {id}",
            request.tool
        );
        let decision = loop {
            tokio::time::sleep(POLL).await;
            let call = match self.store.parked(id) {
                Ok(Some(call)) => call,
                Ok(None) => break Decision::Declined("its parked call was removed".into()),
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
                            self.answered_as(request, timeout);
                            break Decision::Declined(format!(
                                "`{}` {why}\n  fix: grant it up front, or decide it sooner with `toolcell approve ID`",
                                request.tool
                            ));
                        }
                        // Decided in the meantime: read again.
                        Err(_) => continue,
                    }
                }
                ParkedStatus::Waiting => continue,
                ParkedStatus::Approved => {
                    self.answered_as(request, by);
                    break Decision::Approved;
                }
                ParkedStatus::ApprovedForRun => {
                    self.answered_as(request, by);
                    self.approved_for_run
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(request.tool.to_string());
                    break Decision::ApprovedForRun;
                }
                ParkedStatus::Denied | ParkedStatus::TimedOut | ParkedStatus::Void => {
                    self.answered_as(request, by);
                    let reason = call.reason.unwrap_or_default();
                    break Decision::Declined(if reason.is_empty() {
                        format!("the user declined this call of `{}`", request.tool)
                    } else {
                        format!(
                            "the user declined this call of `{}`: {reason}",
                            request.tool
                        )
                    });
                }
            }
        };
        if let Some(run) = self.run
            && let Err(e) = self.store.resume_run(run)
        {
            tracing::warn!("cannot mark run {run} running again: {e:#}");
        }
        decision
    }
}

#[async_trait]
impl Approver for InboxApprover {
    async fn decide(&self, request: &ApprovalRequest<'_>) -> Decision {
        if self.granted.covers(request) {
            return Decision::Approved;
        }
        if request.policy_change.is_some() {
            return super::policy_refusal(request, "a parked call is not answered at a terminal");
        }
        if request.offers_for_run()
            && self
                .approved_for_run
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(request.tool)
        {
            self.answered_as(request, "person (approved for this run)".into());
            return Decision::Approved;
        }
        self.wait_for_answer(request).await
    }

    fn answered_by(&self, request: &ApprovalRequest<'_>, decision: &Decision) -> String {
        if self.granted.covers(request) {
            return self.granted.answered_by(request, decision);
        }
        if request.policy_change.is_some() {
            return super::ANSWERED_BY_NOBODY.into();
        }
        self.answered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&Self::key(request))
            .unwrap_or_else(|| super::ANSWERED_BY_PERSON.into())
    }

    /// A call whose files changed since it was decided is parked again,
    /// with the change as it is now.
    fn can_ask_again(&self) -> bool {
        true
    }
}
