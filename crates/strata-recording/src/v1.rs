//! Version 1 Recordings, read into version 2's records so that every
//! Recording already written still reports. Version 1 tagged records
//! `sample`, `event`, `result` and `summary` and said more in a second tag
//! (`layer`, `event`); each layer of a moment was its own line; a run's
//! result held the engine's own figures beside the shared ones; figures
//! added while version 1 was current are absent from older files.
//!
//! Not for: version 2 (`read`), which needs none of this.

use crate::calibrate::{OutlierRecord, PointResult, SecondSample, Summary};
use crate::device::IostatFigures;
use crate::format::{Header, Kind, FORMAT_VERSION};
use crate::layers::{LayerSample, Sample};
use crate::parse::{field_error, parse_line, Line};
use crate::record::{
    GroupHistogramsEncoded, IoOutlier, PointRecord, PointSecond, Record, RunHistograms, RunResult,
    Stopped, WindowDatabase, WindowDevice,
};
use crate::run::{LoadReport, RunFigures, SecondCounts, StatementOutlier};
use anyhow::{bail, Context};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum V1Record {
    Sample(V1Sample),
    Event(V1Event),
    Result(Box<V1Result>),
    Summary(Summary),
}

/// A v1 `sample`: a layer of a moment (`data`), or a run's or point's
/// `workload` second, `window_device` or `window_database` (`sample`,
/// `counters`).
#[derive(Deserialize)]
struct V1Sample {
    layer: String,
    point: Option<String>,
    t_s: Option<f64>,
    unix_s: Option<f64>,
    interval_s: Option<f64>,
    data: Option<LayerSample>,
    sample: Option<serde_json::Value>,
    counters: Option<BTreeMap<String, f64>>,
}

#[derive(Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum V1Event {
    Load {
        load: LoadReport,
    },
    StatementOutlier {
        outlier: StatementOutlier,
    },
    IoOutlier {
        point: String,
        outlier: OutlierRecord,
    },
    Stopped {
        phase: String,
        reason: String,
    },
}

#[derive(Deserialize)]
struct V1Result {
    /// A run's figures, with the engine's own beside them.
    result: Option<serde_json::Map<String, serde_json::Value>>,
    /// A calibrate point.
    point: Option<PointResult>,
    histograms: serde_json::Value,
}

/// The header and records of a version 1 file, as version 2 holds them.
pub(crate) fn upgrade(
    first: &str,
    numbered: &[(usize, String)],
) -> anyhow::Result<(Header, Vec<Line>)> {
    let mut header: Header = serde_json::from_str(first)
        .map_err(field_error)
        .context("line 1 (the header)")?;
    header.version = FORMAT_VERSION;
    let mut lines: Vec<Line> = Vec::new();
    for (number, text) in numbered {
        let at = || format!("line {number}");
        let record: V1Record = parse_line(text).with_context(at)?;
        if let Some(record) = upgrade_record(header.kind, record, &mut lines).with_context(at)? {
            lines.push(Line {
                number: *number,
                record,
            });
        }
    }
    Ok((header, lines))
}

/// The record a v1 record becomes; `None` when it joined the previous
/// line's moment (another layer of the same sample).
fn upgrade_record(
    kind: Kind,
    record: V1Record,
    lines: &mut [Line],
) -> anyhow::Result<Option<Record>> {
    Ok(Some(match record {
        V1Record::Sample(sample) => return upgrade_sample(sample, lines),
        V1Record::Event(V1Event::Load { load }) => Record::Load(load),
        V1Record::Event(V1Event::StatementOutlier { outlier }) => Record::StatementOutlier(outlier),
        V1Record::Event(V1Event::IoOutlier { point, outlier }) => {
            Record::IoOutlier(IoOutlier { point, outlier })
        }
        V1Record::Event(V1Event::Stopped { phase, reason }) => {
            Record::Stopped(Stopped { phase, reason })
        }
        V1Record::Result(result) => upgrade_result(kind, *result)?,
        V1Record::Summary(summary) => Record::Summary(summary),
    }))
}

fn upgrade_sample(sample: V1Sample, lines: &mut [Line]) -> anyhow::Result<Option<Record>> {
    let body = || sample.sample.clone().context("missing field `sample`");
    let record = match (sample.layer.as_str(), sample.point) {
        ("workload", Some(point)) => Record::PointSecond(PointSecond {
            point,
            second: SecondSample::deserialize(body()?).map_err(field_error)?,
        }),
        ("workload", None) => {
            Record::RunSecond(SecondCounts::deserialize(body()?).map_err(field_error)?)
        }
        ("window_device", point) => Record::WindowDevice(WindowDevice {
            point,
            interval_s: sample.interval_s.context("missing field `interval_s`")?,
            device: IostatFigures::deserialize(body()?).map_err(field_error)?,
        }),
        ("window_database", _) => Record::WindowDatabase(WindowDatabase {
            interval_s: sample.interval_s.context("missing field `interval_s`")?,
            counters: sample.counters.context("missing field `counters`")?,
        }),
        (layer, _) => {
            let t_s = sample.t_s.context("missing field `t_s`")?;
            let data = sample.data.context("missing field `data`")?;
            if let Some(Record::Layers(moment)) = lines.last_mut().map(|line| &mut line.record) {
                if moment.t_s == t_s {
                    moment.layers.insert(layer.to_string(), data);
                    return Ok(None);
                }
            }
            Record::Layers(Sample {
                t_s,
                unix_s: sample.unix_s.context("missing field `unix_s`")?,
                interval_s: sample.interval_s.context("missing field `interval_s`")?,
                layers: BTreeMap::from([(layer.to_string(), data)]),
            })
        }
    };
    Ok(Some(record))
}

/// The engine's own figures a v1 run result held beside the shared ones.
const ENGINE_FIELDS: [&str; 2] = ["innodb", "reads"];

fn upgrade_result(kind: Kind, result: V1Result) -> anyhow::Result<Record> {
    match (kind, result.result, result.point) {
        (Kind::Run, Some(mut figures), _) => {
            let engine: serde_json::Map<String, serde_json::Value> = ENGINE_FIELDS
                .iter()
                .filter_map(|field| Some((field.to_string(), figures.remove(*field)?)))
                .collect();
            let figures = RunFigures::deserialize(serde_json::Value::Object(figures))
                .map_err(field_error)
                .context("the run's `result`")?;
            Ok(Record::RunResult(RunResult {
                figures,
                engine_figures: (!engine.is_empty()).then_some(serde_json::Value::Object(engine)),
                histograms: RunHistograms::deserialize(result.histograms).map_err(field_error)?,
            }))
        }
        (Kind::Calibrate, _, Some(point)) => Ok(Record::PointResult(PointRecord {
            point,
            histograms: BTreeMap::<String, GroupHistogramsEncoded>::deserialize(result.histograms)
                .map_err(field_error)?,
        })),
        (kind, _, _) => bail!("a `result` record that a `strata {kind}` Recording cannot hold"),
    }
}
