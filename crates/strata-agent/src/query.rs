//! A Prometheus server's HTTP query API (`/api/v1/query_range`) for what it
//! scraped of a fleet's agents over a past window: each series' raw values
//! at each step, as Prometheus holds them (its own clock, its lookback),
//! and those values regrouped into one [`Scrape`] per agent per step, so
//! that `host` reads a step of Prometheus's record as it reads a live
//! scrape.
//!
//! Not for: PromQL of its own (strata takes no rates in Prometheus: the
//! raw counters give the window's exact totals), or what the series mean
//! (`host`).

use crate::endpoint::Endpoint;
use crate::scrape::Scrape;
use crate::text::Series;
use anyhow::{bail, Context};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// The series strata reads from Prometheus: a strata agent's devices, CPU,
/// database counters and name, and node_exporter's.
pub const FLEET_SELECTOR: &str = "{__name__=~\"strata_device_.+|strata_cpu_.+|\
strata_postgres_.+_total|strata_mariadb_.+_total|\
strata_sample_time_seconds|strata_memory_oom_kills_total|node_disk_.+|node_cpu_seconds_total|\
node_procs_running|node_uname_info|node_vmstat_oom_kill\"}";

/// The most points Prometheus gives one series of a range query.
pub const MOST_POINTS: f64 = 11_000.0;

/// The most a range query's answer may be.
const MOST_ANSWER_BYTES: usize = 64 << 20;

/// A range query's window, Unix seconds on the Prometheus server's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub start_unix_s: f64,
    pub end_unix_s: f64,
    pub step_s: f64,
}

impl Range {
    /// `--from`, `--to` (a time each: RFC 3339, Unix seconds, now-15m;
    /// `--to` now by default) and `--step` (the window ÷ 720, at least
    /// 1 s, by default) as a range query Prometheus accepts.
    pub fn of_options(
        from: Option<&str>,
        to: Option<&str>,
        step: Option<Duration>,
    ) -> anyhow::Result<Range> {
        let instant = |option: &str, text: Option<&str>| {
            strata_core::input::instant(text.unwrap_or("now"))
                .map_err(|error| anyhow::anyhow!("{option}: {error}"))
        };
        let start_unix_s = instant("--from", from)?;
        let end_unix_s = instant("--to", to)?;
        let length_s = end_unix_s - start_unix_s;
        if length_s <= 0.0 {
            bail!("--from must be before --to (the window is {length_s:.3} s)");
        }
        let step_s = match step {
            Some(step) => step.as_secs_f64(),
            None => (length_s / 720.0).max(1.0),
        };
        if step_s <= 0.0 || length_s / step_s > MOST_POINTS {
            bail!(
                "--step {step_s} s: give a step above 0 that divides the {length_s:.0} s window \
             into at most {MOST_POINTS} points (Prometheus's limit)"
            );
        }
        Ok(Range {
            start_unix_s,
            end_unix_s,
            step_s,
        })
    }
}

/// One series of a range query's answer: its labels (`__name__` among
/// them) and its (Unix seconds, value) points.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeSeries {
    pub labels: BTreeMap<String, String>,
    pub points: Vec<(f64, f64)>,
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    data: Option<Matrix>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Matrix {
    #[serde(rename = "resultType")]
    result_type: String,
    result: Vec<MatrixSeries>,
}

#[derive(Deserialize)]
struct MatrixSeries {
    metric: BTreeMap<String, String>,
    values: Vec<(f64, Value)>,
}

