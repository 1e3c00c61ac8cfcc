//! `toolcell tools new NAME --lang rust|python|js`: a new tool's folder,
//! ready to build and add.
//!
//! Each template (`host/templates/LANG/`) is the same working example, a
//! tool that counts the lines, words and bytes of a workspace file, so an
//! author starts from something that runs, with arguments, a result, each
//! kind of error and the sandbox's view of files. The folder gets the
//! contract (`wit/tool.wit`, the one this toolcell speaks) and a README
//! with the one build command. `{{name}}` in a template is the tool's name.

use crate::util::names::check_tool_name;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The languages a tool can be scaffolded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// Rust, built with `cargo build --target wasm32-wasip2`.
    Rust,
    /// Python, built with componentize-py (PyPI).
    Python,
    /// JavaScript, built with ComponentizeJS (npm).
    Js,
}

/// The contract every tool implements, as this toolcell speaks it.
pub const TOOL_WIT: &str = include_str!("../../../tools-wasm/wit/tool.wit");

/// One template file: its path in the new folder and its text.
type TemplateFile = (&'static str, &'static str);

macro_rules! template {
    ($lang:literal: $($path:literal),+ $(,)?) => {
        &[$(($path, include_str!(concat!("../../templates/", $lang, "/", $path)))),+]
    };
}

const RUST: &[TemplateFile] =
    template!("rust": "Cargo.toml", "src/lib.rs", "tool.toml", "README.md", ".gitignore");
const PYTHON: &[TemplateFile] =
    template!("python": "app.py", "tool.toml", "README.md", ".gitignore");
const JS: &[TemplateFile] =
    template!("js": "tool.js", "build.mjs", "package.json", "tool.toml", "README.md", ".gitignore");

impl Lang {
    fn files(self) -> &'static [TemplateFile] {
        match self {
            Lang::Rust => RUST,
            Lang::Python => PYTHON,
            Lang::Js => JS,
        }
    }

    /// The command that builds `NAME.wasm` in the tool's folder.
    pub fn build_command(self, name: &str) -> String {
        match self {
            Lang::Rust => format!(
                "cargo build --release --target wasm32-wasip2 && cp target/wasm32-wasip2/release/{name}.wasm ."
            ),
            Lang::Python => {
                format!("componentize-py -d wit -w tool-component componentize app -o {name}.wasm")
            }
            Lang::Js => "npm install && npm run build".to_string(),
        }
    }
}

/// Writes a new tool `name` in `lang` into `folder`, which must not exist
/// or be an empty folder (`.` included). A new folder appears whole or not
/// at all: it is written beside its place and renamed into it; an empty
/// one is filled in place, and emptied again if writing fails.
pub fn create(name: &str, lang: Lang, folder: &Path) -> Result<PathBuf> {
    check_tool_name(name).map_err(|why| {
        anyhow::anyhow!(
            "invalid tool name: {why}\n  fix: use lowercase letters, digits and `_`, starting with a letter, e.g. `word_count`"
        )
    })?;
    let files: Vec<(&str, String)> = lang
        .files()
        .iter()
        .map(|(path, text)| (*path, text.replace("{{name}}", name)))
        .chain([("wit/tool.wit", TOOL_WIT.to_string())])
        .collect();
    if folder.exists() {
        let real = folder
            .canonicalize()
            .with_context(|| format!("cannot use {}", folder.display()))?;
        let empty = real.is_dir()
            && real
                .read_dir()
                .with_context(|| format!("cannot read {}", folder.display()))?
                .next()
                .is_none();
        if !empty {
            bail!(
                "{} already exists and is not an empty folder\n  fix: choose another folder with --dir, or another name",
                folder.display()
            );
        }
        if let Err(e) = write_files(&real, &files) {
            for entry in std::fs::read_dir(&real).into_iter().flatten().flatten() {
                let _ = std::fs::remove_dir_all(entry.path())
                    .or_else(|_| std::fs::remove_file(entry.path()));
            }
            return Err(e);
        }
        return Ok(folder.to_path_buf());
    }
    let parent = match folder.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}-new-"))
        .tempdir_in(&parent)
        .with_context(|| format!("cannot write in {}", parent.display()))?;
    write_files(staging.path(), &files)?;
    std::fs::rename(staging.keep(), folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    Ok(folder.to_path_buf())
}

fn write_files(dir: &Path, files: &[(&str, String)]) -> Result<()> {
    for (path, text) in files {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_is_filled_in_and_its_manifest_is_valid() {
        let dir = tempfile::tempdir().unwrap();
        for lang in [Lang::Rust, Lang::Python, Lang::Js] {
            let folder = dir.path().join(format!("{lang:?}"));
            create("word_count", lang, &folder).unwrap();
            let manifest =
                crate::tool::manifest::ToolManifest::load(&folder.join("tool.toml")).unwrap();
            assert_eq!(manifest.name, "word_count");
            assert_eq!(
                std::fs::read_to_string(folder.join("wit/tool.wit")).unwrap(),
                TOOL_WIT
            );
            for (path, _) in lang.files() {
                let text = std::fs::read_to_string(folder.join(path)).unwrap();
                assert!(
                    !text.contains("{{"),
                    "{lang:?} {path} still holds a placeholder"
                );
            }
            let again = create("word_count", lang, &folder).unwrap_err();
            assert!(format!("{again:#}").contains("already exists"));
            // An empty folder, or a link to one, is filled in place.
            let empty = dir.path().join(format!("empty-{lang:?}"));
            std::fs::create_dir(&empty).unwrap();
            let link = dir.path().join(format!("link-{lang:?}"));
            std::os::unix::fs::symlink(&empty, &link).unwrap();
            create("word_count", lang, &link).unwrap();
            assert!(empty.join("tool.toml").is_file());
        }
        let bad = create("Word-Count", Lang::Rust, &dir.path().join("x")).unwrap_err();
        assert!(format!("{bad:#}").contains("invalid tool name"));
        assert!(!dir.path().join("x").exists());
    }
}
