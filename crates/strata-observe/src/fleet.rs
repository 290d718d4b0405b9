//! A fleet's layers over a past window, from what a Prometheus server
//! scraped of its agents: at each step of a range query, every host's
//! devices and CPU as `device@HOST` and `cpu@HOST` samples with rates since
//! the step before, the samples `strata observe --agent` records live, and
//! a strata agent's database counters (`postgres@HOST`, `mariadb@HOST`)
//! where it watches one. A host is counted once: when two targets name the
//! same host (its strata agent and its node_exporter), the strata agent's
//! figures are kept.
//!
//! Not for: the query itself (strata-agent's `query`) or reporting
//! (strata-report, which takes the samples as they are made).

use crate::sampler::{LayerSample, Rates, Sample};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use strata_agent::collector::{followed_disks, host_layer, Layer};
use strata_agent::endpoint::Endpoint;
use strata_agent::host::{served_layers, Dialect, HostCounters};
use strata_agent::query::{query_range_blocking, Range, RangeSeries, Steps, FLEET_SELECTOR};
use strata_agent::scrape::Scrape;
use strata_core::metrics::Collected;
use strata_recording::names::layer;
use strata_recording::{Header, Kind, Recording, Written};

/// How long Prometheus may take to answer the range query.
const QUERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// What a window's samples are made of.
#[derive(Debug, Default)]
pub struct Fleet {
    /// Each host and the target its figures come from.
    pub hosts: BTreeMap<String, FleetHost>,
    /// The targets that were not counted, and why.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FleetHost {
    /// `job/instance`, as Prometheus scraped it.
    pub target: String,
    pub agent_kind: String,
    /// Steps at which the target had no values.
    pub missing_steps: usize,
}

/// A fleet Recording's environment: the Prometheus server it came from
/// and each host's target.
#[derive(Serialize)]
struct FleetEnvironment<'a> {
    source: &'static str,
    prometheus: String,
    transport: String,
    hosts: Vec<ScrapedHost<'a>>,
}

#[derive(Serialize)]
struct ScrapedHost<'a> {
    host: &'a str,
    target: &'a str,
    agent_kind: &'a str,
}

/// Every series the fleet's layers are made of over `range`, as the
/// Prometheus server at `prometheus` recorded them.
pub fn query(prometheus: &Endpoint, range: Range) -> anyhow::Result<Vec<RangeSeries>> {
    query_range_blocking(prometheus, FLEET_SELECTOR, range, QUERY_TIMEOUT)
}

/// An observe Recording's header for the fleet's samples (the samples
/// themselves go to their reader as they are made, [`fleet`]); an error
/// when no host was found.
pub fn recording(
    prometheus: &Endpoint,
    range: Range,
    fleet: &Fleet,
    command: Vec<String>,
) -> anyhow::Result<Recording> {
    if fleet.hosts.is_empty() {
        anyhow::bail!(
            "--prometheus {prometheus}: Prometheus holds no strata agent's or node_exporter's device \
             and CPU series between Unix times {:.0} and {:.0} (is it scraping them?)",
            range.start_unix_s,
            range.end_unix_s
        );
    }
    let header = Header::new(
        Kind::Observe,
        command,
        Written::default(),
        Written::of(&FleetEnvironment {
            source: "prometheus",
            prometheus: prometheus.to_string(),
            transport: prometheus.transport(),
            hosts: fleet
                .hosts
                .iter()
                .map(|(host, chosen)| ScrapedHost {
                    host,
                    target: &chosen.target,
                    agent_kind: &chosen.agent_kind,
                })
                .collect(),
        })?,
    );
    Recording::of(prometheus.to_string().into(), header, Vec::new())
}

