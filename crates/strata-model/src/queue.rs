//! Queueing models for response time (DOMAIN lesson 6): open single-server
//! queues (M/M/1, M/D/1, M/G/1 by Pollaczek–Khinchine), the multi-server
//! M/M/c (Erlang C), the operational laws, and exact Mean Value Analysis of a
//! closed system of service centres with think time.
//!
//! Not for: priorities, finite buffers, or multi-class closed networks.
//! Times are in seconds, rates per second.

use crate::{invalid, require_non_negative, require_positive, ModelError};
use serde::Serialize;

/// An open queue's arrival process is Poisson; this is its service.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenModel {
    /// Exponential service times, one server.
    MM1,
    /// Constant service times, one server.
    MD1,
    /// General service times with this coefficient of variation (σ / mean).
    MG1 { service_cv: f64 },
    /// Exponential service times, this many servers.
    MMc { servers: u32 },
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct OpenResult {
    pub arrival_rate: f64,
    pub service_time_s: f64,
    /// Per-server utilization ρ = λ S / c (the operational law U = X × S).
    pub utilization: f64,
    pub wait_s: f64,
    pub response_time_s: f64,
    /// Requests in the system (Little: N = X × R).
    pub in_system: f64,
    pub in_queue: f64,
}

impl OpenModel {
    fn servers(self) -> u32 {
        match self {
            Self::MMc { servers } => servers,
            _ => 1,
        }
    }
}

/// Erlang C: the probability an arrival waits, for offered load `a = λS`
/// on `servers` servers (requires a < servers).
pub fn erlang_c(servers: u32, offered_load: f64) -> f64 {
    let c = f64::from(servers);
    let mut term = 1.0;
    let mut below_c = 0.0;
    for k in 0..servers {
        if k > 0 {
            term *= offered_load / f64::from(k);
        }
        below_c += term;
    }
    let at_c = term * offered_load / c;
    let waiting = at_c / (1.0 - offered_load / c);
    waiting / (below_c + waiting)
}

/// Mean wait in the queue; the caller has checked ρ < 1.
fn mean_wait(model: OpenModel, service_s: f64, rho: f64) -> f64 {
    match model {
        OpenModel::MM1 => rho * service_s / (1.0 - rho),
        OpenModel::MD1 => rho * service_s / (2.0 * (1.0 - rho)),
        OpenModel::MG1 { service_cv } => {
            rho * service_s * (1.0 + service_cv * service_cv) / (2.0 * (1.0 - rho))
        }
        OpenModel::MMc { servers } => {
            let c = f64::from(servers);
            erlang_c(servers, rho * c) * service_s / (c * (1.0 - rho))
        }
    }
}

/// Response time and queue length for one arrival rate.
pub fn open(model: OpenModel, arrival_rate: f64, service_s: f64) -> Result<OpenResult, ModelError> {
    require_non_negative("arrival-rate", arrival_rate)?;
    require_positive("service-time", service_s)?;
    if let OpenModel::MG1 { service_cv } = model {
        require_non_negative("cv", service_cv)?;
    }
    if model.servers() == 0 {
        return Err(invalid("servers", "there must be at least 1 server"));
    }
    let rho = arrival_rate * service_s / f64::from(model.servers());
    if rho >= 1.0 {
        return Err(invalid(
            "arrival-rate",
            format!(
                "utilization would be {:.1}% (≥ 100%): the queue is unstable",
                rho * 100.0
            ),
        ));
    }
    let wait_s = mean_wait(model, service_s, rho);
    let response_time_s = service_s + wait_s;
    Ok(OpenResult {
        arrival_rate,
        service_time_s: service_s,
        utilization: rho,
        wait_s,
        response_time_s,
        in_system: arrival_rate * response_time_s,
        in_queue: arrival_rate * wait_s,
    })
}

