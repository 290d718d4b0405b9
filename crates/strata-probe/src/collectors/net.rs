//! The `net` layer: interface counters from `/proc/net/dev` (what `nicstat`
//! and `sar -n DEV` read) and link speed from `/sys/class/net/X/speed`.

use super::{for_each_line, parse_u64, read_if_exists};
use anyhow::{anyhow, bail};
use std::path::Path;
use strata_core::metrics::{Collected, Collector, Metric};
use strata_recording::names::{label, net};

const NET_DEV_PATH: &str = "/proc/net/dev";
const LOOPBACK: &str = "lo";
/// The 16 counters of a `/proc/net/dev` line, in order; `None` ones are not
/// reported.
const FIELDS: [Option<&str>; 16] = [
    Some(net::RECEIVE_BYTES),
    Some("receive_packets"),
    Some("receive_errors"),
    Some("receive_drops"),
    None, // fifo
    None, // frame
    None, // compressed
    None, // multicast
    Some(net::TRANSMIT_BYTES),
    Some("transmit_packets"),
    Some("transmit_errors"),
    Some("transmit_drops"),
    None, // fifo
    None, // colls
    None, // carrier
    None, // compressed
];

/// Layer `net`: per interface (label `interface`), counters
/// `receive_bytes, receive_packets, receive_errors, receive_drops,
/// transmit_bytes, transmit_packets, transmit_errors, transmit_drops`, and
/// gauge `speed_mbps` (Mb/s, 10^6 bits) when the driver reports a speed
/// above 0 (virtual NICs report -1 or nothing: then there is no
/// `speed_mbps`). `lo` is left out unless [`NetCollector::with_loopback`].
#[derive(Debug, Default)]
pub struct NetCollector {
    loopback: bool,
}

impl NetCollector {
    pub fn new() -> NetCollector {
        NetCollector { loopback: false }
    }

    /// Also report `lo`.
    pub fn with_loopback() -> NetCollector {
        NetCollector { loopback: true }
    }
}

impl Collector for NetCollector {
    fn layer(&self) -> &'static str {
        "net"
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        let Some(text) = read_if_exists(Path::new(NET_DEV_PATH))? else {
            return Ok(Collected::Absent {
                reason: format!("{NET_DEV_PATH} does not exist"),
            });
        };
        let mut metrics: Vec<Metric> = parse_net_dev(&text)?
            .into_iter()
            .filter(|metric| self.loopback || interface(metric) != Some(LOOPBACK))
            .collect();
        let mut interfaces: Vec<String> = metrics
            .iter()
            .filter_map(|metric| interface(metric).map(str::to_string))
            .collect();
        interfaces.dedup();
        for name in interfaces {
            let speed_path = Path::new("/sys/class/net").join(&name).join("speed");
            let text = std::fs::read_to_string(speed_path).ok();
            if let Some(speed) = speed_mbps(text.as_deref()) {
                metrics
                    .push(Metric::gauge("speed_mbps", speed).with_label(label::INTERFACE, &name));
            }
        }
        if metrics.is_empty() {
            return Ok(Collected::Absent {
                reason: "no network interfaces besides lo".to_string(),
            });
        }
        Ok(Collected::Metrics { metrics })
    }
}

fn interface(metric: &Metric) -> Option<&str> {
    metric.labels.get("interface").map(String::as_str)
}

/// The text of `/sys/class/net/X/speed` as Mb/s; `None` when unreadable
/// (EINVAL while the link is down or for virtual devices), unknown (-1) or 0.
fn speed_mbps(text: Option<&str>) -> Option<f64> {
    let speed: i64 = text?.trim().parse().ok()?;
    (speed > 0).then_some(speed as f64)
}

/// Parses `/proc/net/dev` (every interface, `lo` included). The two header
/// lines (with `|`) are skipped; any other line must be `NAME: ` and 16
/// counters. Errors name the line.
pub fn parse_net_dev(text: &str) -> anyhow::Result<Vec<Metric>> {
    let mut metrics = Vec::new();
    for_each_line("net/dev", text, |line| {
        if line.contains('|') {
            return Ok(());
        }
        let (name, counters) = line
            .split_once(':')
            .ok_or_else(|| anyhow!("expected \"INTERFACE: counters\""))?;
        let name = name.trim();
        if name.is_empty() {
            bail!("no interface name before ':'");
        }
        let fields: Vec<&str> = counters.split_whitespace().collect();
        if fields.len() != FIELDS.len() {
            bail!(
                "{name} has {} counters, expected {}",
                fields.len(),
                FIELDS.len()
            );
        }
        for (field, metric_name) in fields.iter().zip(FIELDS) {
            let value = parse_u64(field, &format!("{name} counter"))?;
            if let Some(metric_name) = metric_name {
                metrics.push(
                    Metric::counter(metric_name, value as f64).with_label(label::INTERFACE, name),
                );
            }
        }
        Ok(())
    })?;
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speed_is_kept_only_when_positive() {
        assert_eq!(speed_mbps(Some("10000\n")), Some(10000.0));
        assert_eq!(speed_mbps(Some("-1\n")), None);
        assert_eq!(speed_mbps(Some("0\n")), None);
        assert_eq!(speed_mbps(Some("")), None);
        assert_eq!(speed_mbps(None), None);
    }
}
