//! A target on a mount of the kernel's NFS client (`--target
//! /mnt/filer/file`): the mount it lies on (the longest NFS mount point of
//! `/proc/self/mountstats` above it), and per point that mount's
//! per-operation counters over the window, as nfsiostat shows them — so a
//! calibration through the kernel's client stands beside one through
//! strata's own (`nfs://`), Direct NFS's bake-off. Where the kernel has no
//! NFS client, [`kernel_client_absent`] says so by name.
//!
//! Not for: reading mountstats' lines (strata-probe's `nfs` collector).

use std::collections::BTreeMap;
use std::path::Path;
use strata_core::metrics::Metric;
use strata_probe::collectors::{parse_mountstats, MOUNTSTATS_PATH};
use strata_recording::calibrate::{KernelNfsFigures, KernelNfsOp};

/// The NFS mount a target lies on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelMount {
    pub mount: String,
    pub server: String,
    pub export: String,
}

/// A mount's counters at one edge: by operation, by counter name.
pub type MountCounters = BTreeMap<String, BTreeMap<String, f64>>;

/// The NFS mount `path` lies on, from a mountstats text; `None` when it
/// lies on none (or the text does not read).
pub fn mount_of(path: &Path, mountstats: &str) -> Option<KernelMount> {
    let metrics = parse_mountstats(mountstats).ok()?;
    let label = |metric: &Metric, key: &str| metric.labels.get(key).cloned().unwrap_or_default();
    metrics
        .iter()
        .filter(|metric| path.starts_with(label(metric, "mount")))
        .max_by_key(|metric| label(metric, "mount").len())
        .map(|metric| KernelMount {
            mount: label(metric, "mount"),
            server: label(metric, "server"),
            export: label(metric, "export"),
        })
}

/// The NFS mount `path` lies on now.
pub fn mount_of_path(path: &Path) -> Option<KernelMount> {
    let path = std::fs::canonicalize(path).ok()?;
    mount_of(&path, &std::fs::read_to_string(MOUNTSTATS_PATH).ok()?)
}

