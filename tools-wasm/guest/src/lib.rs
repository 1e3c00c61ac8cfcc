//! Guest-side helpers shared by every built-in tool.
//!
//! A built-in tool is a small crate that parses its arguments, does its work
//! through `std::fs` (which WASI confines to the granted roots) and returns a
//! JSON value. Everything those crates would otherwise repeat lives here:
//!
//! - [`bindings`]: the generated bindings of `toolcell:tool` (the `tool`
//!   export and the `process` import), and the
//!   [`export_tool!`] macro a tool crate uses to export its implementation;
//! - [`run`]: parse the JSON arguments, call the tool, serialise the result;
//! - [`path`]: workspace-relative paths, checked before any file is touched;
//! - [`error`]: constructors for the contract's error variant and the mapping
//!   of I/O errors onto it;
//! - [`descriptors`]: fast whole-file reads straight through
//!   `wasi:filesystem`, for tools that read many files;
//! - [`walk`]: walking folders by names and types (`toolcell:tool/folders`),
//!   with ignore files honoured as ripgrep honours them;
//! - [`json`]: JSON text written directly, for results too large to build
//!   as values first;
//! - [`files`]: atomic writes, text decoding (binary refused), hashes and the
//!   workspace trash, shared by the tools that change files;
//! - [`heap`]: the allocator, which keeps room past large buffers so that
//!   a file's text can become its JSON result where it lies.

pub mod descriptors;
pub mod error;
pub mod files;
pub mod heap;
pub mod json;
pub mod path;
pub mod walk;

#[allow(missing_docs, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        // `command-tool` is `tool-component` plus the `folders` and
        // `process` imports; a tool that uses neither does not import them.
        world: "command-tool",
        path: "../wit",
        pub_export_macro: true,
        export_macro_name: "export_tool",
        default_bindings_module: "toolcell_guest::bindings",
    });
}

pub use bindings::export_tool;

#[global_allocator]
static ALLOCATOR: heap::Roomy = heap::Roomy;
pub use bindings::exports::toolcell::tool::tool::{Error as ToolError, Guest as Tool};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Exports `body` as the tool's `call`: the one line a tool crate needs.
///
/// ```ignore
/// toolcell_guest::tool!(read);   // fn read(args: Args) -> Result<Out, ToolError>
/// toolcell_guest::tool!(text: list);   // fn list(args: Args) -> Result<String, ToolError>
/// ```
#[macro_export]
macro_rules! tool {
    // A tool that writes its JSON result itself ([`run_text`]).
    (text: $body:path) => {
        $crate::tool!(@exported $crate::run_text, $body);
    };
    ($body:path) => {
        $crate::tool!(@exported $crate::run, $body);
    };
    (@exported $runner:path, $body:path) => {
        struct ToolcellTool;

        impl $crate::Tool for ToolcellTool {
            fn call(args: String) -> Result<String, $crate::ToolError> {
                $runner(&args, $body)
            }
        }

        $crate::export_tool!(ToolcellTool);
    };
}

/// Runs one tool call: `args` (JSON text) is parsed into `A`, handed to
/// `body`, and the returned value is serialised back to JSON text.
///
/// Arguments that do not deserialise become `invalid-args` naming the field
/// serde complained about, so the model learns what to fix.
pub fn run<A, R>(
    args: &str,
    body: impl FnOnce(A) -> Result<R, ToolError>,
) -> Result<String, ToolError>
where
    A: DeserializeOwned,
    R: Serialize,
{
    let value = body(parse_args(args)?)?;
    serde_json::to_string(&value)
        .map_err(|e| ToolError::Failed(format!("could not encode the result as JSON: {e}")))
}

/// [`run`] for a tool whose `body` writes its JSON result as text itself
/// ([`json`]): a large result is then never held twice, as values and as
/// text. The host checks it is JSON like any other result.
pub fn run_text<A>(
    args: &str,
    body: impl FnOnce(A) -> Result<String, ToolError>,
) -> Result<String, ToolError>
where
    A: DeserializeOwned,
{
    body(parse_args(args)?)
}

/// The call's arguments, or `invalid-args` naming the field serde
/// complained about.
fn parse_args<A: DeserializeOwned>(args: &str) -> Result<A, ToolError> {
    serde_json::from_str(args)
        .map_err(|e| ToolError::InvalidArgs(format!("the arguments do not fit: {e}")))
}
