//! Findings that explain what changed from A to each later Recording,
//! each with its evidence: a data set that fits the database's cache in
//! one run and not the other, a device await that moved at the same r/s,
//! a different window, fewer or more sessions.
//!
//! The ids are stable: `compare_data_set_fits_cache`,
//! `compare_device_await_changed`, `compare_window_differs`,
//! `compare_sessions_differ`.
//!
//! Not for: the findings of one Recording (`crate::findings`; compare
//! marks each Recording's own `A:`, `B:`…).

use super::operations::{data_devices, percentile_ms, result};
use super::settings::{data_set_bytes, database_cache, sessions};
use super::Side;
use crate::findings::finding;
use strata_output::document::{Evidence, Finding, Severity};

/// Rates within this ratio of each other are "the same".
const SAME_RATE_RATIO: f64 = 1.25;
/// An await that moved by this factor or more changed.
const AWAIT_CHANGE_RATIO: f64 = 1.5;
/// Windows that differ by more than this ratio differ.
const WINDOW_RATIO: f64 = 1.1;

const MIB: f64 = 1024.0 * 1024.0;

/// Every finding of every later Recording against A.
pub(super) fn findings(sides: &[Side]) -> Vec<Finding> {
    let rules: [fn(&Side, &Side) -> Option<Finding>; 4] = [
        data_set_fits_cache,
        device_await_changed,
        window_differs,
        sessions_differ,
    ];
    let Some((first, later)) = sides.split_first() else {
        return Vec::new();
    };
    later
        .iter()
        .flat_map(|side| rules.iter().filter_map(|rule| rule(first, side)))
        .collect()
}

/// `side`'s figure as evidence: "B's device r/s: 19,266.0 requests/s".
fn of(side: &Side, what: &str, value: f64, decimals: usize, unit: &str) -> Evidence {
    Evidence::new(format!("{}'s {what}", side.mark), value, decimals, unit)
}

/// Whether the run's data set fits its database's cache, the two sizes
/// and what the engine calls the cache.
fn fits_cache(side: &Side) -> Option<(bool, f64, f64, &'static str)> {
    let (cache, name) = database_cache(&side.recording)?;
    let data = data_set_bytes(&side.recording)?;
    Some((data <= cache, data, cache, name))
}

/// Each run's device r/s and buffer hit %.
fn reads_of(sides: [&Side; 2]) -> Vec<Evidence> {
    let mut evidence = Vec::new();
    for side in sides {
        if let Some(devices) = data_devices(side) {
            evidence.push(of(side, "device r/s", devices.r_per_s, 1, "requests/s"));
        }
        if let Some(database) = result(side).and_then(|result| result.database.as_ref()) {
            evidence.push(of(side, "buffer hit", database.buffer_hit_pct, 1, "%"));
        }
    }
    evidence
}

/// The data set fits the database's cache in one run and not the other:
/// the one it fits reads from the buffer cache, not the device.
fn data_set_fits_cache(a: &Side, b: &Side) -> Option<Finding> {
    let (a_fits, b_fits) = (fits_cache(a)?.0, fits_cache(b)?.0);
    if a_fits == b_fits {
        return None;
    }
    let (inside, outside) = if b_fits { (b, a) } else { (a, b) };
    let mut evidence = Vec::new();
    let mut name = "";
    for side in [inside, outside] {
        let (_, data, cache, cache_name) = fits_cache(side)?;
        name = if name.is_empty() { cache_name } else { name };
        evidence.push(of(side, "data set", data / MIB, 1, "MiB"));
        evidence.push(of(side, cache_name, cache / MIB, 1, "MiB"));
    }
    evidence.extend(reads_of([a, b]));
    let title = format!(
        "{}'s data set fits in {name}: it reads from the buffer cache, so device reads fell away",
        inside.mark
    );
    let why = "A run whose data set fits the database's cache measures the cache, not the \
               storage: its latency and device figures cannot be set against a run that reads \
               from the device.";
    let id = "compare_data_set_fits_cache";
    Some(finding(id, Severity::Warning, title, evidence, why))
}

/// "doubled", "rose 3.1×", "fell to 0.40×".
fn moved(ratio: f64) -> String {
    if (2.0..2.5).contains(&ratio) {
        "doubled".to_string()
    } else if ratio > 1.0 {
        format!("rose {ratio:.1}×")
    } else {
        format!("fell to {ratio:.2}×")
    }
}

