//! `toolcell tools add` / `remove`: installing third-party tools.
//!
//! A tool is installed only after it has passed every check a call would
//! make (the manifest parses, its name is free, and the component compiles,
//! links against what toolcell provides and implements `toolcell:tool`) and
//! the user has confirmed what it asks of the machine ([`capabilities`]).
//! Tools fetched by URL come through [`crate::install::download`] first. Both files
//! are read as [`crate::registry::read_tool_file`] allows: regular files
//! only (a FIFO would hang, `/dev/zero` never ends) and capped in size.
//! The folder is assembled under a hidden temporary name and renamed into
//! place, so an interrupted install leaves nothing half-installed.

pub mod download;
pub mod scaffold;

use crate::registry::{
    COMPONENT_FILE, MANIFEST_FILE, MAX_COMPONENT_BYTES, Registry, ToolFileError, ToolSource,
    load_manifest, read_tool_file, third_party_refusal,
};
use crate::sandbox::Sandbox;
use crate::tool::manifest::ToolManifest;
use crate::util::names::is_function_name;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The manifest and component an install was asked for.
#[derive(Debug)]
pub struct ToolFiles {
    pub manifest: PathBuf,
    pub component: PathBuf,
}

impl ToolFiles {
    /// Resolves `paths`: one folder holding `tool.toml` and one `.wasm`, or
    /// the two files in any order.
    pub fn resolve(paths: &[PathBuf]) -> Result<Self> {
        match paths {
            [dir] if dir.is_dir() => {
                let manifest = dir.join(MANIFEST_FILE);
                // Any kind of file counts as there: reading it says what
                // is wrong with one that is not a regular file.
                if manifest.symlink_metadata().is_err() {
                    bail!(
                        "{} has no {MANIFEST_FILE}\n  fix: put the tool's manifest there, or name the files: `toolcell tools add tool.toml tool.wasm`",
                        dir.display()
                    );
                }
                let wasm: Vec<PathBuf> = std::fs::read_dir(dir)
                    .with_context(|| format!("cannot read {}", dir.display()))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
                    .collect();
                match wasm.as_slice() {
                    [one] => Ok(Self {
                        manifest,
                        component: one.clone(),
                    }),
                    [] => bail!(
                        "{} has no .wasm component\n  fix: build the tool (e.g. `cargo build --release --target wasm32-wasip2`) and copy the .wasm there",
                        dir.display()
                    ),
                    _ => bail!(
                        "{} has several .wasm files\n  fix: name the two files: `toolcell tools add tool.toml my_tool.wasm`",
                        dir.display()
                    ),
                }
            }
            [one] => bail!(
                "{} is not a folder\n  fix: give the tool's folder, or its tool.toml and .wasm together",
                one.display()
            ),
            [a, b] => {
                let is_toml = |p: &Path| p.extension().is_some_and(|x| x == "toml");
                let is_wasm = |p: &Path| p.extension().is_some_and(|x| x == "wasm");
                match (is_toml(a) && is_wasm(b), is_wasm(a) && is_toml(b)) {
                    (true, _) => Ok(Self {
                        manifest: a.clone(),
                        component: b.clone(),
                    }),
                    (_, true) => Ok(Self {
                        manifest: b.clone(),
                        component: a.clone(),
                    }),
                    _ => bail!(
                        "expected a tool.toml and a .wasm file, got {} and {}",
                        a.display(),
                        b.display()
                    ),
                }
            }
            _ => bail!("give the tool's folder, or its tool.toml and .wasm"),
        }
    }
}

/// What a tool asks of the machine, one line each, for the user to confirm.
pub fn capabilities(manifest: &ToolManifest) -> String {
    let caps = &manifest.capabilities;
    let list = |items: &[String]| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    let fs = match caps.fs {
        crate::tool::manifest::FsAccess::None => "none",
        crate::tool::manifest::FsAccess::Read => "read the workspace's roots",
        crate::tool::manifest::FsAccess::Write => "read and write the workspace's writable roots",
    };
    let offered = if manifest.opt_in {
        format!(
            "\n  offered:        only once your config enables it (`[tools.{}] enabled = true`)",
            manifest.name
        )
    } else {
        String::new()
    };
    format!(
        "`{}` {} asks for:\n  file system:    {fs}\n  network hosts:  {}\n  programs:       {}\n  environment:    {}\n  changes things: {}\n  approval:       {}{offered}",
        manifest.name,
        manifest.version,
        match caps.network.as_slice() {
            [any] if any == "*" => "any host you grant it".to_string(),
            hosts => list(hosts),
        },
        match caps.process.as_slice() {
            [any] if any == "*" => "any program you grant it (run with your rights)".to_string(),
            [] => "none".to_string(),
            programs => format!("{} (run with your rights)", list(programs)),
        },
        list(&caps.env),
        match (manifest.mutates, caps.fs) {
            (true, _) => "yes, it says so",
            (false, crate::tool::manifest::FsAccess::Write) =>
                "it says no, but it asks to write files",
            (false, _) => "no",
        },
        match manifest.approval {
            crate::tool::manifest::ManifestApproval::Auto =>
                "its calls run without asking (unless your config says ask)",
            crate::tool::manifest::ManifestApproval::Ask =>
                "each call asks first (unless your config says auto)",
            crate::tool::manifest::ManifestApproval::Always => "each call asks first, always",
        }
    )
}

