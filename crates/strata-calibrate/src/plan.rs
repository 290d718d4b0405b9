//! The planner: turns a workload name, a sweep or the default profile into
//! the list of points to run. The ORION matrix is documented here and in
//! `docs/calibrate.md`: small-I/O outstanding levels 0, 1, 2, 4, … up to
//! `max_qd` (the last level is `max_qd` itself even when it is not a power of
//! two) × large streams 0, 1, … `max_streams`, without the empty (0, 0) cell,
//! ordered row by row (large streams outer, small levels inner).
//!
//! Not for: validating user input (the CLI does it before planning) or
//! running anything.

use crate::spec::{AccessPattern, Distribution, GroupSpec, MatrixCell, PointSpec, SyncMode};
use strata_core::units::{KIB, MIB};

/// The named workloads, each standing for one kind of database I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// 8 KiB random reads: single-block index reads.
    SmallRandomRead,
    /// 1 MiB sequential reads: scans and multiblock reads.
    LargeRead,
    /// 8 KiB random writes: the database writer.
    RandomWrite,
    /// Small sequential writes, each durable: the commit log.
    LogWrite,
    /// 8 KiB random reads and writes (`--read-pct`, default 70).
    Mixed,
}

impl Workload {
    pub const NAMES: &'static [&'static str] = &[
        "small-random-read",
        "large-read",
        "random-write",
        "log-write",
        "mixed",
    ];

    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "small-random-read" => Workload::SmallRandomRead,
            "large-read" => Workload::LargeRead,
            "random-write" => Workload::RandomWrite,
            "log-write" => Workload::LogWrite,
            "mixed" => Workload::Mixed,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The workload's own shape before any override.
    pub fn base_group(self) -> GroupSpec {
        let uniform = AccessPattern::Random {
            distribution: Distribution::Uniform,
        };
        let (label, block_size, read_pct, pattern, sync) = match self {
            Workload::SmallRandomRead => ("small", 8 * KIB, 100.0, uniform, SyncMode::None),
            Workload::LargeRead => (
                "large",
                MIB,
                100.0,
                AccessPattern::Sequential,
                SyncMode::None,
            ),
            Workload::RandomWrite => ("small", 8 * KIB, 0.0, uniform, SyncMode::None),
            Workload::LogWrite => (
                "log",
                8 * KIB,
                0.0,
                AccessPattern::Sequential,
                SyncMode::Fdatasync,
            ),
            Workload::Mixed => ("small", 8 * KIB, 70.0, uniform, SyncMode::None),
        };
        GroupSpec {
            label: label.to_string(),
            block_size_bytes: block_size as u32,
            read_pct,
            pattern,
            queue_depth: 1,
            jobs: 1,
            sync,
            rate_iops: None,
        }
    }
}

/// Free-form settings that replace a workload's own.
#[derive(Clone, Debug, Default)]
pub struct GroupOverrides {
    pub block_size_bytes: Option<u32>,
    /// (read percentage, random?) from `--rw`.
    pub rw: Option<(f64, bool)>,
    pub read_pct: Option<f64>,
    pub queue_depth: Option<usize>,
    pub jobs: Option<usize>,
    pub distribution: Option<Distribution>,
    pub rate_iops: Option<f64>,
    pub sync: Option<SyncMode>,
}

impl GroupOverrides {
    pub fn apply(&self, mut group: GroupSpec) -> GroupSpec {
        if let Some((read_pct, random)) = self.rw {
            group.read_pct = read_pct;
            group.pattern = if random {
                AccessPattern::Random {
                    distribution: Distribution::Uniform,
                }
            } else {
                AccessPattern::Sequential
            };
        }
        if let (Some(distribution), AccessPattern::Random { .. }) =
            (&self.distribution, &group.pattern)
        {
            group.pattern = AccessPattern::Random {
                distribution: distribution.clone(),
            };
        }
        group.block_size_bytes = self.block_size_bytes.unwrap_or(group.block_size_bytes);
        group.read_pct = self.read_pct.unwrap_or(group.read_pct);
        group.queue_depth = self.queue_depth.unwrap_or(group.queue_depth);
        group.jobs = self.jobs.unwrap_or(group.jobs);
        group.rate_iops = self.rate_iops.or(group.rate_iops);
        group.sync = self.sync.unwrap_or(group.sync);
        group
    }
}

fn point_name(group: &GroupSpec) -> String {
    format!(
        "{} {} bs={} qd={}{}",
        group.label,
        group.rw_name(),
        strata_core::units::format_size(u64::from(group.block_size_bytes)).replace(' ', ""),
        group.queue_depth,
        if group.jobs > 1 {
            format!(" jobs={}", group.jobs)
        } else {
            String::new()
        }
    )
}

