//! Host bindings of the tool contract, generated from `tools-wasm/wit/tool.wit`.

wasmtime::component::bindgen!({
    world: "tool-component",
    path: "../tools-wasm/wit",
    exports: { default: async },
});

pub use exports::toolcell::tool::tool::Error as GuestError;
