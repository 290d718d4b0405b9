//! `strata observe`: every layer on one clock — live on a terminal,
//! timestamped lines when piped, to a Recording, and for Prometheus.

use crate::{interrupt, parse};
use anyhow::bail;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use strata_core::metrics::Collector;
use strata_core::recording::{Header, RecordingWriter};
use strata_observe::sampler::{Sample, Sampler};
use strata_observe::{prometheus, record, view};
use strata_postgres::connect::ConnectionTarget;
use strata_probe::collectors::{all_os_collectors, DeviceFilter};

#[derive(Args, Debug)]
pub struct ObserveArgs {
    /// Time between samples (at least 100ms) [default: 1s]
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    interval: Option<Duration>,

    /// Stop after N intervals [default: run until Ctrl-C]
    #[arg(long, value_name = "N", value_parser = parse::count, allow_hyphen_values = true)]
    count: Option<u64>,

    /// Show every layer, also those with no activity
    #[arg(long)]
    all: bool,

    /// Only these block devices (repeat the option for more)
    #[arg(long, value_name = "NAME", conflicts_with = "path")]
    device: Vec<String>,

    /// Only the block devices under this path (the filesystem's device and the disks under it)
    #[arg(long, value_name = "PATH")]
    path: Option<PathBuf>,

    /// Also these processes: run-queue delay (time waiting for a CPU) and logical vs physical I/O
    #[arg(long, value_name = "PID")]
    pid: Vec<u32>,

    /// Also a PostgreSQL server: its counters, where its active sessions wait (sampled at
    /// 10 Hz), and, when it runs on this machine, the run-queue delay and I/O of its processes
    #[arg(long, value_name = "URL")]
    db: Option<String>,

    /// Also a MariaDB/MySQL server (mysql://user@host:port/db): InnoDB's I/O counters
    #[arg(long, value_name = "URL")]
    mariadb: Option<String>,

    /// Write every sample to this Recording
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,

    /// Show a Recording made with --record again, instead of sampling
    #[arg(long, value_name = "FILE", conflicts_with_all = ["record", "prometheus", "db", "mariadb", "pid", "device", "path", "count", "interval"])]
    replay: Option<PathBuf>,

    /// Serve the latest sample at http://ADDR/metrics in Prometheus's text format (e.g. 127.0.0.1:9477)
    #[arg(long, value_name = "ADDR")]
    prometheus: Option<String>,
}

pub fn run(args: ObserveArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.replay {
        let mut lines = view::PlainLines::default();
        for sample in record::read_samples(path)? {
            crate::out!("{}", lines.render(&sample, args.all))?;
        }
        return Ok(0);
    }
    let interval = args.interval.unwrap_or(Duration::from_secs(1));
    if interval < Duration::from_millis(100) {
        bail!("--interval {:?} is too short: use 100ms or more", interval);
    }
    let collectors = collectors(&args)?;
    let interrupt = interrupt::install();
    let mut writer = match &args.record {
        Some(path) => Some(RecordingWriter::create(path, &header(&args, interval))?),
        None => None,
    };
    let latest = Arc::new(Mutex::new(String::new()));
    if let Some(address) = &args.prometheus {
        let bound = prometheus::serve(address, latest.clone())?;
        crate::note!("strata: serving Prometheus metrics at http://{bound}/metrics");
    }
    let live = std::io::stdout().is_terminal();
    let mut sampler = Sampler::new(collectors);
    let samples_wanted = args.count.map(|count| count + 1);
    let mut taken = 0u64;
    let mut lines = view::PlainLines::default();
    let mut next = Instant::now();
    while samples_wanted.is_none_or(|wanted| taken < wanted) && !interrupt.load(Ordering::Relaxed) {
        let sample = sampler.sample();
        taken += 1;
        if let Some(writer) = writer.as_mut() {
            record::write_sample(writer, &sample)?;
        }
        *latest.lock().expect("no thread panics holding it") = prometheus::exposition(&sample);
        show(&sample, live.then_some(interval), &mut lines, args.all)?;
        next += interval;
        sleep_until(next, interrupt);
    }
    Ok(if interrupt.load(Ordering::Relaxed) {
        interrupt::exit_code()
    } else {
        0
    })
}

fn sleep_until(deadline: Instant, interrupt: &std::sync::atomic::AtomicBool) {
    while Instant::now() < deadline && !interrupt.load(Ordering::Relaxed) {
        std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
    }
}

/// Redraws the live screen (`live` holds the interval), or prints lines.
fn show(
    sample: &Sample,
    live: Option<Duration>,
    lines: &mut view::PlainLines,
    all: bool,
) -> anyhow::Result<()> {
    let text = match live {
        Some(interval) => format!(
            "\x1b[2J\x1b[H{}",
            view::live_screen(sample, all, interval.as_secs_f64())
        ),
        None => lines.render(sample, all),
    };
    crate::out!("{text}")?;
    crate::stdout::flush()?;
    Ok(())
}

fn collectors(args: &ObserveArgs) -> anyhow::Result<Vec<Box<dyn Collector>>> {
    let filter = match (&args.path, args.device.is_empty()) {
        (Some(path), _) => DeviceFilter::Path(path.clone()),
        (None, false) => DeviceFilter::Names(args.device.clone()),
        (None, true) => DeviceFilter::All,
    };
    let mut pids = args.pid.clone();
    let target = args
        .db
        .as_deref()
        .map(ConnectionTarget::parse)
        .transpose()?;
    if let Some(target) = &target {
        pids.extend(local_backend_pids(target)?);
    }
    let mut collectors = all_os_collectors(filter, pids)?;
    if let Some(target) = &target {
        collectors.push(Box::new(
            strata_postgres::collector::PostgresCollector::start(target)?,
        ));
    }
    if let Some(url) = &args.mariadb {
        collectors.push(Box::new(
            strata_mariadb::collector::MariaDbCollector::connect(url)?,
        ));
    }
    Ok(collectors)
}

/// The PostgreSQL server's processes present now, when they run on this
/// machine (their pids are in /proc with a postgres command name): their
/// run-queue delay and I/O join the process layer. Backends that start later
/// are not followed.
fn local_backend_pids(target: &ConnectionTarget) -> anyhow::Result<Vec<u32>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let pids: Vec<u32> = runtime.block_on(async {
        let client = strata_postgres::connect::connect(target).await?;
        let rows = client
            .query(
                "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
                &[],
            )
            .await?;
        anyhow::Ok(rows.iter().map(|row| row.get::<_, i32>(0) as u32).collect())
    })?;
    let is_postgres = |pid: &u32| {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| comm.starts_with("postgres"))
    };
    Ok(pids.into_iter().filter(is_postgres).collect())
}

fn header(args: &ObserveArgs, interval: Duration) -> Header {
    let mut header = Header::new("observe", crate::run_cmd::redacted_command_line());
    header.options = serde_json::json!({
        "interval_s": interval.as_secs_f64(),
        "count": args.count,
        "devices": args.device,
        "path": args.path,
        "pids": args.pid,
        "postgres": args.db.as_deref().and_then(|url| ConnectionTarget::parse(url).ok()).map(|t| t.redacted()),
        "mariadb": args.mariadb.is_some(),
    });
    header
}
