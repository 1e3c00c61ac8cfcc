//! Admission: everything a call passes before it may run — the tool
//! found, its grant resolved and enabled, its arguments checked against its
//! schema, toolcell's own policy and the user's rules applied — and the
//! asking, when the call needs approval, until the answer holds.

use super::dispatch::Dispatcher;
use crate::approval::{ApprovalRequest, Approver, Decision};
use crate::call::error::CallError;
use crate::config::mcp_server::REACHED_OVER_HTTP;
use crate::effect::changes::Touch;
use crate::policy::PolicyChange;
use crate::policy::rules::RuleDecision;
use crate::registry::grant::{ApprovalMode, ToolGrant};
use crate::registry::{Backend, McpTool, ToolEntry, ToolSource};
use crate::store::RunId;
use crate::tool::manifest::ManifestApproval;
use serde_json::Value;

impl Dispatcher {
    /// Everything before approval: find the tool, resolve its grant, check
    /// it is enabled, validate the arguments and apply the policy's
    /// `deny`. Says whether the call needs approval.
    pub(super) fn admit<'d>(&'d self, name: &str, args: &Value) -> Result<Admitted<'d>, Refused> {
        let unavailable = |message: String| CallError::Unavailable {
            tool: name.into(),
            message,
        };
        let Some(entry) = self.registry().get(name) else {
            let available = self
                .registry()
                .names()
                .into_iter()
                .map(String::from)
                .collect();
            return Err(CallError::UnknownTool {
                name: name.to_string(),
                available,
            }
            .into());
        };
        let grant = match self.grant(name) {
            Some(Ok(grant)) => grant.clone(),
            Some(Err(problem)) => return Err(unavailable(problem.to_string()).into()),
            None => ToolGrant::resolve(&entry.manifest, self.config())
                .map_err(|problem| unavailable(problem.to_string()))?,
        };
        if !grant.enabled {
            return Err(CallError::Disabled { name: name.into() }.into());
        }
        // A tool's first call builds its argument validator (about 0.25 ms,
        // the checks every schema shares set up first) while another
        // thread loads its component, which the call needs next: the call
        // then waits for the longer of the two, not for both (BENCHMARKS.md).
        // A failure to load is reported when the call runs. A one-call
        // process does both on its calling thread (see `PlannedSandbox`).
        let validator = std::thread::scope(|scope| {
            if !entry.has_validator()
                && entry.component().is_some()
                && !self.prepares_on_calling_thread()
            {
                scope.spawn(|| drop(self.prepared(entry)));
            }
            entry.validator()
        })
        .map_err(|message| CallError::Unavailable {
            tool: name.into(),
            message,
        })?;
        let problems = schema_problems(validator, args);
        if !problems.is_empty() {
            return Err(CallError::InvalidArgs {
                tool: name.into(),
                problems,
            }
            .into());
        }
        // What a file-changing built-in call changes is known from its
        // arguments; a change of the policy is asked for whatever the
        // tool's approval (other tools meet the cell's guard instead).
        let touched = match entry.source {
            ToolSource::BuiltIn => crate::effect::changes::touched(name, args),
            _ => None,
        };
        let policy = touched
            .as_deref()
            .map(|paths| {
                let resolved = paths.iter().filter_map(|(shown, touch)| {
                    let at = crate::effect::roots::resolve(self.config(), shown)?;
                    let inside = !at.relative.as_os_str().is_empty();
                    inside.then(|| (shown.clone(), at.root.path.join(&at.relative), *touch))
                });
                crate::policy::policy_changes(&self.config().files, resolved)
            })
            .unwrap_or_default();
        // The rules decide before the tool's approval: a `deny` refuses, an
        // `auto` lets the call run unasked and an `ask` asks, within what
        // the grant allows (see `policy::rules`). A change of the policy is
        // asked whatever they say.
        let real = |path: &str| crate::effect::roots::real_path(self.config(), path);
        let rule = self.config().rules.decide(name, args, &real);
        let grant_said = || {
            let mode = match grant.approval {
                ApprovalMode::Auto => "auto",
                ApprovalMode::Ask => "ask",
                ApprovalMode::Deny => "deny",
            };
            match self.config().tool(name).approval {
                Some(_) => format!("grant: tools.{name}.approval = \"{mode}\""),
                None => format!("grant: the tool's default ({mode})"),
            }
        };
        let decided_by_rule = rule.is_some();
        let (needs_approval, decided_by) = match (grant.approval, rule) {
            (ApprovalMode::Deny, _) => {
                let reason =
                    "the workspace config denies this tool (approval = \"deny\")".to_string();
                return Err(Refused {
                    error: CallError::Denied {
                        tool: name.into(),
                        reason,
                    },
                    by: Some(grant_said()),
                });
            }
            (_, Some(rule)) if rule.decision == RuleDecision::Deny => {
                return Err(Refused {
                    error: CallError::Denied {
                        tool: name.into(),
                        reason: format!(
                            "the {} refuses this call\n  fix: call it with other arguments, or change that rule in toolcell.toml",
                            rule.label()
                        ),
                    },
                    by: Some(rule.label()),
                });
            }
            (_, Some(rule)) if rule.decision == RuleDecision::Auto => {
                (!policy.is_empty(), rule.label())
            }
            (_, Some(rule)) => (true, rule.label()),
            (ApprovalMode::Auto, None) => (!policy.is_empty(), grant_said()),
            (ApprovalMode::Ask, None) => (true, grant_said()),
        };
        Ok(Admitted {
            entry,
            grant,
            needs_approval,
            decided_by,
            decided_by_rule,
            touched,
            policy,
        })
    }

    /// What would decide a call of `name` with `args`, and how, without
    /// running it (`toolcell rules check`): whether it would be asked,
    /// what decided that, and whether it changes toolcell's own policy
    /// (always asked); or why it would be refused.
    pub fn would_decide(&self, name: &str, args: &Value) -> Result<(bool, String, bool), Refused> {
        self.admit(name, args).map(|admitted| {
            (
                admitted.needs_approval,
                admitted.decided_by,
                !admitted.policy.is_empty(),
            )
        })
    }

    /// Asks `approver` about an admitted call until the answer holds: an
    /// approved call runs only if the files it changes still hold what the
    /// prompt showed; if they changed, a person at a terminal is shown the
    /// change as it is now, and anyone else gets a refusal in band. An
    /// approved change of the policy is let through the cell's guard for
    /// exactly the files the prompt named.
    pub(super) async fn seek_approval(
        &self,
        admitted: &mut Admitted<'_>,
        args: &Value,
        approver: &dyn Approver,
        run: Option<RunId>,
    ) -> (Decision, String) {
        let mut asked_again = false;
        let mut answered_by = crate::approval::ANSWERED_BY_NOBODY.to_string();
        for _ in 0..MAX_ASKS {
            let mut request = self.approval_request(admitted, args);
            request.asked_again = asked_again;
            request.run = run;
            let answer = approver.decide(&request).await;
            let decision = answer.decision;
            answered_by = answer.by;
            if !matches!(decision, Decision::Approved | Decision::ApprovedForRun) {
                return (decision, answered_by);
            }
            let touched = admitted.touched.as_deref().unwrap_or_default();
            let now = crate::effect::changes::state_of(self.config(), touched);
            let changed: Vec<&str> = now
                .iter()
                .zip(&request.basis)
                .filter(|(now, then)| now != then)
                .map(|(now, _)| now.0.as_str())
                .collect();
            if changed.is_empty() {
                admitted.grant.policy_changes =
                    admitted.policy.iter().map(|c| c.host.clone()).collect();
                return (decision, answered_by);
            }
            let changed = changed
                .iter()
                .map(|p| format!("`{}`", crate::util::text::for_terminal_line(p)))
                .collect::<Vec<_>>()
                .join(", ");
            if !approver.can_ask_again() {
                return (
                    Decision::Declined(format!(
                        "{changed} changed since you approved it: the call was not run, so nothing is applied that was not shown\n  fix: read the file again and make the call anew"
                    )),
                    answered_by,
                );
            }
            asked_again = true;
        }
        (
            Decision::Declined(format!(
                "the files this call changes kept changing while it was asked {MAX_ASKS} times: it was not run"
            )),
            answered_by,
        )
    }

    /// The approval request for an admitted call, with the change it would
    /// make when the host can tell.
    pub fn approval_request<'a>(
        &self,
        admitted: &Admitted<'a>,
        args: &'a Value,
    ) -> ApprovalRequest<'a> {
        let tool = admitted.entry.manifest.name.as_str();
        let preview = match admitted.entry.source {
            ToolSource::BuiltIn => crate::effect::preview::preview(self.config(), tool, args),
            _ => None,
        };
        let warning = match &admitted.entry.backend {
            Backend::Mcp(external) => Some(self.mcp_warning(external)),
            Backend::Component(_) if !admitted.grant.process.is_empty() => {
                let programs =
                    crate::util::text::for_terminal_line(&admitted.grant.process.join(", "))
                        .into_owned();
                Some(match admitted.grant.confinement() {
                    Some(confinement) => format!(
                        "its programs ({programs}) run outside its cell, {}",
                        confinement.describe()
                    ),
                    None => format!(
                        "not sandboxed (sandbox = \"none\"): its programs ({programs}) run with your rights, outside its cell"
                    ),
                })
            }
            Backend::Component(_) => None,
        };
        ApprovalRequest {
            tool,
            args,
            mutates: admitted.entry.manifest.mutates,
            preview,
            warning,
            // A tool that runs programs (`run_command`): what a call does
            // is its command line, so each one is decided on its own.
            every_call: !admitted.entry.manifest.capabilities.process.is_empty(),
            always: admitted.entry.manifest.approval == ManifestApproval::Always,
            policy_change: (!admitted.policy.is_empty())
                .then(|| PolicyChange::describe(&admitted.policy)),
            basis: admitted
                .touched
                .as_deref()
                .map(|paths| crate::effect::changes::state_of(self.config(), paths))
                .unwrap_or_default(),
            asked_again: false,
            run: None,
        }
    }

    /// What an approval prompt says of an external tool.
    fn mcp_warning(&self, external: &McpTool) -> String {
        let server = self
            .config()
            .mcp_servers
            .iter()
            .find(|s| s.name == external.server);
        let command = server.map(|s| s.command_line()).unwrap_or_default();
        let line = crate::util::text::for_terminal_line;
        let how = match server {
            Some(server) if !server.is_started() => REACHED_OVER_HTTP.to_string(),
            _ => match server
                .and_then(|s| s.confinement(&self.config().roots, &self.config().files.policy))
            {
                Some(confinement) => {
                    format!("a program outside the cells, {}", confinement.describe())
                }
                None => {
                    "not sandboxed (sandbox = \"none\"): a program with your rights, not in a cell"
                        .into()
                }
            },
        };
        format!(
            "`{}` runs in the MCP server `{}` ({}), {how}",
            line(&external.tool),
            line(&external.server),
            line(&command)
        )
    }
}

