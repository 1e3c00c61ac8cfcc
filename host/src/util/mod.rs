//! The ground floor: helpers every layer may use and that know nothing of
//! toolcell's concepts.
//!
//! - [`text`]: shortening text for people and models, and the one way text
//!   from outside reaches a terminal;
//! - [`names`]: the rules for tool, function and environment names;
//! - [`child`]: programs toolcell starts (scrubbed environment, own process
//!   group, ended with toolcell);
//! - [`locations`]: where toolcell keeps its files;
//! - [`openat`]: `openat2` and a descriptor's real path;
//! - [`folder`]: a folder's names and types from its directory stream;
//! - [`entry`]: the process's entry, without Rust's runtime's start-up;
//! - [`heap`]: the process's allocator (mimalloc), and giving freed memory back;
//! - [`idle`]: threads that work only in a core's spare time;
//! - [`glob`]: path patterns matched name by name (`*`, `?`, `**`);
//! - [`json_text`]: JSON checked once and kept as text;
//! - [`json_check`]: JSON's grammar, nesting and spacing checked in one pass;
//! - [`json_marks`]: the bytes of a string the check looks at, found with SIMD;
//! - [`problem`]: what is wrong in a TOML file, said the same way for the
//!   manifest and the config;
//! - [`secret`]: random tokens, compared in constant time;
//! - [`listener`]: the HTTP servers' sockets, sending without delay.

pub mod child;
pub mod entry;
pub mod folder;
pub mod glob;
pub mod heap;
pub mod idle;
pub mod json_check;
pub mod json_marks;
pub mod json_text;
pub mod listener;
pub mod locations;
pub mod names;
pub mod openat;
pub mod problem;
pub mod secret;
pub mod text;
