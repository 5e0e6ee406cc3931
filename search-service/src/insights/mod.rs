//! Insights for the knowledge-base team: what readers asked, what the knowledge
//! base failed to answer, and what they thought of the answers.
//!
//! The edge function records each search, each chat and each feedback event in a
//! SQL database (Spin's SQLite interface, database `default`); the CLI and
//! `GET /api/insights` read them back as one [`report::Report`]. Like [`crate::pg`],
//! nothing here does I/O: statements run through the [`Db`] trait, which the
//! function implements over `spin:sqlite` and the CLI over a SQLite file.
//!
//! - [`schema`]: the tables and their versioned migrations (the one owner of the
//!   format);
//! - [`record`]: what is stored per event (and what is not: no address, no user
//!   agent), the writes, retention;
//! - [`cluster`]: questions grouped by meaning, over their MiniLM vectors;
//! - [`report`]: the report, computed from the tables, the index and the encoder.

pub mod cluster;
pub mod record;
pub mod report;
pub mod schema;

/// A parameter or a column value, as Spin's SQLite interface carries them.
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl SqlValue {
    pub fn int(&self) -> Option<i64> {
        match *self {
            SqlValue::Integer(v) => Some(v),
            SqlValue::Real(v) if v.fract() == 0.0 => Some(v as i64),
            _ => None,
        }
    }

    pub fn real(&self) -> Option<f64> {
        match *self {
            SqlValue::Integer(v) => Some(v as f64),
            SqlValue::Real(v) => Some(v),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<&str> {
        match self {
            SqlValue::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn blob(&self) -> Option<&[u8]> {
        match self {
            SqlValue::Blob(b) => Some(b),
            _ => None,
        }
    }

    /// `Text`, or `Null` for `None`.
    pub fn opt_text(s: Option<&str>) -> SqlValue {
        s.map_or(SqlValue::Null, |s| SqlValue::Text(s.to_string()))
    }
}

impl From<&str> for SqlValue {
    fn from(s: &str) -> SqlValue {
        SqlValue::Text(s.to_string())
    }
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> SqlValue {
        SqlValue::Integer(v)
    }
}

/// Why a statement failed, in the terms of Spin's SQLite interface.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DbError {
    /// The database cannot be opened or reached (not granted, no such database,
    /// I/O): recording is skipped, and the request goes on.
    #[error("the insights database is unavailable: {0}")]
    Unavailable(String),
    /// The database has reached its capacity.
    #[error("the insights database is full; lower insights_retention_days or give it more room")]
    Full,
    /// The statement failed.
    #[error("insights database: {0}")]
    Statement(String),
}

/// Runs one statement (with `?` placeholders) and returns its rows.
pub trait Db {
    fn execute(&self, statement: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, DbError>;
}

/// Why insights could not be recorded or read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InsightsError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(
        "the insights database has schema version {found}, this build knows up to {known}; read it with a newer site-builder (or move the file away to start over)"
    )]
    NewerSchema { found: i64, known: i64 },
    #[error("unexpected row in the insights database ({0}); is this a database the function wrote?")]
    Row(String),
    #[error("since: {0}")]
    Since(String),
    /// Feedback that names no answer the function recorded: one it never gave,
    /// or one older than the retention period.
    #[error(
        "no answer `{0}` is recorded; feedback names the `id` of an answer the assistant gave (a chat's `done` event)"
    )]
    UnknownAnswer(String),
}

/// Seconds in a day.
pub const DAY: u64 = 86_400;

/// The period a report covers: `30d`, `12h`, `2w`, `all`, or a date
/// (`2026-11-01`, UTC midnight). Returns the first second included. A period
/// longer than the clock has run is `all`; a date ahead is an empty period.
pub fn parse_since(s: &str, now: u64) -> Result<u64, InsightsError> {
    let s = s.trim();
    let bad = |why: &str| InsightsError::Since(format!("`{s}` {why}; use 30d, 12h, 2w, all or a date like 2026-11-01"));
    if s.eq_ignore_ascii_case("all") {
        return Ok(0);
    }
    if let Some(date) = parse_date(s) {
        return Ok(date);
    }
    let (n, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    if n.len() > 6 {
        return Err(bad("is out of range (at most six digits)"));
    }
    let n: u64 = n.parse().map_err(|_| bad("is not a period"))?;
    let secs = match unit {
        "h" => 3600,
        "d" => DAY,
        "w" => 7 * DAY,
        "" => return Err(bad("has no unit")),
        _ => return Err(bad("has an unknown unit")),
    };
    if n == 0 {
        return Err(bad("is an empty period"));
    }
    Ok(now.saturating_sub(n * secs))
}

/// `YYYY-MM-DD` as Unix seconds at UTC midnight (0 before 1970); `None` unless
/// the day exists.
fn parse_date(s: &str) -> Option<u64> {
    let mut parts = s.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return None;
    }
    let (y, m, d): (i32, u8, u8) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    let date = time::Date::from_calendar_date(y, time::Month::try_from(m).ok()?, d).ok()?;
    Some(u64::try_from(date.midnight().assume_utc().unix_timestamp()).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_and_dates_parse_and_bad_ones_are_named() {
        let now = 1_800_000_000;
        assert_eq!(parse_since("30d", now).unwrap(), now - 30 * DAY);
        assert_eq!(parse_since("12h", now).unwrap(), now - 12 * 3600);
        assert_eq!(parse_since("2w", now).unwrap(), now - 14 * DAY);
        assert_eq!(parse_since("all", now).unwrap(), 0);
        assert_eq!(parse_since("1970-01-02", now).unwrap(), DAY);
        assert_eq!(parse_since("2026-12-01", now).unwrap(), 1_796_083_200);
        assert_eq!(parse_since("1900-01-01", now).unwrap(), 0);
        assert_eq!(parse_since("2024-02-29", now).unwrap(), 1_709_164_800);
        assert!(parse_since("9999-12-31", now).unwrap() > now, "a date ahead: an empty period");
        assert_eq!(parse_since("999999w", now).unwrap(), 0, "longer than the clock has run: all");
        for bad in ["", "30", "0d", "30x", "d", "2026-02-30", "2023-02-29", "2026-13-01", "-3d", "9999999d", "1e3d"] {
            let e = parse_since(bad, now).unwrap_err().to_string();
            assert!(e.contains("use 30d"), "{bad}: {e}");
        }
    }
}
