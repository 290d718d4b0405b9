//! `strata observe`'s loop: every layer sampled on one clock, each sample
//! shown in the format asked for as it is taken, written to the Recording
//! and served to Prometheus, until the count is reached or Ctrl-C.
//!
//! Not for: choosing the collectors (the binary knows every database
//! engine) or where the shown text goes (the binary's output path).

use crate::exposition::exposition;
use crate::sampler::{collect_now_beside_first, Sample, Sampler, SharedCollectors};
use crate::top::{TopProcesses, TopTracker};
use crate::{prometheus, record, stream, view};
use anyhow::bail;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use strata_agent::endpoint::{AgentAccess, Endpoint};
use strata_core::input;
use strata_core::metrics::Collector;
use strata_probe::blocktrace::served::ServedTrace;
use strata_probe::blocktrace::shared;
use strata_recording::environment::ServerHost;
use strata_recording::{Header, Kind, RecordingWriter};

/// The options of one `strata observe`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ObserveRequest {
    /// Time between samples (at least 100ms) [default: 1s]
    #[arg(long, value_name = "DURATION", value_parser = input::duration)]
    pub interval: Option<Duration>,

    /// Stop after N intervals [default: run until Ctrl-C]
    #[arg(long, value_name = "N", value_parser = input::count, allow_hyphen_values = true)]
    pub count: Option<u64>,

    /// Show every layer, also those with no activity
    #[arg(long)]
    pub all: bool,

    /// Only these block devices (repeat the option for more)
    #[arg(long, value_name = "NAME", conflicts_with = "path")]
    pub device: Vec<String>,

    /// Only the block devices under this path (the filesystem's device and the disks under it)
    #[arg(long, value_name = "PATH")]
    pub path: Option<PathBuf>,

    /// Also these processes: run-queue delay (time waiting for a CPU) and logical vs physical I/O
    #[arg(long, value_name = "PID")]
    pub pid: Vec<u32>,

    /// Also a database server, named as `strata run --db` names it: PostgreSQL
    /// (postgres://… or "host=… dbname=…"): its counters, where its active sessions wait
    /// (sampled at 10 Hz), and, when it runs on this machine, the run-queue delay and I/O
    /// of its processes; MariaDB/MySQL (mysql://… or mariadb://…): InnoDB's I/O counters
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,

    /// Also another host's devices and CPU, from its agent
    /// (http[s]://HOST:PORT: `strata observe --prometheus` there, or its
    /// node_exporter), shown as `device@HOST` and `cpu@HOST` beside this
    /// machine's (repeatable)
    #[arg(long = "agent", value_name = "URL", value_parser = strata_agent::scrape::parse_agent)]
    pub agents: Vec<Endpoint>,

    #[command(flatten)]
    pub agent_access: AgentAccess,

    /// Also a MariaDB/MySQL server (mysql://user@host:port/db): InnoDB's I/O counters;
    /// the same as --db with that URL
    #[arg(long, value_name = "URL")]
    pub mariadb: Option<String>,

    /// Also the N processes with the most device bytes read + written per
    /// second, then CPU, of every process on this machine (scanned each
    /// interval: those started later too)
    #[arg(long, value_name = "N", value_parser = top_count, allow_hyphen_values = true)]
    pub top: Option<u32>,

    /// Also an NFS server on this machine, its own count of the calls it
    /// served per export (the `nfs_server` layer): `ganesha`, nfs-ganesha
    /// asked over the D-Bus system bus (READ and WRITE calls, bytes, and
    /// its own time on them)
    #[arg(long, value_name = "SERVER", value_enum)]
    pub nfs_server: Option<NfsServer>,

    /// Write every sample to this Recording, as it is taken; a file already
    /// there is refused
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,

    /// Replace the --record file when it exists
    #[arg(long, requires = "record")]
    pub overwrite: bool,

    /// Show a Recording made with --record again, instead of sampling
    #[arg(long, value_name = "FILE", conflicts_with_all = ["record", "prometheus", "db", "mariadb", "pid", "device", "path", "count", "interval", "top", "nfs_server"])]
    pub replay: Option<PathBuf>,

    /// Serve the latest sample at http://ADDR/metrics in Prometheus's text format (e.g. 127.0.0.1:9477)
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<String>,

    /// With --prometheus: the `host` label of every series served, where
    /// this machine's hostname is not the name the fleet knows it by (a
    /// container's) [default: the hostname]
    #[arg(long = "host", value_name = "NAME", requires = "prometheus", value_parser = host_label)]
    pub host_label: Option<String>,

    /// With --prometheus: keep every block request at least this slow
    /// (start to end, traced one by one) for a run through this agent to
    /// list as an outlier, with its process, role, device, sector, size,
    /// queue and device time [default: 500ms, Oracle's V$KERNEL_IO_OUTLIER]
    #[arg(long, value_name = "DURATION", requires = "prometheus", value_parser = io_outlier)]
    pub io_outlier: Option<Duration>,
}

