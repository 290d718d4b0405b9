//! Which I/O engine a worker uses (`--engine`), and making one.
//!
//! Not for: the engines' interface (`engine`) or their work (`psync`,
//! `uring`).

use crate::buffer::random_buffers;
use crate::engine::IoEngine;
use crate::nfs::NfsChannel;
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
    /// NFSv3 from user space (`nfs`): one TCP connection per instance, many
    /// calls in flight on it; only for an `nfs://` target.
    Nfs,
}

/// What an engine does its I/O to.
#[derive(Clone, Debug)]
pub enum EngineTarget {
    /// A file or block device of this machine, open.
    Fd(RawFd),
    /// strata's file on an NFS server, and how to reach and use it.
    Nfs(NfsChannel),
}

impl From<RawFd> for EngineTarget {
    fn from(fd: RawFd) -> EngineTarget {
        EngineTarget::Fd(fd)
    }
}

impl IoEngineKind {
    pub const NAMES: &'static [&'static str] = &["io_uring", "psync", "nfs"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "io_uring" | "io-uring" | "uring" => Some(IoEngineKind::IoUring),
            "psync" | "sync" => Some(IoEngineKind::Psync),
            "nfs" => Some(IoEngineKind::Nfs),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            IoEngineKind::IoUring => "io_uring",
            IoEngineKind::Psync => "psync",
            IoEngineKind::Nfs => "nfs",
        }
    }

    /// How deep one instance may go: psync does one request at a time.
    pub fn depth_per_instance(self, wanted: usize) -> usize {
        match self {
            IoEngineKind::IoUring | IoEngineKind::Nfs => wanted,
            IoEngineKind::Psync => 1,
        }
    }

    /// Makes an engine over `target` with `depth` slots of `buffer_len`
    /// bytes; buffers for writes are filled with random data.
    pub fn open(
        self,
        target: EngineTarget,
        depth: usize,
        buffer_len: usize,
    ) -> io::Result<Box<dyn IoEngine>> {
        Ok(match (self, target) {
            (IoEngineKind::IoUring, EngineTarget::Fd(fd)) => Box::new(
                crate::uring::UringEngine::new(fd, random_buffers(depth, buffer_len))?,
            ),
            (IoEngineKind::Psync, EngineTarget::Fd(fd)) => Box::new(
                crate::psync::PsyncEngine::new(fd, random_buffers(depth, buffer_len)),
            ),
            (IoEngineKind::Nfs, EngineTarget::Nfs(channel)) => Box::new(
                crate::nfs::NfsEngine::open(channel, depth, buffer_len)
                    .map_err(|error| io::Error::other(format!("{error:#}")))?,
            ),
            (kind, _) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("the {kind} engine does not do I/O to this target"),
                ))
            }
        })
    }
}

impl fmt::Display for IoEngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
