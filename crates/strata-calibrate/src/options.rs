//! The options of `strata calibrate` as clap reads them (the doc comments
//! are the `--help` text and the manual page), and the value parsers of
//! those that take a pattern, a range or a distribution.
//!
//! Not for: what the options resolve to (`request`).

use crate::calibration::RangeSpec;
use crate::plan::Workload;
use crate::spec::{Distribution, SyncMode};
use std::path::PathBuf;
use std::time::Duration;
use strata_core::input;
use strata_io::IoEngineKind;
use strata_nfs::DurableWrites;

/// The options of one `strata calibrate`, as given.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct CalibrateRequest {
    /// Workload: small-random-read (8 KiB random reads: index lookups), large-read
    /// (1 MiB sequential: scans), random-write (8 KiB: the database writer),
    /// log-write (small sequential durable writes: the commit log), mixed
    /// (8 KiB random, --read-pct). Default: a short profile of reads at queue
    /// depth 1 and 32, large reads, and log writes where the target may be
    /// written; or, when free-form options (--bs, --rw, --qd, …) are given, one
    /// point shaped by them from small-random-read
    #[arg(long, value_name = "NAME", value_parser = |s: &str| input::one_of(s, Workload::NAMES, Workload::parse))]
    pub workload: Option<Workload>,

    /// Run an ORION-style matrix: small random reads at 0, 1, 2, 4, … --max-qd
    /// outstanding × 0 … --max-streams large sequential streams
    #[arg(long, conflicts_with = "workload")]
    pub sweep: bool,

    /// File or block device to test, or a file on an NFS server as
    /// nfs://HOST[:PORT]/EXPORT/PATH, read and written by strata's own NFS
    /// client (as Oracle's Direct NFS does). Default: a temporary file of
    /// --size in the current directory, removed afterwards
    #[arg(long, value_name = "PATH|URL")]
    pub target: Option<PathBuf>,

    /// With an nfs:// target: TCP connections to the server (Direct NFS's
    /// channels), each job's requests in flight spread over them, and the
    /// connections over the --nfs-address given [default: 1, or one per
    /// --nfs-address]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 64).map(|v| v as usize))]
    pub nfs_connections: Option<usize>,

    /// With an nfs:// target: an address of the server (a name or an IP)
    /// to spread the connections over, once per network path (Direct NFS's
    /// oranfstab `path:` lines); each must answer for the same file
    /// [default: the URL's host alone]
    #[arg(long, value_name = "ADDRESS")]
    pub nfs_address: Vec<String>,

    /// With an nfs:// target: the filer host's agent, http[s]://[USER[:PASSWORD]@]HOST:PORT
    /// (a strata agent there, `strata observe --prometheus ADDR --path EXPORT`,
    /// or node_exporter): the devices under the export and the host's
    /// interfaces over each point's window, beside strata's calls
    #[arg(long, value_name = "URL", value_parser = strata_agent::scrape::parse_agent)]
    pub agent: Option<strata_agent::endpoint::Endpoint>,

    /// While the points run, serve this machine's layers at
    /// http://ADDR/metrics as a strata agent does, strata's own NFS client
    /// among them as a mount (an nfs:// target), so that `strata observe
    /// --agent` or Prometheus follows the calibration live (e.g.
    /// 127.0.0.1:9478)
    #[arg(long, value_name = "ADDR", value_parser = listen_address)]
    pub prometheus: Option<String>,

    /// With an nfs:// target: the most bytes one READ or WRITE call carries,
    /// as a mount's rsize and wsize (a 1 MiB request at 32KiB is 32 calls)
    /// [default: the server's preferred sizes]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub nfs_transfer: Option<u64>,

    /// With an nfs:// target: how a durable write (log-write, --sync) is made
    /// durable: file-sync (each WRITE FILE_SYNC, one call) or commit (each
    /// WRITE UNSTABLE, then a COMMIT of its bytes: two calls) [default: file-sync]
    #[arg(long, value_name = "HOW", value_parser = |s: &str| input::one_of(s, DurableWrites::NAMES, DurableWrites::parse))]
    pub nfs_durable: Option<DurableWrites>,

    /// Directory of the temporary test file when no --target is given: a
    /// directory on the storage to test [default: the current directory]
    #[arg(long, value_name = "DIR", conflicts_with = "target")]
    pub work_dir: Option<PathBuf>,

    /// Size of the test file (IEC units: 1GiB = 1g; KB/MB/GB are decimal).
    /// [default: 1GiB, or the size of an existing file strata made]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub size: Option<u64>,

    /// Part of the target to use, START-END in bytes/sizes or percentages:
    /// 0-50% (the outer half of a disk: short-stroking), 1GiB-2GiB
    #[arg(long, value_name = "START-END", value_parser = parse_range)]
    pub range: Option<RangeSpec>,

    /// I/O engine: io_uring (many requests in flight per thread), psync
    /// (pread/pwrite, one thread per outstanding request) or nfs (strata's
    /// NFS client, the only one for an nfs:// target). [default: nfs for an
    /// nfs:// target; psync for log-write (pwrite then fdatasync, as a
    /// database's log writer does), else io_uring when the kernel allows it,
    /// else psync]
    #[arg(long, value_name = "ENGINE", value_parser = |s: &str| input::one_of(s, IoEngineKind::NAMES, IoEngineKind::parse))]
    pub engine: Option<IoEngineKind>,

    /// Go through the page cache instead of O_DIRECT (measures the cache, not the device)
    #[arg(long)]
    pub buffered: bool,

    /// Block size of each request (bytes or IEC size) [default: the workload's: 8KiB; 1MiB for large-read]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub bs: Option<u64>,

    /// fio-style pattern: randread, randwrite, randrw, read, write, rw (overrides the workload's)
    #[arg(long, value_name = "PATTERN", value_parser = parse_rw)]
    pub rw: Option<(f64, bool)>,

    /// Requests in flight per job (1-4096) [default: 1]
    #[arg(long, value_name = "N", value_parser = input::queue_depth)]
    pub qd: Option<usize>,

    /// Independent jobs (streams), each with --qd in flight (1-256) [default: 1]
    #[arg(long, value_name = "N", value_parser = input::jobs)]
    pub jobs: Option<usize>,

    /// Percentage of requests that are reads, 0-100 [default: the workload's; 70 for mixed]
    #[arg(long, value_name = "PCT", value_parser = input::percent)]
    pub read_pct: Option<f64>,

    /// Where random requests land: uniform, zipf:THETA (e.g. zipf:1.2),
    /// hotspot:OFFSET:SIZE:PCT (PCT% of requests inside SIZE at OFFSET), or
    /// sorted:BATCH (uniform blocks drawn BATCH at a time and read in
    /// ascending order, as PostgreSQL's bitmap heap scans read a statement's
    /// blocks: sorted:256 for strata run's default --work-unit) [default: uniform]
    #[arg(long, value_name = "DIST", value_parser = parse_distribution)]
    pub distribution: Option<Distribution>,

    /// Open-loop arrival rate in requests/s for the whole workload; latency is
    /// measured from each request's scheduled time, so queueing is not hidden
    #[arg(long, value_name = "IOPS", value_parser = input::rate)]
    pub rate_iops: Option<f64>,

    /// How writes are made durable: none, dsync (O_DSYNC) or fdatasync (after
    /// each write) [default: fdatasync for log-write, none otherwise]
    #[arg(long, value_name = "MODE", value_parser = |s: &str| input::one_of(s, SyncMode::NAMES, SyncMode::parse))]
    pub sync: Option<SyncMode>,

    /// Measured time of each point [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub duration: Option<Duration>,

    /// Unmeasured warm-up before each point's measured window [default: 2s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub ramp: Option<Duration>,

    /// Complete exactly N requests per point instead of running for a time (no ramp)
    #[arg(long, value_name = "N", value_parser = input::count, conflicts_with_all = ["duration", "ramp"])]
    pub ios: Option<u64>,

    /// Sweep: highest small-I/O outstanding level [default: 32]
    #[arg(long, value_name = "N", value_parser = input::queue_depth)]
    pub max_qd: Option<usize>,

    /// Sweep: most concurrent large-I/O streams [default: 2]
    #[arg(long, value_name = "N", value_parser = input::streams)]
    pub max_streams: Option<usize>,

    /// Sweep: block size of the large streams [default: 1MiB]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub large_bs: Option<u64>,

    /// Report the most IOPS whose p99 latency stays under this [default: 10ms]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub latency_target: Option<Duration>,

    /// Record every request slower than this with its time, offset and size [default: 500ms]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub outlier: Option<Duration>,

    /// Exit with status 3 when the verdict is "not a storage result"
    /// (buffered I/O, a device that moved less or more than strata
    /// completed, points without I/O); without it such a calibration exits 0
    #[arg(long)]
    pub strict: bool,

    /// Write points.csv and, for sweeps, ORION-style iops.csv, mbps.csv and lat.csv into DIR
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,

    /// Write the whole result as a Recording (docs/recording.md); a file
    /// already there is refused before any work
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Replace the --record file when it exists
    #[arg(long, requires = "record")]
    pub overwrite: bool,

    /// Allow write workloads on a block device (its contents are destroyed); refused
    /// anyway while it or a partition is mounted, in use, or carries a filesystem,
    /// LVM or RAID signature
    #[arg(long)]
    pub allow_write_device: bool,

    /// Do not trace each block request (BPF on the block tracepoints, as
    /// root): no device and queue time percentiles per point
    #[arg(long)]
    pub no_block_trace: bool,

    /// Seed for the offset generators (same seed, same offsets) [default: random]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
}

