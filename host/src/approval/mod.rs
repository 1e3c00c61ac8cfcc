//! Approvals: whether a tool call may run, decided by policy and, when the
//! policy says `ask`, by whoever answers for the user.
//!
//! The policy (manifest default, config override) gives an
//! [`ApprovalMode`](crate::registry::grant::ApprovalMode);
//! an [`Approver`] answers the `ask` case. An approval covers one call with
//! exactly the arguments shown, once.
//!
//! - [`StandingApprovals`]: what was granted up front (`--yes`,
//!   `--approve TOOL`, a schedule's `approve` list), then the terminal if
//!   there is one, else a denial that says how to grant it;
//! - [`terminal`]: the prompt, with the change a call would make
//!   ([`crate::effect::preview`]);
//! - [`inbox`]: calls parked for a person to decide later, from any
//!   process (`toolcell approvals`, `approve`, `deny`), and [`notify`],
//!   the program told of each.

pub mod inbox;
pub mod notify;
pub mod terminal;

use async_trait::async_trait;
use serde_json::Value;
use std::collections::BTreeSet;

/// One call waiting for approval.
#[derive(Debug)]
pub struct ApprovalRequest<'a> {
    pub tool: &'a str,
    pub args: &'a Value,
    pub mutates: bool,
    /// What the call would change, computed by the host from the current
    /// files (for the file-changing built-in tools), or why that is unknown.
    pub preview: Option<String>,
    /// A warning shown with the request (an external, unsandboxed tool).
    pub warning: Option<String>,
    /// The tool is approved call by call (it runs programs: `run_command`):
    /// a blanket `--yes` and "yes for this run" do not cover it; only
    /// naming it (`--approve TOOL`) or answering does.
    pub every_call: bool,
    /// The manifest says `always`: each call is asked on its own, with no
    /// "yes for this run".
    pub always: bool,
    /// The call changes toolcell's own policy (the config, its state, a
    /// scheduled workflow), said as the prompt's first line: no standing
    /// grant covers it, only a person answering for this very call at a
    /// terminal.
    pub policy_change: Option<String>,
    /// What each path the call changes held when this request was made
    /// (path, fingerprint): the call runs only if they still do.
    pub basis: Vec<(String, String)>,
    /// Those paths changed since the person was last asked about this
    /// call: this is the change as it is now.
    pub asked_again: bool,
    /// The run the call is recorded in, when it is recorded before it runs.
    pub run: Option<crate::store::RunId>,
}

impl ApprovalRequest<'_> {
    /// Whether "yes to this tool for the rest of the run" may be offered.
    pub fn offers_for_run(&self) -> bool {
        !self.every_call && !self.always && self.policy_change.is_none()
    }
}

/// The arguments shown as lines when they have several: code to be run
/// (`run_python`'s), which a person reads line by line. Every other text
/// stays escaped on its line (a line break in a path is a thing to see),
/// and a file's new content is shown by the preview.
const SHOWN_AS_LINES: [&str; 1] = ["code"];

/// `args` with each top-level text of several lines named in
/// [`SHOWN_AS_LINES`] taken out to be shown as lines below the arguments
/// (by the prompt, the inbox and the page), as it would read in an editor,
/// and the texts taken out, by key. A text's place in the arguments says
/// how many lines it has.
pub fn texts_apart(args: &serde_json::Value) -> (serde_json::Value, Vec<(String, String)>) {
    let mut args = args.clone();
    let mut blocks = Vec::new();
    if let Some(fields) = args.as_object_mut() {
        for (key, value) in fields.iter_mut() {
            if !SHOWN_AS_LINES.contains(&key.as_str()) {
                continue;
            }
            if let Some(text) = value.as_str().filter(|t| t.trim_end().contains('\n')) {
                let lines = text.lines().count();
                blocks.push((key.clone(), text.to_string()));
                *value = serde_json::Value::String(format!("({lines} lines, shown below)"));
            }
        }
    }
    (args, blocks)
}

/// The answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// This call may run.
    Approved,
    /// This call, and every later call of the same tool in this run.
    ApprovedForRun,
    /// Declined, with the reason shown to the caller (and the model).
    Declined(String),
    /// Declined, and the user wants the whole run to stop.
    Quit,
}

/// Who or what let a call run, or kept it from running, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// The policy: the tool runs without asking.
    Auto,
    /// Nobody was asked: the call was refused or answered before.
    NotAsked,
    Approved,
    ApprovedForRun,
    Declined,
    Quit,
}

impl Decided {
    /// The word in the run record.
    pub fn as_str(self) -> &'static str {
        match self {
            Decided::Auto => "auto",
            Decided::NotAsked => "not-asked",
            Decided::Approved => "approved",
            Decided::ApprovedForRun => "approved-for-run",
            Decided::Declined => "declined",
            Decided::Quit => "quit",
        }
    }
}

impl From<&Decision> for Decided {
    fn from(decision: &Decision) -> Self {
        match decision {
            Decision::Approved => Decided::Approved,
            Decision::ApprovedForRun => Decided::ApprovedForRun,
            Decision::Declined(_) => Decided::Declined,
            Decision::Quit => Decided::Quit,
        }
    }
}

