//! Value parsers for the options of `strata model`: pure string → value
//! functions that a command line (clap's `value_parser`) calls, so that a
//! bad value is refused by the option's name, with the accepted forms,
//! before any model runs. Each error is the message the user reads.
//!
//! Not for: values in strata's units alone (sizes, durations, percentages:
//! `strata_core::input`), checking a value against the others (the models
//! do that, with a [`crate::ModelError`] naming the option), or reading
//! files.

use crate::flash_cache::Skew;
use crate::queue::Centre;
use strata_core::input::{bounded, duration, percent, size, zipf_theta};

/// A percentage, 0-100, as a fraction 0-1.
pub fn fraction(input: &str) -> Result<f64, String> {
    percent(input).map(|percent| percent / 100.0)
}

/// Percentages as fractions, comma-separated.
pub fn fractions(input: &str) -> Result<Vec<f64>, String> {
    list_of(input, fraction)
}

/// The largest number a model's option takes: beyond any storage's IOPS,
/// any link's Gb/s or any distance on Earth, and far from where the
/// arithmetic would overflow to infinity.
const LARGEST: f64 = 1e12;

/// A finite number, 0 to [`LARGEST`].
pub fn non_negative(input: &str) -> Result<f64, String> {
    let value: f64 = input
        .trim()
        .parse()
        .ok()
        .filter(|value: &f64| value.is_finite())
        .ok_or_else(|| format!("'{input}' is not a finite number"))?;
    if value < 0.0 {
        return Err(format!("must not be negative, got {input}"));
    }
    if value > LARGEST {
        return Err(format!(
            "'{input}' is larger than any model here takes (at most {LARGEST:e})"
        ));
    }
    Ok(value)
}

/// A finite number above 0.
pub fn positive(input: &str) -> Result<f64, String> {
    match non_negative(input)? {
        0.0 => Err("must be above 0".to_string()),
        value => Ok(value),
    }
}

/// `N`, or `FROM-TO:STEP` (e.g. 500-2000:500).
pub fn number_range(input: &str) -> Result<Vec<f64>, String> {
    let Some((span, step)) = input.split_once(':') else {
        return Ok(vec![non_negative(input)?]);
    };
    let (from, to) = span
        .split_once('-')
        .ok_or_else(|| format!("'{input}' is not N or FROM-TO:STEP"))?;
    let (from, to, step) = (non_negative(from)?, non_negative(to)?, positive(step)?);
    if to < from || (to - from) / step > 10_000.0 {
        return Err(format!(
            "'{input}': TO must be ≥ FROM, with at most 10000 steps"
        ));
    }
    let steps = ((to - from) / step + 1e-9).floor() as usize;
    Ok((0..=steps).map(|i| from + step * i as f64).collect())
}

/// Comma-separated list, each element by `element`.
pub fn list_of<T>(
    input: &str,
    element: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    input.split(',').map(|item| element(item.trim())).collect()
}

/// Disk counts, comma-separated, each 1 to 1,000,000.
pub fn disk_counts(input: &str) -> Result<Vec<u32>, String> {
    list_of(input, |item| {
        bounded(item, 1, 1_000_000)
            .map(|n| n as u32)
            .map_err(|error| format!("{error} (there must be at least 1 disk)"))
    })
}

/// Queue depths, comma-separated, each 1 to 4096.
pub fn queue_depths(input: &str) -> Result<Vec<u32>, String> {
    list_of(input, |depth| bounded(depth, 1, 4096).map(|n| n as u32))
}

/// Sizes (8k, 10g), comma-separated.
pub fn sizes(input: &str) -> Result<Vec<u64>, String> {
    list_of(input, size)
}

/// Two local writes, `SIZE1=TIME1,SIZE2=TIME2`, as (bytes, seconds).
pub fn calibration_points(input: &str) -> Result<[(f64, f64); 2], String> {
    let points = list_of(input, |pair| {
        let (size_text, time) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}' is not SIZE=TIME"))?;
        Ok((size(size_text)? as f64, duration(time)?.as_secs_f64()))
    })?;
    <[(f64, f64); 2]>::try_from(points).map_err(|_| "give exactly two SIZE=TIME points".to_string())
}

/// Service centres of a closed system, `NAME=DEMAND,…` (cpu=20ms,disk=30ms).
pub fn centre_list(input: &str) -> Result<Vec<Centre>, String> {
    list_of(input, |pair| {
        let (name, time) = pair
            .split_once('=')
            .ok_or_else(|| format!("'{pair}' is not NAME=TIME"))?;
        Ok(Centre {
            name: name.trim().to_string(),
            demand_s: duration(time)?.as_secs_f64(),
        })
    })
}

/// Access skew: `uniform`, or `zipf:THETA` with THETA above 0, at most 10.
pub fn skew(input: &str) -> Result<Skew, String> {
    match input.trim().split_once(':') {
        None if input.trim() == "uniform" => Ok(Skew::Uniform),
        Some(("zipf", theta)) => zipf_theta(theta).map(|theta| Skew::Zipf { theta }),
        _ => Err(format!("'{input}' is not uniform or zipf:THETA")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_lists() {
        assert_eq!(
            number_range("500-2000:500"),
            Ok(vec![500.0, 1000.0, 1500.0, 2000.0])
        );
        assert_eq!(number_range("7"), Ok(vec![7.0]));
        assert!(number_range("2000-500:500")
            .unwrap_err()
            .contains("TO must be ≥ FROM"));
        assert_eq!(disk_counts("8, 10,12"), Ok(vec![8, 10, 12]));
        assert!(disk_counts("0")
            .unwrap_err()
            .ends_with("(there must be at least 1 disk)"));
        assert_eq!(fractions("50,95"), Ok(vec![0.5, 0.95]));
    }

    #[test]
    fn numbers_past_any_storage_are_refused_before_they_overflow() {
        let error = non_negative("1e308").unwrap_err();
        assert!(
            error.contains("larger than any model here takes"),
            "{error}"
        );
        assert!(number_range("1e13").is_err());
        assert_eq!(non_negative("1e12"), Ok(1e12));
    }

    #[test]
    fn numbers_are_finite_and_signed_as_asked() {
        assert_eq!(
            non_negative("nan"),
            Err("'nan' is not a finite number".to_string())
        );
        assert_eq!(
            non_negative("-5"),
            Err("must not be negative, got -5".to_string())
        );
        assert_eq!(positive("0"), Err("must be above 0".to_string()));
        assert_eq!(fraction("80"), Ok(0.8));
    }

    #[test]
    fn pairs_and_skew() {
        let points = calibration_points("2k=654us,64k=2328us").unwrap();
        assert_eq!(points[0].0, 2048.0);
        assert!(calibration_points("2k=654us")
            .unwrap_err()
            .contains("exactly two"));
        let centres = centre_list("cpu=20ms, disk=30ms").unwrap();
        assert_eq!(centres[1].name, "disk");
        assert_eq!(skew("zipf:0.8"), Ok(Skew::Zipf { theta: 0.8 }));
        assert_eq!(skew("uniform"), Ok(Skew::Uniform));
        assert!(skew("zipf:nan").unwrap_err().contains("finite number"));
        assert!(skew("foo")
            .unwrap_err()
            .contains("is not uniform or zipf:THETA"));
    }
}
