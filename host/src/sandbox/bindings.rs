//! Host bindings of the tool contract, generated from `tools-wasm/wit/tool.wit`:
//! the `tool` export every component implements, and the `process` import
//! ([`super::process`]) the host offers to all of them.

wasmtime::component::bindgen!({
    world: "command-tool",
    path: "../tools-wasm/wit",
    imports: { default: async },
    exports: { default: async },
});

pub use exports::toolcell::tool::tool::Error as GuestError;
