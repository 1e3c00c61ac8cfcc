//! File helpers for the tools that read and change files.
//!
//! - [`write_atomic`]: write to a temporary file in the same folder, flush it
//!   to disk, then rename it over the target: a crash at any moment leaves
//!   the old content or the new, never a mix.
//! - [`as_text`], [`decode_text`]: bytes to UTF-8 text, refusing binary
//!   content; [`line_start`], [`nth_newline`]: where a line begins, where
//!   one ends.
//! - [`sha256_hex`]: the hash tools report so a model can say which version
//!   of a file it means.
//! - [`move_to_trash`]: what `delete_path` does instead of deleting.

use crate::ToolError;
use crate::error::io_error;
use crate::path::WorkspacePath;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where deleted paths go, inside the root they were deleted from.
pub const TRASH_DIR: &str = ".toolcell/trash";
/// toolcell's own state folder in a root: tools do not change it.
pub const STATE_DIR: &str = ".toolcell";
/// Attempts at finding an unused temporary or trash name before giving up.
const NAME_ATTEMPTS: u32 = 16;

/// What an entry is, as results name it; symlinks are never followed.
pub fn entry_kind(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_symlink() {
        "symlink"
    } else if meta.is_dir() {
        "directory"
    } else {
        "file"
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `bytes` holds a NUL byte, the mark of binary content (as grep
/// decides). `memchr` is vectorised in wasm; `<[u8]>::contains` is not.
pub fn has_nul(bytes: &[u8]) -> bool {
    memchr::memchr(0, bytes).is_some()
}

/// A file's bytes as text, and what was learned on the way.
pub struct Text {
    pub text: String,
    /// How many newlines it holds.
    pub newlines: usize,
}

/// `bytes` as UTF-8 text with its newlines counted, or `None` for binary
/// content (a NUL byte, or not UTF-8, as grep decides). One pass over the
/// bytes finds the NULs, the newlines and whether all are ASCII; only text
/// with other bytes is then checked as UTF-8.
pub fn as_text(bytes: Vec<u8>) -> Option<Text> {
    let scan = scan(&bytes);
    if scan.nul {
        return None;
    }
    let text = if scan.ascii {
        // SAFETY: ASCII bytes are UTF-8.
        unsafe { String::from_utf8_unchecked(bytes) }
    } else {
        String::from_utf8(bytes).ok()?
    };
    Some(Text {
        text,
        newlines: scan.newlines,
    })
}

/// What one pass over bytes found.
struct Scan {
    nul: bool,
    ascii: bool,
    newlines: usize,
}

/// Sixty-four bytes a step with WebAssembly's SIMD, in four vectors: the
/// NULs found by the bytes' least value (zero only where one is NUL), the
/// high bits gathered in a vector, the newlines counted in one whose lanes
/// are summed every [`STEPS_PER_SUM`] steps, before a lane could overflow.
/// Four vectors a step, not one: Cranelift kept the vectors of a step of
/// one on the stack and paid its loop at every sixteen bytes (a 1 MB
/// `read_file` 3.34 → 3.13 ms with four, BENCHMARKS.md, issue 21).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn scan(bytes: &[u8]) -> Scan {
    use core::arch::wasm32::{
        i8x16_sub, i16x8_extadd_pairwise_u8x16, i32x4_extadd_pairwise_u16x8, u8x16_bitmask,
        u8x16_eq, u8x16_min, u8x16_splat, u32x4_extract_lane, v128, v128_any_true, v128_load,
        v128_or,
    };
    /// Steps counted before the lanes (at most 255 each, a step adding up
    /// to four) are summed.
    const STEPS_PER_SUM: usize = 63;
    let newline = u8x16_splat(b'\n');
    let zero = u8x16_splat(0);
    // The sixteen counts added up: pairs, then fours, then the four lanes.
    let lanes_sum = |counts: v128| {
        let fours = i32x4_extadd_pairwise_u16x8(i16x8_extadd_pairwise_u8x16(counts));
        [
            u32x4_extract_lane::<0>(fours),
            u32x4_extract_lane::<1>(fours),
            u32x4_extract_lane::<2>(fours),
            u32x4_extract_lane::<3>(fours),
        ]
        .iter()
        .map(|&lane| lane as usize)
        .sum::<usize>()
    };
    let mut steps = bytes.chunks_exact(64);
    let mut newlines = 0;
    let mut least = u8x16_splat(0xff);
    let mut bits = zero;
    loop {
        let mut counts = zero;
        let mut counted = 0;
        for step in steps.by_ref().take(STEPS_PER_SUM) {
            // SAFETY: four loads of sixteen bytes within a chunk of
            // sixty-four (WebAssembly loads need no alignment).
            let [a, b, c, d] =
                [0, 16, 32, 48].map(|at| unsafe { v128_load(step.as_ptr().add(at).cast()) });
            // A match is all ones (-1): subtracting it counts one.
            counts = i8x16_sub(counts, u8x16_eq(a, newline));
            counts = i8x16_sub(counts, u8x16_eq(b, newline));
            counts = i8x16_sub(counts, u8x16_eq(c, newline));
            counts = i8x16_sub(counts, u8x16_eq(d, newline));
            least = u8x16_min(least, u8x16_min(u8x16_min(a, b), u8x16_min(c, d)));
            bits = v128_or(bits, v128_or(v128_or(a, b), v128_or(c, d)));
            counted += 1;
        }
        newlines += lanes_sum(counts);
        if counted < STEPS_PER_SUM {
            break;
        }
    }
    let rest = scan_bytes(steps.remainder());
    Scan {
        nul: v128_any_true(u8x16_eq(least, zero)) || rest.nul,
        ascii: u8x16_bitmask(bits) == 0 && rest.ascii,
        newlines: newlines + rest.newlines,
    }
}

/// [`scan`] elsewhere (the guest crate's own tests), a byte at a time.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn scan(bytes: &[u8]) -> Scan {
    scan_bytes(bytes)
}

/// [`scan`] a byte at a time: for the last few bytes, and its tests.
fn scan_bytes(bytes: &[u8]) -> Scan {
    Scan {
        nul: bytes.contains(&0),
        ascii: bytes.is_ascii(),
        newlines: bytes.iter().filter(|&&b| b == b'\n').count(),
    }
}

/// The index in `bytes` where line `line` (from 1) begins: past the
/// newline that ends the line before it, or the end when there is none.
/// The newlines are found with `memchr` (vectorised in wasm), not a byte
/// at a time.
pub fn line_start(bytes: &[u8], line: usize) -> usize {
    match line {
        0 | 1 => 0,
        _ => nth_newline(bytes, line - 2).map_or(bytes.len(), |newline| newline + 1),
    }
}

/// The index of the `n`th newline of `bytes` (from 0), if it has that
/// many.
pub fn nth_newline(bytes: &[u8], n: usize) -> Option<usize> {
    memchr::memchr_iter(b'\n', bytes).nth(n)
}

/// `bytes` as UTF-8 text; binary content (a NUL byte, or not UTF-8) is
/// refused with its size, so the model knows what it met.
pub fn decode_text(shown: &str, bytes: Vec<u8>) -> Result<String, ToolError> {
    let size = bytes.len();
    as_text(bytes).map(|text| text.text).ok_or_else(|| {
        ToolError::Denied(format!(
            "`{shown}` is not UTF-8 text ({size} bytes, binary content): only text files can be read or edited"
        ))
    })
}

/// A name unlikely to be taken, for temporary and trash entries.
fn unique_suffix(attempt: u32) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}-{:09}-{attempt}", now.as_secs(), now.subsec_nanos())
}

