//! Tool manifests: the `tool.toml` beside every component.
//!
//! A manifest says what a tool is (name, description, JSON Schema of its
//! arguments), whether it changes anything (`mutates`, default approval),
//! what it asks of the machine (file-system access, network hosts,
//! environment variables) and the limits it runs under. Parsing is strict:
//! an unknown key, a value out of range or a schema that is not a JSON Schema
//! is an error that names the file, the key, the line and the fix.

use crate::tool::limits::{self, Limits};
use crate::tool::parameters::Parameters;
use crate::util::names::{check_host_pattern, check_program, check_tool_name, is_env_name};
use crate::util::problem::{Document, Problem, key_at, line_col};
use serde::Deserialize;
use std::fmt;
use std::path::Path;
use toml::Spanned;

/// Where the manifest format is documented, for error messages.
pub const FORMAT_DOC: &str = "docs/writing-tools.md";

/// How much file-system access a tool asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FsAccess {
    /// No preopened directories at all.
    #[default]
    None,
    /// The roots, read-only.
    Read,
    /// The roots, read-write where the user's config allows writing.
    Write,
}

impl fmt::Display for FsAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FsAccess::None => "none",
            FsAccess::Read => "read",
            FsAccess::Write => "write",
        })
    }
}

/// The approval a tool asks for by default; the user's config may change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ManifestApproval {
    /// Ask the user before every call.
    Ask,
    /// Run without asking.
    Auto,
    /// Ask before every call, and the user's config cannot turn it to
    /// `auto` (it can still `deny`): for tools whose every use matters.
    Always,
}

/// What a tool asks of the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Capabilities {
    pub fs: FsAccess,
    /// Host names (or `*.domain` patterns) it may reach over wasi:http.
    pub network: Vec<String>,
    /// Environment variable names it may read.
    pub env: Vec<String>,
    /// Programs it may run (`git`, `/usr/bin/make`), or `*` for whatever
    /// programs the user grants. Empty for nearly every tool.
    pub process: Vec<String>,
}

/// A parsed and validated `tool.toml`.
#[derive(Debug, Clone)]
pub struct ToolManifest {
    pub name: String,
    pub version: String,
    pub description: String,
    pub mutates: bool,
    pub approval: ManifestApproval,
    /// Offered and callable only where the user's config enables it
    /// (`[tools.NAME] enabled = true`): for tools that run whatever code
    /// they are given, such as `run_python`.
    pub opt_in: bool,
    /// JSON Schema of the arguments, given to the model as is.
    pub parameters: Parameters,
    pub capabilities: Capabilities,
    pub limits: Limits,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: Spanned<String>,
    version: Spanned<String>,
    description: Spanned<String>,
    #[serde(default)]
    mutates: bool,
    approval: Option<ManifestApproval>,
    #[serde(default)]
    opt_in: bool,
    parameters: Spanned<toml::Table>,
    #[serde(default)]
    capabilities: RawCapabilities,
    #[serde(default)]
    limits: RawLimits,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCapabilities {
    #[serde(default)]
    fs: FsAccess,
    #[serde(default)]
    network: Vec<Spanned<String>>,
    #[serde(default)]
    env: Vec<Spanned<String>>,
    #[serde(default)]
    process: Vec<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    timeout_ms: Option<Spanned<u64>>,
    memory_mb: Option<Spanned<u64>>,
    max_output_bytes: Option<Spanned<u64>>,
}

/// Checks and locates errors in one manifest's text.
struct Checker<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Checker<'_> {
    fn error<T>(
        &self,
        key: &str,
        span: std::ops::Range<usize>,
        message: String,
        fix: String,
    ) -> Result<T, Problem> {
        Err(Problem {
            document: Document::Manifest,
            file: self.file.to_path_buf(),
            key: Some(key.to_string()),
            position: Some(line_col(self.text, span.start)),
            message,
            fix,
        })
    }

