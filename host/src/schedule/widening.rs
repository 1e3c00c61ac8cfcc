//! What a changed config would let schedules do that the running one does
//! not: the daemon applies a reload on its own only when it widens
//! nothing. A config that adds programs, servers, roots, grants or
//! automatic approvals waits until the user confirms it as it is with
//! `toolcell trust` (the same record that lets a config start programs);
//! narrowing — a root, tool, grant or schedule taken away — applies at
//! once. A change that both narrows and widens waits as a whole.

use crate::config::tools::ApprovalSetting;
use crate::config::{RootAccess, WorkspaceConfig};
use crate::contain::SandboxSetting;
use crate::policy::rules::{Rule, RuleDecision};
use crate::tool::manifest::FsAccess;

/// What the `[[rule]]`s of `new` let run unasked that those of `old` did
/// not: an `auto` rule added, an `ask` or `deny` rule taken away, or the
/// rules both keep in another order (the first that matches decides).
fn rules_widening(old: &WorkspaceConfig, new: &WorkspaceConfig) -> Vec<String> {
    let meanings = |config: &WorkspaceConfig| -> Vec<String> {
        config.rules.rules.iter().map(Rule::meaning).collect()
    };
    let (before, now) = (meanings(old), meanings(new));
    let mut wider = Vec::new();
    for rule in &new.rules.rules {
        if rule.decision == RuleDecision::Auto && !before.contains(&rule.meaning()) {
            wider.push(format!("the {} (auto)", rule.label()));
        }
    }
    for rule in &old.rules.rules {
        if rule.decision != RuleDecision::Auto && !now.contains(&rule.meaning()) {
            wider.push(format!(
                "the {} ({}) taken away",
                rule.label(),
                rule.decision.as_str()
            ));
        }
    }
    let kept_before: Vec<&String> = before.iter().filter(|m| now.contains(m)).collect();
    let kept_now: Vec<&String> = now.iter().filter(|m| before.contains(m)).collect();
    if kept_before != kept_now {
        wider.push("the [[rule]]s in another order".to_string());
    }
    wider
}