/// Refuses changes inside toolcell's own state folder (`.toolcell/`).
pub fn refuse_state_dir(path: &WorkspacePath) -> Result<(), ToolError> {
    let state = WorkspacePath::parse(STATE_DIR)?;
    if path.starts_with(&state) {
        return Err(ToolError::Denied(format!(
            "`{}` is inside `{STATE_DIR}/`, toolcell's own state (installed tools, trash): tools do not change it",
            path.as_str()
        )));
    }
    Ok(())
}

/// The folder that would hold `path`, and whether it exists; an error when
/// it is a file or cannot be examined. (Whether a missing folder is created
/// is the caller's choice.)
pub fn parent_folder(path: &WorkspacePath) -> Result<(WorkspacePath, bool), ToolError> {
    let parent = path
        .parent()
        .ok_or_else(|| ToolError::InvalidArgs("the workspace root has no parent folder".into()))?;
    match std::fs::metadata(parent.as_path()) {
        Ok(meta) if meta.is_dir() => Ok((parent, true)),
        Ok(_) => Err(ToolError::InvalidArgs(format!(
            "`{}` is a file, not a folder",
            parent.as_str()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((parent, false)),
        Err(e) => Err(io_error(parent.as_str(), &e)),
    }
}

/// Writes `bytes` to `path` atomically. Returns whether the file was created
/// (rather than replaced). The parent folder must exist.
pub fn write_atomic(path: &WorkspacePath, bytes: &[u8]) -> Result<bool, ToolError> {
    let shown = path.as_str();
    let parent = path.parent().ok_or_else(|| {
        ToolError::InvalidArgs("the workspace root is a folder, not a file".into())
    })?;
    let created = match std::fs::symlink_metadata(path.as_path()) {
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::InvalidArgs(format!("`{shown}` is a directory")));
        }
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(io_error(shown, &e)),
    };
    let mut attempt = 0;
    let (temp, mut file) = loop {
        let temp = parent.join(&format!(
            ".{}.toolcell-tmp-{}",
            path.file_name(),
            unique_suffix(attempt)
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(temp.as_path())
        {
            Ok(file) => break (temp, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < NAME_ATTEMPTS => {
                attempt += 1
            }
            Err(e) => return Err(io_error(shown, &e)),
        }
    };
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written.and_then(|()| std::fs::rename(temp.as_path(), path.as_path())) {
        let _ = std::fs::remove_file(temp.as_path());
        return Err(io_error(shown, &e));
    }
    Ok(created)
}

/// Moves `path` into the trash of its root and returns where it went
/// (workspace-relative), so the user can restore it.
pub fn move_to_trash(path: &WorkspacePath) -> Result<WorkspacePath, ToolError> {
    let shown = path.as_str();
    let trash = WorkspacePath::parse(TRASH_DIR)?;
    std::fs::create_dir_all(trash.as_path()).map_err(|e| io_error(TRASH_DIR, &e))?;
    let mut attempt = 0;
    loop {
        let target = trash.join(&format!("{}-{}", unique_suffix(attempt), path.file_name()));
        if std::fs::symlink_metadata(target.as_path()).is_ok() && attempt < NAME_ATTEMPTS {
            attempt += 1;
            continue;
        }
        return match std::fs::rename(path.as_path(), target.as_path()) {
            Ok(()) => Ok(target),
            Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
                Err(ToolError::Failed(format!(
                    "`{shown}` lies on another root than the trash (`{TRASH_DIR}` of the workspace) and cannot be moved there"
                )))
            }
            Err(e) => Err(io_error(shown, &e)),
        };
    }
}
