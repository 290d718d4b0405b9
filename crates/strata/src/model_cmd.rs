//! `strata model`: command-line glue for the capacity models in
//! `strata-model` — parse the options, call the model, print a table, the
//! formula with the numbers in it (`--explain`), or JSON (`--json`).
//!
//! Not for: any arithmetic beyond unit conversion; the models live in
//! `strata-model` so they can be tested without the binary.

use crate::{model_from, parse};
use anyhow::Context;
use clap::{Args, Subcommand};
use serde::Serialize;
use std::time::Duration;
use strata_core::units::format_size;
use strata_model::{cluster, commit, disk, flash_cache, queue, raid, replication};

#[derive(Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    model: ModelCommand,
}

#[derive(Subcommand, Debug)]
enum ModelCommand {
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
}

#[derive(Args, Debug, Clone, Copy)]
struct Output {
    /// Print one JSON document
    #[arg(long)]
    json: bool,
    /// Print each formula with the numbers substituted
    #[arg(long)]
    explain: bool,
}

pub fn run(args: ModelArgs) -> anyhow::Result<i32> {
    match args.model {
        ModelCommand::Raid(args) => run_raid(args),
        ModelCommand::Replication(args) => run_replication(args),
        ModelCommand::Queue(args) => run_queue(args),
        ModelCommand::Disk(args) => run_disk(args),
        ModelCommand::FlashCache(args) => run_flash_cache(args),
        ModelCommand::Cluster(args) => run_cluster(args),
        ModelCommand::Commit(args) => run_commit(args),
    }?;
    Ok(0)
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    crate::outln!("{}", serde_json::to_string_pretty(value)?)?;
    Ok(())
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

fn fraction(input: &str) -> Result<f64, String> {
    parse::percent(input).map(|percent| percent / 100.0)
}

fn non_negative(input: &str) -> Result<f64, String> {
    let value: f64 = input
        .trim()
        .parse()
        .ok()
        .filter(|value: &f64| value.is_finite())
        .ok_or_else(|| format!("'{input}' is not a finite number"))?;
    if value < 0.0 {
        return Err(format!("must not be negative, got {input}"));
    }
    Ok(value)
}

fn positive(input: &str) -> Result<f64, String> {
    match non_negative(input)? {
        0.0 => Err("must be above 0".to_string()),
        value => Ok(value),
    }
}

/// Aliases so clap takes each option once, as one list, not repeated.
type Numbers = Vec<f64>;
type DiskCounts = Vec<u32>;

/// `N`, or `FROM-TO:STEP` (e.g. 500-2000:500).
fn number_range(input: &str) -> Result<Vec<f64>, String> {
    let Some((span, step)) = input.split_once(':') else {
        return Ok(vec![non_negative(input)?]);
    };
    let (from, to) = span
        .split_once('-')
        .ok_or_else(|| format!("'{input}' is not N or FROM-TO:STEP"))?;
    let (from, to, step) = (non_negative(from)?, non_negative(to)?, positive(step)?);
    if to < from || (to - from) / step > 10_000.0 {
        return Err(format!(
            "'{input}': TO must be ≥ FROM, with at most 10000 steps"
        ));
    }
    let steps = ((to - from) / step + 1e-9).floor() as usize;
    Ok((0..=steps).map(|i| from + step * i as f64).collect())
}

/// Comma-separated list, each element by `element`.
fn list_of<T>(input: &str, element: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    input.split(',').map(|item| element(item.trim())).collect()
}

fn disk_counts(input: &str) -> Result<Vec<u32>, String> {
    list_of(input, |item| {
        parse::bounded(item, 1, 1_000_000)
            .map(|n| n as u32)
            .map_err(|error| format!("{error} (there must be at least 1 disk)"))
    })
}

// ---- raid ---------------------------------------------------------------

#[derive(Args, Debug)]
struct RaidArgs {
    /// Front-end IOPS: a value, or FROM-TO:STEP (500-2000:500)
    #[arg(long, value_name = "IOPS", value_parser = number_range, required_unless_present = "from")]
    iops: Option<Numbers>,
    /// Percentage of front-end I/Os that are reads, 0-100
    #[arg(long, value_name = "PCT", value_parser = parse::percent, required_unless_present = "from")]
    read_pct: Option<f64>,
    /// Take the front-end IOPS and read percentage not given as options from
    /// a Recording's devices (r/s + w/s over its measured window)
    #[arg(long, value_name = "RECORDING")]
    from: Option<std::path::PathBuf>,
    /// RAID level: 0, 1, 10, 5 or 6
    #[arg(long, value_name = "LEVEL", required_unless_present = "write_penalty",
          value_parser = |s: &str| parse::one_of(s, raid::RaidLevel::NAMES, raid::RaidLevel::parse))]
    raid: Option<raid::RaidLevel>,
    /// Back-end I/Os per front-end write, instead of --raid
    #[arg(long, value_name = "N", conflicts_with = "raid", value_parser = positive)]
    write_penalty: Option<f64>,
    /// Disks (columns) in the set: a value or a list (8,10,12)
    #[arg(long, value_name = "N[,N…]", value_parser = disk_counts, required_unless_present = "min_disks")]
    disks: Option<DiskCounts>,
    /// Per-disk ceiling in IOPS [default: 150, or 1 / --service-time]
    #[arg(long, value_name = "IOPS", value_parser = positive, conflicts_with = "service_time")]
    ceiling: Option<f64>,
    /// Per-disk service time; the ceiling is 1 / service time
    #[arg(long, value_name = "TIME", value_parser = parse::duration)]
    service_time: Option<Duration>,
    /// Print the fewest disks that keep each one under the ceiling
    #[arg(long)]
    min_disks: bool,
    #[command(flatten)]
    output: Output,
}

