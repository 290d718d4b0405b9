//! Findings only an AWR report can support: the single-block read latency
//! against what storage classes give, and the multiblock read size against
//! what the database asked for. They follow the shared findings of
//! `strata_report::findings::evaluate`.
//!
//! Not for: findings any source can give (those live in strata-report).

use crate::model::{AwrReport, WaitEvent};
use strata_output::document::{format_number, Evidence, Finding, Severity};

/// Single-block read events: the classic one, and Exadata's.
const SINGLE_BLOCK_EVENTS: [&str; 2] =
    ["db file sequential read", "cell single block physical read"];

/// The AWR-only findings whose evidence the report has.
pub fn evaluate(report: &AwrReport) -> Vec<Finding> {
    [
        single_block_read_latency(report),
        multiblock_read_size(report),
        work_areas_spilled(report),
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

/// The single-block read event user sessions waited on most: on Exadata
/// the cell event carries the reads and db file sequential read only the
/// few that bypass the cells.
fn dominant_single_block_event(report: &AwrReport) -> Option<(&'static str, &WaitEvent)> {
    SINGLE_BLOCK_EVENTS
        .iter()
        .filter_map(|name| Some((*name, report.foreground_event(name)?)))
        .filter(|(_, event)| event.waits.is_some_and(|waits| waits > 0.0))
        .max_by(|(_, a), (_, b)| {
            let waits = |event: &WaitEvent| event.waits.unwrap_or(0.0);
            waits(a).total_cmp(&waits(b))
        })
}

fn single_block_read_latency(report: &AwrReport) -> Option<Finding> {
    let (name, event) = dominant_single_block_event(report)?;
    let average = event.average()?;
    let avg_ms = average.ms;
    let waits = event.waits?;
    let class = storage_class(avg_ms);
    let mut evidence = vec![
        Evidence::new(
            format!("{name} (average, {} sessions)", event.table.describe()),
            avg_ms,
            average.decimals,
            "ms",
        ),
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
        title: format!(
            "Single-block reads ({name}) average {} ms{}: that is {class}",
            format_number(avg_ms, average.decimals),
            rounding_said(&average, event)
        ),
        evidence,
        why: "Flash and SSD serve a single 8 KiB read in well under 1.5 ms and spinning disk \
              in 5-10 ms; an average far above what the storage should give is queueing \
              (in the array, the path or the host), not the medium."
            .to_string(),
    })
}

/// Oracle's largest read: direct path reads of up to 1 MiB
/// (`_db_file_direct_io_count`); a multiblock read cannot be larger.
const LARGEST_READ_BYTES: f64 = 1024.0 * 1024.0;

/// Below this share of read requests, multiblock reads are too few for
/// their size to be told from the blocks other requests read.
const MULTIBLOCK_SHARE_MIN: f64 = 0.01;

/// The multiblock read size: blocks outside single-block requests ÷
/// multiblock requests. It is only said where the statistics can carry
/// it: `physical reads` also counts blocks prefetched in batches (db file
/// parallel read), which count as one request each, so a size above
/// Oracle's largest read, or from a handful of requests, is not a size.
/// "(±0.004 ms: 1 s over 121,513 waits)" where the printed figures
/// leave the average uncertain by more than a tenth.
fn rounding_said(average: &crate::model::Average, event: &WaitEvent) -> String {
    if average.uncertainty_ms <= 0.1 * average.ms {
        return String::new();
    }
    let over = match (event.time_s, event.waits) {
        (Some(time_s), Some(waits)) if average.computed => format!(
            ": the report prints {} s over {} waits",
            format_number(time_s, 0),
            format_number(waits, 0)
        ),
        _ => ": Oracle's rounded average".to_string(),
    };
    format!(
        " (±{} ms{over})",
        format_number(average.uncertainty_ms, average.decimals)
    )
}

fn multiblock_read_size(report: &AwrReport) -> Option<Finding> {
    let multi = report
        .stat_total("physical read total multi block requests")
        .or_else(|| report.stat_total("physical read total multi block r"))
        .filter(|multi| *multi > 0.0)?;
    let requests = report.stat_total("physical read IO requests")?;
    let blocks = report.stat_total("physical reads")?;
    let block_size = report.header.block_size_bytes?;
    if multi < MULTIBLOCK_SHARE_MIN * requests {
        return None;
    }
    let blocks_per_multi = (blocks - (requests - multi).max(0.0)) / multi;
    let size_kib = blocks_per_multi * block_size / 1024.0;
    if blocks_per_multi <= 1.0 || size_kib * 1024.0 > LARGEST_READ_BYTES * 1.05 {
        return None;
    }
    let mut evidence = vec![
        Evidence::new("multiblock read requests", multi, 0, "requests"),
        Evidence::new("blocks per multiblock read", blocks_per_multi, 2, "blocks"),
        Evidence::new("multiblock read size", size_kib, 0, "KiB"),
    ];
    if let Some(prefetched) = report.stat_total("physical reads cache prefetch") {
        evidence.push(Evidence::new(
            "blocks prefetched (included)",
            prefetched,
            0,
            "blocks",
        ));
    }
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
              splitting a read, or a limit in the I/O path. The average counts every block \
              outside single-block requests, prefetched ones included."
            .to_string(),
    })
}

