//! The NFS engine: a worker's requests as NFSv3 READ and WRITE calls on a
//! TCP connection of its own (one of Direct NFS's channels), as many in
//! flight as the worker's depth. A request larger than the transfer size
//! becomes the calls a mount with that rsize or wsize would make, and
//! completes when all of them have. A durable write (`datasync`) is a
//! FILE_SYNC write, or an UNSTABLE one and then a COMMIT of its bytes
//! ([`DurableWrites`]); any other write is UNSTABLE. A FILE_SYNC write the
//! server answers as less than FILE_SYNC is an error. It counts what it
//! put on the wire ([`WireCounters`]), and each call by operation in the
//! target's [`NfsClientCounters`], which every engine on it shares.
//!
//! Not for: finding, making or removing the file (strata-nfs's `file`).
//! Deep pipelines of large writes and large reads together can fill both
//! directions' socket buffers; a call that cannot be sent for 30 s is an
//! error, never a hang.

use crate::buffer::AlignedBuffer;
use crate::engine::{IoCompletion, IoEngine, IoRequest, Operation, WireCounters};
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use strata_nfs::file::{commit_reply, read_reply_into, write_reply};
use strata_nfs::{DurableWrites, NfsFile, RpcConnection};

/// What a call in flight asked.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Asked {
    Read,
    Write { file_sync: bool },
    Commit,
}

/// One call in flight: which request's slot, where in its buffer, and
/// when it was sent.
struct Call {
    slot: u32,
    at: usize,
    asked: Asked,
    sent: Instant,
}

/// A request whose calls are not all answered: how many are left, its
/// bytes so far (or -EIO once a call failed), and the COMMIT to send once
/// its writes are answered.
#[derive(Clone, Copy, Default)]
struct Pending {
    calls_left: u32,
    result: i64,
    commit: Option<(u64, u32)>,
}

/// Every call of the engines on one target, by operation, counted as it
/// is sent and answered: the user-space client's own per-operation
/// statistics (what the kernel's client keeps in mountstats), for a layer
/// sampled each second.
#[derive(Debug, Default)]
pub struct NfsClientCounters {
    read: OpCounters,
    write: OpCounters,
    commit: OpCounters,
}

#[derive(Debug, Default)]
struct OpCounters {
    calls: AtomicU64,
    replies: AtomicU64,
    errors: AtomicU64,
    bytes_sent: AtomicU64,
    bytes_received: AtomicU64,
    round_trip_ns: AtomicU64,
}

/// One operation's calls so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpTotals {
    /// Calls sent.
    pub calls: u64,
    /// Calls answered.
    pub ops: u64,
    /// Calls answered with an error.
    pub errors: u64,
    /// The calls' RPC records, each with its mark.
    pub bytes_sent: u64,
    /// The replies' RPC records.
    pub bytes_received: u64,
    /// From each call's send to its reply, added up.
    pub round_trip_ns: u64,
}

impl OpTotals {
    /// `totals` added up.
    pub fn sum<'a>(totals: impl Iterator<Item = &'a OpTotals>) -> OpTotals {
        totals.fold(OpTotals::default(), |sum, op| OpTotals {
            calls: sum.calls + op.calls,
            ops: sum.ops + op.ops,
            errors: sum.errors + op.errors,
            bytes_sent: sum.bytes_sent + op.bytes_sent,
            bytes_received: sum.bytes_received + op.bytes_received,
            round_trip_ns: sum.round_trip_ns + op.round_trip_ns,
        })
    }
}

