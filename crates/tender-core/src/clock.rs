//! Time as a dependency: the system clock in production, a manual clock in tests.
//!
//! Everything that reads "now" (object `created`, expiries, retry schedules) goes through
//! [`Clock`], so tests advance time instead of sleeping. Pure; depends on std only.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time in Unix seconds.
pub trait Clock: Send + Sync + 'static {
    /// Seconds since the Unix epoch.
    fn now(&self) -> i64;

    /// Milliseconds since the Unix epoch (webhook retries are finer than a second in tests).
    fn now_millis(&self) -> i64 {
        self.now() * 1000
    }

    /// The test clock (`clock_…`) whose time this is, if it is one's (CONTRACT §10).
    fn test_clock(&self) -> Option<&str> {
        None
    }
}

/// A test clock's time, frozen at one instant: what the use cases see while they work for the
/// clock's customers (an API call, or one step of an advance).
#[derive(Debug, Clone)]
pub struct ClockTime {
    id: String,
    time: i64,
}

impl ClockTime {
    pub fn new(id: &str, time: i64) -> Self {
        Self {
            id: id.to_string(),
            time,
        }
    }
}

impl Clock for ClockTime {
    fn now(&self) -> i64 {
        self.time
    }

    fn test_clock(&self) -> Option<&str> {
        Some(&self.id)
    }
}

/// The operating system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> i64 {
        self.now_millis().div_euclid(1000)
    }

    fn now_millis(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

/// A clock that starts at the system time plus an offset that tests can move forward.
///
/// It keeps following the wall clock (so timestamps still advance on their own) while letting a
/// test jump ahead by days without sleeping.
#[derive(Debug, Default)]
pub struct OffsetClock {
    offset: AtomicI64,
}

impl OffsetClock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `seconds`.
    pub fn advance(&self, seconds: i64) {
        self.offset.fetch_add(seconds, Ordering::SeqCst);
    }

    pub fn offset(&self) -> i64 {
        self.offset.load(Ordering::SeqCst)
    }
}

impl Clock for OffsetClock {
    fn now(&self) -> i64 {
        self.now_millis().div_euclid(1000)
    }

    fn now_millis(&self) -> i64 {
        SystemClock.now_millis() + self.offset() * 1000
    }
}

/// Civil (year, month) of a Unix timestamp, in UTC. Card expiry compares against it.
pub fn year_month(unix: i64) -> (i32, u32) {
    let (y, m, _) = civil_date(unix);
    (y, m)
}

/// `YYYY-MM-DD HH:MM UTC`, for pages people read.
pub fn format_utc(unix: i64) -> String {
    let (y, m, d) = civil_date(unix);
    let secs = unix.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        secs / 3600,
        (secs % 3600) / 60
    )
}

/// `YYYY-MM-DD` (UTC), for pages people read (an invoice's periods).
pub fn format_date(unix: i64) -> String {
    let (y, m, d) = civil_date(unix);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The Unix time of midnight UTC starting `year-month-day` (Howard Hinnant's
/// days_from_civil); `None` for a date that does not exist.
pub fn unix_from_civil(year: i32, month: u32, day: u32) -> Option<i64> {
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => return None,
    };
    if day == 0 || day > days_in_month {
        return None;
    }
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some((era * 146_097 + doe - 719_468) * 86_400)
}

/// `YYYY-MM-DD HH:MM:SS` of a Unix timestamp shifted by `offset_minutes` (no zone suffix).
pub fn format_local(unix: i64, offset_minutes: i32) -> String {
    let t = unix + i64::from(offset_minutes) * 60;
    let (y, m, d) = civil_date(t);
    let secs = t.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        (secs % 3600) / 60,
        secs % 60
    )
}

/// Civil (year, month, day) of a Unix timestamp, in UTC.
pub fn civil_date(unix: i64) -> (i32, u32, u32) {
    // Howard Hinnant's days_from_civil inverse.
    let days = unix.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let d = doy - (153 * mp + 2) / 5 + 1;
    let y = if m <= 2 { y + 1 } else { y };
    (y as i32, m as u32, d as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip_and_impossible_ones_are_refused() {
        for unix in [0, 951_782_400, 1_795_000_000, -86_400] {
            let (y, m, d) = civil_date(unix);
            assert_eq!(
                unix_from_civil(y, m, d),
                Some(unix - unix.rem_euclid(86_400))
            );
        }
        assert_eq!(unix_from_civil(2024, 2, 29), Some(1_709_164_800));
        assert_eq!(unix_from_civil(2023, 2, 29), None);
        assert_eq!(unix_from_civil(2023, 13, 1), None);
        assert_eq!(format_local(1_709_164_800, 90), "2024-02-29 01:30:00");
    }

    #[test]
    fn format_utc_renders_date_and_time() {
        assert_eq!(format_utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(
            format_utc(951_782_400 + 3_600 + 120),
            "2000-02-29 01:02 UTC"
        );
    }

    #[test]
    fn year_month_matches_known_dates() {
        assert_eq!(year_month(0), (1970, 1));
        assert_eq!(year_month(951_782_400), (2000, 2)); // 2000-02-29
        assert_eq!(year_month(1_798_761_599), (2026, 12)); // 2026-12-31T23:59:59
        assert_eq!(year_month(1_798_761_600), (2027, 1));
    }

    #[test]
    fn offset_clock_advances_without_sleeping() {
        let clock = OffsetClock::new();
        let before = clock.now();
        clock.advance(7 * 86_400);
        assert!(clock.now() >= before + 7 * 86_400);
    }
}
