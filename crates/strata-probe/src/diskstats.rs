//! `/proc/diskstats` parsing and `iostat -x` arithmetic over two samples.
//!
//! This module reads counters and does arithmetic on them; it does not map
//! devices to filesystems or decide which devices matter (see
//! [`crate::blockdev`]), and it does not sample on a timer.
//!
//! Field layout follows the kernel's `Documentation/admin-guide/iostats.rst`:
//! 11 counters before 4.18, 15 with discards (4.18+), 17 with flushes (5.5+).

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
pub use strata_recording::device::IostatFigures;

const DISKSTATS_PATH: &str = "/proc/diskstats";
const SECTOR_BYTES: u64 = 512;
const ID_FIELDS: usize = 3;
const COUNTER_NAMES: [&str; 17] = [
    "reads completed",
    "reads merged",
    "sectors read",
    "ms reading",
    "writes completed",
    "writes merged",
    "sectors written",
    "ms writing",
    "I/Os in flight",
    "ms doing I/O",
    "weighted ms doing I/O",
    "discards completed",
    "discards merged",
    "sectors discarded",
    "ms discarding",
    "flush requests completed",
    "ms flushing",
];

/// One line of `/proc/diskstats`. Counters the kernel did not print are 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStat {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    pub read_requests: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub write_requests: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    pub in_flight: u64,
    pub busy_ms: u64,
    pub weighted_ms: u64,
    pub discard_requests: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ms: u64,
    pub flush_requests: u64,
    pub flush_ms: u64,
    /// how many counter fields the kernel printed after the name (11, 15 or 17)
    pub field_count: u8,
}

/// Parses the text of `/proc/diskstats`. Blank lines are skipped; any other
/// line must have 14, 18 or 20 whitespace-separated fields.
pub fn parse_diskstats(text: &str) -> anyhow::Result<Vec<DiskStat>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            parse_line(line).with_context(|| format!("diskstats line {}: {:?}", index + 1, line))
        })
        .collect()
}

/// Reads and parses `/proc/diskstats`.
pub fn read_diskstats() -> anyhow::Result<Vec<DiskStat>> {
    let text = std::fs::read_to_string(DISKSTATS_PATH)
        .with_context(|| format!("reading {DISKSTATS_PATH}"))?;
    parse_diskstats(&text).with_context(|| format!("parsing {DISKSTATS_PATH}"))
}

/// The entry for the device called `name` (e.g. `"nvme0n1"`, `"dm-0"`).
pub fn find<'a>(stats: &'a [DiskStat], name: &str) -> Option<&'a DiskStat> {
    stats.iter().find(|stat| stat.name == name)
}

fn parse_line(line: &str) -> anyhow::Result<DiskStat> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let counter_count = fields.len().saturating_sub(ID_FIELDS);
    if !matches!(counter_count, 11 | 15 | 17) {
        bail!(
            "expected 14, 18 or 20 fields (3 identifiers and 11, 15 or 17 counters), found {}",
            fields.len()
        );
    }
    let major = fields[0]
        .parse()
        .with_context(|| format!("major number {:?} is not a number", fields[0]))?;
    let minor = fields[1]
        .parse()
        .with_context(|| format!("minor number {:?} is not a number", fields[1]))?;
    let mut counters = [0u64; 17];
    for (index, text) in fields[ID_FIELDS..].iter().enumerate() {
        counters[index] = text.parse().with_context(|| {
            format!(
                "counter {} ({}) {:?} is not a number",
                index + 1,
                COUNTER_NAMES[index],
                text
            )
        })?;
    }
    Ok(stat_from_counters(
        major,
        minor,
        fields[2],
        &counters,
        counter_count as u8,
    ))
}

fn stat_from_counters(
    major: u32,
    minor: u32,
    name: &str,
    counters: &[u64; 17],
    field_count: u8,
) -> DiskStat {
    DiskStat {
        major,
        minor,
        name: name.to_string(),
        read_requests: counters[0],
        read_merges: counters[1],
        read_sectors: counters[2],
        read_ms: counters[3],
        write_requests: counters[4],
        write_merges: counters[5],
        write_sectors: counters[6],
        write_ms: counters[7],
        in_flight: counters[8],
        busy_ms: counters[9],
        weighted_ms: counters[10],
        discard_requests: counters[11],
        discard_merges: counters[12],
        discard_sectors: counters[13],
        discard_ms: counters[14],
        flush_requests: counters[15],
        flush_ms: counters[16],
        field_count,
    }
}

/// iostat -x figures over an interval; sectors are always 512 bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceDelta {
    pub device: String,
    pub seconds: f64,
    pub read_requests: u64,
    pub read_merges: u64,
    pub read_bytes: u64,
    pub read_ms: u64,
    pub write_requests: u64,
    pub write_merges: u64,
    pub write_bytes: u64,
    pub write_ms: u64,
    pub discard_requests: u64,
    pub discard_merges: u64,
    pub discard_bytes: u64,
    pub discard_ms: u64,
    pub flush_requests: u64,
    pub flush_ms: u64,
    pub busy_ms: u64,
    pub weighted_ms: u64,
}

/// One field of a [`DiskStat`].
type Pick = fn(&DiskStat) -> u64;

/// The counts of `/proc/diskstats` (64-bit: requests, merges, sectors),
/// by name: one that went down means the device's counters started again.
const COUNTS: [(&str, Pick); 10] = [
    ("read_requests", |s| s.read_requests),
    ("read_merges", |s| s.read_merges),
    ("read_sectors", |s| s.read_sectors),
    ("write_requests", |s| s.write_requests),
    ("write_merges", |s| s.write_merges),
    ("write_sectors", |s| s.write_sectors),
    ("discard_requests", |s| s.discard_requests),
    ("discard_merges", |s| s.discard_merges),
    ("discard_sectors", |s| s.discard_sectors),
    ("flush_requests", |s| s.flush_requests),
];

