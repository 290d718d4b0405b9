//! The options of every `strata model` subcommand, as the command line
//! gives them (their doc comments are the `--help` text); the binary turns
//! them into this module's requests, `--from` measurements included.
//!
//! Not for: the arithmetic (`crate::raid`, `crate::queue`, …) or the
//! layout of results (the other `command` modules).

use crate::input::{
    calibration_points, centre_list, disk_counts, fraction, fractions, non_negative, number_range,
    positive, queue_depths, sizes, skew,
};
use crate::{flash_cache::Skew, queue::Centre, raid::RaidLevel};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::Duration;
use strata_core::input;
use strata_output::args::OutputArgs;

#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub model: ModelCommand,
}

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Back-end IOPS per disk for a front-end load on a RAID level; --min-disks for the inverse
    Raid(RaidArgs),
    /// Time of a synchronous remote write over distance; writes in flight to fill an async link
    Replication(ReplicationArgs),
    /// Response time vs utilization (M/M/1, M/D/1, M/G/1, M/M/c), or a closed system by MVA
    Queue(QueueArgs),
    /// Random IOPS of a rotating disk from rpm, seek and transfer, with queuing and short stroking
    Disk(DiskArgs),
    /// Flash cache size, its RAM metadata, and the hit ratio and read latency it buys
    FlashCache(FlashCacheArgs),
    /// Representative workloads: cluster transactions (CSV of demands per resource)
    Cluster(ClusterArgs),
    /// Break an average commit wait into log write I/O, log writer CPU and the rest
    Commit(CommitArgs),
    /// Predict a SLOB run from a calibrate curve: device reads/s and latency per session count (MVA)
    Predict(PredictArgs),
    /// NFS throughput from round trip, transfer size and calls in flight per connection; --from checks it against a calibrate Recording of an nfs:// target
    Nfs(NfsArgs),
}

/// Aliases so clap takes each option once, as one list, not repeated.
pub type Numbers = Vec<f64>;
pub type DiskCounts = Vec<u32>;
pub type QueueDepths = Vec<u32>;
pub type Sizes = Vec<u64>;
pub type Centres = Vec<Centre>;

