//! Wall-clock timestamps for headers and events, in UTC, without a calendar
//! dependency. Not for measuring intervals: use `std::time::Instant`.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, with fractions.
pub fn unix_now_s() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64())
}

/// When `instant` (in the past) was, in seconds since the Unix epoch: the
/// wall clock now less the time since.
pub fn unix_s_at(instant: std::time::Instant) -> f64 {
    unix_now_s() - instant.elapsed().as_secs_f64()
}

/// The current time as RFC 3339 in UTC, to the second (`2026-11-22T09:54:24Z`).
pub fn utc_now_rfc3339() -> String {
    rfc3339_from_unix(unix_now_s() as i64)
}

/// Formats Unix seconds as RFC 3339 UTC (Howard Hinnant's civil-from-days).
pub fn rfc3339_from_unix(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let second_of_day = seconds.rem_euclid(86_400);
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_dates() {
        assert_eq!(super::rfc3339_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            super::rfc3339_from_unix(1_795_340_064),
            "2026-11-22T09:34:24Z"
        );
        assert_eq!(
            super::rfc3339_from_unix(951_782_400),
            "2000-02-29T00:00:00Z"
        );
    }
}