#[derive(Serialize)]
struct RaidRow {
    #[serde(flatten)]
    load: raid::RaidLoad,
    ceiling_iops_per_disk: f64,
    over_ceiling: bool,
}

#[derive(Serialize)]
struct MinDisksRow {
    front_end_iops: f64,
    min_disks: u32,
}

fn raid_ceiling(args: &RaidArgs) -> anyhow::Result<f64> {
    match (args.ceiling, args.service_time) {
        (Some(ceiling), _) => Ok(ceiling),
        (None, Some(time)) => Ok(raid::ceiling_from_service_time(time.as_secs_f64())?),
        (None, None) => Ok(150.0),
    }
}

/// The front-end IOPS and read percentage: the options, else measured.
fn raid_front_end(args: &RaidArgs) -> anyhow::Result<(Numbers, f64)> {
    let measured = match (&args.from, &args.iops, args.read_pct) {
        (Some(path), None, _) | (Some(path), _, None) => {
            let figures = model_from::read(path)?;
            Some(model_from::front_end_load(&figures, path)?)
        }
        _ => None,
    };
    if let Some(load) = &measured {
        if !args.output.json {
            crate::outln!(
                "measured (device layer, {}): {:.0} requests/s, {:.1}% reads",
                load.devices.join(", "),
                load.iops,
                load.read_pct
            )?;
        }
    }
    let iops = args
        .iops
        .clone()
        .or(measured.as_ref().map(|load| vec![load.iops]))
        .context("--iops: give the front-end IOPS")?;
    let read_pct = args
        .read_pct
        .or(measured.as_ref().map(|load| load.read_pct))
        .context("--read-pct: give the read percentage")?;
    Ok((iops, read_pct))
}

