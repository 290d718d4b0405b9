//! The `process` layer: for chosen processes (a database's log writer, its
//! backends), how long they waited for a CPU and how much they read and
//! wrote, logically and physically. A commit wait is not always an I/O wait:
//! `run_delay_ns` is the part spent runnable but queued for a CPU.

use super::{for_each_line, parse_u64};
use anyhow::{anyhow, bail};
use std::collections::{BTreeMap, HashMap};
use std::io::ErrorKind;
use std::path::Path;
use strata_core::metrics::{Collected, Collector, Metric};
use strata_recording::names::process;

/// Field 22 of /proc/PID/stat, counted from the first field after `comm`
/// (field 3).
const STARTTIME_INDEX: usize = 22 - 3;

/// Layer `process`: per PID (labels `pid`, `comm`, and `backend_type` for
/// a PID given one with [`ProcessDelayCollector::with_backend_types`]):
///
/// - from `/proc/PID/task/*/schedstat`, summed over the process's threads:
///   counters `cpu_ns` (field 1, time on a CPU) and `run_delay_ns` (field 2,
///   time runnable but waiting in a run queue). The sum covers the threads
///   alive at the sample: when a thread exits its share leaves the sum, so
///   for a process whose threads come and go the sum can drop (read it as a
///   counter reset). Left out where the kernel has no schedstat
///   (no CONFIG_SCHED_INFO).
/// - from `/proc/PID/io` (the whole process, exited threads included):
///   counters `rchar_bytes`, `wchar_bytes`, `syscr`, `syscw` (logical: every
///   read/write call, page cache hits included) and `read_bytes`,
///   `write_bytes`, `cancelled_write_bytes` (physical: what was sent to the
///   block layer). Left out when not readable (another user's process without
///   CAP_SYS_PTRACE).
///
/// A PID that is gone (no such process, a zombie, or the PID now belongs to
/// a process started after the first sample) is left out; when every PID is
/// gone the layer is `Absent`. With [`ProcessDelayCollector::with_newcomers`]
/// the processes started after the first sample join, and a gone PID is
/// forgotten.
#[derive(Debug)]
pub struct ProcessDelayCollector {
    pids: Vec<u32>,
    newcomers: Option<Newcomers>,
    /// Start time (ticks after boot) of each PID when first seen, to tell a
    /// reused PID from the process we were asked to watch.
    start_times: HashMap<u32, u64>,
    /// What the database says each process is (PostgreSQL's
    /// `backend_type`: `client backend`, `io worker`, …): every server
    /// process has the same `comm`.
    backend_types: BTreeMap<u32, String>,
}

/// Given the PIDs watched, the processes to add, each with its
/// `backend_type`; asked before every sample.
struct Newcomers(Box<NewcomerSource>);

type NewcomerSource = dyn FnMut(&[u32]) -> BTreeMap<u32, String> + Send;

impl std::fmt::Debug for Newcomers {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Newcomers")
    }
}

impl ProcessDelayCollector {
    pub fn new(pids: Vec<u32>) -> ProcessDelayCollector {
        ProcessDelayCollector {
            pids,
            newcomers: None,
            start_times: HashMap::new(),
            backend_types: BTreeMap::new(),
        }
    }

    /// Labels each PID found in `backend_types` with `backend_type`.
    pub fn with_backend_types(mut self, backend_types: BTreeMap<u32, String>) -> Self {
        self.backend_types = backend_types;
        self
    }

    /// Before each sample, adds the processes `newcomers` names, given the
    /// PIDs watched, labelled with the `backend_type` it gives (a server's
    /// backends, started after sampling began); a watched PID that is gone
    /// is forgotten, so that a reused PID joins as the new process.
    pub fn with_newcomers(
        mut self,
        newcomers: impl FnMut(&[u32]) -> BTreeMap<u32, String> + Send + 'static,
    ) -> Self {
        self.newcomers = Some(Newcomers(Box::new(newcomers)));
        self
    }

    fn add_newcomers(&mut self) {
        let Some(Newcomers(newcomers)) = &mut self.newcomers else {
            return;
        };
        for (pid, backend_type) in newcomers(&self.pids) {
            if !self.pids.contains(&pid) {
                self.pids.push(pid);
                self.backend_types.insert(pid, backend_type);
            }
        }
    }

    fn forget(&mut self, pid: u32) {
        self.pids.retain(|watched| *watched != pid);
        self.start_times.remove(&pid);
        self.backend_types.remove(&pid);
    }

