//! Dates as the page shows them: the report's RFC 3339 times read once
//! ([`Stamp`]) and written readably in their own offset ([`When`]).

use serde::Serialize;

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

/// An RFC 3339 time as the report writes them (`2026-12-01T14:00:00Z`), shown
/// in its own offset, to the minute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Stamp(time::OffsetDateTime);

impl Stamp {
    pub(super) fn parse(s: &str) -> Option<Stamp> {
        time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok().map(Stamp)
    }

    pub(super) fn hour(&self) -> u8 {
        self.0.hour()
    }

    pub(super) fn year(&self) -> i32 {
        self.0.year()
    }

    /// The (local) calendar date.
    pub(super) fn day(&self) -> time::Date {
        self.0.date()
    }

    pub(super) fn unix(&self) -> i64 {
        self.0.unix_timestamp()
    }

    pub(super) fn weekday(&self) -> &'static str {
        WEEKDAYS[usize::from(self.0.weekday().number_days_from_sunday())]
    }

    fn month_name(&self) -> &'static str {
        MONTHS[usize::from(u8::from(self.0.month()) - 1)]
    }

    /// `1 Dec`
    pub(super) fn day_month(&self) -> String {
        format!("{} {}", self.0.day(), self.month_name())
    }

    /// `1 Dec 2026`
    pub(super) fn date(&self) -> String {
        format!("{} {} {}", self.0.day(), self.month_name(), self.0.year())
    }

    /// `14:00`
    pub(super) fn clock(&self) -> String {
        format!("{:02}:{:02}", self.0.hour(), self.0.minute())
    }

    pub(super) fn zone(&self) -> String {
        let minutes = self.0.offset().whole_minutes();
        if minutes == 0 {
            "UTC".into()
        } else {
            let sign = if minutes < 0 { '-' } else { '+' };
            format!("UTC{sign}{:02}:{:02}", minutes.abs() / 60, minutes.abs() % 60)
        }
    }
}

/// A time, readable: `iso` for `<time datetime>`, `date` (`1 Dec 2026`), `full`
/// (`Tue 1 Dec 2026, 14:00 UTC`), `short` (`1 Dec, 14:00`). A time that does not
/// parse is shown as it is.
#[derive(Debug, Clone, Serialize)]
pub struct When {
    iso: String,
    date: String,
    full: String,
    short: String,
}

impl When {
    pub(super) fn new(s: &str) -> When {
        match Stamp::parse(s) {
            Some(t) => When {
                iso: s.to_string(),
                date: t.date(),
                full: format!("{} {}, {} {}", t.weekday(), t.date(), t.clock(), t.zone()),
                short: format!("{}, {}", t.day_month(), t.clock()),
            },
            None => When { iso: s.to_string(), date: s.to_string(), full: s.to_string(), short: s.to_string() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_well() {
        let w = When::new("2026-12-01T14:05:00Z");
        assert_eq!(
            (w.date.as_str(), w.full.as_str(), w.short.as_str()),
            ("1 Dec 2026", "Tue 1 Dec 2026, 14:05 UTC", "1 Dec, 14:05")
        );
        assert_eq!(When::new("2026-12-01T14:05:00.5+02:00").full, "Tue 1 Dec 2026, 14:05 UTC+02:00");
        assert_eq!(When::new("not a date").date, "not a date");
        assert_eq!(Stamp::parse("2026-12-01T00:00:00Z").unwrap().unix(), 1_796_083_200);
    }
}
