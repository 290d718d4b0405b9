//! The sweep as text: each point's progress line and shortfall, the
//! prediction before the sweep, and the curve, conclusions, storage and
//! prediction tables after it.
//!
//! Not for: computing any figure it shows.

use super::*;

/// A point's updates as its shortfall names them.
pub(super) fn updates_text(updates: &PointUpdates) -> String {
    format!(
        "updates: {:.1} COMMITs/s of {:.2} ms each (the WAL's flush), {:.1}% of the sessions' \
         time; {:.0} device write requests/s beside the reads",
        updates.commits_per_s,
        updates.commit_mean_ms,
        updates.commit_time_pct,
        updates.device_write_requests_per_s
    )
}

/// Where a point's unused share of the storage went, by what the window
/// measured: the page cache, else how many of its sessions' reads the
/// devices held and how long each took beside calibrate's at that depth,
/// the CPU per block, and how long tasks waited for a CPU; and its
/// updates' COMMITs and writes, where it updated.
pub(super) fn shortfall(point: &CurvePoint) -> String {
    let absorbed = point.absorbed_pct.unwrap_or(0.0);
    let updates = point.updates.as_ref().map(updates_text);
    if absorbed > ABSORBED_WARNING_PCT {
        let cache = format!("the page cache absorbed {absorbed:.1}% of the database's block reads");
        return std::iter::once(cache)
            .chain(updates)
            .collect::<Vec<_>>()
            .join("; ");
    }
    let mut parts = Vec::new();
    if let (Some(in_flight), Some(latency_us)) =
        (point.device_reads_in_flight, point.device_read_latency_us)
    {
        let calibrate = point.storage_latency_us.map_or(String::new(), |us| {
            format!(" (calibrate: {us:.0} µs at that depth)")
        });
        parts.push(format!(
            "{in_flight:.1} reads in flight at the devices, not {}, {latency_us:.0} µs \
             each{calibrate}",
            point.sessions
        ));
    }
    let beside = point.block_read_latency_us.map_or(String::new(), |us| {
        format!(" beside the database's {us:.1} µs per block read")
    });
    let cpu = format!(
        "{:.1} µs of CPU per block (server and driver){beside}",
        point.cpu_per_block_us
    );
    parts.push(match point.host_cpu_busy_pct {
        Some(busy) if 100.0 - busy < CPU_BOUND_IDLE_PCT => {
            format!("CPU: the host's CPUs were {busy:.0}% busy; {cpu}")
        }
        Some(busy) => format!("time between reads: {cpu}; CPUs {busy:.0}% busy"),
        None => format!("time between reads: {cpu}; the host's CPUs not observed"),
    });
    if let (Some(waited), Some(busy)) = (point.cpu_pressure_pct, point.host_cpu_busy_pct) {
        parts.push(cpu_wait(waited, 100.0 - busy));
    }
    parts.extend(updates);
    parts.join("; ")
}

/// Some task waited for a CPU `waited_pct` of the window; with the CPUs
/// idle `idle_pct` of it too, waking tasks waited for CPUs that sat idle.
pub(super) fn cpu_wait(waited_pct: f64, idle_pct: f64) -> String {
    let waited = format!("some task waited for a CPU {waited_pct:.0}% of the window");
    match waited_pct >= IDLE_WAIT_PCT && idle_pct >= CPU_BOUND_IDLE_PCT {
        true => format!(
            "{waited} while the CPUs were {idle_pct:.0}% idle (waking tasks waited for CPUs \
             that sat idle: vCPUs the hypervisor runs late, or tasks packed onto fewer CPUs)"
        ),
        false => waited,
    }
}