/// A [`Decision`] and who gave it, as the record says it: a person, a
/// grant made up front, a timeout, or nobody (no one could be asked).
/// They travel together so two calls decided at once can never swap
/// their records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub decision: Decision,
    pub by: String,
}

impl Answer {
    pub fn new(decision: Decision, by: impl Into<String>) -> Self {
        Self {
            decision,
            by: by.into(),
        }
    }

    /// Given by a person.
    pub fn person(decision: Decision) -> Self {
        Self::new(decision, ANSWERED_BY_PERSON)
    }

    /// A refusal because nobody could be asked.
    pub fn nobody(decision: Decision) -> Self {
        Self::new(decision, ANSWERED_BY_NOBODY)
    }
}

/// Answers approval requests for the user. It may wait a long time (a
/// person at a terminal); callers that can be cancelled race it against
/// their cancellation.
#[async_trait]
pub trait Approver: Send + Sync {
    async fn decide(&self, request: &ApprovalRequest<'_>) -> Answer;

    /// Whether a person can be shown the call again when its files changed
    /// between the prompt and the run (a terminal can; a refusal in band
    /// is the answer otherwise).
    fn can_ask_again(&self) -> bool {
        false
    }
}

/// The record's word for a call a person answered.
pub const ANSWERED_BY_PERSON: &str = "person";
/// The record's words for a call a person approved earlier for the rest
/// of the run.
pub const APPROVED_FOR_RUN_BY_PERSON: &str = "person (approved for this run)";
/// The record's word for a call refused because nobody could be asked.
pub const ANSWERED_BY_NOBODY: &str = "nobody to ask";

/// Approves everything: a caller that already asked.
pub struct ApproveAll;

#[async_trait]
impl Approver for ApproveAll {
    async fn decide(&self, _: &ApprovalRequest<'_>) -> Answer {
        Answer::person(Decision::Approved)
    }
}

/// Approvals granted before the run, then the terminal, then a denial.
pub struct StandingApprovals {
    /// `--yes`: every call that asks is approved, except calls of tools
    /// approved call by call ([`ApprovalRequest::every_call`]).
    pub all: bool,
    /// `--approve TOOL`: calls of these tools are approved.
    pub tools: BTreeSet<String>,
    /// Whom to ask otherwise; `None` when nobody can answer.
    pub ask: Option<terminal::TerminalApprover>,
    /// How the user grants a call up front, for the denial message; `{tool}`
    /// stands for the tool's name.
    pub grant_hint: &'static str,
    /// How the record names the grant of `tools`: `--approve`, `the
    /// schedule's approve list`.
    pub granted_as: &'static str,
}

impl StandingApprovals {
    /// For a command run by a person: `--yes`, `--approve`, and the terminal
    /// when stdin is one.
    pub fn interactive(
        all: bool,
        tools: impl IntoIterator<Item = String>,
        grant_hint: &'static str,
    ) -> Self {
        Self {
            all,
            tools: tools.into_iter().collect(),
            ask: terminal::TerminalApprover::if_terminal(),
            grant_hint,
            granted_as: "--approve",
        }
    }

    /// Whether `request` was granted up front (`--yes`, `--approve`). A
    /// change of toolcell's own policy never is.
    pub fn covers(&self, request: &ApprovalRequest<'_>) -> bool {
        request.policy_change.is_none()
            && ((self.all && !request.every_call) || self.tools.contains(request.tool))
    }

    /// How the record names the grant that covers `request`.
    pub fn grant_of(&self, request: &ApprovalRequest<'_>) -> String {
        if self.tools.contains(request.tool) {
            format!("grant: {} {}", self.granted_as, request.tool)
        } else {
            "grant: --yes".to_string()
        }
    }
}

/// The refusal of a policy change where no person can approve it.
pub fn policy_refusal(request: &ApprovalRequest<'_>, asked: &str) -> Decision {
    Decision::Declined(format!(
        "{}; only a person approving this very call at a terminal can allow that, and {asked}: no standing grant (--yes, --approve, a schedule's `approve`, approval = \"auto\") covers it\n  fix: edit the file yourself, or make the change from `toolcell chat` or `toolcell tools call` at a terminal and approve it there",
        request
            .policy_change
            .as_deref()
            .unwrap_or("this call changes toolcell's own policy")
    ))
}

#[async_trait]
impl Approver for StandingApprovals {
    async fn decide(&self, request: &ApprovalRequest<'_>) -> Answer {
        if self.covers(request) {
            return Answer::new(Decision::Approved, self.grant_of(request));
        }
        match &self.ask {
            Some(terminal) => terminal.decide(request).await,
            None if request.policy_change.is_some() => {
                Answer::nobody(policy_refusal(request, "there is no terminal to ask on"))
            }
            None if self.all => Answer::nobody(Decision::Declined(format!(
                "`{0}` is approved call by call and there is no terminal to ask on: --yes does not cover it; pass --approve {0} to run it unattended",
                request.tool
            ))),
            None => Answer::nobody(Decision::Declined(format!(
                "`{}` needs approval and there is no terminal to ask on: pass {}",
                request.tool,
                self.grant_hint.replace("{tool}", request.tool)
            ))),
        }
    }

    fn can_ask_again(&self) -> bool {
        self.ask.is_some()
    }
}
