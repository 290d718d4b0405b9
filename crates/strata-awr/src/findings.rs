//! Findings only an AWR report can support: the single-block read latency
//! against what storage classes give, and the multiblock read size against
//! what the database asked for. They follow the shared findings of
//! `strata_report::findings::evaluate`.
//!
//! Not for: findings any source can give (those live in strata-report).

use crate::model::AwrReport;
use strata_output::document::{Evidence, Finding, Severity};

/// Single-block read events: the classic one, and Exadata's.
const SINGLE_BLOCK_EVENTS: [&str; 2] =
    ["db file sequential read", "cell single block physical read"];

/// The AWR-only findings whose evidence the report has.
pub fn evaluate(report: &AwrReport) -> Vec<Finding> {
    [
        single_block_read_latency(report),
        multiblock_read_size(report),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The storage class a single-block read average suggests.
pub fn storage_class(avg_ms: f64) -> &'static str {
    match avg_ms {
        ms if ms < 0.3 => "a cache or NVMe flash (Exadata flash cache, array cache)",
        ms if ms < 1.5 => "flash / SSD",
        ms if ms < 4.0 => "a hybrid array or flash behind a busy path",
        ms if ms <= 12.0 => "spinning disk",
        _ => "spinning disk under queueing, or overloaded storage",
    }
}

fn single_block_read_latency(report: &AwrReport) -> Option<Finding> {
    let (name, event) = SINGLE_BLOCK_EVENTS
        .iter()
        .find_map(|name| Some((*name, report.foreground_event(name)?)))?;
    let avg_ms = event.average_ms()?;
    let waits = event.waits.filter(|waits| *waits > 0.0)?;
    let class = storage_class(avg_ms);
    let mut evidence = vec![
        Evidence::new(format!("{name} (average)"), avg_ms, 3, "ms"),
        Evidence::new(format!("{name} waits"), waits, 0, "waits"),
    ];
    if let Some(elapsed) = report.header.elapsed_s.filter(|elapsed| *elapsed > 0.0) {
        evidence.push(Evidence::new(
            "single-block reads",
            waits / elapsed,
            1,
            "requests/s",
        ));
    }
    Some(Finding {
        id: "single_block_read_latency".to_string(),
        severity: if avg_ms > 12.0 {
            Severity::Warning
        } else {
            Severity::Info
        },
        title: format!("Single-block reads average {avg_ms:.2} ms: that is {class}"),
        evidence,
        why: "Flash and SSD serve a single 8 KiB read in well under 1.5 ms and spinning disk \
              in 5-10 ms; an average far above what the storage should give is queueing \
              (in the array, the path or the host), not the medium."
            .to_string(),
    })
}

fn multiblock_read_size(report: &AwrReport) -> Option<Finding> {
    let multi = report
        .stat_total("physical read total multi block requests")
        .or_else(|| report.stat_total("physical read total multi block r"))
        .filter(|multi| *multi > 0.0)?;
    let requests = report.stat_total("physical read IO requests")?;
    let blocks = report.stat_total("physical reads")?;
    let block_size = report.header.block_size_bytes?;
    let single = (requests - multi).max(0.0);
    let blocks_per_multi = (blocks - single) / multi;
    if blocks_per_multi <= 1.0 {
        return None;
    }
    let size_kib = blocks_per_multi * block_size / 1024.0;
    let mut evidence = vec![
        Evidence::new("multiblock read requests", multi, 0, "requests"),
        Evidence::new("blocks per multiblock read", blocks_per_multi, 2, "blocks"),
        Evidence::new("multiblock read size", size_kib, 0, "KiB"),
    ];
    let asked = report
        .parameter("db_file_multiblock_read_count")
        .and_then(crate::number::number);
    let (severity, title) = match asked {
        Some(count) => {
            let asked_kib = count * block_size / 1024.0;
            evidence.push(Evidence::new(
                "db_file_multiblock_read_count",
                count,
                0,
                "blocks",
            ));
            evidence.push(Evidence::new("size asked for", asked_kib, 0, "KiB"));
            multiblock_verdict(size_kib, asked_kib, count)
        }
        None => (
            Severity::Info,
            format!(
                "Multiblock reads average {size_kib:.0} KiB ({blocks_per_multi:.1} blocks); \
                 db_file_multiblock_read_count is not in the report (left at its default)"
            ),
        ),
    };
    Some(Finding {
        id: "multiblock_read_size".to_string(),
        severity,
        title,
        evidence,
        why: "Scans are fastest with large requests that match the storage's stripe; reads \
              smaller than the database asks for come from extent boundaries, cached blocks \
              splitting a read, or a limit in the I/O path."
            .to_string(),
    })
}

fn multiblock_verdict(size_kib: f64, asked_kib: f64, count: f64) -> (Severity, String) {
    if size_kib < 0.5 * asked_kib {
        (
            Severity::Warning,
            format!(
                "Multiblock reads average {size_kib:.0} KiB, less than half the {asked_kib:.0} KiB \
                 asked for (db_file_multiblock_read_count = {count:.0})"
            ),
        )
    } else {
        (
            Severity::Info,
            format!(
                "Multiblock reads average {size_kib:.0} KiB, as asked for \
                 (db_file_multiblock_read_count = {count:.0} = {asked_kib:.0} KiB)"
            ),
        )
    }
}