/// One point as its progress line says it.
pub(super) fn point_line(point: &CurvePoint) -> String {
    let device = point
        .device_read_requests_per_s
        .map_or("no device measured".to_string(), |r| {
            format!("{r:.0} device read requests/s")
        });
    let share = point.storage_share_pct.map_or(String::new(), |share| {
        format!(", {share:.0}% of the storage's rate")
    });
    let statements = match (point.statement_mean_ms > 0.0, point.updates) {
        (false, Some(updates)) => format!(
            "no selects, {:.1} COMMITs/s of {:.2} ms",
            updates.commits_per_s, updates.commit_mean_ms
        ),
        _ => format!(
            "statement p50 {:.2} ms p99 {:.2} ms",
            point.statement_p50_ms, point.statement_p99_ms
        ),
    };
    format!(
        "{} sessions: {device}, {:.0} database blocks read/s, {statements}, {} µs per block \
         read{share}; {}",
        point.sessions,
        point.database_blocks_read_per_s,
        or_dash(point.block_read_latency_us, 1),
        point.verdict.name()
    )
}

/// The prediction as it is said before the sweep: the measured inputs,
/// then one line per point.
pub fn prediction_text(
    measured: &DatabaseWork,
    work: &BlockWork,
    storage: &Storage,
    points: &[PredictedPoint],
) -> String {
    let DatabaseWork {
        cpu,
        reads,
        contention,
        at_cpus,
    } = measured;
    let prefetch = match reads.prefetch {
        true => "prefetch (the server reads ahead of the block it works on)",
        false => "no prefetch (the server reads each block when it needs it)",
    };
    let ahead = reads_ahead_text(work);
    let one_device = one_device_text(work);
    let p99_source = p99_source_text(work, storage);
    let updates = updates_text_of(reads);
    let mut text = format!(
        "prediction (closed MVA): CPU per block {:.2} µs measured on the database (one session, \
         {:.0} cached blocks in {:.1} s, {:.1}% buffer hits) + {:.2} µs the read path's per \
         device read (one session reading from the device: {:.2} µs of CPU per device read, \
         {} reads in {:.1} s{}, {:.2} µs per read, {:.3} reads per block, {:.2} reads in flight at \
         the device) on {}; {prefetch}{ahead}; {:.2} µs of the CPU per \
         read ran while the device read (CPU + calibrate's {:.2} µs per read at {:.2} \
         outstanding − time per read){one_device}; {:.2} µs per block neither CPU nor device; \
         think {:.2} µs per block; {} blocks per statement{updates}; statement p99 from \
         {p99_source}\n",
        cpu.cpu_per_block_us,
        cpu.blocks,
        cpu.window_s,
        cpu.buffer_hit_pct,
        work.cpu_per_io_s * 1e6,
        reads.cpu_per_device_read_us,
        reads.device_read_requests,
        reads.window_s,
        quarters_text(reads.quarter_spread_pct),
        reads.elapsed_per_device_read_us,
        reads.device_reads_per_block,
        reads.device_reads_in_flight,
        cpus_text(work.cpus, at_cpus.as_ref(), contention.as_ref()),
        reads.overlap_per_device_read_us,
        reads.storage_latency_us,
        work.session_reads_in_flight,
        work.delay_per_block_s * 1e6,
        work.think_per_block_s * 1e6,
        work.blocks_per_statement
    );
    text.push_str(&predicted_lines(points));
    text
}

/// What the model takes of the device beyond calibrate's curve: reads a
/// session keeps in flight, the device's slowdown under several sessions,
/// and the read path's CPU per read.
fn reads_ahead_text(work: &BlockWork) -> String {
    let ahead = match work.session_reads_in_flight > 1.0 {
        true => format!(
            ", {:.2} device reads in flight per session: the model's device serves sessions × \
             that many",
            work.session_reads_in_flight
        ),
        false => String::new(),
    };
    let slowdowns = per_window(work, |c| Some(format!("{:.2}", c.device_slowdown?)));
    let slowdown = match slowdowns.is_empty() {
        true => String::new(),
        false => format!(
            "; the device's latency for several sessions' reads over calibrate's at their depth \
             (their CPU work runs while reads are in flight): {slowdowns}; the model's device \
             takes that many times calibrate's time there, linear from one session's {:.2} \
             through them",
            work.one_session_device_slowdown
        ),
    };
    let cpus_per_read = per_window(work, |c| {
        c.cpu_per_device_read_s?;
        Some(format!("{:.2} µs", work.read_path_cpu_at(c.sessions) * 1e6))
    });
    let read_path_cpu = match cpus_per_read.is_empty() {
        true => String::new(),
        false => format!(
            "; the read path's CPU per device read {cpus_per_read}: the model's runs linearly \
             from one session's through it"
        ),
    };
    format!("{ahead}{slowdown}{read_path_cpu}")
}

