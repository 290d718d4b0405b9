//! `strata observe --top N`: two scans of /proc turned into each process's
//! rates over the interval between them (device MB/s and system calls per
//! second, % of one CPU, run-queue delay), ranked by device MB/s read +
//! written, then by CPU. A process is the pair (PID, start time): a PID
//! reused between scans is a new process, never a negative delta; one that
//! started after the previous scan is counted from zero; one that exited is
//! left out. Where the block layer is traced, each process's block
//! requests per second (every device) and their mean device time come from
//! the tracer's per-process counts, exact, and rank the processes first.
//!
//! Not for: reading /proc (`strata_probe::top`) or printing (`view`).

use std::collections::HashMap;
use std::time::Instant;
use strata_probe::blocktrace::{Op, TraceSnapshot};
use strata_probe::top::{IoCounters, ProcessCounters, ProcessScan};
pub use strata_recording::top::{TopProcess, TopProcesses};

/// The previous scan (and trace), to compare the next with.
pub struct TopTracker {
    limit: u32,
    previous: Option<(Instant, ProcessScan)>,
    previous_trace: Option<TraceSnapshot>,
}

/// One process's block requests over an interval, traced.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TracedRequests {
    pub reads: u64,
    pub writes: u64,
    /// Every request's (flushes' and discards' too) count and device time.
    pub requests: u64,
    pub device_ns: u64,
}

/// Each process's (tgid's) requests between two snapshots of the tracer.
pub fn traced_by_process(window: &TraceSnapshot) -> HashMap<u32, TracedRequests> {
    let mut by_process: HashMap<u32, TracedRequests> = HashMap::new();
    for (key, totals) in &window.processes {
        let traced = by_process.entry(key.tgid).or_default();
        match key.op {
            Op::Read => traced.reads += totals.requests,
            Op::Write => traced.writes += totals.requests,
            _ => {}
        }
        traced.requests += totals.requests;
        traced.device_ns += totals.device_ns;
    }
    by_process
}

impl TopTracker {
    pub fn new(limit: u32) -> TopTracker {
        TopTracker {
            limit,
            previous: None,
            previous_trace: None,
        }
    }

    /// Scans /proc (and reads the block tracer, where it runs); the top
    /// processes since the previous scan (`None` the first time), for the
    /// sample taken at `t_s`.
    pub fn next(&mut self, t_s: f64) -> Option<TopProcesses> {
        let now = Instant::now();
        let scan = strata_probe::top::scan();
        let trace = strata_probe::blocktrace::shared::peek();
        let traced = match (&self.previous_trace, &trace) {
            (Some(before), Some(after)) => Some(traced_by_process(&after.since(before))),
            _ => None,
        };
        self.previous_trace = trace;
        let previous = self.previous.replace((now, scan));
        let (then, before) = previous?;
        let (_, after) = self.previous.as_ref()?;
        let interval = Interval {
            seconds: (now - then).as_secs_f64(),
            ends_at_t_s: t_s,
            traced: traced.as_ref(),
        };
        Some(top_between(&before, after, &interval, self.limit))
    }
}

/// The interval between two scans: its length, the sample it ends at, and
/// each process's traced requests in it where the block layer is traced.
pub struct Interval<'a> {
    pub seconds: f64,
    pub ends_at_t_s: f64,
    pub traced: Option<&'a HashMap<u32, TracedRequests>>,
}

/// The `limit` busiest processes of `after` over the interval since
/// `before`.
pub fn top_between(
    before: &ProcessScan,
    after: &ProcessScan,
    interval: &Interval,
    limit: u32,
) -> TopProcesses {
    let interval_s = interval.seconds;
    let by_pid: HashMap<u32, &ProcessCounters> =
        before.processes.iter().map(|p| (p.pid, p)).collect();
    let started_since = |process: &ProcessCounters| {
        process.start_ticks as f64 / after.ticks_per_second >= before.uptime_s
    };
    let mut processes: Vec<TopProcess> = after
        .processes
        .iter()
        .filter_map(|process| {
            let baseline = match by_pid.get(&process.pid) {
                Some(seen) if seen.start_ticks == process.start_ticks => Some(*seen),
                _ if started_since(process) => None,
                _ => return None,
            };
            let mut rates = rates(baseline, process, interval_s, after.ticks_per_second);
            if let Some(traced) = interval.traced {
                with_traced_requests(&mut rates, traced.get(&process.pid), interval_s);
            }
            Some(rates)
        })
        .collect();
    let processes_seen = processes.len() as u32;
    let io_unreadable = processes
        .iter()
        .filter(|p| p.read_mb_per_s.is_none())
        .count() as u32;
    processes.sort_by(|a, b| {
        b.traced_requests_per_s()
            .total_cmp(&a.traced_requests_per_s())
            .then(b.device_mb_per_s().total_cmp(&a.device_mb_per_s()))
            .then(b.cpu_pct.total_cmp(&a.cpu_pct))
            .then(a.pid.cmp(&b.pid))
    });
    processes.truncate(limit as usize);
    let ranked_by = match interval.traced {
        Some(_) => "block requests per second (traced), then device MB/s, then CPU",
        None => "device MB/s read + written (/proc/PID/io), then CPU",
    };
    TopProcesses {
        t_s: interval.ends_at_t_s,
        interval_s,
        limit,
        processes_seen,
        io_unreadable,
        processes,
        ranked_by: ranked_by.to_string(),
    }
}

