//! The figures `strata awr` prints and judges, taken from what the report
//! says: each rate names the Oracle statistic it came from, and the window
//! figures feed `strata_report::findings::evaluate` like any other source.
//!
//! Which read count is "requests": `physical read IO requests` (reads of
//! database files, the ones `physical reads` counts the blocks of), not
//! `physical read total IO requests` (which adds control file, redo and
//! archive reads).
//!
//! Not for: layout (see `build`).

use crate::model::AwrReport;
use strata_output::document::Figure;
use strata_report::findings::{CommitFigures, CpuEvidence, DatabaseIo, WindowFigures};

/// A per-second rate and the statistic or Load Profile row it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub per_second: f64,
    /// The statistic's total over the interval, where the report prints
    /// it: ratios of two statistics are taken from totals, not from the
    /// rounded per-second column.
    pub total: Option<f64>,
    pub source: String,
}

/// The load profile, honestly labelled: requests, blocks and bytes apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadFigures {
    pub read_requests: Option<Rate>,
    pub blocks_read: Option<Rate>,
    pub read_bytes: Option<Rate>,
    pub write_requests: Option<Rate>,
    pub blocks_written: Option<Rate>,
    pub write_bytes: Option<Rate>,
    pub redo_bytes: Option<Rate>,
    pub redo_writes: Option<Rate>,
    pub commits: Option<Rate>,
    pub transactions: Option<Rate>,
}

const MIB: f64 = 1024.0 * 1024.0;

impl LoadFigures {
    pub fn of(report: &AwrReport) -> Self {
        let rate = |stat: &str, rows: &[&str], scale: f64| rate(report, stat, rows, scale);
        LoadFigures {
            read_requests: rate("physical read IO requests", &["Read IO requests"], 1.0),
            blocks_read: rate(
                "physical reads",
                &["Physical read (blocks)", "Physical reads"],
                1.0,
            ),
            read_bytes: rate("physical read bytes", &["Read IO (MB)"], MIB),
            write_requests: rate("physical write IO requests", &["Write IO requests"], 1.0),
            blocks_written: rate(
                "physical writes",
                &["Physical write (blocks)", "Physical writes"],
                1.0,
            ),
            write_bytes: rate("physical write bytes", &["Write IO (MB)"], MIB),
            redo_bytes: rate("redo size", &["Redo size (bytes)", "Redo size"], 1.0),
            redo_writes: rate("redo writes", &[], 1.0),
            commits: rate("user commits", &[], 1.0),
            transactions: rate("", &["Transactions"], 1.0),
        }
    }

    /// Average bytes per read request: bytes ÷ requests, or blocks ×
    /// block size ÷ requests.
    pub fn read_request_bytes(&self, block_size: Option<f64>) -> Option<f64> {
        request_bytes(
            &self.read_requests,
            &self.read_bytes,
            &self.blocks_read,
            block_size,
        )
    }

    pub fn write_request_bytes(&self, block_size: Option<f64>) -> Option<f64> {
        request_bytes(
            &self.write_requests,
            &self.write_bytes,
            &self.blocks_written,
            block_size,
        )
    }
}

/// The load profile as named figures (`read_requests_per_s`,
/// `blocks_read_per_s`, `read_bytes_per_s`, …), each with its unit, layer
/// and the statistic it came from; `scope` names the report among several.
pub fn named_figures(report: &AwrReport, scope: Option<&str>) -> Vec<Figure> {
    let load = LoadFigures::of(report);
    let block = report.header.block_size_bytes;
    let rates = [
        ("read_requests_per_s", &load.read_requests, "requests/s"),
        ("blocks_read_per_s", &load.blocks_read, "blocks/s"),
        ("read_bytes_per_s", &load.read_bytes, "bytes/s"),
        ("write_requests_per_s", &load.write_requests, "requests/s"),
        ("blocks_written_per_s", &load.blocks_written, "blocks/s"),
        ("write_bytes_per_s", &load.write_bytes, "bytes/s"),
        ("redo_bytes_per_s", &load.redo_bytes, "bytes/s"),
        ("redo_writes_per_s", &load.redo_writes, "writes/s"),
        ("commits_per_s", &load.commits, "commits/s"),
        ("transactions_per_s", &load.transactions, "transactions/s"),
    ];
    let mut figures: Vec<Figure> = rates
        .into_iter()
        .filter_map(|(name, rate, unit)| {
            let rate = rate.as_ref()?;
            let mut figure = Figure::new(name, rate.per_second, unit, "database");
            figure.source_label = Some(rate.source.clone());
            Some(figure)
        })
        .collect();
    let sizes = [
        ("read_request_bytes", load.read_request_bytes(block)),
        ("write_request_bytes", load.write_request_bytes(block)),
        ("block_bytes", block),
        ("elapsed_s", report.header.elapsed_s),
        ("db_time_s", report.header.db_time_s),
    ];
    for (name, value) in sizes {
        if let Some(value) = value {
            let unit = if name.ends_with("_s") { "s" } else { "bytes" };
            figures.push(Figure::new(name, value, unit, "database"));
        }
    }
    for figure in &mut figures {
        figure.scope = scope.map(str::to_string);
    }
    figures
}

