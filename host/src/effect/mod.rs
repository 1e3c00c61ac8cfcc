//! What a call does to the workspace's files, seen by the host itself:
//! each built-in tool's effect, declared once ([`declared`]), the host's
//! own view of the roots ([`roots`]), the preview a person approves
//! ([`preview`]) and the changes kept for undo ([`changes`]).

pub mod changes;
pub mod declared;
pub mod preview;
pub mod roots;
