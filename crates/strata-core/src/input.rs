//! Command-line values in strata's units: each parser takes the text of
//! one option's value and gives the value or a message naming the accepted
//! forms, so that a bad value is refused by the option's name before any
//! work starts (the binary's clap definitions call these).
//!
//! Not for: deciding what a value means for a command.

use crate::units;
use std::time::Duration;

pub fn size(input: &str) -> Result<u64, String> {
    units::parse_size(input).map_err(|error| error.to_string())
}

pub fn duration(input: &str) -> Result<Duration, String> {
    units::parse_duration(input).map_err(|error| error.to_string())
}

/// A moment, as Unix seconds: `2026-11-25T10:00:00Z` (RFC 3339, UTC),
/// Unix seconds (`1764064800`), `now`, or `now-15m` (a duration before
/// now).
pub fn instant(input: &str) -> Result<f64, String> {
    let text = input.trim();
    let accepted = "give an RFC 3339 time (2026-11-25T10:00:00Z), Unix seconds, now, or \
                    now-DURATION (now-15m)";
    let now = crate::time::unix_now_s();
    if text == "now" {
        return Ok(now);
    }
    if let Some(ago) = text.strip_prefix("now-") {
        let ago = duration(ago).map_err(|error| format!("'{input}': {error}"))?;
        return Ok(now - ago.as_secs_f64());
    }
    if let Ok(seconds) = text.parse::<f64>() {
        return match seconds.is_finite() && seconds >= 0.0 {
            true => Ok(seconds),
            false => Err(format!("'{input}' is not a time: {accepted}")),
        };
    }
    let time = humantime::parse_rfc3339_weak(text)
        .map_err(|error| format!("'{input}' is not a time ({error}): {accepted}"))?;
    time.duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_secs_f64())
        .map_err(|_| format!("'{input}' is before 1970: {accepted}"))
}

pub fn percent(input: &str) -> Result<f64, String> {
    units::parse_percent(input).map_err(|error| error.to_string())
}

/// A whole number in `min..=max`.
pub fn bounded(input: &str, min: u64, max: u64) -> Result<u64, String> {
    let value: u64 = input
        .trim()
        .parse()
        .map_err(|_| format!("'{input}' is not a whole number"))?;
    if !(min..=max).contains(&value) {
        return Err(format!(
            "{value} is outside the accepted range {min}..={max}"
        ));
    }
    Ok(value)
}

pub fn queue_depth(input: &str) -> Result<usize, String> {
    bounded(input, 1, 4096).map(|value| value as usize)
}

pub fn jobs(input: &str) -> Result<usize, String> {
    bounded(input, 1, 256).map(|value| value as usize)
}

pub fn streams(input: &str) -> Result<usize, String> {
    bounded(input, 0, 64).map(|value| value as usize)
}

pub fn count(input: &str) -> Result<u64, String> {
    bounded(input, 1, u64::MAX / 2)
}

pub fn rate(input: &str) -> Result<f64, String> {
    let value: f64 = input
        .trim()
        .parse()
        .map_err(|_| format!("'{input}' is not a number"))?;
    if !(value > 0.0 && value <= 1e8) {
        return Err(format!(
            "{value} must be above 0 and at most 100000000 requests/s"
        ));
    }
    Ok(value)
}

/// One of a fixed set of names; the error lists them.
pub fn one_of<T>(
    input: &str,
    names: &[&str],
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, String> {
    parse(input).ok_or_else(|| format!("'{input}' is not one of: {}", names.join(", ")))
}

/// The THETA of `zipf:THETA`: above 0, at most 10.
pub fn zipf_theta(theta: &str) -> Result<f64, String> {
    let value: f64 = theta
        .parse()
        .ok()
        .filter(|value: &f64| value.is_finite())
        .ok_or_else(|| format!("zipf:THETA needs a finite number, got '{theta}'"))?;
    if !(value > 0.0 && value <= 10.0) {
        return Err(format!(
            "zipf:THETA must be above 0 and at most 10, got {theta}"
        ));
    }
    Ok(value)
}