/// The fleet in `series`, a range query's answer over `FLEET_SELECTOR`:
/// each step's sample given to `sample` as it is made (`t_s` from the
/// first step), so that no more than one step is held here.
pub fn fleet(series: &[RangeSeries], sample: &mut dyn FnMut(Sample)) -> Fleet {
    let mut fleet = Fleet::default();
    let named = host_names(Steps::of(series));
    choose_hosts(&named, &mut fleet);
    let mut first_unix_s = None;
    let mut rates = Rates::default();
    let mut previous_unix_s: Option<f64> = None;
    for (unix_s, scrapes) in Steps::of(series) {
        let first_unix_s = *first_unix_s.get_or_insert(unix_s);
        let interval_s = previous_unix_s.map_or(0.0, |previous| unix_s - previous);
        previous_unix_s = Some(unix_s);
        let by_target: HashMap<&str, &Scrape> = scrapes
            .iter()
            .map(|scrape| (scrape.url.as_str(), scrape))
            .collect();
        let mut layers = BTreeMap::new();
        for (host, chosen) in fleet.hosts.iter_mut() {
            let scrape = by_target.get(chosen.target.as_str()).copied();
            let counters = scrape.and_then(|scrape| HostCounters::of(scrape, &chosen.target));
            let Some(counters) = counters else {
                chosen.missing_steps += 1;
                for (layer, failed) in missing_layers(host, unix_s) {
                    rates.forget(&layer);
                    layers.insert(layer, failed);
                }
                continue;
            };
            let mut host_layers = host_layers(&counters);
            let served = scrape.map(served_layers).unwrap_or_default();
            host_layers.extend(
                served
                    .into_iter()
                    .map(|(name, metrics)| (name, Collected::Metrics { metrics })),
            );
            for (name, collected) in host_layers {
                let layer = format!("{name}@{host}");
                let sample = rates.sample(&layer, Ok(collected), interval_s);
                layers.insert(layer, sample);
            }
        }
        sample(Sample {
            t_s: unix_s - first_unix_s,
            unix_s,
            interval_s,
            layers,
        });
    }
    fleet
}

/// Each target's host name and agent, from the first step it answered.
fn host_names(steps: Steps) -> BTreeMap<String, (String, Dialect)> {
    let mut named = BTreeMap::new();
    let targets = steps.targets().len();
    for (_, scrapes) in steps {
        for scrape in scrapes {
            name(scrape, &mut named);
        }
        if named.len() == targets {
            break;
        }
    }
    named
}

/// `scrape`'s target named by its first answer, if it has none yet.
fn name(scrape: Scrape, named: &mut BTreeMap<String, (String, Dialect)>) {
    if named.contains_key(&scrape.url) {
        return;
    }
    let instance = scrape.url.rsplit('/').next().unwrap_or_default();
    let instance_host = instance.rsplit_once(':').map_or(instance, |(host, _)| host);
    if let Some(counters) = HostCounters::of(&scrape, instance_host) {
        named.insert(scrape.url, (counters.host, counters.dialect));
    }
}

/// One target per host, a strata agent before node_exporter; the others
/// are noted.
fn choose_hosts(named: &BTreeMap<String, (String, Dialect)>, fleet: &mut Fleet) {
    let mut by_host: BTreeMap<&str, Vec<(&String, Dialect)>> = BTreeMap::new();
    for (target, (host, dialect)) in named {
        by_host.entry(host).or_default().push((target, *dialect));
    }
    for (host, mut targets) in by_host {
        targets.sort_by_key(|(target, dialect)| (*dialect != Dialect::Strata, target.to_string()));
        let (target, dialect) = targets[0];
        for (other, _) in &targets[1..] {
            fleet.notes.push(format!(
                "{other} also answers for host {host}: its figures are not counted again \
                 (those of {target} are)"
            ));
        }
        fleet.hosts.insert(
            host.to_string(),
            FleetHost {
                target: target.clone(),
                agent_kind: dialect.name().to_string(),
                missing_steps: 0,
            },
        );
    }
}

/// A host's devices and CPU at one step, in the names of strata's own
/// layers.
fn host_layers(counters: &HostCounters) -> Vec<(&'static str, Collected)> {
    let disks = followed_disks(counters);
    vec![
        (layer::DEVICE, host_layer(counters, Layer::Devices, &disks)),
        (layer::CPU, host_layer(counters, Layer::Cpu, &[])),
    ]
}

