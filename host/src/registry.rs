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

use crate::builtin::BUILTIN_TOOLS;
use crate::manifest::ToolManifest;
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

/// Where a tool's component bytes are.
#[derive(Debug, Clone)]
pub enum ComponentSource {
    Embedded(&'static [u8]),
    File(PathBuf),
}

impl ComponentSource {
    /// The component's bytes.
    pub fn read(&self) -> std::io::Result<std::borrow::Cow<'static, [u8]>> {
        match self {
            ComponentSource::Embedded(bytes) => Ok((*bytes).into()),
            ComponentSource::File(path) => std::fs::read(path).map(Into::into),
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

    /// The compiled argument schema.
    pub fn validator(&self) -> Result<&jsonschema::Validator, String> {
        if let Some(validator) = self.validator.get() {
            return Ok(validator);
        }
        // Parsing the manifest already checked that the schema compiles.
        let validator = jsonschema::validator_for(&self.manifest.parameters)
            .map_err(|e| format!("its parameters are not a usable JSON Schema: {e}"))?;
        Ok(self.validator.get_or_init(|| validator))
    }
}

/// A tool that could not be loaded, and why.
#[derive(Debug, Clone)]
pub struct ToolProblem {
    pub location: String,
    pub message: String,
}

impl fmt::Display for ToolProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
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
            match ToolManifest::parse(Path::new(&label), builtin.manifest) {
                Ok(manifest) => registry.insert(
                    manifest,
                    ToolSource::BuiltIn,
                    None,
                    Backend::Component(ComponentSource::Embedded(builtin.wasm)),
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
            match ToolManifest::load(&manifest_path) {
                Ok(manifest) => match crate::install::third_party_refusal(&manifest) {
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
                    message: e.to_string(),
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
