//! Builds the built-in tools (`tools-wasm/`) for wasm32-wasip2 and embeds
//! them in the binary, so a user gets them with nothing else to do.
//!
//! Runs a nested `cargo build` with its own target folder (inside OUT_DIR,
//! so it never contends for the outer build's lock) and writes
//! `builtin_tools.rs`: one entry per tool crate that has a `tool.toml`, with
//! the manifest and the component included as static data. The guest target
//! folder is exported as `TOOLCELL_GUEST_TARGET_DIR` so that the tests build
//! their fixture components there and reuse the compiled dependencies.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

const GUEST_TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let tools_dir = manifest_dir
        .join("../tools-wasm")
        .canonicalize()
        .expect("tools-wasm/ next to host/");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target_dir = out_dir.join("guest-target");

    link_without_pie();
    link_startup_code_first(&manifest_dir, &out_dir);
    link_unwinder_statically(&out_dir);

    let tools = tool_crates(&tools_dir);
    for path in ["wit", "Cargo.toml", "Cargo.lock", "guest"] {
        println!("cargo:rerun-if-changed={}", tools_dir.join(path).display());
    }
    for tool in &tools {
        println!("cargo:rerun-if-changed={}", tools_dir.join(tool).display());
    }

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args([
            "build",
            "--release",
            "--target",
            GUEST_TARGET,
            "--manifest-path",
        ])
        .arg(tools_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's flags and wrappers are for the host target, not ours.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
        "CARGO_PROFILE_RELEASE_INCREMENTAL",
    ] {
        build.env_remove(var);
    }
    // SIMD lets LLVM vectorise the byte loops tools are full of (line
    // counting, case folding, substring search in `memchr`); wasmtime
    // supports it on every host it runs on.
    build.env(
        "CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS",
        "-Ctarget-feature=+simd128",
    );
    let status = build
        .status()
        .expect("running cargo to build the built-in tools");
    if !status.success() {
        panic!(
            "building the built-in tools in {} failed (see above). If the error says the \
             `{GUEST_TARGET}` target may not be installed, run `rustup target add {GUEST_TARGET}`.",
            tools_dir.display()
        );
    }

    let wasm_dir = target_dir.join(GUEST_TARGET).join("release");
    let mut generated = String::from(
        "/// The built-in tools, built from `tools-wasm/` by `host/build.rs`.\npub static BUILTIN_TOOLS: &[BuiltinTool] = &[\n",
    );
    for tool in &tools {
        let manifest = tools_dir.join(tool).join("tool.toml");
        let wasm = wasm_dir.join(format!("{}.wasm", tool.replace('-', "_")));
        assert!(
            wasm.is_file(),
            "the build did not produce {}",
            wasm.display()
        );
        // The digest names the compiled component in the compile cache: made
        // here once, a process need not hash the component at every start.
        let bytes = std::fs::read(&wasm).expect("reading a built-in component");
        let digest = hex(&Sha256::digest(&bytes));
        let fields = manifest_as_json(&manifest, &out_dir.join(format!("{tool}.tool.json")));
        generated.push_str(&format!(
            "    BuiltinTool {{ crate_dir: {tool:?}, #[cfg(test)] manifest: include_str!({:?}), manifest_fields: include_str!({:?}), wasm: include_bytes!({:?}), wasm_sha256: {digest:?} }},\n",
            manifest.display().to_string(),
            fields.display().to_string(),
            wasm.display().to_string()
        ));
    }
    generated.push_str("];\n");
    std::fs::write(out_dir.join("builtin_tools.rs"), generated).expect("writing builtin_tools.rs");
    println!(
        "cargo:rustc-env=TOOLCELL_GUEST_TARGET_DIR={}",
        target_dir.display()
    );
}

