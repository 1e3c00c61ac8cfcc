//! The example tool of `toolcell tools new` (a file word count), scaffolded
//! and built in Rust, Python and JavaScript with the real toolchains, as an
//! author would. The Python and JS toolchains come from
//! `tests/support/guest-toolchains.sh` (PyPI and npm, pinned, cached).
//! Shared by the end-to-end tests and the polyglot benchmark.

use crate::{cargo_component, setup_script};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use toolcell::install::scaffold::{self, Lang};

/// Where the pinned component toolchains are installed.
pub struct Toolchains {
    pub componentize_py: PathBuf,
    pub js_node_modules: PathBuf,
}

/// The toolchains (installed on first use).
pub fn toolchains() -> &'static Toolchains {
    static TOOLCHAINS: OnceLock<Toolchains> = OnceLock::new();
    TOOLCHAINS.get_or_init(|| {
        let provided = setup_script::run("guest-toolchains.sh", "python3 with venv, node and npm");
        Toolchains {
            componentize_py: provided.value("COMPONENTIZE_PY"),
            js_node_modules: provided.value("COMPONENTIZE_JS_NODE_MODULES"),
        }
    })
}

/// A scaffolded tool, built.
#[allow(
    dead_code,
    reason = "the tests add the folder the build left; the benchmark reads these"
)]
pub struct Built {
    pub folder: PathBuf,
    pub wasm: PathBuf,
    /// How long its build command took.
    pub build_time: Duration,
}

/// Builds the already scaffolded tool `name` in `folder` with its
/// language's build command (offline: crates from the local registry,
/// packages from the toolchain cache).
pub fn build(lang: Lang, folder: &Path, name: &str) -> Built {
    let started = Instant::now();
    let status = match lang {
        Lang::Rust => {
            // Offline: the scaffold has no lock file, and its crates are in
            // the local registry already. `cargo_component::build` checks success.
            let built = cargo_component::build(folder, name, true);
            std::fs::copy(&built, folder.join(format!("{name}.wasm"))).unwrap();
            None
        }
        Lang::Python => Some(
            Command::new(&toolchains().componentize_py)
                .args([
                    "-d",
                    "wit",
                    "-w",
                    "tool-component",
                    "componentize",
                    "app",
                    "-o",
                ])
                .arg(format!("{name}.wasm"))
                .current_dir(folder)
                .status()
                .expect("running componentize-py"),
        ),
        Lang::Js => {
            let modules = folder.join("node_modules");
            if !modules.exists() {
                std::os::unix::fs::symlink(&toolchains().js_node_modules, &modules).unwrap();
            }
            Some(
                Command::new("node")
                    .arg("build.mjs")
                    .current_dir(folder)
                    .status()
                    .expect("running node build.mjs"),
            )
        }
    };
    assert!(
        status.is_none_or(|s| s.success()),
        "building the {lang:?} scaffold failed"
    );
    let wasm = folder.join(format!("{name}.wasm"));
    assert!(wasm.is_file(), "{} was not produced", wasm.display());
    Built {
        folder: folder.to_path_buf(),
        wasm,
        build_time: started.elapsed(),
    }
}

/// Scaffolds `name` in `lang` under `parent` (with the library, as
/// `toolcell tools new` does) and builds it.
#[allow(dead_code, reason = "the tests scaffold through the binary")]
pub fn scaffold_and_build(lang: Lang, parent: &Path, name: &str) -> Built {
    let folder = parent.join(format!("{name}-{lang:?}").to_lowercase());
    scaffold::create(name, lang, &folder).expect("scaffold");
    build(lang, &folder, name)
}
