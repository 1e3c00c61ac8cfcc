//! The `toolcell` binary: everything lives in the library.
//!
//! The C `main` is defined here, not Rust's, so that a start skips what
//! Rust's runtime does before `main` and toolcell does not need
//! (`toolcell::util::entry` says what, and does the rest).
// The test build (which has no tests) keeps the harness's own `main`.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::ffi::{c_char, c_int};

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    toolcell::util::entry::prepare_process();
    toolcell::util::entry::exit_with(|| {
        toolcell::util::heap::keep_freed_memory();
        toolcell::contain::keep_to_itself();
        let code = toolcell::cli::main();
        // Normally every server was stopped with its workspace; this covers
        // whatever an error path left running.
        toolcell::util::child::stop_all();
        code
    })
}
