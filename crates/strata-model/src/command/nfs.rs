//! `strata model nfs`: NFS throughput over a client's channels at each
//! count of I/Os in flight, from a round trip, a transfer size and the
//! connections given; or each point of a calibrate Recording of an
//! `nfs://` target predicted from its least-loaded point of the same call
//! size, the measured figures and the model's error beside.
//!
//! Not for: the arithmetic ([`crate::nfs`]) or reading the Recording
//! (strata-run's `measured`).

use super::{number, Page};
use crate::nfs::{NfsChannels, NfsPrediction};
use anyhow::Context;
use serde::Serialize;
use std::time::Duration;
use strata_output::document::{Cell, Column, Figure};
use strata_output::Output;

/// What `strata model nfs` was asked.
#[derive(Debug, Clone, Default)]
pub struct NfsRequest {
    /// One call's round trip, nothing else in flight; `None` with
    /// `measured`.
    pub round_trip: Option<Duration>,
    pub transfer_bytes: u64,
    pub io_bytes: u64,
    pub connections: u32,
    pub connection_calls_per_s: Option<f64>,
    pub link_gbit: Option<f64>,
    /// I/Os in flight, a row each.
    pub outstanding: Vec<u32>,
    /// The calibrate Recording's points, when one was read.
    pub measured: Option<MeasuredNfs>,
    pub explain: bool,
}

/// A calibrate Recording's NFS points of one group each.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredNfs {
    pub recording: String,
    pub points: Vec<MeasuredNfsPoint>,
    /// Points left out (several groups, errors, interrupted, no NFS).
    pub skipped: usize,
}

/// One point as calibrate measured it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredNfsPoint {
    pub name: String,
    /// Queue depth × jobs.
    pub outstanding_ios: u32,
    pub io_bytes: u64,
    pub transfer_bytes: u64,
    /// Connections with I/Os in flight: jobs × min(--nfs-connections, depth).
    pub connections: u32,
    pub calls_per_s: f64,
    pub mb_per_s: f64,
    pub round_trip_us: f64,
    /// strata's CPU (user + system) per call, µs.
    pub cpu_us_per_call: f64,
}

impl MeasuredNfsPoint {
    fn call_bytes(&self) -> (u64, u64) {
        (self.transfer_bytes.min(self.io_bytes), self.transfer_bytes)
    }

    fn calls_in_flight(&self) -> u64 {
        u64::from(self.outstanding_ios) * self.io_bytes.div_ceil(self.transfer_bytes)
    }

    /// How long a call held its slot: calls in flight ÷ calls per second.
    fn slot_s(&self) -> f64 {
        self.calls_in_flight() as f64 / self.calls_per_s.max(f64::MIN_POSITIVE)
    }
}

/// One row: the model's inputs and result, and the point it stands for.
#[derive(Debug, Clone, Serialize)]
struct Row {
    channels: NfsChannels,
    model: NfsPrediction,
    #[serde(skip_serializing_if = "Option::is_none")]
    measured: Option<MeasuredNfsPoint>,
    /// The point the round trip and the connections' ceiling came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    base_point: Option<String>,
    /// (model − measured) ÷ measured calls per second, %.
    #[serde(skip_serializing_if = "Option::is_none")]
    calls_error_pct: Option<f64>,
}

/// Runs `strata model nfs`.
pub fn run(request: &NfsRequest) -> anyhow::Result<Output> {
    let rows = match &request.measured {
        Some(measured) => measured_rows(request, measured)?,
        None => given_rows(request)?,
    };
    print(&rows, request)
}

fn link_bytes_per_s(request: &NfsRequest) -> Option<f64> {
    request.link_gbit.map(|gbit| gbit * 1e9 / 8.0)
}