/// The layers of a host Prometheus had nothing of at one step, failed,
/// with why.
fn missing_layers(host: &str, unix_s: f64) -> Vec<(String, LayerSample)> {
    [layer::DEVICE, layer::CPU, layer::POSTGRES, layer::MARIADB]
        .into_iter()
        .map(|name| {
            let error =
                format!("Prometheus holds no sample of host {host} at Unix time {unix_s:.3}");
            (format!("{name}@{host}"), LayerSample::Failed { error })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, labels: &[(&str, &str)], points: &[(f64, f64)]) -> RangeSeries {
        let mut all: BTreeMap<String, String> = labels
            .iter()
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect();
        all.insert("__name__".into(), name.into());
        RangeSeries {
            labels: all,
            points: points.to_vec(),
        }
    }

    /// The fleet in `answer`, and its samples.
    fn sampled(answer: &[RangeSeries]) -> (Fleet, Vec<Sample>) {
        let mut samples = Vec::new();
        let fleet = fleet(answer, &mut |sample| samples.push(sample));
        (fleet, samples)
    }

    /// The series a disk must have beside its read requests.
    fn other_disk_series(dialect: Dialect) -> Vec<String> {
        strata_agent::host::required_device_series(dialect)
            .into_iter()
            .filter(|name| {
                !name.ends_with("read_requests_total") && !name.ends_with("reads_completed_total")
            })
            .collect()
    }

    #[test]
    fn each_host_once_with_rates_and_a_named_gap() {
        let strata = [("job", "strata"), ("instance", "db1:9477"), ("host", "db1")];
        let node = [("job", "node"), ("instance", "db1:9100")];
        let mut answer = vec![
            series(
                "strata_sample_time_seconds",
                &strata,
                &[(10.0, 1.0), (12.0, 1.0), (14.0, 1.0)],
            ),
            series(
                "strata_device_read_requests_total",
                &[strata.as_slice(), &[("device", "vda"), ("kind", "disk")]].concat(),
                &[(10.0, 100.0), (12.0, 300.0), (14.0, 700.0)],
            ),
            series(
                "node_uname_info",
                &[node.as_slice(), &[("nodename", "db1")]].concat(),
                &[(10.0, 1.0)],
            ),
            series(
                "node_disk_reads_completed_total",
                &[node.as_slice(), &[("device", "vda")]].concat(),
                &[(10.0, 5.0)],
            ),
            series(
                "node_disk_reads_completed_total",
                &[("job", "node"), ("instance", "db2:9100"), ("device", "sdb")],
                &[(10.0, 0.0), (14.0, 80.0)],
            ),
        ];
        let vda = [strata.as_slice(), &[("device", "vda"), ("kind", "disk")]].concat();
        let sdb = [("job", "node"), ("instance", "db2:9100"), ("device", "sdb")];
        for (dialect, labels, times) in [
            (Dialect::Strata, &vda[..], &[10.0, 12.0, 14.0][..]),
            (Dialect::NodeExporter, &sdb[..], &[10.0, 14.0][..]),
        ] {
            let points: Vec<(f64, f64)> = times.iter().map(|time| (*time, 0.0)).collect();
            for name in other_disk_series(dialect) {
                answer.push(series(&name, labels, &points));
            }
        }
        let (fleet, samples) = sampled(&answer);
        assert_eq!(fleet.hosts.len(), 2, "{:?}", fleet.hosts);
        assert_eq!(fleet.hosts["db1"].target, "strata/db1:9477");
        assert!(
            fleet.notes[0].contains("node/db1:9100"),
            "{:?}",
            fleet.notes
        );
        assert_eq!(samples.len(), 3);
        let rate = |sample: &Sample, layer: &str| match &sample.layers[layer] {
            LayerSample::Values { rates, .. } => rates
                .iter()
                .find(|(key, _)| key.starts_with("read_requests{"))
                .map(|(_, rate)| *rate),
            _ => None,
        };
        assert_eq!(rate(&samples[1], "device@db1"), Some(100.0));
        assert_eq!(rate(&samples[2], "device@db1"), Some(200.0));
        assert!(matches!(
            &samples[1].layers["device@db2"],
            LayerSample::Failed { error } if error.contains("db2")
        ));
        assert_eq!(
            rate(&samples[2], "device@db2"),
            None,
            "no rate across a gap"
        );
        assert_eq!(fleet.hosts["db2"].missing_steps, 1);
        assert_eq!(samples[2].t_s, 4.0);
    }

    #[test]
    fn a_strata_agent_s_database_counters_come_back_in_the_layer_s_names() {
        let strata = [("job", "strata"), ("instance", "db1:9477"), ("host", "db1")];
        let answer = vec![
            series(
                "strata_sample_time_seconds",
                &strata,
                &[(10.0, 1.0), (11.0, 1.0)],
            ),
            series(
                "strata_postgres_database_blks_read_total",
                &strata,
                &[(10.0, 100.0), (11.0, 350.0)],
            ),
            series(
                "strata_postgres_database_blk_read_time_seconds_total",
                &strata,
                &[(10.0, 1.0), (11.0, 1.5)],
            ),
        ];
        let (_, samples) = sampled(&answer);
        let LayerSample::Values { metrics, rates, .. } = &samples[1].layers["postgres@db1"] else {
            panic!("{:?}", samples[1].layers);
        };
        assert_eq!(rates["database_blks_read{}"], 250.0);
        assert_eq!(rates["database_blk_read_time_ms{}"], 500.0);
        assert!(metrics.iter().all(|metric| metric.labels.is_empty()));
    }
}
