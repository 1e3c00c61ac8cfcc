//! Approval rules: `[[rule]]` entries in `toolcell.toml` that decide, from
//! a call's arguments, whether it runs without asking, is asked, or is
//! refused.
//!
//! ```toml
//! [[rule]]
//! name = "notes are free"
//! tool = "write_file"
//! path = "notes/**"            # every path argument must match
//! decision = "auto"            # auto | ask | deny
//!
//! [[rule]]
//! tool = "run_command"
//! command = ["git", "status"]  # the program and a prefix of its arguments
//! decision = "auto"
//!
//! [[rule]]
//! tool = "web_fetch"
//! host = ["docs.rs", "*.python.org"]
//! decision = "auto"
//!
//! [[rule]]
//! tool = "*"
//! pointer = "/query"           # any tool: a JSON pointer into the arguments
//! matches = "*password*"
//! decision = "deny"
//! ```
//!
//! How they decide:
//! - A `deny` rule that matches refuses the call, wherever it stands in the
//!   list; otherwise the first rule that matches decides.
//! - A rule decides only whether the call is asked. It never widens what
//!   the tool's grant lets its cell reach (its roots, hosts, programs), a
//!   tool whose config says `approval = "deny"` stays refused, and a change
//!   of toolcell's own policy (`toolcell.toml`, a scheduled workflow) is
//!   always asked of a person.
//! - A rule that loosens (`auto`) matches only when every path the call
//!   names matches, both as written (with `.` and `..` taken out) and where
//!   it really is (links followed), with names compared exactly. A rule
//!   that tightens (`ask`, `deny`) matches when any of them does, in either
//!   form, with ASCII case folded. So `notes/../src/x` and a link
//!   `notes/out -> ../src` are not under `notes/**` for an `auto` rule, and
//!   a `move_path` into a denied folder is refused.
//! - An `auto` rule needs the user's trust in the config, as
//!   `approval = "auto"` does (`config::trust`).

use crate::util::glob::{self, Case};
use serde_json::Value;

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleDecision {
    /// The call runs without asking.
    Auto,
    /// The call is asked, whatever the tool's approval.
    Ask,
    /// The call is refused.
    Deny,
}

impl RuleDecision {
    pub const WORDS: [&'static str; 3] = ["auto", "ask", "deny"];

    pub fn as_str(self) -> &'static str {
        match self {
            RuleDecision::Auto => "auto",
            RuleDecision::Ask => "ask",
            RuleDecision::Deny => "deny",
        }
    }

    pub fn from_word(word: &str) -> Option<Self> {
        [RuleDecision::Auto, RuleDecision::Ask, RuleDecision::Deny]
            .into_iter()
            .find(|d| d.as_str() == word)
    }

    /// How names are compared: exactly to loosen, case folded to tighten.
    fn case(self) -> Case {
        match self {
            RuleDecision::Auto => Case::Exact,
            RuleDecision::Ask | RuleDecision::Deny => Case::Folded,
        }
    }
}

/// A pattern as written, split into names once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub text: String,
    names: Vec<String>,
}

impl Pattern {
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_string(),
            names: glob::names(text),
        }
    }

    /// Whether it matches all of a value split at `/` ([`split`]).
    fn matches<S: AsRef<str>>(&self, parts: &[S], case: Case) -> bool {
        glob::matches_components(&self.names, parts, case)
    }
}

/// `value`'s names between slashes, empty ones dropped: split once a call,
/// for every pattern it meets.
fn split(value: &str) -> Vec<&str> {
    value.split('/').filter(|p| !p.is_empty()).collect()
}

/// What a rule looks at in a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// Every call of the tool.
    Always,
    /// The paths a file tool names (see [`path_arguments`]).
    Paths(Vec<Pattern>),
    /// `run_command`'s program and the first of its arguments.
    Command(Vec<String>),
    /// `web_fetch`'s host (`example.com`, `*.example.com`, `host:port`).
    Hosts(Vec<String>),
    /// Any tool: the string (or strings) at a JSON pointer.
    Pointer {
        pointer: String,
        patterns: Vec<Pattern>,
    },
}