/// What `new` allows that `old` does not, one line each; empty when the
/// change only narrows or keeps what may be done.
pub fn widening(old: &WorkspaceConfig, new: &WorkspaceConfig) -> Vec<String> {
    let mut wider = Vec::new();
    for root in &new.roots {
        let before = old.roots.iter().find(|r| r.path == root.path);
        let access = match root.access {
            RootAccess::Read => "read",
            RootAccess::Write => "write",
        };
        match before {
            None => wider.push(format!("the root {} ({access})", root.path.display())),
            Some(before)
                if before.access == RootAccess::Read && root.access == RootAccess::Write =>
            {
                wider.push(format!("the root {} ({access})", root.path.display()))
            }
            // A new name sends the paths tools write to another folder.
            Some(before) if before.mount != root.mount => wider.push(format!(
                "the root {} now addressed as `{}`",
                root.path.display(),
                root.mount
            )),
            Some(_) => {}
        }
    }
    // Every tool either config mentions: a table taken away is back to the
    // tool's defaults, which may be looser.
    let names: std::collections::BTreeSet<&String> =
        old.tools.keys().chain(new.tools.keys()).collect();
    for name in names {
        let (settings, before) = (new.tool(name), old.tool(name));
        if enabledness(settings.enabled) > enabledness(before.enabled) {
            wider.push(format!("tools.{name} enabled"));
        }
        if fs_reach(settings.fs) > fs_reach(before.fs) {
            let now = settings
                .fs
                .map_or("the tool's own".to_string(), |fs| format!("\"{fs}\""));
            wider.push(format!("tools.{name}.fs = {now}"));
        }
        if looseness(settings.approval) > looseness(before.approval) {
            let now = match settings.approval {
                Some(ApprovalSetting::Auto) => "\"auto\"",
                Some(ApprovalSetting::Ask) => "\"ask\"",
                Some(ApprovalSetting::Deny) => "\"deny\"",
                None => "the tool's default",
            };
            wider.push(format!("tools.{name}.approval = {now}"));
        }
        for (key, now, then) in [
            ("env", &settings.env, &before.env),
            ("network", &settings.network, &before.network),
            ("process", &settings.process, &before.process),
        ] {
            let added: Vec<&str> = now
                .iter()
                .filter(|v| !then.contains(v))
                .map(String::as_str)
                .collect();
            if !added.is_empty() {
                wider.push(format!("tools.{name}.{key} adds {}", added.join(", ")));
            }
        }
        for (key, now, then) in [
            ("read", &settings.read, &before.read),
            ("write", &settings.write, &before.write),
        ] {
            let added: Vec<String> = now
                .iter()
                .filter(|v| !then.contains(v))
                .map(|p| p.display().to_string())
                .collect();
            if !added.is_empty() {
                wider.push(format!("tools.{name}.{key} adds {}", added.join(", ")));
            }
        }
        if settings.sandbox == SandboxSetting::None && before.sandbox != SandboxSetting::None {
            wider.push(format!("tools.{name}.sandbox = \"none\""));
        }
    }
    for server in new.mcp_servers.iter().filter(|s| s.enabled) {
        let same = old
            .mcp_servers
            .iter()
            .any(|s| s.enabled && s.same_launch(server));
        if !same {
            wider.push(format!(
                "the MCP server `{}` ({})",
                server.name,
                server.command_line()
            ));
        }
    }
    for schedule in new.schedules.iter().filter(|s| s.enabled) {
        match old.schedules.iter().find(|s| s.name == schedule.name) {
            None => wider.push(format!("the schedule `{}`", schedule.name)),
            Some(before) => {
                if !before.enabled {
                    wider.push(format!("the schedule `{}` enabled", schedule.name));
                }
                if before.workflow != schedule.workflow {
                    wider.push(format!(
                        "the schedule `{}` runs {}",
                        schedule.name, schedule.workflow_display
                    ));
                }
                let added: Vec<&str> = schedule
                    .approve
                    .iter()
                    .filter(|t| !before.approve.contains(t))
                    .map(String::as_str)
                    .collect();
                if !added.is_empty() {
                    wider.push(format!(
                        "the schedule `{}` approves {}",
                        schedule.name,
                        added.join(", ")
                    ));
                }
            }
        }
    }
    wider.extend(rules_widening(old, new));
    let added_env: Vec<&str> = new
        .workflow
        .env
        .iter()
        .filter(|v| !old.workflow.env.contains(v))
        .map(String::as_str)
        .collect();
    if !added_env.is_empty() {
        wider.push(format!("workflow.env adds {}", added_env.join(", ")));
    }
    if new.model.api_key_env.is_some() && new.model.api_key_env != old.model.api_key_env {
        wider.push(format!(
            "the model's key from ${} (sent to the model server)",
            new.model.api_key_env.as_deref().unwrap_or_default()
        ));
    }
    if new.model.base_url != old.model.base_url {
        wider.push(format!(
            "the model server {} (the workspace's text is sent there)",
            new.model.base_url
        ));
    }
    if new.files.secrets != old.files.secrets {
        wider.push("[secrets] changed".to_string());
    }
    if let Some(on_waiting) = &new.approvals.on_waiting
        && old.approvals.on_waiting.as_ref() != Some(on_waiting)
    {
        wider.push(format!(
            "approvals.on_waiting runs {}",
            on_waiting.command_line()
        ));
    }
    wider
        .into_iter()
        .map(|line| crate::util::text::for_terminal_line(&line).into_owned())
        .collect()
}

/// How much an approval setting lets run unasked: `deny`, then `ask`,
/// then the manifest's default (which may be `auto`), then `auto`.
fn looseness(setting: Option<ApprovalSetting>) -> u8 {
    match setting {
        Some(ApprovalSetting::Deny) => 0,
        Some(ApprovalSetting::Ask) => 1,
        None => 2,
        Some(ApprovalSetting::Auto) => 3,
    }
}

/// How surely `enabled` enables a tool: unset enables it unless its
/// manifest asks to be enabled on request.
fn enabledness(enabled: Option<bool>) -> u8 {
    match enabled {
        Some(false) => 0,
        None => 1,
        Some(true) => 2,
    }
}