    /// A limit as given, checked to be in `range`; left out, `None` (the
    /// default is filled in by [`Fields::into_manifest`]).
    fn limit(
        &self,
        key: &str,
        value: &Option<Spanned<u64>>,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<Option<u64>, Problem> {
        let Some(value) = value else {
            return Ok(None);
        };
        if !range.contains(value.get_ref()) {
            return self.error(
                &format!("limits.{key}"),
                value.span(),
                format!("{} is out of range", value.get_ref()),
                format!("use a value from {} to {}", range.start(), range.end()),
            );
        }
        Ok(Some(*value.get_ref()))
    }
}

impl ToolManifest {
    /// Reads and validates the manifest at `file`.
    pub fn load(file: &Path) -> Result<Self, Problem> {
        let text = std::fs::read_to_string(file).map_err(|e| Problem {
            document: Document::Manifest,
            file: file.to_path_buf(),
            key: None,
            position: None,
            message: format!("cannot read it: {e}"),
            fix: "check that the file exists and is readable UTF-8 text".into(),
        })?;
        Self::parse(file, &text)
    }

    /// A manifest built into the binary, from `fields`: its `tool.toml` as
    /// JSON, converted when the binary was built (`host/build.rs`). A
    /// start-up reads a dozen of them; TOML took several times as long, and
    /// checking each schema against the JSON Schema meta-schema again is
    /// not needed: the test `every_builtin_manifest_passes_every_check`
    /// makes every check of [`ToolManifest::parse`] on each `tool.toml` and
    /// holds the manifest made here to the one made there.
    pub fn parse_builtin(file: &Path, fields: &str) -> Result<Self, Problem> {
        let fields: Fields = serde_json::from_str(fields).map_err(|e| Problem {
            document: Document::Manifest,
            file: file.to_path_buf(),
            key: None,
            position: None,
            message: format!("the built-in manifest as stored in the binary: {e}"),
            fix: "build toolcell again from its sources".into(),
        })?;
        Ok(fields.into_manifest())
    }

    /// Validates manifest `text`; `file` is only used to name it in errors.
    pub fn parse(file: &Path, text: &str) -> Result<Self, Problem> {
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().to_string();
            let fix = if message.starts_with("missing field") {
                format!("add it; the format is described in {FORMAT_DOC}")
            } else {
                format!("correct or remove that key; the format is described in {FORMAT_DOC}")
            };
            let span = e.span().filter(|_| !message.starts_with("missing field"));
            Problem {
                document: Document::Manifest,
                file: file.to_path_buf(),
                key: span.as_ref().and_then(|s| key_at(text, s.start)),
                position: span.map(|s| line_col(text, s.start)),
                message,
                fix,
            }
        })?;
        let check = Checker { file, text };

        let name = raw.name.get_ref();
        if let Err(why) = check_tool_name(name) {
            return check.error("name", raw.name.span(), why, "use lowercase letters, digits and single underscores, starting with a letter, e.g. `word_count`".into());
        }
        // What people are shown (the install confirmation, prompts) must be
        // what the file says: no line breaks or escape sequences to forge
        // or hide lines. Descriptions may break lines, nothing else.
        if raw.version.get_ref().chars().any(char::is_control) {
            return check.error(
                "version",
                raw.version.span(),
                "the version holds control characters".into(),
                "give a version such as \"0.1.0\"".into(),
            );
        }
        if raw
            .description
            .get_ref()
            .chars()
            .any(|c| c.is_control() && c != '\n')
        {
            return check.error(
                "description",
                raw.description.span(),
                "the description holds control characters (escape sequences, tabs, carriage returns)".into(),
                "write it as plain text".into(),
            );
        }
        if raw.version.get_ref().trim().is_empty() {
            return check.error(
                "version",
                raw.version.span(),
                "the version is empty".into(),
                "give a version such as \"0.1.0\"".into(),
            );
        }
        if raw.description.get_ref().trim().is_empty() {
            return check.error(
                "description",
                raw.description.span(),
                "the description is empty".into(),
                "say in one sentence what the tool does: the model chooses tools by it".into(),
            );
        }