fn request_bytes(
    requests: &Option<Rate>,
    bytes: &Option<Rate>,
    blocks: &Option<Rate>,
    block_size: Option<f64>,
) -> Option<f64> {
    let requests = requests.as_ref()?;
    let by_totals = |rate: &Rate, scale: f64| {
        let bytes = rate.total? * scale;
        requests
            .total
            .filter(|total| *total > 0.0)
            .map(|total| bytes / total)
    };
    if let Some(bytes) = bytes {
        return by_totals(bytes, 1.0).or_else(|| {
            (requests.per_second > 0.0).then(|| bytes.per_second / requests.per_second)
        });
    }
    let blocks = blocks.as_ref()?;
    let block_size = block_size?;
    by_totals(blocks, block_size).or_else(|| {
        (requests.per_second > 0.0).then(|| blocks.per_second * block_size / requests.per_second)
    })
}

/// The statistic's rate, else the first Load Profile row found × `scale`.
fn rate(report: &AwrReport, stat: &str, rows: &[&str], scale: f64) -> Option<Rate> {
    if let Some(per_second) = report.stat_per_second(stat) {
        return Some(Rate {
            per_second,
            total: report.stat(stat).and_then(|stat| stat.total),
            source: format!("statistic '{stat}'"),
        });
    }
    let row = report.profile(rows)?;
    Some(Rate {
        per_second: row.per_second? * scale,
        total: None,
        source: format!("Load Profile '{}'", row.label),
    })
}

/// The window as the shared findings see it.
pub fn window_figures(report: &AwrReport) -> WindowFigures {
    let elapsed = report.header.elapsed_s.unwrap_or(0.0);
    let load = LoadFigures::of(report);
    let total = |stat: &str, rate: &Option<Rate>| {
        report
            .stat_total(stat)
            .or_else(|| Some(rate.as_ref()?.per_second * report.header.elapsed_s?))
    };
    WindowFigures {
        window_s: elapsed,
        block_size_bytes: report.header.block_size_bytes,
        database: DatabaseIo {
            blocks_read: total("physical reads", &load.blocks_read),
            read_requests: total("physical read IO requests", &load.read_requests),
            read_bytes: total("physical read bytes", &load.read_bytes),
            through_page_cache: false,
            scans: scans(report),
        },
        commit: commit_figures(report),
        cpu: cpu(report),
        ..WindowFigures::default()
    }
}

/// Multiblock reads happened: scans, multiblock requests or their waits.
fn scans(report: &AwrReport) -> bool {
    let counted = |stat: &str| report.stat_total(stat).is_some_and(|value| value > 0.0);
    let waited = |event: &str| {
        report
            .foreground_event(event)
            .and_then(|event| event.waits)
            .is_some_and(|waits| waits > 0.0)
    };
    counted("table scans (long tables)")
        || counted("table scans (direct read)")
        || counted("physical read total multi block requests")
        || waited("db file scattered read")
        || waited("direct path read")
}

pub const COMMIT_LABEL: &str = "log file sync (average)";
pub const LOG_WRITE_LABEL: &str = "log file parallel write (average)";

fn commit_figures(report: &AwrReport) -> Option<CommitFigures> {
    let sync = report.foreground_event("log file sync")?;
    let commits = report
        .stat_total("user commits")
        .or(sync.waits)
        .unwrap_or(0.0);
    Some(CommitFigures {
        commits,
        commit_avg_ms: sync.average_ms()?,
        commit_label: COMMIT_LABEL.to_string(),
        log_write_avg_ms: report
            .background_event("log file parallel write")
            .and_then(|event| event.average_ms()),
        log_write_label: LOG_WRITE_LABEL.to_string(),
        tail: None,
    })
}

fn cpu(report: &AwrReport) -> Option<CpuEvidence> {
    let host = report.host_cpu.as_ref()?;
    Some(CpuEvidence {
        cpus: host.cpus?,
        idle_pct: host.idle_pct,
        ..CpuEvidence::default()
    })
}
