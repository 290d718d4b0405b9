//! CPU time from /proc: the host's (`/proc/stat`) and a process's
//! (`/proc/PID/stat`), as raw tick counters to be turned into shares over an
//! interval, and the host's CPU pressure (`/proc/pressure/cpu`'s `some`
//! total: wall time in which some task waited for a CPU). Not for:
//! per-process run-queue delay (`/proc/PID/schedstat`, the collectors).

use anyhow::Context;

pub use crate::collectors::ticks_per_second;

/// The host's aggregate CPU counters (the `cpu` line of /proc/stat), in ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostCpu {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    /// `/proc/pressure/cpu`'s `some` total, µs; `None` where the kernel
    /// keeps no pressure (PSI off) or the host's counters came without it.
    pub pressure_some_us: Option<u64>,
}

impl HostCpu {
    pub fn read() -> anyhow::Result<HostCpu> {
        let text = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
        let pressure = std::fs::read_to_string("/proc/pressure/cpu").ok();
        Ok(HostCpu {
            pressure_some_us: pressure.and_then(|text| pressure_some_us(&text)),
            ..Self::parse(&text)?
        })
    }

    pub fn parse(stat: &str) -> anyhow::Result<HostCpu> {
        let line = stat
            .lines()
            .find(|line| line.starts_with("cpu "))
            .context("/proc/stat has no aggregate cpu line")?;
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|field| field.parse().unwrap_or(0))
            .collect();
        let field = |index: usize| fields.get(index).copied().unwrap_or(0);
        Ok(HostCpu {
            user: field(0),
            nice: field(1),
            system: field(2),
            idle: field(3),
            iowait: field(4),
            irq: field(5),
            softirq: field(6),
            steal: field(7),
            pressure_some_us: None,
        })
    }

    fn modes(&self) -> [u64; 8] {
        [
            self.user,
            self.nice,
            self.system,
            self.idle,
            self.iowait,
            self.irq,
            self.softirq,
            self.steal,
        ]
    }

    /// The ticks of all modes since `earlier`, and `pick`'s share of them
    /// in percent; `None` where no tick passed or a mode went down (the
    /// host restarted between the two: no share spans that).
    fn share_since(&self, earlier: &HostCpu, pick: fn(&HostCpu) -> u64) -> Option<f64> {
        let (now, then) = (self.modes(), earlier.modes());
        if now.iter().zip(&then).any(|(now, then)| now < then) {
            return None;
        }
        let total: u64 = now.iter().sum::<u64>() - then.iter().sum::<u64>();
        (total > 0).then(|| (pick(self) - pick(earlier)) as f64 * 100.0 / total as f64)
    }

    /// Share of all CPU time that was idle (iowait counts as idle: the CPU
    /// was free to run something) between `earlier` and `self`, in percent;
    /// `None` over no time or across a reset.
    pub fn idle_pct_since(&self, earlier: &HostCpu) -> Option<f64> {
        self.share_since(earlier, |cpu| cpu.idle + cpu.iowait)
    }

    /// Share of `window_s` in which some task waited for a CPU (PSI's
    /// `some`), in percent; `None` without pressure at either edge.
    pub fn pressure_pct_since(&self, earlier: &HostCpu, window_s: f64) -> Option<f64> {
        let waited_us = self
            .pressure_some_us?
            .checked_sub(earlier.pressure_some_us?)?;
        (window_s > 0.0).then(|| waited_us as f64 / (window_s * 1e6) * 100.0)
    }

    /// Share of all CPU time spent in iowait, in percent; `None` over no
    /// time or across a reset.
    pub fn iowait_pct_since(&self, earlier: &HostCpu) -> Option<f64> {
        self.share_since(earlier, |cpu| cpu.iowait)
    }
}

/// The `some` total of a `/proc/pressure/cpu` text, µs.
fn pressure_some_us(text: &str) -> Option<u64> {
    crate::collectors::parse_pressure("cpu", text)
        .ok()?
        .into_iter()
        .find(|metric| metric.name == strata_recording::names::cpu::PRESSURE_SOME_US)
        .map(|metric| metric.value as u64)
}

/// User and system CPU seconds of this whole process (every thread), from
/// getrusage.
pub fn own_cpu_seconds() -> (f64, f64) {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

/// The fields of /proc/PID/stat after the command name, from field 3 on.
fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_fields(&text)
}

/// The fields of a `/proc/PID/stat` text after the command name, from
/// field 3 on, a field that is not a number as 0. The name may hold spaces
/// and parentheses, so fields count from the last `)`; `None` without one.
pub fn parse_stat_fields(text: &str) -> Option<Vec<u64>> {
    let (_, after_name) = text.rsplit_once(')')?;
    Some(
        after_name
            .split_whitespace()
            .map(|field| field.parse().unwrap_or(0))
            .collect(),
    )
}

/// What a process is and when it began, from `/proc/PID/stat`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessStart {
    /// The command name (`comm`, at most 15 bytes).
    pub comm: String,
    pub parent: u32,
    /// When it started, Unix seconds (boot time + field 22), to the tick.
    pub started_unix_s: f64,
}