/// The device's share of one session's time per read beyond calibrate's.
fn one_device_text(work: &BlockWork) -> String {
    match work.one_session_device_slowdown == 1.0 {
        true => String::new(),
        false => format!(
            "; what that cannot take of the session's time per read against calibrate's goes to \
             the device: the model's device takes {:.2} × calibrate's time for one session",
            work.one_session_device_slowdown
        ),
    }
}

/// Where the predicted statement p99 comes from.
fn p99_source_text(work: &BlockWork, storage: &Storage) -> String {
    match (work.statement_p99_over_mean, storage.curve.has_batches()) {
        (Some(ratio), _) => format!(
            "the database's own statements at one session (p99 {ratio:.2} × their mean{}), \
             times the predicted mean",
            work.spread_text()
        ),
        (None, true) => {
            "calibrate's batches timed whole, p99 over mean at the predicted depth".to_string()
        }
        (None, false) => "independent reads (the calibration timed no batches)".to_string(),
    }
}

/// The measured updates, where statements updated.
fn updates_text_of(reads: &DatabaseReads) -> String {
    reads.updates.map_or(String::new(), |measured| {
        format!(
            "; {:.1}% of statements update {} rows and COMMIT: one session's COMMITs took \
             {:.3} ms ({} of them, {:.2} µs per device read), its data devices wrote {:.2} \
             requests per row updated, each taken as a read's time at the device; the \
             statement latency is the selects'",
            measured.share * 100.0,
            measured.rows_per_update,
            measured.commit_mean_us / 1e3,
            measured.commits,
            reads.commit_per_device_read_us(),
            measured.device_writes_per_row()
        )
    })
}

/// One line per predicted point.
fn predicted_lines(points: &[PredictedPoint]) -> String {
    let mut text = String::new();
    for point in points {
        text.push_str(&format!(
            "  {:>5} sessions: {:>10.0} device read requests/s, {:>8.1} µs per block read, \
             statement mean {:.2} ms p99 {:.2} ms, CPU {:.0}% busy\n",
            point.sessions,
            point.device_read_requests_per_s,
            point.block_read_latency_us,
            point.statement_mean_ms,
            point.statement_p99_ms,
            point.cpu_busy_pct
        ));
    }
    text
}

/// The CPUs the model takes, and how the windows of several sessions
/// measured them.
pub(super) fn cpus_text(
    cpus: u32,
    at_cpus: Option<&DatabaseContention>,
    contention: Option<&DatabaseContention>,
) -> String {
    let windows: Vec<&DatabaseContention> = at_cpus.into_iter().chain(contention).collect();
    DatabaseContention::windows_text(&windows).unwrap_or(format!("{cpus} CPUs"))
}

/// A figure of each window of several sessions that has it, "at N
/// sessions" each, joined.
pub(super) fn per_window(
    work: &BlockWork,
    figure: impl Fn(&ContendedReads) -> Option<String>,
) -> String {
    let each: Vec<String> = (work.windows())
        .filter_map(|window| {
            Some(format!(
                "{} at {} sessions",
                figure(window)?,
                window.sessions
            ))
        })
        .collect();
    each.join(", ")
}

