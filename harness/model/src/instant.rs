//! Instants on the wire are RFC 3339 strings; inside the harness they are
//! milliseconds since the Unix epoch, so comparisons are exact and cheap.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};

/// A point in (virtual) time, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub i64);

impl Instant {
    /// Parses an RFC 3339 timestamp with an offset; `None` when it does not parse.
    #[must_use]
    pub fn parse(text: &str) -> Option<Instant> {
        // Every clock here writes one shape; read that one directly and
        // leave everything else (offsets, other precisions, leap seconds,
        // out-of-range fields) to the full parser.
        match parse_utc_millis(text.as_bytes()) {
            Some(at) => Some(at),
            None => DateTime::parse_from_rfc3339(text).ok().map(|t| Instant(t.timestamp_millis())),
        }
    }

    /// Formats as `YYYY-MM-DDTHH:MM:SS.mmmZ`, the shape SharedOS's clocks write.
    #[must_use]
    pub fn to_rfc3339(self) -> String {
        if let Some(text) = format_utc_millis(self.0) {
            return text;
        }
        match Utc.timestamp_millis_opt(self.0) {
            chrono::LocalResult::Single(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
            // Out-of-range instants cannot come from a parsed timestamp; render
            // the raw millisecond count rather than panic.
            _ => format!("invalid-instant-{}", self.0),
        }
    }

    /// This instant moved by `millis` milliseconds.
    #[must_use]
    pub fn plus_millis(self, millis: i64) -> Instant {
        Instant(self.0.saturating_add(millis))
    }
}

const MILLIS_PER_DAY: i64 = 86_400_000;

/// Days from 1970-01-01 to the given proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The (year, month, day) of a day count from 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 { shifted_month + 3 } else { shifted_month - 9 };
    (year_of_era + era * 400 + i64::from(month <= 2), month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.mmmZ` with every field in
/// range; `None` for anything else (which the full parser then judges).
fn parse_utc_millis(text: &[u8]) -> Option<Instant> {
    let millis = match text.len() {
        20 => 0,
        24 if text[19] == b'.' => digits(&text[20..23])?,
        _ => return None,
    };
    let separators = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if text[text.len() - 1] != b'Z' || separators.iter().any(|&(at, byte)| text[at] != byte) {
        return None;
    }
    let (year, month, day) = (digits(&text[0..4])?, digits(&text[5..7])?, digits(&text[8..10])?);
    let (hour, minute, second) = (digits(&text[11..13])?, digits(&text[14..16])?, digits(&text[17..19])?);
    let in_range = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    if !in_range {
        return None;
    }
    let time = ((hour * 60 + minute) * 60 + second) * 1000 + millis;
    Some(Instant(days_from_civil(year, month, day) * MILLIS_PER_DAY + time))
}

/// The value of a run of ASCII digits.
fn digits(text: &[u8]) -> Option<i64> {
    text.iter().try_fold(0_i64, |n, &b| b.is_ascii_digit().then(|| n * 10 + i64::from(b - b'0')))
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for years 0 to 9999; `None` outside them.
fn format_utc_millis(millis: i64) -> Option<String> {
    let (days, time) = (millis.div_euclid(MILLIS_PER_DAY), millis.rem_euclid(MILLIS_PER_DAY));
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let (hour, minute, second, milli) = (time / 3_600_000, time / 60_000 % 60, time / 1000 % 60, time % 1000);
    let mut text = [0_u8; 24];
    let fields =
        [(0, 4, year), (5, 2, month), (8, 2, day), (11, 2, hour), (14, 2, minute), (17, 2, second), (20, 3, milli)];
    for (at, width, mut value) in fields {
        for slot in text[at..at + width].iter_mut().rev() {
            // A remainder of ten is a single digit, so the cast is exact.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let digit = (value % 10) as u8;
            *slot = b'0' + digit;
            value /= 10;
        }
    }
    for (at, separator) in [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':'), (19, b'.'), (23, b'Z')] {
        text[at] = separator;
    }
    String::from_utf8(text.to_vec()).ok()
}

/// True when `text` is an RFC 3339 timestamp with an offset.
#[must_use]
pub fn is_timestamp(text: &str) -> bool {
    Instant::parse(text).is_some()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_millisecond_timestamps() {
        let text = "2026-08-18T09:00:00.000Z";
        let at = Instant::parse(text).unwrap();
        assert_eq!(at.to_rfc3339(), text);
        assert_eq!(at.plus_millis(1000).to_rfc3339(), "2026-08-18T09:00:01.000Z");
    }

    #[test]
    fn the_direct_reader_and_writer_agree_with_chrono() {
        let samples = [
            "1970-01-01T00:00:00.000Z",
            "1969-12-31T23:59:59.999Z",
            "0000-01-01T00:00:00.000Z",
            "9999-12-31T23:59:59.999Z",
            "2024-02-29T12:00:00Z",
            "2023-02-29T12:00:00.000Z",
            "2026-13-01T00:00:00.000Z",
            "2026-08-18T24:00:00.000Z",
            "2026-08-18T23:59:60.000Z",
            "2026-08-18T09:00:00.000z",
            "2026-08-18t09:00:00.000Z",
            "2026-08-18T09:00:00.0001Z",
            "2026-08-18T09:00:00+02:00",
            "+2026-08-18T09:00:00.000Z",
        ];
        for text in samples {
            let chrono = DateTime::parse_from_rfc3339(text).ok().map(|t| Instant(t.timestamp_millis()));
            assert_eq!(Instant::parse(text), chrono, "{text}");
        }
        let mut millis = -62_167_219_200_000_i64 - 86_400_000;
        while millis < 253_402_300_800_000 + 86_400_000 {
            let chrono = match Utc.timestamp_millis_opt(millis) {
                chrono::LocalResult::Single(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
                _ => unreachable!(),
            };
            assert_eq!(Instant(millis).to_rfc3339(), chrono);
            let parsed = DateTime::parse_from_rfc3339(&chrono).ok().map(|t| Instant(t.timestamp_millis()));
            assert_eq!(Instant::parse(&chrono), parsed, "{chrono}");
            millis += 7_919_999_983;
        }
    }

    proptest::proptest! {
        #[test]
        fn any_millisecond_instant_round_trips_like_chrono(millis in -62_167_219_200_000_i64..253_402_300_800_000) {
            let chrono = match Utc.timestamp_millis_opt(millis) {
                chrono::LocalResult::Single(t) => t.to_rfc3339_opts(SecondsFormat::Millis, true),
                _ => unreachable!(),
            };
            proptest::prop_assert_eq!(Instant(millis).to_rfc3339(), chrono.clone());
            proptest::prop_assert_eq!(Instant::parse(&chrono), Some(Instant(millis)));
        }
    }

    #[test]
    fn refuses_timestamps_without_offset() {
        assert!(Instant::parse("2026-08-18T09:00:00").is_none());
        assert!(Instant::parse("yesterday").is_none());
    }
}