/// A sample's value as the query API writes it, a string ("1e+06",
/// "NaN", "+Inf"), read without keeping the string.
struct Value(f64);

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        struct Text;
        impl serde::de::Visitor<'_> for Text {
            type Value = Value;
            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("a number as a string")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Value, E> {
                text.parse()
                    .map(Value)
                    .map_err(|_| E::custom(format!("value {text:?} is not a number")))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// `--prometheus` as clap parses it: a Prometheus server's
/// `http[s]://[USER[:PASSWORD]@]HOST:PORT`, with the path prefix it is
/// served under, if any.
pub fn parse_prometheus(text: &str) -> Result<Endpoint, String> {
    Endpoint::parse("--prometheus", text, "/").map_err(|error| format!("{error:#}"))
}

/// The query of `selector` over `range` on the server at `prometheus`
/// (`http://HOST:9090`, or with a path prefix Prometheus is served under).
pub fn range_endpoint(
    prometheus: &Endpoint,
    selector: &str,
    range: Range,
) -> anyhow::Result<Endpoint> {
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("query", selector)
        .append_pair("start", &format!("{:.3}", range.start_unix_s))
        .append_pair("end", &format!("{:.3}", range.end_unix_s))
        .append_pair("step", &format!("{:.3}", range.step_s))
        .finish();
    prometheus.below(&format!("/api/v1/query_range?{query}"))
}

/// Every series `selector` matches over `range`, from a synchronous caller
/// (on a runtime of its own).
pub fn query_range_blocking(
    prometheus: &Endpoint,
    selector: &str,
    range: Range,
    timeout: Duration,
) -> anyhow::Result<Vec<RangeSeries>> {
    let query = range_endpoint(prometheus, selector, range)?;
    // The timer is made on the runtime, inside the future.
    let asked = async { tokio::time::timeout(timeout, query.get(MOST_ANSWER_BYTES)).await };
    let answer = crate::scrape::on_own_runtime(asked)?
        .with_context(|| format!("--prometheus {prometheus}: no answer in {timeout:?}"))?
        .with_context(|| format!("--prometheus {prometheus}: querying {query}"))?;
    matrix(&answer.body)
        .with_context(|| format!("--prometheus {prometheus}: the answer to {query}"))
}

/// A query API answer's matrix; an answer with `status` `error` is an
/// error quoting Prometheus's.
fn matrix(body: &[u8]) -> anyhow::Result<Vec<RangeSeries>> {
    let envelope: Envelope = serde_json::from_slice(body).context("not Prometheus's JSON")?;
    if envelope.status != "success" {
        bail!(
            "Prometheus says: {}",
            envelope.error.unwrap_or(envelope.status)
        );
    }
    let matrix = envelope.data.context("no data")?;
    if matrix.result_type != "matrix" {
        bail!("a {} where a matrix was asked for", matrix.result_type);
    }
    Ok(matrix
        .result
        .into_iter()
        .map(|series| RangeSeries {
            labels: series.metric,
            points: series
                .values
                .into_iter()
                .map(|(time, Value(value))| (time, value))
                .collect(),
        })
        .collect())
}

/// The answer regrouped, one step at a time (in time order): at each, one
/// [`Scrape`] per scrape target (Prometheus's `instance` label, with its
/// `job`) that has a value then, timed at the step. A target absent at a
/// step (down, or not yet scraped) has no scrape there. Only one step's
/// scrapes are held at a time.
pub struct Steps<'a> {
    /// Each series with a name: its target, name, labels and points.
    series: Vec<StepSeries<'a>>,
    targets: Vec<String>,
    /// Where each series' next point is.
    cursors: Vec<usize>,
    /// The steps' times, ms.
    times: std::vec::IntoIter<u64>,
}

/// One series of [`Steps`]: its target's index, its name, its labels
/// (without `__name__`) and its points.
type StepSeries<'a> = (usize, &'a str, BTreeMap<String, String>, &'a [(f64, f64)]);

impl<'a> Steps<'a> {
    /// The scrape targets the answer holds, `job/instance`.
    pub fn targets(&self) -> &[String] {
        &self.targets
    }

    pub fn of(answer: &'a [RangeSeries]) -> Steps<'a> {
        let mut targets: Vec<String> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = Default::default();
        let mut series = Vec::new();
        let mut times = std::collections::BTreeSet::new();
        for one in answer {
            let Some(name) = one.labels.get("__name__") else {
                continue;
            };
            let target = target_of(&one.labels);
            let at = *index.entry(target.clone()).or_insert_with(|| {
                targets.push(target);
                targets.len() - 1
            });
            let mut labels = one.labels.clone();
            labels.remove("__name__");
            times.extend(one.points.iter().map(|(time, _)| milliseconds(*time)));
            series.push((at, name.as_str(), labels, one.points.as_slice()));
        }
        Steps {
            cursors: vec![0; series.len()],
            series,
            targets,
            times: times.into_iter().collect::<Vec<_>>().into_iter(),
        }
    }
}

impl Iterator for Steps<'_> {
    type Item = (f64, Vec<Scrape>);

