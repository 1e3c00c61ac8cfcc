//! JSON text written directly, for results too large to build as values
//! first (a listing of 20,000 entries): the same text `serde_json` writes
//! for the same strings, numbers and booleans, without the tree (held to
//! serde_json's escapes by the test
//! `list_directory_gives_names_json_must_escape_as_they_are`).

use std::fmt::Write;

/// The bytes a JSON string escapes: `"`, `\` and the control characters.
const ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Appends `text` to `out` as a JSON string, escaped as `serde_json`
/// escapes it: `"` and `\`, the short forms `\b \t \n \f \r`, and `\u00XX`
/// (lower-case) for the other control characters. The text is looked at
/// sixteen bytes at a time and copied a block at a time (see
/// [`push_escaped`]): a megabyte of text is written several times faster
/// than byte by byte.
pub fn push_str(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    // SAFETY: what is appended is `text` (UTF-8) with ASCII escapes put in
    // place of ASCII bytes, so `out` is UTF-8 again when this returns; it
    // is not read in between.
    push_escaped(unsafe { out.as_mut_vec() }, text.as_bytes());
    out.push('"');
}

/// Appends `bytes` to `out` with the bytes JSON escapes escaped: whole
/// blocks of sixteen bytes copied while none needs it, and a block that
/// holds one copied up to it (the rest of the block is dropped again), so
/// that a run between two escapes costs no call to copy it.
fn push_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut at = 0;
    while let Some(block) = bytes.get(at..at + 16) {
        let block: &[u8; 16] = block.try_into().unwrap_or(&[0; 16]);
        let kept = out.len();
        out.extend_from_slice(block);
        match first_escaped(block) {
            None => at += 16,
            Some(first) => {
                out.truncate(kept + first);
                push_escape(out, block[first]);
                at += first + 1;
            }
        }
    }
    for &byte in &bytes[at..] {
        if ESCAPED[byte as usize] {
            push_escape(out, byte);
        } else {
            out.push(byte);
        }
    }
}

/// The escape of `byte`, one that JSON escapes.
fn push_escape(out: &mut Vec<u8>, byte: u8) {
    let short: &[u8] = match byte {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        b'\t' => b"\\t",
        b'\n' => b"\\n",
        0x0c => b"\\f",
        b'\r' => b"\\r",
        _ => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0xf)]);
            return;
        }
    };
    out.extend_from_slice(short);
}

/// Where in `block` the first byte JSON escapes is: sixteen compared at
/// once with WebAssembly's SIMD, which the built-in tools are built with.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn first_escaped(block: &[u8; 16]) -> Option<usize> {
    use core::arch::wasm32::{i64x2, u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128_or};
    let (low, high) = block.split_at(8);
    let word = |half: &[u8]| i64::from_le_bytes(half.try_into().unwrap_or([0; 8]));
    let v = i64x2(word(low), word(high));
    let hits = v128_or(
        u8x16_lt(v, u8x16_splat(0x20)),
        v128_or(
            u8x16_eq(v, u8x16_splat(b'"')),
            u8x16_eq(v, u8x16_splat(b'\\')),
        ),
    );
    match u8x16_bitmask(hits) {
        0 => None,
        mask => Some(mask.trailing_zeros() as usize),
    }
}

/// [`first_escaped`] elsewhere (the guest crate's own tests), a byte at a time.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn first_escaped(block: &[u8; 16]) -> Option<usize> {
    block.iter().position(|&byte| ESCAPED[byte as usize])
}

/// Appends `"key":` to `out`; `key` is a plain identifier.
pub fn push_key(out: &mut String, key: &str) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
}

/// Appends the number `n` to `out`.
pub fn push_u64(out: &mut String, n: u64) {
    // Infallible: writing to a String.
    let _ = write!(out, "{n}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_is_escaped_as_serde_json_escapes_it_wherever_it_falls_in_a_word() {
        for byte in 0u8..=0x7f {
            for at in 0..40 {
                let mut text = "a".repeat(at);
                text.push(byte as char);
                text.push_str("é tail");
                let mut ours = String::new();
                push_str(&mut ours, &text);
                assert_eq!(
                    ours,
                    serde_json::to_string(&text).unwrap(),
                    "byte {byte:#x} at {at}"
                );
            }
        }
    }
}
