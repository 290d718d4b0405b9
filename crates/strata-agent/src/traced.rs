//! The requests a strata agent traced on its host, as it serves them at
//! `/blocktrace` beside its `/metrics`: everything its tracer counted
//! since it started (by device, operation and role, each process's
//! totals, the outliers) and its /proc/diskstats read right after, placed
//! on this machine's CLOCK_MONOTONIC, so that two answers give a window's
//! figures as this host's own tracer would.
//!
//! Not for: serving it (strata-observe), or the fleet's histograms at
//! `/metrics` (Prometheus's `histogram_quantile`).

use crate::endpoint::Endpoint;
use anyhow::Context;
use std::time::Duration;
use strata_probe::blocktrace::served::{ServedTrace, PATH};

/// The most an answer may be: a host with thousands of processes and
/// outliers stays far below it.
const MOST_BYTES: usize = 64 << 20;

/// One answer of an agent's tracer.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentTrace {
    /// What it served, on this machine's CLOCK_MONOTONIC.
    pub served: ServedTrace,
    /// How far off the agent's clock may be placed on this one, seconds:
    /// half the round trip less the agent's own time.
    pub placed_within_s: f64,
}

/// The agent's tracer now, from the `/blocktrace` beside `agent`'s
/// `/metrics`, giving up after `timeout`.
pub async fn fetch(agent: &Endpoint, timeout: Duration) -> anyhow::Result<AgentTrace> {
    let endpoint = agent.beside(PATH)?;
    let answer = tokio::time::timeout(timeout, endpoint.get(MOST_BYTES))
        .await
        .with_context(|| format!("{endpoint}: no answer in {timeout:?}"))?
        .with_context(|| format!("asking {endpoint}"))?;
    // The exchange was timed on the wall clock; its two moments are
    // placed on CLOCK_MONOTONIC from one reading of both.
    let (now_ns, now_unix_s) = (
        strata_probe::blocktrace::monotonic_ns(),
        strata_core::time::unix_now_s(),
    );
    let monotonic =
        |unix_s: f64| now_ns.saturating_sub(((now_unix_s - unix_s).max(0.0) * 1e9) as u64);
    let exchange = (
        monotonic(answer.sent_unix_s),
        monotonic(answer.came_back_unix_s),
    );
    let served = ServedTrace::from_json(&answer.body).map_err(anyhow::Error::msg)?;
    let (served, within_ns) = served.on_this_clock(exchange);
    Ok(AgentTrace {
        served,
        placed_within_s: within_ns as f64 / 1e9,
    })
}
