//! The `toolcell` binary: everything lives in the library.

fn main() {
    toolcell::util::heap::keep_freed_memory();
    toolcell::contain::keep_to_itself();
    let code = toolcell::cli::main();
    // Normally every server was stopped with its workspace; this covers
    // whatever an error path left running.
    toolcell::util::child::stop_all();
    std::process::exit(code);
}