impl NfsClientCounters {
    /// `READ`, `WRITE` and `COMMIT` (the kernel's names), each one's calls so
    /// far.
    pub fn totals(&self) -> [(&'static str, OpTotals); 3] {
        let totals = |op: &OpCounters| OpTotals {
            calls: op.calls.load(Ordering::Relaxed),
            ops: op.replies.load(Ordering::Relaxed),
            errors: op.errors.load(Ordering::Relaxed),
            bytes_sent: op.bytes_sent.load(Ordering::Relaxed),
            bytes_received: op.bytes_received.load(Ordering::Relaxed),
            round_trip_ns: op.round_trip_ns.load(Ordering::Relaxed),
        };
        [
            ("READ", totals(&self.read)),
            ("WRITE", totals(&self.write)),
            ("COMMIT", totals(&self.commit)),
        ]
    }

    fn of(&self, asked: Asked) -> &OpCounters {
        match asked {
            Asked::Read => &self.read,
            Asked::Write { .. } => &self.write,
            Asked::Commit => &self.commit,
        }
    }
}

/// Where and how an engine talks to the server: strata's file there, the
/// server's address its connection goes to (the URL's host when none: one
/// of Direct NFS's paths), the most bytes one call carries, and how a
/// durable write is made durable; and the counters its calls go to.
#[derive(Clone, Debug)]
pub struct NfsChannel {
    pub file: Arc<NfsFile>,
    pub address: Option<String>,
    pub transfer_bytes: u32,
    pub durable: DurableWrites,
    pub client: Arc<NfsClientCounters>,
}

pub struct NfsEngine {
    file: Arc<NfsFile>,
    connection: RpcConnection,
    buffers: Vec<AlignedBuffer>,
    transfer_bytes: usize,
    durable: DurableWrites,
    queued: Vec<IoRequest>,
    in_flight: HashMap<u32, Call>,
    pending: Vec<Pending>,
    round_trip_ns: u64,
    client: Arc<NfsClientCounters>,
    /// The connection's bytes sent when the last call was counted, and
    /// received when the last reply was.
    sent_before: u64,
    received_before: u64,
    /// What the server said of the last call that failed.
    pub last_error: Option<String>,
}

impl NfsEngine {
    /// An engine on a new connection of `channel`, with `depth` slots of
    /// `buffer_len` bytes (random data, for writes).
    pub fn open(channel: NfsChannel, depth: usize, buffer_len: usize) -> anyhow::Result<NfsEngine> {
        anyhow::ensure!(channel.transfer_bytes > 0, "a transfer size of 0 bytes");
        let connection = match &channel.address {
            Some(address) => channel.file.connect_at(address)?,
            None => channel.file.connect()?,
        };
        let before = connection.counters();
        Ok(NfsEngine {
            file: channel.file,
            connection,
            buffers: crate::buffer::random_buffers(depth, buffer_len),
            transfer_bytes: channel.transfer_bytes as usize,
            durable: channel.durable,
            queued: Vec::with_capacity(depth),
            in_flight: HashMap::with_capacity(depth),
            pending: vec![Pending::default(); depth],
            round_trip_ns: 0,
            client: channel.client,
            sent_before: before.bytes_sent,
            received_before: before.bytes_received,
            last_error: None,
        })
    }

    /// Sends `request` as its calls.
    fn send(&mut self, request: IoRequest) -> io::Result<()> {
        let slot = request.slot as usize;
        let len = request.len as usize;
        let by_commit = request.datasync && self.durable == DurableWrites::Commit;
        let file_sync = request.datasync && !by_commit;
        let mut at = 0;
        let mut calls = 0;
        while at < len {
            let part = self.transfer_bytes.min(len - at);
            let offset = request.offset + at as u64;
            let (sent, asked) = match request.operation {
                Operation::Read => (
                    self.file
                        .send_read(&mut self.connection, offset, part as u32),
                    Asked::Read,
                ),
                Operation::Write => {
                    let data = &self.buffers[slot].as_slice()[at..at + part];
                    let sent = self
                        .file
                        .send_write(&mut self.connection, offset, data, file_sync);
                    (sent, Asked::Write { file_sync })
                }
            };
            self.sent(sent, request.slot, at, asked)?;
            at += part;
            calls += 1;
        }
        self.pending[slot] = Pending {
            calls_left: calls,
            result: 0,
            commit: by_commit.then_some((request.offset, request.len)),
        };
        Ok(())
    }