fn given_rows(request: &NfsRequest) -> anyhow::Result<Vec<Row>> {
    let round_trip = request
        .round_trip
        .context("--round-trip: give one call's round trip (or --from a calibrate Recording)")?;
    let channels = NfsChannels {
        round_trip_s: round_trip.as_secs_f64(),
        transfer_bytes: request.transfer_bytes as f64,
        io_bytes: request.io_bytes as f64,
        connections: request.connections,
        connection_calls_per_s: request.connection_calls_per_s,
        link_bytes_per_s: link_bytes_per_s(request),
    }
    .checked()?;
    let row = |outstanding: &u32| Row {
        channels,
        model: channels.predict(*outstanding),
        measured: None,
        base_point: None,
        calls_error_pct: None,
    };
    Ok(request.outstanding.iter().map(row).collect())
}

/// Each point from the least-loaded point of its call size: the time a
/// call held its slot there (calls in flight ÷ calls per second: strata's
/// round trip and its own time between a reply and the next call), and its
/// CPU per call as each connection's ceiling (unless --connection-calls
/// gives one).
fn measured_rows(request: &NfsRequest, measured: &MeasuredNfs) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for point in &measured.points {
        let base = measured
            .points
            .iter()
            .filter(|other| other.call_bytes() == point.call_bytes())
            .min_by_key(|other| other.calls_in_flight())
            .unwrap_or(point);
        let channels = NfsChannels {
            round_trip_s: base.slot_s(),
            transfer_bytes: point.transfer_bytes as f64,
            io_bytes: point.io_bytes as f64,
            connections: point.connections,
            connection_calls_per_s: request
                .connection_calls_per_s
                .or((base.cpu_us_per_call > 0.0).then(|| 1e6 / base.cpu_us_per_call)),
            link_bytes_per_s: link_bytes_per_s(request),
        }
        .checked()
        .with_context(|| format!("--from {}: point {}", measured.recording, point.name))?;
        let model = channels.predict(point.outstanding_ios);
        rows.push(Row {
            channels,
            model,
            calls_error_pct: (point.calls_per_s > 0.0)
                .then(|| (model.calls_per_s - point.calls_per_s) / point.calls_per_s * 100.0),
            measured: Some(point.clone()),
            base_point: Some(base.name.clone()),
        });
    }
    Ok(rows)
}

fn print(rows: &[Row], request: &NfsRequest) -> anyhow::Result<Output> {
    let mut columns = vec![
        Column::text("point"),
        number("I/Os in flight", "requests"),
        number("connections", "connections"),
        number("calls per I/O", "calls"),
        Column::text("bound"),
        number("model calls", "calls/s"),
        number("model throughput", "MB/s"),
        number("model round trip", "µs"),
    ];
    if request.measured.is_some() {
        columns.extend([
            number("measured calls", "calls/s"),
            number("error", "%"),
            number("measured throughput", "MB/s"),
            number("measured round trip", "µs"),
        ]);
    }
    let mut page = Page::new("NFS throughput over the client's channels", columns);
    if let Some(measured) = &request.measured {
        said_of_the_recording(&mut page, measured, rows);
    }
    page.line(format!(
        "{:<34} {:>9} {:>5} {:>8} {:<11} {:>10} {:>9} {:>10}{}",
        "point",
        "in flight",
        "conn",
        "calls/IO",
        "bound",
        "calls/s",
        "MB/s",
        "round trip",
        match request.measured {
            Some(_) => format!(
                " {:>12} {:>7} {:>10} {:>12}",
                "measured c/s", "error", "meas. MB/s", "meas. RT"
            ),
            None => String::new(),
        }
    ));
    for row in rows {
        page.line(line(row));
        page.row(cells(row));
    }
    if request.explain {
        for row in rows {
            page.note(explained(row));
        }
    }
    page.finish(&rows)
}

/// A row's name: its point's, or the I/Os in flight.
fn name(row: &Row) -> String {
    match &row.measured {
        Some(point) => point.name.clone(),
        None => format!("{} I/Os in flight", row.model.outstanding_ios),
    }
}

fn line(row: &Row) -> String {
    let model = &row.model;
    let mut text = format!(
        "{:<34} {:>9} {:>5} {:>8.0} {:<11} {:>10.0} {:>9.1} {:>7.1} µs",
        name(row),
        model.outstanding_ios,
        model.connections_used,
        model.calls_per_io,
        model.bound.name(),
        model.calls_per_s,
        model.mb_per_s,
        model.round_trip_s * 1e6,
    );
    if let Some(point) = &row.measured {
        text += &format!(
            " {:>12.0} {:>6.1}% {:>10.1} {:>9.1} µs",
            point.calls_per_s,
            row.calls_error_pct.unwrap_or(0.0),
            point.mb_per_s,
            point.round_trip_us
        );
    }
    text
}

