//! The I/O engine plug-in point: one small trait, modelled on fio's
//! `ioengine_ops` (queue, then commit and reap). Each engine lives in its own
//! file; adding one touches nothing else but [`EngineKind`].
//!
//! An engine instance belongs to one worker thread and owns that worker's
//! buffers, one per slot. Not for: choosing offsets or timing requests; the
//! workload driver does that.

use crate::buffer::AlignedBuffer;
use std::fmt;
use std::io;
use std::os::fd::RawFd;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Read,
    Write,
}

/// One request: which buffer slot carries it, where and how much.
#[derive(Clone, Copy, Debug)]
pub struct IoRequest {
    pub slot: u32,
    pub operation: Operation,
    pub offset: u64,
    pub len: u32,
    /// Make the write durable with fdatasync before it counts as complete.
    pub datasync: bool,
}

/// A finished request: its slot and the kernel's answer (bytes, or -errno).
#[derive(Clone, Copy, Debug)]
pub struct IoCompletion {
    pub slot: u32,
    pub result: i64,
}

pub trait IoEngine {
    fn name(&self) -> &'static str;
    /// How many requests may be in flight at once on this instance.
    fn depth(&self) -> usize;
    /// The bytes of a slot's buffer: what the last read into it brought.
    fn buffer(&self, slot: u32) -> &[u8];
    /// Queues a request; it is not started before [`IoEngine::submit_and_reap`].
    fn queue(&mut self, request: IoRequest) -> io::Result<()>;
    /// Starts everything queued, waits until at least `min_complete` requests
    /// have finished, and appends every finished request to `completions`.
    fn submit_and_reap(
        &mut self,
        min_complete: usize,
        completions: &mut Vec<IoCompletion>,
    ) -> io::Result<()>;
}

/// The engines strata has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// Linux io_uring: one thread keeps many requests in flight.
    IoUring,
    /// pread/pwrite: one thread per outstanding request, like fio's psync.
    Psync,
}

impl EngineKind {
    pub const NAMES: &'static [&'static str] = &["io_uring", "psync"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "io_uring" | "io-uring" | "uring" => Some(EngineKind::IoUring),
            "psync" | "sync" => Some(EngineKind::Psync),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
        }
    }

    /// How deep one instance may go: psync does one request at a time.
    pub fn depth_per_instance(self, wanted: usize) -> usize {
        match self {
            EngineKind::IoUring => wanted,
            EngineKind::Psync => 1,
        }
    }

    /// Makes an engine over `fd` with `depth` slots of `buffer_len` bytes;
    /// buffers for writes are filled with random data.
    pub fn open(self, fd: RawFd, depth: usize, buffer_len: usize) -> io::Result<Box<dyn IoEngine>> {
        let buffers = make_buffers(depth, buffer_len);
        Ok(match self {
            EngineKind::IoUring => Box::new(crate::uring::UringEngine::new(fd, buffers)?),
            EngineKind::Psync => Box::new(crate::psync::PsyncEngine::new(fd, buffers)),
        })
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn make_buffers(depth: usize, buffer_len: usize) -> Vec<AlignedBuffer> {
    let mut rng = strata_core::random::FastRng::from_entropy();
    (0..depth)
        .map(|_| {
            let mut buffer = AlignedBuffer::new(buffer_len);
            rng.fill(buffer.as_mut_slice());
            buffer
        })
        .collect()
}
