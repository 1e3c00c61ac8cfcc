//! Which tools exist: the built-in ones, those installed for the user and
//! those installed in the workspace.
//!
//! Each installed tool is a folder holding `tool.toml` and `tool.wasm`.
//! Tools of external MCP servers (`[[mcp_server]]`) are added after
//! those, as `server__tool`, when the servers have listed them.
//! Manifests are read at load (cheap); components are compiled only when a
//! tool is first called. A tool whose manifest is broken, or whose name
//! collides with one loaded earlier (built-in, then user, then workspace),
//! does not stop the others: it is reported as a [`ToolProblem`].

pub mod grant;

use crate::tool::builtin::BUILTIN_TOOLS;
use crate::tool::manifest::ToolManifest;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The manifest's file name inside a tool folder.
pub const MANIFEST_FILE: &str = "tool.toml";
/// The component's file name inside an installed tool folder.
pub const COMPONENT_FILE: &str = "tool.wasm";

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ToolSource {
    BuiltIn,
    User,
    Workspace,
    /// An external MCP server's: a program, not a cell.
    Mcp,
}

impl fmt::Display for ToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ToolSource::BuiltIn => "built-in",
            ToolSource::User => "user",
            ToolSource::Workspace => "workspace",
            ToolSource::Mcp => "mcp",
        })
    }
}

/// The largest component toolcell reads: the largest tools measured (a
/// Python one with its interpreter, 18.5 MB, BENCHMARKS.md) are well under
/// it, with room for libraries; past it a file is not a tool, and it is held
/// in memory whole while it compiles.
pub const MAX_COMPONENT_BYTES: u64 = 64 * 1024 * 1024;
/// The largest manifest toolcell reads: a `tool.toml` with its JSON Schema
/// is a few KB.
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Why one of a tool's files cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ToolFileError {
    // The cause is in the message, not a `source`: error chains print
    // every source after the message, which would say it twice.
    #[error("cannot read {}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A FIFO would hang the read and a device (`/dev/zero`) never ends.
    #[error("{}{via} is {kind}, not a regular file", path.display())]
    NotAFile {
        path: PathBuf,
        /// ` (a link to …)` when `path` is a symbolic link.
        via: String,
        kind: &'static str,
    },
    #[error("{} is larger than {} MiB, the most toolcell reads for a tool's {what}", path.display(), max >> 20)]
    TooLarge {
        path: PathBuf,
        what: &'static str,
        max: u64,
    },
}

/// Reads the tool file `path` (its `what`: "component", "manifest"): a
/// regular file once links are followed, of at most `max` bytes. The kind
/// is checked on the opened file (so it cannot be swapped for a FIFO after
/// the check), opened without blocking (so a FIFO does not hang the open),
/// and the read stops at `max` even if the file grows while it is read.
pub fn read_tool_file(path: &Path, what: &'static str, max: u64) -> Result<Vec<u8>, ToolFileError> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let io = |error| ToolFileError::Io {
        path: path.to_path_buf(),
        error,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    let kind = file.metadata().map_err(io)?.file_type();
    if !kind.is_file() {
        let via = match std::fs::read_link(path) {
            Ok(_) => match std::fs::canonicalize(path) {
                Ok(target) => format!(" (a link to {})", target.display()),
                Err(_) => " (a link)".to_string(),
            },
            Err(_) => String::new(),
        };
        let kind = if kind.is_dir() {
            "a folder"
        } else if kind.is_fifo() {
            "a FIFO (named pipe)"
        } else if kind.is_char_device() {
            "a character device"
        } else if kind.is_block_device() {
            "a block device"
        } else if kind.is_socket() {
            "a socket"
        } else {
            "of an unknown kind"
        };
        return Err(ToolFileError::NotAFile {
            path: path.to_path_buf(),
            via,
            kind,
        });
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(ToolFileError::TooLarge {
            path: path.to_path_buf(),
            what,
            max,
        });
    }
    Ok(bytes)
}

/// Reads and validates the manifest at `path`, read as [`read_tool_file`]
/// allows (a FIFO or a device named `tool.toml` must not hang or fill
/// memory); returns it with its text.
pub fn load_manifest(path: &Path) -> anyhow::Result<(ToolManifest, String)> {
    let bytes = read_tool_file(path, "manifest", MAX_MANIFEST_BYTES).map_err(|e| {
        anyhow::anyhow!(
            "invalid tool manifest: {e}\n  fix: a tool's manifest is its tool.toml, a small text file: give that file itself"
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        anyhow::anyhow!(
            "invalid tool manifest {}: it is not UTF-8 text\n  fix: save it as UTF-8",
            path.display()
        )
    })?;
    Ok((ToolManifest::parse(path, &text)?, text))
}

/// Where a tool's component bytes are.
#[derive(Debug, Clone)]
pub enum ComponentSource {
    /// A built-in tool's, with its SHA-256 made when it was built.
    Embedded {
        wasm: &'static [u8],
        sha256: &'static str,
    },
    /// An installed tool's `tool.wasm`.
    File(PathBuf),
}

/// Why an installed tool's component cannot be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0}\n  fix: reinstall the tool from its built .wasm (`toolcell tools add --replace FOLDER`), or remove it (`toolcell tools remove NAME`)"
)]
pub struct ComponentReadError(pub ToolFileError);

