//! A calibration of a file on an NFS server (`--target nfs://…`), read and
//! written by strata's own client as Direct NFS does: the file found or
//! made (strata's, marked) before any I/O, the connections and transfer
//! size checked against what the server takes, the file filled with random
//! data by WRITE calls, and each worker's engine target (its own
//! connection, its share of the requests in flight).
//!
//! Not for: the client itself (strata-nfs, strata-io's `nfs` engine) or
//! running points (`point`).

use crate::result::GroupResult;
use crate::worker::WorkerOutcome;
use anyhow::{bail, ensure};
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use strata_core::units::{format_size, GIB, KIB};
use strata_io::nfs::NfsEngine;
use strata_io::target::Preparation;
use strata_io::{EngineTarget, IoCompletion, IoEngine, IoRequest, Operation, WireCounters};
use strata_nfs::{DurableWrites, NfsFile, NfsUrl};
use strata_recording::calibrate::NfsFigures;

/// The largest transfer size strata uses: Linux's largest rsize and wsize.
const MOST_TRANSFER_BYTES: u32 = 1 << 20;

/// What `--target nfs://…` and its options asked for.
#[derive(Clone, Debug)]
pub struct NfsRequest {
    pub url: NfsUrl,
    /// `--size`, when given.
    pub size_bytes: Option<u64>,
    /// `--nfs-connections`.
    pub connections: usize,
    /// `--nfs-transfer`, when given.
    pub transfer_bytes: Option<u64>,
    /// `--nfs-durable`.
    pub durable: DurableWrites,
    /// The file as the request's resolution found it on the server; `None`
    /// when it is not there (the checks make it).
    pub found: Option<Arc<NfsFile>>,
}

/// The file on the server, ready for the points.
#[derive(Clone, Debug)]
pub struct NfsTarget {
    pub file: Arc<NfsFile>,
    /// The size the calibration uses.
    pub size_bytes: u64,
    pub connections: usize,
    /// The most bytes one READ or WRITE call carries.
    pub transfer_bytes: u32,
    /// Whether this calibration made the file (and so removes it when a
    /// later check refuses the calibration).
    pub made_now: bool,
    /// The interface this host reaches the server through (IPv4).
    pub interface: Option<String>,
    pub durable: DurableWrites,
}

impl NfsRequest {
    /// The file found (made and marked when it was not there), once the
    /// workload may write it and the server takes the transfer size.
    pub fn check(&self, writes: bool) -> anyhow::Result<NfsTarget> {
        let (file, made_now) = match &self.found {
            Some(file) => (Arc::clone(file), false),
            None => (Arc::new(NfsFile::open(&self.url, true)?), true),
        };
        if writes && !file.strata_made {
            bail!(
                "--target {} exists and was not created by strata (no .NAME.strata beside it): \
                 strata only reads it. Choose a read-only workload, or name a new file for write \
                 workloads",
                self.url
            );
        }
        let size_bytes = match (file.strata_made, self.size_bytes, file.size_bytes) {
            (false, _, existing) => existing,
            (true, Some(size), _) => size,
            (true, None, 0) => GIB,
            (true, None, existing) => existing,
        };
        let target = NfsTarget {
            interface: interface_to(&self.url.host),
            durable: self.durable,
            size_bytes,
            connections: self.connections,
            transfer_bytes: self.transfer(&file)?,
            file,
            made_now,
        };
        Ok(target)
    }

    /// `--nfs-transfer`, or the smaller of the server's preferred read and
    /// write sizes; never more than it takes, nor than Linux's largest
    /// rsize and wsize (1 MiB).
    fn transfer(&self, file: &NfsFile) -> anyhow::Result<u32> {
        let server = file.transfer;
        let most = server
            .read_max_bytes
            .min(server.write_max_bytes)
            .min(MOST_TRANSFER_BYTES);
        let preferred = server
            .read_preferred_bytes
            .min(server.write_preferred_bytes);
        let Some(asked) = self.transfer_bytes else {
            return Ok(preferred.min(most).max(4096));
        };
        ensure!(
            (4 * KIB..=u64::from(most)).contains(&asked),
            "--nfs-transfer {}: 4 KiB to {} per call (the server's FSINFO rtmax and wtmax, and \
             at most 1 MiB)",
            format_size(asked),
            format_size(u64::from(most))
        );
        Ok(asked as u32)
    }
}

/// The interface this host reaches `host` through, when `host` has an
/// IPv4 address.
fn interface_to(host: &str) -> Option<String> {
    let addresses = (host, 0).to_socket_addrs().ok()?;
    let address = addresses
        .into_iter()
        .find_map(|address| match address.ip() {
            IpAddr::V4(address) => Some(address),
            IpAddr::V6(_) => None,
        })?;
    strata_probe::route::interface_to(address)
}

