//! The NFS engine: a worker's requests as NFSv3 READ and WRITE calls on a
//! TCP connection of its own (one of Direct NFS's channels), as many in
//! flight as the worker's depth. A request larger than the transfer size
//! becomes the calls a mount with that rsize or wsize would make, and
//! completes when all of them have. A durable write (`datasync`) is a
//! FILE_SYNC write; any other, an UNSTABLE one. It counts what it put on
//! the wire ([`WireCounters`]).
//!
//! Not for: finding, making or removing the file (strata-nfs's `file`).
//! Deep pipelines of large writes and large reads together can fill both
//! directions' socket buffers; a call that cannot be sent for 30 s is an
//! error, never a hang.

use crate::buffer::AlignedBuffer;
use crate::engine::{IoCompletion, IoEngine, IoRequest, Operation, WireCounters};
use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Instant;
use strata_nfs::file::{read_reply, write_reply};
use strata_nfs::{NfsFile, RpcConnection};

/// One call in flight: which request's slot, where in its buffer, and
/// when it was sent.
struct Call {
    slot: u32,
    at: usize,
    operation: Operation,
    sent: Instant,
}

/// A request whose calls are not all answered: how many are left, and its
/// bytes so far (or -EIO once a call failed).
#[derive(Clone, Copy, Default)]
struct Pending {
    calls_left: u32,
    result: i64,
}

pub struct NfsEngine {
    file: Arc<NfsFile>,
    connection: RpcConnection,
    buffers: Vec<AlignedBuffer>,
    transfer_bytes: usize,
    queued: Vec<IoRequest>,
    in_flight: HashMap<u32, Call>,
    pending: Vec<Pending>,
    round_trip_ns: u64,
    /// What the server said of the last call that failed.
    pub last_error: Option<String>,
}

impl NfsEngine {
    /// An engine on a new connection to `file`'s server, with `depth`
    /// slots of `buffer_len` bytes (random data, for writes), each call at
    /// most `transfer_bytes`.
    pub fn open(
        file: Arc<NfsFile>,
        depth: usize,
        buffer_len: usize,
        transfer_bytes: u32,
    ) -> anyhow::Result<NfsEngine> {
        anyhow::ensure!(transfer_bytes > 0, "a transfer size of 0 bytes");
        let connection = file.connect()?;
        Ok(NfsEngine {
            file,
            connection,
            buffers: crate::kind::make_buffers(depth, buffer_len),
            transfer_bytes: transfer_bytes as usize,
            queued: Vec::with_capacity(depth),
            in_flight: HashMap::with_capacity(depth),
            pending: vec![Pending::default(); depth],
            round_trip_ns: 0,
            last_error: None,
        })
    }

    /// Sends `request` as its calls.
    fn send(&mut self, request: IoRequest) -> io::Result<()> {
        let slot = request.slot as usize;
        let len = request.len as usize;
        let mut at = 0;
        let mut calls = 0;
        while at < len {
            let part = self.transfer_bytes.min(len - at);
            let offset = request.offset + at as u64;
            let sent = match request.operation {
                Operation::Read => self
                    .file
                    .send_read(&mut self.connection, offset, part as u32),
                Operation::Write => {
                    let data = &self.buffers[slot].as_slice()[at..at + part];
                    let durable = request.datasync;
                    self.file
                        .send_write(&mut self.connection, offset, data, durable)
                }
            };
            let xid = sent.map_err(|error| io::Error::other(format!("{error:#}")))?;
            let call = Call {
                slot: request.slot,
                at,
                operation: request.operation,
                sent: Instant::now(),
            };
            self.in_flight.insert(xid, call);
            at += part;
            calls += 1;
        }
        self.pending[slot] = Pending {
            calls_left: calls,
            result: 0,
        };
        Ok(())
    }

    /// Takes the next reply; the request it completes, if it does.
    fn take_reply(&mut self) -> io::Result<Option<IoCompletion>> {
        let reply = self
            .connection
            .receive()
            .map_err(|error| io::Error::other(format!("{error:#}")))?;
        let call = self.in_flight.remove(&reply.xid).ok_or_else(|| {
            io::Error::other(format!("a reply to call {}, not in flight", reply.xid))
        })?;
        self.round_trip_ns += call.sent.elapsed().as_nanos() as u64;
        let answered = match call.operation {
            Operation::Read => read_reply(&reply).map(|data| {
                let buffer = &mut self.buffers[call.slot as usize].as_mut_slice()[call.at..];
                let bytes = data.len().min(buffer.len());
                buffer[..bytes].copy_from_slice(&data[..bytes]);
                bytes
            }),
            Operation::Write => write_reply(&reply).map(|written| written.bytes as usize),
        };
        let pending = &mut self.pending[call.slot as usize];
        pending.calls_left -= 1;
        match answered {
            Ok(bytes) if pending.result >= 0 => pending.result += bytes as i64,
            Ok(_) => {}
            Err(error) => {
                pending.result = -i64::from(libc::EIO);
                self.last_error = Some(format!("{error:#}"));
            }
        }
        Ok((pending.calls_left == 0).then_some(IoCompletion {
            slot: call.slot,
            result: pending.result,
        }))
    }
}

impl IoEngine for NfsEngine {
    fn name(&self) -> &'static str {
        "nfs"
    }

    fn depth(&self) -> usize {
        self.buffers.len()
    }

    fn buffer(&self, slot: u32) -> &[u8] {
        self.buffers[slot as usize].as_slice()
    }

    fn queue(&mut self, request: IoRequest) -> io::Result<()> {
        self.queued.push(request);
        Ok(())
    }

    fn submit_and_reap(
        &mut self,
        min_complete: usize,
        completions: &mut Vec<IoCompletion>,
    ) -> io::Result<()> {
        let queued = std::mem::take(&mut self.queued);
        for request in &queued {
            self.send(*request)?;
        }
        self.queued = queued;
        self.queued.clear();
        let mut completed = 0;
        while completed < min_complete && !self.in_flight.is_empty() {
            if let Some(completion) = self.take_reply()? {
                completions.push(completion);
                completed += 1;
            }
        }
        Ok(())
    }

    fn wire(&self) -> Option<WireCounters> {
        let rpc = self.connection.counters();
        Some(WireCounters {
            calls: rpc.calls,
            replies: rpc.replies,
            bytes_sent: rpc.bytes_sent,
            bytes_received: rpc.bytes_received,
            round_trip_ns: self.round_trip_ns,
        })
    }
}
