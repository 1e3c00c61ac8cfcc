//! A `toolcell tools call` process starts its sandbox before it parses its
//! command line.
//!
//! The engine, the called built-in's component and its linker take about a
//! millisecond, and a thread started on this machine's second core can
//! take most of another to run at all (BENCHMARKS.md, issue 21). Started
//! first, both overlap clap's parsing and the loading of the config and
//! the tools, instead of only the latter.
//!
//! The command line is recognised here by its words alone, and only to
//! choose what to build ahead: clap still parses it, and the dispatcher
//! still checks that the component built ahead is the one the call needs.
//! A sandbox started for a command line that turns out to be something
//! else is never used (the process exits without waiting for it).

use crate::sandbox::{Sandbox, StartingSandbox};
use crate::tool::builtin::BUILTIN_TOOLS;
use std::ffi::OsString;

/// Flags that take the next word as their value: the global ones and those
/// of `tools call`. A value is skipped, not taken for a subcommand's name.
const FLAGS_WITH_VALUES: &[&str] = &["--config", "--profile", "--args", "--args-file"];

/// A sandbox started for a call of `tool`.
pub struct EarlySandbox {
    tool: String,
    starting: StartingSandbox,
}

impl EarlySandbox {
    /// Starts one if `args` (the process's, its name first) call a tool.
    pub fn start(args: impl Iterator<Item = OsString>) -> Option<Self> {
        let tool = called_tool(args)?;
        // Before the sandbox's thread starts: what it logs (a compile cache
        // entry found unusable and replaced) is not lost to a race. Only
        // here, so that `--version` and `--help` do not pay for it.
        super::init_logging();
        let builtin = BUILTIN_TOOLS
            .iter()
            .find(|builtin| builtin.crate_dir == tool);
        let starting = Sandbox::start(super::one_call_sandbox_options(), builtin)?;
        Some(Self { tool, starting })
    }

    /// The sandbox, if it was started for a call of `tool`.
    pub fn for_tool(self, tool: &str) -> Option<StartingSandbox> {
        (self.tool == tool).then_some(self.starting)
    }
}

/// The tool `args` call, if they read `tools call NAME` once flags and
/// their values are left out.
fn called_tool(args: impl Iterator<Item = OsString>) -> Option<String> {
    let mut args = args.skip(1);
    let mut words = Vec::with_capacity(3);
    while words.len() < 3 {
        // A word that is not UTF-8 is clap's to report.
        let arg = args.next()?.into_string().ok()?;
        if arg == "--" {
            return None;
        }
        if arg.starts_with('-') {
            if FLAGS_WITH_VALUES.contains(&arg.as_str()) {
                args.next();
            }
            continue;
        }
        words.push(arg);
    }
    let name = words.pop()?;
    (words == ["tools", "call"]).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn called(line: &str) -> Option<String> {
        called_tool(line.split(' ').map(OsString::from))
    }

    #[test]
    fn a_call_is_recognised_around_flags_and_their_values() {
        assert_eq!(
            called("toolcell tools call read_file"),
            Some("read_file".into())
        );
        assert_eq!(
            called(
                "toolcell --config tools tools --profile call call --json -y read_file --args {}"
            ),
            Some("read_file".into())
        );
        assert_eq!(
            called("toolcell tools call --args-file call.json search_files"),
            Some("search_files".into())
        );
        assert_eq!(called("toolcell tools list"), None);
        assert_eq!(called("toolcell tools show read_file"), None);
        assert_eq!(called("toolcell run tools call x"), None);
        assert_eq!(called("toolcell tools call"), None);
        assert_eq!(called("toolcell tools call -- read_file"), None);
    }
}
