//! The run's block tracer read at the window's edges: each run device's
//! requests traced one by one ([`strata_probe::blocktrace::shared`]), or,
//! for a server on another host, as that host's strata agent traced and
//! served them.
//!
//! Not for: the tracing itself, or printing the figures (`output`).

use crate::edge::{AgentBlockTrace, Edge};
use std::collections::BTreeMap;
use strata_agent::traced::{ServedHistogram, TracedSeries};
use strata_recording::device::IostatFigures;
use strata_recording::run::{
    BlockTraceFigures, LatencyPercentiles, StatementOutlier, TracedDevice, TracedOperation,
};
use strata_slob::session::RunOutcome;

pub use strata_probe::blocktrace::shared::{
    decline, forget_roles, name_roles, set_outlier_threshold_ms, snapshot, start, with_diskstats,
    ThreadRole,
};

/// The run's devices' traced requests between the two edges: this host's
/// tracer's, or the server host's agent's where the run has one.
pub fn figures(start: &Edge, end: &Edge, devices: &[IostatFigures]) -> BlockTraceFigures {
    match (&start.agent_block_trace, &end.agent_block_trace) {
        (Some(before), Some(after)) => by_agent(before, after, devices),
        (None, None) => strata_probe::blocktrace::shared::figures(
            (start.block_trace.as_ref(), end.block_trace.as_ref()),
            &end.disks,
            devices,
        ),
        _ => unavailable(
            "the server host's agent did not answer at an edge of the window".to_string(),
        ),
    }
}

/// A statement and a request it ran across may be this far apart at
/// either end, seconds: the two clocks' origins are read a few
/// microseconds apart.
const SPAN_SLACK_S: f64 = 0.000_5;

/// Names, for each listed outlier that a session's server process
/// submitted, the session, and the session's statement that ran from
/// before the request started until after it ended, where that statement
/// was slow enough to be kept. The outliers' `ended_s` count from the
/// start edge's trace snapshot, the statements' `at_s` from the sessions'
/// window start: both are CLOCK_MONOTONIC, brought together here.
pub fn name_sessions(traced: &mut BlockTraceFigures, start: &Edge, outcome: &RunOutcome) {
    let Some(outliers) = traced.outliers.as_mut() else {
        return;
    };
    let Some(trace_origin_ns) = start.block_trace.as_ref().map(|trace| trace.taken_ns) else {
        return;
    };
    let window_start_ns = strata_probe::blocktrace::monotonic_ns() as f64
        - outcome.window_start.elapsed().as_nanos() as f64;
    let trace_after_window_s = (trace_origin_ns as f64 - window_start_ns) / 1e9;
    let mut statements_of: BTreeMap<u32, Vec<&StatementOutlier>> = BTreeMap::new();
    for statement in &outcome.outliers {
        statements_of
            .entry(statement.session)
            .or_default()
            .push(statement);
    }
    for outlier in &mut outliers.listed {
        let server_thread = outlier.thread.unwrap_or(outlier.pid);
        let Some(session) = outcome.session_of_server_thread.get(&server_thread) else {
            continue;
        };
        outlier.session = Some(*session);
        let ended_s = outlier.ended_s + trace_after_window_s;
        let started_s = ended_s - (outlier.queue_ms + outlier.device_ms) / 1e3;
        outlier.statement = statements_of
            .get(session)
            .into_iter()
            .flatten()
            .find(|statement| {
                statement.at_s - statement.latency_ms / 1e3 <= started_s + SPAN_SLACK_S
                    && ended_s <= statement.at_s + SPAN_SLACK_S
            })
            .map(|statement| (*statement).clone());
    }
}

fn unavailable(why: String) -> BlockTraceFigures {
    BlockTraceFigures {
        unavailable: Some(why),
        ..BlockTraceFigures::default()
    }
}

/// The window's requests as the server host's agent traced them: per run
/// device and operation, the count beside the agent's /proc/diskstats, and
/// device and queue time to the agent's buckets.
fn by_agent(
    before: &AgentBlockTrace,
    after: &AgentBlockTrace,
    devices: &[IostatFigures],
) -> BlockTraceFigures {
    let host = &after.host;
    let (Some(earlier), Some(later)) = (&before.trace, &after.trace) else {
        return unavailable(format!(
            "the agent of the server's host {host} serves no requests traced one by one (a strata \
             agent traces where it runs as root with BPF; node_exporter does not trace)"
        ));
    };
    let mut left_out: Vec<String> = later
        .unreadable
        .iter()
        .map(|(series, why)| format!("{series}: {why}"))
        .collect();
    // An agent before the time start → end was served: its issued
    // requests stand for those started.
    let serves_totals = later
        .series
        .values()
        .any(|series| series.total_time.is_some());
    let traced = devices
        .iter()
        .map(|counted| {
            let of_device = later
                .series
                .iter()
                .filter(|((device, _), _)| *device == counted.device);
            let mut operations = Vec::new();
            for ((device, operation), now) in of_device {
                let then = earlier.series.get(&(device.clone(), operation.clone()));
                match operation_by_agent((operation, serves_totals), now, then, counted) {
                    Some(figures) => operations.extend(figures),
                    None => left_out.push(format!(
                        "device={device},operation={operation}: its counts went down between \
                         the edges (the agent restarted)"
                    )),
                }
            }
            TracedDevice {
                device: counted.device.clone(),
                role: counted.role.clone(),
                operations,
                by_role: Vec::new(),
            }
        })
        .collect();
    let mut note = format!(
        "traced on the server's host {host} by its strata agent, read from its Prometheus \
         histograms at the window's edges: each percentile is the upper bound of the bucket it \
         falls in (10 µs to 10 s in 1-2.5-5 steps; past 10 s shown as 10 s); no roles, processes \
         or outliers"
    );
    if !left_out.is_empty() {
        note += &format!("; left out: {}", left_out.join("; "));
    }
    BlockTraceFigures {
        traced_by: Some(note),
        devices: traced,
        ..BlockTraceFigures::default()
    }
}

