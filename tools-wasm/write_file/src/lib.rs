//! `write_file`: create or overwrite a UTF-8 text file, atomically.

use serde::{Deserialize, Serialize};
use toolcell_guest::ToolError;
use toolcell_guest::error::io_error;
use toolcell_guest::files::{parent_folder, refuse_state_dir, sha256_hex, write_atomic};
use toolcell_guest::path::WorkspacePath;

/// Largest content accepted: bigger files are not written by a model in one
/// go, and the whole content travels through the model's context.
const MAX_CONTENT_BYTES: usize = 5 * 1024 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    content: String,
    #[serde(default)]
    create_parents: bool,
}

#[derive(Serialize)]
struct Written {
    path: String,
    bytes_written: usize,
    created: bool,
    sha256: String,
}

toolcell_guest::tool!(write);

fn write(args: Args) -> Result<Written, ToolError> {
    let path = WorkspacePath::parse(&args.path)?;
    let shown = path.as_str();
    if path.is_root() {
        return Err(ToolError::InvalidArgs(
            "`.` is the workspace folder, not a file: give a file path".into(),
        ));
    }
    refuse_state_dir(&path)?;
    if args.content.len() > MAX_CONTENT_BYTES {
        return Err(ToolError::Denied(format!(
            "the content is {} bytes, over the {MAX_CONTENT_BYTES}-byte limit: write smaller files",
            args.content.len()
        )));
    }
    let (parent, exists) = parent_folder(&path)?;
    if !exists {
        if !args.create_parents {
            return Err(ToolError::NotFound(format!(
                "the folder `{}` does not exist: pass create_parents: true to create it",
                parent.as_str()
            )));
        }
        std::fs::create_dir_all(parent.as_path()).map_err(|e| io_error(parent.as_str(), &e))?;
    }
    let created = write_atomic(&path, args.content.as_bytes())?;
    Ok(Written {
        path: shown.to_string(),
        bytes_written: args.content.len(),
        created,
        sha256: sha256_hex(args.content.as_bytes()),
    })
}