/// An NFS server whose own counters `--nfs-server` reads.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NfsServer {
    /// nfs-ganesha, over D-Bus
    Ganesha,
}

/// `--io-outlier`: a duration the tracer can keep outliers from.
fn io_outlier(text: &str) -> Result<Duration, String> {
    let threshold = input::duration(text)?;
    shared::refuse_outlier_threshold(threshold)?;
    Ok(threshold)
}

/// A host name Prometheus and a report can show as it is: letters,
/// digits, `.`, `-` and `_`.
fn host_label(text: &str) -> Result<String, String> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
    match !text.is_empty() && text.chars().all(fits) {
        true => Ok(text.to_string()),
        false => Err(format!(
            "'{text}': give a host name of letters, digits, '.', '-' and '_'"
        )),
    }
}

/// `--top`'s N: a whole number of processes, 1 or more.
fn top_count(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(count) if count >= 1 => Ok(count),
        _ => Err(format!(
            "'{text}': give a whole number of processes, 1 or more (e.g. --top 10)"
        )),
    }
}

impl ObserveRequest {
    /// The database servers asked for, each with the option that named
    /// it: `--db`, then `--mariadb`.
    pub fn databases(&self) -> Vec<(&'static str, &str)> {
        let given = [("--db", &self.db), ("--mariadb", &self.mariadb)];
        given
            .into_iter()
            .filter_map(|(option, url)| Some((option, url.as_deref()?)))
            .collect()
    }

    /// The header of an observation's Recording; `databases` are the
    /// servers observed as their engines record them (no password).
    pub fn header<'a>(
        &'a self,
        command: Vec<String>,
        interval: Duration,
        databases: serde_json::Map<String, serde_json::Value>,
        other_hosts: &'a [ServerHost],
    ) -> Header<ObserveOptions<'a>, ObserveEnvironment<'a>> {
        let mut databases = databases;
        for (key, nothing) in DATABASES_OF_EVERY_OBSERVATION {
            databases.entry(key).or_insert(nothing);
        }
        let options = ObserveOptions {
            interval_s: interval.as_secs_f64(),
            count: self.count,
            devices: &self.device,
            path: self.path.as_ref(),
            pids: &self.pid,
            top: self.top,
            nfs_server: self.nfs_server,
            databases,
        };
        Header::new(
            Kind::Observe,
            command,
            options,
            ObserveEnvironment { other_hosts },
        )
    }

    /// `--interval`, else 1 s; refused under 100 ms.
    pub fn interval(&self) -> anyhow::Result<Duration> {
        let interval = self.interval.unwrap_or(Duration::from_secs(1));
        if interval < Duration::from_millis(100) {
            bail!("--interval {:?} is too short: use 100ms or more", interval);
        }
        Ok(interval)
    }
}

/// An observation's options, as its Recording keeps them.
#[derive(Serialize)]
pub struct ObserveOptions<'a> {
    interval_s: f64,
    count: Option<u64>,
    devices: &'a [String],
    path: Option<&'a PathBuf>,
    pids: &'a [u32],
    top: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nfs_server: Option<NfsServer>,
    /// The database servers observed, each under its engine's key.
    #[serde(flatten)]
    databases: serde_json::Map<String, serde_json::Value>,
}

