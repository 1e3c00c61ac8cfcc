//! `import "lib/util" as util;` — modules come from the workflows folder
//! (the folder of the script being run) and nowhere else: a path that is
//! absolute, climbs out with `..`, or leads out through a symbolic link is
//! refused.

use rhai::{Engine, EvalAltResult, Module, ModuleResolver, Position, Scope, Shared};
use std::path::{Component, Path, PathBuf};

/// The extension of module files, added to the import path.
pub const MODULE_EXTENSION: &str = "rhai";

/// Resolves imports inside one folder.
pub struct FolderResolver {
    /// Canonical.
    base: PathBuf,
}

impl FolderResolver {
    pub fn new(base: PathBuf) -> Self {
        Self { base }
    }

    /// The module file for `path`, if it stays inside the folder.
    pub fn locate(&self, path: &str) -> Result<PathBuf, String> {
        let relative = Path::new(path);
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(format!(
                "`{path}` is outside the workflows folder: imports are paths inside it, like \"lib/util\""
            ));
        }
        let file = self.base.join(format!("{path}.{MODULE_EXTENSION}"));
        let real = file.canonicalize().map_err(|_| {
            format!("there is no module `{path}` ({path}.{MODULE_EXTENSION} next to the workflow)")
        })?;
        if !real.starts_with(&self.base) {
            return Err(format!(
                "`{path}` leads outside the workflows folder through a link"
            ));
        }
        Ok(real)
    }
}

impl ModuleResolver for FolderResolver {
    fn resolve(
        &self,
        engine: &Engine,
        _source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<Shared<Module>, Box<EvalAltResult>> {
        let file = self.locate(path).map_err(|message| {
            let mut error = rhai::Map::new();
            error.insert("kind".into(), "import".into());
            error.insert("message".into(), message.into());
            Box::new(EvalAltResult::ErrorRuntime(error.into(), pos))
        })?;
        let text = std::fs::read_to_string(&file).map_err(|e| {
            Box::new(EvalAltResult::ErrorModuleNotFound(
                format!("`{path}`: {e}"),
                pos,
            ))
        })?;
        let in_module = |e: Box<EvalAltResult>| {
            Box::new(EvalAltResult::ErrorInModule(path.to_string(), e, pos))
        };
        let mut ast = engine.compile(&text).map_err(|e| in_module(e.into()))?;
        ast.set_source(format!("{path}.{MODULE_EXTENSION}"));
        let module = Module::eval_ast_as_new(Scope::new(), &ast, engine).map_err(in_module)?;
        Ok(module.into())
    }
}