/// `--prometheus`: an address to listen on.
fn listen_address(text: &str) -> Result<String, String> {
    strata_observe::prometheus::parse_listen_address(text)
        .map(|_| text.to_string())
        .map_err(|error| format!("{error:#}"))
}

/// `--rw`: fio's pattern names, as the read percentage and whether random.
pub fn parse_rw(text: &str) -> Result<(f64, bool), String> {
    const NAMES: &[&str] = &["randread", "randwrite", "randrw", "read", "write", "rw"];
    input::one_of(text, NAMES, |name| match name {
        "randread" => Some((100.0, true)),
        "randwrite" => Some((0.0, true)),
        "randrw" => Some((50.0, true)),
        "read" => Some((100.0, false)),
        "write" => Some((0.0, false)),
        "rw" | "readwrite" => Some((50.0, false)),
        _ => None,
    })
}

/// `--range START-END`: percentages of the target or sizes.
pub fn parse_range(text: &str) -> Result<RangeSpec, String> {
    let (start, end) = text
        .split_once('-')
        .ok_or_else(|| format!("'{text}' is not START-END (e.g. 0-50% or 1GiB-2GiB)"))?;
    let range = if start.ends_with('%') || end.ends_with('%') {
        RangeSpec::Percent {
            start: input::percent(start)?,
            end: input::percent(end)?,
        }
    } else {
        let end = if end.is_empty() {
            None
        } else {
            Some(input::size(end)?)
        };
        RangeSpec::Bytes {
            start: input::size(start)?,
            end,
        }
    };
    let ordered = match range {
        RangeSpec::Percent { start, end } => start < end,
        RangeSpec::Bytes { start, end } => end.is_none_or(|end| start < end),
    };
    if !ordered {
        return Err(format!("'{text}': START must be below END"));
    }
    Ok(range)
}

/// `--distribution`.
pub fn parse_distribution(text: &str) -> Result<Distribution, String> {
    let parts: Vec<&str> = text.split(':').collect();
    match parts.as_slice() {
        ["uniform"] => Ok(Distribution::Uniform),
        ["zipf", theta] => Ok(Distribution::Zipf {
            theta: input::zipf_theta(theta)?,
        }),
        ["hotspot", offset, size, pct] => Ok(Distribution::Hotspot {
            offset_bytes: input::size(offset)?,
            size_bytes: input::size(size)?,
            pct: input::percent(pct)?,
        }),
        ["sorted", batch] => Ok(Distribution::Sorted {
            batch: input::bounded(batch, 1, 1 << 20)? as u32,
        }),
        ["batches", batch] => Ok(Distribution::Batches {
            batch: input::bounded(batch, 1, 1 << 20)? as u32,
        }),
        _ => Err(format!(
            "'{text}' is not one of: uniform, zipf:THETA, hotspot:OFFSET:SIZE:PCT, sorted:BATCH, \
             batches:BATCH"
        )),
    }
}
