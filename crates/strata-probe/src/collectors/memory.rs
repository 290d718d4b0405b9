//! The `memory` layer: memory and page cache levels from `/proc/meminfo`
//! (what `free` and `vmstat` show) and paging counters from `/proc/vmstat`.
//! Buffered is not physical: `cached_bytes` is what can absorb reads before
//! they reach a device.

use super::{for_each_line, parse_u64, read_if_exists};
use anyhow::{anyhow, bail};
use std::path::Path;
use strata_core::metrics::{Collected, Collector, Metric};

const MEMINFO_PATH: &str = "/proc/meminfo";
const VMSTAT_PATH: &str = "/proc/vmstat";
const MEMINFO_GAUGES: [(&str, &str); 8] = [
    ("MemTotal", "mem_total_bytes"),
    ("MemFree", "mem_free_bytes"),
    ("MemAvailable", "mem_available_bytes"),
    ("Cached", "cached_bytes"),
    ("Buffers", "buffers_bytes"),
    ("Dirty", "dirty_bytes"),
    ("Writeback", "writeback_bytes"),
    ("Shmem", "shmem_bytes"),
];
const VMSTAT_COUNTERS: [(&str, &str); 5] = [
    ("pgpgin", "pgpgin_kib"),
    ("pgpgout", "pgpgout_kib"),
    ("pgmajfault", "pgmajfault"),
    ("pgfault", "pgfault"),
    ("oom_kill", "oom_kills"),
];

/// Layer `memory`: gauges `mem_total_bytes, mem_free_bytes,
/// mem_available_bytes, cached_bytes` (includes shared memory such as
/// PostgreSQL's shared_buffers), `buffers_bytes, dirty_bytes,
/// writeback_bytes, shmem_bytes` (`/proc/meminfo` kB × 1024); counters
/// `pgpgin_kib, pgpgout_kib` (KiB paged in from / out to block devices),
/// `pgmajfault, pgfault` and `oom_kills` (processes the OOM killer ended,
/// Linux 4.13 on) from `/proc/vmstat`. A field the kernel does not print is
/// left out.
#[derive(Debug, Default)]
pub struct MemoryCollector;

impl MemoryCollector {
    pub fn new() -> MemoryCollector {
        MemoryCollector
    }
}

impl Collector for MemoryCollector {
    fn layer(&self) -> &'static str {
        "memory"
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        let Some(meminfo) = read_if_exists(Path::new(MEMINFO_PATH))? else {
            return Ok(Collected::Absent {
                reason: format!("{MEMINFO_PATH} does not exist"),
            });
        };
        let mut metrics = parse_meminfo(&meminfo)?;
        if let Some(vmstat) = read_if_exists(Path::new(VMSTAT_PATH))? {
            metrics.extend(parse_vmstat(&vmstat)?);
        }
        Ok(Collected::Metrics { metrics })
    }
}

/// Parses `/proc/meminfo` (`Key:   value [kB]` lines) into the gauges of
/// [`MemoryCollector`], in bytes. Every line must have that shape; errors
/// name the line.
pub fn parse_meminfo(text: &str) -> anyhow::Result<Vec<Metric>> {
    let mut found = Vec::new();
    for_each_line("meminfo", text, |line| {
        let (key, rest) = line
            .split_once(':')
            .ok_or_else(|| anyhow!("expected \"Key: value\""))?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let (value, multiplier) = match fields[..] {
            [value] => (value, 1),
            [value, "kB"] => (value, 1024),
            _ => bail!("expected a number, optionally followed by kB"),
        };
        let value = parse_u64(value, key)?;
        if let Some((_, name)) = MEMINFO_GAUGES.iter().find(|(wanted, _)| *wanted == key) {
            let bytes = value
                .checked_mul(multiplier)
                .ok_or_else(|| anyhow!("{key}: {value} kB is more bytes than 64 bits hold"))?;
            found.push((*name, bytes));
        }
        Ok(())
    })?;
    Ok(in_order(&MEMINFO_GAUGES, found, Metric::gauge))
}

/// Parses `/proc/vmstat` (`name value` lines) into the counters of
/// [`MemoryCollector`]. Every line must have that shape; errors name the
/// line.
/// Processes the kernel's OOM killer ended on this host since boot
/// (`/proc/vmstat` `oom_kill`); `None` when the kernel does not say.
pub fn host_oom_kills() -> Option<u64> {
    let text = std::fs::read_to_string(VMSTAT_PATH).ok()?;
    parse_vmstat(&text)
        .ok()?
        .into_iter()
        .find(|metric| metric.name == "oom_kills")
        .map(|metric| metric.value as u64)
}

pub fn parse_vmstat(text: &str) -> anyhow::Result<Vec<Metric>> {
    let mut found = Vec::new();
    for_each_line("vmstat", text, |line| {
        let [key, value] = line.split_whitespace().collect::<Vec<_>>()[..] else {
            bail!("expected \"name value\"");
        };
        let value = parse_u64(value, key)?;
        if let Some((_, name)) = VMSTAT_COUNTERS.iter().find(|(wanted, _)| *wanted == key) {
            found.push((*name, value));
        }
        Ok(())
    })?;
    Ok(in_order(&VMSTAT_COUNTERS, found, Metric::counter))
}

/// The found values as metrics, in the order of `table`.
fn in_order(
    table: &[(&str, &'static str)],
    found: Vec<(&'static str, u64)>,
    make: fn(&str, f64) -> Metric,
) -> Vec<Metric> {
    table
        .iter()
        .filter_map(|(_, name)| {
            let (_, value) = found.iter().find(|(found_name, _)| found_name == name)?;
            Some(make(name, *value as f64))
        })
        .collect()
}
