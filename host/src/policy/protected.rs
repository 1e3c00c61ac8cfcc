//! toolcell's own policy, as files: the config (`toolcell.toml`, wherever
//! one lies in a root: a nested one is found when toolcell runs there), the
//! state folder (`.toolcell/`: installed tools, the run store, the trash),
//! and the workflows schedules run (with the modules beside them they may
//! import). A tool never changes them unless a person approved that very
//! call at a terminal; the trash is the one part of `.toolcell/` a tool may
//! add to (that is how `delete_path` deletes).

use crate::util::locations::{CONFIG_FILE, STATE_DIR};
use std::path::{Component, Path, PathBuf};

/// Where deleted paths go, inside the root they were deleted from.
const TRASH: &str = "trash";
/// The extension of workflow scripts and their modules.
const WORKFLOW_EXTENSION: &str = "rhai";

/// What part of the policy a path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyFile {
    /// A `toolcell.toml`.
    Config,
    /// Inside a `.toolcell/` folder; `trash` when inside its trash.
    State { trash: bool },
    /// A workflow a schedule runs, or a module beside it.
    Workflow { schedule: String },
    /// A program (or the script it runs) that toolcell starts on the
    /// user's behalf: an `[[mcp_server]]`, `[approvals] on_waiting`.
    /// `runner` names who starts it, as in "the MCP server `fs`".
    Program { runner: String },
    /// Inside toolcell's data or cache folder (user tools, the configs the
    /// user trusted, compiled components).
    UserData,
    /// A folder holding another workspace's policy: a `toolcell.toml` or
    /// `.toolcell/` somewhere inside it (`found`, from the folder; `None`
    /// when the folder was too large to look through, so it is taken to
    /// hold one).
    Holds { found: Option<PathBuf> },
}

impl PolicyFile {
    /// What it is, for messages.
    pub fn describe(&self) -> String {
        match self {
            PolicyFile::Config => {
                "toolcell's config (its policy: roots, grants, approvals, programs)".into()
            }
            PolicyFile::State { .. } => {
                "inside toolcell's state folder (installed tools, run history, trash)".into()
            }
            PolicyFile::Workflow { schedule } => {
                format!("a workflow the schedule `{schedule}` runs unattended")
            }
            PolicyFile::Program { runner } => format!(
                "a program {runner} runs, with your rights"
            ),
            PolicyFile::UserData => {
                "inside toolcell's data or cache folder (your tools, what you trusted, compiled code)".into()
            }
            PolicyFile::Holds { found: Some(found) } => format!(
                "a folder holding another workspace's policy (its {}): moving or deleting the folder moves or deletes that",
                found.display()
            ),
            PolicyFile::Holds { found: None } => format!(
                "a folder of more than {} entries, too many to look through for a workspace's toolcell.toml or .toolcell/ inside it",
                super::nested::MAX_HOLDS_SCAN
            ),
        }
    }

    /// No approval lets a tool change it: toolcell's own state and data.
    pub fn never_changed_by_tools(&self) -> bool {
        matches!(self, PolicyFile::State { .. } | PolicyFile::UserData)
    }
}

/// The policy files of one workspace, as canonical host paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyFiles {
    /// The config in use (it may lie outside every root).
    config: Option<PathBuf>,
    /// The workspace's state folder.
    state: PathBuf,
    /// Where a config would be found if the workspace had none.
    default_config: PathBuf,
    /// Scheduled workflows: the file, its folder, the schedule's name.
    workflows: Vec<(PathBuf, PathBuf, String)>,
    /// The scheduled workflows as the config names them (the daemon runs
    /// that path, wherever its links lead then).
    workflow_paths: Vec<PathBuf>,
    /// Program files toolcell starts, and who starts each (see
    /// [`PolicyFile::Program`]).
    programs: Vec<(PathBuf, String)>,
    /// toolcell's data and cache folders.
    private: Vec<PathBuf>,
}

