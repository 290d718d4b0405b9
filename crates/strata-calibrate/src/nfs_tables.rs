//! The text sections of a calibration of a filer ([`nfs_sections`]):
//! strata's own calls per point, per server address, and the filer host's
//! side from its agent; and for a target on a kernel NFS mount, the kernel
//! client's operations ([`kernel_nfs_section`]).
//!
//! Not for: the figures (`nfs`, `filer`, `kernel_nfs`) or the rest of the
//! text output (`output`).

use crate::result::PointResult;
use std::fmt::Write as _;
use strata_core::units::{format_latency_ns, format_size, mb_per_s};
use strata_recording::calibrate::per_second;

/// The NFS sections, each with its heading: strata's calls, each server
/// address's share (several addresses), the filer's side (`--agent`);
/// `None` when no point went to an NFS server.
pub fn nfs_sections(points: &[PointResult]) -> Option<String> {
    let mut out = String::from(
        "\nNFS — strata's own calls over the same measured windows: calls/IO (an I/O larger \
         than the transfer size is several), round trip from send to reply, the RPC records' \
         bytes beside the data's (TCP/IP's own not included), and what the interface to the \
         server received (all of its traffic)\n",
    );
    out.push_str(&nfs_table(points)?);
    if let Some(paths) = nfs_paths_table(points) {
        out.push_str(
            "\nNFS paths — each of the server's addresses: its connections per job, its share of \
             the calls, its round trip, and what the interface this host reaches it through \
             received (shared by any other address behind it)\n",
        );
        out.push_str(&paths);
    }
    if let Some(filer) = filer_table(points) {
        out.push_str(
            "\nFiler — through its agent at the same window edges: the devices under the export \
             (its page cache may have served reads: they reach no device) and its interfaces (all \
             of their traffic)\n",
        );
        out.push_str(&filer);
    }
    if let Some(server) = filer_server_table(points) {
        out.push_str(
            "\nFiler's NFS server — its own count of the calls on the export at the same window \
             edges, and strata's round trip of each operation split: the server's own time, and \
             the rest (the network's, both TCP/IP stacks', their queues)\n",
        );
        out.push_str(&server);
    }
    Some(out)
}

/// The kernel client's section with its heading; `None` when no point's
/// target lay on a kernel NFS mount.
pub fn kernel_nfs_section(points: &[PointResult]) -> Option<String> {
    let mut out = String::from(
        "\nNFS — the kernel client's mount of the target, /proc/self/mountstats over the same \
         measured windows (nfsiostat's columns; MB/s and KiB/op of RPC records sent and \
         received)\n",
    );
    out.push_str(&kernel_nfs_table(points)?);
    Some(out)
}

/// Each point with the figures `of` it gives; `None` when no point has
/// them (and so no table).
fn having<'a, T>(
    points: &'a [PointResult],
    of: impl Fn(&'a PointResult) -> Option<&'a T>,
) -> Option<Vec<(&'a PointResult, &'a T)>> {
    let rows: Vec<_> = points
        .iter()
        .filter_map(|point| Some((point, of(point)?)))
        .collect();
    (!rows.is_empty()).then_some(rows)
}

/// The NFS table: each point's calls as strata's client counted them;
/// `None` when no point went to an NFS server.
fn nfs_table(points: &[PointResult]) -> Option<String> {
    let rows = having(points, |point| point.nfs.as_ref())?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<15} {:>5} {:>9} {:>9} {:>8} {:>11} {:>9} {:>9} {:>9} {:>13}",
        "point",
        "server",
        "conn",
        "transfer",
        "calls/s",
        "calls/IO",
        "round trip",
        "sent MB/s",
        "recv MB/s",
        "overhead",
        "NIC recv MB/s"
    );
    for (point, nfs) in rows {
        let mb_per_s = |bytes| mb_per_s(bytes, point.window_s);
        let _ = writeln!(
            out,
            "{:<34} {:<15} {:>5} {:>9} {:>9.0} {:>8.2} {:>11} {:>9.1} {:>9.1} {:>8.1}% {:>13}",
            point.name,
            nfs.server,
            nfs.connections,
            format_size(u64::from(nfs.transfer_bytes)),
            nfs.calls_per_s,
            nfs.calls_per_io,
            format_latency_ns(nfs.round_trip_mean_us * 1e3),
            mb_per_s(nfs.bytes_sent),
            mb_per_s(nfs.bytes_received),
            nfs.protocol_overhead_pct,
            nic_mb_per_s(nfs.interface_bytes_received, point.window_s),
        );
    }
    Some(out)
}

/// The filer table: each point's filer side from its agent (`--agent`):
/// the devices under the export and the host's interfaces.
fn filer_table(points: &[PointResult]) -> Option<String> {
    let rows = having(points, |point| point.nfs.as_ref()?.filer.as_ref())?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<24} {:>15} {:>15} {:>9} {:>9}",
        "point", "on the filer", "read/recv MB/s", "write/sent MB/s", "r/s", "w/s"
    );
    for (point, filer) in rows {
        if let Some(missing) = &filer.missing {
            let _ = writeln!(out, "{:<34} {}: {missing}", point.name, filer.host);
        }
        for device in &filer.devices {
            let requests = Some((device.read_requests, device.write_requests));
            let thing = format!("{} device {}", filer.host, device.device);
            let bytes = (device.read_bytes, device.write_bytes);
            filer_row(&mut out, point, &thing, bytes, requests);
        }
        for interface in &filer.interfaces {
            let thing = format!("{} {}", filer.host, interface.interface);
            let bytes = (interface.receive_bytes, interface.transmit_bytes);
            filer_row(&mut out, point, &thing, bytes, None);
        }
    }
    Some(out)
}

