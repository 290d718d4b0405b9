//! A `strata run --sweep-sessions` Recording: the database's curve (a table
//! of its points and a chart of device read requests/s against sessions,
//! with the storage's curve against outstanding requests on the same axes
//! when the run had `--calibration` or `--predict`), its knee and
//! latency-target answer, the share of the storage each point reached and
//! where the rest went, and the prediction against the measurement.
//!
//! Not for: the last point's own window (the rest of the report) or the
//! arithmetic (strata-run's `sweep`).

use super::sections::{number, optional};
use strata_core::units::counted;
use strata_output::document::{
    Axis, Cell, Chart, ChartKind, Column, Fact, Mark, Section, Series, Table,
};
use strata_recording::sweep::{DatabaseContention, SweepSummary};

/// The facts that say what the sweep concluded.
pub(crate) fn facts(sweep: &SweepSummary) -> Vec<Fact> {
    let device = |sessions: u32| {
        sweep
            .point(sessions)
            .and_then(|point| point.device_read_requests_per_s)
            .unwrap_or(0.0)
    };
    let sessions: Vec<String> = sweep
        .points
        .iter()
        .map(|p| p.sessions.to_string())
        .collect();
    let mut facts = vec![Fact::new(
        "sweep",
        format!(
            "{}, at {} sessions",
            counted(sweep.points.len() as u64, "window", "windows"),
            sessions.join(", ")
        ),
    )];
    if let Some(knee) = sweep.knee {
        let reads = device(knee);
        facts.push(Fact::new(
            "knee",
            format!(
                "{}, {reads:.0} device read requests/s",
                counted(u64::from(knee), "session", "sessions")
            ),
        ));
    }
    let target = sweep.latency_target_ms;
    facts.push(Fact::new(
        "under the latency target",
        match sweep.best_under_target {
            Some(best) => format!(
                "{:.0} device read requests/s at {} (statement p99 ≤ {target:.1} ms)",
                device(best),
                counted(u64::from(best), "session", "sessions")
            ),
            None => format!("no point's statement p99 was ≤ {target:.1} ms"),
        },
    ));
    facts
}

pub(crate) fn section(sweep: &SweepSummary) -> Section {
    let mut section = Section::new("sweep", "Sweep: the database's curve")
        .table(points_table(sweep))
        .chart(curves(sweep));
    if !sweep.prediction.is_empty() {
        section = section.table(prediction_table(sweep));
    }
    if let Some(cpu) = &sweep.database_cpu {
        section = section.note(format!(
            "CPU per block, measured on the database: {:.2} µs (one session, {:.0} cached blocks \
             in {:.1} s, {:.1}% buffer hits; server and driver CPU seconds over blocks)",
            cpu.cpu_per_block_us, cpu.blocks, cpu.window_s, cpu.buffer_hit_pct
        ));
    }
    if let Some(reads) = &sweep.database_reads {
        section = section.note(format!(
            "CPU per device read, measured on the database: {:.2} µs (one session reading from \
             the device, {} read requests in {:.1} s, {:.2} µs per read); {:.2} µs of it while \
             the device reads (CPU + calibrate's {:.2} µs per read at its {:.2} reads in flight − \
             time per read); the model's device for one session: {:.2} × calibrate's time",
            reads.cpu_per_device_read_us,
            reads.device_read_requests,
            reads.window_s,
            reads.elapsed_per_device_read_us,
            reads.overlap_per_device_read_us,
            reads.storage_latency_us,
            reads.device_reads_in_flight,
            reads.device_slowdown
        ));
    }
    if let Some(anchor) = sweep.anchor_text() {
        section = section.note(format!("Predicted against measured, {anchor}"));
    }
    if let Some(text) = DatabaseContention::windows_text(&sweep.contention_windows()) {
        section = section.note(format!(
            "Several sessions reading from the device, measured on the database: {text}"
        ));
    }
    for point in &sweep.points {
        if let (Some(share), Some(why)) = (point.storage_share_pct, &point.shortfall) {
            section = section.note(format!(
                "{} reached {share:.0}% of the storage's rate at {} outstanding; the \
                 rest: {why}",
                counted(u64::from(point.sessions), "session", "sessions"),
                point.sessions
            ));
        }
    }
    section
}

