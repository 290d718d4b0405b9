//! RAID back-end load: how many I/Os each disk sees for a front-end load,
//! given the write penalty of the RAID level (DOMAIN lesson 7).
//!
//! Not for: stripe-size effects on large requests, caching in the array
//! controller, or full-stripe writes that avoid the penalty.

use crate::{invalid, require_fraction, require_non_negative, require_positive, ModelError};
use serde::Serialize;

/// A RAID level, for its write penalty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RaidLevel {
    Raid0,
    Raid1,
    Raid10,
    Raid5,
    Raid6,
}

impl RaidLevel {
    pub const NAMES: &'static [&'static str] = &["0", "1", "10", "5", "6"];

    pub fn parse(name: &str) -> Option<Self> {
        let name = name
            .trim()
            .trim_start_matches("raid")
            .trim_start_matches("RAID");
        match name {
            "0" => Some(Self::Raid0),
            "1" => Some(Self::Raid1),
            "10" | "1+0" => Some(Self::Raid10),
            "5" => Some(Self::Raid5),
            "6" => Some(Self::Raid6),
            _ => None,
        }
    }

    /// The fewest disks the level is made of, and what they hold.
    pub fn fewest_disks(self) -> (u32, &'static str) {
        match self {
            Self::Raid0 => (1, "a stripe of one disk or more"),
            Self::Raid1 => (2, "a mirror of two disks or more"),
            Self::Raid10 => (4, "mirrored pairs, striped: an even count of four or more"),
            Self::Raid5 => (3, "at least two disks of data and one of parity"),
            Self::Raid6 => (4, "at least two disks of data and two of parity"),
        }
    }

    /// Refuses a disk count this level cannot be made of, naming `--disks`.
    pub fn check_disks(self, disks: u32) -> Result<(), ModelError> {
        let (fewest, made_of) = self.fewest_disks();
        let odd = self == Self::Raid10 && disks % 2 == 1;
        if disks < fewest || odd {
            return Err(invalid(
                "disks",
                format!("{disks} cannot make {}: it is {made_of}", self.label()),
            ));
        }
        Ok(())
    }

    /// `disks`, or more where the level needs more (its fewest; an even
    /// count for RAID 10).
    pub fn at_least(self, disks: u32) -> u32 {
        let disks = disks.max(self.fewest_disks().0);
        match self {
            Self::Raid10 => disks.next_multiple_of(2),
            _ => disks,
        }
    }

    /// "RAID 5".
    pub fn label(self) -> &'static str {
        match self {
            Self::Raid0 => "RAID 0",
            Self::Raid1 => "RAID 1",
            Self::Raid10 => "RAID 10",
            Self::Raid5 => "RAID 5",
            Self::Raid6 => "RAID 6",
        }
    }

    /// Back-end I/Os per front-end write: RAID 5 reads data and parity and
    /// writes both (4); RAID 6 has two parities (6); mirrors write twice (2).
    pub fn write_penalty(self) -> f64 {
        match self {
            Self::Raid0 => 1.0,
            Self::Raid1 | Self::Raid10 => 2.0,
            Self::Raid5 => 4.0,
            Self::Raid6 => 6.0,
        }
    }
}

/// The front-end load and the array shape.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RaidInput {
    pub front_end_iops: f64,
    pub read_fraction: f64,
    pub write_penalty: f64,
    pub disks: u32,
}

/// The back-end load of one combination of inputs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RaidLoad {
    pub front_end_iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub write_penalty: f64,
    pub disks: u32,
    pub back_end_iops: f64,
    pub back_end_iops_per_disk: f64,
}

fn check_load(
    front_end_iops: f64,
    read_fraction: f64,
    write_penalty: f64,
) -> Result<(), ModelError> {
    require_non_negative("iops", front_end_iops)?;
    require_fraction("read-pct", read_fraction)?;
    if !(write_penalty.is_finite() && write_penalty >= 1.0) {
        return Err(invalid(
            "write-penalty",
            format!("must be at least 1, got {write_penalty}"),
        ));
    }
    Ok(())
}