/// What every observation's Recording of this format says of the
/// servers its engines observe where none was: no PostgreSQL server (its
/// URL, without the password) and no MariaDB server.
const DATABASES_OF_EVERY_OBSERVATION: [(&str, serde_json::Value); 2] = [
    ("postgres", serde_json::Value::Null),
    ("mariadb", serde_json::Value::Bool(false)),
];

/// An observation's environment: the other hosts followed through their
/// agents.
#[derive(Serialize)]
pub struct ObserveEnvironment<'a> {
    other_hosts: &'a [ServerHost],
}

/// How samples are shown: text (a live screen every `live` interval, or
/// timestamped lines), JSON lines (one per interval: the first sample,
/// which has no rates, prints none), CSV rows, or nothing (an HTML page is
/// made of the Recording afterwards).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Live(Duration),
    Lines,
    Json,
    Csv,
    Nothing,
}

impl Shape {
    /// The shape of `format`: text live every `live` interval where there
    /// is one (a terminal), else as lines.
    pub fn of(format: strata_output::render::Format, live: Option<Duration>) -> Shape {
        use strata_output::render::Format;
        match (format, live) {
            (Format::Text, Some(interval)) => Shape::Live(interval),
            (Format::Text, None) => Shape::Lines,
            (Format::Json, _) => Shape::Json,
            (Format::Csv, _) => Shape::Csv,
            (Format::Html, _) => Shape::Nothing,
        }
    }
}

/// Where shown samples go: the text of each, in order.
pub type Sink<'a> = Box<dyn FnMut(&str) -> anyhow::Result<()> + 'a>;

/// Each sample, shown in its shape, handed to `write`.
pub struct Shown<'a> {
    shape: Shape,
    all: bool,
    lines: view::PlainLines,
    heading_written: bool,
    write: Sink<'a>,
}

impl<'a> Shown<'a> {
    pub fn new(
        shape: Shape,
        all: bool,
        write: impl FnMut(&str) -> anyhow::Result<()> + 'a,
    ) -> Self {
        Shown {
            shape,
            all,
            lines: view::PlainLines::default(),
            heading_written: false,
            write: Box::new(write),
        }
    }

    /// Shows `sample` and, with `--top`, the busiest processes of the
    /// interval it ends.
    pub fn sample(&mut self, sample: &Sample, top: Option<&TopProcesses>) -> anyhow::Result<()> {
        let text = match self.shape {
            Shape::Nothing => return Ok(()),
            Shape::Json if sample.interval_s == 0.0 => return Ok(()),
            Shape::Json => stream::json_line(sample, top)?,
            Shape::Csv if !self.heading_written => {
                self.heading_written = true;
                stream::csv_heading() + &stream::csv_rows(sample)
            }
            Shape::Csv => stream::csv_rows(sample),
            Shape::Live(interval) => format!(
                "\x1b[2J\x1b[H{}",
                view::live_screen(sample, top, self.all, interval.as_secs_f64())
            ),
            Shape::Lines => self.lines.render(sample, top, self.all),
        };
        (self.write)(&text)
    }
}

