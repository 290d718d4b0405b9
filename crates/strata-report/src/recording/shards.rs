//! A run merged from its shards (`strata merge`, `strata report A B C`):
//! the run's id, the shards merged and missing, their start skew, and a
//! table of the shards (sessions, loops/s, their own select p99, their
//! driver's CPU), a CPU-bound driver flagged.
//!
//! Not for: merging (strata-recording's `merge`).

use super::sections::{number, optional};
use strata_output::document::{Cell, Column, Fact, Section, Table};
use strata_recording::environment::MergedShards;

/// The facts that say what was merged.
pub(crate) fn facts(merged: &MergedShards) -> Vec<Fact> {
    let skew = merged
        .start_skew_ms
        .map_or("not measured".to_string(), |skew| format!("{skew:.1} ms"));
    let mut shards = format!(
        "{} of {} of run {}, windows begun within {skew} of each other (the server's clock)",
        merged.merged.len(),
        merged.shards,
        merged.run_id
    );
    if !merged.missing.is_empty() {
        let missing: Vec<String> = merged.missing.iter().map(u32::to_string).collect();
        shards.push_str(&format!("; MISSING: shards {}", missing.join(", ")));
    }
    vec![Fact::new("shards", shards)]
}

pub(crate) fn section(merged: &MergedShards) -> Section {
    let mut table = Table::new(
        Some("Shards (each driver's own figures; the run's are their merge)"),
        vec![
            Column::text("shard"),
            Column::text("driver host"),
            Column::text("server"),
            Column::number("pid", None),
            Column::number("sessions", Some("sessions")),
            Column::number("loops/s", Some("loops/s")),
            Column::number("select p99", Some("ms")),
            Column::number("driver CPU", Some("CPU-s")),
            Column::number("host idle", Some("%")),
            Column::number("window start", Some("ms")),
            Column::text("flag"),
        ],
    );
    let earliest = merged
        .merged
        .iter()
        .filter_map(|summary| summary.shard.window_start_server_unix_s)
        .fold(f64::INFINITY, f64::min);
    for summary in &merged.merged {
        let shard = &summary.shard;
        table.push(vec![
            Cell::text(format!("{}/{}", shard.shard, shard.shards)),
            Cell::text(shard.host.as_str()),
            Cell::text(shard.server.as_str()),
            number(f64::from(shard.pid), ""),
            number(f64::from(summary.sessions), "sessions"),
            number(summary.loops_per_s, "loops/s"),
            optional(summary.select_p99_ms, "ms"),
            number(summary.strata_cpu_s, "CPU-s"),
            optional(summary.host_idle_pct, "%"),
            optional(
                shard
                    .window_start_server_unix_s
                    .map(|start| (start - earliest) * 1e3),
                "ms",
            ),
            Cell::text(if summary.cpu_bound {
                "driver CPU-bound"
            } else {
                ""
            }),
        ]);
    }
    for missing in &merged.missing {
        let mut row = vec![
            Cell::text(format!("{missing}/{}", merged.shards)),
            Cell::text("MISSING"),
        ];
        row.extend((0..9).map(|_| Cell::empty()));
        table.push(row);
    }
    Section::new("shards", "Shards").table(table).note(
        "The run's figures add the shards' sessions' work and their latency histograms (its \
         percentiles are of every statement); the database's counters, its host's devices and \
         CPU are counted once. \"window start\" is each shard's window start after the earliest, \
         on the database server's clock.",
    )
}
