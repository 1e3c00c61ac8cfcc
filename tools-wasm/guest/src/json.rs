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
/// a block at a time and copied a block at a time (see [`push_escaped`]):
/// a megabyte of text is written several times faster than byte by byte.
pub fn push_str(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    // SAFETY: what is appended is `text` (UTF-8) with ASCII escapes put in
    // place of ASCII bytes, so `out` is UTF-8 again when this returns; it
    // is not read in between.
    push_escaped(unsafe { out.as_mut_vec() }, text.as_bytes());
    out.push('"');
}

/// The longest escape (`\u00XX`): a step keeps room to store one over the
/// end of its block.
const LONGEST_ESCAPE: usize = 6;

/// Appends `bytes` to `out` with the bytes JSON escapes escaped: in
/// blocks of sixty-four bytes each marked once ([`blocks`]) while another
/// sixty-four follow them, then in steps of sixty-four and of sixteen,
/// then a byte at a time.
fn push_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    let at = blocks(out, bytes);
    let at = steps::<64>(out, bytes, at);
    let at = steps::<16>(out, bytes, at);
    for &byte in &bytes[at..] {
        if ESCAPED[byte as usize] {
            let (escape, length) = escape_of(byte);
            out.extend_from_slice(&escape[..length]);
        } else {
            out.push(byte);
        }
    }
}

/// A block of [`blocks`] and [`string_in_place`].
const BLOCK: usize = 64;

/// The most [`escape_block`] writes from where it starts: every byte
/// escaped as `\u00XX`, then a copy of a whole block's length.
const ROOM: usize = BLOCK * LONGEST_ESCAPE + BLOCK;

/// Escapes `bytes` onto `out` a block of [`BLOCK`] bytes at a time while
/// another block follows ([`escape_block`]), and says where it stopped.
/// The copies run on a local end and limit, the vector touched only when
/// it needs more room: WebAssembly compilers keep locals in registers, and
/// would load and store a vector's fields in memory at every step.
fn blocks(out: &mut Vec<u8>, bytes: &[u8]) -> usize {
    let mut at = 0;
    while at + 2 * BLOCK <= bytes.len() {
        // Room for the rest as it is, and for a block's writes; escapes
        // that need more come back here.
        out.reserve(bytes.len() - at + ROOM);
        let base = out.as_mut_ptr();
        let mut len = out.len();
        let last_start = out.capacity() - ROOM;
        while len <= last_start && at + 2 * BLOCK <= bytes.len() {
            // SAFETY: the text has two blocks from `at`; `len` is at most
            // the capacity less ROOM; `out` and `bytes` are apart.
            len += unsafe { escape_block(bytes.as_ptr().add(at), base.add(len)) };
            at += BLOCK;
        }
        // SAFETY: every byte up to `len` was written above (or was in `out`
        // before): each block's runs and escapes, in order.
        unsafe { out.set_len(len) };
    }
    at
}

/// Escapes the block of [`BLOCK`] bytes at `from` to `to`, and says how
/// many bytes it wrote there. The block's bytes that need escapes are
/// marked at once, and each mark is taken in turn: the run before it
/// copied (a whole block's length from where the run starts, the part past
/// the run written over next), then its escape. The marks are the only
/// thing carried from one escape to the next, so escapes one line apart
/// cost a few instructions each, not a new look at the text; the text past
/// the block is what lets a copy run over the block's end.
///
/// # Safety
///
/// `from` is readable for two blocks, `to` writable for [`ROOM`] bytes,
/// and the two ranges do not overlap.
#[inline(always)]
unsafe fn escape_block(from: *const u8, to: *mut u8) -> usize {
    // SAFETY: the caller's: a block readable at `from`.
    let block: &[u8; BLOCK] = unsafe { &*from.cast() };
    // Copies a block's length of the text from `start` within the block
    // to `at`.
    let copy = |start: usize, at: usize| {
        // SAFETY: a block's length from `start` (at most BLOCK) is within
        // the two readable blocks; `at` is less than ROOM less a block
        // past `to`, as the writes before it were at most one escape each.
        unsafe { std::ptr::copy_nonoverlapping(from.add(start), to.add(at), BLOCK) }
    };
    let mut marks = escapes_in(block);
    let mut start = 0;
    let mut len = 0;
    while marks != 0 {
        let first = marks.trailing_zeros() as usize;
        marks &= marks - 1;
        copy(start, len);
        len += first - start;
        let (escape, length) = escape_of(block[first]);
        // SAFETY: as for the copies, for the escape's bytes.
        unsafe { std::ptr::copy_nonoverlapping(escape.as_ptr(), to.add(len), LONGEST_ESCAPE) };
        len += length;
        start = first + 1;
    }
    copy(start, len);
    len + BLOCK - start
}

