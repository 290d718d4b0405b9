//! `strata model queue --centres`: a closed system of service centres with
//! think time, by exact Mean Value Analysis — its bottleneck and bounds,
//! and throughput and response time for 1..N users.
//!
//! Not for: open queues ([`super::queue`]) or the MVA arithmetic itself
//! ([`crate::queue::mva`]).

use super::{ms, number, Page};
use crate::queue::{self, Centre, MvaResult, MvaStep};
use std::time::Duration;
use strata_output::document::{Cell, Column};
use strata_output::Output;

/// A closed system to solve.
#[derive(Debug, Clone)]
pub struct MvaRequest {
    pub centres: Vec<Centre>,
    pub think_time: Duration,
    /// Users 1..N.
    pub users: u32,
    pub explain: bool,
}

/// Runs the closed model.
pub fn run(request: &MvaRequest) -> anyhow::Result<Output> {
    let result = queue::mva(
        &request.centres,
        request.think_time.as_secs_f64(),
        request.users,
    )?;
    let columns = vec![
        Column::number("users", None),
        number("throughput", "/s"),
        number("response", "ms"),
        number("bound", "/s"),
    ];
    let mut page = Page::new("Closed system (MVA)", columns);
    page.note(format!("bottleneck {} (D = {:.3} ms); X ≤ 1/Dmax = {:.2}/s; N* = (D + Z) / Dmax = ({:.3} + {:.3}) ms / {:.3} ms = {:.2} users",
        result.bottleneck, ms(result.max_demand_s), 1.0 / result.max_demand_s,
        ms(result.total_demand_s), ms(result.think_time_s), ms(result.max_demand_s), result.saturation_users));
    page.line(format!(
        "{:>6} {:>16} {:>16} {:>16}",
        "users", "throughput /s", "response ms", "bound /s"
    ));
    for step in &result.steps {
        page.line(format!(
            "{:>6} {:>16.3} {:>16.3} {:>16.3}",
            step.users,
            step.throughput,
            ms(step.response_time_s),
            step.throughput_bound
        ));
        page.row(vec![
            Cell::number(f64::from(step.users), 0, "users"),
            Cell::number(step.throughput, 3, "/s"),
            Cell::number(ms(step.response_time_s), 3, "ms"),
            Cell::number(step.throughput_bound, 3, "/s"),
        ]);
        if request.explain {
            explain(&mut page, &result, step);
        }
    }
    page.finish(&result)
}

fn explain(page: &mut Page, result: &MvaResult, step: &MvaStep) {
    let parts: Vec<String> = result
        .centres
        .iter()
        .zip(&step.residence_s)
        .map(|(c, r)| format!("{} {:.3} ms", c.name, ms(*r)))
        .collect();
    page.note(format!(
        "  R_k = D_k (1 + Q_k(n−1)): {}; X = n / (Z + R) = {} / ({:.3} + {:.3}) ms = {:.3}/s",
        parts.join(", "),
        step.users,
        ms(result.think_time_s),
        ms(step.response_time_s),
        step.throughput
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_disk_is_the_bottleneck() {
        let centre = |name: &str, demand_s| Centre {
            name: name.into(),
            demand_s,
        };
        let request = MvaRequest {
            centres: vec![centre("cpu", 0.020), centre("disk", 0.030)],
            think_time: Duration::ZERO,
            users: 3,
            explain: true,
        };
        let output = run(&request).unwrap();
        let text = output.text.unwrap();
        assert!(
            text.starts_with("bottleneck disk (D = 30.000 ms)"),
            "{text}"
        );
        assert!(text.contains("R_k = D_k (1 + Q_k(n−1)): cpu 20.000 ms, disk 30.000 ms"));
        let json: serde_json::Value = serde_json::from_str(&output.json.unwrap()).unwrap();
        assert!((json["steps"][1]["response_time_s"].as_f64().unwrap() - 0.076).abs() < 1e-12);
    }
}