    fn next(&mut self) -> Option<(f64, Vec<Scrape>)> {
        let time_ms = self.times.next()?;
        let unix_s = time_ms as f64 / 1e3;
        let mut by_target: Vec<Vec<Series>> = vec![Vec::new(); self.targets.len()];
        for ((target, name, labels, points), cursor) in self.series.iter().zip(&mut self.cursors) {
            let Some((time, value)) = points.get(*cursor) else {
                continue;
            };
            if milliseconds(*time) == time_ms {
                *cursor += 1;
                by_target[*target].push(Series {
                    name: name.to_string(),
                    labels: labels.clone(),
                    value: *value,
                });
            }
        }
        let scrapes = by_target
            .into_iter()
            .zip(&self.targets)
            .filter(|(series, _)| !series.is_empty())
            .map(|(series, target)| Scrape {
                url: target.clone(),
                sent_unix_s: unix_s,
                came_back_unix_s: unix_s,
                series,
                unread: None,
            })
            .collect();
        Some((unix_s, scrapes))
    }
}

fn milliseconds(unix_s: f64) -> u64 {
    (unix_s * 1e3).round() as u64
}

/// `job/instance`: what Prometheus scraped a series from.
fn target_of(labels: &BTreeMap<String, String>) -> String {
    let label = |key: &str| labels.get(key).map_or("", String::as_str);
    format!("{}/{}", label("job"), label("instance"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_url_encoded_under_the_server_s_prefix() {
        let range = Range {
            start_unix_s: 100.0,
            end_unix_s: 160.5,
            step_s: 1.5,
        };
        let prometheus = parse_prometheus("http://prom:9090/prefix/").unwrap();
        let query = range_endpoint(&prometheus, "{a=~\"b|c\"}", range).unwrap();
        assert_eq!(
            query.to_string(),
            "http://prom:9090/prefix/api/v1/query_range?query=%7Ba%3D%7E%22b%7Cc%22%7D\
             &start=100.000&end=160.500&step=1.500"
        );
        let bare = parse_prometheus("http://u:pw@prom:9090").unwrap();
        let query = range_endpoint(&bare, "up", range).unwrap();
        assert!(
            query
                .to_string()
                .starts_with("http://u:***@prom:9090/api/v1/query_range?query=up&"),
            "{query}"
        );
        for bad in ["prom:9090", "ftp://prom", "http://"] {
            let error = parse_prometheus(bad).unwrap_err();
            assert!(error.contains("--prometheus"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_matrix_is_regrouped_by_step_and_target_and_errors_are_quoted() {
        let body = br#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"__name__":"node_disk_reads_completed_total","device":"vda",
                       "instance":"db1:9100","job":"node"},
             "values":[[100,"5"],[101,"7"]]},
            {"metric":{"__name__":"node_procs_running","instance":"db2:9100","job":"node"},
             "values":[[101,"3"]]}]}}"#;
        let steps: Vec<(f64, Vec<Scrape>)> = Steps::of(&matrix(body).unwrap()).collect();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].0, 100.0);
        assert_eq!(steps[0].1.len(), 1);
        let at_101 = &steps[1].1;
        assert_eq!(at_101[0].url, "node/db1:9100");
        assert_eq!(at_101[0].series[0].value, 7.0);
        assert_eq!(at_101[0].series[0].label("device"), Some("vda"));
        assert_eq!(at_101[1].url, "node/db2:9100");
        assert_eq!(at_101[1].value("node_procs_running"), Some(3.0));
        let error = matrix(br#"{"status":"error","errorType":"bad_data","error":"parse error"}"#)
            .unwrap_err();
        assert!(format!("{error:#}").contains("parse error"), "{error:#}");
    }
}