/// The increase of one of the milliseconds fields, which the kernel prints
/// as 32-bit (`%u`: they wrap every 49.7 days of time counted): where the
/// counts went on, one that went down wrapped.
fn milliseconds_delta(before: u64, after: u64) -> u64 {
    const WRAP: u64 = 1 << 32;
    match after >= before {
        true => after - before,
        false => (after + WRAP).saturating_sub(before),
    }
}

impl DeviceDelta {
    /// Counter increases from `before` to `after`, taken `seconds` apart;
    /// an error naming the count that went down where the device's counters
    /// were reset between them (the host restarted, the device was made
    /// again, another exporter answered): no figure spans a reset.
    pub fn between(
        before: &DiskStat,
        after: &DiskStat,
        seconds: f64,
    ) -> Result<DeviceDelta, String> {
        if let Some((name, pick)) = COUNTS.iter().find(|(_, pick)| pick(after) < pick(before)) {
            return Err(format!(
                "{}'s {name} went down from {} to {}: its counters were reset (the host \
                 restarted or the device was made again)",
                after.name,
                pick(before),
                pick(after)
            ));
        }
        let count = |pick: Pick| pick(after) - pick(before);
        let delta = |pick: Pick| milliseconds_delta(pick(before), pick(after));
        Ok(DeviceDelta {
            device: after.name.clone(),
            seconds,
            read_requests: count(|s| s.read_requests),
            read_merges: count(|s| s.read_merges),
            read_bytes: count(|s| s.read_sectors) * SECTOR_BYTES,
            read_ms: delta(|s| s.read_ms),
            write_requests: count(|s| s.write_requests),
            write_merges: count(|s| s.write_merges),
            write_bytes: count(|s| s.write_sectors) * SECTOR_BYTES,
            write_ms: delta(|s| s.write_ms),
            discard_requests: count(|s| s.discard_requests),
            discard_merges: count(|s| s.discard_merges),
            discard_bytes: count(|s| s.discard_sectors) * SECTOR_BYTES,
            discard_ms: delta(|s| s.discard_ms),
            flush_requests: count(|s| s.flush_requests),
            flush_ms: delta(|s| s.flush_ms),
            busy_ms: delta(|s| s.busy_ms),
            weighted_ms: delta(|s| s.weighted_ms),
        })
    }

    /// iostat `r/s`.
    pub fn read_requests_per_s(&self) -> f64 {
        self.per_second(self.read_requests as f64)
    }

    /// iostat `w/s`.
    pub fn write_requests_per_s(&self) -> f64 {
        self.per_second(self.write_requests as f64)
    }

    /// iostat `rMB/s` in decimal megabytes (10^6 bytes).
    pub fn read_mb_per_s(&self) -> f64 {
        self.per_second(self.read_bytes as f64 / 1e6)
    }

    /// iostat `wMB/s` in decimal megabytes (10^6 bytes).
    pub fn write_mb_per_s(&self) -> f64 {
        self.per_second(self.write_bytes as f64 / 1e6)
    }

    /// iostat `rareq-sz` in KiB; 0 when there were no reads.
    pub fn read_request_kib(&self) -> f64 {
        ratio(self.read_bytes as f64 / 1024.0, self.read_requests)
    }

    /// iostat `wareq-sz` in KiB; 0 when there were no writes.
    pub fn write_request_kib(&self) -> f64 {
        ratio(self.write_bytes as f64 / 1024.0, self.write_requests)
    }

    /// iostat `r_await`: mean ms per completed read; 0 when there were none.
    pub fn read_await_ms(&self) -> f64 {
        ratio(self.read_ms as f64, self.read_requests)
    }

    /// iostat `w_await`: mean ms per completed write; 0 when there were none.
    pub fn write_await_ms(&self) -> f64 {
        ratio(self.write_ms as f64, self.write_requests)
    }

    /// iostat `aqu-sz`: mean number of requests queued or in service.
    pub fn queue_size(&self) -> f64 {
        self.per_second(self.weighted_ms as f64 / 1000.0)
    }

    /// iostat `%util`: share of the interval with at least one request in
    /// flight, capped at 100.
    pub fn utilization_pct(&self) -> f64 {
        self.per_second(self.busy_ms as f64 / 10.0).min(100.0)
    }

    fn per_second(&self, amount: f64) -> f64 {
        if self.seconds > 0.0 {
            amount / self.seconds
        } else {
            0.0
        }
    }
}

fn ratio(amount: f64, requests: u64) -> f64 {
    if requests == 0 {
        0.0
    } else {
        amount / requests as f64
    }
}

impl DeviceDelta {
    /// The iostat -x view of this delta, labelled with the device's role.
    pub fn figures(&self, role: &str) -> IostatFigures {
        IostatFigures {
            device: self.device.clone(),
            role: role.to_string(),
            read_requests: self.read_requests,
            write_requests: self.write_requests,
            flush_requests: self.flush_requests,
            read_merges: self.read_merges,
            write_merges: self.write_merges,
            discard_requests: self.discard_requests,
            discard_merges: self.discard_merges,
            discard_bytes: self.discard_bytes,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            r_per_s: self.read_requests_per_s(),
            w_per_s: self.write_requests_per_s(),
            read_mb_per_s: self.read_mb_per_s(),
            write_mb_per_s: self.write_mb_per_s(),
            rareq_sz_kib: self.read_request_kib(),
            wareq_sz_kib: self.write_request_kib(),
            r_await_ms: self.read_await_ms(),
            w_await_ms: self.write_await_ms(),
            aqu_sz: self.queue_size(),
            util_pct: self.utilization_pct(),
        }
    }
}
