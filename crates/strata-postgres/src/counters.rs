//! Raw monotonic counters of a PostgreSQL server, read from its statistics
//! views under stable keys whatever the server version.
//!
//! For: snapshots at the edges of a measured window and their differences.
//! Each view's version differences live in one function that says which
//! columns to read under which keys.
//!
//! Not for: rates, units or interpretation (the accounting code does that),
//! or per-statement statistics.

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use tokio_postgres::Client;

pub use strata_run::edge::DatabaseCounters;

pub async fn server_version_num(client: &Client) -> Result<u32> {
    let row = client
        .query_one("SELECT current_setting('server_version_num')", &[])
        .await
        .context("reading server_version_num")?;
    let text: String = row.get(0);
    text.parse()
        .with_context(|| format!("server_version_num {text:?} is not a number"))
}

/// One row of counters: `SELECT <column>::float8, … FROM <from>`, stored
/// under the paired keys. A NULL column (not tracked) gives no key.
struct ViewCounters {
    from: &'static str,
    columns: &'static [(&'static str, &'static str)],
}

fn database_counters(_version_num: u32) -> ViewCounters {
    ViewCounters {
        from: "pg_stat_database WHERE datname = current_database()",
        columns: &[
            ("database.blks_read", "blks_read"),
            ("database.blks_hit", "blks_hit"),
            ("database.xact_commit", "xact_commit"),
            ("database.xact_rollback", "xact_rollback"),
            ("database.blk_read_time_ms", "blk_read_time"),
            ("database.blk_write_time_ms", "blk_write_time"),
            ("database.temp_files", "temp_files"),
            ("database.temp_bytes", "temp_bytes"),
            ("database.tup_returned", "tup_returned"),
            ("database.tup_fetched", "tup_fetched"),
            ("database.tup_updated", "tup_updated"),
            ("database.deadlocks", "deadlocks"),
        ],
    }
}

/// ≤13 has no pg_stat_wal: the WAL position stands in for `wal.bytes`.
/// 18 moved the write and sync counts and times to pg_stat_io.
fn wal_counters(version_num: u32) -> ViewCounters {
    match version_num {
        v if v >= 180000 => ViewCounters {
            from: "pg_stat_wal",
            columns: &[
                ("wal.records", "wal_records"),
                ("wal.fpi", "wal_fpi"),
                ("wal.bytes", "wal_bytes"),
                ("wal.buffers_full", "wal_buffers_full"),
            ],
        },
        v if v >= 140000 => ViewCounters {
            from: "pg_stat_wal",
            columns: &[
                ("wal.records", "wal_records"),
                ("wal.fpi", "wal_fpi"),
                ("wal.bytes", "wal_bytes"),
                ("wal.buffers_full", "wal_buffers_full"),
                ("wal.write", "wal_write"),
                ("wal.sync", "wal_sync"),
                ("wal.write_time_ms", "wal_write_time"),
                ("wal.sync_time_ms", "wal_sync_time"),
            ],
        },
        _ => ViewCounters {
            from: "(SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal_position) AS wal",
            columns: &[("wal.bytes", "wal_position")],
        },
    }
}

/// 18+: WAL writes and syncs of every process, from pg_stat_io's 'normal'
/// context (the 'init' context is zero-filling new segments, which
/// pg_stat_wal never counted).
fn wal_io_counters(version_num: u32) -> Option<ViewCounters> {
    (version_num >= 180000).then_some(ViewCounters {
        from: "pg_stat_io WHERE object = 'wal' AND context = 'normal'",
        columns: &[
            ("wal.write", "sum(writes)"),
            ("wal.sync", "sum(fsyncs)"),
            ("wal.write_time_ms", "sum(write_time)"),
            ("wal.sync_time_ms", "sum(fsync_time)"),
        ],
    })
}

/// ≤16 pg_stat_bgwriter held the checkpointer's counters too; 17 moved
/// them to pg_stat_checkpointer and dropped the backend ones.
fn checkpoint_counters(version_num: u32) -> Vec<ViewCounters> {
    if version_num >= 170000 {
        return vec![
            ViewCounters {
                from: "pg_stat_checkpointer",
                columns: &[
                    ("checkpoint.timed", "num_timed"),
                    ("checkpoint.requested", "num_requested"),
                    ("checkpoint.write_time_ms", "write_time"),
                    ("checkpoint.sync_time_ms", "sync_time"),
                    ("checkpoint.buffers_written", "buffers_written"),
                ],
            },
            ViewCounters {
                from: "pg_stat_bgwriter",
                columns: &[("bgwriter.buffers_clean", "buffers_clean")],
            },
        ];
    }
    vec![ViewCounters {
        from: "pg_stat_bgwriter",
        columns: &[
            ("checkpoint.timed", "checkpoints_timed"),
            ("checkpoint.requested", "checkpoints_req"),
            ("checkpoint.write_time_ms", "checkpoint_write_time"),
            ("checkpoint.sync_time_ms", "checkpoint_sync_time"),
            ("checkpoint.buffers_written", "buffers_checkpoint"),
            ("bgwriter.buffers_clean", "buffers_clean"),
            ("bgwriter.buffers_backend", "buffers_backend"),
            ("bgwriter.buffers_backend_fsync", "buffers_backend_fsync"),
        ],
    }]
}

