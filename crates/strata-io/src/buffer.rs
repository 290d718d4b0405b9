//! Page-aligned I/O buffers, as O_DIRECT requires. Not a general allocator:
//! buffers are made once per worker and reused for every request.
//!
//! Buffers of 512 KiB and more are mapped on their own, 2 MiB-aligned, and
//! advised to use transparent huge pages: a 1 MiB buffer in one huge page is
//! one physical segment, so the block layer never splits a large request at
//! the device's segment limit (on virtio-blk, 254 segments of 4 KiB split
//! every 1 MiB request in two).

use std::alloc::{alloc_zeroed, dealloc, Layout};

pub const BUFFER_ALIGNMENT: usize = 4096;
const HUGE_PAGE: usize = 2 << 20;
const MAPPED_FROM: usize = 512 << 10;

enum Backing {
    Heap(Layout),
    /// The whole mapping (start and length), of which the buffer is an
    /// aligned part.
    Mapped {
        base: *mut u8,
        mapped_len: usize,
    },
}

/// A zeroed, aligned buffer that never moves.
pub struct AlignedBuffer {
    pointer: *mut u8,
    len: usize,
    backing: Backing,
}

// The buffer is plain memory owned by one worker at a time.
unsafe impl Send for AlignedBuffer {}

impl AlignedBuffer {
    pub fn new(len: usize) -> Self {
        let len = len.max(BUFFER_ALIGNMENT);
        if len >= MAPPED_FROM {
            if let Some(buffer) = Self::mapped(len) {
                return buffer;
            }
        }
        let layout =
            Layout::from_size_align(len, BUFFER_ALIGNMENT).expect("buffer size fits in memory");
        let pointer = unsafe { alloc_zeroed(layout) };
        assert!(!pointer.is_null(), "out of memory allocating {len} bytes");
        AlignedBuffer {
            pointer,
            len,
            backing: Backing::Heap(layout),
        }
    }

    fn mapped(len: usize) -> Option<Self> {
        let rounded = len.next_multiple_of(HUGE_PAGE);
        let mapped_len = rounded + HUGE_PAGE;
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let base = base.cast::<u8>();
        let pointer = unsafe { base.add(base.align_offset(HUGE_PAGE)) };
        unsafe { libc::madvise(pointer.cast(), rounded, libc::MADV_HUGEPAGE) };
        Some(AlignedBuffer {
            pointer,
            len,
            backing: Backing::Mapped { base, mapped_len },
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.pointer
    }

    pub fn as_slice(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.pointer, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.pointer, self.len) }
    }
}

impl Drop for AlignedBuffer {
    fn drop(&mut self) {
        match self.backing {
            Backing::Heap(layout) => unsafe { dealloc(self.pointer, layout) },
            Backing::Mapped { base, mapped_len } => unsafe {
                libc::munmap(base.cast(), mapped_len);
            },
        }
    }
}

/// `depth` aligned buffers of `buffer_len` bytes of random data (for
/// writes that compression and deduplication cannot fake).
pub fn random_buffers(depth: usize, buffer_len: usize) -> Vec<AlignedBuffer> {
    let mut rng = strata_core::random::FastRng::from_entropy();
    (0..depth)
        .map(|_| {
            let mut buffer = AlignedBuffer::new(buffer_len);
            rng.fill(buffer.as_mut_slice());
            buffer
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_buffers_are_aligned_zeroed_and_writable() {
        for len in [512, 8192, 1 << 20, 3 << 20] {
            let mut buffer = AlignedBuffer::new(len);
            assert_eq!(buffer.as_mut_ptr() as usize % BUFFER_ALIGNMENT, 0);
            assert!(buffer.len() >= len);
            assert!(buffer.as_slice().iter().all(|&byte| byte == 0));
            buffer.as_mut_slice().fill(7);
            assert!(buffer.as_slice().iter().all(|&byte| byte == 7));
        }
        assert_eq!(
            AlignedBuffer::new(1 << 20).as_mut_ptr() as usize % HUGE_PAGE,
            0
        );
    }
}