/// Times a call is asked about when its files keep changing between the
/// prompt and the run: a person editing the file sees it twice, a file
/// rewritten every second does not hold the prompt forever.
const MAX_ASKS: usize = 3;

/// A call refused before approval, and what refused it (a rule, the
/// grant) when that is more than the error says.
pub struct Refused {
    pub error: CallError,
    pub by: Option<String>,
}

impl From<CallError> for Refused {
    fn from(error: CallError) -> Self {
        Self { error, by: None }
    }
}

/// A call that passed every check but approval.
pub struct Admitted<'d> {
    pub entry: &'d ToolEntry,
    pub(super) grant: ToolGrant,
    /// The policy says `ask`, or the call changes the policy.
    pub needs_approval: bool,
    /// What let it run unasked (a rule, the grant), or made it asked.
    pub decided_by: String,
    /// Whether that was a rule: a person who answers is recorded beside it.
    pub decided_by_rule: bool,
    /// The paths a file-changing built-in call changes.
    pub(super) touched: Option<Vec<(String, Touch)>>,
    /// The policy files among them.
    pub(super) policy: Vec<PolicyChange>,
}

impl Admitted<'_> {
    /// The error for a call the approver did not approve.
    pub fn refusal(&self, decision: &Decision) -> Option<CallError> {
        let tool = self.entry.manifest.name.clone();
        match decision {
            Decision::Approved | Decision::ApprovedForRun => None,
            Decision::Declined(reason) => Some(CallError::Denied {
                tool,
                reason: reason.clone(),
            }),
            Decision::Quit => Some(CallError::Denied {
                tool,
                reason: "the user stopped the run".into(),
            }),
        }
    }
}

/// What is wrong with `args` for `entry`'s schema: one line per problem,
/// naming the field.
fn schema_problems(validator: &jsonschema::Validator, args: &Value) -> Vec<String> {
    validator
        .iter_errors(args)
        .map(|error| {
            let at = error.instance_path().to_string();
            if at.is_empty() {
                error.to_string()
            } else {
                format!("at `{at}`: {error}")
            }
        })
        .collect()
}
