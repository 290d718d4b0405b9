//! `strata model queue`: response time against utilization for an open
//! queue (M/M/1, M/D/1, M/G/1, M/M/c), at given utilizations, at one
//! arrival rate, or at a device's measured one with its measured await
//! beside the model's; with service centres, a closed system by MVA
//! ([`super::mva`]).
//!
//! Not for: the queueing arithmetic itself ([`crate::queue`]) or reading
//! the measured device (strata-awr's `measured`).

use super::{ms, mva, number, Page};
use crate::queue::{self, Centre, OpenModel, OpenResult};
use anyhow::Context;
use serde::Serialize;
use std::time::Duration;
use strata_output::document::{Cell, Figure};
use strata_output::Output;

/// The utilizations of the table when none are given.
const DEFAULT_UTILIZATIONS: [f64; 10] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95];

/// What `strata model queue` was asked.
#[derive(Debug, Clone, Default)]
pub struct QueueRequest {
    /// Open model: `mm1`, `md1`, `mg1` or `mmc`.
    pub model: String,
    /// Coefficient of variation of the service time, for `mg1`.
    pub cv: f64,
    /// Servers, for `mmc`.
    pub servers: u32,
    /// Mean service time; `None` takes the measured device's.
    pub service_time: Option<Duration>,
    /// One arrival rate (requests/s) instead of the utilization table.
    pub arrival_rate: Option<f64>,
    /// Utilizations (fractions) of the table.
    pub utilization: Option<Vec<f64>>,
    /// A closed system of these centres instead of an open queue.
    pub centres: Option<Vec<Centre>>,
    /// Think time between a user's interactions, closed system.
    pub think_time: Duration,
    /// Users 1..N, closed system.
    pub users: u32,
    /// The device measured, when one was read.
    pub measured: Option<MeasuredDevice>,
    pub explain: bool,
}

/// One device's queue as measured, and its own response time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredDevice {
    pub device: String,
    pub requests_per_s: f64,
    /// Busy time per request.
    pub service_time_ms: f64,
    pub util_pct: f64,
    pub await_ms: f64,
    pub queue_size: f64,
}

/// Runs `strata model queue`.
pub fn run(request: &QueueRequest) -> anyhow::Result<Output> {
    if let Some(centres) = &request.centres {
        return mva::run(&mva::MvaRequest {
            centres: centres.clone(),
            think_time: request.think_time,
            users: request.users,
            explain: request.explain,
        });
    }
    let model = open_model(request);
    let measured = request.measured.as_ref();
    let service_s = request
        .service_time
        .map(|time| time.as_secs_f64())
        .or(measured.map(|device| device.service_time_ms / 1e3))
        .context("--service-time: give the mean service time")?;
    let measured_rate = measured
        .filter(|_| request.utilization.is_none())
        .map(|device| device.requests_per_s);
    let rates = match (request.arrival_rate.or(measured_rate), &request.utilization) {
        (Some(rate), _) => vec![rate],
        (None, Some(levels)) => rates_at(model, levels, service_s)?,
        (None, None) => rates_at(model, &DEFAULT_UTILIZATIONS, service_s)?,
    };
    let rows = rates
        .iter()
        .map(|&rate| queue::open(model, rate, service_s))
        .collect::<Result<Vec<_>, _>>()?;
    print_open(&rows, model, request)
}

fn open_model(request: &QueueRequest) -> OpenModel {
    match request.model.as_str() {
        "md1" => OpenModel::MD1,
        "mg1" => OpenModel::MG1 {
            service_cv: request.cv,
        },
        "mmc" => OpenModel::MMc {
            servers: request.servers,
        },
        _ => OpenModel::MM1,
    }
}

fn rates_at(model: OpenModel, levels: &[f64], service_s: f64) -> anyhow::Result<Vec<f64>> {
    Ok(levels
        .iter()
        .map(|&u| queue::arrival_rate_at(model, u, service_s))
        .collect::<Result<_, _>>()?)
}