/// The arrival rate that makes each server `utilization` busy.
pub fn arrival_rate_at(
    model: OpenModel,
    utilization: f64,
    service_s: f64,
) -> Result<f64, ModelError> {
    if !(0.0..1.0).contains(&utilization) {
        return Err(invalid(
            "utilization",
            format!(
                "{:.1}% is not below 100%: the queue is unstable",
                utilization * 100.0
            ),
        ));
    }
    Ok(utilization * f64::from(model.servers()) / require_positive("service-time", service_s)?)
}

/// A service centre of a closed system: its total demand per interaction
/// (visits × service time), in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Centre {
    pub name: String,
    pub demand_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MvaStep {
    pub users: u32,
    pub throughput: f64,
    pub response_time_s: f64,
    pub residence_s: Vec<f64>,
    pub queue_length: Vec<f64>,
    /// Asymptotic bound: min(1 / Dmax, N / (D + Z)).
    pub throughput_bound: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MvaResult {
    pub centres: Vec<Centre>,
    pub think_time_s: f64,
    pub total_demand_s: f64,
    pub bottleneck: String,
    pub max_demand_s: f64,
    /// N* = (D + Z) / Dmax: beyond this many users the bottleneck saturates.
    pub saturation_users: f64,
    pub steps: Vec<MvaStep>,
}

/// Exact MVA: R_k(n) = D_k (1 + Q_k(n−1)), X(n) = n / (Z + Σ R_k(n)),
/// Q_k(n) = X(n) R_k(n), for n = 1..=users.
pub fn mva(centres: &[Centre], think_time_s: f64, users: u32) -> Result<MvaResult, ModelError> {
    if centres.is_empty() {
        return Err(invalid(
            "centres",
            "give at least one centre, e.g. cpu=20ms",
        ));
    }
    for centre in centres {
        require_positive("centres", centre.demand_s)?;
    }
    require_non_negative("think-time", think_time_s)?;
    if users == 0 {
        return Err(invalid("users", "there must be at least 1 user"));
    }
    let total_demand_s: f64 = centres.iter().map(|c| c.demand_s).sum();
    let bottleneck = centres
        .iter()
        .max_by(|a, b| a.demand_s.total_cmp(&b.demand_s))
        .expect("not empty");
    let mut queue = vec![0.0; centres.len()];
    let mut steps = Vec::with_capacity(users as usize);
    for n in 1..=users {
        let residence: Vec<f64> = centres
            .iter()
            .zip(&queue)
            .map(|(centre, q)| centre.demand_s * (1.0 + q))
            .collect();
        let response_time_s: f64 = residence.iter().sum();
        let throughput = f64::from(n) / (think_time_s + response_time_s);
        queue = residence.iter().map(|r| throughput * r).collect();
        steps.push(MvaStep {
            users: n,
            throughput,
            response_time_s,
            residence_s: residence,
            queue_length: queue.clone(),
            throughput_bound: (1.0 / bottleneck.demand_s)
                .min(f64::from(n) / (total_demand_s + think_time_s)),
        });
    }
    Ok(MvaResult {
        centres: centres.to_vec(),
        think_time_s,
        total_demand_s,
        bottleneck: bottleneck.name.clone(),
        max_demand_s: bottleneck.demand_s,
        saturation_users: (total_demand_s + think_time_s) / bottleneck.demand_s,
        steps,
    })
}

/// A load-dependent service centre of a closed system: `rates[j − 1]` is
/// the rate (completions per second) at which it serves when `j` requests
/// are at it, for j = 1..=users. A fixed-rate centre of demand D has every
/// rate 1/D; c servers of demand D have rate min(j, c)/D; a device measured
/// at j outstanding requests has the rate it completed there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadDependentCentre {
    pub name: String,
    pub rates: Vec<f64>,
}

/// One population of [`mva_load_dependent`]'s recursion.
#[derive(Debug, Clone, Serialize)]
pub struct LoadDependentStep {
    pub users: u32,
    pub throughput: f64,
    /// Time one interaction spends at each centre (waiting and served).
    pub residence_s: Vec<f64>,
    /// Mean requests at each centre.
    pub queue_length: Vec<f64>,
}