/// The process's traced requests per second and their mean device time
/// (none in the interval: 0 per second, no mean).
fn with_traced_requests(
    process: &mut TopProcess,
    traced: Option<&TracedRequests>,
    interval_s: f64,
) {
    let traced = traced.copied().unwrap_or_default();
    process.traced_read_requests_per_s = Some(traced.reads as f64 / interval_s);
    process.traced_write_requests_per_s = Some(traced.writes as f64 / interval_s);
    process.traced_device_time_mean_ms =
        (traced.requests > 0).then(|| traced.device_ns as f64 / traced.requests as f64 / 1e6);
}

/// One process's rates since `baseline`, or since its start (every
/// counter from zero) when it has none.
fn rates(
    baseline: Option<&ProcessCounters>,
    now: &ProcessCounters,
    interval_s: f64,
    ticks_per_second: f64,
) -> TopProcess {
    let zero = ProcessCounters {
        io: now.io.map(|io| IoCounters {
            read_bytes: 0,
            write_bytes: 0,
            syscr: io.syscr.map(|_| 0),
            syscw: io.syscw.map(|_| 0),
        }),
        run_delay_ns: now.run_delay_ns.map(|_| 0),
        ..Default::default()
    };
    let then = baseline.unwrap_or(&zero);
    let per_s = |before: Option<u64>, after: Option<u64>| {
        Some(after?.checked_sub(before?)? as f64 / interval_s)
    };
    let io = |field: fn(&IoCounters) -> Option<u64>| {
        per_s(
            then.io.as_ref().and_then(field),
            now.io.as_ref().and_then(field),
        )
    };
    TopProcess {
        pid: now.pid,
        start_ticks: now.start_ticks,
        command: now.command.clone(),
        database: now.database.map(str::to_string),
        role: now.role.clone(),
        read_mb_per_s: io(|io| Some(io.read_bytes)).map(|bytes| bytes / 1e6),
        write_mb_per_s: io(|io| Some(io.write_bytes)).map(|bytes| bytes / 1e6),
        read_syscalls_per_s: io(|io| io.syscr),
        write_syscalls_per_s: io(|io| io.syscw),
        cpu_pct: per_s(Some(then.cpu_ticks), Some(now.cpu_ticks))
            .map_or(0.0, |ticks| ticks * 100.0 / ticks_per_second),
        run_delay_ms_per_s: per_s(then.run_delay_ns, now.run_delay_ns).map(|ns| ns / 1e6),
        traced_read_requests_per_s: None,
        traced_write_requests_per_s: None,
        traced_device_time_mean_ms: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: u32, start_ticks: u64, read_bytes: u64, cpu_ticks: u64) -> ProcessCounters {
        ProcessCounters {
            pid,
            start_ticks,
            command: format!("p{pid}"),
            cpu_ticks,
            run_delay_ns: Some(cpu_ticks * 1_000_000),
            io: Some(IoCounters {
                read_bytes,
                write_bytes: 0,
                syscr: Some(read_bytes / 4096),
                syscw: None,
            }),
            ..Default::default()
        }
    }

    fn untraced(seconds: f64, ends_at_t_s: f64) -> Interval<'static> {
        Interval {
            seconds,
            ends_at_t_s,
            traced: None,
        }
    }

    /// A scan at `uptime_s` after boot (100 ticks per second).
    fn scan(uptime_s: f64, processes: Vec<ProcessCounters>) -> ProcessScan {
        ProcessScan {
            uptime_s,
            ticks_per_second: 100.0,
            processes,
        }
    }

    #[test]
    fn a_reused_pid_is_a_new_process_and_an_exited_one_is_dropped() {
        let before = scan(
            100.0,
            vec![process(7, 50, 9_000_000_000, 900), process(8, 60, 10, 10)],
        );
        // PID 7 exited and was reused at 100.5 s by a process that read 2 MB;
        // PID 8 exited.
        let after = scan(101.0, vec![process(7, 10_050, 2_000_000, 20)]);
        let top = top_between(&before, &after, &untraced(1.0, 1.0), 5);
        assert_eq!(top.processes.len(), 1, "{top:#?}");
        let reused = &top.processes[0];
        assert_eq!((reused.pid, reused.start_ticks), (7, 10_050));
        assert_eq!(reused.read_mb_per_s, Some(2.0));
        assert_eq!(reused.cpu_pct, 20.0, "20 ticks of 100 per second");
        assert_eq!(reused.read_syscalls_per_s, Some(488.0));
        assert_eq!(reused.write_syscalls_per_s, None, "no syscw given");
    }

    #[test]
    fn a_process_already_there_but_unseen_waits_for_its_second_scan() {
        let before = scan(100.0, vec![]);
        let after = scan(101.0, vec![process(9, 5_000, 4_000_000, 10)]);
        let top = top_between(&before, &after, &untraced(1.0, 1.0), 5);
        assert!(top.processes.is_empty(), "{top:#?}");
        assert_eq!(top.processes_seen, 0);
    }

    #[test]
    fn ranked_by_device_bytes_then_cpu_and_unreadable_io_is_none() {
        let mut hidden = process(3, 10, 0, 0);
        hidden.io = None;
        let before = scan(
            100.0,
            vec![process(1, 10, 0, 0), process(2, 10, 0, 0), hidden.clone()],
        );
        hidden.cpu_ticks = 90;
        let after = scan(
            102.0,
            vec![process(1, 10, 0, 150), process(2, 10, 8_000_000, 2), hidden],
        );
        let top = top_between(&before, &after, &untraced(2.0, 2.0), 2);
        let pids: Vec<u32> = top.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [2, 1], "bytes first, then CPU; limited to 2");
        assert_eq!(top.processes[0].read_mb_per_s, Some(4.0));
        assert_eq!(top.processes[1].cpu_pct, 75.0);
        assert_eq!((top.processes_seen, top.io_unreadable), (3, 1));
        let all = top_between(&before, &after, &untraced(2.0, 2.0), 5);
        let hidden = all.processes.iter().find(|p| p.pid == 3).unwrap();
        assert_eq!((hidden.read_mb_per_s, hidden.write_mb_per_s), (None, None));
        assert_eq!(hidden.cpu_pct, 45.0);
    }

    #[test]
    fn traced_requests_rank_first_and_say_so() {
        let before = scan(100.0, vec![process(1, 10, 0, 0), process(2, 10, 0, 0)]);
        let after = scan(
            102.0,
            vec![process(1, 10, 90_000_000, 0), process(2, 10, 0, 0)],
        );
        let traced = HashMap::from([(
            2,
            TracedRequests {
                reads: 600,
                writes: 200,
                requests: 801,
                device_ns: 801 * 250_000,
            },
        )]);
        let interval = Interval {
            seconds: 2.0,
            ends_at_t_s: 2.0,
            traced: Some(&traced),
        };
        let top = top_between(&before, &after, &interval, 5);
        let pids: Vec<u32> = top.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [2, 1], "traced requests before bytes");
        let first = &top.processes[0];
        assert_eq!(first.traced_read_requests_per_s, Some(300.0));
        assert_eq!(first.traced_write_requests_per_s, Some(100.0));
        assert_eq!(first.traced_device_time_mean_ms, Some(0.25));
        let second = &top.processes[1];
        assert_eq!(second.traced_read_requests_per_s, Some(0.0));
        assert_eq!(second.traced_device_time_mean_ms, None);
        assert!(top
            .ranked_by
            .starts_with("block requests per second (traced)"));
        let untraced = top_between(&before, &after, &untraced(2.0, 2.0), 5);
        assert_eq!(untraced.processes[0].pid, 1);
        assert_eq!(untraced.processes[0].traced_read_requests_per_s, None);
    }

    #[test]
    fn a_run_delay_that_drops_with_an_exited_thread_is_unknown() {
        let before = scan(100.0, vec![process(4, 10, 0, 50)]);
        let mut after = process(4, 10, 0, 60);
        after.run_delay_ns = Some(1);
        let top = top_between(&before, &scan(101.0, vec![after]), &untraced(1.0, 1.0), 5);
        assert_eq!(top.processes[0].run_delay_ms_per_s, None);
        assert_eq!(top.processes[0].cpu_pct, 10.0);
    }
}
