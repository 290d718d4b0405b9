//! The findings of a calibration of an `nfs://` target, from its points'
//! calls as strata's own client counted them: I/Os that took several calls
//! each (the transfer size, a mount's rsize and wsize), and connections
//! whose one client thread each was busy the whole window (the channel
//! count caps the throughput); and with the filer's NFS server's own count
//! (a strata agent there, `--nfs-server`), how a call's round trip splits
//! into the server's own time and the rest.
//!
//! Not for: the findings of any Recording's window (`crate::findings`).

use super::calibrate::Point;
use crate::findings::finding;
use strata_core::units::format_size;
use strata_output::document::{Evidence, Finding, Severity};
use strata_recording::calibrate::{FilerServerCallFigures, NfsFigures, PointResult};

/// The share of one CPU each connection's thread used, from which its
/// connection is taken as CPU-bound.
const BUSY_THREAD: f64 = 0.8;

pub(crate) fn findings(points: &[Point]) -> Vec<Finding> {
    let nfs_points: Vec<(&PointResult, &NfsFigures)> = points
        .iter()
        .map(|point| &point.record.point)
        .filter(|point| point.errors.is_empty() && !point.interrupted)
        .filter_map(|point| Some((point, point.nfs.as_ref()?)))
        .collect();
    [
        calls_per_io(&nfs_points),
        busy_connections(&nfs_points),
        round_trip_split(&nfs_points),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The point whose I/Os took the most calls each, when that is more than
/// one.
fn calls_per_io(points: &[(&PointResult, &NfsFigures)]) -> Option<Finding> {
    let (point, nfs) = points
        .iter()
        .filter(|(_, nfs)| nfs.calls_per_io > 1.05)
        .max_by(|a, b| a.1.calls_per_io.total_cmp(&b.1.calls_per_io))?;
    let largest = point
        .groups
        .iter()
        .map(|group| group.block_size_bytes)
        .max()?;
    Some(finding(
        "nfs_calls_per_io",
        Severity::Info,
        format!(
            "I/Os of up to {} took {:.1} NFS calls each at a transfer size of {} ({})",
            format_size(u64::from(largest)),
            nfs.calls_per_io,
            format_size(u64::from(nfs.transfer_bytes)),
            point.name
        ),
        vec![
            Evidence::new("calls per I/O", nfs.calls_per_io, 2, "calls"),
            Evidence::new("transfer size", f64::from(nfs.transfer_bytes), 0, "bytes"),
            Evidence::new("largest I/O", f64::from(largest), 0, "bytes"),
            Evidence::new("calls", nfs.calls_per_s, 0, "calls/s"),
        ],
        "each call is a round trip with its own RPC and NFS headers: a transfer size of the \
         I/O's size (a mount's rsize and wsize, up to the server's largest) makes one call of \
         each I/O",
    ))
}

/// The busiest point whose connections' threads each used most of a CPU.
fn busy_connections(points: &[(&PointResult, &NfsFigures)]) -> Option<Finding> {
    let busy = points.iter().filter_map(|(point, nfs)| {
        let (connections, _) = point.nfs_in_flight()?;
        let connections = connections as f64;
        let cpu_s = point.cpu.user_s + point.cpu.system_s;
        let per_connection = cpu_s / point.window_s / connections;
        (point.window_s > 0.0 && per_connection >= BUSY_THREAD).then_some((
            point,
            nfs,
            connections,
            per_connection,
        ))
    });
    let (point, nfs, connections, per_connection) =
        busy.max_by(|a, b| a.1.calls_per_s.total_cmp(&b.1.calls_per_s))?;
    Some(finding(
        "nfs_connections_cap_throughput",
        Severity::Warning,
        format!(
            "{} connection(s) carried {:.0} calls/s at {} with each one's client thread busy \
             {:.0}% of the window: the channel count caps the throughput",
            connections,
            nfs.calls_per_s,
            point.name,
            per_connection * 100.0
        ),
        vec![
            Evidence::new("connections", connections, 0, "connections"),
            Evidence::new(
                "calls per connection",
                nfs.calls_per_s / connections,
                0,
                "calls/s",
            ),
            Evidence::new("client CPU per connection", per_connection * 100.0, 0, "%"),
            Evidence::new("round trip", nfs.round_trip_mean_us, 1, "µs"),
        ],
        "each connection is one client thread, as each of Direct NFS's channels is served: with \
         the thread busy, calls wait on it and the round trip grows; more connections \
         (--nfs-connections, oranfstab's paths) carry more",
    ))
}

/// The operation the filer's server counted the most calls of, in the
/// point where it did, and how strata's round trip of it splits: the
/// server's own time, and the rest (the network's, both TCP/IP stacks').
fn round_trip_split(points: &[(&PointResult, &NfsFigures)]) -> Option<Finding> {
    let counted = points.iter().flat_map(|(point, nfs)| {
        let server = nfs
            .filer
            .as_ref()
            .map_or(&[][..], |filer| &filer.server[..]);
        server.iter().map(move |op| (*point, op))
    });
    let split = |op: &FilerServerCallFigures| {
        let round_trip = op
            .round_trip_mean_us
            .filter(|round_trip| *round_trip > 0.0)?;
        Some((round_trip, op.outside_server_us?))
    };
    let (point, op, (round_trip, outside)) = counted
        .filter_map(|(point, op)| Some((point, op, split(op)?)))
        .max_by_key(|(_, op, _)| op.calls)?;
    let outside_share = outside / round_trip;
    let (bound, advice) = match outside_share >= 0.5 {
        true => (
            "the network and the two TCP/IP stacks, not the server, take most of each call",
            "more calls in flight per connection, more connections, or fewer and larger calls \
             (the transfer size) hide it; a faster filer would not",
        ),
        false => (
            "the server's own time is most of each call",
            "the filer's storage and CPU bound the call: its device figures and the server's \
             own statistics say which",
        ),
    };
    Some(finding(
        "nfs_round_trip_split",
        Severity::Info,
        format!(
            "{} {} calls at {}: {:.1} µs round trip, {:.1} µs of it {}'s own time and {:.1} µs \
             ({:.0}%) outside the server: {bound}",
            op.protocol,
            op.op,
            point.name,
            round_trip,
            op.server_mean_us,
            op.server,
            outside,
            outside_share * 100.0
        ),
        vec![
            Evidence::new("round trip", round_trip, 1, "µs"),
            Evidence::new("server time", op.server_mean_us, 1, "µs"),
            Evidence::new("outside the server", outside, 1, "µs"),
            Evidence::new("server calls", op.calls as f64, 0, "calls"),
        ],
        advice,
    ))
}
