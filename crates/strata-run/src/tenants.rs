//! Who else used the storage in the window: where the block layer is
//! traced, the bytes of the requests each process submitted on the run's
//! devices (exact: [`traced`]); elsewhere every process's bytes sent to
//! and fetched from the block layer (`read_bytes` and `write_bytes` of
//! `/proc/PID/io`, as pidstat -d and iotop read them), at both edges
//! ([`attribute`]); attributed to the server's processes, strata's own,
//! and everyone else.
//! A backup, a second database or a `cp` on the same disk is then named,
//! not counted as what the storage did for the database.
//!
//! Without the trace: `/proc/PID/io` does not say which device a process used: another process
//! counts only when it has a file open on the run's devices (a file on a
//! filesystem there, or the device itself), and its bytes are all its
//! bytes. Shares are of the devices' bytes, or of the server's, strata's
//! and those others' bytes where they are more: a server process that
//! exited before the end edge (a session's backend once its client left)
//! is in one snapshot only, its bytes unseen, but the devices did them. Kernel
//! threads are left out (their writeback is on others' behalf); a process
//! that started and ended inside the window is in neither snapshot, and a
//! reaped child's bytes are its parent's (as the kernel adds them).

use std::collections::{BTreeMap, BTreeSet};
use strata_probe::collectors::parse_proc_io;
use strata_probe::diskstats::IostatFigures;
pub use strata_recording::run::{
    OtherProcess, TenantFigures, TracedProcess, COUNTED_BY_PROC_IO, COUNTED_BY_TRACE,
};

/// How many of the other processes are named, largest first.
const NAMED_OTHERS: usize = 3;
/// Others below this share of the bytes are not named (a few KiB of logs).
const NAMED_SHARE_PCT: f64 = 0.1;

/// One process's name and cumulative block-layer bytes.
#[derive(Clone, Debug, Default, PartialEq)]
struct ProcessBytes {
    name: String,
    read_bytes: u64,
    write_bytes: u64,
}

/// Every readable process's block-layer bytes at one edge.
#[derive(Clone, Debug, Default)]
pub struct ProcessIoSnapshot {
    by_pid: BTreeMap<u32, ProcessBytes>,
}

impl ProcessIoSnapshot {
    /// Reads `/proc/[pid]/io` and `/proc/[pid]/comm` of every process;
    /// processes that exit while being read are skipped.
    pub fn read() -> ProcessIoSnapshot {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return ProcessIoSnapshot::default();
        };
        let by_pid = entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| Some((pid, process_bytes(pid)?)))
            .collect();
        ProcessIoSnapshot { by_pid }
    }
}

/// `None` for kernel threads (no command line): their writeback is done
/// for others, and counting it would name the kernel as a tenant.
fn process_bytes(pid: u32) -> Option<ProcessBytes> {
    if is_kernel_thread(pid)? {
        return None;
    }
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    let fields = parse_proc_io(&io).ok()?;
    let field = |name: &str| {
        fields
            .iter()
            .find_map(|(key, value)| (key == name).then_some(*value))
    };
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    Some(ProcessBytes {
        name: name.trim().to_string(),
        read_bytes: field("read_bytes")?,
        write_bytes: field("write_bytes")?,
    })
}

/// Attributes the window's bytes; `server` holds the server's pids (seen
/// at either edge), `strata` strata's own; `on_run_devices` says whether
/// another process has a file open on the run's devices (others that do
/// not are busy elsewhere and are left out).
pub fn attribute(
    start: &ProcessIoSnapshot,
    end: &ProcessIoSnapshot,
    server: &BTreeSet<u32>,
    strata: u32,
    devices: &[IostatFigures],
    on_run_devices: &dyn Fn(u32) -> bool,
) -> TenantFigures {
    let device_bytes: u64 = devices
        .iter()
        .map(|device| device.read_bytes + device.write_bytes)
        .sum();
    let mut server_bytes = 0;
    let mut strata_bytes = 0;
    let mut others = Vec::new();
    for (&pid, after) in &end.by_pid {
        let before = start
            .by_pid
            .get(&pid)
            .filter(|before| before.name == after.name);
        let read = after.read_bytes - before.map_or(0, |b| b.read_bytes.min(after.read_bytes));
        let write = after.write_bytes - before.map_or(0, |b| b.write_bytes.min(after.write_bytes));
        match pid {
            _ if pid == strata => strata_bytes += read + write,
            _ if server.contains(&pid) => server_bytes += read + write,
            _ if read + write > 0 && on_run_devices(pid) => {
                others.push((pid, after.name.clone(), read, write))
            }
            _ => {}
        }
    }
    let counted = Counted {
        device_bytes,
        server_bytes,
        strata_bytes,
        kernel_bytes: 0,
        others,
    };
    counted.figures(COUNTED_BY_PROC_IO)
}