        let parameters = serde_json::to_value(raw.parameters.get_ref()).map_err(|e| Problem {
            document: Document::Manifest,
            file: file.to_path_buf(),
            key: Some("parameters".into()),
            position: Some(line_col(text, raw.parameters.span().start)),
            message: format!("cannot be expressed as JSON: {e}"),
            fix: "use only strings, numbers, booleans, arrays and tables".into(),
        })?;
        if let Err(why) = check_parameters_schema(&parameters) {
            return check.error("parameters", raw.parameters.span(), why, "make `parameters` a JSON Schema for an object: type = \"object\" with `properties`; see https://json-schema.org".into());
        }

        for host in &raw.capabilities.network {
            if let Err(why) = check_host_pattern(host.get_ref()) {
                return check.error("capabilities.network", host.span(), why, "list host names such as \"api.example.com\", \"*.example.org\" or \"127.0.0.1:8080\", without scheme or path".into());
            }
        }
        for name in &raw.capabilities.env {
            if !is_env_name(name.get_ref()) {
                return check.error(
                    "capabilities.env",
                    name.span(),
                    format!("`{}` is not an environment variable name", name.get_ref()),
                    "use names of letters, digits and underscores, not starting with a digit"
                        .into(),
                );
            }
        }

        for program in &raw.capabilities.process {
            if let Err(why) = check_program(program.get_ref()) {
                return check.error(
                    "capabilities.process",
                    program.span(),
                    why,
                    "list program names such as \"git\" or absolute paths such as \"/usr/bin/make\" (or \"*\" for whatever the user grants); never a command line".into(),
                );
            }
        }
        if !raw.capabilities.process.is_empty() && raw.approval != Some(ManifestApproval::Always) {
            return check.error(
                "capabilities.process",
                raw.capabilities.process[0].span(),
                "a tool that runs programs must be approved at every call, with the command line shown".into(),
                "set `approval = \"always\"`".into(),
            );
        }

        let limits = FieldLimits {
            timeout_ms: check.limit(
                "timeout_ms",
                &raw.limits.timeout_ms,
                limits::TIMEOUT_MS_RANGE,
            )?,
            memory_mb: check.limit("memory_mb", &raw.limits.memory_mb, limits::MEMORY_MB_RANGE)?,
            max_output_bytes: check.limit(
                "max_output_bytes",
                &raw.limits.max_output_bytes,
                limits::OUTPUT_BYTES_RANGE,
            )?,
        };

        Ok(Fields {
            name: raw.name.into_inner(),
            version: raw.version.into_inner(),
            description: raw.description.into_inner(),
            mutates: raw.mutates,
            approval: raw.approval,
            opt_in: raw.opt_in,
            parameters: parameters.into(),
            capabilities: Capabilities {
                fs: raw.capabilities.fs,
                network: raw
                    .capabilities
                    .network
                    .into_iter()
                    .map(Spanned::into_inner)
                    .collect(),
                env: raw
                    .capabilities
                    .env
                    .into_iter()
                    .map(Spanned::into_inner)
                    .collect(),
                process: raw
                    .capabilities
                    .process
                    .into_iter()
                    .map(Spanned::into_inner)
                    .collect(),
            },
            limits,
        }
        .into_manifest())
    }
}

/// A manifest's keys and their values, with none of their places in the
/// text: what a checked `tool.toml` comes to, and how a built-in tool's
/// manifest is stored (as JSON). [`Fields::into_manifest`] fills in the
/// defaults for both.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    name: String,
    version: String,
    description: String,
    #[serde(default)]
    mutates: bool,
    approval: Option<ManifestApproval>,
    #[serde(default)]
    opt_in: bool,
    parameters: Parameters,
    #[serde(default)]
    capabilities: Capabilities,
    #[serde(default)]
    limits: FieldLimits,
}

/// `[limits]` as given: a limit left out takes its default.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FieldLimits {
    timeout_ms: Option<u64>,
    memory_mb: Option<u64>,
    max_output_bytes: Option<u64>,
}

