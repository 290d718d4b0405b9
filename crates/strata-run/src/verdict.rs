//! The one verdict every run ends with: a storage result; not a storage
//! result, with every reason that applies and its figures; or failed, with
//! the cause. It is the first line of the run's output, a named field of its
//! JSON and Recording, and the first line of `strata report`.
//!
//! Not for: computing the figures it judges (`accounting`), or the exit
//! code it leads to (the binary: failed 1; not a storage result 0, or 3
//! with `--strict`).

use crate::accounting::{
    RunFigures, ABSORBED_WARNING_PCT as ABSORBED_LIMIT_PCT, CPU_BOUND_IDLE_PCT,
};
use strata_core::units::format_size;
pub use strata_core::verdict::{Reason, Verdict};

/// Above this share of the devices' bytes done by other processes, the
/// devices did not serve the database alone.
pub const OTHER_PROCESSES_LIMIT_PCT: f64 = 5.0;
/// Fewer device read and write requests than this in the window are too
/// few for rates and latencies to mean anything.
pub const MIN_DEVICE_REQUESTS: f64 = 1000.0;
/// A start edge later than this and than [`LATE_EDGE_SHARE`] of the window
/// fails the run.
pub const LATE_EDGE_S: f64 = 1.0;
pub const LATE_EDGE_SHARE: f64 = 0.05;

/// The database's own cache beside the data set, when the engine knows both.
#[derive(Clone, Debug)]
pub struct CacheFit {
    /// The setting's name as its users write it (`shared_buffers`,
    /// `innodb_buffer_pool_size`, SQLite's `cache_size`).
    pub setting: &'static str,
    pub cache_bytes: u64,
    pub data_set_bytes: u64,
}

/// What the engine knows beyond the figures.
#[derive(Clone, Debug, Default)]
pub struct VerdictFacts {
    pub cache: Option<CacheFit>,
    /// The throwaway server died in the window (what and which pid).
    pub server_death: Option<String>,
    /// The kernel's OOM killer ended a process ([`crate::edge::oom_cause`]).
    pub oom_kill: Option<String>,
    /// The server's start time moved between the edges
    /// ([`crate::edge::restart_between`]).
    pub server_restart: Option<String>,
    /// `--tolerate-failures`: failed sessions do not fail the run.
    pub tolerate_failures: bool,
    /// Why the database's counters at an edge of the window are missing.
    pub missing_counters: Option<String>,
}

/// Judges one window.
pub fn judge(figures: &RunFigures, facts: &VerdictFacts) -> Verdict {
    Verdict::of(
        failures(figures, facts),
        not_storage_reasons(figures, facts),
    )
}

fn failures(figures: &RunFigures, facts: &VerdictFacts) -> Vec<String> {
    let mut causes = Vec::new();
    if let Some(death) = &facts.server_death {
        causes.push(death.clone());
    }
    if let Some(restart) = &facts.server_restart {
        causes.push(restart.clone());
    }
    if let Some(oom_kill) = &facts.oom_kill {
        causes.push(oom_kill.clone());
    }
    if let Some(late) = late_start_edge(figures) {
        causes.push(late);
    }
    let sessions = &figures.sessions;
    if sessions.reconnects > 0 {
        let when = sessions
            .first_connection_lost
            .as_ref()
            .map_or(String::new(), |(seconds, why)| {
                format!(" {seconds:.1} s after the start ({why})")
            });
        causes.push(format!(
            "the server dropped the sessions' connections{when}: a restart, crash recovery or a \
             lost network; they reconnected {} times, and counters from both sides of it are \
             not one run",
            sessions.reconnects
        ));
    }
    if sessions.failed > 0 && !facts.tolerate_failures {
        let first = sessions
            .failures
            .first()
            .map_or(String::new(), |first| format!(" (first: {first})"));
        causes.push(format!(
            "{} of {} sessions failed{first}; --tolerate-failures accepts that",
            sessions.failed, sessions.started
        ));
    }
    if let Some(missing) = &facts.missing_counters {
        causes.push(format!(
            "the database's counters at an edge of the window are missing: {}",
            what_and_why(missing)
        ));
    }
    causes
}

/// An error chain's first part (what was being done) and last (why),
/// without the statements between them.
fn what_and_why(error: &str) -> String {
    let parts: Vec<&str> = error.split(": ").collect();
    match parts.as_slice() {
        [what, .., why] if parts.len() > 2 => format!("{what}: {why}"),
        _ => error.to_string(),
    }
}