#[derive(Args, Debug)]
pub struct RaidArgs {
    /// Front-end IOPS: a value, or FROM-TO:STEP (500-2000:500)
    #[arg(long, value_name = "IOPS", value_parser = number_range, required_unless_present = "from")]
    pub iops: Option<Numbers>,
    /// Percentage of front-end I/Os that are reads, 0-100
    #[arg(long, value_name = "PCT", value_parser = input::percent, required_unless_present = "from")]
    pub read_pct: Option<f64>,
    /// Take the front-end IOPS and read percentage not given as options from
    /// a Recording's devices (r/s + w/s over its measured window)
    #[arg(long, value_name = "RECORDING")]
    pub from: Option<PathBuf>,
    /// RAID level: 0, 1, 10, 5 or 6
    #[arg(long, value_name = "LEVEL", required_unless_present = "write_penalty",
          value_parser = |s: &str| input::one_of(s, RaidLevel::NAMES, RaidLevel::parse))]
    pub raid: Option<RaidLevel>,
    /// Back-end I/Os per front-end write, instead of --raid
    #[arg(long, value_name = "N", conflicts_with = "raid", value_parser = positive)]
    pub write_penalty: Option<f64>,
    /// Disks (columns) in the set: a value or a list (8,10,12)
    #[arg(long, value_name = "N[,N…]", value_parser = disk_counts, required_unless_present = "min_disks")]
    pub disks: Option<DiskCounts>,
    /// Per-disk ceiling in IOPS [default: 150, or 1 / --service-time]
    #[arg(long, value_name = "IOPS", value_parser = positive, conflicts_with = "service_time")]
    pub ceiling: Option<f64>,
    /// Per-disk service time; the ceiling is 1 / service time
    #[arg(long, value_name = "TIME", value_parser = input::duration)]
    pub service_time: Option<Duration>,
    /// Print the fewest disks that keep each one under the ceiling
    #[arg(long)]
    pub min_disks: bool,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct ReplicationArgs {
    /// Write size (8k = 8 KiB)
    #[arg(long, value_name = "SIZE", value_parser = input::size, default_value = "2k")]
    pub size: u64,
    /// One-way distance in km
    #[arg(long, value_name = "KM", value_parser = non_negative, allow_negative_numbers = true)]
    pub distance_km: f64,
    /// Fixed overhead of one write in the array
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "600us")]
    pub overhead: Duration,
    /// Time per KiB measured on a local write [default: size ÷ link bandwidth]
    #[arg(long, value_name = "TIME", value_parser = input::duration)]
    pub per_kib: Option<Duration>,
    /// Derive --overhead and --per-kib from two local writes: SIZE1=TIME1,SIZE2=TIME2
    #[arg(long, value_name = "S=T,S=T", value_parser = calibration_points, conflicts_with_all = ["overhead", "per_kib"])]
    pub calibrate_from: Option<[(f64, f64); 2]>,
    /// Link speed in Gb/s
    #[arg(long, value_name = "GBIT", value_parser = positive, default_value = "2")]
    pub link_gbit: f64,
    /// Fibre Channel: 10 bits per byte on the wire (2 Gb/s ≈ 200 MB/s)
    #[arg(long)]
    pub fibre_channel: bool,
    /// Round trips per write: 1, or 2 for arrays that ask before sending
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 2), default_value = "1")]
    pub round_trips: u64,
    /// Propagation delay of the fibre in µs per km
    #[arg(long, value_name = "US", value_parser = positive, default_value = "5")]
    pub us_per_km: f64,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct QueueArgs {
    /// Open model: mm1, md1, mg1 (with --cv), mmc (with --servers)
    #[arg(long, value_name = "MODEL", default_value = "mm1",
          value_parser = |s: &str| input::one_of(s, &["mm1", "md1", "mg1", "mmc"], |n| ["mm1", "md1", "mg1", "mmc"].contains(&n).then(|| n.to_string())))]
    pub model: String,
    /// Mean service time of the open queue
    #[arg(long, value_name = "TIME", value_parser = input::duration, required_unless_present_any = ["centres", "from"])]
    pub service_time: Option<Duration>,
    /// Coefficient of variation of the service time (σ / mean), for mg1
    #[arg(long, value_name = "CV", value_parser = non_negative, default_value = "1")]
    pub cv: f64,
    /// Servers, for mmc
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 100_000), default_value = "1")]
    pub servers: u64,
    /// One arrival rate (requests/s) instead of the utilization table
    #[arg(long, value_name = "PER_S", value_parser = non_negative)]
    pub arrival_rate: Option<f64>,
    /// Utilizations for the table, percentages [default: 10,20,…,90,95]
    #[arg(long, value_name = "PCT,…", value_parser = fractions)]
    pub utilization: Option<Numbers>,
    /// Closed system by MVA: service centres NAME=DEMAND (cpu=20ms,disk=30ms)
    #[arg(long, value_name = "NAME=TIME,…", value_parser = centre_list, conflicts_with_all = ["arrival_rate", "utilization"])]
    pub centres: Option<Centres>,
    /// Think time between a user's interactions, for --centres
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "0s")]
    pub think_time: Duration,
    /// Users 1..N, for --centres
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 100_000), default_value = "10")]
    pub users: u64,
    /// Take the service time (busy time per request) and arrival rate of a
    /// device from a Recording's window, and print the measured await beside
    /// the model's response time
    #[arg(long, value_name = "RECORDING", conflicts_with = "centres")]
    pub from: Option<PathBuf>,
    /// With --from: the device (default: the busiest)
    #[arg(long, value_name = "NAME", requires = "from")]
    pub device: Option<String>,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct DiskArgs {
    /// Spindle speed in revolutions per minute
    #[arg(long, value_name = "RPM", value_parser = positive, default_value = "15000")]
    pub rpm: f64,
    /// Average full-stroke seek [default: 3.5ms at 15k rpm, 4.5ms at 10k, 8.5ms at 7.2k, else 12ms]
    #[arg(long, value_name = "TIME", value_parser = input::duration)]
    pub seek: Option<Duration>,
    /// Shortest seek (track to track plus settle)
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "500us")]
    pub settle: Duration,
    /// Media transfer rate per second (150MB = 150 × 10^6 bytes/s)
    #[arg(long, value_name = "SIZE", value_parser = input::size, default_value = "150MB")]
    pub transfer_rate: u64,
    /// Request size
    #[arg(long, value_name = "SIZE", value_parser = input::size, default_value = "8k")]
    pub size: u64,
    /// Percentage of the disk in use (short stroking), above 0 and at most 100
    #[arg(long, value_name = "PCT", value_parser = fraction, default_value = "100")]
    pub span: f64,
    /// Queue depths (commands queued at the disk), comma list
    #[arg(long, value_name = "N,…", value_parser = queue_depths, default_value = "1,4,16,32,64")]
    pub qd: QueueDepths,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct FlashCacheArgs {
    /// Database buffer cache size
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub buffer_cache: u64,
    /// Data set size (what is read)
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub data: u64,
    /// Flash cache sizes to evaluate [default: 2×, 5× and 10× the buffer cache]
    #[arg(long, value_name = "SIZE,…", value_parser = sizes)]
    pub flash: Option<Sizes>,
    /// Database block size
    #[arg(long, value_name = "SIZE", value_parser = input::size, default_value = "8k")]
    pub block_size: u64,
    /// A cluster: ~200 bytes of RAM per cached block instead of ~100
    #[arg(long)]
    pub cluster: bool,
    /// Access skew: uniform, or zipf:THETA
    #[arg(long, value_name = "SKEW", value_parser = skew, default_value = "uniform")]
    pub skew: Skew,
    /// Latency of a buffer cache hit
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "10us")]
    pub ram_latency: Duration,
    /// Latency of a flash cache hit
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "500us")]
    pub flash_latency: Duration,
    /// Latency of a disk read
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "6ms")]
    pub disk_latency: Duration,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct ClusterArgs {
    /// CSV file: a header naming the resources, one row of demands per transaction
    #[arg(value_name = "CSV")]
    pub csv: PathBuf,
    /// Number of clusters to keep
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 100_000), default_value = "3")]
    pub clusters: u64,
    /// Cluster on ln(1 + demand)
    #[arg(long)]
    pub log: bool,
    /// Scale each resource to 0..1 by its range before clustering
    #[arg(long)]
    pub normalize: bool,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// A calibrate Recording of the storage: 8 KiB random reads at 1
    /// outstanding request and more (calibrate --sweep)
    #[arg(long, value_name = "CAL.strata")]
    pub calibration: PathBuf,
    /// Session counts to predict, comma-separated
    #[arg(long, value_name = "N,…", value_parser = queue_depths, default_value = "1,2,4,8,16,32")]
    pub sessions: QueueDepths,
    /// CPU time per block of the database and the driver with the block
    /// cached (a run with --predict measures it and shows it)
    #[arg(long, value_name = "TIME", value_parser = input::duration, required_unless_present = "from")]
    pub cpu_per_block: Option<Duration>,
    /// Time per block that is neither CPU nor device (wake-ups, round trips)
    #[arg(long, value_name = "TIME", value_parser = input::duration)]
    pub delay_per_block: Option<Duration>,
    /// Take the CPU per block from a run's Recording: a sweep's measured
    /// one-session cached window, else the run's window (CPU seconds of the
    /// server and the driver per block read, the kernel's part included)
    #[arg(long, value_name = "RUN.strata", conflicts_with = "cpu_per_block")]
    pub from: Option<PathBuf>,
    /// Blocks each statement reads (the run's --work-unit) [default: 256, or the --from run's]
    #[arg(long, value_name = "BLOCKS", value_parser = |s: &str| input::bounded(s, 1, 1 << 20).map(|v| v as u32))]
    pub work_unit: Option<u32>,
    /// Mean think time per statement
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "0s")]
    pub think_time: Duration,
    /// CPU time per block that runs while the device reads (PostgreSQL's
    /// prefetch) [default: 0, or a --from sweep's reading window against
    /// this calibration's latency at 1 outstanding]
    #[arg(long, value_name = "TIME", value_parser = input::duration)]
    pub overlap_per_block: Option<Duration>,
    /// Bytes of the database's block, the size of calibrate's reads the
    /// curve is taken from [default: 8KiB, PostgreSQL's; or the --from run's]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub block_size: Option<u64>,
    /// CPUs the sessions and the server share [default: this machine's, or the --from run's]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 100_000).map(|v| v as u32))]
    pub cpus: Option<u32>,
    /// CPUs the model's CPU centre has, 1 to --cpus [default: all; a
    /// --from sweep's wait for a CPU past their queue is fitted with all]
    #[arg(long, value_name = "N", value_parser = positive)]
    pub cpu_servers: Option<f64>,
    /// Device reads one session keeps in flight, at least 1 (more where the
    /// server reads ahead of its scan: PostgreSQL 18's read streams), at
    /// every session count [default: 1, or what the --from sweep measured:
    /// its reading window's, linear to its window of more sessions than
    /// CPUs]
    #[arg(long, value_name = "N", value_parser = positive)]
    pub session_reads_in_flight: Option<f64>,
    /// Statements' p99 over their mean, at least 1, at every session
    /// count: a statement's p99 is its predicted mean × this [default: a
    /// --from sweep's one session reading from the device, linear to its
    /// window of more sessions than CPUs; else calibrate's spread on each
    /// statement's waits]
    #[arg(long, value_name = "RATIO", value_parser = positive)]
    pub statement_p99_over_mean: Option<f64>,
    /// Percentage of statements that update --update-work-unit rows and
    /// commit, 0-100 (the run's --update-pct) [default: 0, or the --from
    /// run's]
    #[arg(long, value_name = "PCT", value_parser = input::percent)]
    pub update_pct: Option<f64>,
    /// Rows each update changes (the run's --update-work-unit) [default: 8,
    /// or the --from run's]
    #[arg(long, value_name = "ROWS", value_parser = |s: &str| input::bounded(s, 1, 1 << 20).map(|v| v as u32))]
    pub update_work_unit: Option<u32>,
    /// One COMMIT's time, the wait for the WAL's flush (calibrate
    /// --workload log-write's mean latency) [default: the --from run's
    /// mean COMMIT]
    #[arg(long, value_name = "TIME", value_parser = input::duration)]
    pub commit_time: Option<Duration>,
    /// Device write requests per updated row (its block written back, the
    /// WAL's writes), which take the device's time as reads do [default:
    /// the --from run's data devices' write requests over its rows
    /// updated; else 1]
    #[arg(long, value_name = "N", value_parser = non_negative)]
    pub device_writes_per_updated_row: Option<f64>,
    /// Print the model's inputs and each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct CommitArgs {
    /// Average commit wait (e.g. Oracle "log file sync")
    #[arg(long, value_name = "TIME", value_parser = input::duration, required_unless_present = "from")]
    pub commit_wait: Option<Duration>,
    /// Average log write I/O time (e.g. "log file parallel write")
    #[arg(long, value_name = "TIME", value_parser = input::duration, required_unless_present = "from")]
    pub log_write_io: Option<Duration>,
    /// Take the waits not given as options from a strata run Recording
    /// (COMMIT latency; WAL write + sync time per sync) or an AWR/STATSPACK
    /// report (log file sync; log file parallel write)
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Log writer's own CPU time per write
    #[arg(long, value_name = "TIME", value_parser = input::duration, default_value = "0s")]
    pub log_writer_cpu: Duration,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args, Debug)]