impl PolicyFiles {
    /// The policy files of a workspace: its config file, its state folder
    /// and the workflows of its schedules (by name).
    pub fn new<'a>(
        config: Option<&Path>,
        workspace: &Path,
        scheduled: impl IntoIterator<Item = (&'a Path, &'a str)>,
    ) -> Self {
        let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let scheduled: Vec<(&Path, &str)> = scheduled.into_iter().collect();
        Self {
            workflow_paths: scheduled
                .iter()
                .map(|(file, _)| file.to_path_buf())
                .collect(),
            config: config.map(canonical),
            state: workspace.join(STATE_DIR),
            default_config: workspace.join(CONFIG_FILE),
            workflows: scheduled
                .iter()
                .map(|(file, name)| {
                    let file = canonical(file);
                    let folder = file.parent().unwrap_or(Path::new("/")).to_path_buf();
                    (file, folder, name.to_string())
                })
                .collect(),
            programs: Vec::new(),
            private: Vec::new(),
        }
    }

    /// What a contained program must not change even where it may write:
    /// the config, the state folder, the scheduled workflows and the `.rhai`
    /// modules beside them, the MCP servers' program files, toolcell's data
    /// and cache folders — those that exist now. (A new file, such as a
    /// module added beside a workflow, is found after the call instead.)
    pub fn held_read_only(&self) -> Vec<PathBuf> {
        // The state folder is made if missing, so that it is kept too (a
        // program could otherwise make it, or a link in its place, first).
        if self.state.parent().is_some_and(Path::is_dir) {
            let _ = std::fs::create_dir(&self.state);
        }
        let mut paths: Vec<PathBuf> = self
            .config
            .iter()
            .chain([&self.state])
            .chain(self.workflows.iter().map(|(file, _, _)| file))
            // A program named through a link is kept as where it leads
            // (listed too); the link itself is watched after each call.
            .chain(
                self.programs
                    .iter()
                    .map(|(file, _)| file)
                    .filter(|file| !file.is_symlink()),
            )
            .chain(&self.private)
            // Configs of other names the user trusted (`--config ci.toml`).
            .chain(trusted_configs())
            .cloned()
            .collect();
        for (_, folder, _) in &self.workflows {
            paths.extend(workflow_files(folder));
        }
        paths.sort();
        paths.dedup();
        paths.retain(|path| path.exists() || path.is_symlink());
        paths
    }

    /// The files that run on the config's word: the scheduled workflows
    /// with the `.rhai` modules beside them, and the program files it
    /// starts (as named and where they lead), sorted. What trusting a
    /// config covers besides its text (see `WorkspaceConfig::trust_fingerprint`).
    pub fn run_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self
            .workflows
            .iter()
            .map(|(file, _, _)| file.clone())
            .chain(self.workflow_paths.iter().cloned())
            .chain(self.programs.iter().map(|(file, _)| file.clone()))
            .collect();
        for (_, folder, _) in &self.workflows {
            files.extend(workflow_files(folder));
        }
        files.sort();
        files.dedup();
        files
    }

    /// The schedules whose workflow sits in a folder too crowded to keep
    /// (more files and folders than [`MAX_MODULES`]): its modules cannot
    /// all be watched, nor covered by trust.
    pub fn crowded_workflows(&self) -> Vec<String> {
        self.workflows
            .iter()
            .filter(|(_, folder, _)| !workflow_files_all(folder).1)
            .map(|(_, _, schedule)| schedule.clone())
            .collect()
    }

    /// Adds program files toolcell starts: `(file, runner)`, the runner
    /// named as in "the MCP server `fs`".
    pub fn with_programs(mut self, programs: impl IntoIterator<Item = (PathBuf, String)>) -> Self {
        // Both the path as named and where it leads: a link in the
        // workspace (`.venv/bin/python`) could be replaced as well as
        // what it points to.
        for (file, runner) in programs {
            if let Ok(real) = file.canonicalize()
                && real != file
            {
                self.programs.push((real, runner.clone()));
            }
            self.programs.push((file, runner));
        }
        self
    }

    /// Adds toolcell's own folders outside the workspace (data, cache).
    pub fn with_private(mut self, folders: impl IntoIterator<Item = PathBuf>) -> Self {
        self.private
            .extend(folders.into_iter().map(|f| f.canonicalize().unwrap_or(f)));
        self
    }

    /// What part of the policy `path` is for a call that `touch`es it: the
    /// file itself, and for a move or removal also what it holds, and the
    /// folders of scheduled workflows' modules (moving one in or out
    /// replaces modules as surely as writing them).
    pub fn judge(&self, path: &Path, touch: crate::policy::Touch) -> Option<PolicyFile> {
        use crate::policy::Touch;
        let moves = matches!(touch, Touch::MoveAway | Touch::MoveInto | Touch::Remove);
        let found = match touch.takes_contents() {
            true => self.within(path),
            false => self.classify(path),
        };
        found.or_else(|| moves.then(|| self.module_folder(path)).flatten())
    }

    /// A folder (or file without extension) under a scheduled workflow's
    /// folder: it may hold the workflow's modules.
    fn module_folder(&self, path: &Path) -> Option<PolicyFile> {
        self.workflows.iter().find_map(|(_, folder, schedule)| {
            let module = path != folder.as_path()
                && path.starts_with(folder)
                && path.extension().is_none_or(|e| e == WORKFLOW_EXTENSION);
            module.then(|| PolicyFile::Workflow {
                schedule: schedule.clone(),
            })
        })
    }

    /// What part of the policy the file or folder at `path` (absolute, its
    /// folders resolved) is, if any.
    pub fn classify(&self, path: &Path) -> Option<PolicyFile> {
        if self.private.iter().any(|p| path.starts_with(p)) {
            return Some(PolicyFile::UserData);
        }
        if let Some((_, runner)) = self.programs.iter().find(|(file, _)| file == path) {
            return Some(PolicyFile::Program {
                runner: runner.clone(),
            });
        }
        if path.file_name().is_some_and(|n| n == CONFIG_FILE)
            || self.config.as_deref() == Some(path)
            || is_trusted_config(path)
        {
            return Some(PolicyFile::Config);
        }
        let mut components = path.components().peekable();
        while let Some(component) = components.next() {
            if component == Component::Normal(STATE_DIR.as_ref()) {
                let trash = components
                    .peek()
                    .is_some_and(|c| *c == Component::Normal(TRASH.as_ref()));
                return Some(PolicyFile::State { trash });
            }
        }
        self.workflows.iter().find_map(|(file, folder, schedule)| {
            let module = path.starts_with(folder)
                && path.extension().is_some_and(|e| e == WORKFLOW_EXTENSION);
            (file == path || module).then(|| PolicyFile::Workflow {
                schedule: schedule.clone(),
            })
        })
    }

    /// The policy file that the folder at `path` holds (or is), if any:
    /// moving or removing the folder would take it along.
    pub fn within(&self, path: &Path) -> Option<PolicyFile> {
        if let Some(found) = self.classify(path) {
            return Some(found);
        }
        if self.config.as_deref().is_some_and(|c| c.starts_with(path)) {
            return Some(PolicyFile::Config);
        }
        if self.state.starts_with(path) {
            return Some(PolicyFile::State { trash: false });
        }
        if self.private.iter().any(|p| p.starts_with(path)) {
            return Some(PolicyFile::UserData);
        }
        if let Some((_, runner)) = self
            .programs
            .iter()
            .find(|(file, _)| file.starts_with(path))
        {
            return Some(PolicyFile::Program {
                runner: runner.clone(),
            });
        }
        if let Some(found) = self
            .workflows
            .iter()
            .find(|(file, _, _)| file.starts_with(path))
            .map(|(_, _, schedule)| PolicyFile::Workflow {
                schedule: schedule.clone(),
            })
        {
            return Some(found);
        }
        super::nested::nested_policy(path)
    }
}