/// One point running one workload.
pub fn workload_point(workload: Workload, overrides: &GroupOverrides) -> PointSpec {
    let group = overrides.apply(workload.base_group());
    PointSpec {
        name: point_name(&group),
        cell: None,
        groups: vec![group],
    }
}

/// The ORION matrix.
#[derive(Clone, Debug)]
pub struct SweepOptions {
    pub max_qd: usize,
    pub max_streams: usize,
    /// Shape of the small I/O (block size, read share, distribution).
    pub small: GroupOverrides,
    pub large_block_size_bytes: u32,
}

/// 0, 1, 2, 4, … up to and including `max_qd`.
pub fn small_levels(max_qd: usize) -> Vec<usize> {
    let mut levels = vec![0];
    let mut level = 1;
    while level < max_qd {
        levels.push(level);
        level *= 2;
    }
    levels.push(max_qd);
    levels.dedup();
    levels
}

pub fn sweep_points(options: &SweepOptions) -> Vec<PointSpec> {
    let mut points = Vec::new();
    for large_streams in 0..=options.max_streams {
        for &small_outstanding in &small_levels(options.max_qd) {
            if small_outstanding == 0 && large_streams == 0 {
                continue;
            }
            let cell = MatrixCell {
                small_outstanding,
                large_streams,
            };
            points.push(sweep_point(options, cell));
        }
    }
    points
}

fn sweep_point(options: &SweepOptions, cell: MatrixCell) -> PointSpec {
    let mut groups = Vec::new();
    if cell.small_outstanding > 0 {
        let small = GroupOverrides {
            queue_depth: Some(cell.small_outstanding),
            jobs: Some(1),
            ..options.small.clone()
        };
        groups.push(small.apply(Workload::SmallRandomRead.base_group()));
    }
    if cell.large_streams > 0 {
        let mut large = Workload::LargeRead.base_group();
        large.block_size_bytes = options.large_block_size_bytes;
        large.jobs = cell.large_streams;
        large.read_pct = options.small.read_pct.unwrap_or(100.0);
        groups.push(large);
    }
    PointSpec {
        name: format!(
            "small={} large={}",
            cell.small_outstanding, cell.large_streams
        ),
        cell: Some(cell),
        groups,
    }
}

/// The default when no workload is named: one short look at each kind of
/// database I/O. Log writes only where the target may be written.
pub fn profile_points(writable: bool) -> Vec<PointSpec> {
    let small = |queue_depth| GroupOverrides {
        queue_depth: Some(queue_depth),
        ..GroupOverrides::default()
    };
    let mut points = vec![
        workload_point(Workload::SmallRandomRead, &small(1)),
        workload_point(Workload::SmallRandomRead, &small(32)),
        workload_point(Workload::LargeRead, &small(4)),
    ];
    if writable {
        points.push(workload_point(
            Workload::LogWrite,
            &GroupOverrides::default(),
        ));
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_levels_are_powers_of_two_then_the_maximum() {
        assert_eq!(small_levels(32), vec![0, 1, 2, 4, 8, 16, 32]);
        assert_eq!(small_levels(24), vec![0, 1, 2, 4, 8, 16, 24]);
        assert_eq!(small_levels(1), vec![0, 1]);
    }

    #[test]
    fn sweep_matrix_is_the_documented_one() {
        let options = SweepOptions {
            max_qd: 4,
            max_streams: 2,
            small: GroupOverrides::default(),
            large_block_size_bytes: MIB as u32,
        };
        let cells: Vec<(usize, usize)> = sweep_points(&options)
            .iter()
            .map(|point| {
                let cell = point.cell.unwrap();
                (cell.large_streams, cell.small_outstanding)
            })
            .collect();
        assert_eq!(
            cells,
            vec![
                (0, 1),
                (0, 2),
                (0, 4),
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 4),
                (2, 0),
                (2, 1),
                (2, 2),
                (2, 4)
            ]
        );
        let mixed = &sweep_points(&options)[6];
        assert_eq!(mixed.groups.len(), 2);
        assert_eq!(mixed.groups[0].queue_depth, 4);
        assert_eq!(mixed.groups[0].block_size_bytes, 8192);
        assert_eq!(mixed.groups[1].jobs, 1);
        assert_eq!(mixed.groups[1].block_size_bytes, 1 << 20);
        assert_eq!(mixed.groups[1].pattern, AccessPattern::Sequential);
    }

    #[test]
    fn overrides_replace_the_workload_shape() {
        let overrides = GroupOverrides {
            block_size_bytes: Some(4096),
            rw: Some((0.0, false)),
            queue_depth: Some(8),
            ..GroupOverrides::default()
        };
        let point = workload_point(Workload::SmallRandomRead, &overrides);
        let group = &point.groups[0];
        assert_eq!(
            (group.block_size_bytes, group.queue_depth, group.rw_name()),
            (4096, 8, "write")
        );
        assert_eq!(point.name, "small write bs=4KiB qd=8");
    }
}
