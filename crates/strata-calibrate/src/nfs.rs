//! A calibration of a file on an NFS server (`--target nfs://…`), read and
//! written by strata's own client as Direct NFS does: the file found or
//! made (strata's, marked) before any I/O, the connections and transfer
//! size checked against what the server takes, the file filled with random
//! data by WRITE calls, and each worker's engine target (its own
//! connection, its share of the requests in flight).
//!
//! Not for: the client itself (strata-nfs, strata-io's `nfs` engine) or
//! running points (`point`).

use crate::filer::{FilerAgent, FilerEdge};
use crate::result::GroupResult;
use crate::worker::WorkerOutcome;
use anyhow::{bail, ensure, Context};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use strata_agent::endpoint::Endpoint;
use strata_core::metrics::Metric;
use strata_core::units::{format_size, GIB, KIB};
use strata_io::nfs::{NfsChannel, NfsClientCounters, NfsEngine, OpTotals};
use strata_io::target::Preparation;
use strata_io::{EngineTarget, IoCompletion, IoEngine, IoRequest, Operation, WireCounters};
use strata_nfs::{DurableWrites, NfsFile, NfsUrl};
use strata_probe::collectors::OwnClient;
use strata_recording::calibrate::{FilerFigures, NfsFigures, NfsPathFigures};
use strata_recording::names::{label, nfs};

/// `part` over `whole`; 0 for nothing over nothing.
fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole
    } else {
        0.0
    }
}

/// The largest transfer size strata uses: Linux's largest rsize and wsize.
const MOST_TRANSFER_BYTES: u32 = 1 << 20;

/// What `--target nfs://…` and its options asked for.
#[derive(Clone, Debug)]
pub struct NfsRequest {
    pub url: NfsUrl,
    /// `--size`, when given.
    pub size_bytes: Option<u64>,
    /// `--nfs-address`: the server's addresses to spread the connections
    /// over; none: the URL's host alone.
    pub addresses: Vec<String>,
    /// `--nfs-connections`: at least one per address.
    pub connections: usize,
    /// `--nfs-transfer`, when given.
    pub transfer_bytes: Option<u64>,
    /// `--nfs-durable`.
    pub durable: DurableWrites,
    /// `--agent`: the filer host's agent.
    pub agent: Option<Endpoint>,
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
    /// The server's addresses the connections are spread over, in turn.
    pub paths: Vec<NfsPath>,
    pub durable: DurableWrites,
    /// Every engine's calls on the file, by operation.
    pub client: Arc<NfsClientCounters>,
    /// The filer host's agent (`--agent`), scraped at the windows' edges.
    pub filer: Option<FilerAgent>,
}

/// An interface's bytes received and sent; none when it is not known.
pub type InterfaceBytes = Option<(u64, u64)>;