impl ComponentSource {
    /// The component's bytes: an installed one read as [`read_tool_file`]
    /// allows, at most [`MAX_COMPONENT_BYTES`].
    pub fn read(&self) -> Result<std::borrow::Cow<'static, [u8]>, ComponentReadError> {
        match self {
            ComponentSource::Embedded { wasm, .. } => Ok((*wasm).into()),
            ComponentSource::File(path) => read_tool_file(path, "component", MAX_COMPONENT_BYTES)
                .map(Into::into)
                .map_err(ComponentReadError),
        }
    }

    /// The SHA-256 of the component in hexadecimal, where it is known
    /// without reading it (a built-in tool's).
    pub fn known_sha256(&self) -> Option<&'static str> {
        match self {
            ComponentSource::Embedded { sha256, .. } => Some(sha256),
            ComponentSource::File(_) => None,
        }
    }
}

/// A tool of an external MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpTool {
    /// The server's name in the config.
    pub server: String,
    /// The tool's own name on the server.
    pub tool: String,
}

/// What runs a tool's calls.
#[derive(Debug, Clone)]
pub enum Backend {
    /// A component, in a fresh cell per call.
    Component(ComponentSource),
    /// An external MCP server.
    Mcp(McpTool),
}

/// A known tool.
#[derive(Debug)]
pub struct ToolEntry {
    pub manifest: ToolManifest,
    pub source: ToolSource,
    /// The folder it was loaded from (`None` for built-ins and MCP tools).
    pub folder: Option<PathBuf>,
    pub backend: Backend,
    /// The compiled argument schema, built on the tool's first call: listing
    /// tools needs none.
    validator: OnceLock<jsonschema::Validator>,
}

impl ToolEntry {
    /// Where it comes from, for listings: `workspace`, `mcp:fs`.
    pub fn origin(&self) -> String {
        match &self.backend {
            Backend::Mcp(tool) => format!("mcp:{}", tool.server),
            Backend::Component(_) => self.source.to_string(),
        }
    }

    /// Its component, unless it is an external tool.
    pub fn component(&self) -> Option<&ComponentSource> {
        match &self.backend {
            Backend::Component(component) => Some(component),
            Backend::Mcp(_) => None,
        }
    }

    /// Whether its argument schema is compiled already.
    pub fn has_validator(&self) -> bool {
        self.validator.get().is_some()
    }

    /// The compiled argument schema.
    pub fn validator(&self) -> Result<&jsonschema::Validator, String> {
        if let Some(validator) = self.validator.get() {
            return Ok(validator);
        }
        // Parsing the manifest already checked that the schema compiles.
        let validator = match self.source {
            // Built under draft 7, which means the same for every keyword
            // they use (`builtin_schemas_mean_the_same_under_draft_7`): a
            // tool's first schema, which sets up the checks every schema
            // shares, takes about 0.25 ms under it, a little less than
            // under 2020-12 (the meta-schemas' validators are compiled into
            // the binary: jsonschema's `macros`; built at run time they took
            // 0.9 and 2.3 ms, BENCHMARKS.md).
            ToolSource::BuiltIn => jsonschema::options()
                .with_draft(BUILTIN_SCHEMA_DRAFT)
                .build(&self.manifest.parameters),
            _ => jsonschema::validator_for(&self.manifest.parameters),
        }
        .map_err(|e| format!("its parameters are not a usable JSON Schema: {e}"))?;
        Ok(self.validator.get_or_init(|| validator))
    }
}

/// The JSON Schema draft built-in tools' argument schemas are compiled
/// under (see [`ToolEntry::validator`]).
const BUILTIN_SCHEMA_DRAFT: jsonschema::Draft = jsonschema::Draft::Draft7;

/// A tool that could not be loaded, and why.
#[derive(Debug, Clone)]
pub struct ToolProblem {
    pub location: String,
    pub message: String,
}

impl fmt::Display for ToolProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The location is a folder or file name from the disk: on its line.
        write!(
            f,
            "{}: {}",
            crate::util::text::for_terminal_line(&self.location),
            self.message
        )
    }
}