/// Why there is no kernel client here to calibrate beside strata's, by
/// name; `None` when the kernel has one (or may load it).
pub fn kernel_client_absent() -> Option<String> {
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if filesystems
        .split_whitespace()
        .any(|name| name == "nfs" || name == "nfs4")
    {
        return None;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let modules = Path::new("/lib/modules").join(release.trim());
    if modules.join("kernel/fs/nfs").exists() {
        return None;
    }
    Some(format!(
        "this kernel ({}) has no NFS client: no nfs in /proc/filesystems and no nfs module in {}, \
         so no mount of the export can be calibrated beside strata's own client here",
        release.trim(),
        modules.display()
    ))
}

impl KernelMount {
    /// The mount's counters in a mountstats text.
    pub fn counters_in(&self, mountstats: &str) -> MountCounters {
        let mut counters = MountCounters::new();
        for metric in parse_mountstats(mountstats).unwrap_or_default() {
            if metric.labels.get("mount") != Some(&self.mount) {
                continue;
            }
            let Some(op) = metric.labels.get("op") else {
                continue;
            };
            let by_name = counters.entry(op.clone()).or_default();
            by_name.insert(metric.name, metric.value);
        }
        counters
    }

    /// The mount's counters now (none when mountstats does not read).
    pub fn counters_now(&self) -> MountCounters {
        let text = std::fs::read_to_string(MOUNTSTATS_PATH).unwrap_or_default();
        self.counters_in(&text)
    }

    /// The operations the mount made between the edges, each as
    /// nfsiostat shows it; an operation whose counter went down (a
    /// remount) is left out.
    pub fn figures(
        &self,
        start: &MountCounters,
        end: &MountCounters,
        window_s: f64,
    ) -> KernelNfsFigures {
        let ops = end
            .iter()
            .filter_map(|(op, after)| operation(op, start.get(op)?, after, window_s))
            .filter(|op| op.ops > 0)
            .collect();
        KernelNfsFigures {
            mount: self.mount.clone(),
            server: self.server.clone(),
            export: self.export.clone(),
            ops,
        }
    }
}

fn operation(
    op: &str,
    before: &BTreeMap<String, f64>,
    after: &BTreeMap<String, f64>,
    window_s: f64,
) -> Option<KernelNfsOp> {
    let moved = |name: &str| -> Option<u64> {
        let (before, after) = (before.get(name)?, after.get(name)?);
        (after >= before).then(|| (after - before) as u64)
    };
    let ops = moved("ops")?;
    let per_op = |name: &str| Some(moved(name)? as f64 / ops.max(1) as f64);
    Some(KernelNfsOp {
        op: op.to_string(),
        ops,
        ops_per_s: if window_s > 0.0 {
            ops as f64 / window_s
        } else {
            0.0
        },
        bytes_sent: moved("bytes_sent")?,
        bytes_received: moved("bytes_received")?,
        retransmissions: moved("transmissions")?.saturating_sub(ops),
        timeouts: moved("timeouts")?,
        queue_ms: per_op("queue_ms")?,
        rtt_ms: per_op("rtt_ms")?,
        execute_ms: per_op("execute_ms")?,
        errors: moved("errors"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mountstats(read: &str, write: &str) -> String {
        format!(
            "device /dev/vda1 mounted on / with fstype ext4\n\
             device nas01:/export/oradata mounted on /u02/oradata with fstype nfs4 statvers=1.1\n\
             \tper-op statistics\n\
             \t        READ: {read}\n\
             \t       WRITE: {write}\n\
             device nas01:/export mounted on /u02 with fstype nfs statvers=1.1\n\
             \tper-op statistics\n\
             \t        READ: 9 9 0 9 9 9 9 9 0\n"
        )
    }

    #[test]
    fn a_target_lies_on_its_longest_nfs_mount() {
        let text = mountstats("0 0 0 0 0 0 0 0 0", "0 0 0 0 0 0 0 0 0");
        let mount = mount_of(Path::new("/u02/oradata/strata.dat"), &text).unwrap();
        assert_eq!(mount.mount, "/u02/oradata");
        assert_eq!(
            (mount.server.as_str(), mount.export.as_str()),
            ("nas01", "/export/oradata")
        );
        assert_eq!(mount_of(Path::new("/u02/x"), &text).unwrap().mount, "/u02");
        assert_eq!(
            mount_of(Path::new("/u020/x"), &text),
            None,
            "a prefix of a name is not a mount"
        );
        assert_eq!(mount_of(Path::new("/var/lib/x"), &text), None);
    }

    /// 1,000 READs of 8 KiB between the edges, 3 of them sent twice; a
    /// WRITE counter that went down is left out.
    #[test]
    fn a_window_is_nfsiostat_s_columns_per_operation() {
        let mount = mount_of(
            Path::new("/u02/oradata/f"),
            &mountstats("0 0 0 0 0 0 0 0 0", "0 0 0 0 0 0 0 0 0"),
        )
        .unwrap();
        let start = mount.counters_in(&mountstats(
            "100 100 0 15000 820000 10 200 250 0",
            "50 50 0 9 9 9 9 9 0",
        ));
        let end = mount.counters_in(&mountstats(
            "1100 1103 1 165000 9028000 510 900 1500 2",
            "40 40 0 9 9 9 9 9 0",
        ));
        let figures = mount.figures(&start, &end, 2.0);
        assert_eq!(figures.ops.len(), 1, "{figures:?}");
        let read = &figures.ops[0];
        assert_eq!(
            (read.op.as_str(), read.ops, read.ops_per_s),
            ("READ", 1000, 500.0)
        );
        assert_eq!(
            (read.retransmissions, read.timeouts, read.errors),
            (3, 1, Some(2))
        );
        assert_eq!((read.bytes_sent, read.bytes_received), (150_000, 8_208_000));
        assert_eq!(
            (read.queue_ms, read.rtt_ms, read.execute_ms),
            (0.5, 0.7, 1.25)
        );
    }
}