impl Fields {
    /// The manifest, with the defaults of what was left out: approval
    /// asked of a tool that changes something, automatic otherwise; the
    /// default limits.
    fn into_manifest(self) -> ToolManifest {
        let approval = self.approval.unwrap_or(if self.mutates {
            ManifestApproval::Ask
        } else {
            ManifestApproval::Auto
        });
        ToolManifest {
            name: self.name,
            version: self.version,
            description: self.description.trim().to_string(),
            mutates: self.mutates,
            approval,
            opt_in: self.opt_in,
            parameters: self.parameters,
            capabilities: self.capabilities,
            limits: Limits {
                timeout_ms: self.limits.timeout_ms.unwrap_or(limits::DEFAULT_TIMEOUT_MS),
                memory_mb: self.limits.memory_mb.unwrap_or(limits::DEFAULT_MEMORY_MB),
                max_output_bytes: self
                    .limits
                    .max_output_bytes
                    .unwrap_or(limits::DEFAULT_OUTPUT_BYTES),
            },
        }
    }
}

/// The arguments' schema must itself be a valid JSON Schema describing an
/// object: that is what every model server expects of a function's parameters.
fn check_parameters_schema(schema: &serde_json::Value) -> Result<(), String> {
    if let Err(e) = jsonschema::meta::validate(schema) {
        let at = e.instance_path().to_string();
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at `{at}`")
        };
        return Err(format!("not a valid JSON Schema{at}: {e}"));
    }
    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(
            "the schema must describe an object (type = \"object\"): tools take named arguments"
                .into(),
        );
    }
    jsonschema::validator_for(schema).map_err(|e| format!("not a usable JSON Schema: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "word_count"
version = "0.1.0"
description = "Counts words."
[parameters]
type = "object"
properties.path = { type = "string" }
"#;

    #[test]
    fn defaults_follow_mutates() {
        let m = ToolManifest::parse(Path::new("tool.toml"), GOOD).unwrap();
        assert_eq!(m.approval, ManifestApproval::Auto);
        assert_eq!(m.capabilities.fs, FsAccess::None);
        assert_eq!(m.limits.timeout_ms, limits::DEFAULT_TIMEOUT_MS);
        let mutating = GOOD.replace("[parameters]", "mutates = true\n[parameters]");
        let m = ToolManifest::parse(Path::new("tool.toml"), &mutating).unwrap();
        assert_eq!(m.approval, ManifestApproval::Ask);
    }

    #[test]
    fn shown_text_cannot_hold_control_characters() {
        // A version forging lines of the install confirmation, and hiding them.
        let forged = GOOD.replace(
            "version = \"0.1.0\"",
            "version = \"1\\n  network hosts:  none\\u001b[8m\"",
        );
        let err = ToolManifest::parse(Path::new("tool.toml"), &forged).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("version"), "{err}");
        let escaped = GOOD.replace("Counts words.", "Counts\\u001b[2Jwords.");
        let err = ToolManifest::parse(Path::new("tool.toml"), &escaped).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("description"), "{err}");
        let lines = GOOD.replace("Counts words.", "Counts words.\\nIn any file.");
        assert!(ToolManifest::parse(Path::new("tool.toml"), &lines).is_ok());
    }

    #[test]
    fn limit_out_of_range_names_key_and_line() {
        let text = format!("{GOOD}[limits]\ntimeout_ms = 0\n");
        let err = ToolManifest::parse(Path::new("tool.toml"), &text).unwrap_err();
        assert_eq!(err.key.as_deref(), Some("limits.timeout_ms"));
        assert_eq!(err.position, Some((9, 14)));
    }

    #[test]
    fn names() {
        assert!(check_tool_name("read_file").is_ok());
        assert!(check_tool_name("Read").is_err());
        assert!(check_tool_name("fs__read").is_err());
        assert!(check_tool_name("1x").is_err());
    }

    #[test]
    fn key_at_names_table_and_key() {
        let text = "name = \"x\"\n[capabilities]\nfs = \"all\"\n";
        assert_eq!(
            key_at(text, text.find("\"all").unwrap()).as_deref(),
            Some("capabilities.fs")
        );
        assert_eq!(key_at(text, 0).as_deref(), Some("name"));
        assert_eq!(key_at(text, text.find("[cap").unwrap()), None);
    }
}