/// An NFS target at one edge of a window, read at one moment: every
/// engine's calls so far (the figures' calls, replies, bytes and round
/// trips), and each path's interface's bytes.
#[derive(Clone, Debug)]
pub struct NfsEdge {
    /// The calls so far of each operation (`READ`, `WRITE`, `COMMIT`).
    pub by_op: [(&'static str, OpTotals); 3],
    pub nic: Vec<InterfaceBytes>,
}

impl NfsEdge {
    /// Every operation's calls so far, added up.
    pub fn client(&self) -> OpTotals {
        OpTotals::sum(self.by_op.iter().map(|(_, op)| op))
    }
}

/// One address of the server, and how this host reaches it.
#[derive(Clone, Debug)]
pub struct NfsPath {
    /// As `--nfs-address` gave it; `None`: the URL's host.
    pub given: Option<String>,
    /// Where its connections go (the NFS service's port there).
    pub server: SocketAddr,
    /// The interface this host reaches it through (IPv4).
    pub interface: Option<String>,
}

impl NfsPath {
    /// The address as the user named it.
    pub fn name<'a>(&'a self, file: &'a NfsFile) -> &'a str {
        self.given.as_deref().unwrap_or(&file.url.host)
    }
}

impl NfsRequest {
    /// The file found (made and marked when it was not there), once the
    /// workload may write it, the server takes the transfer size, and each
    /// address answers for it; a file made here is removed when a check
    /// refuses.
    pub fn check(&self, writes: bool) -> anyhow::Result<NfsTarget> {
        let (file, made_now) = match &self.found {
            Some(file) => (Arc::clone(file), false),
            None => (Arc::new(NfsFile::open(&self.url, true)?), true),
        };
        let target = self.target(Arc::clone(&file), made_now, writes);
        if let (Err(_), true) = (&target, made_now) {
            if let Some(file) = Arc::into_inner(file) {
                let _ = file.remove();
            }
        }
        target
    }

    fn target(
        &self,
        file: Arc<NfsFile>,
        made_now: bool,
        writes: bool,
    ) -> anyhow::Result<NfsTarget> {
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
        Ok(NfsTarget {
            paths: self.paths(&file)?,
            durable: self.durable,
            client: Arc::default(),
            filer: (self.agent.as_ref())
                .map(|agent| FilerAgent::reach(agent, &file.export))
                .transpose()?,
            size_bytes,
            connections: self.connections,
            transfer_bytes: self.transfer(&file)?,
            file,
            made_now,
        })
    }

    /// The URL's host, or each `--nfs-address` once a connection there
    /// finds the same file.
    fn paths(&self, file: &NfsFile) -> anyhow::Result<Vec<NfsPath>> {
        let path = |given: Option<&String>, server: SocketAddr| NfsPath {
            given: given.cloned(),
            interface: interface_to(server.ip()),
            server,
        };
        if self.addresses.is_empty() {
            let host = file.url.host.as_str();
            let server = (host, file.port).to_socket_addrs()?.next();
            let server = server.with_context(|| format!("{host} has no address"))?;
            return Ok(vec![path(None, server)]);
        }
        self.addresses
            .iter()
            .map(|address| {
                let connection = file
                    .connect_at(address)
                    .map_err(|error| error.context(format!("--nfs-address {address}")))?;
                Ok(path(Some(address), connection.server()))
            })
            .collect()
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

/// The interface this host reaches `address` through, for IPv4.
fn interface_to(address: IpAddr) -> Option<String> {
    match address {
        IpAddr::V4(address) => strata_probe::route::interface_to(address),
        IpAddr::V6(_) => None,
    }
}

impl NfsTarget {
    /// `, reached at ADDRESS (INTERFACE), …` when the connections are
    /// spread over several addresses; else nothing.
    pub fn paths_said(&self) -> String {
        if self.paths.len() < 2 {
            return String::new();
        }
        let each = self.paths.iter().map(|path| {
            let interface = path.interface.as_deref().unwrap_or("interface unknown");
            format!("{} ({interface})", path.name(&self.file))
        });
        format!(", reached at {}", each.collect::<Vec<_>>().join(", "))
    }

    /// The filer over a window, from its agent's counters at the edges,
    /// the server's calls beside strata's own of each operation between
    /// `client`'s edges.
    pub fn filer_figures(
        &self,
        (start, end): (Option<&FilerEdge>, Option<&FilerEdge>),
        client: (&NfsEdge, &NfsEdge),
    ) -> Option<FilerFigures> {
        let own_calls: Vec<(&str, OpTotals)> = (client.0.by_op.iter().zip(&client.1.by_op))
            .map(|((op, was), (_, now))| {
                let moved = OpTotals {
                    ops: now.ops.saturating_sub(was.ops),
                    round_trip_ns: now.round_trip_ns.saturating_sub(was.round_trip_ns),
                    ..OpTotals::default()
                };
                (*op, moved)
            })
            .collect();
        Some(self.filer.as_ref()?.figures(start?, end?, &own_calls))
    }

    /// Every engine's calls so far and each path's interface's bytes, now.
    pub fn edge(&self) -> NfsEdge {
        let bytes = |path: &NfsPath| {
            let interface = path.interface.as_deref()?;
            strata_probe::route::interface_bytes(interface)
        };
        NfsEdge {
            by_op: self.client.totals(),
            nic: self.paths.iter().map(bytes).collect(),
        }
    }

    /// A point's calls between its window's edges, the calls counted as
    /// the interfaces were read (the same moments); each path's share from
    /// its workers' own wire counters over their windows.
    pub fn figures(
        &self,
        (outcomes, groups): (&[WorkerOutcome], &[GroupResult]),
        seconds: f64,
        (start, end): (&NfsEdge, &NfsEdge),
    ) -> NfsFigures {
        let wires: Vec<WireCounters> = outcomes.iter().filter_map(|outcome| outcome.wire).collect();
        let moved_by = |end: u64, start: u64| end.saturating_sub(start);
        let (was, now) = (&start.client(), &end.client());
        let wire = WireCounters {
            server: None,
            calls: moved_by(now.calls, was.calls),
            replies: moved_by(now.ops, was.ops),
            bytes_sent: moved_by(now.bytes_sent, was.bytes_sent),
            bytes_received: moved_by(now.bytes_received, was.bytes_received),
            round_trip_ns: moved_by(now.round_trip_ns, was.round_trip_ns),
        };
        let ios: u64 = groups.iter().map(|group| group.all.requests).sum();
        let data_bytes: u64 = groups.iter().map(|group| group.all.bytes).sum();
        let record_bytes = (wire.bytes_sent + wire.bytes_received) as f64;
        let moved: Vec<InterfaceBytes> = start
            .nic
            .iter()
            .zip(&end.nic)
            .map(|(start, end)| {
                let (start, end) = ((*start)?, (*end)?);
                Some((end.0.saturating_sub(start.0), end.1.saturating_sub(start.1)))
            })
            .collect();
        let (interface, interface_bytes) = self.interfaces_together(&moved);
        let paths = match self.paths.len() {
            1 => Vec::new(),
            _ => self.path_figures(&wires, &moved, seconds, wire.calls),
        };
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
            interface,
            interface_bytes_received: interface_bytes.map(|(received, _)| received),
            interface_bytes_sent: interface_bytes.map(|(_, sent)| sent),
            paths,
            filer: None,
        }
    }

    /// The paths' interfaces, each once, joined by `+`, and their bytes
    /// received and sent added up (none when one is not known).
    fn interfaces_together(&self, moved: &[InterfaceBytes]) -> (Option<String>, InterfaceBytes) {
        let mut names: Vec<&str> = Vec::new();
        let mut bytes = Some((0, 0));
        for (path, moved) in self.paths.iter().zip(moved) {
            let Some(interface) = path.interface.as_deref() else {
                return (None, None);
            };
            if !names.contains(&interface) {
                names.push(interface);
                bytes = bytes
                    .zip(*moved)
                    .map(|(sum, more)| (sum.0 + more.0, sum.1 + more.1));
            }
        }
        (Some(names.join("+")), bytes)
    }

    /// Each path's share of the calls: its connections' wire counters.
    fn path_figures(
        &self,
        wires: &[WireCounters],
        moved: &[InterfaceBytes],
        seconds: f64,
        calls: u64,
    ) -> Vec<NfsPathFigures> {
        let paths = self.paths.len();
        let figures = |(index, (path, moved)): (usize, (&NfsPath, &InterfaceBytes))| {
            let its = wires.iter().filter(|wire| wire.server == Some(path.server));
            let wire = its.fold(WireCounters::default(), |sum, wire| sum.plus(*wire));
            NfsPathFigures {
                address: path.name(&self.file).to_string(),
                connections: (0..self.connections)
                    .filter(|connection| connection % paths == index)
                    .count() as u32,
                calls: wire.calls,
                calls_per_s: ratio(wire.calls as f64, seconds),
                calls_pct: ratio(wire.calls as f64, calls as f64) * 100.0,
                round_trip_mean_us: ratio(wire.round_trip_ns as f64 / 1e3, wire.replies as f64),
                bytes_sent: wire.bytes_sent,
                bytes_received: wire.bytes_received,
                interface: path.interface.clone(),
                interface_bytes_received: moved.map(|(received, _)| received),
                interface_bytes_sent: moved.map(|(_, sent)| sent),
            }
        };
        self.paths
            .iter()
            .zip(moved)
            .enumerate()
            .map(figures)
            .collect()
    }

    /// The engine target of a worker on path `path`: a connection of its
    /// own to that address.
    pub fn engine_target(&self, path: usize) -> EngineTarget {
        EngineTarget::Nfs(self.channel(path))
    }

    fn channel(&self, path: usize) -> NfsChannel {
        NfsChannel {
            file: Arc::clone(&self.file),
            address: self.paths[path % self.paths.len()].given.clone(),
            transfer_bytes: self.transfer_bytes,
            durable: self.durable,
            client: Arc::clone(&self.client),
        }
    }

    /// strata's own calls on the file so far, by operation, as the `nfs`
    /// layer's metrics: labelled as a mount of the server's export (its
    /// `mount` saying it is strata's client), with the kernel client's
    /// names (`ops`, `errors`, `bytes_sent`, `bytes_received`, `rtt_ms`).
    pub fn client_metrics(&self) -> OwnClient {
        let client = Arc::clone(&self.client);
        let server = self.file.url.host.clone();
        let export = self.file.export.clone();
        let mount = format!("{server}:{export} (strata's own client)");
        Box::new(move || {
            let mut metrics = Vec::new();
            for (op, totals) in client.totals() {
                let counters = [
                    (nfs::OPS, totals.ops as f64),
                    ("errors", totals.errors as f64),
                    (nfs::BYTES_SENT, totals.bytes_sent as f64),
                    (nfs::BYTES_RECEIVED, totals.bytes_received as f64),
                    ("rtt_ms", totals.round_trip_ns as f64 / 1e6),
                ];
                metrics.extend(counters.into_iter().map(|(name, value)| {
                    Metric::counter(name, value)
                        .with_label("mount", &mount)
                        .with_label("server", &server)
                        .with_label("export", &export)
                        .with_label(label::OP, op)
                }));
            }
            metrics
        })
    }

    /// A job's `queue_depth` requests in flight spread over the
    /// connections: one worker per connection that gets at least one, its
    /// depth and its path (the connections taking the addresses in turn).
    pub fn depths(&self, queue_depth: usize) -> Vec<(usize, usize)> {
        let connections = self.connections.min(queue_depth).max(1);
        (0..connections)
            .map(|connection| {
                let depth =
                    queue_depth / connections + usize::from(connection < queue_depth % connections);
                (depth, connection % self.paths.len())
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
        let mut engine = NfsEngine::open(self.channel(0), 8, CHUNK as usize)?;
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