/// Exact MVA with load-dependent centres (Reiser and Lavenberg): with
/// p_k(j | n) the probability of j requests at centre k when n users are
/// in the system,
/// R_k(n) = Σ_{j=1..n} j / μ_k(j) · p_k(j − 1 | n − 1),
/// X(n) = n / (Z + Σ R_k(n)),
/// p_k(j | n) = X(n) / μ_k(j) · p_k(j − 1 | n − 1) for j ≥ 1 and
/// p_k(0 | n) = 1 − Σ_{j≥1} p_k(j | n).
pub fn mva_load_dependent(
    centres: &[LoadDependentCentre],
    think_time_s: f64,
    users: u32,
) -> Result<Vec<LoadDependentStep>, ModelError> {
    mva_load_dependent_overlapping(centres, think_time_s, users, |_| 0.0)
}

/// [`mva_load_dependent`] for users that are at two centres at once for
/// part of each interaction (a session whose CPU works on one block while
/// the device reads the next): `hidden(R)` of the residence times R is
/// spent at two centres together, so X(n) = n / (Z + Σ R_k(n) − hidden(R)).
/// An approximation (the network is no longer product form): each centre's
/// queue still follows the recursion, fed the faster throughput.
pub fn mva_load_dependent_overlapping(
    centres: &[LoadDependentCentre],
    think_time_s: f64,
    users: u32,
    hidden: impl Fn(&[f64]) -> f64,
) -> Result<Vec<LoadDependentStep>, ModelError> {
    require_non_negative("think-time", think_time_s)?;
    if users == 0 {
        return Err(invalid("users", "there must be at least 1 user"));
    }
    for centre in centres {
        if centre.rates.len() < users as usize {
            return Err(invalid(
                "rates",
                format!(
                    "centre {} has rates for {} requests, not {users}",
                    centre.name,
                    centre.rates.len()
                ),
            ));
        }
        for rate in &centre.rates[..users as usize] {
            require_positive("rates", *rate)?;
        }
    }
    let mut marginals: Vec<Vec<f64>> = centres.iter().map(|_| vec![1.0]).collect();
    let mut steps = Vec::with_capacity(users as usize);
    for n in 1..=users as usize {
        let residence_s: Vec<f64> = centres
            .iter()
            .zip(&marginals)
            .map(|(centre, p)| {
                (1..=n)
                    .map(|j| j as f64 / centre.rates[j - 1] * p[j - 1])
                    .sum()
            })
            .collect();
        let cycle_s = think_time_s + residence_s.iter().sum::<f64>() - hidden(&residence_s);
        let throughput = n as f64 / cycle_s;
        for (centre, p) in centres.iter().zip(marginals.iter_mut()) {
            let mut next = vec![0.0; n + 1];
            for j in 1..=n {
                next[j] = throughput / centre.rates[j - 1] * p[j - 1];
            }
            next[0] = (1.0 - next[1..].iter().sum::<f64>()).max(0.0);
            *p = next;
        }
        steps.push(LoadDependentStep {
            users: n as u32,
            throughput,
            queue_length: residence_s.iter().map(|r| throughput * r).collect(),
            residence_s,
        });
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn mm1_at_half_load_doubles_the_service_time() {
        let result = open(OpenModel::MM1, 50.0, 0.01).unwrap();
        assert!(close(result.utilization, 0.5));
        assert!(close(result.response_time_s, 0.02));
        assert!(close(result.in_system, 1.0));
    }

    #[test]
    fn md1_at_half_load_is_one_and_a_half_service_times() {
        let result = open(OpenModel::MD1, 50.0, 0.01).unwrap();
        assert!(close(result.response_time_s, 0.015));
        let same = open(OpenModel::MG1 { service_cv: 0.0 }, 50.0, 0.01).unwrap();
        assert!(close(same.response_time_s, 0.015));
        let exponential = open(OpenModel::MG1 { service_cv: 1.0 }, 50.0, 0.01).unwrap();
        assert!(close(exponential.response_time_s, 0.02));
    }

    #[test]
    fn mmc_with_one_server_is_mm1_and_two_servers_by_hand() {
        let one = open(OpenModel::MMc { servers: 1 }, 50.0, 0.01).unwrap();
        assert!(close(one.response_time_s, 0.02));
        // c = 2, a = 1 (ρ = 0.5): C = (1/2 / 0.5) / (1 + 1 + 1) = 1/3;
        // Wq = C S / (c (1 − ρ)) = (1/3) S / 1, so R = 4/3 S.
        assert!(close(erlang_c(2, 1.0), 1.0 / 3.0));
        let two = open(OpenModel::MMc { servers: 2 }, 100.0, 0.01).unwrap();
        assert!(close(two.response_time_s, 0.01 * 4.0 / 3.0));
    }

    #[test]
    fn full_utilization_is_unstable() {
        let error = open(OpenModel::MM1, 100.0, 0.01).unwrap_err();
        assert!(error.to_string().contains("unstable"));
        assert!(arrival_rate_at(OpenModel::MM1, 1.0, 0.01).is_err());
    }

    #[test]
    fn mva_two_centres_by_hand() {
        // cpu D=20 ms, disk D=30 ms, Z=0.
        // n=1: R = 50 ms, X = 20/s, Q = (0.4, 0.6)
        // n=2: R = 20×1.4 + 30×1.6 = 76 ms, X = 2/0.076 = 26.3158/s,
        //      Q = (0.73684, 1.26316)
        // n=3: R = 20×1.73684 + 30×2.26316 = 102.6316 ms, X = 29.2308/s
        let centres = [centre("cpu", 0.020), centre("disk", 0.030)];
        let result = mva(&centres, 0.0, 3).unwrap();
        let r: Vec<f64> = result.steps.iter().map(|s| s.response_time_s).collect();
        let x: Vec<f64> = result.steps.iter().map(|s| s.throughput).collect();
        assert!(close(r[0], 0.050) && close(x[0], 20.0));
        assert!(close(r[1], 0.076) && close(x[1], 2.0 / 0.076));
        assert!((r[2] - 0.1026316).abs() < 1e-6);
        assert!((x[2] - 29.2308).abs() < 1e-3);
        assert_eq!(result.bottleneck, "disk");
        assert!(close(result.steps[2].throughput_bound, 1.0 / 0.030));
    }

    fn centre(name: &str, demand_s: f64) -> Centre {
        Centre {
            name: name.into(),
            demand_s,
        }
    }

    fn fixed(name: &str, demand_s: f64, users: u32) -> LoadDependentCentre {
        LoadDependentCentre {
            name: name.into(),
            rates: vec![1.0 / demand_s; users as usize],
        }
    }

    #[test]
    fn load_dependent_mva_of_fixed_rates_is_plain_mva() {
        let centres = [centre("cpu", 0.020), centre("disk", 0.030)];
        let plain = mva(&centres, 0.1, 12).unwrap();
        let centres = [fixed("cpu", 0.020, 12), fixed("disk", 0.030, 12)];
        let loaded = mva_load_dependent(&centres, 0.1, 12).unwrap();
        for (a, b) in plain.steps.iter().zip(&loaded) {
            assert!((a.throughput - b.throughput).abs() < 1e-9 * a.throughput);
            assert!((a.response_time_s - b.residence_s.iter().sum::<f64>()).abs() < 1e-12);
        }
    }

    #[test]
    fn a_balanced_network_has_the_closed_form() {
        // K centres of demand D, no think time: X(N) = N / (D (K + N − 1)).
        let centres: Vec<_> = (0..3).map(|k| fixed(&format!("c{k}"), 0.010, 5)).collect();
        let steps = mva_load_dependent(&centres, 0.0, 5).unwrap();
        for step in &steps {
            let n = f64::from(step.users);
            assert!(close(step.throughput, n / (0.010 * (3.0 + n - 1.0))));
        }
    }

    #[test]
    fn throughput_keeps_to_the_asymptotic_bounds() {
        // X(N) ≤ min(N / (D + Z), 1 / Dmax), and approaches 1 / Dmax.
        let centres = [fixed("cpu", 0.004, 40), fixed("disk", 0.010, 40)];
        let steps = mva_load_dependent(&centres, 0.050, 40).unwrap();
        for step in &steps {
            let n = f64::from(step.users);
            let bound = (n / (0.014 + 0.050)).min(1.0 / 0.010);
            assert!(
                step.throughput <= bound * (1.0 + 1e-12),
                "{n}: {}",
                step.throughput
            );
        }
        assert!(steps[39].throughput > 0.97 * 100.0);
        assert!(close(steps[0].throughput, 1.0 / 0.064));
    }

    #[test]
    fn as_many_servers_as_users_is_a_delay() {
        // rate min(j, c)/D with c ≥ N: nobody waits, X = N / (D + Z).
        let centre = LoadDependentCentre {
            name: "cpus".into(),
            rates: (1..=8).map(|j| f64::from(j) / 0.010).collect(),
        };
        let steps = mva_load_dependent(&[centre], 0.030, 8).unwrap();
        for step in &steps {
            assert!(close(step.throughput, f64::from(step.users) / 0.040));
            assert!(close(step.residence_s[0], 0.010));
        }
    }

    #[test]
    fn two_servers_saturate_at_two_over_the_demand() {
        let centre = LoadDependentCentre {
            name: "cpus".into(),
            rates: (1..=64).map(|j| f64::from(j.min(2)) / 0.010).collect(),
        };
        let steps = mva_load_dependent(&[centre], 0.0, 64).unwrap();
        assert!(close(steps[0].throughput, 100.0));
        assert!(close(steps[1].throughput, 200.0));
        assert!((steps[63].throughput - 200.0).abs() < 1e-6);
        for step in &steps {
            assert!(step.throughput <= 200.0 + 1e-9);
        }
    }

    #[test]
    fn what_two_centres_share_shortens_the_cycle() {
        // One user: CPU 4 ms, disk 10 ms, 3 ms of the CPU's while the disk
        // works: X = 1 / (4 + 10 − 3) ms.
        let centres = [fixed("cpu", 0.004, 4), fixed("disk", 0.010, 4)];
        let steps = mva_load_dependent_overlapping(&centres, 0.0, 4, |_| 0.003).unwrap();
        assert!(close(steps[0].throughput, 1.0 / 0.011));
        assert!(close(steps[0].queue_length[1], 0.010 / 0.011));
        // Hiding nothing is the exact recursion.
        let exact = mva_load_dependent(&centres, 0.0, 4).unwrap();
        let none = mva_load_dependent_overlapping(&centres, 0.0, 4, |_| 0.0).unwrap();
        for (a, b) in exact.iter().zip(&none) {
            assert_eq!(a.throughput, b.throughput);
        }
        // Never past the bottleneck's rate, overlap or not.
        let hidden = |residence: &[f64]| residence[0].min(residence[1]);
        let overlapped = mva_load_dependent_overlapping(&centres, 0.0, 4, hidden).unwrap();
        assert!(overlapped
            .iter()
            .all(|step| step.throughput <= 100.0 + 1e-9));
        assert!(overlapped[3].throughput > exact[3].throughput);
    }

    #[test]
    fn mva_single_centre_saturates_at_once() {
        let centres = [Centre {
            name: "d".into(),
            demand_s: 1.0,
        }];
        let result = mva(&centres, 0.0, 3).unwrap();
        for step in &result.steps {
            assert!(close(step.throughput, 1.0));
            assert!(close(step.response_time_s, f64::from(step.users)));
        }
    }
}