/// `head`, then `text[part]` as a JSON string (quoted and escaped as
/// [`push_str`] does), written over `bytes` itself: the text is moved to
/// the end of the buffer and escaped from there towards its front, so a
/// megabyte's result takes the pages its text was read into, not as many
/// again (each new page of a cell's memory is a fault, and the faults were
/// a fifth of a 1 MB `read_file`). Where the escapes outgrow the room left
/// between what is written and what is still to read, the rest of the
/// text is moved further on.
///
/// # Panics
///
/// If `part` is not a part of `text` (out of it, or splitting a
/// character).
pub fn string_in_place(text: String, part: std::ops::Range<usize>, head: &str) -> String {
    assert!(
        text.is_char_boundary(part.start)
            && text.is_char_boundary(part.end)
            && part.start <= part.end,
        "string_in_place: {part:?} is not a part of the text"
    );
    let length = part.len();
    let mut bytes = text.into_bytes();
    // Where the first escaped byte goes: after the head and the quote.
    let mut written = head.len() + 1;
    // Room for the escapes of ordinary text (a line break every 40 bytes
    // or so), and for a block's writes past the end of what is written:
    // within what `crate::heap` keeps past a large buffer.
    let mut slack = length / crate::heap::ROOM_SHARE + ROOM;
    let mut read = written + slack;
    let mut end = read + length;
    // Exactly: a large buffer has this room past its end already
    // (`crate::heap`), and takes it where it is.
    bytes.reserve_exact(end.saturating_sub(bytes.len()));
    bytes.resize(end.max(bytes.len()), 0);
    bytes.copy_within(part, read);
    bytes[..head.len()].copy_from_slice(head.as_bytes());
    bytes[head.len()] = b'"';
    while read + 2 * BLOCK <= end {
        if written + ROOM > read {
            // The escapes have used the room: move what is left on by
            // as much again as the text has shown it needs (at least a
            // sixteenth of what is left), into a larger buffer if need be.
            slack = (2 * slack).max((end - read) / 16);
            bytes.resize(end + slack, 0);
            bytes.copy_within(read..end, read + slack);
            read += slack;
            end += slack;
            continue;
        }
        let base = bytes.as_mut_ptr();
        // SAFETY: two blocks are readable from `read` (the loop's test);
        // `written + ROOM` is at most `read`, so the writes end before the
        // text still to read, within the buffer.
        written += unsafe { escape_block(base.add(read), base.add(written)) };
        read += BLOCK;
    }
    // Less than two blocks left: moved out of the way, escaped onto the
    // end of what is written.
    let mut tail = [0u8; 2 * BLOCK];
    let rest = end - read;
    tail[..rest].copy_from_slice(&bytes[read..end]);
    bytes.truncate(written);
    push_escaped(&mut bytes, &tail[..rest]);
    bytes.push(b'"');
    // SAFETY: the head (a `str`), a quote, `text[part]` (UTF-8: whole
    // characters of a `String`) with ASCII escapes put in place of ASCII
    // bytes, and a quote: UTF-8.
    unsafe { String::from_utf8_unchecked(bytes) }
}

/// Escapes `bytes` from `at` onto `out` in steps of `N` bytes while `N`
/// remain, and says where it stopped. Each step stores a block of `N`
/// bytes after the end of `out` and keeps them up to the first byte that
/// needs an escape (all of them when none does), the escape stored over
/// the rest: a run between two escapes costs no call to copy it, and an
/// escape no branch on its length. The steps run on a local end and limit,
/// the vector touched only when it needs more room: WebAssembly compilers
/// keep locals in registers, and would load and store a vector's fields in
/// memory at every step.
fn steps<const N: usize>(out: &mut Vec<u8>, bytes: &[u8], mut at: usize) -> usize {
    let room = N + LONGEST_ESCAPE;
    while at + N <= bytes.len() {
        // Room for the rest as it is, and for a step's stores; escapes that
        // need more come back here.
        out.reserve(bytes.len() - at + room);
        let base = out.as_mut_ptr();
        let mut len = out.len();
        let last_start = out.capacity() - room;
        while len <= last_start {
            let Some(Ok(block)) = bytes.get(at..at + N).map(<&[u8; N]>::try_from) else {
                break;
            };
            let end = base.wrapping_add(len);
            // SAFETY: `len` is at most the capacity less `room`, so the
            // block's `N` bytes are within the vector's allocation.
            unsafe { std::ptr::copy_nonoverlapping(block.as_ptr(), end, N) };
            match escapes_in(block) {
                0 => {
                    at += N;
                    len += N;
                }
                marks => {
                    let first = marks.trailing_zeros() as usize;
                    at += first + 1;
                    let (escape, length) = escape_of(block[first]);
                    // SAFETY: `first` is below `N`, so the escape's bytes
                    // end within the room past `len`.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            escape.as_ptr(),
                            end.add(first),
                            LONGEST_ESCAPE,
                        )
                    };
                    len += first + length;
                }
            }
        }
        // SAFETY: every byte up to `len` was stored by the steps above (or
        // was in `out` before): the blocks up to their first escaped byte,
        // and those bytes' escapes.
        unsafe { out.set_len(len) };
    }
    at
}