/// Whether `path` is a config of any name the user trusted (one used with
/// `--config ci.toml`).
fn is_trusted_config(path: &Path) -> bool {
    trusted_configs().iter().any(|config| config == path)
}

/// The configs the user trusted, as the trust record names them: read
/// once a process, when a change is first judged.
fn trusted_configs() -> &'static [PathBuf] {
    static TRUSTED: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    TRUSTED.get_or_init(|| {
        super::trust::TrustStore::for_user()
            .map(|store| store.configs())
            .unwrap_or_default()
    })
}

/// The largest policy file kept to be put back: far beyond any real config
/// or workflow; a larger one is only reported if it changes.
const MAX_KEPT: u64 = 16 * 1024 * 1024;
/// An MCP server's program file is watched after each call only up to this
/// size: a script is (the reference servers' are a few KB); a larger one is
/// a binary, kept read-only by the program's mounts where they exist.
const MAX_KEPT_SCRIPT: u64 = 1024 * 1024;

/// What the policy files held before a call that runs outside every cell
/// (an MCP server's, or one that runs programs): the cell's guard does not
/// see what such a program does, so what it changed is found after the
/// call, put back, and the call refused.
pub struct PolicySnapshot {
    /// Each file, and what it held (`None`: absent; `Some(None)`: too
    /// large to keep).
    files: Vec<(PathBuf, Option<Option<Vec<u8>>>)>,
    /// The folders of scheduled workflows: a module that appears in one is
    /// taken away again.
    module_folders: Vec<PathBuf>,
    /// Where each scheduled workflow's path led.
    leads: Vec<(PathBuf, Option<PathBuf>)>,
    /// The links on the way to the scheduled workflows, and where each
    /// pointed: a link changed is put back.
    links: Vec<(PathBuf, PathBuf)>,
    /// The workspace's installed tools (`.toolcell/tools`), each file and
    /// folder as it was: where a program has no mounts of its own to keep
    /// them read-only, one it planted is taken away again.
    installed: (PathBuf, Vec<(PathBuf, super::installed::FileStamp)>),
}

