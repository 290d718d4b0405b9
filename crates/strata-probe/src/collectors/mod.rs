//! The OS-side [`Collector`]s: block devices, their requests traced one by
//! one, NFS client, an NFS server's own counters (nfs-ganesha), NICs, CPU and pressure, memory and page cache, and
//! per-process CPU wait and I/O.
//!
//! Every collector returns the raw values the kernel gives: counters stay
//! exactly as read (monotonic, a 32-bit counter stays 32-bit), gauges are
//! levels; the sampler turns counters into rates. Metric names carry their
//! unit (`_bytes`, `_ms`, `_ns`, `_us`, `_kib`, `_ticks`); a name without a
//! unit suffix counts events (`read_requests`, `ops`, `syscr`).
//!
//! A source that does not exist here (no NFS mounts, a process that is gone)
//! is [`Collected::Absent`] with the reason, never zeros.
//!
//! Not for: rates, printing, or deciding what a number means; the parsers
//! (`parse_*`) are public so fixtures can pin the formats down.
//!
//! [`Collected::Absent`]: strata_core::metrics::Collected::Absent

mod blocktrace;
mod cpu;
mod device;
mod memory;
mod net;
mod nfs;
mod nfs_server;
mod process;

pub use blocktrace::BlockTraceCollector;
pub use cpu::{parse_pressure, parse_proc_stat, ticks_per_second, CpuCollector};
pub use device::{device_metrics, disk_totals, DeviceCollector, DeviceFilter};
pub use memory::{host_oom_kills, parse_meminfo, parse_vmstat, MemoryCollector};
pub use net::{parse_net_dev, NetCollector};
pub use nfs::{parse_mountstats, NfsCollector, OwnClient, MOUNTSTATS_PATH};
pub use nfs_server::{GaneshaCollector, GANESHA_SERVER};
pub(crate) use process::thread_schedstat_sums;
pub use process::{is_running, parse_proc_io, parse_schedstat, ProcessDelayCollector};

use anyhow::Context;
use std::path::Path;
use strata_core::metrics::Collector;

/// Every OS layer's collector: device (selected by `filter`), nfs, net, cpu,
/// memory, and process when `pids` is not empty. Fails only when `filter`
/// names a device or path that does not resolve.
pub fn all_os_collectors(
    filter: DeviceFilter,
    pids: Vec<u32>,
) -> anyhow::Result<Vec<Box<dyn Collector>>> {
    let mut collectors: Vec<Box<dyn Collector>> = vec![
        Box::new(DeviceCollector::new(filter)?),
        Box::new(NfsCollector::new()),
        Box::new(NetCollector::new()),
        Box::new(CpuCollector::new()),
        Box::new(MemoryCollector::new()),
    ];
    if !pids.is_empty() {
        collectors.push(Box::new(ProcessDelayCollector::new(pids)));
    }
    Ok(collectors)
}

/// The text of a /proc or /sys file; `None` when it does not exist (the
/// source is absent here), an error for any other failure.
fn read_if_exists(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

/// Runs `parse` on each non-blank line, numbering lines from 1 and naming the
/// source and the line in any error.
fn for_each_line(
    source: &str,
    text: &str,
    mut parse: impl FnMut(&str) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        parse(line).with_context(|| format!("{source} line {}: {line:?}", index + 1))?;
    }
    Ok(())
}

/// A decimal counter, with an error that quotes it.
fn parse_u64(field: &str, what: &str) -> anyhow::Result<u64> {
    field
        .parse()
        .with_context(|| format!("{what} {field:?} is not a whole number"))
}