/// The letter of the two-byte escape JSON writes for a byte (`n` for a
/// newline), or 0 for the bytes it writes as `\u00XX` (and those it does
/// not escape).
const SHORT_ESCAPES: [u8; 256] = {
    let mut table = [0; 256];
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[0x08] = b'b';
    table[b'\t' as usize] = b't';
    table[b'\n' as usize] = b'n';
    table[0x0c] = b'f';
    table[b'\r' as usize] = b'r';
    table
};

/// The escape of `byte`, one that JSON escapes: its bytes (padded to six)
/// and how many of them it is. A table, not a `match`: a jump through a
/// table of branches was a fifth of a megabyte's escaping.
fn escape_of(byte: u8) -> ([u8; LONGEST_ESCAPE], usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match SHORT_ESCAPES[usize::from(byte)] {
        0 => {
            let high = HEX[usize::from(byte >> 4)];
            let low = HEX[usize::from(byte & 0xf)];
            ([b'\\', b'u', b'0', b'0', high, low], 6)
        }
        letter => ([b'\\', letter, 0, 0, 0, 0], 2),
    }
}

/// The bytes of `block` JSON escapes, a bit each (bit `i` for byte `i`;
/// `N` at most 64): sixteen at a time with WebAssembly's SIMD, which the
/// built-in tools are built with.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn escapes_in<const N: usize>(block: &[u8; N]) -> u64 {
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128_load, v128_or};
    let mut marks = 0;
    for lane in 0..N / 16 {
        // SAFETY: sixteen bytes within `block` (WebAssembly's loads need no
        // alignment).
        let v = unsafe { v128_load(block.as_ptr().add(16 * lane).cast()) };
        let hits = v128_or(
            u8x16_lt(v, u8x16_splat(0x20)),
            v128_or(
                u8x16_eq(v, u8x16_splat(b'"')),
                u8x16_eq(v, u8x16_splat(b'\\')),
            ),
        );
        marks |= u64::from(u8x16_bitmask(hits)) << (16 * lane);
    }
    marks
}

/// [`escapes_in`] elsewhere (the guest crate's own tests), a byte at a
/// time.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn escapes_in<const N: usize>(block: &[u8; N]) -> u64 {
    block.iter().enumerate().fold(0, |marks, (i, &byte)| {
        marks | (u64::from(ESCAPED[byte as usize]) << i)
    })
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
    fn text_that_grows_many_times_over_as_it_is_escaped_is_written_whole() {
        // Escapes six times the length of their byte, in runs long enough
        // that the room made at first runs out again and again.
        for run in [1, 5, 16, 17, 300] {
            let text: String = (0..4000u32)
                .map(|i| {
                    if i % (run + 1) == 0 {
                        char::from(b'a' + (i % 26) as u8)
                    } else {
                        char::from((i % 0x20) as u8)
                    }
                })
                .collect();
            let mut ours = String::from("[");
            push_str(&mut ours, &text);
            assert_eq!(
                ours[1..],
                serde_json::to_string(&text).unwrap(),
                "run {run}"
            );
        }
    }

    /// `head` and `text[range]` as [`string_in_place`] writes them, and as
    /// serde_json does.
    fn in_place_and_serde(
        text: &str,
        range: std::ops::Range<usize>,
        head: &str,
    ) -> (String, String) {
        let ours = string_in_place(text.to_string(), range.clone(), head);
        let serde = format!("{head}{}", serde_json::to_string(&text[range]).unwrap());
        (ours, serde)
    }

    #[test]
    fn text_escaped_over_its_own_buffer_is_what_serde_json_writes() {
        // Plain lines, lines of quotes and tabs, and runs of control
        // characters (six bytes each) that outgrow the room left again and
        // again; in every length around the block sizes, whole and in part.
        let line = |i: usize, kind: usize| match kind {
            0 => format!("line {i} of a file, é and ✓ in it\n"),
            1 => format!("\t\"quoted {i}\" and a \\ path\r\n"),
            _ => (0..(i % 90))
                .map(|j| char::from((j % 0x20) as u8))
                .collect(),
        };
        for kind in 0..3 {
            let text: String = (0..3000).map(|i| line(i, kind)).collect();
            for length in (0..300).chain([1000, 4095, 4096, 65_537, text.len()]) {
                let mut end = length.min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                for head in ["", "{\"content\":"] {
                    let (ours, serde) = in_place_and_serde(&text, 0..end, head);
                    assert_eq!(ours, serde, "kind {kind}, length {end}");
                }
            }
            // A part from the middle, and one at the very end.
            let mut from = text.len() / 3;
            while !text.is_char_boundary(from) {
                from += 1;
            }
            for range in [from..text.len() - text.len() / 4, from..text.len()] {
                let mut range = range;
                while !text.is_char_boundary(range.end) {
                    range.end -= 1;
                }
                let (ours, serde) = in_place_and_serde(&text, range.clone(), "{");
                assert_eq!(ours, serde, "kind {kind}, part {range:?}");
            }
        }
    }

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
