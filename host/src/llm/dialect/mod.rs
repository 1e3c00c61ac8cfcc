//! The tool-call dialects that models write as text, and reading them.
//!
//! A model that has no native tool calling on its server (llama-server
//! without a tool template, a community GGUF, vLLM without a tool parser,
//! a model Ollama says cannot use tools) writes its calls as text, in the
//! dialect it was trained on: Hermes `<tool_call>{…}</tool_call>`, Mistral
//! `[TOOL_CALLS]`, Llama's bare JSON, pythonic lists, DeepSeek's special
//! tokens, GPT-OSS's harmony channels, and two dozen more. Models with
//! native tool calling sometimes leak their calls as text the same way.
//!
//! - [`registry`]: every dialect, one row each: its markers, the parser of
//!   what sits between them, the signs of it in a chat template, and how
//!   to ask a model to write it. Adding a dialect touches only that table
//!   (and, for a new syntax, one parser function).
//! - [`scan`]: finds the markers in streamed text in one pass, holding back
//!   only a tail that could still become a marker.
//! - [`read`]: turns a whole reply into text, reasoning and calls, deciding
//!   what must not run (calls in reasoning, examples, calls cut off, JSON
//!   in prose); `examples` says whether the sentence before a call shows
//!   it as an example.
//! - [`typing`]: gives values from XML and pythonic dialects the types
//!   their parameter's schema says.
//! - [`shown`]: what the person sees while the reply streams.

mod examples;
pub mod json;
pub mod pythonic;
pub mod read;
pub mod registry;
pub mod scan;
pub mod shown;
pub mod typing;
pub mod xml;

pub use read::{Reply, read_reply};
pub use registry::{Dialect, HERMES, by_name, from_template};
pub use shown::Shown;

use serde_json::Value;

/// How a block's body is turned into calls: `None` when the body is not
/// in this dialect (another dialect that shares the marker may read it);
/// `Err` when it is, but broken (the model is told why).
pub type Parse = fn(&str) -> Option<Result<Vec<RawCall>, String>>;

/// A call as a dialect writes it, before its arguments are typed.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCall {
    pub name: String,
    pub arguments: RawArguments,
}

/// Arguments as written.
#[derive(Debug, Clone, PartialEq)]
pub enum RawArguments {
    /// A JSON object: taken as it is (the schema check says what is wrong).
    Json(Value),
    /// Text values by name (XML dialects): typed by the schema.
    Text(Vec<(String, String)>),
    /// Literal values by name (pythonic dialects): typed by the schema.
    Literal(Vec<(String, Value)>),
}

/// What a marker starts.
#[derive(Debug, Clone, Copy)]
pub enum Role {
    /// A block of calls, read by the dialect's parser.
    Calls,
    /// Reasoning, up to the closing marker.
    Thinking,
    /// A closing reasoning tag whose opening one was in the prompt.
    EndThinking,
    /// A special token that carries nothing to show (`<|im_end|>`).
    Drop,
}

/// One marker of a dialect and how its block ends.
#[derive(Debug)]
pub struct Marker {
    pub open: &'static str,
    /// Any of these ends the block (and is removed).
    pub close: &'static [&'static str],
    /// Any of these ends the block but also starts what follows (a second
    /// `[TOOL_CALLS]`, the next `>>>`).
    pub close_before: &'static [&'static str],
    /// The end of the reply closes the block too: its closing marker is a
    /// stop token that servers drop (`<|call|>`, `<|eom_id|>`), or it has
    /// none (`[TOOL_CALLS]`). Its body must then be complete.
    pub ends_at_stop: bool,
    pub role: Role,
    /// A common word or tag (`<tool>`, `<json>`): a body that is not a
    /// call leaves the block as text, instead of an error for the model.
    pub weak: bool,
}

impl PartialEq for Marker {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Marker {
    /// A block from `open` to one of `close`.
    pub const fn block(open: &'static str, close: &'static [&'static str]) -> Marker {
        Marker {
            open,
            close,
            close_before: &[],
            ends_at_stop: false,
            role: Role::Calls,
            weak: false,
        }
    }

    /// The same, also ended by the end of the reply.
    pub const fn to_stop(mut self) -> Marker {
        self.ends_at_stop = true;
        self
    }

    /// The same, ended also by `before` (which stays).
    pub const fn before(mut self, before: &'static [&'static str]) -> Marker {
        self.close_before = before;
        self
    }

    /// The same, for a common tag.
    pub const fn weak(mut self) -> Marker {
        self.weak = true;
        self
    }

    /// Reasoning from `open` to one of `close`.
    pub const fn thinking(open: &'static str, close: &'static [&'static str]) -> Marker {
        Marker {
            role: Role::Thinking,
            ..Marker::block(open, close)
        }
    }

    /// A token that is removed and starts nothing.
    pub const fn drop(token: &'static str) -> Marker {
        Marker {
            role: Role::Drop,
            ..Marker::block(token, &[])
        }
    }
}