/// One `[[rule]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub name: Option<String>,
    /// Where it is written: `toolcell.toml:12`.
    pub place: String,
    /// A tool name, or `*` for every tool.
    pub tool: String,
    pub condition: Condition,
    pub decision: RuleDecision,
}

impl Rule {
    /// How records and messages name it: `rule "notes are free"
    /// (toolcell.toml:3)`, or `rule at toolcell.toml:3`.
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!(
                "rule \"{}\" ({})",
                crate::util::text::for_terminal_line(name),
                self.place
            ),
            None => format!("rule at {}", self.place),
        }
    }

    /// What it asks for, the same however it is named or placed: tells
    /// whether a changed config changed this rule.
    pub fn meaning(&self) -> String {
        format!(
            "{} {} {:?}",
            self.tool,
            self.decision.as_str(),
            self.condition
        )
    }

    fn applies_to(&self, tool: &str) -> bool {
        self.tool == "*" || self.tool == tool
    }
}

/// The built-in file tools' path arguments, and the path each means when
/// it is left out.
const PATH_ARGUMENTS: &[(&str, &[&str], Option<&str>)] = &[
    ("read_file", &["path"], None),
    ("list_directory", &["path"], Some(".")),
    ("search_files", &["path"], Some(".")),
    ("write_file", &["path"], None),
    ("replace_in_file", &["path"], None),
    ("create_directory", &["path"], None),
    ("delete_path", &["path"], None),
    ("move_path", &["from", "to"], None),
];

/// Whether `tool` is a built-in file tool, whose paths a `path` rule sees.
pub fn has_path_arguments(tool: &str) -> bool {
    PATH_ARGUMENTS.iter().any(|(name, _, _)| *name == tool)
}

/// The paths a call of `tool` names, as written; `None` for a tool with
/// no path arguments, or a path argument that is not a string.
pub fn path_arguments<'a>(tool: &str, args: &'a Value) -> Option<Vec<&'a str>> {
    let (_, keys, default) = PATH_ARGUMENTS.iter().find(|(name, _, _)| *name == tool)?;
    keys.iter()
        .map(|key| match args.get(key) {
            Some(value) => value.as_str(),
            None => *default,
        })
        .collect()
}

/// `path` with `.` and `..` taken out, as the tools read it; `None` for an
/// absolute path or one that climbs out of its root.
pub fn lexical(path: &str) -> Option<String> {
    lexical_names(path).map(|names| names.join("/"))
}

/// [`lexical`]'s names.
fn lexical_names(path: &str) -> Option<Vec<&str>> {
    if path.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts)
}

/// The rules of a workspace, in the config's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    pub rules: Vec<Rule>,
}

impl Rules {
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule that decides a call of `tool` with `args`, if one does: a
    /// `deny` that matches, else the first rule that matches. `real` says
    /// where a workspace path (as [`lexical`] gives it) really is, links
    /// followed, in the same form; `None` if it leads out of the roots. It
    /// is asked at most once a path, and only when a rule needs it.
    pub fn decide(
        &self,
        tool: &str,
        args: &Value,
        real: &dyn Fn(&str) -> Option<String>,
    ) -> Option<&Rule> {
        // Most calls meet no rule for their tool: nothing is looked at.
        if !self.rules.iter().any(|r| r.applies_to(tool)) {
            return None;
        }
        let paths = CallPaths::of(tool, args, real);
        let mut first: Option<&Rule> = None;
        for rule in self.rules.iter().filter(|r| r.applies_to(tool)) {
            // Once a rule decides, only a deny can change the outcome.
            if first.is_some() && rule.decision != RuleDecision::Deny {
                continue;
            }
            if matches(rule, args, &paths) {
                if rule.decision == RuleDecision::Deny {
                    return Some(rule);
                }
                first = Some(rule);
            }
        }
        first
    }
}

/// What rules look at in one call, each taken from the arguments once,
/// when a rule first needs it: the paths it names, and its URL's host.
struct CallPaths<'a> {
    /// `None`: the tool has no path arguments, or one is not a string.
    paths: Option<Vec<PathForms<'a>>>,
    real: &'a dyn Fn(&str) -> Option<String>,
    /// `web_fetch`'s host, ASCII lowercase, and port.
    host: std::cell::OnceCell<Option<(String, u16)>>,
}