/// The sweep's text: the curve, the knee, the latency-target answer, the
/// storage's share and the prediction against the measurement.
pub fn text(summary: &SweepSummary) -> String {
    let sessions: Vec<String> = summary
        .points
        .iter()
        .map(|p| p.sessions.to_string())
        .collect();
    let mut out = format!(
        "Sweep: {} points, one measured window each ({} sessions)\n",
        summary.points.len(),
        sessions.join(", ")
    );
    out += &format!(
        "{:>8} {:>12} {:>12} {:>9} {:>9} {:>10} {:>9} {:>10} {:>8} {:>10} {:>9} {:>12} {:>7}  verdict\n",
        "sessions",
        "device r/s",
        "db blocks/s",
        "p50 ms",
        "p99 ms",
        "µs/block",
        "in flight",
        "r_await µs",
        "CPU %",
        "CPU wait%",
        "absorbed%",
        "storage r/s",
        "share%"
    );
    for point in &summary.points {
        out += &format!(
            "{:>8} {:>12} {:>12.0} {:>9.2} {:>9.2} {:>10} {:>9} {:>10} {:>8} {:>10} {:>9} {:>12} {:>7}  {}\n",
            point.sessions,
            or_dash(point.device_read_requests_per_s, 0),
            point.database_blocks_read_per_s,
            point.statement_p50_ms,
            point.statement_p99_ms,
            or_dash(point.block_read_latency_us, 1),
            or_dash(point.device_reads_in_flight, 2),
            or_dash(point.device_read_latency_us, 1),
            or_dash(point.host_cpu_busy_pct, 0),
            or_dash(point.cpu_pressure_pct, 0),
            or_dash(point.absorbed_pct, 1),
            or_dash(point.storage_iops, 0),
            or_dash(point.storage_share_pct, 0),
            point.verdict.name()
        );
    }
    out += &conclusions_text(summary);
    out += &storage_text(summary);
    out += &prediction_table(summary);
    out += &error_sources_text(summary);
    out
}

pub(super) fn conclusions_text(summary: &SweepSummary) -> String {
    let device = |sessions: u32| {
        summary
            .point(sessions)
            .and_then(|p| p.device_read_requests_per_s)
            .unwrap_or(0.0)
    };
    let mut out = match summary.knee {
        Some(knee) => format!(
            "Knee: {knee} sessions ({:.0} device read requests/s): the most reads per ms of mean \
             statement latency; past it, sessions buy latency\n",
            device(knee)
        ),
        None => "Knee: none (no point measured device reads)\n".to_string(),
    };
    let target = summary.latency_target_ms;
    out += &match summary.best_under_target {
        Some(best) => format!(
            "Under the latency target (statement p99 ≤ {target:.1} ms): {:.0} device read \
             requests/s at {best} sessions (p99 {:.2} ms)\n",
            device(best),
            summary.point(best).map_or(0.0, |p| p.statement_p99_ms)
        ),
        None => {
            format!("Under the latency target (statement p99 ≤ {target:.1} ms): no point met it\n")
        }
    };
    if !summary.not_run.is_empty() {
        let not_run: Vec<String> = summary.not_run.iter().map(u32::to_string).collect();
        out += &format!("Not run (stopped): {} sessions\n", not_run.join(", "));
    }
    out
}

pub(super) fn storage_text(summary: &SweepSummary) -> String {
    let Some(storage) = &summary.storage else {
        return String::new();
    };
    let mut out = format!(
        "Storage (calibrate {}), at as many outstanding requests as sessions:\n",
        storage.calibration
    );
    for point in &summary.points {
        if let (Some(share), Some(capacity), Some(why)) = (
            point.storage_share_pct,
            point.storage_iops,
            &point.shortfall,
        ) {
            out += &format!(
                "  {:>5} sessions: {share:.0}% of the storage's {capacity:.0} read requests/s; the \
                 rest: {why}\n",
                point.sessions
            );
        }
    }
    out
}