impl PolicySnapshot {
    /// Reads the config (or where one would be found) and the scheduled
    /// workflows.
    pub fn take(policy: &PolicyFiles) -> Self {
        let config = policy
            .config
            .clone()
            .unwrap_or_else(|| policy.default_config.clone());
        // The modules already beside each workflow are kept as they are:
        // only one that appears during the call is taken away.
        let mut known: Vec<PathBuf> = std::iter::once(config)
            .chain(policy.workflows.iter().map(|(file, _, _)| file.clone()))
            .chain(
                policy
                    .programs
                    .iter()
                    .filter(|(file, _)| !file.is_symlink())
                    // A script, not a program's binary: read before every
                    // call outside a cell, so kept small.
                    .filter(|(file, _)| {
                        std::fs::metadata(file).is_ok_and(|m| m.len() <= MAX_KEPT_SCRIPT)
                    })
                    .map(|(file, _)| file.clone()),
            )
            .chain(
                policy
                    .workflows
                    .iter()
                    .flat_map(|(_, folder, _)| workflow_files(folder)),
            )
            .collect();
        known.sort();
        known.dedup();
        let files = known
            .into_iter()
            .map(|file| {
                let held = read_kept(&file);
                (file, held)
            })
            .collect();
        let module_folders = policy.workflows.iter().map(|(_, f, _)| f.clone()).collect();
        let leads = policy
            .workflow_paths
            .iter()
            .map(|path| (path.clone(), path.canonicalize().ok()))
            .collect();
        // The links inside the workspace on the way to each workflow (and
        // the workflow itself).
        let workspace = policy.default_config.parent().unwrap_or(Path::new("/"));
        let links = policy
            .workflow_paths
            .iter()
            .flat_map(|path| {
                path.ancestors()
                    .take_while(|a| a.starts_with(workspace) && *a != workspace)
                    .map(Path::to_path_buf)
                    .collect::<Vec<_>>()
            })
            .chain(policy.programs.iter().map(|(file, _)| file.clone()))
            .filter_map(|path| std::fs::read_link(&path).ok().map(|to| (path, to)))
            .collect();
        let tools = policy.state.join("tools");
        let installed = (tools.clone(), super::installed::entries(&tools));
        Self {
            files,
            module_folders,
            leads,
            links,
            installed,
        }
    }