/// The process `pid` of this machine; `None` when there is none.
pub fn process_start(pid: u32) -> Option<ProcessStart> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok()?;
    parse_process_start(&stat, &boot, ticks_per_second())
}

/// Whether process `pid` sees the mounts this process sees (its
/// `mountinfo`, readable by every user, is the same).
pub fn same_mounts(pid: u32) -> bool {
    let theirs = std::fs::read_to_string(format!("/proc/{pid}/mountinfo"));
    let ours = std::fs::read_to_string("/proc/self/mountinfo");
    matches!((theirs, ours), (Ok(theirs), Ok(ours)) if theirs == ours)
}

/// [`ProcessStart`] from a `/proc/PID/stat` and a `/proc/stat` text.
pub fn parse_process_start(stat: &str, proc_stat: &str, ticks: f64) -> Option<ProcessStart> {
    let comm = stat.split_once('(')?.1.rsplit_once(')')?.0.to_string();
    let fields = parse_stat_fields(stat)?;
    let boot_unix_s: f64 = proc_stat
        .lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    Some(ProcessStart {
        comm,
        parent: u32::try_from(*fields.get(1)?).ok()?,
        started_unix_s: boot_unix_s + *fields.get(19)? as f64 / ticks,
    })
}

/// User and system ticks a process has used (fields 14 and 15 of
/// /proc/PID/stat); None once the process is gone.
pub fn process_cpu_ticks(pid: u32) -> Option<(u64, u64)> {
    let fields = stat_fields(pid)?;
    Some((*fields.get(11)?, *fields.get(12)?))
}

/// User + system ticks of a process's children that exited and were reaped
/// (fields 16 and 17): where a server's finished backends' CPU time goes.
pub fn reaped_children_cpu_ticks(pid: u32) -> Option<u64> {
    let fields = stat_fields(pid)?;
    Some(fields.get(13)?.saturating_add(*fields.get(14)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_cpu_parses_and_idle_share_is_computed() {
        let before = HostCpu::parse("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3\n").unwrap();
        let after = HostCpu::parse("cpu  200 0 100 1000 100 0 0 0 0 0\n").unwrap();
        assert_eq!(after.idle_pct_since(&before), Some(62.5));
        assert_eq!(after.iowait_pct_since(&before), Some(12.5));
        assert_eq!(after.idle_pct_since(&after), None, "no time passed");
        let rebooted = HostCpu {
            user: 1,
            idle: 5,
            ..HostCpu::default()
        };
        assert_eq!(
            rebooted.idle_pct_since(&before),
            None,
            "a reset spans no share"
        );
    }

    #[test]
    fn cpu_pressure_is_the_share_of_the_window_some_task_waited() {
        let psi = |total: u64| {
            format!(
                "some avg10=44.52 avg60=37.65 avg300=25.95 total={total}\n\
                 full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
            )
        };
        let at = |total: u64| HostCpu {
            pressure_some_us: pressure_some_us(&psi(total)),
            ..HostCpu::default()
        };
        assert_eq!(at(389_415_839).pressure_some_us, Some(389_415_839));
        let waited = at(3_000_000).pressure_pct_since(&at(1_000_000), 4.0);
        assert_eq!(waited, Some(50.0));
        assert_eq!(HostCpu::default().pressure_pct_since(&at(0), 4.0), None);
        assert_eq!(pressure_some_us("nonsense"), None);
    }

    /// A name with spaces and parentheses does not shift the fields.
    #[test]
    fn a_process_start_is_its_name_parent_and_boot_plus_ticks() {
        let stat = "4242 (post gres) x) S 77 4242 4242 0 -1 4194560 1 0 0 0 2 3 0 0 20 0 1 0 \
                    1500 1000000 100 18446744073709551615";
        let start = parse_process_start(stat, "cpu  1 2 3\nbtime 1700000000\n", 100.0).unwrap();
        assert_eq!(start.comm, "post gres) x");
        assert_eq!(start.parent, 77);
        assert_eq!(start.started_unix_s, 1_700_000_015.0);
        let own = process_start(std::process::id()).unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(own.started_unix_s <= now + 0.02 && own.started_unix_s > now - 3600.0);
        assert_eq!(own.parent, std::os::unix::process::parent_id());
    }

    #[test]
    fn own_process_ticks_are_read_and_a_gone_process_is_none() {
        // Spin until the kernel has charged this process a tick: on a busy
        // machine a fixed spin may not get the CPU for a whole tick.
        let started = std::time::Instant::now();
        let mut spin = 0u64;
        let ticks = loop {
            let (user, system) = process_cpu_ticks(std::process::id()).unwrap();
            if user + system > 0 || started.elapsed() > std::time::Duration::from_secs(10) {
                break user + system;
            }
            for _ in 0..1_000_000 {
                spin = std::hint::black_box(spin.wrapping_add(1));
            }
        };
        assert!(ticks > 0, "no CPU tick charged after 10 s of spinning");
        assert_eq!(process_cpu_ticks(u32::MAX - 1), None);
        let child = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status();
        assert!(child.unwrap().success());
        assert!(
            reaped_children_cpu_ticks(std::process::id()).unwrap() > 0,
            "the reaped shell's CPU time"
        );
        assert!(HostCpu::read().unwrap().idle > 0);
    }
}