/// How much of a name from outside (an MCP server's tool) a problem shows:
/// enough to recognise it, and a 10 KB name does not fill the terminal.
pub const SHOWN_NAME_CHARS: usize = 80;

/// `name` as a problem or error shows it: a single-line field from outside
/// ([`crate::util::text::for_terminal_line`]: line breaks and hidden characters
/// shown as escapes), in backticks, cut on a character boundary to
/// [`SHOWN_NAME_CHARS`] with its full length said.
pub fn shown_name(name: &str) -> String {
    let visible = crate::util::text::for_terminal_line(name);
    let shown = crate::util::text::shorten(&visible, SHOWN_NAME_CHARS);
    if visible.chars().count() > SHOWN_NAME_CHARS {
        format!(
            "`{shown}` ({} characters, {} bytes)",
            name.chars().count(),
            name.len()
        )
    } else {
        format!("`{shown}`")
    }
}

/// All tools known in one workspace.
#[derive(Debug, Default)]
pub struct Registry {
    tools: BTreeMap<String, ToolEntry>,
    problems: Vec<ToolProblem>,
}

impl Registry {
    /// Loads the built-in tools, then the user's (`user_dir`), then the
    /// workspace's (`workspace_dir`).
    pub fn load(user_dir: Option<&Path>, workspace_dir: &Path) -> Self {
        let mut registry = Registry::default();
        for builtin in BUILTIN_TOOLS {
            let label = format!(
                "built-in tool tools-wasm/{}/{MANIFEST_FILE}",
                builtin.crate_dir
            );
            match ToolManifest::parse_builtin(Path::new(&label), builtin.manifest_fields) {
                Ok(manifest) => registry.insert(
                    manifest,
                    ToolSource::BuiltIn,
                    None,
                    Backend::Component(ComponentSource::Embedded {
                        wasm: builtin.wasm,
                        sha256: builtin.wasm_sha256,
                    }),
                ),
                Err(e) => registry.problems.push(ToolProblem {
                    location: label,
                    message: e.to_string(),
                }),
            }
        }
        if let Some(dir) = user_dir {
            registry.load_folder(dir, ToolSource::User);
        }
        registry.load_folder(workspace_dir, ToolSource::Workspace);
        registry
    }

    fn load_folder(&mut self, dir: &Path, source: ToolSource) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        folders.sort();
        for folder in folders {
            if folder
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                continue; // an install in progress
            }
            let manifest_path = folder.join(MANIFEST_FILE);
            match load_manifest(&manifest_path) {
                Ok((manifest, _)) => match third_party_refusal(&manifest) {
                    Some(why) => self.problems.push(ToolProblem {
                        location: format!("{source} tool {}", folder.display()),
                        message: why,
                    }),
                    None => {
                        let component = ComponentSource::File(folder.join(COMPONENT_FILE));
                        self.insert(
                            manifest,
                            source,
                            Some(folder),
                            Backend::Component(component),
                        );
                    }
                },
                Err(e) => self.problems.push(ToolProblem {
                    location: format!("{source} tool {}", folder.display()),
                    message: format!("{e:#}"),
                }),
            }
        }
    }

    fn insert(
        &mut self,
        manifest: ToolManifest,
        source: ToolSource,
        folder: Option<PathBuf>,
        backend: Backend,
    ) {
        let location = match (&folder, &backend) {
            (Some(f), _) => format!("{source} tool {}", f.display()),
            (None, Backend::Mcp(tool)) => format!("MCP server `{}`", tool.server),
            (None, Backend::Component(_)) => format!("built-in tool `{}`", manifest.name),
        };
        if let Some(existing) = self.tools.get(&manifest.name) {
            self.problems.push(ToolProblem {
                location,
                message: format!(
                    "its name `{}` is already taken by the {} tool of that name; it is ignored\n  fix: rename it in its tool.toml, or remove it with `toolcell tools remove {}`",
                    manifest.name, existing.source, manifest.name
                ),
            });
            return;
        }
        self.tools.insert(
            manifest.name.clone(),
            ToolEntry {
                manifest,
                source,
                folder,
                backend,
                validator: OnceLock::new(),
            },
        );
    }

    /// Adds a tool of an external MCP server, described by `manifest`.
    pub fn insert_mcp(&mut self, manifest: ToolManifest, tool: McpTool) {
        self.insert(manifest, ToolSource::Mcp, None, Backend::Mcp(tool));
    }

    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.get(name)
    }

    /// All tools, by name.
    pub fn tools(&self) -> impl Iterator<Item = &ToolEntry> {
        self.tools.values()
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// Tools that could not be loaded.
    pub fn problems(&self) -> &[ToolProblem] {
        &self.problems
    }
}

