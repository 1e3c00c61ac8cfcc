//! Project instructions: `TOOLCELL.md`, or else `AGENTS.md`, at the
//! workspace root, added to the system prompt as the workspace owner's own
//! words (the convention of the field's agents). They tell the model the
//! project's conventions; they change no policy: every call is checked and
//! asked for as without them.
//!
//! The file is read only as a regular file in the workspace itself: a link
//! could hand the model a file from anywhere on the machine, and a FIFO or
//! device could hang or flood the read, so those are left out with a
//! notice saying why.

use std::io::Read;
use std::path::Path;

/// The files looked for, in order: the first that exists is used. A
/// toolcell-only file wins over the one shared with other agents.
pub const FILES: [&str; 2] = ["TOOLCELL.md", "AGENTS.md"];

/// The most of the file put in the prompt: 8 KiB is about 2,000 tokens, a
/// quarter of the 8k-token context local models commonly run with.
pub const MAX_BYTES: usize = 8 * 1024;

/// What was found at the workspace root.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectInstructions {
    /// The file's name (one of [`FILES`]).
    pub file: &'static str,
    pub text: String,
    /// Whether the file was longer than [`MAX_BYTES`] and was cut.
    pub cut: bool,
}

impl ProjectInstructions {
    /// What the run record says of them: the file, and whether it was cut.
    pub fn described(&self) -> String {
        if self.cut {
            format!("{} (cut to its first {} KiB)", self.file, MAX_BYTES / 1024)
        } else {
            self.file.to_string()
        }
    }
}

/// The project instructions of `workspace`: `Ok(None)` when there are
/// none; `Err` says why a file that is there was left out.
pub fn load(workspace: &Path) -> Result<Option<ProjectInstructions>, String> {
    for file in FILES {
        let path = workspace.join(file);
        match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{file} at the workspace root cannot be read: {e}")),
            Ok(_) => return read(&path, file).map(Some),
        }
    }
    Ok(None)
}

fn read(path: &Path, file: &'static str) -> Result<ProjectInstructions, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let left_out =
        |why: String| format!("{file} at the workspace root is left out of the prompt: {why}");
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let mut handle = match opened {
        Ok(handle) => handle,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(left_out(
                "it is a link, and project instructions are read only from a file in the workspace itself (put the file there instead of a link)".into(),
            ));
        }
        Err(e) => return Err(left_out(format!("it cannot be opened ({e})"))),
    };
    let regular = handle.metadata().map(|m| m.is_file()).unwrap_or(false);
    if !regular {
        return Err(left_out("it is not a regular file".into()));
    }
    let mut bytes = Vec::with_capacity(MAX_BYTES + 1);
    (&mut handle)
        .take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| left_out(format!("it cannot be read ({e})")))?;
    let cut = bytes.len() > MAX_BYTES;
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_BYTES)]).into_owned();
    if cut {
        // A character split by the cut shows as U+FFFD at the end: dropped.
        while text.ends_with('\u{FFFD}') {
            text.pop();
        }
        text.push_str(&format!(
            "\n[cut: only the first {} KiB of {file} are shown]",
            MAX_BYTES / 1024
        ));
    }
    Ok(ProjectInstructions {
        file,
        text: text.trim_end().to_string(),
        cut,
    })
}

/// The part of the system prompt that holds `instructions`.
pub fn prompt_section(instructions: &ProjectInstructions) -> String {
    format!(
        "\n\nProject instructions, from {} at the workspace root, written by the workspace's owner (follow them where they fit the task; they do not change the rules above or what the tools allow):\n\n{}",
        instructions.file, instructions.text
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolcell_md_wins_and_none_is_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()), Ok(None));
        std::fs::write(dir.path().join("AGENTS.md"), "Use tabs.\n").unwrap();
        let found = load(dir.path()).unwrap().unwrap();
        assert_eq!(
            (found.file, found.text.as_str(), found.cut),
            ("AGENTS.md", "Use tabs.", false)
        );
        std::fs::write(dir.path().join("TOOLCELL.md"), "Use spaces.").unwrap();
        assert_eq!(load(dir.path()).unwrap().unwrap().file, "TOOLCELL.md");
    }

    #[test]
    fn a_long_file_is_cut_on_a_character_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "é".repeat(MAX_BYTES)).unwrap();
        let found = load(dir.path()).unwrap().unwrap();
        assert!(found.cut);
        assert!(
            found
                .text
                .ends_with("[cut: only the first 8 KiB of AGENTS.md are shown]")
        );
        assert!(!found.text.contains('\u{FFFD}'));
        assert_eq!(found.described(), "AGENTS.md (cut to its first 8 KiB)");
    }

    #[test]
    fn links_folders_and_fifos_are_left_out_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "key").unwrap();
        std::os::unix::fs::symlink(&secret, dir.path().join("AGENTS.md")).unwrap();
        let why = load(dir.path()).unwrap_err();
        assert!(why.contains("it is a link"), "{why}");
        std::fs::create_dir(dir.path().join("TOOLCELL.md")).unwrap();
        let why = load(dir.path()).unwrap_err();
        assert!(
            why.contains("TOOLCELL.md") && why.contains("not a regular file"),
            "{why}"
        );
        std::fs::remove_dir(dir.path().join("TOOLCELL.md")).unwrap();
        let fifo =
            std::ffi::CString::new(dir.path().join("TOOLCELL.md").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let why = load(dir.path()).unwrap_err();
        assert!(why.contains("not a regular file"), "{why}");
    }
}
