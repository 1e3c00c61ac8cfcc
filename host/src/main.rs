//! The `toolcell` binary: everything lives in the library.
//!
//! On Linux with glibc the C `main` is defined here, not Rust's, so that a
//! start skips what Rust's runtime does before `main` and toolcell does not
//! need (`toolcell::util::entry` says what, and does the rest). Elsewhere,
//! where std may take the arguments in `lang_start` itself, Rust's `main`
//! is kept. The test build (which has no tests) keeps the harness's.
#![cfg_attr(all(not(test), target_os = "linux", target_env = "gnu"), no_main)]

#[cfg(all(not(test), target_os = "linux", target_env = "gnu"))]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    toolcell::util::entry::prepare_process();
    toolcell::util::entry::exit_with(run)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() {
    toolcell::util::entry::exit_with(run)
}

/// The process, between its entry and its exit code.
#[cfg_attr(test, allow(dead_code))]
fn run() -> i32 {
    toolcell::util::heap::configure();
    toolcell::contain::keep_to_itself();
    let code = toolcell::cli::main();
    // Normally every server was stopped with its workspace; this covers
    // whatever an error path left running.
    toolcell::util::child::stop_all();
    code
}
