//! The `toolcell` binary: everything lives in the library.

fn main() {
    std::process::exit(toolcell::cli::main());
}
