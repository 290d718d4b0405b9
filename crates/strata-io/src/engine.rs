//! The I/O engine plug-in point: one small trait, modelled on fio's
//! `ioengine_ops` (queue, then commit and reap). Each engine lives in its own
//! file; adding one touches nothing else but `kind::IoEngineKind`.
//!
//! An engine instance belongs to one worker thread and owns that worker's
//! buffers, one per slot. Not for: choosing offsets or timing requests; the
//! workload driver does that.

use std::io;

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

/// What an engine that talks to a server (NFS) put on the wire, as it
/// counted it: its calls and their replies, the bytes of both (each RPC
/// record with its mark), and the calls' round trips added up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireCounters {
    /// The server's address they were exchanged with; none for counters
    /// of several addresses added up.
    pub server: Option<std::net::SocketAddr>,
    pub calls: u64,
    pub replies: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub round_trip_ns: u64,
}

impl WireCounters {
    /// What was counted since `earlier`.
    pub fn since(self, earlier: WireCounters) -> WireCounters {
        WireCounters {
            server: self.server,
            calls: self.calls.saturating_sub(earlier.calls),
            replies: self.replies.saturating_sub(earlier.replies),
            bytes_sent: self.bytes_sent.saturating_sub(earlier.bytes_sent),
            bytes_received: self.bytes_received.saturating_sub(earlier.bytes_received),
            round_trip_ns: self.round_trip_ns.saturating_sub(earlier.round_trip_ns),
        }
    }

    /// Both added (of one server when both are its).
    pub fn plus(self, other: WireCounters) -> WireCounters {
        WireCounters {
            server: self.server.filter(|server| other.server == Some(*server)),
            calls: self.calls + other.calls,
            replies: self.replies + other.replies,
            bytes_sent: self.bytes_sent + other.bytes_sent,
            bytes_received: self.bytes_received + other.bytes_received,
            round_trip_ns: self.round_trip_ns + other.round_trip_ns,
        }
    }
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
    /// What it put on the wire; `None` for an engine of this machine's
    /// kernel (psync, io_uring).
    fn wire(&self) -> Option<WireCounters> {
        None
    }
}