/// Samples every `request.interval()` until `--count` or `interrupt`.
pub fn watch(
    request: &ObserveRequest,
    collectors: Vec<Box<dyn Collector>>,
    interrupt: &AtomicBool,
    mut recording: Option<RecordingWriter>,
    shown: &mut Shown,
) -> anyhow::Result<()> {
    let interval = request.interval()?;
    let mut sampler = Sampler::new(collectors);
    if let Some(address) = &request.prometheus {
        serve_prometheus(address, request, &sampler)?;
    }
    let mut top_tracker = request.top.map(TopTracker::new);
    let samples_wanted = request.count.map(|count| count + 1);
    let mut taken = 0u64;
    let mut next = Instant::now();
    while samples_wanted.is_none_or(|wanted| taken < wanted) && !interrupt.load(Ordering::Relaxed) {
        if request.prometheus.is_some() {
            // An agent gives this host's PostgreSQL processes their roles
            // from their titles each interval, off its scrapes' path, so a
            // run through it sees their requests by role.
            let _ = shared::name_postgres_roles_from_titles();
        }
        let sample = sampler.sample();
        let top = top_tracker.as_mut().and_then(|top| top.next(sample.t_s));
        taken += 1;
        if let Some(writer) = recording.as_mut() {
            record::write_sample(writer, &sample)?;
            if let Some(top) = &top {
                record::write_top(writer, top)?;
            }
        }
        shown.sample(&sample, top.as_ref())?;
        next += interval;
        sleep_until(next, interrupt);
    }
    Ok(())
}

/// Serves `collectors`' layers, collected at each scrape, at `address`, as
/// a strata agent serves its own (without `/blocktrace`), under this
/// machine's hostname; says where, and returns it.
pub fn serve_layers(
    address: &str,
    collectors: Vec<Box<dyn Collector>>,
) -> anyhow::Result<std::net::SocketAddr> {
    let host = strata_recording::HostInfo::current().hostname;
    let collectors: SharedCollectors = Arc::new(Mutex::new(collectors));
    let scraped_host = host.clone();
    let metrics: prometheus::Metrics = Arc::new(move || {
        let (sample, ()) = collect_now_beside_first(&collectors, || ());
        exposition(&sample, &scraped_host)
    });
    let pages = prometheus::Pages {
        metrics,
        block_trace: None,
    };
    serve_and_say(address, pages, &host)
}

/// Serves every layer, collected at each scrape, at `address`.
fn serve_prometheus(
    address: &str,
    request: &ObserveRequest,
    sampler: &Sampler,
) -> anyhow::Result<()> {
    let host = request
        .host_label
        .clone()
        .unwrap_or_else(|| strata_recording::HostInfo::current().hostname);
    if let Some(threshold) = request.io_outlier {
        shared::set_outlier_threshold_ms(threshold.as_secs_f64() * 1e3);
    }
    let collectors = sampler.collectors();
    let scraped_host = host.clone();
    // The tracer is read right after the first layer, the device layer's
    // /proc/diskstats: a scraper that sets the two side by side (a run's
    // --agent) sees them of one moment, and the device layer first in the
    // scrape, as every agent's is.
    let metrics: prometheus::Metrics = Arc::new(move || {
        let (sample, histograms) = collect_now_beside_first(&collectors, || {
            crate::block_histograms::families(&scraped_host)
        });
        exposition(&sample, &scraped_host) + &histograms
    });
    let block_trace: prometheus::BlockTrace = Arc::new(|received_ns| {
        shared::served(received_ns)
            .unwrap_or_else(|| ServedTrace::unavailable(shared::why_not_tracing()))
            .to_json()
    });
    let pages = prometheus::Pages {
        metrics,
        block_trace: Some(block_trace),
    };
    serve_and_say(address, pages, &host)?;
    Ok(())
}

/// Serves `pages` at `address` and says where on stderr.
fn serve_and_say(
    address: &str,
    pages: prometheus::Pages,
    host: &str,
) -> anyhow::Result<std::net::SocketAddr> {
    let bound = prometheus::serve(address, pages, host)?;
    strata_core::note::note(&format!(
        "strata: serving Prometheus metrics at http://{bound}/metrics"
    ));
    Ok(bound)
}

/// A Recording made with `--record` shown again.
pub fn replay(path: &std::path::Path, shown: &mut Shown) -> anyhow::Result<()> {
    for (sample, top) in record::read_samples(path)? {
        shown.sample(&sample, top.as_ref())?;
    }
    Ok(())
}

fn sleep_until(deadline: Instant, interrupt: &AtomicBool) {
    while Instant::now() < deadline && !interrupt.load(Ordering::Relaxed) {
        std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
    }
}
