//! Page-aligned I/O buffers, as O_DIRECT requires. Not a general allocator:
//! buffers are made once per worker and reused for every request.

use std::alloc::{alloc_zeroed, dealloc, Layout};

pub const BUFFER_ALIGNMENT: usize = 4096;

/// A zeroed, 4 KiB-aligned heap buffer that never moves.
pub struct AlignedBuffer {
    pointer: *mut u8,
    layout: Layout,
}

// The buffer is plain memory owned by one worker at a time.
unsafe impl Send for AlignedBuffer {}

impl AlignedBuffer {
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len.max(BUFFER_ALIGNMENT), BUFFER_ALIGNMENT)
            .expect("buffer size fits in memory");
        let pointer = unsafe { alloc_zeroed(layout) };
        assert!(!pointer.is_null(), "out of memory allocating {len} bytes");
        AlignedBuffer { pointer, layout }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.pointer
    }

    pub fn as_slice(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.pointer, self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.pointer, self.layout.size()) }
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        unsafe { dealloc(self.pointer, self.layout) }
    }
}