fn run_raid(args: RaidArgs) -> anyhow::Result<()> {
    let penalty = args
        .write_penalty
        .or(args.raid.map(raid::RaidLevel::write_penalty))
        .context("give --raid or --write-penalty")?;
    let ceiling = raid_ceiling(&args)?;
    let (front_end, read_pct) = raid_front_end(&args)?;
    let read_fraction = read_pct / 100.0;
    anyhow::ensure!(!front_end.is_empty(), "--iops: give the front-end IOPS");
    if args.min_disks {
        let rows = front_end
            .iter()
            .map(|&iops| {
                let min_disks = raid::min_disks(iops, read_fraction, penalty, ceiling)?;
                Ok(MinDisksRow {
                    front_end_iops: iops,
                    min_disks,
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        return print_min_disks(&rows, penalty, ceiling, read_fraction, args.output);
    }
    let mut rows = Vec::new();
    for &iops in &front_end {
        for &disks in args.disks.as_deref().unwrap_or_default() {
            let input = raid::RaidInput {
                front_end_iops: iops,
                read_fraction,
                write_penalty: penalty,
                disks,
            };
            let load = raid::back_end_load(input)?;
            let over_ceiling = load.back_end_iops_per_disk > ceiling;
            rows.push(RaidRow {
                load,
                ceiling_iops_per_disk: ceiling,
                over_ceiling,
            });
        }
    }
    print_raid(&rows, args.output)
}

fn print_raid(rows: &[RaidRow], output: Output) -> anyhow::Result<()> {
    if output.json {
        return print_json(&rows);
    }
    crate::outln!(
        "{:>12} {:>6} {:>14} {:>18}  over ceiling",
        "front IOPS",
        "disks",
        "back-end IOPS",
        "IOPS per disk"
    )?;
    for row in rows {
        let load = &row.load;
        let flag = if row.over_ceiling {
            format!("YES (> {:.0} IOPS)", row.ceiling_iops_per_disk)
        } else {
            "no".into()
        };
        crate::outln!(
            "{:>12.0} {:>6} {:>14.0} {:>18.1}  {flag}",
            load.front_end_iops,
            load.disks,
            load.back_end_iops,
            load.back_end_iops_per_disk
        )?;
        if output.explain {
            crate::outln!(
                "  per disk = (reads + penalty × writes) / disks = ({:.0} + {} × {:.0}) / {} = {:.1} IOPS",
                load.read_iops, load.write_penalty, load.write_iops, load.disks, load.back_end_iops_per_disk
            )?;
        }
    }
    Ok(())
}

fn print_min_disks(
    rows: &[MinDisksRow],
    penalty: f64,
    ceiling: f64,
    read_fraction: f64,
    output: Output,
) -> anyhow::Result<()> {
    if output.json {
        return print_json(&rows);
    }
    for row in rows {
        crate::outln!(
            "{:.0} front-end IOPS need at least {} disks at {:.1} IOPS per disk",
            row.front_end_iops,
            row.min_disks,
            ceiling
        )?;
        if output.explain {
            let reads = row.front_end_iops * read_fraction;
            let writes = row.front_end_iops - reads;
            crate::outln!(
                "  disks = ceil((reads + penalty × writes) / ceiling) = ceil(({reads:.0} + {penalty} × {writes:.0}) / {ceiling:.1}) = {}",
                row.min_disks
            )?;
        }
    }
    Ok(())
}

// ---- replication --------------------------------------------------------

#[derive(Args, Debug)]
struct ReplicationArgs {
    /// Write size (8k = 8 KiB)
    #[arg(long, value_name = "SIZE", value_parser = parse::size, default_value = "2k")]
    size: u64,
    /// One-way distance in km
    #[arg(long, value_name = "KM", value_parser = non_negative, allow_negative_numbers = true)]
    distance_km: f64,
    /// Fixed overhead of one write in the array
    #[arg(long, value_name = "TIME", value_parser = parse::duration, default_value = "600us")]
    overhead: Duration,
    /// Time per KiB measured on a local write [default: size ÷ link bandwidth]
    #[arg(long, value_name = "TIME", value_parser = parse::duration)]
    per_kib: Option<Duration>,
    /// Derive --overhead and --per-kib from two local writes: SIZE1=TIME1,SIZE2=TIME2
    #[arg(long, value_name = "S=T,S=T", value_parser = calibration_points, conflicts_with_all = ["overhead", "per_kib"])]
    calibrate_from: Option<[(f64, f64); 2]>,
    /// Link speed in Gb/s
    #[arg(long, value_name = "GBIT", value_parser = positive, default_value = "2")]
    link_gbit: f64,
    /// Fibre Channel: 10 bits per byte on the wire (2 Gb/s ≈ 200 MB/s)
    #[arg(long)]
    fibre_channel: bool,
    /// Round trips per write: 1, or 2 for arrays that ask before sending
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 2), default_value = "1")]
    round_trips: u64,
    /// Propagation delay of the fibre in µs per km
    #[arg(long, value_name = "US", value_parser = positive, default_value = "5")]
    us_per_km: f64,
    #[command(flatten)]
    output: Output,
}

fn calibration_points(input: &str) -> Result<[(f64, f64); 2], String> {
    let points = list_of(input, |pair| {
        let (size, time) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}' is not SIZE=TIME"))?;
        Ok((
            parse::size(size)? as f64,
            parse::duration(time)?.as_secs_f64(),
        ))
    })?;
    <[(f64, f64); 2]>::try_from(points).map_err(|_| "give exactly two SIZE=TIME points".to_string())
}

#[derive(Serialize)]
struct ReplicationReport {
    size_bytes: u64,
    distance_km: f64,
    link_bytes_per_s: f64,
    calibration: Option<replication::Calibration>,
    sync: replication::SyncWrite,
    asynchronous: replication::AsyncPipe,
}

fn run_replication(args: ReplicationArgs) -> anyhow::Result<()> {
    let link = replication::link_bytes_per_s(args.link_gbit, args.fibre_channel)?;
    let calibration = args
        .calibrate_from
        .map(replication::calibrate)
        .transpose()?;
    let (overhead_s, transfer) = match (calibration, args.per_kib) {
        (Some(fit), _) => (
            fit.overhead_s,
            replication::Transfer::PerKib {
                seconds_per_kib: fit.seconds_per_kib,
            },
        ),
        (None, Some(per_kib)) => (
            args.overhead.as_secs_f64(),
            replication::Transfer::PerKib {
                seconds_per_kib: per_kib.as_secs_f64(),
            },
        ),
        (None, None) => (
            args.overhead.as_secs_f64(),
            replication::Transfer::Bandwidth { bytes_per_s: link },
        ),
    };
    let sync = replication::sync_write(replication::SyncInput {
        size_bytes: args.size as f64,
        overhead_s,
        transfer,
        distance_km: args.distance_km,
        round_trips: args.round_trips as u32,
        us_per_km: args.us_per_km,
        link_bytes_per_s: link,
    })?;
    let asynchronous =
        replication::async_pipe(args.size as f64, link, args.distance_km, args.us_per_km)?;
    let report = ReplicationReport {
        size_bytes: args.size,
        distance_km: args.distance_km,
        link_bytes_per_s: link,
        calibration,
        sync,
        asynchronous,
    };
    if args.output.json {
        return print_json(&report);
    }
    print_replication(&report, &args)
}

