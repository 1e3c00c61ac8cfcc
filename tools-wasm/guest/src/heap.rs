//! The cells' allocator: the C library's, with room kept past the end of
//! large buffers so that they can grow a little without moving.
//!
//! A file read whole arrives in a buffer exactly its size (the host's
//! answer is written where the allocator put it), and its JSON result is
//! written over that same buffer, a little longer for its escapes
//! ([`crate::json::string_in_place`]). Grown by a thirty-second, a
//! megabyte's buffer had to move more often than not: the allocator's
//! free space past it was whatever the last growth of memory left, and a
//! move is a second megabyte of new pages, each a fault. With the room
//! kept here, the growth stays where it is.
//!
//! The room is address space only: a page of a cell's memory costs nothing
//! until it is written.

use std::alloc::{GlobalAlloc, Layout, System};

/// Buffers from this size on get room past their end.
const LARGE: usize = 256 * 1024;

/// The share of a large buffer's size kept as room past it: a
/// thirty-second (a line break every 40 bytes or so, escaped, takes that
/// much more). [`crate::json::string_in_place`] counts on it.
pub const ROOM_SHARE: usize = 32;

/// The room kept past a large buffer of `size` bytes: its
/// [`ROOM_SHARE`], and a few pages for what goes before and after the
/// text.
const fn room_past(size: usize) -> usize {
    size / ROOM_SHARE + 4 * 4096
}

/// [`System`], with [`room_past`] large allocations.
pub struct Roomy;

// SAFETY: every call is the system allocator's, with the size asked for or
// more; a larger block serves the layout asked for.
unsafe impl GlobalAlloc for Roomy {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, made larger (same alignment).
        unsafe { System.alloc(roomy(layout)) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(roomy(layout)) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator with this layout; the C
        // library's `free` needs no size.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // The size asked for, not more: the C library's `realloc` keeps a
        // block where it is when the block already holds that much.
        // SAFETY: the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// `layout` with [`room_past`] its size when it is large.
fn roomy(layout: Layout) -> Layout {
    if layout.size() < LARGE {
        return layout;
    }
    Layout::from_size_align(
        layout.size().saturating_add(room_past(layout.size())),
        layout.align(),
    )
    .unwrap_or(layout)
}