fn print_open(
    rows: &[OpenResult],
    model: OpenModel,
    request: &QueueRequest,
) -> anyhow::Result<Output> {
    let columns = vec![
        number("arrivals", "/s"),
        number("utilization", "%"),
        number("wait", "ms"),
        number("response", "ms"),
        number("in system", "requests"),
    ];
    let mut page = Page::new("Open queue", columns);
    if let Some(device) = &request.measured {
        measured(&mut page, device);
    }
    page.line(format!(
        "{:>14} {:>12} {:>14} {:>16} {:>14}",
        "arrivals /s", "utilization", "wait ms", "response ms", "in system"
    ));
    for row in rows {
        page.line(format!(
            "{:>14.1} {:>11.1}% {:>14.3} {:>16.3} {:>14.3}",
            row.arrival_rate,
            row.utilization * 100.0,
            ms(row.wait_s),
            ms(row.response_time_s),
            row.in_system
        ));
        page.row(vec![
            Cell::number(row.arrival_rate, 1, "/s"),
            Cell::number(row.utilization * 100.0, 1, "%"),
            Cell::number(ms(row.wait_s), 3, "ms"),
            Cell::number(ms(row.response_time_s), 3, "ms"),
            Cell::number(row.in_system, 3, "requests"),
        ]);
        if request.explain {
            explain_open(&mut page, row, model);
        }
    }
    let measured = &request.measured;
    page.finish(&serde_json::json!({ "model": model, "rows": rows, "measured": measured }))
}

fn measured(page: &mut Page, device: &MeasuredDevice) {
    page.note(format!(
        "measured (device layer, {}): {:.1} requests/s, service time {:.3} ms (busy time per request), \
         utilization {:.1}%, await {:.3} ms, aqu-sz {:.2}",
        device.device,
        device.requests_per_s,
        device.service_time_ms,
        device.util_pct,
        device.await_ms,
        device.queue_size
    ));
    let figures = [
        ("requests_per_s", device.requests_per_s, "requests/s"),
        ("service_time_ms", device.service_time_ms, "ms"),
        ("util_pct", device.util_pct, "%"),
        ("await_ms", device.await_ms, "ms"),
        ("queue_size", device.queue_size, "requests"),
    ];
    for (name, value, unit) in figures {
        let mut figure = Figure::new(name, value, unit, "device");
        figure.scope = Some(device.device.clone());
        page.figure(figure);
    }
}

fn explain_open(page: &mut Page, row: &OpenResult, model: OpenModel) {
    let (s, rho) = (ms(row.service_time_s), row.utilization);
    let response = ms(row.response_time_s);
    page.note(match model {
        OpenModel::MM1 => format!("  R = S / (1 − ρ) = {s:.3} ms / (1 − {rho:.3}) = {response:.3} ms"),
        OpenModel::MD1 => format!("  R = S + ρ S / (2 (1 − ρ)) = {s:.3} + {rho:.3} × {s:.3} / (2 × {:.3}) = {response:.3} ms", 1.0 - rho),
        OpenModel::MG1 { service_cv } => format!("  R = S + ρ S (1 + cv²) / (2 (1 − ρ)) = {s:.3} + {rho:.3} × {s:.3} × (1 + {service_cv}²) / (2 × {:.3}) = {response:.3} ms", 1.0 - rho),
        OpenModel::MMc { servers } => format!("  R = S + C(c, a) S / (c (1 − ρ)) = {s:.3} + {:.4} × {s:.3} / ({servers} × {:.3}) = {response:.3} ms",
            queue::erlang_c(servers, rho * f64::from(servers)), 1.0 - rho),
    });
    page.note(format!("  U = X × S = {:.1}/s × {s:.3} ms = {:.1}%; N = X × R = {:.1}/s × {response:.3} ms = {:.3} requests",
        row.arrival_rate, rho * 100.0, row.arrival_rate, row.in_system));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mm1_at_half_load_doubles_the_service_time() {
        let request = QueueRequest {
            model: "mm1".into(),
            service_time: Some(Duration::from_millis(10)),
            utilization: Some(vec![0.5]),
            explain: true,
            ..QueueRequest::default()
        };
        let output = run(&request).unwrap();
        let text = output.text.unwrap();
        assert!(
            text.contains("R = S / (1 − ρ) = 10.000 ms / (1 − 0.500) = 20.000 ms"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&output.json.unwrap()).unwrap();
        assert_eq!(json["measured"], serde_json::Value::Null);
        assert!((json["rows"][0]["response_time_s"].as_f64().unwrap() - 0.020).abs() < 1e-12);
    }

    #[test]
    fn a_measured_device_gives_the_service_time_and_the_rate() {
        let request = QueueRequest {
            measured: Some(MeasuredDevice {
                device: "vda".into(),
                requests_per_s: 50.0,
                service_time_ms: 10.0,
                util_pct: 50.0,
                await_ms: 19.0,
                queue_size: 1.0,
            }),
            ..QueueRequest::default()
        };
        let output = run(&request).unwrap();
        assert!(output
            .text
            .unwrap()
            .starts_with("measured (device layer, vda): 50.0 requests/s"));
        assert_eq!(output.document.unwrap().figures.len(), 5);
    }
}