fn print_replication(report: &ReplicationReport, args: &ReplicationArgs) -> anyhow::Result<()> {
    let (sync, pipe) = (&report.sync, &report.asynchronous);
    let size = format_size(report.size_bytes);
    crate::outln!("synchronous {size} write over {} km:", report.distance_km)?;
    crate::outln!("  time {:.3} ms, {:.0} writes/s per outstanding write, {:.2} MB/s, {:.2}% of a {:.0} MB/s link",
        sync.total_s * 1e3, sync.writes_per_s, sync.mb_per_s, sync.link_percent, report.link_bytes_per_s / 1e6)?;
    if args.output.explain {
        if let Some(fit) = &report.calibration {
            crate::outln!(
                "  calibrated: overhead {:.4} ms, {:.5} ms per KiB",
                fit.overhead_s * 1e3,
                fit.seconds_per_kib * 1e3
            )?;
        }
        crate::outln!("  time = overhead + transfer + round trips × 2 × distance × µs/km = {:.4} ms + {:.4} ms + {} × 2 × {} km × {} µs = {:.4} ms",
            sync.overhead_s * 1e3, sync.transfer_s * 1e3, args.round_trips, report.distance_km, args.us_per_km, sync.total_s * 1e3)?;
        crate::outln!(
            "  writes/s = 1 / {:.4} ms = {:.1} /s",
            sync.total_s * 1e3,
            sync.writes_per_s
        )?;
    }
    crate::outln!("asynchronous stream of {size} writes:")?;
    crate::outln!("  frame length {:.3} km; {:.1} frames fill the fibre one way; {} writes outstanding keep the link busy (round trip)",
        pipe.frame_km, pipe.frames_one_way, pipe.outstanding_writes)?;
    if args.output.explain {
        crate::outln!(
            "  frame km = size ÷ bandwidth × km/s = {} B ÷ {:.0} B/s × {:.0} km/s = {:.3} km",
            report.size_bytes,
            report.link_bytes_per_s,
            1e6 / args.us_per_km,
            pipe.frame_km
        )?;
        crate::outln!(
            "  outstanding = max(1, ceil(2 × distance ÷ frame)) = ceil(2 × {} km ÷ {:.3} km) = {}",
            report.distance_km,
            pipe.frame_km,
            pipe.outstanding_writes
        )?;
    }
    Ok(())
}

// ---- queue --------------------------------------------------------------

#[derive(Args, Debug)]
struct QueueArgs {
    /// Open model: mm1, md1, mg1 (with --cv), mmc (with --servers)
    #[arg(long, value_name = "MODEL", default_value = "mm1",
          value_parser = |s: &str| parse::one_of(s, &["mm1", "md1", "mg1", "mmc"], |n| ["mm1", "md1", "mg1", "mmc"].contains(&n).then(|| n.to_string())))]
    model: String,
    /// Mean service time of the open queue
    #[arg(long, value_name = "TIME", value_parser = parse::duration, required_unless_present_any = ["centres", "from"])]
    service_time: Option<Duration>,
    /// Coefficient of variation of the service time (σ / mean), for mg1
    #[arg(long, value_name = "CV", value_parser = non_negative, default_value = "1")]
    cv: f64,
    /// Servers, for mmc
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 100_000), default_value = "1")]
    servers: u64,
    /// One arrival rate (requests/s) instead of the utilization table
    #[arg(long, value_name = "PER_S", value_parser = non_negative)]
    arrival_rate: Option<f64>,
    /// Utilizations for the table, percentages [default: 10,20,…,90,95]
    #[arg(long, value_name = "PCT,…", value_parser = |s: &str| list_of(s, fraction))]
    utilization: Option<Numbers>,
    /// Closed system by MVA: service centres NAME=DEMAND (cpu=20ms,disk=30ms)
    #[arg(long, value_name = "NAME=TIME,…", value_parser = centre_list, conflicts_with_all = ["arrival_rate", "utilization"])]
    centres: Option<Centres>,
    /// Think time between a user's interactions, for --centres
    #[arg(long, value_name = "TIME", value_parser = parse::duration, default_value = "0s")]
    think_time: Duration,
    /// Users 1..N, for --centres
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 100_000), default_value = "10")]
    users: u64,
    /// Take the service time (busy time per request) and arrival rate of a
    /// device from a Recording's window, and print the measured await beside
    /// the model's response time
    #[arg(long, value_name = "RECORDING", conflicts_with = "centres")]
    from: Option<std::path::PathBuf>,
    /// With --from: the device (default: the busiest)
    #[arg(long, value_name = "NAME", requires = "from")]
    device: Option<String>,
    #[command(flatten)]
    output: Output,
}

type Centres = Vec<queue::Centre>;

fn centre_list(input: &str) -> Result<Centres, String> {
    list_of(input, |pair| {
        let (name, time) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}' is not NAME=TIME"))?;
        Ok(queue::Centre {
            name: name.trim().to_string(),
            demand_s: parse::duration(time)?.as_secs_f64(),
        })
    })
}

fn open_model(args: &QueueArgs) -> queue::OpenModel {
    match args.model.as_str() {
        "md1" => queue::OpenModel::MD1,
        "mg1" => queue::OpenModel::MG1 {
            service_cv: args.cv,
        },
        "mmc" => queue::OpenModel::MMc {
            servers: args.servers as u32,
        },
        _ => queue::OpenModel::MM1,
    }
}