fn points_table(sweep: &SweepSummary) -> Table {
    let mut table = Table::new(
        Some(
            "One measured window per session count, on one data set and one server (statement \
             latency p50/p99; in flight and r_await: the data devices', iostat's; CPU wait: \
             the share of the window some task waited for a CPU, /proc/pressure/cpu; storage \
             r/s: calibrate's at as many outstanding requests)",
        ),
        vec![
            Column::number("sessions", None),
            Column::number("device r/s", Some("requests/s")),
            Column::number("db blocks/s", Some("blocks/s")),
            Column::number("p50", Some("ms")),
            Column::number("p99", Some("ms")),
            Column::number("per block", Some("µs")),
            Column::number("in flight", Some("requests")),
            Column::number("r_await", Some("µs")),
            Column::number("CPU", Some("%")),
            Column::number("CPU wait", Some("%")),
            Column::number("absorbed", Some("%")),
            Column::number("storage r/s", Some("requests/s")),
            Column::number("share", Some("%")),
            Column::text("verdict"),
        ],
    );
    for point in &sweep.points {
        table.push(vec![
            Cell::number(f64::from(point.sessions), 0, ""),
            optional(point.device_read_requests_per_s, "requests/s"),
            number(point.database_blocks_read_per_s, "blocks/s"),
            number(point.statement_p50_ms, "ms"),
            number(point.statement_p99_ms, "ms"),
            optional(point.block_read_latency_us, "µs"),
            optional(point.device_reads_in_flight, "requests"),
            optional(point.device_read_latency_us, "µs"),
            optional(point.host_cpu_busy_pct, "%"),
            optional(point.cpu_pressure_pct, "%"),
            optional(point.absorbed_pct, "%"),
            optional(point.storage_iops, "requests/s"),
            optional(point.storage_share_pct, "%"),
            Cell::text(point.verdict.name()),
        ]);
    }
    table
}

fn prediction_table(sweep: &SweepSummary) -> Table {
    let mut table = Table::new(
        Some("Predicted before the sweep (closed MVA) against measured"),
        vec![
            Column::number("sessions", None),
            Column::number("predicted r/s", Some("requests/s")),
            Column::number("measured r/s", Some("requests/s")),
            Column::number("error", Some("%")),
            Column::number("predicted p99", Some("ms")),
            Column::number("measured p99", Some("ms")),
            Column::number("error", Some("%")),
            Column::number("in flight error", Some("%")),
            Column::number("time per read error", Some("%")),
            Column::number("CPU per read error", Some("%")),
            Column::number("measured window's quarters' spread", Some("%")),
        ],
    );
    for predicted in &sweep.prediction {
        let measured = sweep.point(predicted.sessions);
        let sources = predicted.error_sources;
        table.push(vec![
            Cell::number(f64::from(predicted.sessions), 0, ""),
            number(predicted.device_read_requests_per_s, "requests/s"),
            optional(
                measured.and_then(|p| p.device_read_requests_per_s),
                "requests/s",
            ),
            optional(predicted.device_error_pct, "%"),
            number(predicted.statement_p99_ms, "ms"),
            optional(measured.map(|p| p.statement_p99_ms), "ms"),
            optional(predicted.statement_p99_error_pct, "%"),
            optional(sources.map(|s| s.device_reads_in_flight_pct), "%"),
            optional(sources.map(|s| s.device_read_latency_pct), "%"),
            optional(sources.map(|s| s.cpu_per_device_read_pct), "%"),
            optional(measured.and_then(|p| p.quarter_spread_pct), "%"),
        ]);
    }
    table
}

/// Device read requests/s against sessions (the database) and against
/// outstanding requests (the storage, calibrate), and the prediction.
fn curves(sweep: &SweepSummary) -> Chart {
    let mut series = vec![Series {
        name: "database: device read requests/s vs sessions".to_string(),
        points: sweep
            .points
            .iter()
            .filter_map(|p| Some([f64::from(p.sessions), p.device_read_requests_per_s?]))
            .collect(),
    }];
    if let Some(storage) = &sweep.storage {
        series.push(Series {
            name: format!(
                "storage ({}): read requests/s vs outstanding",
                storage.calibration
            ),
            points: storage
                .levels
                .iter()
                .map(|level| [f64::from(level.outstanding), level.iops])
                .collect(),
        });
    }
    if !sweep.prediction.is_empty() {
        series.push(Series {
            name: "predicted: device read requests/s vs sessions".to_string(),
            points: sweep
                .prediction
                .iter()
                .map(|p| [f64::from(p.sessions), p.device_read_requests_per_s])
                .collect(),
        });
    }
    let knee = sweep.knee.and_then(|knee| {
        let point = sweep.point(knee)?;
        Some(Mark {
            x: f64::from(knee),
            y: point.device_read_requests_per_s?,
            label: format!("knee: {}", counted(u64::from(knee), "session", "sessions")),
        })
    });
    let axis = |label: &str, unit: &str| Axis {
        label: label.to_string(),
        unit: unit.to_string(),
        log: false,
    };
    Chart {
        id: "database_and_storage_curves".to_string(),
        title: "Device read requests/s: the database against sessions, the storage against \
                outstanding requests"
            .to_string(),
        kind: ChartKind::Line,
        x: axis(
            "sessions (database) or outstanding requests (storage)",
            "count",
        ),
        y: axis("device read requests", "requests/s"),
        series,
        marks: knee.into_iter().collect(),
    }
}