/// Validates the tool in `files`, lets `confirm` see its manifest (an
/// error there installs nothing), and installs it into `tools_dir`.
pub fn add(
    sandbox: &Sandbox,
    registry: &Registry,
    files: &ToolFiles,
    tools_dir: &Path,
    replace: bool,
    confirm: &dyn Fn(&ToolManifest, Option<&ToolManifest>) -> Result<()>,
) -> Result<ToolManifest> {
    let (manifest, manifest_text) = load_manifest(&files.manifest)?;
    if let Some(why) = third_party_refusal(&manifest) {
        bail!("cannot install {}: {why}", files.manifest.display());
    }
    let target = tools_dir.join(&manifest.name);
    let existing = registry.get(&manifest.name);
    // `--replace` swaps a tool installed in the same place (an author's
    // rebuild); never a built-in one, nor one installed elsewhere.
    let replacing = replace && existing.is_some_and(|e| e.folder.as_deref() == Some(&target));
    if let Some(existing) = existing.filter(|_| !replacing) {
        let place = existing
            .folder
            .as_ref()
            .map(|f| format!(" at {}", f.display()))
            .unwrap_or_default();
        bail!(
            "invalid tool manifest {} at key `name`: a {} tool named `{}` already exists{place}\n  fix: {}",
            files.manifest.display(),
            existing.source,
            manifest.name,
            match (&existing.folder, replace) {
                (None, _) => {
                    "choose another name in the manifest (a built-in tool cannot be replaced)"
                        .to_string()
                }
                (Some(_), false) => format!(
                    "choose another name in the manifest, replace it with `toolcell tools add --replace …`, or remove it with `toolcell tools remove {}`",
                    manifest.name
                ),
                (Some(_), true) if existing.source == ToolSource::User => {
                    "it is installed for the user: run the same command with --user to replace it"
                        .to_string()
                }
                (Some(_), true) => {
                    "it is installed in the workspace: run the same command without --user to replace it"
                        .to_string()
                }
            }
        );
    }
    let wasm = read_tool_file(&files.component, "component", MAX_COMPONENT_BYTES).map_err(|e| {
        anyhow::anyhow!(
            "cannot install the tool: {e}\n  fix: {}",
            match e {
                ToolFileError::TooLarge { .. } => "check that this is the tool's component (`cargo build --release --target wasm32-wasip2` writes it under target/wasm32-wasip2/release/); a component this large is not a tool toolcell runs",
                _ => "give the tool's built .wasm file itself (copy it into the folder if your build writes it elsewhere)",
            }
        )
    })?;
    sandbox
        .prepare(&wasm)
        .with_context(|| format!("invalid tool component {}", files.component.display()))?;
    confirm(
        &manifest,
        existing.filter(|_| replacing).map(|e| &e.manifest),
    )?;

    std::fs::create_dir_all(tools_dir)
        .with_context(|| format!("cannot create {}", tools_dir.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{}-", manifest.name))
        .tempdir_in(tools_dir)?;
    // What was validated is what is installed, even if the files change
    // meanwhile.
    std::fs::write(staging.path().join(MANIFEST_FILE), manifest_text)?;
    std::fs::write(staging.path().join(COMPONENT_FILE), &wasm)?;
    if replacing {
        // One atomic exchange: the new folder takes the old one's place and
        // the old one lands in the staging folder, removed when `staging`
        // is dropped; at no moment is the tool missing.
        exchange(staging.path(), &target)
            .with_context(|| format!("cannot replace {}", target.display()))?;
        return Ok(manifest);
    }
    if target.exists() {
        bail!(
            "{} already exists\n  fix: remove it with `toolcell tools remove {}`",
            target.display(),
            manifest.name
        );
    }
    std::fs::rename(staging.keep(), &target)
        .with_context(|| format!("cannot install into {}", target.display()))?;
    Ok(manifest)
}

/// Swaps two folders atomically (`renameat2` with `RENAME_EXCHANGE`).
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both are valid NUL-terminated paths for the duration of the
    // call; AT_FDCWD resolves them as given.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Removes the installed tool `name` from `registry`'s user or workspace folder.
pub fn remove(registry: &Registry, name: &str) -> Result<PathBuf> {
    if is_function_name(name) {
        bail!(
            "`{name}` is named like a tool of an MCP server (`server__tool`); those are not installed, they come with their [[mcp_server]]\n  fix: disable it in toolcell.toml ([tools.\"{name}\"] enabled = false), or remove that [[mcp_server]]"
        );
    }
    let Some(entry) = registry.get(name) else {
        bail!(
            "there is no tool named `{name}`\n  fix: `toolcell tools list` shows the installed tools"
        );
    };
    let Some(folder) = &entry.folder else {
        bail!(
            "`{name}` is built in and cannot be removed\n  fix: disable it in toolcell.toml: [tools.{name}] enabled = false"
        );
    };
    debug_assert_ne!(entry.source, ToolSource::BuiltIn);
    std::fs::remove_dir_all(folder)
        .with_context(|| format!("cannot remove {}", folder.display()))?;
    Ok(folder.clone())
}