fn run_queue(args: QueueArgs) -> anyhow::Result<()> {
    if let Some(centres) = &args.centres {
        let result = queue::mva(centres, args.think_time.as_secs_f64(), args.users as u32)?;
        return print_mva(&result, args.output);
    }
    let model = open_model(&args);
    let measured = match &args.from {
        Some(path) => {
            let figures = model_from::read(path)?;
            Some(model_from::device_queue(
                &figures,
                path,
                args.device.as_deref(),
            )?)
        }
        None => None,
    };
    let service_s = args
        .service_time
        .map(|time| time.as_secs_f64())
        .or(measured.as_ref().map(|device| device.service_time_ms / 1e3))
        .context("--service-time: give the mean service time")?;
    let measured_rate = measured
        .as_ref()
        .filter(|_| args.utilization.is_none())
        .map(|device| device.requests_per_s);
    let arrival_rate = args.arrival_rate.or(measured_rate);
    let rates = match (arrival_rate, &args.utilization) {
        (Some(rate), _) => vec![rate],
        (None, Some(levels)) => levels
            .iter()
            .map(|&u| queue::arrival_rate_at(model, u, service_s))
            .collect::<Result<_, _>>()?,
        (None, None) => [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
            .iter()
            .map(|&u| queue::arrival_rate_at(model, u, service_s))
            .collect::<Result<_, _>>()?,
    };
    let rows = rates
        .iter()
        .map(|&rate| queue::open(model, rate, service_s))
        .collect::<Result<Vec<_>, _>>()?;
    print_open(&rows, model, measured.as_ref(), args.output)
}

fn print_open(
    rows: &[queue::OpenResult],
    model: queue::OpenModel,
    measured: Option<&model_from::DeviceQueue>,
    output: Output,
) -> anyhow::Result<()> {
    if output.json {
        return print_json(
            &serde_json::json!({ "model": model, "rows": rows, "measured": measured }),
        );
    }
    if let Some(device) = measured {
        crate::outln!(
            "measured (device layer, {}): {:.1} requests/s, service time {:.3} ms (busy time per request), \
             utilization {:.1}%, await {:.3} ms, aqu-sz {:.2}",
            device.device,
            device.requests_per_s,
            device.service_time_ms,
            device.util_pct,
            device.await_ms,
            device.queue_size
        )?;
    }
    crate::outln!(
        "{:>14} {:>12} {:>14} {:>16} {:>14}",
        "arrivals /s",
        "utilization",
        "wait ms",
        "response ms",
        "in system"
    )?;
    for row in rows {
        crate::outln!(
            "{:>14.1} {:>11.1}% {:>14.3} {:>16.3} {:>14.3}",
            row.arrival_rate,
            row.utilization * 100.0,
            row.wait_s * 1e3,
            row.response_time_s * 1e3,
            row.in_system
        )?;
        if output.explain {
            explain_open(row, model)?;
        }
    }
    Ok(())
}

fn explain_open(row: &queue::OpenResult, model: queue::OpenModel) -> anyhow::Result<()> {
    let (s, rho) = (row.service_time_s * 1e3, row.utilization);
    match model {
        queue::OpenModel::MM1 => crate::outln!("  R = S / (1 − ρ) = {s:.3} ms / (1 − {rho:.3}) = {:.3} ms", row.response_time_s * 1e3)?,
        queue::OpenModel::MD1 => crate::outln!("  R = S + ρ S / (2 (1 − ρ)) = {s:.3} + {rho:.3} × {s:.3} / (2 × {:.3}) = {:.3} ms", 1.0 - rho, row.response_time_s * 1e3)?,
        queue::OpenModel::MG1 { service_cv } => crate::outln!("  R = S + ρ S (1 + cv²) / (2 (1 − ρ)) = {s:.3} + {rho:.3} × {s:.3} × (1 + {service_cv}²) / (2 × {:.3}) = {:.3} ms", 1.0 - rho, row.response_time_s * 1e3)?,
        queue::OpenModel::MMc { servers } => crate::outln!("  R = S + C(c, a) S / (c (1 − ρ)) = {s:.3} + {:.4} × {s:.3} / ({servers} × {:.3}) = {:.3} ms",
            queue::erlang_c(servers, rho * f64::from(servers)), 1.0 - rho, row.response_time_s * 1e3)?,
    }
    crate::outln!("  U = X × S = {:.1}/s × {s:.3} ms = {:.1}%; N = X × R = {:.1}/s × {:.3} ms = {:.3} requests",
        row.arrival_rate, rho * 100.0, row.arrival_rate, row.response_time_s * 1e3, row.in_system)?;
    Ok(())
}

fn print_mva(result: &queue::MvaResult, output: Output) -> anyhow::Result<()> {
    if output.json {
        return print_json(result);
    }
    crate::outln!("bottleneck {} (D = {:.3} ms); X ≤ 1/Dmax = {:.2}/s; N* = (D + Z) / Dmax = ({:.3} + {:.3}) ms / {:.3} ms = {:.2} users",
        result.bottleneck, result.max_demand_s * 1e3, 1.0 / result.max_demand_s,
        result.total_demand_s * 1e3, result.think_time_s * 1e3, result.max_demand_s * 1e3, result.saturation_users)?;
    crate::outln!(
        "{:>6} {:>16} {:>16} {:>16}",
        "users",
        "throughput /s",
        "response ms",
        "bound /s"
    )?;
    for step in &result.steps {
        crate::outln!(
            "{:>6} {:>16.3} {:>16.3} {:>16.3}",
            step.users,
            step.throughput,
            step.response_time_s * 1e3,
            step.throughput_bound
        )?;
        if output.explain {
            let parts: Vec<String> = result
                .centres
                .iter()
                .zip(&step.residence_s)
                .map(|(c, r)| format!("{} {:.3} ms", c.name, r * 1e3))
                .collect();
            crate::outln!("  R_k = D_k (1 + Q_k(n−1)): {}; X = n / (Z + R) = {} / ({:.3} + {:.3}) ms = {:.3}/s",
                parts.join(", "), step.users, result.think_time_s * 1e3, step.response_time_s * 1e3, step.throughput)?;
        }
    }
    Ok(())
}

// ---- disk ---------------------------------------------------------------

#[derive(Args, Debug)]
struct DiskArgs {
    /// Spindle speed in revolutions per minute
    #[arg(long, value_name = "RPM", value_parser = positive, default_value = "15000")]
    rpm: f64,
    /// Average full-stroke seek [default: 3.5ms at 15k rpm, 4.5ms at 10k, 8.5ms at 7.2k, else 12ms]
    #[arg(long, value_name = "TIME", value_parser = parse::duration)]
    seek: Option<Duration>,
    /// Shortest seek (track to track plus settle)
    #[arg(long, value_name = "TIME", value_parser = parse::duration, default_value = "500us")]
    settle: Duration,
    /// Media transfer rate per second (150MB = 150 × 10^6 bytes/s)
    #[arg(long, value_name = "SIZE", value_parser = parse::size, default_value = "150MB")]
    transfer_rate: u64,
    /// Request size
    #[arg(long, value_name = "SIZE", value_parser = parse::size, default_value = "8k")]
    size: u64,
    /// Percentage of the disk in use (short stroking), above 0 and at most 100
    #[arg(long, value_name = "PCT", value_parser = fraction, default_value = "100")]
    span: f64,
    /// Queue depths (commands queued at the disk), comma list
    #[arg(long, value_name = "N,…", value_parser = |s: &str| list_of(s, |d| parse::bounded(d, 1, 4096).map(|n| n as u32)), default_value = "1,4,16,32,64")]
    qd: QueueDepths,
    #[command(flatten)]
    output: Output,
}

type QueueDepths = Vec<u32>;

#[derive(Serialize)]
struct DiskRow {
    queue_depth: u32,
    #[serde(flatten)]
    result: disk::DiskResult,
}

fn run_disk(args: DiskArgs) -> anyhow::Result<()> {
    let average_seek_s = args.seek.map_or_else(
        || disk::typical_average_seek_s(args.rpm),
        |seek| seek.as_secs_f64(),
    );
    let mut rows = Vec::new();
    for &queue_depth in &args.qd {
        let result = disk::random_iops(disk::DiskInput {
            rpm: args.rpm,
            average_seek_s,
            settle_s: args.settle.as_secs_f64(),
            transfer_bytes_per_s: args.transfer_rate as f64,
            request_bytes: args.size as f64,
            span_fraction: args.span,
            queue_depth,
        })?;
        rows.push(DiskRow {
            queue_depth,
            result,
        });
    }
    if args.output.json {
        return print_json(&rows);
    }
    crate::outln!(
        "{} rpm, {:.2} ms average seek, {} requests over {:.0}% of the disk",
        args.rpm,
        average_seek_s * 1e3,
        format_size(args.size),
        args.span * 100.0
    )?;
    crate::outln!(
        "{:>6} {:>10} {:>14} {:>13} {:>12} {:>8}",
        "QD",
        "seek ms",
        "rotation ms",
        "transfer ms",
        "service ms",
        "IOPS"
    )?;
    for row in &rows {
        let r = &row.result;
        crate::outln!(
            "{:>6} {:>10.3} {:>14.3} {:>13.3} {:>12.3} {:>8.0}",
            row.queue_depth,
            r.seek_s * 1e3,
            r.rotational_latency_s * 1e3,
            r.transfer_s * 1e3,
            r.service_time_s * 1e3,
            r.iops
        )?;
        if args.output.explain {
            crate::outln!("  seek = settle + (avg − settle) × sqrt(span × 3 / (2Q + 1)) = {:.3} + {:.3} × sqrt({:.4}) = {:.3} ms",
                args.settle.as_secs_f64() * 1e3, (average_seek_s - args.settle.as_secs_f64()) * 1e3, r.seek_distance_ratio, r.seek_s * 1e3)?;
            crate::outln!("  IOPS = 1 / (seek + 30 s / rpm + size ÷ rate) = 1 / ({:.3} + {:.3} + {:.3}) ms = {:.1} IOPS",
                r.seek_s * 1e3, r.rotational_latency_s * 1e3, r.transfer_s * 1e3, r.iops)?;
        }
    }
    Ok(())
}

// ---- flash-cache ----------------------------------------------------------

#[derive(Args, Debug)]
struct FlashCacheArgs {
    /// Database buffer cache size
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    buffer_cache: u64,
    /// Data set size (what is read)
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    data: u64,
    /// Flash cache sizes to evaluate [default: 2×, 5× and 10× the buffer cache]
    #[arg(long, value_name = "SIZE,…", value_parser = |s: &str| list_of(s, parse::size))]
    flash: Option<Sizes>,
    /// Database block size
    #[arg(long, value_name = "SIZE", value_parser = parse::size, default_value = "8k")]
    block_size: u64,
    /// A cluster: ~200 bytes of RAM per cached block instead of ~100
    #[arg(long)]
    cluster: bool,
    /// Access skew: uniform, or zipf:THETA
    #[arg(long, value_name = "SKEW", value_parser = skew, default_value = "uniform")]
    skew: flash_cache::Skew,
    /// Latency of a buffer cache hit
    #[arg(long, value_name = "TIME", value_parser = parse::duration, default_value = "10us")]
    ram_latency: Duration,
    /// Latency of a flash cache hit
    #[arg(long, value_name = "TIME", value_parser = parse::duration, default_value = "500us")]
    flash_latency: Duration,
    /// Latency of a disk read
    #[arg(long, value_name = "TIME", value_parser = parse::duration, default_value = "6ms")]
    disk_latency: Duration,
    #[command(flatten)]
    output: Output,
}

type Sizes = Vec<u64>;

fn skew(input: &str) -> Result<flash_cache::Skew, String> {
    match input.trim().split_once(':') {
        None if input.trim() == "uniform" => Ok(flash_cache::Skew::Uniform),
        Some(("zipf", theta)) => {
            parse::zipf_theta(theta).map(|theta| flash_cache::Skew::Zipf { theta })
        }
        _ => Err(format!("'{input}' is not uniform or zipf:THETA")),
    }
}

fn run_flash_cache(args: FlashCacheArgs) -> anyhow::Result<()> {
    let (low, high) = flash_cache::recommended_range(args.buffer_cache);
    let sizes = args
        .flash
        .clone()
        .unwrap_or_else(|| vec![low, args.buffer_cache * 5, high]);
    let latencies = flash_cache::Latencies {
        ram_s: args.ram_latency.as_secs_f64(),
        flash_s: args.flash_latency.as_secs_f64(),
        disk_s: args.disk_latency.as_secs_f64(),
    };
    let rows = sizes
        .iter()
        .map(|&flash_bytes| {
            flash_cache::evaluate(flash_cache::CacheInput {
                buffer_cache_bytes: args.buffer_cache,
                flash_bytes,
                data_bytes: args.data,
                block_bytes: args.block_size,
                cluster: args.cluster,
                skew: args.skew,
                latencies,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if args.output.json {
        return print_json(
            &serde_json::json!({ "recommended_min_bytes": low, "recommended_max_bytes": high, "rows": rows }),
        );
    }
    crate::outln!(
        "recommended flash cache: {} to {} (2× to 10× the {} buffer cache)",
        format_size(low),
        format_size(high),
        format_size(args.buffer_cache)
    )?;
    crate::outln!(
        "{:>12} {:>7} {:>14} {:>11} {:>11} {:>11} {:>14}",
        "flash",
        "ratio",
        "RAM metadata",
        "buffer %",
        "flash %",
        "disk %",
        "avg read ms"
    )?;
    for row in &rows {
        crate::outln!(
            "{:>12} {:>6.1}× {:>14} {:>10.2}% {:>10.2}% {:>10.2}% {:>14.3}",
            format_size(row.flash_bytes),
            row.flash_to_buffer_ratio,
            format_size(row.metadata_bytes),
            row.buffer_hit * 100.0,
            row.flash_hit * 100.0,
            row.disk_read * 100.0,
            row.average_read_s * 1e3
        )?;
        if args.output.explain {
            crate::outln!(
                "  metadata = flash ÷ block × {} B = {} ÷ {} × {} B = {} B",
                flash_cache::metadata_bytes_per_block(args.cluster),
                row.flash_bytes,
                args.block_size,
                flash_cache::metadata_bytes_per_block(args.cluster),
                row.metadata_bytes
            )?;
            crate::outln!("  read = buffer × RAM + flash × flash + disk × disk = {:.4} × {:.3} + {:.4} × {:.3} + {:.4} × {:.3} ms = {:.3} ms",
                row.buffer_hit, ms(args.ram_latency), row.flash_hit, ms(args.flash_latency), row.disk_read, ms(args.disk_latency), row.average_read_s * 1e3)?;
        }
    }
    Ok(())
}

// ---- cluster --------------------------------------------------------------

#[derive(Args, Debug)]
struct ClusterArgs {
    /// CSV file: a header naming the resources, one row of demands per transaction
    #[arg(value_name = "CSV")]
    csv: std::path::PathBuf,
    /// Number of clusters to keep
    #[arg(long, value_name = "N", value_parser = |s: &str| parse::bounded(s, 1, 100_000), default_value = "3")]
    clusters: u64,
    /// Cluster on ln(1 + demand)
    #[arg(long)]
    log: bool,
    /// Scale each resource to 0..1 by its range before clustering
    #[arg(long)]
    normalize: bool,
    #[command(flatten)]
    output: Output,
}

fn run_cluster(args: ClusterArgs) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&args.csv)
        .with_context(|| format!("reading {}", args.csv.display()))?;
    let demands = cluster::parse_csv(&text)?;
    let scaling = cluster::Scaling {
        log: args.log,
        normalize: args.normalize,
    };
    let clusters = cluster::agglomerate(&demands, args.clusters as usize, scaling)?;
    if args.output.json {
        return print_json(
            &serde_json::json!({ "resources": demands.resources, "clusters": clusters }),
        );
    }
    crate::outln!(
        "{} transactions in {} clusters (centroids in the CSV's units)",
        demands.rows.len(),
        clusters.len()
    )?;
    for (index, found) in clusters.iter().enumerate() {
        let centroid: Vec<String> = demands
            .resources
            .iter()
            .zip(&found.centroid)
            .map(|(name, value)| format!("{name}={value:.6}"))
            .collect();
        crate::outln!(
            "  cluster {}: {} transactions, {:.1}% of total demand, centroid {}",
            index + 1,
            found.size,
            found.demand_share * 100.0,
            centroid.join(" ")
        )?;
        if args.output.explain {
            crate::outln!(
                "    centroid = mean of rows {:?}; share = Σ their demands ÷ Σ all demands",
                found.members
            )?;
        }
    }
    Ok(())
}

// ---- commit ---------------------------------------------------------------

#[derive(Args, Debug)]
struct CommitArgs {
    /// Average commit wait (e.g. Oracle "log file sync")
    #[arg(long, value_name = "TIME", value_parser = parse::duration, required_unless_present = "from")]
    commit_wait: Option<Duration>,
    /// Average log write I/O time (e.g. "log file parallel write")
    #[arg(long, value_name = "TIME", value_parser = parse::duration, required_unless_present = "from")]
    log_write_io: Option<Duration>,
    /// Take the waits not given as options from a strata run Recording
    /// (COMMIT latency; WAL write + sync time per sync) or an AWR/STATSPACK
    /// report (log file sync; log file parallel write)
    #[arg(long, value_name = "FILE")]
    from: Option<std::path::PathBuf>,
    /// Log writer's own CPU time per write
    #[arg(long, value_name = "TIME", value_parser = parse::duration, default_value = "0s")]
    log_writer_cpu: Duration,
    #[command(flatten)]
    output: Output,
}

/// The commit wait and log write I/O time: the options, else measured.
fn commit_waits(args: &CommitArgs) -> anyhow::Result<(Duration, Duration)> {
    let measured = match (&args.from, args.commit_wait, args.log_write_io) {
        (Some(path), None, _) | (Some(path), _, None) => {
            let figures = model_from::read(path)?;
            Some(model_from::commit_inputs(&figures, path)?)
        }
        _ => None,
    };
    if let (Some(inputs), false) = (&measured, args.output.json) {
        crate::outln!(
            "measured: {} {:.3} ms; {} {:.3} ms",
            inputs.commit_label,
            inputs.commit_wait_ms,
            inputs.log_write_label,
            inputs.log_write_ms
        )?;
    }
    let from_ms = |ms: f64| Duration::from_secs_f64(ms / 1e3);
    let commit_wait = args
        .commit_wait
        .or(measured
            .as_ref()
            .map(|inputs| from_ms(inputs.commit_wait_ms)))
        .context("--commit-wait: give the average commit wait")?;
    let log_write_io = args
        .log_write_io
        .or(measured.as_ref().map(|inputs| from_ms(inputs.log_write_ms)))
        .context("--log-write-io: give the average log write time")?;
    Ok((commit_wait, log_write_io))
}

fn run_commit(args: CommitArgs) -> anyhow::Result<()> {
    let (commit_wait, log_write_io) = commit_waits(&args)?;
    let result = commit::breakdown(
        commit_wait.as_secs_f64(),
        log_write_io.as_secs_f64(),
        args.log_writer_cpu.as_secs_f64(),
    )?;
    if args.output.json {
        return print_json(&result);
    }
    crate::outln!("commit wait {:.3} ms:", result.commit_wait_s * 1e3)?;
    crate::outln!(
        "  log write I/O     {:>9.3} ms  {:>5.1}%",
        result.log_write_io_s * 1e3,
        result.log_write_io_percent
    )?;
    crate::outln!(
        "  log writer CPU    {:>9.3} ms  {:>5.1}%",
        result.log_writer_cpu_s * 1e3,
        result.log_writer_cpu_percent
    )?;
    crate::outln!(
        "  remainder (CPU scheduling, run queue) {:.3} ms  {:.1}%",
        result.remainder_s * 1e3,
        result.remainder_percent
    )?;
    if args.output.explain {
        crate::outln!(
            "  remainder = wait − I/O − CPU = {:.3} − {:.3} − {:.3} ms = {:.3} ms",
            ms(commit_wait),
            ms(log_write_io),
            ms(args.log_writer_cpu),
            result.remainder_s * 1e3
        )?;
    }
    Ok(())
}
