//! A scheduled workflow run with nobody to ask, as the daemon and
//! `toolcell schedule run` start it.

use crate::approval::inbox::InboxApprover;
use crate::approval::notify::Notifier;
use crate::approval::{Approver, StandingApprovals};
use crate::call::dispatch::Dispatcher;
use crate::config::WorkspaceConfig;
use crate::config::schedule::ScheduleConfig;
use crate::store::{RunId, Store};
use crate::workflow::launch::Launch;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A workflow run of `schedule` with nobody to ask: only the tools in its
/// `approve` list are approved; other calls needing approval are parked
/// for a person to decide when it says `wait_for_approval`, else denied in
/// band; its output goes to the run's log only.
pub fn unattended_launch(
    dispatcher: &Arc<Dispatcher>,
    store: &Arc<Store>,
    config: &WorkspaceConfig,
    schedule: &ScheduleConfig,
    run: RunId,
    cancel: CancellationToken,
) -> Launch {
    let mut limits = config.workflow.limits.clone();
    if let Some(timeout) = schedule.timeout {
        limits.timeout = timeout;
    }
    let granted = StandingApprovals {
        all: false,
        tools: schedule.approve.iter().cloned().collect(),
        ask: None,
        grant_hint: "`approve = [\"{tool}\"]` in this [[schedule]] to allow it (or wait_for_approval = \"2h\" to decide it later with `toolcell approve`)",
        granted_as: "the schedule's approve list:",
    };
    let approver: Arc<dyn Approver> = match schedule.wait_for_approval {
        Some(wait) => Arc::new(
            InboxApprover::new(granted, store.clone(), Some(run), wait)
                .telling(Notifier::from_config(config)),
        ),
        None => Arc::new(granted),
    };
    Launch {
        dispatcher: dispatcher.clone(),
        store: store.clone(),
        run,
        approver,
        model: config.model.clone(),
        args: schedule.args.clone(),
        limits,
        cancel,
        output: Box::new(|_, _| {}),
    }
}