impl NfsTarget {
    /// A point's calls, from its workers' wire counters over the window.
    /// `nic`: the interface's bytes received and sent at the window's
    /// start and end.
    pub fn figures(
        &self,
        (outcomes, groups): (&[WorkerOutcome], &[GroupResult]),
        seconds: f64,
        nic: Option<((u64, u64), (u64, u64))>,
    ) -> NfsFigures {
        let wires = outcomes.iter().filter_map(|outcome| outcome.wire);
        let wire = wires.fold(WireCounters::default(), WireCounters::plus);
        let ios: u64 = groups.iter().map(|group| group.all.requests).sum();
        let data_bytes: u64 = groups.iter().map(|group| group.all.bytes).sum();
        let ratio = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
        let record_bytes = (wire.bytes_sent + wire.bytes_received) as f64;
        NfsFigures {
            server: self.file.url.host.clone(),
            durable_writes: self.durable.name().to_string(),
            connections: self.connections as u32,
            transfer_bytes: self.transfer_bytes,
            calls: wire.calls,
            replies: wire.replies,
            calls_per_s: ratio(wire.calls as f64, seconds),
            calls_per_io: ratio(wire.calls as f64, ios as f64),
            round_trip_mean_us: ratio(wire.round_trip_ns as f64 / 1e3, wire.replies as f64),
            bytes_sent: wire.bytes_sent,
            bytes_received: wire.bytes_received,
            data_bytes,
            protocol_overhead_pct: ratio(record_bytes - data_bytes as f64, data_bytes as f64)
                * 100.0,
            interface: self.interface.clone(),
            interface_bytes_received: nic.map(|(start, end)| end.0.saturating_sub(start.0)),
            interface_bytes_sent: nic.map(|(start, end)| end.1.saturating_sub(start.1)),
        }
    }

    /// The engine target of one worker: a connection of its own.
    pub fn engine_target(&self) -> EngineTarget {
        EngineTarget::Nfs {
            file: Arc::clone(&self.file),
            transfer_bytes: self.transfer_bytes,
            durable: self.durable,
        }
    }

    /// A job's `queue_depth` requests in flight spread over the
    /// connections: one worker per connection that gets at least one.
    pub fn depths(&self, queue_depth: usize) -> Vec<usize> {
        let connections = self.connections.min(queue_depth).max(1);
        (0..connections)
            .map(|connection| {
                queue_depth / connections + usize::from(connection < queue_depth % connections)
            })
            .collect()
    }

    /// Fills strata's file with random data up to the size used, by 1 MiB
    /// UNSTABLE writes 8 in flight and a COMMIT; a file already that large
    /// is reused, one strata did not make is used as it is.
    pub fn fill(
        &self,
        interrupt: &AtomicBool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> anyhow::Result<Option<Preparation>> {
        let file = &self.file;
        if !file.strata_made {
            return Ok(None);
        }
        if file.size_bytes >= self.size_bytes {
            return Ok(Some(Preparation::Reused));
        }
        const CHUNK: u64 = 1 << 20;
        let mut engine = NfsEngine::open(
            Arc::clone(file),
            8,
            CHUNK as usize,
            (self.transfer_bytes, self.durable),
        )?;
        let mut next = file.size_bytes / CHUNK * CHUNK;
        let (mut free, mut completions): (Vec<u32>, Vec<IoCompletion>) =
            ((0..8).collect(), Vec::new());
        while next < self.size_bytes || free.len() < 8 {
            ensure!(
                !interrupt.load(Ordering::Relaxed),
                "interrupted while filling {}",
                file.url
            );
            while let (Some(slot), true) = (free.last().copied(), next < self.size_bytes) {
                free.pop();
                let len = CHUNK.min(self.size_bytes - next) as u32;
                let write = IoRequest {
                    slot,
                    operation: Operation::Write,
                    offset: next,
                    len,
                    datasync: false,
                };
                engine.queue(write)?;
                next += u64::from(len);
            }
            completions.clear();
            engine.submit_and_reap(1, &mut completions)?;
            for completion in &completions {
                ensure!(
                    completion.result >= 0,
                    "filling {}: {}",
                    file.url,
                    engine.last_error.clone().unwrap_or_default()
                );
                free.push(completion.slot);
            }
            progress(next.min(self.size_bytes), self.size_bytes);
        }
        let mut connection = file.connect()?;
        file.commit(&mut connection)?;
        Ok(Some(Preparation::Filled))
    }
}
