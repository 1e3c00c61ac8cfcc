//! The contract's error variant, built with the context a model can act on.

use crate::ToolError;
use std::io;
use wasi::filesystem::types::ErrorCode;

/// Maps an I/O error on `path` (workspace-relative, as the model wrote it)
/// onto the contract's error variant.
///
/// WASI reports an attempt to leave a root (an absolute symlink, a `..` that
/// climbs out) as "not permitted"; that is said plainly, since the model
/// cannot fix it by retrying.
pub fn io_error(path: &str, err: &io::Error) -> ToolError {
    match err.kind() {
        io::ErrorKind::NotFound => ToolError::NotFound(format!("`{path}` does not exist")),
        io::ErrorKind::PermissionDenied => ToolError::Denied(format!(
            "`{path}` is not accessible: it lies outside the workspace roots (for example \
             through a symlink) or the root is read-only for this tool"
        )),
        io::ErrorKind::ReadOnlyFilesystem => ToolError::Denied(format!(
            "`{path}` is on a read-only root: this tool was not granted write access"
        )),
        io::ErrorKind::AlreadyExists => ToolError::Denied(format!("`{path}` already exists")),
        io::ErrorKind::IsADirectory => ToolError::InvalidArgs(format!("`{path}` is a directory")),
        io::ErrorKind::NotADirectory => {
            ToolError::InvalidArgs(format!("`{path}` is not a directory"))
        }
        _ => ToolError::Failed(format!("`{path}`: {err}")),
    }
}

/// Maps a `wasi:filesystem` error on `path` onto the contract's error variant,
/// with the same wording as [`io_error`].
pub fn wasi_error(path: &str, code: ErrorCode) -> ToolError {
    let kind = match code {
        ErrorCode::NoEntry => io::ErrorKind::NotFound,
        ErrorCode::NotPermitted | ErrorCode::Access | ErrorCode::Loop => {
            io::ErrorKind::PermissionDenied
        }
        ErrorCode::ReadOnly => io::ErrorKind::ReadOnlyFilesystem,
        ErrorCode::Exist => io::ErrorKind::AlreadyExists,
        ErrorCode::IsDirectory => io::ErrorKind::IsADirectory,
        ErrorCode::NotDirectory => io::ErrorKind::NotADirectory,
        other => return ToolError::Failed(format!("`{path}`: {}", other.message())),
    };
    io_error(path, &io::Error::from(kind))
}