    /// The metrics of one process; `Err(reason)` when it is gone.
    fn collect_pid(&mut self, pid: u32) -> Result<Vec<Metric>, String> {
        let proc_dir = Path::new("/proc").join(pid.to_string());
        let stat = std::fs::read_to_string(proc_dir.join("stat")).map_err(|error| {
            if error.kind() == ErrorKind::NotFound {
                format!("{pid}: no such process")
            } else {
                format!("{pid}: {error}")
            }
        })?;
        let (state, start_time) =
            state_and_start_time(&stat).ok_or_else(|| format!("{pid}: unreadable stat"))?;
        if state == 'Z' || state == 'X' {
            return Err(format!("{pid}: exited"));
        }
        let first_start = *self.start_times.entry(pid).or_insert(start_time);
        if first_start != start_time {
            return Err(format!(
                "{pid}: exited (the PID now belongs to another process)"
            ));
        }
        let comm = std::fs::read_to_string(proc_dir.join("comm"))
            .map_err(|error| format!("{pid}: {error}"))?;
        let comm = comm.trim_end_matches('\n');
        let pid_text = pid.to_string();
        let backend_type = self.backend_types.get(&pid);
        let label = |metric: Metric| {
            let metric = metric.with_label("pid", &pid_text).with_label("comm", comm);
            match backend_type {
                Some(kind) => metric.with_label("backend_type", kind),
                None => metric,
            }
        };

        let mut metrics = Vec::new();
        if let Some((cpu_ns, run_delay_ns)) = thread_schedstat_sums(&proc_dir) {
            metrics.push(label(Metric::counter(process::CPU_NS, cpu_ns as f64)));
            metrics.push(label(Metric::counter(
                process::RUN_DELAY_NS,
                run_delay_ns as f64,
            )));
        }
        match std::fs::read_to_string(proc_dir.join("io")) {
            Ok(text) => {
                let fields = parse_proc_io(&text).map_err(|error| format!("{pid}: {error:#}"))?;
                for (key, value) in fields {
                    if let Some(name) = io_metric_name(&key) {
                        metrics.push(label(Metric::counter(name, value as f64)));
                    }
                }
            }
            Err(error) if error.kind() == ErrorKind::NotFound => {
                return Err(format!("{pid}: exited"))
            }
            Err(_) => {} // not ours to read: schedstat only
        }
        if metrics.is_empty() {
            return Err(format!("{pid}: neither schedstat nor io is readable"));
        }
        Ok(metrics)
    }
}

impl Collector for ProcessDelayCollector {
    fn layer(&self) -> &'static str {
        "process"
    }

    fn collect(&mut self) -> anyhow::Result<Collected> {
        self.add_newcomers();
        let mut metrics = Vec::new();
        let mut gone = Vec::new();
        for pid in self.pids.clone() {
            match self.collect_pid(pid) {
                Ok(found) => metrics.extend(found),
                Err(reason) => {
                    gone.push(reason);
                    if self.newcomers.is_some() {
                        self.forget(pid);
                    }
                }
            }
        }
        if metrics.is_empty() {
            let reason = if gone.is_empty() {
                "no processes to watch".to_string()
            } else {
                format!("no watched process is there: {}", gone.join("; "))
            };
            return Ok(Collected::Absent { reason });
        }
        Ok(Collected::Metrics { metrics })
    }
}

/// `/proc/PID/stat`'s state letter and start time; the command name may
/// hold spaces and parentheses, so fields are counted after the last `)`.
fn state_and_start_time(stat: &str) -> Option<(char, u64)> {
    let after_name = stat.get(stat.rfind(')')? + 1..)?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start_time = fields.get(STARTTIME_INDEX)?.parse().ok()?;
    Some((state, start_time))
}

/// Sums of (cpu_ns, run_delay_ns) over the threads in `/proc/PID/task`;
/// `None` when no thread's schedstat could be read.
pub(crate) fn thread_schedstat_sums(proc_dir: &Path) -> Option<(u64, u64)> {
    let entries = std::fs::read_dir(proc_dir.join("task")).ok()?;
    let mut sums = None;
    for entry in entries.flatten() {
        // A thread that exits while we list is simply not counted.
        let Ok(text) = std::fs::read_to_string(entry.path().join("schedstat")) else {
            continue;
        };
        if let Some((cpu_ns, run_delay_ns, _)) = parse_schedstat(&text) {
            let (cpu_sum, delay_sum) = sums.get_or_insert((0u64, 0u64));
            *cpu_sum += cpu_ns;
            *delay_sum += run_delay_ns;
        }
    }
    sums
}

fn io_metric_name(key: &str) -> Option<&'static str> {
    Some(match key {
        "rchar" => "rchar_bytes",
        "wchar" => "wchar_bytes",
        "syscr" => "syscr",
        "syscw" => "syscw",
        "read_bytes" => "read_bytes",
        "write_bytes" => "write_bytes",
        "cancelled_write_bytes" => "cancelled_write_bytes",
        _ => return None,
    })
}

/// Parses a `schedstat` line (`/proc/PID/schedstat` or a thread's): ns on a
/// CPU, ns waiting in a run queue, number of times run. `None` unless it is
/// exactly three numbers.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64, u64)> {
    let mut fields = text.split_whitespace().map(|field| field.parse::<u64>());
    let parsed = (
        fields.next()?.ok()?,
        fields.next()?.ok()?,
        fields.next()?.ok()?,
    );
    fields.next().is_none().then_some(parsed)
}

/// Parses `/proc/PID/io` (`rchar: 6992` lines) into (key, value) pairs in
/// file order. Errors name the line.
pub fn parse_proc_io(text: &str) -> anyhow::Result<Vec<(String, u64)>> {
    let mut fields = Vec::new();
    for_each_line("io", text, |line| {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| anyhow!("expected \"key: value\""))?;
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            bail!("expected a single word before ':'");
        }
        fields.push((key.to_string(), parse_u64(value.trim(), key)?));
        Ok(())
    })?;
    Ok(fields)
}

/// The process exists and is not a zombie: alive, as far as work goes.
pub fn is_running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, None | Some("Z") | Some("X"))
}