/// The data devices' read await moved by half or more at about the same
/// r/s: the storage answered differently to the same load.
fn device_await_changed(a: &Side, b: &Side) -> Option<Finding> {
    let (da, db) = (data_devices(a)?, data_devices(b)?);
    let (await_a, await_b) = (da.r_await_ms?, db.r_await_ms?);
    let rate_ratio = db.r_per_s / da.r_per_s.max(f64::MIN_POSITIVE);
    let await_ratio = await_b / await_a.max(f64::MIN_POSITIVE);
    let same_rate =
        da.r_per_s > 0.0 && (1.0 / SAME_RATE_RATIO..=SAME_RATE_RATIO).contains(&rate_ratio);
    let changed = !(1.0 / AWAIT_CHANGE_RATIO..AWAIT_CHANGE_RATIO).contains(&await_ratio);
    if !same_rate || !changed || await_a <= 0.0 {
        return None;
    }
    let mut evidence = Vec::new();
    for (side, devices) in [(a, &da), (b, &db)] {
        evidence.push(of(side, "device r/s", devices.r_per_s, 1, "requests/s"));
        let r_await = devices.r_await_ms.unwrap_or(f64::NAN);
        evidence.push(of(side, "r_await", r_await, 3, "ms"));
        evidence.push(of(side, "aqu-sz", devices.aqu_sz, 2, "requests"));
    }
    for side in [a, b] {
        if let Some(p99) = percentile_ms(side, "select", "p99") {
            evidence.push(of(side, "select p99", p99, 3, "ms"));
        }
    }
    let title = format!(
        "{}'s device read await {} at the same r/s",
        b.mark,
        moved(await_ratio)
    );
    let why = "The same request rate met a different service time: the storage (or what shares \
               it) changed, not the load.";
    let id = "compare_device_await_changed";
    Some(finding(id, Severity::Warning, title, evidence, why))
}

/// The runs measured windows of different lengths.
fn window_differs(a: &Side, b: &Side) -> Option<Finding> {
    let (wa, wb) = (a.measured.window_s, b.measured.window_s);
    if wa <= 0.0 || wb <= 0.0 || (wa.max(wb) / wa.min(wb)) < WINDOW_RATIO {
        return None;
    }
    let (ma, mb) = (&a.mark, &b.mark);
    let title = format!("The window differs: {ma} {wa:.1} s, {mb} {wb:.1} s");
    let mut evidence = vec![of(a, "window", wa, 1, "s"), of(b, "window", wb, 1, "s")];
    for side in [a, b] {
        let select = result(side).and_then(|result| result.workload.operations.get("select"));
        if let Some(select) = select {
            let count = select.latency.count as f64;
            evidence.push(of(side, "selects timed", count, 0, "statements"));
        }
    }
    let why = "Rates compare across windows, but a shorter window times fewer statements or \
               requests: its p99.9 and maximum rest on few of them, and it may miss what a \
               longer one meets (a checkpoint, a cache filling).";
    let id = "compare_window_differs";
    Some(finding(id, Severity::Info, title, evidence, why))
}

/// B ran fewer (or more) sessions than A.
fn sessions_differ(a: &Side, b: &Side) -> Option<Finding> {
    let (sa, sb) = (sessions(&a.recording)?, sessions(&b.recording)?);
    if sa == sb {
        return None;
    }
    let fewer = if sb < sa { "fewer" } else { "more" };
    let (ma, mb) = (&a.mark, &b.mark);
    let title = format!("{mb} had {fewer} sessions: {sb} against {ma}'s {sa}");
    let mut evidence = vec![
        of(a, "sessions", sa, 0, "sessions"),
        of(b, "sessions", sb, 0, "sessions"),
    ];
    for side in [a, b] {
        if let Some(result) = result(side) {
            let loops_per_s = result.workload.loops_per_s;
            evidence.push(of(side, "loops/s", loops_per_s, 1, "loops/s"));
        }
        if let Some(devices) = data_devices(side) {
            evidence.push(of(side, "aqu-sz", devices.aqu_sz, 2, "requests"));
        }
    }
    let why = "Sessions set how many requests are in flight: with fewer, throughput and the \
               device queue fall and latency usually shortens, whatever the storage.";
    let id = "compare_sessions_differ";
    Some(finding(id, Severity::Info, title, evidence, why))
}
