//! The bytes of a JSON string that the check treats specially, found in
//! many bytes at once: a bit a byte for the quotes, backslashes, control
//! characters and `n`s of a 64-byte block ([`marks`]: AVX2 where the
//! processor has it, SSE2 elsewhere on x86-64, a byte at a time on other
//! processors), and for the first 32 bytes of a string ([`short_marks`]).
//! [`super::json_check`] reads strings with them.

/// Bytes [`short_marks`] looks at.
pub const SHORT: usize = 32;

/// The quotes of `window`, and its backslashes and control characters, a
/// bit a byte, with SSE2 ([`sixteen_marks`]).
#[cfg(target_arch = "x86_64")]
pub fn short_marks(window: &[u8; SHORT]) -> (u32, u32) {
    let mut quotes = 0;
    let mut stops = 0;
    for (lane, sixteen) in window.chunks_exact(16).enumerate() {
        let [q, backslashes, controls, _] = sixteen_marks(sixteen.try_into().expect("16 bytes"));
        quotes |= u32::from(q) << (16 * lane);
        stops |= u32::from(backslashes | controls) << (16 * lane);
    }
    (quotes, stops)
}

/// The quotes, backslashes, control characters and `n`s of sixteen bytes,
/// a bit a byte, with SSE2, which every x86-64 processor has: the lanes of
/// [`marks_sse2`] and [`short_marks`] (what a caller does not use of them
/// is left out when this is inlined).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn sixteen_marks(sixteen: &[u8; 16]) -> [u16; 4] {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64 (the intrinsics need no more), and the
    // load is an unaligned one of the sixteen bytes.
    unsafe {
        let v = _mm_loadu_si128(sixteen.as_ptr().cast());
        [
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
            // At most 0x1f when its unsigned minimum with 0x1f is itself.
            _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v),
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'n' as i8)),
        ]
        .map(|found| _mm_movemask_epi8(found) as u16)
    }
}

/// [`short_marks`] elsewhere, a byte at a time.
#[cfg(not(target_arch = "x86_64"))]
pub fn short_marks(window: &[u8; SHORT]) -> (u32, u32) {
    window
        .iter()
        .enumerate()
        .fold((0, 0), |(quotes, stops), (i, &byte)| {
            (
                quotes | (u32::from(byte == b'"') << i),
                stops | (u32::from(byte == b'\\' || byte < 0x20) << i),
            )
        })
}

/// The quotes, backslashes, control characters and `n`s of a block, a bit
/// a byte (bit `i` for byte `i`).
#[derive(Default)]
pub struct Marks {
    pub quotes: u64,
    pub backslashes: u64,
    pub controls: u64,
    pub ns: u64,
}

impl Marks {
    /// Adds one part's marks, each already shifted to its part's place:
    /// quotes, backslashes, control characters and `n`s.
    fn add(&mut self, [quotes, backslashes, controls, ns]: [u64; 4]) {
        self.quotes |= quotes;
        self.backslashes |= backslashes;
        self.controls |= controls;
        self.ns |= ns;
    }
}

/// [`Marks`] thirty-two bytes at a time with AVX2 where the processor has
/// it (half the instructions of SSE2's sixteen: a megabyte's string was
/// checked in 180 µs), sixteen with SSE2 elsewhere.
#[cfg(target_arch = "x86_64")]
pub fn marks(block: &[u8; 64]) -> Marks {
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2.
        unsafe { marks_avx2(block) }
    } else {
        marks_sse2(block)
    }
}

/// [`Marks`] with AVX2, two vectors of thirty-two bytes.
///
/// # Safety
///
/// The processor has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn marks_avx2(block: &[u8; 64]) -> Marks {
    use std::arch::x86_64::{
        _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8,
        _mm256_set1_epi8,
    };
    let mut marks = Marks::default();
    for (lane, half) in block.chunks_exact(32).enumerate() {
        // SAFETY: an unaligned load of thirty-two bytes from a chunk of
        // thirty-two; the caller's processor has AVX2.
        let v = unsafe { _mm256_loadu_si256(half.as_ptr().cast()) };
        let [quotes, backslashes, controls, ns] = [
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)),
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)),
            // At most 0x1f when its unsigned minimum with 0x1f is itself.
            _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v),
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'n' as i8)),
        ]
        .map(|found| u64::from(_mm256_movemask_epi8(found) as u32) << (32 * lane));
        marks.add([quotes, backslashes, controls, ns]);
    }
    marks
}

/// [`Marks`] sixteen bytes at a time with SSE2, which every x86-64
/// processor has.
#[cfg(target_arch = "x86_64")]
fn marks_sse2(block: &[u8; 64]) -> Marks {
    let mut marks = Marks::default();
    for (lane, sixteen) in block.chunks_exact(16).enumerate() {
        let found = sixteen_marks(sixteen.try_into().expect("16 bytes"));
        marks.add(found.map(|bits| u64::from(bits) << (16 * lane)));
    }
    marks
}

/// [`Marks`] elsewhere, a byte at a time.
#[cfg(not(target_arch = "x86_64"))]
pub fn marks(block: &[u8; 64]) -> Marks {
    marks_by_bytes(block)
}

/// [`Marks`] a byte at a time: the other way, and its tests' reference.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn marks_by_bytes(block: &[u8; 64]) -> Marks {
    let bits = |test: fn(u8) -> bool| {
        block
            .iter()
            .enumerate()
            .fold(0, |bits, (i, &byte)| bits | (u64::from(test(byte)) << i))
    };
    Marks {
        quotes: bits(|byte| byte == b'"'),
        backslashes: bits(|byte| byte == b'\\'),
        controls: bits(|byte| byte < 0x20),
        ns: bits(|byte| byte == b'n'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::json_check::tests::xorshift;

    #[test]
    fn a_block_is_marked_as_a_byte_at_a_time_marks_it() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let mut block = [0u8; 64];
            for byte in &mut block {
                *byte = [b'"', b'\\', 0x1f, 0x20, 0x00, 0x80, 0xff, b'n'][(next() % 8) as usize];
            }
            let slow = marks_by_bytes(&block);
            let mut ways = vec![("marks", marks(&block))];
            #[cfg(target_arch = "x86_64")]
            {
                ways.push(("sse2", marks_sse2(&block)));
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the processor has AVX2.
                    ways.push(("avx2", unsafe { marks_avx2(&block) }));
                }
            }
            for (way, fast) in ways {
                assert_eq!(
                    (fast.quotes, fast.backslashes, fast.controls, fast.ns),
                    (slow.quotes, slow.backslashes, slow.controls, slow.ns),
                    "{way}: {block:?}"
                );
            }
        }
    }

    #[test]
    fn a_short_window_is_marked_as_a_byte_at_a_time_marks_it() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let mut window = [0u8; SHORT];
            for byte in &mut window {
                *byte = [b'"', b'\\', 0x1f, 0x20, 0x00, 0x80, 0xff, b'a'][(next() % 8) as usize];
            }
            let slow = window
                .iter()
                .enumerate()
                .fold((0u32, 0u32), |(q, s), (i, &byte)| {
                    (
                        q | (u32::from(byte == b'"') << i),
                        s | (u32::from(byte == b'\\' || byte < 0x20) << i),
                    )
                });
            assert_eq!(short_marks(&window), slow, "{window:?}");
        }
    }
}