/// 16+: pg_stat_io columns summed over the contexts (normal, bulkread,
/// bulkwrite, vacuum) per backend type for object 'relation', as
/// `io.<backend_type>.<column>`. Before 18 `reads`, `writes` and `extends`
/// count blocks of `op_bytes` (the block size, 8 KiB, for relations); from 18 they count operations (a combined
/// read of several blocks is one) and `read_bytes`, `write_bytes`,
/// `extend_bytes` their size. The reads are counted for the process that
/// asked for them, also when an io worker issued them.
fn relation_io_columns(version_num: u32) -> &'static [&'static str] {
    match version_num {
        v if v >= 180000 => &[
            "reads",
            "read_bytes",
            "writes",
            "write_bytes",
            "extends",
            "extend_bytes",
            "fsyncs",
            "read_time",
            "write_time",
        ],
        v if v >= 160000 => &[
            "reads",
            "writes",
            "extends",
            "fsyncs",
            "read_time",
            "write_time",
        ],
        _ => &[],
    }
}

/// Every counter the server of `version_num` offers, under stable keys.
pub async fn snapshot(client: &Client, version_num: u32) -> Result<DatabaseCounters> {
    let mut views = vec![database_counters(version_num), wal_counters(version_num)];
    views.extend(wal_io_counters(version_num));
    views.extend(checkpoint_counters(version_num));
    let mut values = BTreeMap::new();
    for view in &views {
        read_view(client, view, &mut values).await?;
    }
    read_relation_io(client, relation_io_columns(version_num), &mut values).await?;
    Ok(DatabaseCounters { values })
}

async fn read_view(
    client: &Client,
    view: &ViewCounters,
    values: &mut BTreeMap<String, f64>,
) -> Result<()> {
    let selected: Vec<String> = view
        .columns
        .iter()
        .map(|(_, column)| format!("({column})::float8"))
        .collect();
    let sql = format!("SELECT {} FROM {}", selected.join(", "), view.from);
    let row = client
        .query_opt(&sql, &[])
        .await
        .with_context(|| format!("reading counters: {sql}"))?;
    let Some(row) = row else { return Ok(()) };
    for (index, (key, _)) in view.columns.iter().enumerate() {
        if let Some(value) = row.get::<_, Option<f64>>(index) {
            values.insert(key.to_string(), value);
        }
    }
    Ok(())
}

/// The key of a pg_stat_io column: its times are milliseconds, and the
/// key says so (`read_time` → `read_time_ms`).
fn io_key(column: &str) -> String {
    match column.ends_with("_time") {
        true => format!("{column}_ms"),
        false => column.to_string(),
    }
}

async fn read_relation_io(
    client: &Client,
    columns: &[&str],
    values: &mut BTreeMap<String, f64>,
) -> Result<()> {
    if columns.is_empty() {
        return Ok(());
    }
    let sums: Vec<String> = columns
        .iter()
        .map(|column| format!("sum({column})::float8"))
        .collect();
    let sql = format!(
        "SELECT backend_type, {} FROM pg_stat_io WHERE object = 'relation' GROUP BY backend_type",
        sums.join(", ")
    );
    let rows = client
        .query(&sql, &[])
        .await
        .with_context(|| format!("reading counters: {sql}"))?;
    for row in rows {
        let backend_type = row.get::<_, String>(0).replace(' ', "_");
        for (index, column) in columns.iter().enumerate() {
            if let Some(value) = row.get::<_, Option<f64>>(index + 1) {
                values.insert(format!("io.{backend_type}.{}", io_key(column)), value);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_covers_keys_present_in_both() {
        let snapshot = |pairs: &[(&str, f64)]| DatabaseCounters {
            values: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        };
        let before = snapshot(&[("a", 1.0), ("b", 5.0)]);
        let after = snapshot(&[("a", 4.0), ("c", 9.0)]);
        assert_eq!(
            after.delta(&before),
            BTreeMap::from([("a".to_string(), 3.0)])
        );
    }

    #[test]
    fn every_version_has_unique_keys() {
        for version in [130000, 140000, 150019, 160000, 170000, 180006] {
            let mut views = vec![database_counters(version), wal_counters(version)];
            views.extend(wal_io_counters(version));
            views.extend(checkpoint_counters(version));
            let mut keys: Vec<&str> = views
                .iter()
                .flat_map(|v| v.columns.iter().map(|c| c.0))
                .collect();
            let count = keys.len();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), count, "duplicate key for version {version}");
        }
    }
}