/// The window's bytes as the tracer counted them on the run's devices,
/// under the process that submitted each request: the server's (a
/// process strata gave a role, or one of `server`), strata's, the kernel's
/// threads' (writeback), and the others'.
pub fn traced(
    processes: &[TracedProcess],
    server: &BTreeSet<u32>,
    strata: u32,
    devices: &[IostatFigures],
) -> TenantFigures {
    let mut counted = Counted {
        device_bytes: devices
            .iter()
            .map(|device| device.read_bytes + device.write_bytes)
            .sum(),
        ..Counted::default()
    };
    let mut others: BTreeMap<u32, (String, u64, u64)> = BTreeMap::new();
    for process in processes {
        let (read, write) = match process.operation.as_str() {
            "read" => (process.bytes, 0),
            _ => (0, process.bytes),
        };
        match process.pid {
            pid if pid == strata => counted.strata_bytes += read + write,
            pid if server.contains(&pid) || !process.role.is_empty() => {
                counted.server_bytes += read + write
            }
            pid if by_a_kernel_thread(pid, &process.command) => {
                counted.kernel_bytes += read + write
            }
            pid => {
                let other = others.entry(pid).or_insert((process.command.clone(), 0, 0));
                other.1 += read;
                other.2 += write;
            }
        }
    }
    counted.others = others
        .into_iter()
        .filter(|(_, (_, read, write))| read + write > 0)
        .map(|(pid, (name, read, write))| (pid, name, read, write))
        .collect();
    counted.figures(COUNTED_BY_TRACE)
}

/// Whether `pid` is a kernel thread (no command line); `None` when it is
/// gone.
fn is_kernel_thread(pid: u32) -> Option<bool> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(cmdline.is_empty())
}

/// A kernel thread, or, gone, one by its name (a flusher's, a journal's).
fn by_a_kernel_thread(pid: u32, command: &str) -> bool {
    is_kernel_thread(pid).unwrap_or_else(|| {
        ["kworker", "jbd2", "kswapd", "writeback"]
            .iter()
            .any(|prefix| command.starts_with(prefix))
    })
}

/// Bytes by whose they were, before shares are taken.
#[derive(Default)]
struct Counted {
    device_bytes: u64,
    server_bytes: u64,
    strata_bytes: u64,
    kernel_bytes: u64,
    /// (pid, name, read bytes, write bytes)
    others: Vec<(u32, String, u64, u64)>,
}

impl Counted {
    fn figures(mut self, counted_by: &str) -> TenantFigures {
        let other_bytes: u64 = self
            .others
            .iter()
            .map(|(_, _, read, write)| read + write)
            .sum();
        let processes = self.server_bytes + self.strata_bytes + self.kernel_bytes + other_bytes;
        let share = |bytes: u64| match self.device_bytes.max(processes) {
            0 => 0.0,
            total => bytes as f64 * 100.0 / total as f64,
        };
        self.others
            .sort_by_key(|(_, _, read, write)| std::cmp::Reverse(read + write));
        let top_others = self
            .others
            .iter()
            .filter(|(_, _, read, write)| share(read + write) >= NAMED_SHARE_PCT)
            .take(NAMED_OTHERS)
            .map(|(pid, name, read, write)| OtherProcess {
                pid: *pid,
                name: name.clone(),
                read_bytes: *read,
                write_bytes: *write,
                share_pct: share(read + write),
            })
            .collect();
        TenantFigures {
            device_bytes: self.device_bytes,
            server_bytes: self.server_bytes,
            strata_bytes: self.strata_bytes,
            other_bytes,
            other_share_pct: share(other_bytes),
            top_others,
            counted_by: counted_by.to_string(),
            kernel_bytes: self.kernel_bytes,
        }
    }
}

