//! `[[rule]]`: approval rules on a call's arguments, checked at load (what
//! they decide is [`crate::policy::rules`]).
//!
//! ```toml
//! [[rule]]
//! name = "notes are free"     # optional: how records name it
//! tool = "write_file"         # a tool, or "*"
//! path = "notes/**"           # or ["notes/**", "docs/*.md"]
//! decision = "auto"           # auto | ask | deny
//! ```
//!
//! One condition at most: `path` (the built-in file tools), `command`
//! (`run_command`), `host` (`web_fetch`), or `pointer` with `matches` (any
//! tool); none matches every call of the tool.

use crate::policy::rules::{Condition, Pattern, Rule, RuleDecision, has_path_arguments};
use crate::util::names::{check_host_pattern, check_tool_name, is_function_name};
use crate::util::problem::{Problem, Table};
use serde::Deserialize;

/// One pattern, or a list of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    name: Option<String>,
    tool: String,
    decision: String,
    path: Option<OneOrMany>,
    command: Option<Vec<String>>,
    host: Option<OneOrMany>,
    pointer: Option<String>,
    matches: Option<OneOrMany>,
}

/// The longest a rule's name may be: it is shown in records and prompts.
const MAX_NAME_CHARS: usize = 80;

impl Rule {
    /// Checks one `[[rule]]` table; `place` is where records say it is
    /// (`toolcell.toml:12`).
    pub fn from_raw(raw: RawRule, at: &Table<'_>, place: String) -> Result<Self, Problem> {
        if let Some(name) = &raw.name
            && (name.trim().is_empty()
                || name.chars().count() > MAX_NAME_CHARS
                || name.chars().any(crate::util::text::is_hidden))
        {
            return Err(at.problem(
                Some("name"),
                format!("`{}` cannot name a rule", name.escape_debug()),
                format!("give a short name of visible characters (at most {MAX_NAME_CHARS}), or leave `name` out"),
            ));
        }
        // A tool of the workspace, or of an MCP server (`server__tool`).
        let tool_ok = raw.tool == "*"
            || check_tool_name(&raw.tool).is_ok()
            || (raw.tool.contains("__") && is_function_name(&raw.tool));
        if !tool_ok {
            return Err(at.problem(
                Some("tool"),
                format!("rule: `{}` is not a tool name", raw.tool.escape_debug()),
                "name one tool (`write_file`, `server__tool`), or \"*\" for every tool",
            ));
        }
        let Some(decision) = RuleDecision::from_word(&raw.decision) else {
            return Err(at.problem(
                Some("decision"),
                format!("rule: `{}` is not a decision", raw.decision.escape_debug()),
                format!("write one of {}", RuleDecision::WORDS.join(", ")),
            ));
        };
        let given: Vec<&str> = [
            raw.path.as_ref().map(|_| "path"),
            raw.command.as_ref().map(|_| "command"),
            raw.host.as_ref().map(|_| "host"),
            raw.pointer.as_ref().map(|_| "pointer"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if given.len() > 1 {
            return Err(at.problem(
                Some(given[1]),
                format!("rule: `{}` and `{}` are both given", given[0], given[1]),
                "give one condition a rule (write two rules for two conditions)",
            ));
        }
        if raw.matches.is_some() && raw.pointer.is_none() {
            return Err(at.problem(
                Some("matches"),
                "rule: `matches` without `pointer`",
                "add `pointer = \"/argument\"`: where in the arguments the patterns look",
            ));
        }
        let condition = if let Some(path) = raw.path {
            if raw.tool != "*" && !has_path_arguments(&raw.tool) {
                return Err(at.problem(
                    Some("path"),
                    format!("rule: `{}` has no path arguments toolcell knows", raw.tool),
                    "use `path` with the built-in file tools (or \"*\"); for another tool use `pointer` and `matches`",
                ));
            }
            Condition::Paths(patterns(path.into_vec(), at, "path")?)
        } else if let Some(command) = raw.command {
            if raw.tool != "run_command" {
                return Err(at.problem(
                    Some("command"),
                    "rule: `command` is for `run_command`",
                    "set `tool = \"run_command\"`, or use `pointer` and `matches` for another tool",
                ));
            }
            if command.is_empty() || command.iter().any(|part| part.is_empty()) {
                return Err(at.problem(
                    Some("command"),
                    "rule: `command` needs a program, then any arguments, none empty",
                    "write the program and the start of its arguments: [\"git\", \"status\"]",
                ));
            }
            Condition::Command(command)
        } else if let Some(host) = raw.host {
            if raw.tool != "web_fetch" {
                return Err(at.problem(
                    Some("host"),
                    "rule: `host` is for `web_fetch`",
                    "set `tool = \"web_fetch\"`, or use `pointer` and `matches` for another tool",
                ));
            }
            let hosts = host.into_vec();
            if hosts.is_empty() {
                return Err(at.problem(
                    Some("host"),
                    "rule: `host` is an empty list",
                    "give at least one host, or leave the key out",
                ));
            }
            if let Some((host, why)) = hosts
                .iter()
                .find_map(|h| check_host_pattern(h).err().map(|why| (h, why)))
            {
                return Err(at.problem(
                    Some("host"),
                    format!("rule: `{}`: {why}", host.escape_debug()),
                    "give host names such as \"docs.rs\" or \"*.python.org\"",
                ));
            }
            Condition::Hosts(hosts)
        } else if let Some(pointer) = raw.pointer {
            if !(pointer.is_empty() || pointer.starts_with('/')) {
                return Err(at.problem(
                    Some("pointer"),
                    format!("rule: `{}` is not a JSON pointer", pointer.escape_debug()),
                    "write it from the arguments' top: \"/url\", \"/options/target\"",
                ));
            }
            let Some(matches) = raw.matches else {
                return Err(at.problem(
                    Some("pointer"),
                    "rule: `pointer` without `matches`",
                    "add `matches = \"pattern\"`: what the string there must match",
                ));
            };
            Condition::Pointer {
                pointer,
                patterns: patterns(matches.into_vec(), at, "matches")?,
            }
        } else {
            Condition::Always
        };
        Ok(Rule {
            name: raw.name,
            place,
            tool: raw.tool,
            condition,
            decision,
        })
    }
}

/// Patterns checked: not empty, not absolute, no `..`.
fn patterns(texts: Vec<String>, at: &Table<'_>, key: &str) -> Result<Vec<Pattern>, Problem> {
    if texts.is_empty() {
        return Err(at.problem(
            Some(key),
            format!("rule: `{key}` is an empty list"),
            "give at least one pattern, or leave the key out",
        ));
    }
    for text in &texts {
        let why = if text.trim().is_empty() {
            Some("an empty pattern")
        } else if key == "path" && text.starts_with('/') {
            Some("paths are relative to the workspace, as tools write them")
        } else if text.split('/').any(|part| part == "..") {
            Some("a pattern cannot climb out with `..`")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(at.problem(
                Some(key),
                format!("rule: `{}`: {why}", text.escape_debug()),
                "write patterns such as \"notes/**\" or \"docs/*.md\" (`*` within a name, `**` any folders)",
            ));
        }
    }
    Ok(texts.iter().map(|text| Pattern::new(text)).collect())
}