pub(super) fn prediction_table(summary: &SweepSummary) -> String {
    if summary.prediction.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "Predicted vs measured (spread%: the measured window's loops/s over its quarters, \
         highest less lowest over their mean):\n{:>8} {:>14} {:>14} {:>8} {:>14} {:>14} {:>8} \
         {:>8}\n",
        "sessions",
        "pred. dev r/s",
        "meas. dev r/s",
        "error%",
        "pred. p99 ms",
        "meas. p99 ms",
        "error%",
        "spread%"
    );
    for predicted in &summary.prediction {
        let measured = summary.point(predicted.sessions);
        out += &format!(
            "{:>8} {:>14.0} {:>14} {:>8} {:>14.2} {:>14} {:>8} {:>8}\n",
            predicted.sessions,
            predicted.device_read_requests_per_s,
            or_dash(measured.and_then(|p| p.device_read_requests_per_s), 0),
            signed(predicted.device_error_pct),
            predicted.statement_p99_ms,
            or_dash(measured.map(|p| p.statement_p99_ms), 2),
            signed(predicted.statement_p99_error_pct),
            or_dash(measured.and_then(|p| p.quarter_spread_pct), 1),
        );
    }
    out
}

/// Each scored point's errors taken apart, with the measured figure and
/// the model's beside each factor.
pub(super) fn error_sources_text(summary: &SweepSummary) -> String {
    let lines: Vec<String> = summary
        .prediction
        .iter()
        .filter_map(|predicted| {
            let point = summary.point(predicted.sessions)?;
            Some(error_sources_line(
                predicted,
                point,
                &predicted.error_sources?,
            ))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "What the errors are made of (measured against the model, %; device r/s = reads in \
         flight at the devices ÷ each read's time there, iostat's aqu-sz ÷ r_await; p99 = mean \
         × p99/mean):\n{}{}",
        lines.concat(),
        summary
            .anchor_text()
            .map_or(String::new(), |anchor| format!("  {anchor}\n"))
    )
}

/// One point's factors, each with the point's figure and the model's.
pub(super) fn error_sources_line(
    predicted: &PredictedPoint,
    point: &CurvePoint,
    sources: &ErrorSources,
) -> String {
    let beside = |measured: Option<f64>, model: Option<f64>, decimals: usize, unit: &str| {
        format!(
            "{}{unit}, the model's {}{unit}",
            or_dash(measured, decimals),
            or_dash(model, decimals)
        )
    };
    let in_flight = sources.device_reads_in_flight_pct;
    let latency = sources.device_read_latency_pct;
    format!(
        "  {:>5} sessions: r/s {} = in flight {in_flight:+.1} ({}) ÷ time per read {latency:+.1} \
         ({}); CPU per device read {:+.1} ({}), device reads per block {:+.1}; p99 {} = mean \
         {:+.1} × p99/mean {:+.1}\n",
        predicted.sessions,
        signed(predicted.device_error_pct),
        beside(
            point.device_reads_in_flight,
            Some(predicted.device_outstanding),
            2,
            ""
        ),
        beside(
            point.device_read_latency_us,
            predicted.device_read_latency_us,
            0,
            " µs"
        ),
        sources.cpu_per_device_read_pct,
        beside(
            point.cpu_per_device_read_us,
            predicted.cpu_per_device_read_us,
            1,
            " µs"
        ),
        sources.device_reads_per_block_pct,
        signed(predicted.statement_p99_error_pct),
        sources.statement_mean_pct,
        sources.statement_p99_over_mean_pct,
    )
}

/// A figure with `decimals`, or `-` where there is none.
pub(super) fn or_dash(value: Option<f64>, decimals: usize) -> String {
    value.map_or("-".to_string(), |v| format!("{v:.decimals$}"))
}

/// A signed error in percent, or `-`.
pub(super) fn signed(value: Option<f64>) -> String {
    value.map_or("-".to_string(), |v| format!("{v:+.1}"))
}