/// A start edge taken more than a second and 5% of the window late: its
/// counters are not the window's.
fn late_start_edge(figures: &RunFigures) -> Option<String> {
    let late_s = figures.start_edge_late_s;
    (late_s > LATE_EDGE_S && late_s > figures.window_s * LATE_EDGE_SHARE).then(|| {
        format!(
            "the window's start edge was taken {late_s:.1} s after the window began (of \
             {:.1} s): the host was too busy to take it on time, so the counters are not the \
             window's",
            figures.window_s
        )
    })
}

fn not_storage_reasons(figures: &RunFigures, facts: &VerdictFacts) -> Vec<Reason> {
    if let Some(why) = &figures.devices_unobserved {
        let unobserved = Reason::new(
            "devices_not_observed",
            format!("the server's host's devices are not in these figures: {why}"),
        );
        return cache_reason(facts)
            .into_iter()
            .chain([unobserved])
            .collect();
    }
    [
        cache_reason(facts),
        absorption_reason(figures),
        cpu_reason(figures),
        tenants_reason(figures),
        too_few_requests_reason(figures),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn reason(code: &str, text: String) -> Option<Reason> {
    Some(Reason::new(code, text))
}

impl CacheFit {
    /// "the data set (…) fits in the database's cache (setting = …)", when
    /// it does.
    pub fn fits(&self) -> Option<String> {
        (self.data_set_bytes <= self.cache_bytes).then(|| {
            format!(
                "the data set ({}) fits in the database's cache ({} = {})",
                format_size(self.data_set_bytes),
                self.setting,
                format_size(self.cache_bytes)
            )
        })
    }

    /// On a user's server (`--db`), before the run: the warning that the
    /// run will measure the cache, when the data set fits in it.
    pub fn warn_before_the_run(&self) {
        if let Some(fits) = self.fits() {
            let _ = std::io::Write::write_fmt(
                &mut std::io::stderr().lock(),
                format_args!(
                    "strata: warning: {fits}: its reads will be cache hits and the verdict \
                     \"not a storage result\"; give a larger --scale or --schemas\n"
                ),
            );
        }
    }
}

fn cache_reason(facts: &VerdictFacts) -> Option<Reason> {
    let fits = facts.cache.as_ref()?.fits()?;
    reason(
        "data_set_fits_in_database_cache",
        format!("{fits}: its reads are cache hits"),
    )
}

fn absorption_reason(figures: &RunFigures) -> Option<Reason> {
    let absorption = figures
        .absorption
        .as_ref()
        .filter(|absorption| absorption.absorbed_pct > ABSORBED_LIMIT_PCT)?;
    reason(
        "page_cache_absorbed_reads",
        format!(
            "the page cache absorbed {:.1}% of the database's block reads ({:.0} of {:.0} \
             blocks), over {ABSORBED_LIMIT_PCT:.0}%",
            absorption.absorbed_pct, absorption.absorbed_blocks, absorption.database_blocks_read
        ),
    )
}

fn cpu_reason(figures: &RunFigures) -> Option<Reason> {
    let idle = figures.cpu.host_idle_pct?;
    (idle < CPU_BOUND_IDLE_PCT).then_some(())?;
    reason(
        "cpu_bound",
        format!(
            "the host was {idle:.1}% idle (under {CPU_BOUND_IDLE_PCT:.0}%): the run measured the CPU"
        ),
    )
}

fn tenants_reason(figures: &RunFigures) -> Option<Reason> {
    let tenants = figures
        .tenants
        .as_ref()
        .filter(|tenants| tenants.other_share_pct > OTHER_PROCESSES_LIMIT_PCT)?;
    reason(
        "other_processes",
        format!(
            "other processes on the run's devices did {:.1}% of the bytes read and written in \
             the window (over {OTHER_PROCESSES_LIMIT_PCT:.0}%; {}): {}",
            tenants.other_share_pct,
            tenants.counted_by,
            tenants.named_others()
        ),
    )
}

fn too_few_requests_reason(figures: &RunFigures) -> Option<Reason> {
    let requests = device_requests(figures);
    (requests < MIN_DEVICE_REQUESTS).then_some(())?;
    reason(
        "too_few_device_requests",
        format!(
            "the devices served {requests:.0} requests in the {:.1} s window (fewer than \
             {MIN_DEVICE_REQUESTS:.0}): too few for rates and latencies to mean anything",
            figures.window_s
        ),
    )
}

/// Read and write requests of the run's devices over the window.
fn device_requests(figures: &RunFigures) -> f64 {
    figures
        .devices
        .iter()
        .map(|device| (device.read_requests + device.write_requests) as f64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::what_and_why;

    #[test]
    fn a_missing_edge_says_what_and_why_without_the_statement() {
        assert_eq!(
            what_and_why("reading counters: SELECT (blks_read)::float8 FROM x: connection closed"),
            "reading counters: connection closed"
        );
        assert_eq!(what_and_why("connection closed"), "connection closed");
    }
}
