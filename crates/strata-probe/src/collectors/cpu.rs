//! The `cpu` layer: host CPU time and run queue from `/proc/stat` (what
//! `vmstat` and `mpstat` read) and pressure stall information from
//! `/proc/pressure/{cpu,io,memory}`.

use super::{for_each_line, parse_u64, read_if_exists};
use anyhow::{anyhow, bail};
use std::path::Path;
use strata_core::metrics::{Collected, Collector, Metric, CPU_TICK_COUNTERS};
use strata_recording::names::{cpu, label};

const STAT_PATH: &str = "/proc/stat";
const PRESSURE_DIR: &str = "/proc/pressure";
const PSI_RESOURCES: [&str; 3] = ["cpu", "io", "memory"];

/// Layer `cpu`.
///
/// From `/proc/stat`: counters `user_ticks, nice_ticks, system_ticks,
/// idle_ticks, iowait_ticks, irq_ticks, softirq_ticks, steal_ticks` (the
/// aggregate `cpu` line, summed over CPUs, in USER_HZ ticks); gauge
/// `ticks_per_second` (USER_HZ, to turn ticks into seconds); gauges
/// `procs_running` (runnable tasks: running or waiting in a run queue),
/// `procs_blocked` (tasks in uninterruptible I/O wait) and `cpus` (online
/// CPUs, as `/proc/stat` lists them).
///
/// From PSI: counters `pressure_some_us` and `pressure_full_us` (µs some /
/// all non-idle tasks were stalled on the resource), label `resource` =
/// `cpu|io|memory`. PSI is optional: a kernel without `/proc/pressure`, or
/// one booted with `psi=0`, simply gives no `pressure_*` series (the rest of
/// the layer is still reported); a resource whose file is missing or
/// unreadable is left out on its own.
#[derive(Debug, Default)]
pub struct CpuCollector;

impl CpuCollector {
    pub fn new() -> CpuCollector {
        CpuCollector
    }
}

impl Collector for CpuCollector {
    fn layer(&self) -> &'static str {
        "cpu"
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        let Some(text) = read_if_exists(Path::new(STAT_PATH))? else {
            return Ok(Collected::Absent {
                reason: format!("{STAT_PATH} does not exist"),
            });
        };
        let mut metrics = parse_proc_stat(&text)?;
        metrics.push(Metric::gauge("ticks_per_second", ticks_per_second()));
        for resource in PSI_RESOURCES {
            let path = Path::new(PRESSURE_DIR).join(resource);
            // Missing, or EOPNOTSUPP with psi=0: no pressure series for it.
            if let Ok(text) = std::fs::read_to_string(&path) {
                metrics.extend(parse_pressure(resource, &text)?);
            }
        }
        Ok(Collected::Metrics { metrics })
    }
}

/// Parses `/proc/stat`: the aggregate `cpu` line (required, at least 8
/// numbers) into the tick counters, `procs_running` / `procs_blocked` into
/// gauges when present, and the `cpuN` lines into the `cpus` gauge. Other
/// lines (`intr`, `ctxt`, …) are ignored. Errors name the line.
pub fn parse_proc_stat(text: &str) -> anyhow::Result<Vec<Metric>> {
    let mut ticks = None;
    let mut gauges = Vec::new();
    let mut cpus = 0u64;
    for_each_line("stat", text, |line| {
        let mut fields = line.split_whitespace();
        let key = fields.next().unwrap_or("");
        let values: Vec<&str> = fields.collect();
        if key == "cpu" {
            if values.len() < CPU_TICK_COUNTERS.len() {
                bail!(
                    "the cpu line has {} counters, expected at least {}",
                    values.len(),
                    CPU_TICK_COUNTERS.len()
                );
            }
            let parsed = CPU_TICK_COUNTERS
                .iter()
                .zip(&values)
                .map(|(name, field)| Ok(Metric::counter(name, parse_u64(field, name)? as f64)))
                .collect::<anyhow::Result<Vec<Metric>>>()?;
            ticks = Some(parsed);
        } else if key.starts_with("cpu") && key[3..].bytes().all(|b| b.is_ascii_digit()) {
            cpus += 1;
        } else if key == cpu::PROCS_RUNNING || key == "procs_blocked" {
            let [value] = values[..] else {
                bail!("expected \"{key} N\"");
            };
            gauges.push(Metric::gauge(key, parse_u64(value, key)? as f64));
        }
        Ok(())
    })?;
    let mut metrics = ticks.ok_or_else(|| anyhow!("/proc/stat text has no aggregate cpu line"))?;
    metrics.extend(gauges);
    if cpus > 0 {
        metrics.push(Metric::gauge(cpu::CPUS, cpus as f64));
    }
    Ok(metrics)
}

/// Clock ticks per second for /proc's CPU counters (USER_HZ).
pub fn ticks_per_second() -> f64 {
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// Parses one `/proc/pressure/RESOURCE` file
/// (`some avg10=0.00 avg60=0.00 avg300=0.00 total=12345`, and a `full`
/// line) into `pressure_some_us` / `pressure_full_us` counters labelled
/// `resource`. Errors name the line.
pub fn parse_pressure(resource: &str, text: &str) -> anyhow::Result<Vec<Metric>> {
    let mut metrics = Vec::new();
    for_each_line(&format!("pressure/{resource}"), text, |line| {
        let mut fields = line.split_whitespace();
        let name = match fields.next() {
            Some("some") => cpu::PRESSURE_SOME_US,
            Some("full") => "pressure_full_us",
            _ => bail!("expected a \"some\" or \"full\" line"),
        };
        let total = fields
            .find_map(|field| field.strip_prefix("total="))
            .ok_or_else(|| anyhow!("no total= field"))?;
        let value = parse_u64(total, "total")?;
        metrics.push(Metric::counter(name, value as f64).with_label(label::RESOURCE, resource));
        Ok(())
    })?;
    Ok(metrics)
}
