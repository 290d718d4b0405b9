//! `strata model predict`: a SLOB run predicted from a calibrate curve and
//! the database's CPU per block, before anything runs — device read
//! requests/s, per-block read latency and statement latency at each session
//! count, with `--explain`'s inputs and arithmetic.
//!
//! Not for: the model itself ([`crate::predict`]) or reading the
//! Recordings it is given (the binary).

use super::{ms, number, Page};
use crate::predict::{predict, BlockWork, ContendedReads, Predicted, StorageCurve};
use serde::Serialize;
use strata_output::document::{Cell, Column};
use strata_output::Output;

/// A prediction to make.
#[derive(Debug, Clone)]
pub struct PredictRequest {
    /// The calibrate Recording the curve came from.
    pub calibration: String,
    pub curve: StorageCurve,
    pub work: BlockWork,
    /// Where the CPU per block came from (an option, a run's Recording).
    pub work_source: String,
    pub sessions: Vec<u32>,
    pub explain: bool,
}

#[derive(Serialize)]
struct PredictDocument<'a> {
    calibration: &'a str,
    curve: &'a StorageCurve,
    work: &'a BlockWork,
    work_source: &'a str,
    points: &'a [Predicted],
}

/// Runs the model.
pub fn run(request: &PredictRequest) -> anyhow::Result<Output> {
    let points = predict(&request.curve, &request.work, &request.sessions)?;
    let columns = vec![
        Column::number("sessions", None),
        number("device read requests", "/s"),
        number("device outstanding", "requests"),
        number("block read latency", "µs"),
        number("CPU busy", "%"),
        number("statement mean", "ms"),
        number("statement p99", "ms"),
    ];
    let mut page = Page::new("Predicted run (closed MVA)", columns);
    page.file(&request.calibration);
    inputs(&mut page, request);
    page.line(format!(
        "{:>8} {:>14} {:>12} {:>12} {:>8} {:>12} {:>12}",
        "sessions", "device r/s", "outstanding", "µs/block", "CPU %", "mean ms", "p99 ms"
    ));
    for point in &points {
        page.line(format!(
            "{:>8} {:>14.0} {:>12.2} {:>12.1} {:>8.0} {:>12.3} {:>12.3}",
            point.sessions,
            point.device_read_requests_per_s,
            point.device_outstanding,
            point.block_read_latency_s * 1e6,
            point.cpu_utilization * 100.0,
            ms(point.statement_latency_mean_s),
            ms(point.statement_latency_p99_s)
        ));
        page.row(vec![
            Cell::number(f64::from(point.sessions), 0, "sessions"),
            Cell::number(point.device_read_requests_per_s, 0, "/s"),
            Cell::number(point.device_outstanding, 2, "requests"),
            Cell::number(point.block_read_latency_s * 1e6, 1, "µs"),
            Cell::number(point.cpu_utilization * 100.0, 0, "%"),
            Cell::number(ms(point.statement_latency_mean_s), 3, "ms"),
            Cell::number(ms(point.statement_latency_p99_s), 3, "ms"),
        ]);
        if let Some(updates) = point.updates {
            page.line(format!(
                "{:>8} updates: {:.0} device write requests/s, {:.1} commits/s, an update {:.3} \
                 ms",
                "",
                updates.device_write_requests_per_s,
                updates.commits_per_s,
                ms(updates.update_latency_mean_s)
            ));
        }
        if request.explain {
            explain(&mut page, &request.work, point);
        }
    }
    page.finish(&PredictDocument {
        calibration: &request.calibration,
        curve: &request.curve,
        work: &request.work,
        work_source: &request.work_source,
        points: &points,
    })
}

/// A window of more sessions than one as the model takes it: its
/// figures at its count, each linear in between.
fn window_text(work: &BlockWork, c: &ContendedReads) -> String {
    let per_block = c.device_reads_per_block.map_or(String::new(), |k| {
        format!(", {k:.3} device reads per block")
    });
    let slowdown = c.device_slowdown.map_or(String::new(), |slowdown| {
        format!("; the device {slowdown:.2} × calibrate's time at that depth there")
    });
    let cpu = c.cpu_per_device_read_s.map_or(String::new(), |_| {
        format!(
            "; the read path's CPU {:.2} µs per device read there",
            work.read_path_cpu_at(c.sessions) * 1e6
        )
    });
    let wait = c.wait_per_device_read_s.map_or(String::new(), |wait_s| {
        format!(
            "; a wait for a CPU of {:.2} µs per device read there (none at one session, \
             linear between the windows, past the last on the line through the last two)",
            wait_s * 1e6
        )
    });
    format!(
        " ({:.2} in flight{per_block} at {} sessions, linear in between{slowdown}{cpu}{wait})",
        c.per_session, c.sessions
    )
}