fn multiblock_verdict(size_kib: f64, asked_kib: f64, count: f64) -> (Severity, String) {
    if size_kib > 1.05 * asked_kib {
        (
            Severity::Info,
            format!(
                "Multiblock reads average {size_kib:.0} KiB, more than the {asked_kib:.0} KiB \
                 db_file_multiblock_read_count = {count:.0} asks for: direct path reads (up to \
                 1 MiB) and prefetch batches, which that setting does not limit"
            ),
        )
    } else if size_kib < 0.5 * asked_kib {
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

/// Sorts, hashes and bitmap merges that did not fit their work area and
/// went to the temporary tablespace: Oracle's PGA, not PostgreSQL's
/// work_mem. 'sorts (disk)' counts sorts, not files.
fn work_areas_spilled(report: &AwrReport) -> Option<Finding> {
    let block_size = report.header.block_size_bytes?;
    let spilled_mib = report
        .stat_total("physical writes direct temporary tablespace")
        .map(|blocks| blocks * block_size / 1048576.0);
    // (evidence label, value, decimals, unit, how the title says it)
    let parts = [
        (
            "written to the temporary tablespace ('physical writes direct temporary tablespace')",
            spilled_mib,
            1,
            "MiB",
            "MiB written",
        ),
        (
            "sorts (disk)",
            report.stat_total("sorts (disk)"),
            0,
            "sorts",
            "sorts to disk",
        ),
        (
            "work areas run one-pass",
            report.stat_total("workarea executions - onepass"),
            0,
            "executions",
            "one-pass executions",
        ),
        (
            "work areas run multi-pass",
            report.stat_total("workarea executions - multipass"),
            0,
            "executions",
            "multi-pass executions",
        ),
    ];
    let shown = |value: f64, decimals: usize| format_number(value, decimals);
    let said: Vec<String> = parts
        .iter()
        .filter_map(|(_, value, decimals, _, phrase)| {
            let text = shown((*value)?, *decimals);
            (text != shown(0.0, *decimals)).then(|| format!("{text} {phrase}"))
        })
        .collect();
    if said.is_empty() {
        return None;
    }
    let evidence = parts
        .iter()
        .filter_map(|(label, value, decimals, unit, _)| {
            Some(Evidence::new(*label, (*value)?, *decimals, unit))
        })
        .collect();
    Some(Finding {
        id: "temp_spills".to_string(),
        severity: Severity::Warning,
        title: format!(
            "Work areas spilled to the temporary tablespace: {}",
            said.join(", ")
        ),
        evidence,
        why: "Sorts and hash joins that do not fit their PGA work area (pga_aggregate_target, \
              workarea_size_policy) write to and read back from temp files, whatever disk \
              they land on; one-pass is tolerable, multi-pass is not."
            .to_string(),
    })
}
