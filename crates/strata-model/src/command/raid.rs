//! `strata model raid`: the back-end IOPS per disk of each front-end load
//! on each set size, against a per-disk ceiling; or, with `min_disks`, the
//! fewest disks that keep each one under it. The front-end load is the one
//! given, else the one measured at the device layer.
//!
//! Not for: the RAID arithmetic itself ([`crate::raid`]) or reading the
//! measured load (strata-awr's `measured`).

use super::Page;
use crate::raid::{self, RaidLevel, RaidLoad};
use anyhow::Context;
use serde::Serialize;
use std::time::Duration;
use strata_output::document::{Cell, Column, Figure};
use strata_output::Output;

/// The per-disk ceiling when neither one nor a service time is given.
const DEFAULT_CEILING_IOPS: f64 = 150.0;

/// What `strata model raid` was asked.
#[derive(Debug, Clone, Default)]
pub struct RaidRequest {
    /// Front-end IOPS, one or a range; `None` takes the measured load's.
    pub iops: Option<Vec<f64>>,
    /// Percentage of front-end I/Os that are reads; `None`: measured.
    pub read_pct: Option<f64>,
    /// The load measured at the device layer, when it was read.
    pub measured: Option<MeasuredLoad>,
    pub raid: Option<RaidLevel>,
    /// Back-end I/Os per front-end write, instead of `raid`.
    pub write_penalty: Option<f64>,
    /// Disks in the set, one row per count.
    pub disks: Vec<u32>,
    /// Per-disk ceiling in IOPS; else 1 / `service_time`; else 150.
    pub ceiling: Option<f64>,
    pub service_time: Option<Duration>,
    /// Print the fewest disks under the ceiling instead of the load.
    pub min_disks: bool,
    pub explain: bool,
}

/// Front-end requests/s and the read share of the devices a host sees.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredLoad {
    pub devices: Vec<String>,
    pub iops: f64,
    pub read_pct: f64,
}

#[derive(Serialize)]
struct RaidRow {
    #[serde(flatten)]
    load: RaidLoad,
    ceiling_iops_per_disk: f64,
    over_ceiling: bool,
}

#[derive(Serialize)]
struct MinDisksRow {
    front_end_iops: f64,
    min_disks: u32,
}

/// The resolved inputs every row shares.
struct Shape {
    penalty: f64,
    ceiling: f64,
    read_fraction: f64,
}

/// Runs `strata model raid`.
pub fn run(request: &RaidRequest) -> anyhow::Result<Output> {
    let penalty = request
        .write_penalty
        .or(request.raid.map(RaidLevel::write_penalty))
        .context("give --raid or --write-penalty")?;
    let ceiling = match (request.ceiling, request.service_time) {
        (Some(ceiling), _) => ceiling,
        (None, Some(time)) => raid::ceiling_from_service_time(time.as_secs_f64())?,
        (None, None) => DEFAULT_CEILING_IOPS,
    };
    let measured = request.measured.as_ref();
    let front_end = request
        .iops
        .clone()
        .or(measured.map(|load| vec![load.iops]))
        .context("--iops: give the front-end IOPS")?;
    let read_pct = request
        .read_pct
        .or(measured.map(|load| load.read_pct))
        .context("--read-pct: give the read percentage")?;
    anyhow::ensure!(!front_end.is_empty(), "--iops: give the front-end IOPS");
    if let (Some(level), false) = (request.raid, request.min_disks) {
        for &disks in &request.disks {
            level.check_disks(disks)?;
        }
    }
    let shape = Shape {
        penalty,
        ceiling,
        read_fraction: read_pct / 100.0,
    };
    if request.min_disks {
        min_disks(request, &front_end, &shape)
    } else {
        back_end(request, &front_end, &shape)
    }
}

/// A page with the measured load, when there is one, first.
fn page(request: &RaidRequest, title: &str, columns: Vec<Column>) -> Page {
    let mut page = Page::new(title, columns);
    if let Some(load) = &request.measured {
        page.note(format!(
            "measured (device layer, {}): {:.0} requests/s, {:.1}% reads",
            load.devices.join(", "),
            load.iops,
            load.read_pct
        ));
        page.figure(Figure::new(
            "requests_per_s",
            load.iops,
            "requests/s",
            "device",
        ));
        page.figure(Figure::new("read_percent", load.read_pct, "%", "device"));
    }
    page
}

fn back_end(request: &RaidRequest, front_end: &[f64], shape: &Shape) -> anyhow::Result<Output> {
    let mut rows = Vec::new();
    for &iops in front_end {
        for &disks in &request.disks {
            let load = raid::back_end_load(raid::RaidInput {
                front_end_iops: iops,
                read_fraction: shape.read_fraction,
                write_penalty: shape.penalty,
                disks,
            })?;
            rows.push(RaidRow {
                load,
                ceiling_iops_per_disk: shape.ceiling,
                over_ceiling: load.back_end_iops_per_disk > shape.ceiling,
            });
        }
    }
    let columns = vec![
        Column::number("front-end IOPS", None),
        Column::number("disks", None),
        Column::number("back-end IOPS", None),
        Column::number("IOPS per disk", None),
        Column::number("ceiling IOPS per disk", None),
        Column::text("over ceiling"),
    ];
    let mut page = page(request, "RAID back-end load", columns);
    page.line(format!(
        "{:>12} {:>6} {:>14} {:>18}  over ceiling",
        "front IOPS", "disks", "back-end IOPS", "IOPS per disk"
    ));
    for row in &rows {
        back_end_row(&mut page, row, request.explain);
    }
    page.finish(&rows)
}

