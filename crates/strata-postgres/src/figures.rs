//! PostgreSQL's own figures for a window: the change of its statistics
//! views between the two edges, read as blocks, requests, WAL and time,
//! with the reason for every figure this server version cannot give.
//!
//! Not for: the layers every engine shares (`strata_run::accounting`).

use std::collections::BTreeMap;
use strata_run::accounting::{per_s, DatabaseFigures};
use strata_run::edge::Edge;

/// What PostgreSQL counted between `start` and `end`; `None` when either
/// edge lacks the counters or the server restarted between them.
pub fn database_figures(start: &Edge, end: &Edge) -> Option<DatabaseFigures> {
    let seconds = (end.at - start.at).as_secs_f64();
    if strata_run::edge::restart_between(start, end).is_some() {
        return None;
    }
    let counters = end.database.as_ref()?.delta(start.database.as_ref()?);
    let value = |key: &str| counters.get(key).copied().unwrap_or(0.0);
    let optional = |key: &str| counters.get(key).copied();
    let blocks_read = value("database.blks_read");
    let blocks_hit = value("database.blks_hit");
    let total_blocks = blocks_read + blocks_hit;
    let read_requests = relation_io_total(&counters, "reads", end.version_num);
    let read_bytes = relation_io_total(&counters, "read_bytes", end.version_num);
    let figures = DatabaseFigures {
        blocks_read,
        blocks_read_per_s: per_s(blocks_read, seconds),
        read_requests,
        read_requests_per_s: read_requests.map(|requests| per_s(requests, seconds)),
        read_bytes,
        read_mb_per_s: read_bytes.map(|bytes| per_s(bytes / 1e6, seconds)),
        blocks_hit,
        buffer_hit_pct: if total_blocks > 0.0 {
            blocks_hit * 100.0 / total_blocks
        } else {
            0.0
        },
        commits: value("database.xact_commit"),
        commits_per_s: per_s(value("database.xact_commit"), seconds),
        wal_bytes: value("wal.bytes"),
        wal_mb_per_s: per_s(value("wal.bytes") / 1e6, seconds),
        wal_writes: optional("wal.write"),
        wal_syncs: optional("wal.sync"),
        wal_write_time_ms: optional("wal.write_time_ms"),
        wal_sync_time_ms: optional("wal.sync_time_ms"),
        block_read_time_ms: value("database.blk_read_time_ms"),
        block_read_time_us_per_block: if blocks_read > 0.0 {
            value("database.blk_read_time_ms") * 1e3 / blocks_read
        } else {
            0.0
        },
        temp_files: value("database.temp_files"),
        temp_bytes: value("database.temp_bytes"),
        deadlocks: value("database.deadlocks"),
        unavailable: BTreeMap::new(),
        counters,
    };
    Some(with_reasons(figures, end.version_num))
}

/// pg_stat_io's `io.<backend_type>.<column>` summed over backend types;
/// `None` before 18, where `reads` counts blocks, not requests.
fn relation_io_total(
    counters: &BTreeMap<String, f64>,
    column: &str,
    version_num: u32,
) -> Option<f64> {
    if version_num < 180000 {
        return None;
    }
    let suffix = format!(".{column}");
    let values: Vec<f64> = counters
        .iter()
        .filter(|(key, _)| key.starts_with("io.") && key.ends_with(&suffix))
        .map(|(_, value)| *value)
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// Says why each absent figure is absent on this server version.
fn with_reasons(mut figures: DatabaseFigures, version_num: u32) -> DatabaseFigures {
    let version = crate::read_path::version_text(version_num);
    let requests_reason = match version_num {
        v if v < 160000 => format!(
            "PostgreSQL {version} does not count read requests (pg_stat_io arrived in 16, its read requests and read_bytes in 18)"
        ),
        v if v < 180000 => format!(
            "PostgreSQL {version} counts pg_stat_io reads in 8 KiB blocks, not requests (requests and read_bytes arrived in 18); the blocks are in counters io.<backend_type>.reads"
        ),
        _ => "pg_stat_io gave no relation reads".to_string(),
    };
    let wal_reason = match version_num {
        v if v < 140000 => format!(
            "PostgreSQL {version} does not count WAL writes and syncs (pg_stat_wal arrived in 14)"
        ),
        _ => "the server gave no WAL write and sync counters".to_string(),
    };
    let absent = [
        (
            "read_requests",
            figures.read_requests.is_none(),
            &requests_reason,
        ),
        (
            "read_requests_per_s",
            figures.read_requests_per_s.is_none(),
            &requests_reason,
        ),
        ("read_bytes", figures.read_bytes.is_none(), &requests_reason),
        (
            "read_mb_per_s",
            figures.read_mb_per_s.is_none(),
            &requests_reason,
        ),
        ("wal_writes", figures.wal_writes.is_none(), &wal_reason),
        ("wal_syncs", figures.wal_syncs.is_none(), &wal_reason),
        (
            "wal_write_time_ms",
            figures.wal_write_time_ms.is_none(),
            &wal_reason,
        ),
        (
            "wal_sync_time_ms",
            figures.wal_sync_time_ms.is_none(),
            &wal_reason,
        ),
    ];
    for (field, is_absent, reason) in absent {
        if is_absent {
            figures
                .unavailable
                .insert(field.to_string(), reason.clone());
        }
    }
    figures
}
