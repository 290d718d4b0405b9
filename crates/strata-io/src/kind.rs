//! Which I/O engine a worker uses (`--engine`), and making one.
//!
//! Not for: the engines' interface (`engine`) or their work (`psync`,
//! `uring`).

use crate::buffer::AlignedBuffer;
use crate::engine::IoEngine;
use std::fmt;
use std::io;
use std::os::fd::RawFd;

/// The engines strata has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoEngineKind {
    /// Linux io_uring: one thread keeps many requests in flight.
    IoUring,
    /// pread/pwrite: one thread per outstanding request, like fio's psync.
    Psync,
}

impl IoEngineKind {
    pub const NAMES: &'static [&'static str] = &["io_uring", "psync"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "io_uring" | "io-uring" | "uring" => Some(IoEngineKind::IoUring),
            "psync" | "sync" => Some(IoEngineKind::Psync),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IoEngineKind::IoUring => "io_uring",
            IoEngineKind::Psync => "psync",
        }
    }

    /// How deep one instance may go: psync does one request at a time.
    pub fn depth_per_instance(self, wanted: usize) -> usize {
        match self {
            IoEngineKind::IoUring => wanted,
            IoEngineKind::Psync => 1,
        }
    }

    /// Makes an engine over `fd` with `depth` slots of `buffer_len` bytes;
    /// buffers for writes are filled with random data.
    pub fn open(self, fd: RawFd, depth: usize, buffer_len: usize) -> io::Result<Box<dyn IoEngine>> {
        let buffers = make_buffers(depth, buffer_len);
        Ok(match self {
            IoEngineKind::IoUring => Box::new(crate::uring::UringEngine::new(fd, buffers)?),
            IoEngineKind::Psync => Box::new(crate::psync::PsyncEngine::new(fd, buffers)),
        })
    }
}

impl fmt::Display for IoEngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `depth` aligned buffers of `buffer_len` bytes of random data.
pub(crate) fn make_buffers(depth: usize, buffer_len: usize) -> Vec<AlignedBuffer> {
    let mut rng = strata_core::random::FastRng::from_entropy();
    (0..depth)
        .map(|_| {
            let mut buffer = AlignedBuffer::new(buffer_len);
            rng.fill(buffer.as_mut_slice());
            buffer
        })
        .collect()
}