fn cells(row: &Row) -> Vec<Cell> {
    let model = &row.model;
    let mut cells = vec![
        Cell::text(name(row)),
        Cell::number(f64::from(model.outstanding_ios), 0, "requests"),
        Cell::number(f64::from(model.connections_used), 0, "connections"),
        Cell::number(model.calls_per_io, 0, "calls"),
        Cell::text(model.bound.name()),
        Cell::number(model.calls_per_s, 0, "calls/s"),
        Cell::number(model.mb_per_s, 1, "MB/s"),
        Cell::number(model.round_trip_s * 1e6, 1, "µs"),
    ];
    if let Some(point) = &row.measured {
        cells.extend([
            Cell::number(point.calls_per_s, 0, "calls/s"),
            Cell::number(row.calls_error_pct.unwrap_or(0.0), 1, "%"),
            Cell::number(point.mb_per_s, 1, "MB/s"),
            Cell::number(point.round_trip_us, 1, "µs"),
        ]);
    }
    cells
}

/// The Recording, what was left out, and each base point's inputs.
fn said_of_the_recording(page: &mut Page, measured: &MeasuredNfs, rows: &[Row]) {
    page.file(&measured.recording);
    page.note(format!(
        "measured: {} ({} points of one group each; {} left out: several groups, errors, \
         interrupted). Each point is predicted from the least-loaded point of its call size: \
         the time a call held its slot there (the model's round trip), and its CPU per call as \
         each connection's ceiling",
        measured.recording,
        measured.points.len(),
        measured.skipped
    ));
    let bases = measured.points.iter().filter(|point| {
        rows.iter()
            .any(|row| row.base_point.as_deref() == Some(point.name.as_str()))
    });
    for base in bases {
        page.note(format!(
            "  {}: a call held its slot {:.1} µs (round trip {:.1} µs, and {:.1} µs of strata's \
             own between a reply and the next call); {:.1} µs of CPU per call: at most {:.0} \
             calls/s per connection",
            base.name,
            base.slot_s() * 1e6,
            base.round_trip_us,
            base.slot_s() * 1e6 - base.round_trip_us,
            base.cpu_us_per_call,
            1e6 / base.cpu_us_per_call.max(f64::MIN_POSITIVE)
        ));
        let mut figure = Figure::new("round_trip_us", base.round_trip_us, "µs", "nfs client");
        figure.source_label = Some(format!("{}: strata's own calls", base.name));
        page.figure(figure);
    }
}

/// The bounds of a row with its numbers.
fn explained(row: &Row) -> String {
    let (channels, model) = (&row.channels, &row.model);
    let per_connection =
        channels
            .connection_calls_per_s
            .map_or("no bound".to_string(), |ceiling| {
                format!(
                    "{} × {ceiling:.0} = {:.0}",
                    model.connections_used,
                    ceiling * f64::from(model.connections_used)
                )
            });
    let link = channels
        .link_bytes_per_s
        .map_or("no bound".to_string(), |link| {
            format!(
                "{:.0} B/s ÷ {:.0} B = {:.0}",
                link,
                channels.transfer_bytes.min(channels.io_bytes),
                link / channels.transfer_bytes.min(channels.io_bytes)
            )
        });
    format!(
        "  {}: calls/s = min(in flight ÷ round trip = {:.0} ÷ {:.1} µs = {:.0}; connections × \
         ceiling = {per_connection}; link = {link}) = {:.0} ({}); round trip = {:.0} ÷ {:.0} \
         = {:.1} µs",
        name(row),
        model.calls_in_flight,
        channels.round_trip_s * 1e6,
        model.calls_in_flight / channels.round_trip_s,
        model.calls_per_s,
        model.bound.name(),
        model.calls_in_flight,
        model.calls_per_s,
        model.round_trip_s * 1e6
    )
}