fn back_end_row(page: &mut Page, row: &RaidRow, explain: bool) {
    let load = &row.load;
    let flag = if row.over_ceiling {
        format!("YES (> {:.0} IOPS)", row.ceiling_iops_per_disk)
    } else {
        "no".into()
    };
    page.line(format!(
        "{:>12.0} {:>6} {:>14.0} {:>18.1}  {flag}",
        load.front_end_iops, load.disks, load.back_end_iops, load.back_end_iops_per_disk
    ));
    page.row(vec![
        Cell::number(load.front_end_iops, 0, "IOPS"),
        Cell::number(f64::from(load.disks), 0, "disks"),
        Cell::number(load.back_end_iops, 0, "IOPS"),
        Cell::number(load.back_end_iops_per_disk, 1, "IOPS"),
        Cell::number(row.ceiling_iops_per_disk, 0, "IOPS"),
        Cell::text(if row.over_ceiling { "yes" } else { "no" }),
    ]);
    if explain {
        page.note(format!(
            "  per disk = (reads + penalty × writes) / disks = ({:.0} + {} × {:.0}) / {} = {:.1} IOPS",
            load.read_iops, load.write_penalty, load.write_iops, load.disks, load.back_end_iops_per_disk
        ));
    }
}

fn min_disks(request: &RaidRequest, front_end: &[f64], shape: &Shape) -> anyhow::Result<Output> {
    let Shape {
        penalty,
        ceiling,
        read_fraction,
    } = *shape;
    let rows = front_end
        .iter()
        .map(|&iops| {
            let min_disks = raid::min_disks(iops, read_fraction, penalty, ceiling)?;
            let min_disks = request
                .raid
                .map_or(min_disks, |level| level.at_least(min_disks));
            Ok(MinDisksRow {
                front_end_iops: iops,
                min_disks,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let columns = vec![
        Column::number("front-end IOPS", None),
        Column::number("min disks", None),
        Column::number("ceiling IOPS per disk", None),
    ];
    let mut page = page(request, "RAID disks needed", columns);
    for row in &rows {
        page.line(format!(
            "{:.0} front-end IOPS need at least {} disks at {:.1} IOPS per disk",
            row.front_end_iops, row.min_disks, ceiling
        ));
        page.row(vec![
            Cell::number(row.front_end_iops, 0, "IOPS"),
            Cell::number(f64::from(row.min_disks), 0, "disks"),
            Cell::number(ceiling, 1, "IOPS"),
        ]);
        if request.explain {
            let reads = row.front_end_iops * read_fraction;
            let writes = row.front_end_iops - reads;
            page.note(format!(
                "  disks = ceil((reads + penalty × writes) / ceiling) = ceil(({reads:.0} + {penalty} × {writes:.0}) / {ceiling:.1}) = {}",
                row.min_disks
            ));
        }
    }
    page.finish(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raid5(disks: u32) -> RaidRequest {
        RaidRequest {
            iops: Some(vec![1000.0]),
            read_pct: Some(80.0),
            raid: Some(RaidLevel::Raid5),
            disks: vec![disks],
            explain: true,
            ..RaidRequest::default()
        }
    }

    #[test]
    fn ten_columns_is_160_per_disk_in_every_form() {
        let output = run(&raid5(10)).unwrap();
        let text = output.text.unwrap();
        assert!(text.contains("(800 + 4 × 200) / 10 = 160.0 IOPS"), "{text}");
        assert!(output
            .json
            .unwrap()
            .contains("\"back_end_iops_per_disk\": 160.0"));
        let report = output.document.unwrap();
        assert_eq!(report.source.kind, "model");
        let table = report.sections[0].tables().next().unwrap();
        assert_eq!(table.rows[0][3].value, Some(160.0));
    }

    #[test]
    fn the_measured_load_fills_what_is_not_given_and_comes_first() {
        let request = RaidRequest {
            iops: None,
            measured: Some(MeasuredLoad {
                devices: vec!["vda".into()],
                iops: 2000.0,
                read_pct: 50.0,
            }),
            ..raid5(10)
        };
        let text = run(&request).unwrap().text.unwrap();
        assert!(text.starts_with("measured (device layer, vda): 2000 requests/s, 50.0% reads\n"));
        assert!(text.contains("(1600 + 4 × 400) / 10"), "{text}");
        let Err(missing) = run(&RaidRequest {
            iops: None,
            ..raid5(10)
        }) else {
            panic!("ran without front-end IOPS");
        };
        assert_eq!(missing.to_string(), "--iops: give the front-end IOPS");
    }
}
