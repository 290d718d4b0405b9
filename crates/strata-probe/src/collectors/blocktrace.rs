//! The `blocktrace` layer: the block tracer's requests per device and
//! operation, as counters (requests, device and queue time) and, over each
//! interval, gauges of the device time's p50, p99 and max: iostat's mean
//! `r_await` with the tail beside it, second by second.
//!
//! Not for: tracing (`crate::blocktrace`), or Prometheus histograms
//! (`strata-observe`'s exposition of the tracer's buckets).

use crate::blocktrace::{shared, Kind, TraceSnapshot};
use crate::diskstats::read_diskstats;
use std::collections::BTreeMap;
use strata_core::log_linear::doubling_us;
use strata_core::metrics::{Collected, Collector, Metric};
use strata_recording::names::blocktrace::{
    DEVICE_MAX_NS, DEVICE_P50_NS, DEVICE_P99_NS, DEVICE_TIME_REQUESTS, REQUESTS, UNDER_US,
};

/// Layer `blocktrace`: per device (label `device`) and operation (`op`),
/// counters `requests`, `device_time_ns`, `queue_time_ns`, and
/// `device_time_requests` per doubling bucket of device time (label
/// `under_us`: 1, 2, 4, … µs, biolatency's; each bucket its own count, not
/// cumulative: a histogram that adds exactly across intervals and hosts);
/// gauges `device_p50_ns`, `device_p99_ns`, `device_max_ns` over the
/// interval since the last collection (absent when no request ended in
/// it); and counters `outliers` and `unfollowed_requests` (label
/// `reason`). Absent, with the reason, where tracing cannot run.
#[derive(Default)]
pub struct BlockTraceCollector {
    last: Option<TraceSnapshot>,
}

impl BlockTraceCollector {
    /// Starts the process's tracer, when it can.
    pub fn new() -> BlockTraceCollector {
        let _ = shared::start();
        BlockTraceCollector::default()
    }
}

impl Collector for BlockTraceCollector {
    fn layer(&self) -> &'static str {
        strata_recording::names::layer::BLOCKTRACE
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        let Some(snapshot) = shared::snapshot() else {
            return Ok(Collected::Absent {
                reason: shared::why_not_tracing(),
            });
        };
        let names: BTreeMap<(u32, u32), String> = read_diskstats()?
            .into_iter()
            .map(|disk| ((disk.major, disk.minor), disk.name))
            .collect();
        let recent_times = self
            .last
            .as_ref()
            .map(|last| snapshot.since(last).by_device(Kind::Device))
            .unwrap_or_default();
        let queue_times = snapshot.by_device(Kind::Queue);
        let mut metrics = Vec::new();
        for ((device, op), device_time) in snapshot.by_device(Kind::Device) {
            let Some(name) = names.get(&device) else {
                continue;
            };
            let labelled = |metric: Metric| {
                metric
                    .with_label("device", name)
                    .with_label("op", op.name())
            };
            metrics.push(labelled(Metric::counter(
                REQUESTS,
                device_time.requests as f64,
            )));
            metrics.push(labelled(Metric::counter(
                "device_time_ns",
                device_time.sum as f64,
            )));
            let counts = device_time.counts.iter().map(|(b, count)| (*b, *count));
            for (under_us, requests) in doubling_us(counts) {
                metrics.push(labelled(
                    Metric::counter(DEVICE_TIME_REQUESTS, requests as f64)
                        .with_label(UNDER_US, &under_us.to_string()),
                ));
            }
            if let Some(queue_time) = queue_times.get(&(device, op)) {
                metrics.push(labelled(Metric::counter(
                    "queue_time_ns",
                    queue_time.sum as f64,
                )));
            }
            let recent = recent_times.get(&(device, op));
            if let Some(recent) = recent.filter(|recent| recent.count() > 0) {
                let quantiles = [(DEVICE_P50_NS, 0.5), (DEVICE_P99_NS, 0.99)];
                for (metric, quantile) in quantiles {
                    if let Some(value) = recent.quantile(quantile) {
                        metrics.push(labelled(Metric::gauge(metric, value)));
                    }
                }
                if let Some(max) = recent.max() {
                    metrics.push(labelled(Metric::gauge(DEVICE_MAX_NS, max as f64)));
                }
            }
        }
        metrics.push(Metric::counter("outliers", snapshot.outliers_seen as f64));
        let unfollowed = &snapshot.unfollowed;
        for (reason, count) in [
            ("ended_unseen", unfollowed.ended_unseen),
            ("starts_dropped", unfollowed.starts_dropped),
            ("ends_skipped_by_kernel", unfollowed.skipped_by_kernel[2]),
            ("ends_missed", snapshot.ends_missed_in_all()),
        ] {
            metrics.push(
                Metric::counter("unfollowed_requests", count as f64).with_label("reason", reason),
            );
        }
        self.last = Some(snapshot);
        Ok(Collected::Metrics { metrics })
    }
}
