//! Remote replication over distance (DOMAIN lesson 8): the time of one
//! synchronous remote write, and how many asynchronous writes must be in
//! flight to keep a long link busy.
//!
//! Not for: protocol details beyond "round trips per write" (buffer credits,
//! compression, WAN accelerators) or the array's own queueing.

use crate::{invalid, require_non_negative, require_positive, ModelError};
use serde::Serialize;

/// Light in fibre: about 5 µs per km one way.
pub const DEFAULT_US_PER_KM: f64 = 5.0;

/// How long it takes to put the bytes on the wire.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Transfer {
    /// Measured on a local write: seconds per KiB (1024 bytes).
    PerKib { seconds_per_kib: f64 },
    /// Link bandwidth in bytes per second (size ÷ bandwidth).
    Bandwidth { bytes_per_s: f64 },
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct SyncInput {
    pub size_bytes: f64,
    pub overhead_s: f64,
    pub transfer: Transfer,
    pub distance_km: f64,
    pub round_trips: u32,
    pub us_per_km: f64,
    /// The link, for the share of it one writer uses.
    pub link_bytes_per_s: f64,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct SyncWrite {
    pub overhead_s: f64,
    pub transfer_s: f64,
    pub propagation_s: f64,
    pub total_s: f64,
    /// One outstanding write at a time: 1 / total time.
    pub writes_per_s: f64,
    /// Decimal MB/s (10^6 bytes) of one outstanding writer.
    pub mb_per_s: f64,
    pub link_percent: f64,
}

/// Bytes per second of a link of `gigabits_per_s`; Fibre Channel's 8b/10b
/// encoding carries 10 bits per byte (2 Gb/s ≈ 200 MB/s), Ethernet 8.
pub fn link_bytes_per_s(gigabits_per_s: f64, fibre_channel: bool) -> Result<f64, ModelError> {
    let bits_per_byte = if fibre_channel { 10.0 } else { 8.0 };
    Ok(require_positive("link-gbit", gigabits_per_s)? * 1e9 / bits_per_byte)
}

/// total = overhead + transfer + round trips × 2 × distance × µs per km.
pub fn sync_write(input: SyncInput) -> Result<SyncWrite, ModelError> {
    require_positive("size", input.size_bytes)?;
    require_non_negative("overhead", input.overhead_s)?;
    require_non_negative("distance-km", input.distance_km)?;
    require_positive("us-per-km", input.us_per_km)?;
    require_positive("link-gbit", input.link_bytes_per_s)?;
    if !(1..=2).contains(&input.round_trips) {
        return Err(invalid(
            "round-trips",
            format!("must be 1 or 2, got {}", input.round_trips),
        ));
    }
    let transfer_s = match input.transfer {
        Transfer::PerKib { seconds_per_kib } => {
            input.size_bytes / 1024.0 * require_non_negative("per-kib", seconds_per_kib)?
        }
        Transfer::Bandwidth { bytes_per_s } => {
            input.size_bytes / require_positive("link-gbit", bytes_per_s)?
        }
    };
    let propagation_s =
        f64::from(input.round_trips) * 2.0 * input.distance_km * input.us_per_km * 1e-6;
    let total_s = input.overhead_s + transfer_s + propagation_s;
    let writes_per_s = 1.0 / total_s;
    let bytes_per_s = writes_per_s * input.size_bytes;
    Ok(SyncWrite {
        overhead_s: input.overhead_s,
        transfer_s,
        propagation_s,
        total_s,
        writes_per_s,
        mb_per_s: bytes_per_s / 1e6,
        link_percent: 100.0 * bytes_per_s / input.link_bytes_per_s,
    })
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct AsyncPipe {
    /// Length of fibre one frame occupies: size ÷ bandwidth × speed of light in fibre.
    pub frame_km: f64,
    /// Frames on the fibre in one direction: distance ÷ frame length (DOMAIN's "~25").
    pub frames_one_way: f64,
    /// Writes outstanding to keep the link busy while waiting for each
    /// acknowledgement: ceil(2 × distance ÷ frame length), at least 1.
    pub outstanding_writes: u64,
}

/// How many asynchronous writes of `size_bytes` fill a link of `distance_km`.
pub fn async_pipe(
    size_bytes: f64,
    link_bytes_per_s: f64,
    distance_km: f64,
    us_per_km: f64,
) -> Result<AsyncPipe, ModelError> {
    require_positive("size", size_bytes)?;
    require_positive("link-gbit", link_bytes_per_s)?;
    require_non_negative("distance-km", distance_km)?;
    let km_per_s = 1e6 / require_positive("us-per-km", us_per_km)?;
    let frame_km = size_bytes / link_bytes_per_s * km_per_s;
    let frames_one_way = distance_km / frame_km;
    let outstanding = (2.0 * frames_one_way - 1e-9).ceil().max(1.0);
    Ok(AsyncPipe {
        frame_km,
        frames_one_way,
        outstanding_writes: outstanding as u64,
    })
}

/// Overhead and per-KiB time from two local writes of different sizes
/// (a straight line through (size, time)).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Calibration {
    pub overhead_s: f64,
    pub seconds_per_kib: f64,
}

pub fn calibrate(points: [(f64, f64); 2]) -> Result<Calibration, ModelError> {
    let [(size_a, time_a), (size_b, time_b)] = points;
    if (size_a - size_b).abs() < f64::EPSILON {
        return Err(invalid("calibrate-from", "the two sizes must differ"));
    }
    let seconds_per_kib = (time_b - time_a) / ((size_b - size_a) / 1024.0);
    let overhead_s = time_a - seconds_per_kib * size_a / 1024.0;
    if seconds_per_kib < 0.0 || overhead_s < 0.0 {
        return Err(invalid(
            "calibrate-from",
            "the larger write must take longer, and the line must not cross below zero time",
        ));
    }
    Ok(Calibration {
        overhead_s,
        seconds_per_kib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifty_km_two_kib_one_round_trip() {
        let write = sync_write(SyncInput {
            size_bytes: 2048.0,
            overhead_s: 0.6e-3,
            transfer: Transfer::PerKib {
                seconds_per_kib: 0.027e-3,
            },
            distance_km: 50.0,
            round_trips: 1,
            us_per_km: DEFAULT_US_PER_KM,
            link_bytes_per_s: 200e6,
        })
        .unwrap();
        assert!((write.total_s - 1.154e-3).abs() < 1e-12);
        assert_eq!(write.writes_per_s.round(), 867.0);
    }

    #[test]
    fn two_kib_frame_is_two_km_at_two_gigabit_fibre_channel() {
        let link = link_bytes_per_s(2.0, true).unwrap();
        assert_eq!(link, 200e6);
        let pipe = async_pipe(2048.0, link, 50.0, DEFAULT_US_PER_KM).unwrap();
        assert!((pipe.frame_km - 2.048).abs() < 1e-9);
        assert!((pipe.frames_one_way - 24.41).abs() < 0.01);
        assert_eq!(pipe.outstanding_writes, 49);
        let big = async_pipe(131072.0, link, 50.0, DEFAULT_US_PER_KM).unwrap();
        assert!((big.frame_km - 131.072).abs() < 1e-9);
        assert_eq!(big.outstanding_writes, 1);
    }

    #[test]
    fn calibration_recovers_the_line() {
        let fit = calibrate([(2048.0, 0.654e-3), (65536.0, 2.328e-3)]).unwrap();
        assert!((fit.overhead_s - 0.6e-3).abs() < 1e-9);
        assert!((fit.seconds_per_kib - 0.027e-3).abs() < 1e-12);
        assert!(calibrate([(2048.0, 1.0), (2048.0, 2.0)]).is_err());
    }

    #[test]
    fn negative_distance_names_the_flag() {
        let error = async_pipe(2048.0, 200e6, -1.0, 5.0).unwrap_err();
        assert!(error.to_string().contains("--distance-km"));
    }
}