    /// Puts back every file that changed since [`PolicySnapshot::take`];
    /// the files changed (with what became of putting them back), if any.
    pub fn undo_changes(mut self) -> Vec<String> {
        let mut changed = Vec::new();
        let (tools, before) = &self.installed;
        for (path, stamp) in super::installed::entries(tools) {
            let known = before.iter().find(|(p, _)| *p == path);
            match known {
                Some((_, was)) if *was == stamp => {}
                Some(_) => changed.push(format!(
                    "{} (an installed tool changed, which toolcell cannot put back: remove it with `toolcell tools remove`)",
                    path.display()
                )),
                // Gone already with the planted folder that held it.
                None if !path.exists() && !path.is_symlink() => {}
                None => {
                    let removed = if path.is_dir() && !path.is_symlink() {
                        std::fs::remove_dir_all(&path)
                    } else {
                        std::fs::remove_file(&path)
                    };
                    // A file in a tool's folder that was planted whole is
                    // gone with its folder.
                    if removed.is_ok() || !path.exists() {
                        changed.push(format!("{} (a tool planted: removed)", path.display()));
                    } else if let Err(e) = removed {
                        changed.push(format!(
                            "{} (a tool planted: could not be put back: {e})",
                            path.display()
                        ));
                    }
                }
            }
        }
        for (link, to) in &self.links {
            if std::fs::read_link(link).ok().as_ref() != Some(to) {
                let undone = put_back_link(link, to).map(|()| "put back");
                changed.push(match undone {
                    Ok(how) => format!("the link {} ({how})", link.display()),
                    Err(e) => format!("the link {} (could not be put back: {e})", link.display()),
                });
            }
        }
        changed.extend(
            self.leads
                .iter()
                .filter(|(path, before)| path.canonicalize().ok() != *before)
                .map(|(path, _)| {
                    format!(
                        "{} (it now leads elsewhere, which toolcell cannot put back)",
                        path.display()
                    )
                }),
        );
        let appeared: Vec<PathBuf> = self
            .module_folders
            .iter()
            .flat_map(|folder| workflow_files(folder))
            .filter(|file| !self.files.iter().any(|(known, _)| known == file))
            .collect();
        self.files
            .extend(appeared.into_iter().map(|file| (file, None)));
        for (file, before) in self.files {
            let now = read_kept(&file);
            if now == before {
                continue;
            }
            let undone = match &before {
                None => std::fs::remove_file(&file).map(|()| "removed"),
                Some(Some(bytes)) => put_back(&file, bytes).map(|()| "put back"),
                Some(None) => Ok("too large to put back"),
            };
            changed.push(match undone {
                Ok(how) => format!("{} ({how})", file.display()),
                Err(e) => format!("{} (could not be put back: {e})", file.display()),
            });
        }
        changed
    }
}

/// The `.rhai` files under `folder` (its modules), at most
/// [`MAX_MODULES`], without following links.
fn workflow_files(folder: &Path) -> Vec<PathBuf> {
    workflow_files_all(folder).0
}

/// [`workflow_files`], and whether they are all of them: a folder with
/// more files and folders than [`MAX_MODULES`] is not looked through to
/// its end.
fn workflow_files_all(folder: &Path) -> (Vec<PathBuf>, bool) {
    let mut found = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if found.len() + pending.len() >= MAX_MODULES {
                return (found, false);
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == WORKFLOW_EXTENSION) {
                found.push(path);
            }
        }
    }
    (found, true)
}

/// Modules and folders looked at beside scheduled workflows, after a call
/// outside the cells: far more than any workflow folder holds.
const MAX_MODULES: usize = 1_000;

fn read_kept(file: &Path) -> Option<Option<Vec<u8>>> {
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.is_file() || meta.len() > MAX_KEPT {
        return Some(None);
    }
    Some(std::fs::read(file).ok())
}