/// Back-end IOPS per disk = (reads + penalty × writes) / disks.
pub fn back_end_load(input: RaidInput) -> Result<RaidLoad, ModelError> {
    check_load(
        input.front_end_iops,
        input.read_fraction,
        input.write_penalty,
    )?;
    if input.disks == 0 {
        return Err(invalid("disks", "there must be at least 1 disk"));
    }
    let read_iops = input.front_end_iops * input.read_fraction;
    let write_iops = input.front_end_iops - read_iops;
    let back_end_iops = read_iops + input.write_penalty * write_iops;
    Ok(RaidLoad {
        front_end_iops: input.front_end_iops,
        read_iops,
        write_iops,
        write_penalty: input.write_penalty,
        disks: input.disks,
        back_end_iops,
        back_end_iops_per_disk: back_end_iops / f64::from(input.disks),
    })
}

/// The fewest disks that keep each one at or under `ceiling_iops_per_disk`:
/// ceil((reads + penalty × writes) / ceiling), at least 1.
pub fn min_disks(
    front_end_iops: f64,
    read_fraction: f64,
    write_penalty: f64,
    ceiling_iops_per_disk: f64,
) -> Result<u32, ModelError> {
    check_load(front_end_iops, read_fraction, write_penalty)?;
    require_positive("ceiling", ceiling_iops_per_disk)?;
    let reads = front_end_iops * read_fraction;
    let back_end_iops = reads + write_penalty * (front_end_iops - reads);
    let disks = (back_end_iops / ceiling_iops_per_disk - 1e-9)
        .ceil()
        .max(1.0);
    u32::try_from(disks as u64).map_err(|_| invalid("iops", "needs more than 4 billion disks"))
}

/// Per-disk ceiling from a service time: one disk does 1 / service time IOPS.
pub fn ceiling_from_service_time(service_time_s: f64) -> Result<f64, ModelError> {
    Ok(1.0 / require_positive("service-time", service_time_s)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raid5_ten_columns_eighty_percent_reads() {
        let load = back_end_load(RaidInput {
            front_end_iops: 1000.0,
            read_fraction: 0.8,
            write_penalty: RaidLevel::Raid5.write_penalty(),
            disks: 10,
        })
        .unwrap();
        assert!((load.back_end_iops - 1600.0).abs() < 1e-9);
        assert!((load.back_end_iops_per_disk - 160.0).abs() < 1e-9);
    }

    #[test]
    fn a_level_is_refused_on_fewer_disks_than_it_is_made_of() {
        let error = RaidLevel::Raid5.check_disks(2).unwrap_err().to_string();
        assert!(error.contains("--disks"), "{error}");
        assert!(error.contains("2 cannot make RAID 5"), "{error}");
        assert!(RaidLevel::Raid6.check_disks(3).is_err());
        assert!(RaidLevel::Raid10.check_disks(5).is_err());
        assert!(RaidLevel::Raid1.check_disks(1).is_err());
        assert!(RaidLevel::Raid5.check_disks(3).is_ok());
        assert!(RaidLevel::Raid0.check_disks(1).is_ok());
        assert_eq!(RaidLevel::Raid6.at_least(1), 4);
        assert_eq!(RaidLevel::Raid10.at_least(5), 6);
        assert_eq!(RaidLevel::Raid5.at_least(11), 11);
    }

    #[test]
    fn min_disks_inverts_the_load() {
        assert_eq!(min_disks(1000.0, 0.8, 4.0, 160.0).unwrap(), 10);
        assert_eq!(min_disks(1000.0, 0.8, 4.0, 150.0).unwrap(), 11);
        assert_eq!(min_disks(0.0, 0.8, 4.0, 150.0).unwrap(), 1);
    }

    #[test]
    fn penalties_and_bad_inputs() {
        assert_eq!(RaidLevel::parse("10").unwrap().write_penalty(), 2.0);
        assert_eq!(RaidLevel::parse("raid6").unwrap().write_penalty(), 6.0);
        assert!(RaidLevel::parse("4").is_none());
        let zero = back_end_load(RaidInput {
            front_end_iops: 1.0,
            read_fraction: 0.5,
            write_penalty: 2.0,
            disks: 0,
        });
        assert!(zero.unwrap_err().to_string().contains("--disks"));
        assert!((ceiling_from_service_time(0.006).unwrap() - 166.666).abs() < 0.01);
    }
}
