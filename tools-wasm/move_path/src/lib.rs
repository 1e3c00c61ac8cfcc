//! `move_path`: move or rename a file or folder inside the workspace.

use serde::{Deserialize, Serialize};
use toolcell_guest::ToolError;
use toolcell_guest::descriptors::Roots;
use toolcell_guest::error::io_error;
use toolcell_guest::files::{entry_kind, parent_folder, refuse_state_dir};
use toolcell_guest::path::WorkspacePath;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    from: String,
    to: String,
}

#[derive(Serialize)]
struct Moved {
    from: String,
    to: String,
    #[serde(rename = "type")]
    kind: &'static str,
}

toolcell_guest::tool!(move_path);

fn move_path(args: Args) -> Result<Moved, ToolError> {
    let from = WorkspacePath::parse(&args.from)?;
    let to = WorkspacePath::parse(&args.to)?;
    for path in [&from, &to] {
        if path.is_root() || Roots::new().is_root(path.as_str()) {
            return Err(ToolError::Denied(format!(
                "`{}` is a workspace root: it cannot be moved or replaced",
                path.as_str()
            )));
        }
    }
    refuse_state_dir(&from)?;
    refuse_state_dir(&to)?;
    let meta =
        std::fs::symlink_metadata(from.as_path()).map_err(|e| io_error(from.as_str(), &e))?;
    if to.starts_with(&from) {
        return Err(ToolError::InvalidArgs(format!(
            "`{}` lies inside `{}`: a folder cannot be moved into itself",
            to.as_str(),
            from.as_str()
        )));
    }
    if std::fs::symlink_metadata(to.as_path()).is_ok() {
        return Err(ToolError::Denied(format!(
            "`{}` already exists: move_path never overwrites; delete it first or choose another name",
            to.as_str()
        )));
    }
    let (parent, exists) = parent_folder(&to)?;
    if !exists {
        return Err(ToolError::NotFound(format!(
            "the folder `{}` does not exist: create it first with create_directory",
            parent.as_str()
        )));
    }
    let kind = entry_kind(&meta);
    let moved = if kind == "file" {
        // A hard link cannot replace an existing name, so the check above
        // cannot be raced into an overwrite; then the old name goes.
        std::fs::hard_link(from.as_path(), to.as_path())
            .and_then(|()| std::fs::remove_file(from.as_path()))
    } else {
        std::fs::rename(from.as_path(), to.as_path())
    };
    match moved {
        Ok(()) => Ok(Moved {
            from: from.as_str().into(),
            to: to.as_str().into(),
            kind,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(ToolError::Denied(format!(
            "`{}` already exists: move_path never overwrites",
            to.as_str()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            Err(ToolError::Failed(format!(
                "`{}` and `{}` are on different devices: a move cannot cross them; copy the content with read_file and write_file instead",
                from.as_str(),
                to.as_str()
            )))
        }
        Err(e) => Err(io_error(from.as_str(), &e)),
    }
}