/// Links the `toolcell` binary as a position-dependent executable on Linux.
///
/// A position-independent one is relocated by the dynamic loader at every
/// start: about 80,000 relocations writing 1.3 MB of pointers (vtables,
/// tables of the compiler and the TLS stack), some 350 copy-on-write page
/// faults, which took half of `toolcell --version` (3.6 ms against 1.7 ms,
/// BENCHMARKS.md). The code stays position-independent; only the link is
/// fixed, so the stack, the heap, the libraries and every mapping wasmtime
/// makes (compiled tools, linear memories) are still placed at random.
fn link_without_pie() {
    if target_is_linux_gnu() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

/// Has the linker lay out the functions a process runs at its start (and
/// in the common calls) together at the front of the code, in the order of
/// `link/startup-order.txt` (made by `link/startup-order.sh`).
///
/// A process's code is mapped a fault at a time, each fault bringing in the
/// 64 KB around the page touched; the functions a small `tools call` runs
/// were spread over some 200 such windows of the 35 MB of code, and each
/// fault cost 4–6 µs here: laid out together they take about 20
/// (BENCHMARKS.md, issue 21). Names the file has and the binary has not (a
/// file older than the code) are skipped without a warning.
///
/// lld (rustc's own linker on x86_64 Linux when it comes from rustup) and
/// mold know the option; GNU ld and gold do not, and a rustc built by a
/// distribution may link with them. So the option is given only if a small
/// program links with it, by the same rustc, linker and flags: else the
/// binary is laid out as the compiler leaves it, and a warning says so.
fn link_startup_code_first(manifest_dir: &Path, out_dir: &Path) {
    let order = manifest_dir.join("link/startup-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os != "linux" || !order.is_file() {
        return;
    }
    // As two words each (`-Xlinker`, the option): a path is not split at
    // its commas, as it would be after `-Wl,`.
    let link_args = [
        "-Xlinker".to_string(),
        format!("--symbol-ordering-file={}", order.display()),
        "-Xlinker".to_string(),
        "--no-warn-symbol-ordering".to_string(),
    ];
    if links_with(&link_args, out_dir) {
        for arg in link_args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    } else {
        println!(
            "cargo:warning=the linker does not take --symbol-ordering-file: toolcell's start-up code is not laid out together (a slower start, nothing else)"
        );
    }
}

/// Links GCC's unwinder (`libgcc_eh.a`) into the `toolcell` binary on
/// Linux with glibc, where Rust's standard library asks for the shared
/// `libgcc_s.so.1` (`-lgcc_s`): the same code, linked as `gcc -static-libgcc`
/// links it.
///
/// Loading the shared library cost every process its mapping, its symbol
/// lookups and its constructor, which asks the CPU for its features with
/// `cpuid`: an instruction a virtual machine traps, some 7 µs each here.
/// About 0.15 ms of each start (BENCHMARKS.md, issue 21). The linker takes
/// `-lgcc_s` from the first folder that has a `libgcc_s` of either kind, so
/// a copy of `libgcc_eh.a` under that name, in a folder searched first, is
/// what it links. Panics, backtraces and the unwind tables wasmtime
/// registers for compiled tools work as before: the code is the same.
///
/// Done only if the C compiler knows `libgcc_eh.a` and a small program
/// links with it; else the shared library stays, with a warning.
fn link_unwinder_statically(out_dir: &Path) {
    if !target_is_linux_gnu() {
        return;
    }
    let cc = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".into());
    let found = Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    // A compiler that does not know the file prints its bare name back.
    let Some(unwinder) = found.filter(|path| path.is_absolute() && path.is_file()) else {
        println!(
            "cargo:warning=`{cc} -print-file-name=libgcc_eh.a` finds no static unwinder: toolcell links libgcc_s.so.1 (a slower start, nothing else)"
        );
        return;
    };
    println!("cargo:rerun-if-changed={}", unwinder.display());
    let folder = out_dir.join("static-unwinder");
    let copied = std::fs::create_dir_all(&folder)
        .and_then(|()| std::fs::copy(&unwinder, folder.join("libgcc_s.a")));
    let link_args = [format!("-L{}", folder.display())];
    if copied.is_ok() && links_with(&link_args, out_dir) {
        for arg in link_args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    } else {
        println!(
            "cargo:warning=a program does not link with {} as libgcc_s: toolcell links libgcc_s.so.1 (a slower start, nothing else)",
            unwinder.display()
        );
    }
}

/// Whether the binary is built for Linux with glibc, where the link
/// settings above apply.
fn target_is_linux_gnu() -> bool {
    let var = |name| std::env::var(name).unwrap_or_default();
    var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu"
}

/// Whether an empty program links with `link_args` added, built by the
/// rustc, target, linker and flags of this build.
fn links_with(link_args: &[String], out_dir: &Path) -> bool {
    let probe = out_dir.join("link-probe");
    let _ = std::fs::create_dir_all(&probe);
    let source = probe.join("main.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let mut command = Command::new(rustc);
    command
        .arg(&source)
        .arg("--crate-type=bin")
        .arg("--out-dir")
        .arg(&probe);
    if let Ok(target) = std::env::var("TARGET") {
        command.args(["--target", &target]);
    }
    if let Ok(linker) = std::env::var("RUSTC_LINKER") {
        command.arg(format!("-Clinker={linker}"));
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    command.args(flags.split('\x1f').filter(|flag| !flag.is_empty()));
    for arg in link_args {
        command.arg(format!("-Clink-arg={arg}"));
    }
    command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Writes a built-in tool's manifest (`tool.toml`) as JSON to `json`, its
/// keys and values as they are: a process reads a dozen of these at every
/// start, and JSON is read several times faster than TOML (a tenth of a
/// small `tools call`'s time went to TOML, BENCHMARKS.md, issue 21). The
/// manifest's checks are made on the TOML itself, by the test
/// `every_builtin_manifest_passes_every_check`, which also holds the two
/// forms to the same manifest.
fn manifest_as_json(manifest: &Path, json: &Path) -> PathBuf {
    let text = std::fs::read_to_string(manifest)
        .unwrap_or_else(|e| panic!("reading {}: {e}", manifest.display()));
    let table: toml::Table = toml::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{} is not a TOML manifest: {e}; docs/writing-tools.md describes the format",
            manifest.display()
        )
    });
    let fields = serde_json::to_string(&table).unwrap_or_else(|e| {
        panic!(
            "{} holds a value JSON cannot express (a date?): {e}",
            manifest.display()
        )
    });
    std::fs::write(json, fields).expect("writing a built-in manifest as JSON");
    json.to_path_buf()
}

/// Tool crates: folders of `tools-wasm/` holding a `tool.toml`, sorted.
fn tool_crates(tools_dir: &Path) -> Vec<String> {
    let mut tools: Vec<String> = std::fs::read_dir(tools_dir)
        .expect("reading tools-wasm/")
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().join("tool.toml").is_file())
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .collect();
    tools.sort();
    tools
}

/// `bytes` as lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
