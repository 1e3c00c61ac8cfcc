//! `import "lib/util" as util;` — modules come from the workflows folder
//! (the folder of the script being run) and nowhere else: a path that is
//! absolute, climbs out with `..`, or leads out through a symbolic link is
//! refused.
//!
//! rhai evaluates an imported module inside the `import` statement, so
//! each import in an import is one more nested evaluation on the script's
//! stack: a module that imports itself, or two that import each other,
//! recursed until the stack overflowed and the process aborted. The
//! resolver keeps the chain of files being imported and refuses a file
//! already in it (a cycle, named with the whole chain) and a chain longer
//! than [`MAX_IMPORT_DEPTH`]. [`check_imports`] finds the same problems
//! without running anything, for `toolcell check`.

use super::errors;
use rhai::{AST, Engine, EvalAltResult, Module, ModuleResolver, Position, Scope, Shared};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// The extension of module files, added to the import path.
pub const MODULE_EXTENSION: &str = "rhai";

/// Imports inside imports, the workflow itself not counted: a library
/// layered this deep is already hard to follow, and each level is a whole
/// module evaluation nested on the script's stack.
pub const MAX_IMPORT_DEPTH: usize = 16;

/// The error kind scripts see for a refused import.
const IMPORT: &str = "import";

/// Resolves imports inside one folder.
pub struct FolderResolver {
    /// Canonical.
    base: PathBuf,
    /// The files whose evaluation is under way, outermost first: the
    /// workflow, then each module being imported by the one before it.
    chain: Mutex<Vec<PathBuf>>,
}

