//! One tool call, from the name and arguments a caller has to the result it
//! gets back. [`runner`] is the one path every caller takes (admit, ask,
//! keep what it replaces, run, record); [`dispatch`] holds the steps and
//! what the calls of a workspace share; [`admission`] is what a call passes
//! before it may run, and the asking; [`error`] is the one list of the
//! kinds of failure; [`view`] is what a caller is shown as a call goes;
//! [`offer`] is which tools a model is offered.

pub mod admission;
pub mod dispatch;
pub mod error;
pub mod offer;
pub mod runner;
pub mod view;
