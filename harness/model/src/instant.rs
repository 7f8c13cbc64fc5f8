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
        DateTime::parse_from_rfc3339(text).ok().map(|t| Instant(t.timestamp_millis()))
    }

    /// Formats as `YYYY-MM-DDTHH:MM:SS.mmmZ`, the shape SharedOS's clocks write.
    #[must_use]
    pub fn to_rfc3339(self) -> String {
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
    fn refuses_timestamps_without_offset() {
        assert!(Instant::parse("2026-08-18T09:00:00").is_none());
        assert!(Instant::parse("yesterday").is_none());
    }
}