/// The filer's NFS server's table: each point's operations as the server
/// counted them (a strata agent with `--nfs-server` on the filer); `None`
/// when no point has them.
fn filer_server_table(points: &[PointResult]) -> Option<String> {
    let rows = having(points, |point| {
        let filer = point.nfs.as_ref()?.filer.as_ref()?;
        (!filer.server.is_empty()).then_some(&filer.server)
    })?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<24} {:>9} {:>9} {:>7} {:>11} {:>11} {:>14}",
        "point", "server op", "calls/s", "MB/s", "errors", "server", "round trip", "outside server"
    );
    for (point, calls) in rows {
        for op in calls {
            let latency =
                |us: Option<f64>| us.map_or("-".to_string(), |us| format_latency_ns(us * 1e3));
            let outside = match (op.outside_server_us, op.round_trip_mean_us) {
                (Some(outside), Some(round_trip)) if round_trip > 0.0 => {
                    format!(
                        "{} ({:.0}%)",
                        latency(Some(outside)),
                        outside / round_trip * 100.0
                    )
                }
                _ => "-".to_string(),
            };
            let _ = writeln!(
                out,
                "{:<34} {:<24} {:>9.0} {:>9.1} {:>7} {:>11} {:>11} {:>14}",
                point.name,
                format!("{} {} {}", op.server, op.protocol, op.op),
                per_second(op.calls, point.window_s),
                mb_per_s(op.bytes, point.window_s),
                op.errors,
                latency(Some(op.server_mean_us)),
                latency(op.round_trip_mean_us),
                outside
            );
        }
    }
    Some(out)
}

/// One row of the filer table: bytes in and out (read and written, or
/// received and sent) and, for a device, its requests, each per second.
fn filer_row(
    out: &mut String,
    point: &PointResult,
    thing: &str,
    (bytes_in, bytes_out): (u64, u64),
    requests: Option<(u64, u64)>,
) {
    let per_s = |count: u64| format!("{:.0}", per_second(count, point.window_s));
    let (reads, writes) = requests.map_or(("-".into(), "-".into()), |(reads, writes)| {
        (per_s(reads), per_s(writes))
    });
    let _ = writeln!(
        out,
        "{:<34} {:<24} {:>15.1} {:>15.1} {:>9} {:>9}",
        point.name,
        thing,
        mb_per_s(bytes_in, point.window_s),
        mb_per_s(bytes_out, point.window_s),
        reads,
        writes
    );
}

/// The kernel client's table: each point's operations on the NFS mount
/// its target lies on, nfsiostat's columns; `None` when no target did.
fn kernel_nfs_table(points: &[PointResult]) -> Option<String> {
    let rows = having(points, |point| point.kernel_nfs.as_ref())?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<8} {:>9} {:>9} {:>9} {:>8} {:>8} {:>11} {:>11} {:>11} {:>6}",
        "point",
        "op",
        "ops/s",
        "MB/s",
        "KiB/op",
        "retrans",
        "timeouts",
        "avg queue",
        "avg RTT",
        "avg exe",
        "errors"
    );
    for (point, kernel) in rows {
        for op in &kernel.ops {
            let bytes = op.bytes_sent + op.bytes_received;
            let _ = writeln!(
                out,
                "{:<34} {:<8} {:>9.0} {:>9.1} {:>9.1} {:>8} {:>8} {:>8.3} ms {:>8.3} ms {:>8.3} ms {:>6}",
                point.name,
                op.op,
                op.ops_per_s,
                mb_per_s(bytes, point.window_s),
                bytes as f64 / 1024.0 / op.ops.max(1) as f64,
                op.retransmissions,
                op.timeouts,
                op.queue_ms,
                op.rtt_ms,
                op.execute_ms,
                op.errors.map_or("-".to_string(), |errors| errors.to_string()),
            );
        }
    }
    Some(out)
}

/// An interface's bytes over `window_s` as MB/s to one decimal, `-` when
/// not known.
fn nic_mb_per_s(bytes: Option<u64>, window_s: f64) -> String {
    bytes.map_or("-".to_string(), |bytes| {
        format!("{:.1}", mb_per_s(bytes, window_s))
    })
}

/// The NFS paths table: each point's calls per server address, when the
/// connections were spread over several (`--nfs-address`).
fn nfs_paths_table(points: &[PointResult]) -> Option<String> {
    let rows = having(points, |point| {
        Some(&point.nfs.as_ref()?.paths).filter(|paths| !paths.is_empty())
    })?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<34} {:<15} {:<12} {:>5} {:>9} {:>7} {:>11} {:>9} {:>13}",
        "point",
        "address",
        "interface",
        "conn",
        "calls/s",
        "share",
        "round trip",
        "recv MB/s",
        "NIC recv MB/s"
    );
    for (point, paths) in rows {
        for path in paths {
            let _ = writeln!(
                out,
                "{:<34} {:<15} {:<12} {:>5} {:>9.0} {:>6.1}% {:>11} {:>9.1} {:>13}",
                point.name,
                path.address,
                path.interface.as_deref().unwrap_or("-"),
                path.connections,
                path.calls_per_s,
                path.calls_pct,
                format_latency_ns(path.round_trip_mean_us * 1e3),
                mb_per_s(path.bytes_received, point.window_s),
                nic_mb_per_s(path.interface_bytes_received, point.window_s),
            );
        }
    }
    Some(out)
}