/// Points `link` at `to` again: a new link beside it, renamed over it.
fn put_back_link(link: &Path, to: &Path) -> std::io::Result<()> {
    let temp = link.with_file_name(format!(
        ".{}.toolcell-link-{}",
        link.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    std::os::unix::fs::symlink(to, &temp)?;
    std::fs::rename(&temp, link).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

fn put_back(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut temp, bytes)?;
    // The mode it has (a script keeps its execute bits); a file that was
    // removed comes back as an ordinary one.
    let mode = std::fs::metadata(file)
        .map(|m| m.permissions())
        .unwrap_or_else(|_| std::os::unix::fs::PermissionsExt::from_mode(0o644));
    temp.as_file().set_permissions(mode)?;
    temp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_state_and_scheduled_workflows_are_policy() {
        let files = PolicyFiles::new(
            Some(Path::new("/w/toolcell.toml")),
            Path::new("/w"),
            [(Path::new("/w/flows/report.rhai"), "nightly")],
        );
        assert_eq!(
            files.classify(Path::new("/w/toolcell.toml")),
            Some(PolicyFile::Config)
        );
        assert_eq!(
            files.classify(Path::new("/w/sub/toolcell.toml")),
            Some(PolicyFile::Config)
        );
        assert_eq!(
            files.classify(Path::new("/w/.toolcell/tools/x.wasm")),
            Some(PolicyFile::State { trash: false })
        );
        assert_eq!(
            files.classify(Path::new("/w/.toolcell/trash/a-1")),
            Some(PolicyFile::State { trash: true })
        );
        let nightly = Some(PolicyFile::Workflow {
            schedule: "nightly".into(),
        });
        assert_eq!(files.classify(Path::new("/w/flows/report.rhai")), nightly);
        assert_eq!(files.classify(Path::new("/w/flows/lib/util.rhai")), nightly);
        assert_eq!(files.classify(Path::new("/w/flows/notes.md")), None);
        assert_eq!(files.classify(Path::new("/w/notes.md")), None);
        assert_eq!(files.within(Path::new("/w/flows")), nightly);
        assert_eq!(files.within(Path::new("/w")), Some(PolicyFile::Config));
        assert_eq!(files.within(Path::new("/w/docs")), None);
    }

    #[test]
    fn a_tool_planted_during_a_call_outside_the_cells_is_taken_away() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        std::fs::create_dir_all(w.join(".toolcell/tools/kept")).unwrap();
        std::fs::write(w.join(".toolcell/tools/kept/tool.toml"), "").unwrap();
        let files = PolicyFiles::new(None, w, []);
        let snapshot = PolicySnapshot::take(&files);
        std::fs::create_dir_all(w.join(".toolcell/tools/planted")).unwrap();
        std::fs::write(w.join(".toolcell/tools/planted/tool.toml"), "").unwrap();
        let changed = snapshot.undo_changes().join("\n");
        assert!(
            changed.contains("planted (a tool planted: removed)"),
            "{changed}"
        );
        assert!(!w.join(".toolcell/tools/planted").exists());
        assert!(w.join(".toolcell/tools/kept/tool.toml").exists());
    }

    #[test]
    fn a_folder_holding_another_workspace_s_policy_takes_it_along() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path();
        for folder in ["vendor/lib/src", "old/proj/.toolcell/tools", "docs/a"] {
            std::fs::create_dir_all(w.join(folder)).unwrap();
        }
        std::fs::write(w.join("vendor/lib/toolcell.toml"), "").unwrap();
        std::fs::write(w.join("docs/a/notes.md"), "").unwrap();
        let files = PolicyFiles::new(Some(&w.join("toolcell.toml")), w, []);
        let judged = |path: &str, touch| files.judge(&w.join(path), touch);
        for touch in [crate::policy::Touch::MoveAway, crate::policy::Touch::Remove] {
            assert_eq!(
                judged("vendor", touch),
                Some(PolicyFile::Holds {
                    found: Some("lib/toolcell.toml".into())
                })
            );
            assert_eq!(
                judged("old", touch),
                Some(PolicyFile::Holds {
                    found: Some("proj/.toolcell".into())
                })
            );
            assert_eq!(judged("docs", touch), None);
        }
        // Written into, a folder moves nothing of what it holds.
        assert_eq!(
            judged("vendor/lib/src", crate::policy::Touch::Replace),
            None
        );
        let said = PolicyFile::Holds {
            found: Some("lib/toolcell.toml".into()),
        }
        .describe();
        assert!(said.contains("lib/toolcell.toml"), "{said}");
    }
}
