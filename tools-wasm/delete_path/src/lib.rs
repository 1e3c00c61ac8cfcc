//! `delete_path`: move a file or folder into the workspace trash.
//!
//! Nothing is destroyed: what is deleted goes to `.toolcell/trash/` under a
//! unique name, and the result says where, so it can be restored.

use serde::{Deserialize, Serialize};
use toolcell_guest::ToolError;
use toolcell_guest::descriptors::Roots;
use toolcell_guest::error::io_error;
use toolcell_guest::files::{entry_kind, move_to_trash, refuse_state_dir};
use toolcell_guest::path::WorkspacePath;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    recursive: bool,
}

#[derive(Serialize)]
struct Deleted {
    path: String,
    #[serde(rename = "type")]
    kind: &'static str,
    /// Where it went: move it back from there to restore it.
    trashed_to: String,
}

toolcell_guest::tool!(delete);

fn delete(args: Args) -> Result<Deleted, ToolError> {
    let path = WorkspacePath::parse(&args.path)?;
    let shown = path.as_str();
    if path.is_root() || Roots::new().is_root(shown) {
        return Err(ToolError::Denied(format!(
            "`{shown}` is a workspace root: delete_path never deletes a root"
        )));
    }
    refuse_state_dir(&path)?;
    let meta = std::fs::symlink_metadata(path.as_path()).map_err(|e| io_error(shown, &e))?;
    let kind = entry_kind(&meta);
    if kind == "directory" {
        let entries = std::fs::read_dir(path.as_path())
            .map_err(|e| io_error(shown, &e))?
            .count();
        if entries > 0 && !args.recursive {
            return Err(ToolError::Denied(format!(
                "`{shown}` is a folder with {entries} entries: pass recursive: true to delete it with its contents"
            )));
        }
    }
    let target = move_to_trash(&path)?;
    Ok(Deleted {
        path: shown.into(),
        kind,
        trashed_to: target.as_str().into(),
    })
}
