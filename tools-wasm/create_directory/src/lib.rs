//! `create_directory`: make a folder in the workspace.

use serde::{Deserialize, Serialize};
use toolcell_guest::ToolError;
use toolcell_guest::error::io_error;
use toolcell_guest::files::refuse_state_dir;
use toolcell_guest::path::WorkspacePath;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: String,
    #[serde(default)]
    parents: bool,
}

#[derive(Serialize)]
struct Created {
    path: String,
    /// False when the folder already existed.
    created: bool,
}

toolcell_guest::tool!(create);

fn create(args: Args) -> Result<Created, ToolError> {
    let path = WorkspacePath::parse(&args.path)?;
    let shown = path.as_str();
    refuse_state_dir(&path)?;
    match std::fs::symlink_metadata(path.as_path()) {
        Ok(meta) if meta.is_dir() => {
            return Ok(Created {
                path: shown.into(),
                created: false,
            });
        }
        Ok(_) => {
            return Err(ToolError::Denied(format!(
                "`{shown}` already exists and is not a folder"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_error(shown, &e)),
    }
    let made = if args.parents {
        std::fs::create_dir_all(path.as_path())
    } else {
        std::fs::create_dir(path.as_path())
    };
    match made {
        Ok(()) => Ok(Created {
            path: shown.into(),
            created: true,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ToolError::NotFound(format!(
            "the parent of `{shown}` does not exist: pass parents: true to create it too"
        ))),
        Err(e) => Err(io_error(shown, &e)),
    }
}