    /// Keeps a call just sent (or the error of sending it), its bytes
    /// counted: the connection's since the call before.
    fn sent(
        &mut self,
        sent: anyhow::Result<u32>,
        slot: u32,
        at: usize,
        asked: Asked,
    ) -> io::Result<()> {
        let xid = sent.map_err(|error| io::Error::other(format!("{error:#}")))?;
        let now = self.connection.counters().bytes_sent;
        let bytes = now - std::mem::replace(&mut self.sent_before, now);
        let counters = self.client.of(asked);
        counters.calls.fetch_add(1, Ordering::Relaxed);
        counters.bytes_sent.fetch_add(bytes, Ordering::Relaxed);
        let call = Call {
            slot,
            at,
            asked,
            sent: Instant::now(),
        };
        self.in_flight.insert(xid, call);
        Ok(())
    }

    /// What a reply answered: bytes read or written (0 for a COMMIT).
    fn answered(&mut self, call: &Call, reply: &strata_nfs::rpc::Reply) -> anyhow::Result<usize> {
        match call.asked {
            Asked::Read => {
                let buffer = &mut self.buffers[call.slot as usize].as_mut_slice()[call.at..];
                read_reply_into(reply, buffer)
            }
            Asked::Write { file_sync } => {
                let written = write_reply(reply)?;
                anyhow::ensure!(
                    !file_sync || written.is_file_sync(),
                    "the server answered a FILE_SYNC write as {:?}",
                    written.committed
                );
                Ok(written.bytes as usize)
            }
            Asked::Commit => commit_reply(reply).map(|_| 0),
        }
    }

    /// Takes the next reply; the request it completes, if it does (a
    /// request whose writes are answered sends its COMMIT first).
    fn take_reply(&mut self) -> io::Result<Option<IoCompletion>> {
        let reply = self
            .connection
            .receive()
            .map_err(|error| io::Error::other(format!("{error:#}")))?;
        let call = self.in_flight.remove(&reply.xid).ok_or_else(|| {
            io::Error::other(format!("a reply to call {}, not in flight", reply.xid))
        })?;
        let round_trip_ns = call.sent.elapsed().as_nanos() as u64;
        self.round_trip_ns += round_trip_ns;
        let answered = self.answered(&call, &reply);
        let received = self.connection.counters().bytes_received;
        let counters = self.client.of(call.asked);
        counters.replies.fetch_add(1, Ordering::Relaxed);
        counters
            .errors
            .fetch_add(u64::from(answered.is_err()), Ordering::Relaxed);
        counters
            .round_trip_ns
            .fetch_add(round_trip_ns, Ordering::Relaxed);
        let bytes = received - std::mem::replace(&mut self.received_before, received);
        counters.bytes_received.fetch_add(bytes, Ordering::Relaxed);
        let slot = call.slot as usize;
        let pending = &mut self.pending[slot];
        pending.calls_left -= 1;
        match answered {
            Ok(bytes) if pending.result >= 0 => pending.result += bytes as i64,
            Ok(_) => {}
            Err(error) => {
                pending.result = -i64::from(libc::EIO);
                pending.commit = None;
                self.last_error = Some(format!("{error:#}"));
            }
        }
        if pending.calls_left > 0 {
            return Ok(None);
        }
        if let Some((offset, len)) = pending.commit.take() {
            pending.calls_left = 1;
            let sent = self.file.send_commit(&mut self.connection, offset, len);
            self.sent(sent, call.slot, 0, Asked::Commit)?;
            return Ok(None);
        }
        Ok(Some(IoCompletion {
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
            server: Some(self.connection.server()),
            calls: rpc.calls,
            replies: rpc.replies,
            bytes_sent: rpc.bytes_sent,
            bytes_received: rpc.bytes_received,
            round_trip_ns: self.round_trip_ns,
        })
    }
}