/// The model's inputs: the work per block always, the curve with
/// `--explain`.
fn inputs(page: &mut Page, request: &PredictRequest) {
    let work = &request.work;
    let contended: String = work.windows().map(|c| window_text(work, c)).collect();
    let slowdown = work.one_session_device_slowdown;
    let one_slowdown = match slowdown == 1.0 {
        true => String::new(),
        false => format!(", the device {slowdown:.2} × calibrate's time at that depth"),
    };
    page.note(format!(
        "per block: CPU {:.2} µs cached + {:.2} µs per device read ({}) on {:.2} of {} CPUs, {:.2} µs \
         of it while the device reads (prefetch); {:.2} µs neither CPU nor device; think {:.2} \
         µs; {} blocks per statement, {:.3} device reads per block, {:.2} in flight per \
         session{one_slowdown}{contended}: per device read, CPU {:.2} µs",
        work.cpu_per_cached_block_s * 1e6,
        work.cpu_per_io_s * 1e6,
        request.work_source,
        work.cpu_servers,
        work.cpus,
        work.overlap_per_block_s * 1e6,
        work.delay_per_block_s * 1e6,
        work.think_per_block_s * 1e6,
        work.blocks_per_statement,
        work.device_reads_per_block,
        work.session_reads_in_flight,
        work.cpu_per_device_read_s() * 1e6
    ));
    if let Some(updates) = work.updates {
        page.note(format!(
            "updates: {:.1}% of statements change {} rows and commit, {:.3} ms per COMMIT (the \
             WAL's flush, at every session count), {:.2} device write requests per changed \
             row, each taking the device a read's time; the statement latency is the selects'",
            updates.share * 100.0,
            updates.rows,
            ms(updates.commit_s),
            updates.device_writes_per_row
        ));
    }
    if !request.explain {
        return;
    }
    for point in request.curve.points() {
        let batches = point.batch.as_ref().map_or(String::new(), |batch| {
            format!(
                "; {} batches of {} sorted reads: mean {:.3} ms, p99 {:.3} ms (× {:.3})",
                batch.batches,
                batch.blocks_per_batch,
                ms(batch.mean_s),
                ms(batch.p99_s),
                batch.p99_s / batch.mean_s
            )
        });
        page.note(format!(
            "  storage at {:>4} outstanding: {:.0} read requests/s, mean {:.1} µs, sd {:.1} µs, \
             p99 {:.1} µs; μ({}) = {} / {:.1} µs = {:.0}/s{batches}",
            point.outstanding,
            point.iops,
            point.mean_latency_s * 1e6,
            point.sd_latency_s * 1e6,
            point.p99_latency_s * 1e6,
            point.outstanding,
            point.outstanding,
            point.mean_latency_s * 1e6,
            request.curve.rate(point.outstanding)
        ));
    }
    page.note(
        "  device: rate μ(j × reads in flight per session) of the curve (linear between levels, \
         flat past the last) over the device's slowdown at that session count; CPUs: rate \
         min(j, CPU servers) / CPU per block; a delay Z for the rest and think time, and W, \
         the wait for a CPU beyond their queue (linear in the sessions from none at one \
         through each window's, past the last on the line through the last two)",
    );
}

fn explain(page: &mut Page, measured: &BlockWork, point: &Predicted) {
    let work = &measured.at(point.sessions);
    let delay_us =
        (work.delay_per_block_s + work.think_per_block_s) / work.device_reads_per_block * 1e6;
    let cycle_us = point.block_read_latency_s * 1e6
        + point.cpu_residence_s * 1e6
        + delay_us
        + point.wait_s * 1e6
        - point.overlap_s * 1e6;
    let p99 = match work.statement_p99_over_mean {
        Some(ratio) => format!(
            "p99 = mean × {ratio:.3} (the database's statements at one session{}) = {:.3} ms",
            measured.spread_text(),
            ms(point.statement_latency_p99_s)
        ),
        None => {
            let ratio_source = match point.p99_from_batches {
                true => "calibrate's batches timed whole at this depth",
                false => "independent reads: 1 + 2.326 σ / (mean √blocks)",
            };
            format!(
                "p99 = mean + reads × (R_device + R_cpu − CPU) × (r − 1) = {:.3} ms, r = {:.3} \
                 ({ratio_source})",
                ms(point.statement_latency_p99_s),
                point.device_p99_over_mean
            )
        }
    };
    let updates = work.updates.map_or(String::new(), |updates| {
        format!(
            " (Z with {:.1}% × {:.2} µs of COMMIT over {:.1} reads per statement of the mix; \
             the device's rate over 1 + {:.4} writes per read)",
            updates.share * 100.0,
            updates.commit_s * 1e6,
            work.reads_per_mixed_statement(),
            work.device_writes_per_read()
        )
    });
    page.note(format!(
        "  X = n / (Z + W + R_device + R_cpu − overlap) = {} / ({:.2} + {:.2} + {:.2} + {:.2} \
         − {:.2}) µs = {:.0}/s{updates}; \
         outstanding = X × R_device × {:.2} in flight per session = {:.2}; \
         statement = {:.1} reads × {:.2} µs = {:.3} ms; {p99}",
        point.sessions,
        work.delay_per_device_read() * 1e6,
        point.wait_s * 1e6,
        point.block_read_latency_s * 1e6,
        point.cpu_residence_s * 1e6,
        point.overlap_s * 1e6,
        point.device_read_requests_per_s,
        work.reads_in_flight_at(point.sessions),
        point.device_outstanding,
        work.reads_per_statement(),
        cycle_us,
        ms(point.statement_latency_mean_s),
    ));
}