pub struct NfsArgs {
    /// One call's round trip with nothing else in flight (as calibrate's NFS
    /// table shows it at --qd 1)
    #[arg(long, value_name = "TIME", value_parser = input::duration, required_unless_present = "from")]
    pub round_trip: Option<Duration>,
    /// The most bytes one READ or WRITE call carries (a mount's rsize and
    /// wsize) [default: 1MiB]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub transfer: Option<u64>,
    /// The database's I/O (8k: PostgreSQL's block; 1m: a scan's read)
    /// [default: 8KiB]
    #[arg(long, value_name = "SIZE", value_parser = input::size)]
    pub io_size: Option<u64>,
    /// TCP connections to the filer (Direct NFS's channels) [default: 1]
    #[arg(long, value_name = "N", value_parser = |s: &str| input::bounded(s, 1, 1024).map(|n| n as u32))]
    pub connections: Option<u32>,
    /// The most calls per second one connection makes (one client thread
    /// each: 1 ÷ its CPU per call) [default: no such bound; with --from,
    /// measured]
    #[arg(long, value_name = "CALLS", value_parser = positive)]
    pub connection_calls: Option<f64>,
    /// The link's speed in Gb/s [default: no such bound]
    #[arg(long, value_name = "GBIT", value_parser = positive)]
    pub link_gbit: Option<f64>,
    /// I/Os in flight: a value or a list (1,2,4,8) [default: 1,2,4,8,16,32]
    #[arg(long, value_name = "N[,N…]", value_parser = queue_depths)]
    pub outstanding: Option<QueueDepths>,
    /// A calibrate Recording of an nfs:// target: each of its points of one
    /// group predicted from the least-loaded point of the same call size
    /// (its round trip, and its CPU per call as each connection's ceiling),
    /// the measured figures beside
    #[arg(long, value_name = "RECORDING",
          conflicts_with_all = ["round_trip", "transfer", "io_size", "connections", "outstanding"])]
    pub from: Option<PathBuf>,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}
