//! `toolcell tools …`: list, show, call, add and remove tools.

use super::{
    EXIT_DENIED, EXIT_ERROR, EXIT_OK, EXIT_TOOL_FAILED, load_workspace, open_dispatcher,
    print_json, print_laid_out, print_out,
};
use crate::approval::StandingApprovals;
use crate::call::dispatch::Dispatcher;
use crate::call::error::ErrorKind;
use crate::call::runner::{Failure, ToolRunner};
use crate::call::view::CallStatus;
use crate::config::WorkspaceConfig;
use crate::config::mcp_server::REACHED_OVER_HTTP;
use crate::install::download::{self, PinnedUrl};
use crate::install::scaffold::{self, Lang};
use crate::install::{self, ToolFiles};
use crate::mcp::client::McpServers;
use crate::mcp::pins::{Change, ToolPins};
use crate::registry::grant::{ApprovalSource, ToolGrant};
use crate::registry::{Backend, Registry, ToolEntry};
use crate::sandbox::Sandbox;
use crate::tool::manifest::ManifestApproval;
use crate::util::locations;
use anyhow::{Context, Result, bail};
use clap::Subcommand;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Width of the description column of `tools list`.
const DESCRIPTION_WIDTH: usize = 60;

#[derive(Debug, Subcommand)]
// clap builds a subcommand's flags only when it is the one run: a
// process's start-up pays for its own command alone.
#[command(defer = true)]
pub enum ToolsCommand {
    /// List the tools of this workspace: built-in, user and workspace ones.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show one tool: description, schema, capabilities, approval, limits.
    Show {
        name: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Call a tool directly and print its JSON result.
    Call {
        name: String,
        /// The arguments, a JSON object.
        #[arg(long, value_name = "JSON", conflicts_with = "args_file")]
        args: Option<String>,
        /// Read the arguments from a file (`-` for stdin), for large ones.
        #[arg(long, value_name = "FILE")]
        args_file: Option<PathBuf>,
        /// Approve the call if the tool needs approval (instead of asking).
        #[arg(long, short = 'y')]
        yes: bool,
        /// Print an envelope {ok, result | error, duration_ms} as JSON.
        #[arg(long)]
        json: bool,
        /// Also print what the tool wrote to stdout and stderr (to stderr).
        #[arg(long)]
        logs: bool,
    },
    /// Install a tool: its folder (tool.toml + one .wasm), or the two
    /// files, or `https://…/tool.tar.gz#sha256=HEX` (a packed folder; or
    /// the two files, each with its hash). Shows what the tool asks of the
    /// machine and asks to confirm.
    Add {
        #[arg(required = true, num_args = 1..=2, value_name = "PATH|URL")]
        paths: Vec<String>,
        /// Install for the user (every workspace) instead of this workspace.
        #[arg(long)]
        user: bool,
        /// Confirm what the tool asks for without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Replace an installed tool of the same name (after a rebuild).
        #[arg(long)]
        replace: bool,
    },
    /// Remove an installed tool.
    Remove { name: String },
    /// Accept the tools of an MCP server as it lists them now: shows what
    /// changed since they were pinned (new tools, changed descriptions and
    /// schemas, tools gone), then pins them, so they are offered again.
    Trust {
        /// The server's name (`[[mcp_server]] name`).
        server: String,
        /// Show what changed; pin nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Start a new tool: a folder with a working example (a file word
    /// count), its manifest, the WIT contract and the build command.
    New {
        /// The tool's name: lowercase letters, digits and `_`.
        name: String,
        /// The language to write it in.
        #[arg(long, value_enum)]
        lang: Lang,
        /// The folder to create (default: ./NAME).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// Runs a `tools` command.
pub fn run(config: &super::Chosen, command: ToolsCommand) -> Result<i32> {
    match command {
        // Listing starts the MCP servers too: their tools are listed by them.
        ToolsCommand::List { json } => {
            let dispatcher = open_dispatcher(config)?;
            list(dispatcher.config(), dispatcher.registry(), json)
        }
        ToolsCommand::Trust { server, dry_run } => {
            let (workspace, _) = load_workspace(config)?;
            trust_server(&workspace, &server, dry_run)
        }
        ToolsCommand::Show { name, json } => {
            // A tool of the workspace is shown without starting any program;
            // only another name may be an MCP server's, found by starting them.
            let (workspace, registry) = load_workspace(config)?;
            if registry.get(&name).is_some() {
                return show(&workspace, &registry, &name, json);
            }
            let dispatcher = super::dispatcher_over(workspace, registry, super::sandbox_options())?;
            show(dispatcher.config(), dispatcher.registry(), &name, json)
        }
        ToolsCommand::Call {
            name,
            args,
            args_file,
            yes,
            json,
            logs,
        } => {
            let args = call_arguments(args, args_file)?;
            let dispatcher = super::open_dispatcher_for_one_call(config, &name)?;
            let code = call(&dispatcher, &name, &args, yes, json, logs);
            dispatcher.release_for_exit();
            code
        }
        ToolsCommand::Add {
            paths,
            user,
            yes,
            replace,
        } => {
            let (config, registry) = load_workspace(config)?;
            let fetched = tempfile::tempdir().context("cannot make a temporary folder")?;
            let paths = fetch_urls(&paths, fetched.path())?;
            let files = ToolFiles::resolve(&paths)?;
            let tools_dir = if user {
                locations::user_tools_dir()
                    .context("no user data folder: set TOOLCELL_DATA_DIR or HOME")?
            } else {
                config.workspace_tools_dir()
            };
            let sandbox = Sandbox::new(super::sandbox_options())?;
            let confirm =
                |manifest: &crate::tool::manifest::ToolManifest,
                 replaced: Option<&crate::tool::manifest::ToolManifest>| {
                    confirm_install(manifest, replaced, yes)
                };
            let manifest =
                install::add(&sandbox, &registry, &files, &tools_dir, replace, &confirm)?;
            print_out(&format!(
                "installed `{}` {} into {}",
                manifest.name,
                manifest.version,
                tools_dir.join(&manifest.name).display()
            ))?;
            Ok(EXIT_OK)
        }
        ToolsCommand::New { name, lang, dir } => {
            let folder = dir.unwrap_or_else(|| PathBuf::from(&name));
            let folder = scaffold::create(&name, lang, &folder)?;
            let shown = folder.display();
            print_out(&format!(
                "created {shown}: the tool `{name}` ({lang:?}), counting the lines, words and bytes of a file; see {shown}/README.md\n\nnext:\n  cd {shown}\n  {}\n  toolcell tools add . --yes\n  toolcell tools call {name} --args '{{\"path\": \"README.md\"}}'",
                lang.build_command(&name)
            ))?;
            Ok(EXIT_OK)
        }
        ToolsCommand::Remove { name } => {
            let (_, registry) = load_workspace(config)?;
            let folder = install::remove(&registry, &name)?;
            print_out(&format!("removed `{name}` ({})", folder.display()))?;
            Ok(EXIT_OK)
        }
    }
}

/// Downloads the URL arguments of `tools add` into `dir` (archives
/// unpacked) and gives every argument as a local path.
fn fetch_urls(args: &[String], dir: &Path) -> Result<Vec<PathBuf>> {
    if !args.iter().any(|a| PinnedUrl::looks_like_url(a)) {
        return Ok(args.iter().map(PathBuf::from).collect());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut paths = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        if !PinnedUrl::looks_like_url(arg) {
            paths.push(PathBuf::from(arg));
            continue;
        }
        let pinned = PinnedUrl::parse(arg)?;
        let into = dir.join(format!("{i}"));
        std::fs::create_dir(&into)?;
        say!("downloading {}", pinned.url);
        let file = runtime.block_on(pinned.fetch_into(&into))?;
        if download::is_archive(&file) {
            let unpacked = into.join("unpacked");
            std::fs::create_dir(&unpacked)?;
            paths.push(download::unpack(&file, &unpacked)?);
        } else {
            paths.push(file);
        }
    }
    Ok(paths)
}

/// Shows what the tool asks for and takes the user's yes: `--yes`, or an
/// answer on the terminal; without either nothing is installed.
fn confirm_install(
    manifest: &crate::tool::manifest::ToolManifest,
    replaced: Option<&crate::tool::manifest::ToolManifest>,
    yes: bool,
) -> Result<()> {
    use std::io::IsTerminal;
    let asked = install::capabilities(manifest);
    say!("{asked}");
    if let Some(old) = replaced {
        // The first line names the tool; the rest is what it asks for.
        let old_asked = install::capabilities(old);
        let same = old_asked.lines().skip(1).eq(asked.lines().skip(1));
        say!(
            "  replaces:       `{}` {}{}",
            old.name,
            old.version,
            if same {
                " (which asked for the same)"
            } else {
                ", which asked for:"
            }
        );
        if !same {
            for line in old_asked.lines().skip(1) {
                say!("  {line}");
            }
        }
    }
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        bail!(
            "installing `{}` needs your confirmation of what it asks for, and there is no terminal to ask on; nothing was installed\n  fix: review the list above and pass --yes",
            manifest.name
        );
    }
    say_inline!("Install it? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        Ok(())
    } else {
        bail!("not installed: you declined")
    }
}

/// The arguments of `tools call`: from `--args`, from `--args-file` (`-`
/// for stdin), or `{}`; a JSON object either way.
pub(super) fn call_arguments(args: Option<String>, args_file: Option<PathBuf>) -> Result<Value> {
    let (text, source) = match (args, args_file) {
        (Some(text), _) => (text, "--args".to_string()),
        (None, Some(file)) if file.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .context("cannot read the arguments from stdin")?;
            (text, "the arguments on stdin".to_string())
        }
        (None, Some(file)) => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read --args-file {}", file.display()))?;
            (text, format!("--args-file {}", file.display()))
        }
        (None, None) => ("{}".to_string(), "--args".to_string()),
    };
    let args: Value =
        serde_json::from_str(&text).with_context(|| format!("{source} is not valid JSON"))?;
    if !args.is_object() {
        bail!("{source} must be a JSON object, such as '{{\"path\": \"notes.md\"}}'");
    }
    Ok(args)
}

fn report_problems(registry: &Registry) {
    for problem in registry.problems() {
        say!("warning: {problem}");
    }
}

fn list(config: &WorkspaceConfig, registry: &Registry, json: bool) -> Result<i32> {
    report_problems(registry);
    if json {
        let tools: Vec<Value> = registry
            .tools()
            .map(|entry| {
                describe(
                    entry,
                    ToolGrant::resolve(&entry.manifest, config).ok().as_ref(),
                )
            })
            .collect();
        print_out(&serde_json::to_string_pretty(&tools)?)?;
        return Ok(EXIT_OK);
    }
    let width = registry
        .tools()
        .map(|t| t.manifest.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let origin_width = registry
        .tools()
        .map(|t| t.origin().len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut table = format!(
        "{:width$}  {:origin_width$}  {:8}  {:5}  DESCRIPTION",
        "NAME", "SOURCE", "APPROVAL", "FS"
    );
    for entry in registry.tools() {
        let approval = match ToolGrant::resolve(&entry.manifest, config) {
            Ok(grant) if !grant.enabled => "disabled".to_string(),
            Ok(grant) => grant.approval.to_string(),
            Err(_) => "invalid".to_string(),
        };
        table.push_str(&format!(
            "\n{:width$}  {:origin_width$}  {:8}  {:5}  {}",
            entry.manifest.name,
            entry.origin(),
            approval,
            match entry.backend {
                // Not a cell: the server's program can reach what the user can.
                Backend::Mcp(_) => "any".to_string(),
                Backend::Component(_) => entry.manifest.capabilities.fs.to_string(),
            },
            // A row is one line, whatever a server wrote.
            crate::util::text::for_terminal_line(&shorten(
                &entry.manifest.description,
                DESCRIPTION_WIDTH
            ))
        ));
    }
    print_out(&table)?;
    Ok(EXIT_OK)
}

fn show(config: &WorkspaceConfig, registry: &Registry, name: &str, json: bool) -> Result<i32> {
    let Some(entry) = registry.get(name) else {
        bail!(
            "there is no tool named `{}`; the tools are: {}",
            crate::util::text::for_terminal_line(name),
            crate::util::text::for_terminal_line(&registry.names().join(", "))
        );
    };
    let grant = ToolGrant::resolve(&entry.manifest, config)?;
    if json {
        let mut value = describe(entry, Some(&grant));
        if let Some(how) = containment(config, entry, &grant) {
            value["outside"] = json!(how);
        }
        print_out(&serde_json::to_string_pretty(&value)?)?;
        return Ok(EXIT_OK);
    }
    let m = &entry.manifest;
    let from = match &entry.folder {
        Some(folder) => format!("{}, {}", entry.source, folder.display()),
        None => entry.origin(),
    };
    let approval_source = match grant.approval_source {
        ApprovalSource::Manifest if m.approval == ManifestApproval::Always => {
            "always: the tool requires approval of every call"
        }
        ApprovalSource::Manifest => "the tool's default",
        ApprovalSource::Config => "set in the workspace config",
    };
    let roots = if grant.preopens.is_empty() {
        "none".to_string()
    } else {
        grant
            .preopens
            .iter()
            .map(|p| {
                format!(
                    "{} = {} ({})",
                    p.guest,
                    p.host.display(),
                    if p.writable {
                        "read-write"
                    } else {
                        "read-only"
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let list_or_none = |items: &[String]| {
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    let outside = match containment(config, entry, &grant) {
        Some(how) => format!("\noutside:     {how}"),
        None => String::new(),
    };
    let text = format!(
        "{} {} ({from})\n  {}\n\nenabled:     {}\nmutates:     {}\napproval:    {} ({approval_source})\nfile system: asks {}; granted roots: {roots}\nnetwork:     asks {}; granted {}\nprograms:    asks {}; granted {}\nenvironment: asks {}; granted {}{outside}\nlimits:      timeout {} ms, memory {} MiB, result {} bytes\nparameters:\n{}",
        m.name,
        m.version,
        m.description,
        match (grant.enabled, m.opt_in) {
            (true, _) => "yes".to_string(),
            (false, true) => format!(
                "no (offered only on request: `[tools.{}] enabled = true` in toolcell.toml)",
                m.name
            ),
            (false, false) => "no".to_string(),
        },
        if m.mutates { "yes" } else { "no" },
        grant.approval,
        m.capabilities.fs,
        list_or_none(&m.capabilities.network),
        list_or_none(&grant.network),
        list_or_none(&m.capabilities.process),
        list_or_none(&grant.process),
        list_or_none(&m.capabilities.env),
        list_or_none(&grant.env),
        grant.limits.timeout_ms,
        grant.limits.memory_mb,
        grant.limits.max_output_bytes,
        serde_json::to_string_pretty(&m.parameters)?,
    );
    print_out(&text)?;
    Ok(EXIT_OK)
}

/// `tools trust SERVER`: starts the server, shows how its tools differ
/// from their pins, and pins them as they are (unless `dry_run`).
fn trust_server(config: &WorkspaceConfig, name: &str, dry_run: bool) -> Result<i32> {
    let Some(server) = config
        .mcp_servers
        .iter()
        .find(|s| s.name == name && s.enabled)
    else {
        let enabled: Vec<&str> = config
            .mcp_servers
            .iter()
            .filter(|s| s.enabled)
            .map(|s| s.name.as_str())
            .collect();
        let known = if enabled.is_empty() {
            "this workspace starts none (an untrusted config starts none until `toolcell trust`)"
                .to_string()
        } else {
            format!("the servers are: {}", enabled.join(", "))
        };
        bail!(
            "there is no MCP server named `{}` to trust; {known}",
            crate::util::text::for_terminal_line(name)
        );
    };
    let pins = ToolPins::for_user()
        .context("there is no data folder to keep the pins in (set TOOLCELL_DATA_DIR)")?;
    let (_running, started) = McpServers::start(
        std::slice::from_ref(server),
        &config.roots,
        &config.files.policy,
    )?;
    let tools = match started.into_iter().next().map(|s| s.tools) {
        Some(Ok(tools)) => tools,
        Some(Err(e)) => bail!("the MCP server `{name}` did not start: {e}"),
        None => bail!("the MCP server `{name}` did not start"),
    };
    let changes = pins.changes(&config.workspace, name, &tools);
    let pretty = |value: &Value| serde_json::to_string_pretty(value).unwrap_or_default();
    // The server's tool names, each on its line as a name.
    let l = |name: &str| crate::util::text::for_terminal_line(name).into_owned();
    let shown = l(name);
    let mut text = String::new();
    for change in &changes {
        match change {
            Change::Added { tool, now } => {
                text.push_str(&format!("new: `{}`\n{}\n", l(tool), pretty(now)));
            }
            Change::Changed { tool, was, now } => {
                let (was, now) = (pretty(was), pretty(now));
                let diff = similar::TextDiff::from_lines(&was, &now);
                text.push_str(&format!(
                    "changed: `{}`\n{}",
                    l(tool),
                    diff.unified_diff().header("pinned", "listed now")
                ));
            }
            Change::Removed { tool } => text.push_str(&format!("gone: `{}`\n", l(tool))),
        }
    }
    if changes.is_empty() {
        text.push_str(&format!(
            "the tools of `{shown}` are as pinned ({} tools)\n",
            tools.len()
        ));
    } else if dry_run {
        text.push_str(&format!(
            "nothing pinned (--dry-run): `toolcell tools trust {shown}` accepts these\n"
        ));
    } else {
        pins.pin(&config.workspace, name, &tools)?;
        text.push_str(&format!(
            "pinned the {} tools of `{shown}` as listed now: they are offered again\n",
            tools.len()
        ));
    }
    print_out(text.trim_end())?;
    Ok(EXIT_OK)
}

/// How what runs outside the cell for this tool (its programs, its MCP
/// server) is confined, or that it is not (`sandbox = "none"`).
fn containment(config: &WorkspaceConfig, entry: &ToolEntry, grant: &ToolGrant) -> Option<String> {
    let confinement = match &entry.backend {
        Backend::Mcp(external) => {
            let server = config
                .mcp_servers
                .iter()
                .find(|s| s.name == external.server)?;
            if !server.is_started() {
                return Some(REACHED_OVER_HTTP.into());
            }
            server.confinement(&config.roots, &config.files.policy)
        }
        Backend::Component(_) if !grant.process.is_empty() => grant.confinement(),
        Backend::Component(_) => return None,
    };
    Some(match confinement {
        Some(confinement) => confinement.describe(),
        None => "not sandboxed (sandbox = \"none\"): runs with your rights".into(),
    })
}

/// A tool as JSON, for `list --json` and `show --json`.
fn describe(entry: &ToolEntry, grant: Option<&ToolGrant>) -> Value {
    let m = &entry.manifest;
    let mut value = json!({
        "name": m.name,
        "version": m.version,
        "description": m.description,
        "source": entry.origin(),
        "folder": entry.folder,
        "mutates": m.mutates,
        "parameters": m.parameters,
        "capabilities": { "fs": m.capabilities.fs.to_string(), "network": m.capabilities.network, "process": m.capabilities.process, "env": m.capabilities.env },
    });
    if let Some(grant) = grant {
        value["enabled"] = json!(grant.enabled);
        value["approval"] = json!(grant.approval.to_string());
        value["limits"] = json!({
            "timeout_ms": grant.limits.timeout_ms,
            "memory_mb": grant.limits.memory_mb,
            "max_output_bytes": grant.limits.max_output_bytes,
        });
        value["granted"] = json!({
            "roots": grant.preopens.iter().map(|p| json!({"name": p.guest, "path": p.host, "writable": p.writable})).collect::<Vec<_>>(),
            "network": grant.network,
            "process": grant.process,
            "env": grant.env,
        });
    }
    value
}

fn call(
    dispatcher: &Dispatcher,
    name: &str,
    args: &Value,
    yes: bool,
    json: bool,
    logs: bool,
) -> Result<i32> {
    // `--yes` approves this one call, whose arguments are on the command
    // line: also of a tool approved call by call.
    let approver =
        StandingApprovals::interactive(false, yes.then(|| name.to_string()), "--yes to approve it");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let result =
        runtime.block_on(ToolRunner::unrecorded(dispatcher, &approver).call(name, args.clone()));
    if logs {
        for (stream, captured) in [("stdout", &result.stdout), ("stderr", &result.stderr)] {
            if !captured.text.is_empty() || captured.dropped > 0 {
                say!("--- {name} {stream} ---\n{}", captured.text.trim_end());
                if captured.dropped > 0 {
                    say!(
                        "--- {stream} truncated: {} more bytes dropped ---",
                        captured.dropped
                    );
                }
            }
        }
    }
    let duration_ms = result.duration.as_secs_f64() * 1000.0;
    match (result.value, result.error) {
        (Some(value), _) => {
            if json {
                // `--json`'s answer, its keys in the order they always had,
                // laid out around the result's text: parsed again one level
                // deeper, a result at the nesting limit would be refused.
                let duration = serde_json::to_string(&duration_ms)?;
                print_laid_out(|out| {
                    write!(
                        out,
                        "{{\n  \"duration_ms\": {duration},\n  \"ok\": true,\n  \"result\": "
                    )?;
                    value.write_pretty_at(out, 1)?;
                    out.write_all(b"\n}")
                })?;
            } else {
                print_json(&value)?;
            }
            Ok(EXIT_OK)
        }
        (None, error) => {
            let Failure { kind, message } = error.unwrap_or(Failure {
                kind: ErrorKind::Failed,
                message: result.content,
            });
            if json {
                let envelope = json!({"ok": false, "error": {"kind": kind.as_str(), "message": message}, "duration_ms": duration_ms});
                print_out(&serde_json::to_string_pretty(&envelope)?)?;
            } else {
                say!("error: {message}");
            }
            Ok(if result.status == CallStatus::Denied {
                EXIT_DENIED
            } else if matches!(kind, ErrorKind::Unavailable | ErrorKind::UnknownTool) {
                EXIT_ERROR
            } else {
                EXIT_TOOL_FAILED
            })
        }
    }
}

fn shorten(text: &str, width: usize) -> String {
    let first_sentence = text.split(". ").next().unwrap_or(text);
    if first_sentence.chars().count() <= width {
        first_sentence.trim_end_matches('.').to_string()
    } else {
        let cut: String = first_sentence.chars().take(width - 1).collect();
        format!("{cut}…")
    }
}