/// How far `fs` may reach: unset gives what the manifest asks, which may
/// be anything up to writing.
fn fs_reach(fs: Option<FsAccess>) -> u8 {
    match fs {
        Some(FsAccess::None) => 0,
        Some(FsAccess::Read) => 1,
        None => 2,
        Some(FsAccess::Write) => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn parse(dir: &Path, text: &str) -> WorkspaceConfig {
        WorkspaceConfig::parse(&dir.join("toolcell.toml"), text).unwrap()
    }

    #[test]
    fn widening_is_told_and_narrowing_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        let old = parse(
            dir.path(),
            "[[roots]]\npath = \".\"\naccess = \"read\"\n[tools.write_file]\napproval = \"ask\"\n",
        );
        let same = parse(
            dir.path(),
            "[[roots]]\npath = \".\"\naccess = \"read\"\n[tools.write_file]\napproval = \"deny\"\n",
        );
        assert!(widening(&old, &same).is_empty());
        let wider = parse(
            dir.path(),
            "[[roots]]\npath = \".\"\naccess = \"write\"\n[[roots]]\npath = \"docs\"\n[tools.write_file]\napproval = \"auto\"\n[tools.run_command]\nprocess = [\"sh\"]\n",
        );
        let lines = widening(&old, &wider).join("\n");
        assert!(lines.contains("(write)"), "{lines}");
        assert!(lines.contains("docs"), "{lines}");
        assert!(
            lines.contains("tools.write_file.approval = \"auto\""),
            "{lines}"
        );
        assert!(
            lines.contains("tools.run_command.process adds sh"),
            "{lines}"
        );
        assert!(
            widening(&wider, &old).is_empty(),
            "narrowing applies at once"
        );
    }

    #[test]
    fn enabling_a_tool_or_giving_it_more_of_the_file_system_is_widening() {
        let dir = tempfile::tempdir().unwrap();
        let tool = |lines: &str| parse(dir.path(), &format!("[tools.run_python]\n{lines}"));
        let off = tool("enabled = false\nfs = \"read\"\n");
        let unset = tool("");
        let on = tool("enabled = true\n");
        let writes = tool("enabled = true\nfs = \"write\"\n");
        let lines = widening(&off, &unset).join("\n");
        assert!(lines.contains("tools.run_python enabled"), "{lines}");
        assert!(
            lines.contains("tools.run_python.fs = the tool's own"),
            "{lines}"
        );
        let lines = widening(&unset, &on).join("\n");
        assert!(lines.contains("tools.run_python enabled"), "{lines}");
        let lines = widening(&on, &writes).join("\n");
        assert!(lines.contains("tools.run_python.fs = \"write\""), "{lines}");
        assert!(widening(&writes, &off).is_empty());
    }

    #[test]
    fn a_rule_that_lets_more_run_unasked_is_widening_and_one_that_asks_more_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let rule = |tool: &str, path: &str, decision: &str| {
            format!("[[rule]]\ntool = \"{tool}\"\npath = \"{path}\"\ndecision = \"{decision}\"\n")
        };
        let deny = rule("*", "private/**", "deny");
        let auto = rule("write_file", "notes/**", "auto");
        let old = parse(dir.path(), &deny);
        let with_auto = parse(dir.path(), &format!("{deny}{auto}"));
        let lines = widening(&old, &with_auto).join("\n");
        assert!(lines.contains("rule at toolcell.toml:5 (auto)"), "{lines}");
        assert!(
            widening(&with_auto, &old).is_empty(),
            "taking an auto rule away narrows"
        );
        let lines = widening(&old, &parse(dir.path(), "")).join("\n");
        assert!(lines.contains("(deny) taken away"), "{lines}");
        let more_denied = parse(dir.path(), &format!("{deny}{}", rule("*", "x/**", "ask")));
        assert!(widening(&old, &more_denied).is_empty());
        // The same rules in another order: the first that matches decides.
        let ask = rule("write_file", "notes/**", "ask");
        let lines = widening(
            &parse(dir.path(), &format!("{ask}{deny}")),
            &parse(dir.path(), &format!("{deny}{ask}")),
        )
        .join("\n");
        assert!(lines.contains("another order"), "{lines}");
    }

    #[test]
    fn a_new_or_changed_notifier_is_widening_and_taking_it_away_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let notify = |program: &str| format!("[approvals]\non_waiting = [\"{program}\", \"hi\"]\n");
        let none = parse(dir.path(), "");
        let one = parse(dir.path(), &notify("notify-send"));
        let lines = widening(&none, &one).join("\n");
        assert!(
            lines.contains("approvals.on_waiting runs notify-send hi"),
            "{lines}"
        );
        let other = parse(dir.path(), &notify("./mine.sh"));
        assert!(!widening(&one, &other).is_empty(), "another program widens");
        assert!(widening(&one, &one).is_empty());
        assert!(widening(&one, &none).is_empty(), "telling nobody narrows");
    }
}
