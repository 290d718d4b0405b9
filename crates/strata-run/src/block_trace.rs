//! The run's block tracer read at the window's edges: each run device's
//! requests traced one by one ([`strata_probe::blocktrace::shared`]), or,
//! for a server on another host, as that host's strata agent traced and
//! served them.
//!
//! Not for: the tracing itself, or printing the figures (`output`).

use crate::edge::{AgentBlockTrace, Edge};
use std::collections::BTreeMap;
use strata_probe::blocktrace::served::ServedTrace;
use strata_probe::blocktrace::TraceSnapshot;
use strata_probe::diskstats::{find, DeviceDelta};
use strata_recording::device::IostatFigures;
use strata_recording::run::{BlockTraceFigures, StatementOutlier};
use strata_slob::session::RunOutcome;

pub use strata_probe::blocktrace::shared::{
    decline, forget_roles, name_roles, refuse_outlier_threshold, set_outlier_threshold_ms,
    snapshot, start, with_diskstats, ThreadRole,
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
    // A server host's agent's clock is placed on this one to within half
    // the round trip.
    let origin = match &start.agent_block_trace {
        Some(agent) => agent.trace.as_ref().ok().map(|traced| {
            let trace_origin_ns = traced.served.trace.taken_ns;
            (trace_origin_ns, traced.placed_within_s)
        }),
        None => start
            .block_trace
            .as_ref()
            .map(|trace| (trace.taken_ns, 0.0)),
    };
    let Some((trace_origin_ns, placed_within_s)) = origin else {
        return;
    };
    let slack_s = SPAN_SLACK_S + placed_within_s;
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
                statement.at_s - statement.latency_ms / 1e3 <= started_s + slack_s
                    && ended_s <= statement.at_s + slack_s
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

/// The window's requests as the server host's agent traced them, from
/// its `/blocktrace` at the two edges: the figures this host's tracer
/// would give, beside the agent's /proc/diskstats read right after its
/// tracer's counts.
fn by_agent(
    before: &AgentBlockTrace,
    after: &AgentBlockTrace,
    devices: &[IostatFigures],
) -> BlockTraceFigures {
    let host = &after.host;
    let (earlier, later) = match (&before.trace, &after.trace) {
        (Ok(earlier), Ok(later)) => (earlier, later),
        (Err(why), _) | (_, Err(why)) => {
            return unavailable(format!("the server's host {host}: {why}"))
        }
    };
    let (then, now) = (&earlier.served, &later.served);
    if let Some(why) = now.unavailable.as_ref().or(then.unavailable.as_ref()) {
        return unavailable(format!(
            "the server's host {host} does not trace its requests one by one: {why}"
        ));
    }
    if went_down(&then.trace, &now.trace) {
        return unavailable(format!(
            "the tracer of the server's host {host} counted fewer requests at the window's end \
             than at its start: its agent restarted"
        ));
    }
    let seconds = now.trace.taken_ns.saturating_sub(then.trace.taken_ns) as f64 / 1e9;
    let mut left_out = Vec::new();
    let counted: Vec<IostatFigures> = devices
        .iter()
        .filter_map(|device| {
            let of = |served: &ServedTrace| find(&served.disks, &device.device).cloned();
            let Some((start, end)) = of(then).zip(of(now)) else {
                left_out.push(format!("{}: not in its /proc/diskstats", device.device));
                return None;
            };
            DeviceDelta::between(&start, &end, seconds)
                .map(|delta| delta.figures(&device.role))
                .map_err(|why| left_out.push(why))
                .ok()
        })
        .collect();
    let mut figures = strata_probe::blocktrace::shared::figures(
        (Some(&then.trace), Some(&now.trace)),
        &now.disks,
        &counted,
    );
    let mut note = format!(
        "traced on the server's host {host} by its strata agent (its /blocktrace), read at the \
         window's edges with its /proc/diskstats read right after its tracer's counts (the \
         diskstats counts beside the traced ones); its clock placed on this one to within \
         {:.1} ms",
        earlier.placed_within_s.max(later.placed_within_s) * 1e3
    );
    match &now.roles_unnamed {
        Some(why) => note += &format!("; no roles: {why}"),
        None => note += "; roles from its PostgreSQL processes' titles",
    }
    if !left_out.is_empty() {
        note += &format!("; left out: {}", left_out.join("; "));
    }
    figures.traced_by = Some(note);
    figures
}

/// Whether a series counted fewer requests in `later` than in `earlier`:
/// a tracer started again between them.
fn went_down(earlier: &TraceSnapshot, later: &TraceSnapshot) -> bool {
    earlier.series.iter().any(|(key, then)| {
        later
            .series
            .get(key)
            .is_none_or(|now| now.count() < then.count())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_agent::traced::AgentTrace;
    use strata_probe::blocktrace::{Buckets, Kind, Op, SeriesKey};
    use strata_probe::diskstats::DiskStat;

    fn at_edge(requests: u64, taken_ns: u64) -> AgentBlockTrace {
        let key = SeriesKey {
            major: 253,
            minor: 0,
            op: Op::Read,
            kind: Kind::Device,
            role: 0,
        };
        let mut trace = TraceSnapshot {
            taken_ns,
            ..TraceSnapshot::default()
        };
        for kind in [Kind::Device, Kind::Total] {
            let mut buckets = Buckets::default();
            buckets.counts.insert(300, requests);
            buckets.requests = requests;
            buckets.sum = requests * 100_000;
            trace.series.insert(SeriesKey { kind, ..key }, buckets);
        }
        let disk = DiskStat {
            major: 253,
            minor: 0,
            name: "vda".into(),
            read_requests: requests + 5,
            ..DiskStat::default()
        };
        AgentBlockTrace {
            host: "db1".into(),
            trace: Ok(AgentTrace {
                served: ServedTrace {
                    trace,
                    disks: vec![disk],
                    ..ServedTrace::default()
                },
                placed_within_s: 0.001,
            }),
        }
    }

    #[test]
    fn an_agents_window_is_its_snapshots_difference_beside_its_own_diskstats() {
        let device = IostatFigures {
            device: "vda".into(),
            role: "data".into(),
            read_requests: 990,
            ..IostatFigures::default()
        };
        let devices = std::slice::from_ref(&device);
        let figures = by_agent(
            &at_edge(100, 1_000),
            &at_edge(1_100, 2_000_001_000),
            devices,
        );
        let note = figures.traced_by.unwrap();
        assert!(
            note.contains("db1") && note.contains("within 1.0 ms"),
            "{note}"
        );
        let read = &figures.devices[0].operations[0];
        assert_eq!((read.requests, read.diskstats_requests), (1000, Some(1000)));
        let restarted = by_agent(&at_edge(1_100, 1_000), &at_edge(5, 2_000_001_000), devices);
        assert!(restarted
            .unavailable
            .unwrap()
            .contains("its agent restarted"));
        let mut untraced = at_edge(5, 2_000_001_000);
        untraced.trace = Err("no answer in 5s".into());
        let unread = by_agent(&at_edge(1_100, 1_000), &untraced, devices);
        assert!(unread.unavailable.unwrap().contains("no answer in 5s"));
    }
}