/// Whether process `pid` has a file open on one of `devices` (physical
/// device names, as the run's device table has them): a file on a
/// filesystem there, or the block device itself.
pub fn has_open_file_on(pid: u32, devices: &BTreeSet<String>) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(descriptors) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let mut numbers = BTreeSet::new();
    for descriptor in descriptors.flatten() {
        if let Ok(metadata) = std::fs::metadata(descriptor.path()) {
            let number = match metadata.file_type().is_block_device() {
                true => metadata.rdev(),
                false => metadata.dev(),
            };
            numbers.insert(number);
        }
    }
    numbers.into_iter().any(|number| {
        let (major, minor) = (libc::major(number), libc::minor(number));
        strata_probe::blockdev::device_by_number(major, minor)
            .and_then(|device| strata_probe::blockdev::physical_devices(&device))
            .is_ok_and(|physical| physical.iter().any(|device| devices.contains(&device.name)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(entries: &[(u32, &str, u64, u64)]) -> ProcessIoSnapshot {
        ProcessIoSnapshot {
            by_pid: entries
                .iter()
                .map(|&(pid, name, read_bytes, write_bytes)| {
                    let bytes = ProcessBytes {
                        name: name.into(),
                        read_bytes,
                        write_bytes,
                    };
                    (pid, bytes)
                })
                .collect(),
        }
    }

    fn device(read_bytes: u64, write_bytes: u64) -> IostatFigures {
        IostatFigures {
            device: "vda".into(),
            role: "data".to_string(),
            read_bytes,
            write_bytes,
            ..IostatFigures::default()
        }
    }

    #[test]
    fn others_are_named_with_their_share_of_every_process_bytes() {
        let start = snapshot(&[
            (1, "postgres", 0, 0),
            (2, "dd", 100, 0),
            (3, "strata", 0, 0),
        ]);
        let end = snapshot(&[
            (1, "postgres", 600, 0),
            (2, "dd", 500, 0),
            (3, "strata", 0, 0),
            (4, "cp", 50, 50),
            (5, "idle", 0, 0),
        ]);
        let everywhere = |_| true;
        let tenants = attribute(
            &start,
            &end,
            &BTreeSet::from([1]),
            3,
            &[device(1000, 0)],
            &everywhere,
        );
        assert_eq!(tenants.server_bytes, 600);
        assert_eq!(tenants.other_bytes, 500);
        assert_eq!(tenants.other_share_pct, 500.0 * 100.0 / 1100.0);
        let names: Vec<&str> = tenants.top_others.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["dd", "cp"]);
        assert_eq!(tenants.top_others[0].share_pct, 400.0 * 100.0 / 1100.0);
        let named = tenants.named_others();
        assert!(
            named.starts_with("dd (pid 2) 0.0 MB, 36.4%; cp (pid 4)"),
            "{named}"
        );
    }

    #[test]
    fn a_backend_gone_by_the_end_edge_leaves_its_bytes_to_the_devices() {
        let start = snapshot(&[(1, "postgres", 0, 0), (7, "postgres", 1 << 30, 0)]);
        let end = snapshot(&[(1, "postgres", 0, 0), (2, "postgres", 0, 8192)]);
        let tenants = attribute(
            &start,
            &end,
            &BTreeSet::from([1, 7]),
            3,
            &[device(1 << 30, 8192)],
            &|_| true,
        );
        assert_eq!(tenants.server_bytes, 0);
        assert_eq!(tenants.other_bytes, 8192);
        let expected = 8192.0 * 100.0 / ((1u64 << 30) + 8192) as f64;
        assert_eq!(tenants.other_share_pct, expected);
    }

    #[test]
    fn a_pid_reused_by_another_program_counts_from_zero() {
        let start = snapshot(&[(9, "old", 1000, 0)]);
        let end = snapshot(&[(9, "new", 10, 0)]);
        let tenants = attribute(&start, &end, &BTreeSet::new(), 1, &[device(10, 0)], &|_| {
            true
        });
        assert_eq!(tenants.other_bytes, 10);
        let elsewhere = attribute(&start, &end, &BTreeSet::new(), 1, &[device(10, 0)], &|_| {
            false
        });
        assert_eq!(elsewhere.other_bytes, 0);
    }

    fn traced_process(pid: u32, command: &str, role: &str, op: &str, bytes: u64) -> TracedProcess {
        TracedProcess {
            pid,
            command: command.into(),
            role: role.into(),
            device: "vda".into(),
            operation: op.into(),
            bytes,
            ..TracedProcess::default()
        }
    }

    #[test]
    fn traced_bytes_go_to_their_submitter_the_kernel_s_threads_apart() {
        let strata = std::process::id();
        let processes = [
            traced_process(10, "postgres", "client backend", "read", 6_000_000),
            traced_process(11, "postgres", "", "write", 1_000_000),
            traced_process(strata, "strata", "", "read", 500_000),
            traced_process(4242, "dd", "", "read", 2_000_000),
            traced_process(4242, "dd", "", "write", 400_000),
            traced_process(u32::MAX, "kworker/u8:1", "", "write", 100_000),
        ];
        let server = BTreeSet::from([11]);
        let figures = traced(&processes, &server, strata, &[device(8_500_000, 1_500_000)]);
        assert_eq!(figures.counted_by, COUNTED_BY_TRACE);
        assert_eq!(
            (
                figures.server_bytes,
                figures.strata_bytes,
                figures.other_bytes
            ),
            (7_000_000, 500_000, 2_400_000)
        );
        assert_eq!(figures.kernel_bytes, 100_000, "a gone kworker by its name");
        assert_eq!(figures.other_share_pct, 24.0);
        let dd = &figures.top_others[0];
        assert_eq!((dd.pid, dd.name.as_str()), (4242, "dd"));
        assert_eq!((dd.read_bytes, dd.write_bytes), (2_000_000, 400_000));
    }
}
