//! What each built-in tool does, declared once: [`BUILTIN_EFFECTS`] names,
//! per tool, the kind of change it makes and the arguments that say where.
//! The approval preview, the policy check of the paths a call changes, the
//! check that they still hold what the prompt showed, and undo all read a
//! call's [`Change`] from here — none of them matches on tool names.

use crate::policy::Touch;
use serde_json::Value;

/// The kind of change a built-in tool makes, with the names of the
/// arguments that hold its paths and contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Writes the file at `path` whole, with `content`.
    WritesFile {
        path: &'static str,
        content: &'static str,
    },
    /// Replaces the one occurrence of `old` with `new` in the file at `path`.
    EditsFile {
        path: &'static str,
        old: &'static str,
        new: &'static str,
    },
    CreatesFolder {
        path: &'static str,
    },
    /// Moves `from` to `to`, never over something there.
    Moves {
        from: &'static str,
        to: &'static str,
    },
    /// Deletes `path` (into the trash), all of a folder when `recursive`.
    Deletes {
        path: &'static str,
        recursive: &'static str,
    },
    /// Runs `program` with `args` in the folder `cwd`.
    RunsProgram {
        program: &'static str,
        args: &'static str,
        cwd: &'static str,
    },
}

/// The built-in tools that change something, and how. A built-in tool not
/// named here changes no file (it reads, lists, searches or fetches).
pub const BUILTIN_EFFECTS: &[(&str, Effect)] = &[
    (
        "write_file",
        Effect::WritesFile {
            path: "path",
            content: "content",
        },
    ),
    (
        "replace_in_file",
        Effect::EditsFile {
            path: "path",
            old: "old_text",
            new: "new_text",
        },
    ),
    ("create_directory", Effect::CreatesFolder { path: "path" }),
    (
        "move_path",
        Effect::Moves {
            from: "from",
            to: "to",
        },
    ),
    (
        "delete_path",
        Effect::Deletes {
            path: "path",
            recursive: "recursive",
        },
    ),
    (
        "run_command",
        Effect::RunsProgram {
            program: "program",
            args: "args",
            cwd: "cwd",
        },
    ),
];

/// One call's change, with its arguments' values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change<'a> {
    WriteFile {
        path: &'a str,
        content: &'a str,
    },
    EditFile {
        path: &'a str,
        old: &'a str,
        new: &'a str,
    },
    CreateFolder {
        path: &'a str,
    },
    Move {
        from: &'a str,
        to: &'a str,
    },
    Delete {
        path: &'a str,
        recursive: bool,
    },
    Run {
        program: &'a str,
        args: Vec<&'a str>,
        /// `.` when not given.
        cwd: &'a str,
    },
}

/// The change a call of the built-in `tool` with `args` makes; `None` for
/// a tool that changes nothing, or arguments without what it needs (the
/// schema refuses those).
pub fn change<'a>(tool: &str, args: &'a Value) -> Option<Change<'a>> {
    let effect = BUILTIN_EFFECTS
        .iter()
        .find(|(name, _)| *name == tool)
        .map(|(_, effect)| *effect)?;
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    Some(match effect {
        Effect::WritesFile { path, content } => Change::WriteFile {
            path: text(path)?,
            content: text(content)?,
        },
        Effect::EditsFile { path, old, new } => Change::EditFile {
            path: text(path)?,
            old: text(old)?,
            new: text(new)?,
        },
        Effect::CreatesFolder { path } => Change::CreateFolder { path: text(path)? },
        Effect::Moves { from, to } => Change::Move {
            from: text(from)?,
            to: text(to)?,
        },
        Effect::Deletes { path, recursive } => Change::Delete {
            path: text(path)?,
            recursive: args.get(recursive).and_then(Value::as_bool) == Some(true),
        },
        Effect::RunsProgram {
            program,
            args: list,
            cwd,
        } => Change::Run {
            program: text(program)?,
            args: args
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect(),
            cwd: text(cwd).unwrap_or("."),
        },
    })
}

impl Change<'_> {
    /// The workspace paths the change touches, and how; empty for a program
    /// run (what it touches is its own business, confined by its grant).
    pub fn touched(&self) -> Vec<(String, Touch)> {
        match *self {
            Change::WriteFile { path, .. } | Change::EditFile { path, .. } => {
                vec![(path.to_string(), Touch::Replace)]
            }
            Change::CreateFolder { path } => vec![(path.to_string(), Touch::CreateFolder)],
            Change::Move { from, to } => vec![
                (from.to_string(), Touch::MoveAway),
                (to.to_string(), Touch::MoveInto),
            ],
            Change::Delete { path, .. } => vec![(path.to_string(), Touch::Remove)],
            Change::Run { .. } => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_change_is_read_from_the_declared_arguments() {
        let args = json!({"from": "a.md", "to": "b/a.md"});
        let moved = change("move_path", &args).unwrap();
        assert_eq!(
            moved,
            Change::Move {
                from: "a.md",
                to: "b/a.md"
            }
        );
        assert_eq!(
            moved.touched(),
            [
                ("a.md".to_string(), Touch::MoveAway),
                ("b/a.md".to_string(), Touch::MoveInto)
            ]
        );
        let args = json!({"program": "git", "args": ["status", 3]});
        assert_eq!(
            change("run_command", &args),
            Some(Change::Run {
                program: "git",
                args: vec!["status"],
                cwd: "."
            })
        );
        assert_eq!(change("read_file", &json!({"path": "a.md"})), None);
        assert_eq!(change("write_file", &json!({"path": "a.md"})), None);
    }

    #[test]
    fn the_declared_tools_are_the_built_in_ones_that_change_something() {
        let builtin: Vec<(String, bool)> = crate::tool::builtin::BUILTIN_TOOLS
            .iter()
            .map(|tool| {
                let file = std::path::Path::new(tool.crate_dir).join("tool.toml");
                let manifest = crate::tool::manifest::ToolManifest::parse(&file, tool.manifest)
                    .expect("a built-in manifest");
                (manifest.name, manifest.mutates)
            })
            .collect();
        let declared: Vec<&str> = BUILTIN_EFFECTS.iter().map(|(tool, _)| *tool).collect();
        for tool in &declared {
            assert!(
                builtin.iter().any(|(name, _)| name == tool),
                "`{tool}` is no built-in tool: {builtin:?}"
            );
        }
        // A built-in tool that changes something and is not declared would
        // be approved without a preview and never undone.
        for (name, mutates) in &builtin {
            assert_eq!(
                *mutates,
                declared.contains(&name.as_str()),
                "`{name}`: its manifest says mutates = {mutates}"
            );
        }
    }
}