/// One operation's requests over the window; `Some(None)` where none
/// ended in it, `None` where a count went down.
fn operation_by_agent(
    (operation, serves_totals): (&str, bool),
    now: &TracedSeries,
    then: Option<&TracedSeries>,
    counted: &IostatFigures,
) -> Option<Option<TracedOperation>> {
    let empty = ServedHistogram::default();
    let device_time = now
        .device_time
        .since(then.map_or(&empty, |then| &then.device_time))?;
    let window = |now: Option<&ServedHistogram>, then: Option<&ServedHistogram>| match now {
        Some(now) => now.since(then.unwrap_or(&empty)).map(Some),
        None => Some(None),
    };
    let queue_time = window(
        now.queue_time.as_ref(),
        then.and_then(|then| then.queue_time.as_ref()),
    )?;
    let total_time = window(
        now.total_time.as_ref(),
        then.and_then(|then| then.total_time.as_ref()),
    )?;
    let figures = |device_percentiles| TracedOperation {
        operation: operation.to_string(),
        requests: match (&total_time, serves_totals) {
            (Some(total), _) => total.count,
            (None, true) => 0,
            (None, false) => device_time.count,
        },
        diskstats_requests: counted.completed_requests(operation),
        issued_requests: Some(device_time.count),
        ends_missed: now.ends_missed.and_then(|missed| {
            missed.checked_sub(then.and_then(|then| then.ends_missed).unwrap_or(0))
        }),
        device_time: device_percentiles,
        queue_time: queue_time.as_ref().and_then(percentiles),
        total_mean_ms: total_time
            .as_ref()
            .filter(|total| total.count > 0)
            .map(|total| total.sum_s * 1e3 / total.count as f64),
        ..TracedOperation::default()
    };
    Some(percentiles(&device_time).map(figures))
}

/// Mean, and p50, p99, p99.9 and max as their buckets' upper bounds, ms.
fn percentiles(histogram: &ServedHistogram) -> Option<LatencyPercentiles> {
    let bound_ms = |quantile: f64| histogram.quantile_bound_s(quantile).map(|s| s * 1e3);
    Some(LatencyPercentiles {
        mean_ms: histogram.sum_s * 1e3 / histogram.count as f64,
        p50_ms: bound_ms(0.5)?,
        p99_ms: bound_ms(0.99)?,
        p999_ms: bound_ms(0.999)?,
        max_ms: histogram.max_bound_s()? * 1e3,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_agent::traced::AgentTrace;

    fn served(cumulative: [u64; 3], sum_s: f64) -> ServedHistogram {
        ServedHistogram {
            cumulative: vec![
                (0.0001, cumulative[0]),
                (0.001, cumulative[1]),
                (f64::INFINITY, cumulative[2]),
            ],
            count: cumulative[2],
            sum_s,
        }
    }

    fn at_edge(cumulative: [u64; 3], sum_s: f64) -> AgentBlockTrace {
        let series = TracedSeries {
            device_time: served(cumulative, sum_s),
            queue_time: None,
            total_time: None,
            ends_missed: Some(cumulative[2] / 100),
        };
        AgentBlockTrace {
            host: "db1".into(),
            trace: Some(AgentTrace {
                series: [(("vda".to_string(), "read".to_string()), series)].into(),
                unreadable: Default::default(),
            }),
        }
    }

    #[test]
    fn an_agents_window_is_its_histograms_difference_beside_its_diskstats() {
        let counted = IostatFigures {
            device: "vda".into(),
            role: "data".into(),
            read_requests: 1000,
            ..IostatFigures::default()
        };
        let figures = by_agent(
            &at_edge([100, 110, 110], 0.01),
            &at_edge([1090, 1100, 1110], 0.11),
            std::slice::from_ref(&counted),
        );
        assert!(figures.traced_by.unwrap().contains("db1"));
        let read = &figures.devices[0].operations[0];
        assert_eq!((read.requests, read.diskstats_requests), (1000, Some(1000)));
        assert_eq!(read.ends_missed, Some(10));
        assert_eq!(read.device_time.p50_ms, 0.1);
        assert_eq!(read.device_time.p999_ms, 1.0);
        assert!((read.device_time.mean_ms - 0.1).abs() < 1e-9);
        let restarted = by_agent(
            &at_edge([1090, 1100, 1110], 0.11),
            &at_edge([5, 5, 5], 0.0),
            &[counted],
        );
        assert!(restarted.devices[0].operations.is_empty());
        assert!(restarted.traced_by.unwrap().contains("the agent restarted"));
    }
}