impl FolderResolver {
    /// A resolver for the workflow `root` (canonical), whose folder is `base`.
    pub fn new(base: PathBuf, root: PathBuf) -> Self {
        Self {
            base,
            chain: Mutex::new(vec![root]),
        }
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

    /// `file` as the user sees it: relative to the workflows folder.
    fn shown(&self, file: &Path) -> String {
        file.strip_prefix(&self.base)
            .unwrap_or(file)
            .display()
            .to_string()
    }

    /// Why importing `file` from the end of `chain` is refused, if it is.
    fn refusal(&self, chain: &[PathBuf], file: &Path) -> Option<String> {
        let names = || {
            chain
                .iter()
                .map(|f| self.shown(f))
                .chain([self.shown(file)])
                .collect::<Vec<_>>()
                .join(" → ")
        };
        if chain.iter().any(|f| f == file) {
            return Some(format!(
                "import cycle: {}; a module cannot import itself, even through others: move what they share into a module that imports neither",
                names()
            ));
        }
        if chain.len() > MAX_IMPORT_DEPTH {
            return Some(format!(
                "imports nest deeper than {MAX_IMPORT_DEPTH} levels ({}); import the modules from the workflow instead of from each other",
                names()
            ));
        }
        None
    }

    fn chain(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        // The chain stays consistent even if a holder panicked: every push
        // has its pop in a guard.
        self.chain.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Takes a file off the import chain when its evaluation ends, however it ends.
struct Imported<'a>(&'a FolderResolver);

impl Drop for Imported<'_> {
    fn drop(&mut self) {
        self.0.chain().pop();
    }
}

fn import_error(message: String, pos: Position) -> Box<EvalAltResult> {
    let mut error = rhai::Map::new();
    error.insert("kind".into(), IMPORT.into());
    error.insert("message".into(), message.into());
    Box::new(EvalAltResult::ErrorRuntime(error.into(), pos))
}

impl ModuleResolver for FolderResolver {
    fn resolve(
        &self,
        engine: &Engine,
        _source: Option<&str>,
        path: &str,
        pos: Position,
    ) -> Result<Shared<Module>, Box<EvalAltResult>> {
        let file = self
            .locate(path)
            .map_err(|message| import_error(message, pos))?;
        {
            let mut chain = self.chain();
            if let Some(message) = self.refusal(&chain, &file) {
                return Err(import_error(message, pos));
            }
            chain.push(file.clone());
        }
        let _imported = Imported(self);
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

/// The imports of `ast` whose path is a literal: the path and where.
pub fn literal_imports(ast: &AST) -> Vec<(String, Position)> {
    let mut found = Vec::new();
    ast.walk(&mut |path: &[rhai::ASTNode]| {
        // The position of the path, where a refused import is reported
        // when it runs, too.
        if let Some(rhai::ASTNode::Stmt(rhai::Stmt::Import(import, _))) = path.last()
            && let rhai::Expr::StringConstant(name, pos) = &import.0
        {
            found.push((name.to_string(), *pos));
        }
        true
    });
    found
}

/// The workflow whose imports [`check_imports`] follows.
pub struct Root<'a> {
    /// Its folder (canonical).
    pub base: &'a Path,
    /// The file (canonical).
    pub file: &'a Path,
    /// The file as the user named it, for messages.
    pub display: &'a str,
    pub source: &'a str,
    pub ast: &'a AST,
}

/// Follows the literal imports of the workflow `root` through every
/// module, compiling each: a cycle, a chain past [`MAX_IMPORT_DEPTH`], a
/// missing module or one that does not compile is an error rendered with
/// the file, line and caret of the import (or of the syntax error).
pub fn check_imports(engine: &Engine, root: &Root<'_>) -> Result<(), String> {
    let resolver = FolderResolver::new(root.base.to_path_buf(), root.file.to_path_buf());
    let mut checked = BTreeSet::new();
    let mut chain = vec![root.file.to_path_buf()];
    let file = (root.display, root.source, root.ast);
    follow(engine, &resolver, &mut chain, &mut checked, file)
}

/// One file's imports, depth first: `file` is its name, source and AST,
/// and `chain` ends with it. The recursion is as deep as the chain, which
/// [`FolderResolver::refusal`] stops at [`MAX_IMPORT_DEPTH`].
fn follow(
    engine: &Engine,
    resolver: &FolderResolver,
    chain: &mut Vec<PathBuf>,
    checked: &mut BTreeSet<PathBuf>,
    (here, source, ast): (&str, &str, &AST),
) -> Result<(), String> {
    for (path, pos) in literal_imports(ast) {
        let fail = |message: String| errors::located(&message, here, Some(source), pos, None);
        let file = resolver
            .locate(&path)
            .map_err(|m| fail(format!("import: {m}")))?;
        if let Some(message) = resolver.refusal(chain, &file) {
            return Err(fail(format!("import: {message}")));
        }
        if checked.contains(&file) {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .map_err(|e| fail(format!("import: cannot read `{path}`: {e}")))?;
        let shown = resolver.shown(&file);
        let module = engine
            .compile(&text)
            .map_err(|e| errors::parse_error(&shown, &text, &e))?;
        chain.push(file.clone());
        let result = follow(engine, resolver, chain, checked, (&shown, &text, &module));
        chain.pop();
        result?;
        checked.insert(file);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let base = dir.path().canonicalize().unwrap();
        (dir, base)
    }

    fn check(base: &Path, root: &str) -> Result<(), String> {
        let engine = Engine::new();
        let file = base.join(root);
        let source = std::fs::read_to_string(&file).unwrap();
        let ast = engine.compile(&source).unwrap();
        let root = Root {
            base,
            file: &file,
            display: root,
            source: &source,
            ast: &ast,
        };
        check_imports(&engine, &root)
    }

    #[test]
    fn a_cycle_is_reported_with_the_chain_and_the_import_that_closes_it() {
        let (_dir, base) = folder(&[
            ("a.rhai", "import \"b\" as b;\n1\n"),
            ("b.rhai", "// b\nimport \"a\" as a;\n"),
            ("me.rhai", "import \"me\" as me;\n"),
        ]);
        let error = check(&base, "a.rhai").unwrap_err();
        assert!(
            error.contains("import cycle: a.rhai → b.rhai → a.rhai")
                && error.contains("b.rhai:2:8"),
            "{error}"
        );
        let error = check(&base, "me.rhai").unwrap_err();
        assert!(error.contains("import cycle: me.rhai → me.rhai"), "{error}");
    }

    #[test]
    fn a_shared_module_is_no_cycle_and_a_long_chain_is_refused() {
        let (_dir, base) = folder(&[
            ("top.rhai", "import \"l\" as l;\nimport \"r\" as r;\n"),
            ("l.rhai", "import \"shared\" as s;\n"),
            ("r.rhai", "import \"shared\" as s;\n"),
            ("shared.rhai", "fn f() { 1 }\n"),
        ]);
        check(&base, "top.rhai").unwrap();

        let mut files: Vec<(String, String)> = (0..=MAX_IMPORT_DEPTH)
            .map(|i| {
                (
                    format!("m{i}.rhai"),
                    format!("import \"m{}\" as next;\n", i + 1),
                )
            })
            .collect();
        files.push((format!("m{}.rhai", MAX_IMPORT_DEPTH + 1), "1\n".into()));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let (_dir, base) = folder(&files);
        let error = check(&base, "m0.rhai").unwrap_err();
        assert!(
            error.contains(&format!(
                "imports nest deeper than {MAX_IMPORT_DEPTH} levels"
            )),
            "{error}"
        );
        check(&base, "m1.rhai").unwrap();
    }

    #[test]
    fn a_module_that_does_not_compile_is_reported_in_its_file() {
        let (_dir, base) = folder(&[
            ("main.rhai", "import \"bad\" as bad;\n"),
            ("bad.rhai", "let x = ;\n"),
        ]);
        let error = check(&base, "main.rhai").unwrap_err();
        assert!(
            error.contains("syntax error") && error.contains("bad.rhai:1:"),
            "{error}"
        );
    }
}