/// Why a tool that is not built in cannot be used, if it cannot: asking to
/// run programs. Every program run is approved with its exact command line,
/// which the host can show before the call only for `run_command`, whose
/// arguments are the command; a tool that runs programs from inside its
/// own code would need an approval in the middle of its call.
pub fn third_party_refusal(manifest: &ToolManifest) -> Option<String> {
    (!manifest.capabilities.process.is_empty()).then(|| {
        format!(
            "`{}` asks to run programs (capabilities.process), which only the built-in `run_command` may do: toolcell approves every program run with its exact command line, and it can show that only for run_command\n  fix: remove capabilities.process; a model can run the programs through run_command once the user grants them ([tools.run_command] process = [...])",
            manifest.name
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start-up reads built-in manifests from the JSON made at build,
    /// with no check ([`ToolManifest::parse_builtin`]); this holds each
    /// `tool.toml` to every check and the two to the same manifest.
    #[test]
    fn every_builtin_manifest_passes_every_check() {
        assert!(!BUILTIN_TOOLS.is_empty());
        for builtin in BUILTIN_TOOLS {
            let file = Path::new(builtin.crate_dir).join(MANIFEST_FILE);
            let full = ToolManifest::parse(&file, builtin.manifest)
                .unwrap_or_else(|e| panic!("{}: {e}", builtin.crate_dir));
            let quick = ToolManifest::parse_builtin(&file, builtin.manifest_fields).unwrap();
            // Every field, the schema's keys in their order too.
            assert_eq!(format!("{full:?}"), format!("{quick:?}"));
            assert_eq!(full.parameters.to_string(), quick.parameters.to_string());
            assert_eq!(full.name, builtin.crate_dir);
        }
    }

    /// Keywords that mean the same under draft 7 and 2020-12: all a built-in
    /// tool's argument schema may use.
    const BUILTIN_SCHEMA_KEYWORDS: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "description",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "items",
        "default",
        "examples",
    ];

    /// Built-in schemas are compiled under draft 7 ([`BUILTIN_SCHEMA_DRAFT`]):
    /// each may use only keywords that mean the same there as in 2020-12
    /// (`items` as one schema, not draft 7's list form), and no `$schema`.
    #[test]
    fn builtin_schemas_mean_the_same_under_draft_7() {
        fn check(tool: &str, schema: &serde_json::Value) {
            let Some(object) = schema.as_object() else {
                panic!("{tool}: a schema that is not an object: {schema}");
            };
            for (keyword, value) in object {
                assert!(
                    BUILTIN_SCHEMA_KEYWORDS.contains(&keyword.as_str()),
                    "{tool}: `{keyword}` may differ between draft 7 and 2020-12"
                );
                match keyword.as_str() {
                    "properties" => value
                        .as_object()
                        .unwrap()
                        .values()
                        .for_each(|inner| check(tool, inner)),
                    "items" => check(tool, value),
                    "additionalProperties" if value.is_object() => check(tool, value),
                    _ => {}
                }
            }
        }
        for builtin in BUILTIN_TOOLS {
            let file = Path::new(builtin.crate_dir).join(MANIFEST_FILE);
            let manifest = ToolManifest::parse(&file, builtin.manifest).unwrap();
            check(builtin.crate_dir, &manifest.parameters);
            // And it compiles there as it does under 2020-12.
            jsonschema::options()
                .with_draft(BUILTIN_SCHEMA_DRAFT)
                .build(&manifest.parameters)
                .unwrap_or_else(|e| panic!("{}: {e}", builtin.crate_dir));
        }
    }

    #[test]
    fn shown_names_are_one_line_and_cut_on_a_character_with_their_length() {
        assert_eq!(shown_name("read_file"), "`read_file`");
        assert_eq!(shown_name("a\nb\u{202e}"), "`a\\nb\\u{202e}`");
        let cjk = "名".repeat(100);
        assert_eq!(
            shown_name(&cjk),
            format!(
                "`{}…` (100 characters, 300 bytes)",
                "名".repeat(SHOWN_NAME_CHARS)
            )
        );
    }

    #[test]
    fn tool_files_must_be_regular_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.wasm");
        std::fs::write(&small, b"0123456789").unwrap();
        assert_eq!(read_tool_file(&small, "component", 10).unwrap().len(), 10);
        assert!(matches!(
            read_tool_file(&small, "component", 9),
            Err(ToolFileError::TooLarge { max: 9, .. })
        ));
        let zero = dir.path().join("zero.wasm");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_tool_file(&zero, "component", 10)
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with(
                "zero.wasm (a link to /dev/zero) is a character device, not a regular file"
            ),
            "{err}"
        );
        let err = read_tool_file(dir.path(), "component", 10)
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("is a folder, not a regular file"), "{err}");
    }
}