/// One path of a call, in the forms rules compare, split into names.
struct PathForms<'a> {
    /// As written.
    raw: Vec<&'a str>,
    /// Without `.` and `..`; `None` if absolute or climbing out.
    written: Option<Vec<&'a str>>,
    /// Where it really is, links followed; looked up when first needed.
    real: std::cell::OnceCell<Option<Vec<String>>>,
}

impl<'a> CallPaths<'a> {
    fn of(tool: &str, args: &'a Value, real: &'a dyn Fn(&str) -> Option<String>) -> Self {
        let paths = path_arguments(tool, args).map(|paths| {
            paths
                .into_iter()
                .map(|raw| PathForms {
                    raw: split(raw),
                    written: lexical_names(raw),
                    real: std::cell::OnceCell::new(),
                })
                .collect()
        });
        Self {
            paths,
            real,
            host: std::cell::OnceCell::new(),
        }
    }

    /// Where `path` really is.
    fn real_of<'p>(&self, path: &'p PathForms<'_>) -> Option<&'p [String]> {
        path.real
            .get_or_init(|| {
                let written = path.written.as_ref()?.join("/");
                let real = (self.real)(&written)?;
                Some(split(&real).into_iter().map(String::from).collect())
            })
            .as_deref()
    }

    /// The host and port of the call's `url`, if it has one.
    fn host(&self, args: &Value) -> Option<(&str, u16)> {
        self.host
            .get_or_init(|| {
                let url = reqwest::Url::parse(args.get("url")?.as_str()?).ok()?;
                let port = url.port_or_known_default()?;
                Some((url.host_str()?.to_ascii_lowercase(), port))
            })
            .as_ref()
            .map(|(host, port)| (host.as_str(), *port))
    }
}

/// Whether `rule`'s condition holds for a call with `args` (whose paths
/// are `paths`).
fn matches(rule: &Rule, args: &Value, paths: &CallPaths<'_>) -> bool {
    let case = rule.decision.case();
    let loosens = rule.decision == RuleDecision::Auto;
    match &rule.condition {
        Condition::Always => true,
        Condition::Paths(patterns) => {
            let Some(forms) = &paths.paths else {
                return false;
            };
            let any_pattern = |names: &[&str]| patterns.iter().any(|p| p.matches(names, case));
            let any_pattern_real =
                |names: &[String]| patterns.iter().any(|p| p.matches(names, case));
            if loosens {
                forms.iter().all(|path| {
                    path.written.as_deref().is_some_and(any_pattern)
                        && paths.real_of(path).is_some_and(any_pattern_real)
                })
            } else {
                // As written first: where it leads is looked up only when
                // that does not match already.
                forms.iter().any(|path| {
                    any_pattern(&path.raw)
                        || path
                            .written
                            .as_deref()
                            .is_some_and(|written| written != path.raw && any_pattern(written))
                        || paths.real_of(path).is_some_and(any_pattern_real)
                })
            }
        }
        Condition::Command(command) => {
            let Some(program) = args.get("program").and_then(Value::as_str) else {
                return false;
            };
            let given: Vec<&str> = match args.get("args") {
                None => Vec::new(),
                Some(Value::Array(items)) => match items.iter().map(Value::as_str).collect() {
                    Some(all) => all,
                    None => return false,
                },
                Some(_) => return false,
            };
            let (wanted, prefix) = command.split_first().map_or(("", &[][..]), |(p, r)| (p, r));
            // A path to the same name (`/usr/bin/git`) is caught by a
            // rule that tightens; to loosen, the program is named exactly.
            let same_program =
                program == wanted || (!loosens && program.rsplit('/').next() == Some(wanted));
            same_program
                && given.len() >= prefix.len()
                && given
                    .iter()
                    .zip(prefix)
                    .all(|(given, wanted)| given == wanted)
        }
        Condition::Hosts(patterns) => {
            let Some((host, port)) = paths.host(args) else {
                return false;
            };
            patterns
                .iter()
                .any(|pattern| host_matches(pattern, host, port))
        }
        Condition::Pointer { pointer, patterns } => {
            let values: Vec<Vec<&str>> = match args.pointer(pointer) {
                Some(Value::String(text)) => vec![split(text)],
                Some(Value::Array(items)) => {
                    items.iter().filter_map(Value::as_str).map(split).collect()
                }
                _ => Vec::new(),
            };
            let any_pattern = |value: &Vec<&str>| patterns.iter().any(|p| p.matches(value, case));
            if loosens {
                !values.is_empty() && values.iter().all(any_pattern)
            } else {
                values.iter().any(any_pattern)
            }
        }
    }
}

/// Whether `pattern` (`example.com`, `*.example.com`: its subdomains,
/// `host:port`) names `host` (ASCII lowercase) on `port`. Allocation-free:
/// it runs for each host rule a call meets.
fn host_matches(pattern: &str, host: &str, port: u16) -> bool {
    let (name, wanted_port) = match pattern.rsplit_once(':') {
        Some((name, p)) if p.bytes().all(|b| b.is_ascii_digit()) => (name, p.parse::<u16>().ok()),
        _ => (pattern, None),
    };
    let host_ok = match name.strip_prefix("*.") {
        // A subdomain: a name, a dot, then the domain.
        Some(domain) => {
            host.len() > domain.len() + 1
                && host.is_char_boundary(host.len() - domain.len() - 1)
                && {
                    let (sub, tail) = host.split_at(host.len() - domain.len() - 1);
                    !sub.is_empty()
                        && tail.as_bytes()[0] == b'.'
                        && tail[1..].eq_ignore_ascii_case(domain)
                }
        }
        None => host.eq_ignore_ascii_case(name),
    };
    host_ok && wanted_port.is_none_or(|p| p == port)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(tool: &str, condition: Condition, decision: RuleDecision) -> Rule {
        Rule {
            name: None,
            place: "toolcell.toml:1".into(),
            tool: tool.into(),
            condition,
            decision,
        }
    }

    fn paths(patterns: &[&str]) -> Condition {
        Condition::Paths(patterns.iter().map(|p| Pattern::new(p)).collect())
    }

    /// Where a path really is: `notes/out` is a link to `src`.
    fn real(path: &str) -> Option<String> {
        match path.strip_prefix("notes/out") {
            Some(rest) => Some(format!("src{rest}")),
            None => Some(path.to_string()),
        }
    }

    fn decided(rules: &Rules, tool: &str, args: Value) -> Option<RuleDecision> {
        rules.decide(tool, &args, &real).map(|r| r.decision)
    }

    #[test]
    fn a_loosening_path_rule_needs_every_path_inside_as_written_and_where_it_leads() {
        let rules = Rules {
            rules: vec![rule("*", paths(&["notes/**"]), RuleDecision::Auto)],
        };
        let auto = Some(RuleDecision::Auto);
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "notes/a.md"})),
            auto
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "./notes/x/../a.md"})),
            auto
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "notes/../src/a.rs"})),
            None
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "notes/out/a.rs"})),
            None
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "NOTES/a.md"})),
            None
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "../notes/a.md"})),
            None
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "/notes/a.md"})),
            None
        );
        assert_eq!(
            decided(
                &rules,
                "move_path",
                json!({"from": "notes/a", "to": "notes/b"})
            ),
            auto
        );
        assert_eq!(
            decided(
                &rules,
                "move_path",
                json!({"from": "notes/a", "to": "src/b"})
            ),
            None
        );
        // Tools without paths are not matched by a path rule.
        assert_eq!(
            decided(&rules, "web_fetch", json!({"url": "https://notes"})),
            None
        );
    }

    #[test]
    fn a_tightening_rule_catches_any_path_in_any_form_and_deny_beats_an_earlier_auto() {
        let rules = Rules {
            rules: vec![
                rule("*", paths(&["**"]), RuleDecision::Auto),
                rule("*", paths(&["src/**"]), RuleDecision::Deny),
            ],
        };
        let deny = Some(RuleDecision::Deny);
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "src/a.rs"})),
            deny
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "SRC/a.rs"})),
            deny
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "notes/out/a.rs"})),
            deny
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "notes/../src/a.rs"})),
            deny
        );
        assert_eq!(
            decided(
                &rules,
                "move_path",
                json!({"from": "docs/a", "to": "src/a"})
            ),
            deny
        );
        assert_eq!(
            decided(&rules, "write_file", json!({"path": "docs/a"})),
            Some(RuleDecision::Auto)
        );
    }

    #[test]
    fn a_command_rule_is_the_program_and_a_prefix_of_its_arguments() {
        let git = |args: &[&str]| Condition::Command(args.iter().map(|a| a.to_string()).collect());
        let rules = Rules {
            rules: vec![
                rule("run_command", git(&["git", "push"]), RuleDecision::Ask),
                rule("run_command", git(&["git", "status"]), RuleDecision::Auto),
                rule("run_command", git(&["rm"]), RuleDecision::Deny),
            ],
        };
        let call = |program: &str, args: &[&str]| json!({"program": program, "args": args});
        assert_eq!(
            decided(&rules, "run_command", call("git", &["status", "-s"])),
            Some(RuleDecision::Auto)
        );
        assert_eq!(decided(&rules, "run_command", call("git", &["stat"])), None);
        assert_eq!(
            decided(&rules, "run_command", call("/usr/bin/git", &["status"])),
            None
        );
        assert_eq!(
            decided(&rules, "run_command", call("/usr/bin/git", &["push"])),
            Some(RuleDecision::Ask)
        );
        assert_eq!(
            decided(&rules, "run_command", call("/bin/rm", &["-rf", "x"])),
            Some(RuleDecision::Deny)
        );
        assert_eq!(
            decided(&rules, "run_command", json!({"program": "git"})),
            None
        );
    }

    #[test]
    fn a_host_rule_reads_the_url_as_a_browser_would() {
        let rules = Rules {
            rules: vec![rule(
                "web_fetch",
                Condition::Hosts(vec!["docs.rs".into(), "*.python.org".into()]),
                RuleDecision::Auto,
            )],
        };
        let fetch = |url: &str| decided(&rules, "web_fetch", json!({"url": url}));
        assert_eq!(fetch("https://docs.rs/serde"), Some(RuleDecision::Auto));
        assert_eq!(fetch("https://DOCS.rs:443/x"), Some(RuleDecision::Auto));
        assert_eq!(
            fetch("https://docs.python.org/3/"),
            Some(RuleDecision::Auto)
        );
        assert_eq!(fetch("https://python.org/"), None);
        assert_eq!(fetch("https://docs.rs.evil.example/"), None);
        assert_eq!(fetch("https://docs.rs@evil.example/"), None);
        assert_eq!(fetch("not a url"), None);
        // A subdomain needs its own name and the dot before the domain.
        assert_eq!(fetch("https://evilpython.org/"), None);
        assert_eq!(fetch("https://.python.org/"), None);
        assert_eq!(
            fetch("https://A.Docs.Python.ORG/"),
            Some(RuleDecision::Auto)
        );
        // A port in the pattern must be the URL's, written or implied.
        let ported = Rules {
            rules: vec![rule(
                "web_fetch",
                Condition::Hosts(vec!["*.Example.com:8443".into()]),
                RuleDecision::Ask,
            )],
        };
        let fetch = |url: &str| decided(&ported, "web_fetch", json!({"url": url}));
        assert_eq!(
            fetch("https://api.example.com:8443/"),
            Some(RuleDecision::Ask)
        );
        assert_eq!(fetch("https://api.example.com/"), None);
    }

    #[test]
    fn a_pointer_rule_looks_at_strings_there() {
        let rules = Rules {
            rules: vec![rule(
                "*",
                Condition::Pointer {
                    pointer: "/tags".into(),
                    patterns: vec![Pattern::new("safe-*")],
                },
                RuleDecision::Auto,
            )],
        };
        assert_eq!(
            decided(&rules, "my_tool", json!({"tags": ["safe-a", "safe-b"]})),
            Some(RuleDecision::Auto)
        );
        assert_eq!(
            decided(&rules, "my_tool", json!({"tags": ["safe-a", "risky"]})),
            None
        );
        assert_eq!(decided(&rules, "my_tool", json!({"tags": []})), None);
        assert_eq!(decided(&rules, "my_tool", json!({"other": 1})), None);
    }
}
