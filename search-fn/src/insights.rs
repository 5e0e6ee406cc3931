//! The insights store of the component: `search_service::insights` over Spin's
//! `spin:sqlite/sqlite@3.1.0` (database `default`, granted in `spin.toml`;
//! `spin up` and `site-builder serve` keep it in `.spin/sqlite_db.db`, a platform
//! may map it to libSQL/Turso in its runtime config).
//!
//! Recording never fails a request: a database that is missing, refused, full or
//! broken is logged (once a minute at most, so a full disk does not flood the log)
//! and the answer goes out as if nothing happened. The connection is opened on
//! first use and kept for the life of the instance; after an error it is opened
//! again, so a store that comes back is used again.

use std::cell::RefCell;

use search_service::insights::record::{Event, Feedback, PageFeedback, RateLimited, Recorder, Settings, Write};
use search_service::insights::{report, Db, DbError, InsightsError, SqlValue};
use search_service::service::Service;
use spin_sdk::sqlite::wit::sqlite::{Connection, Error, Value};

use crate::api::FeedbackKept;

/// The database `spin.toml` grants the function.
pub const DATABASE: &str = "default";

thread_local! {
    static CONN: RefCell<Option<Connection>> = const { RefCell::new(None) };
    static RECORDER: RefCell<Recorder> = RefCell::new(Recorder::default());
    static LAST_COMPLAINT: RefCell<u64> = const { RefCell::new(0) };
}

/// The database as `search_service::insights` sees it.
struct SpinSqlite;

fn error(e: &Error) -> DbError {
    match e {
        Error::NoSuchDatabase => {
            DbError::Unavailable(format!("no database `{DATABASE}`; declare it in the runtime config"))
        }
        Error::AccessDenied => DbError::Unavailable(format!(
            "the component may not open `{DATABASE}`; add it to sqlite_databases in spin.toml"
        )),
        Error::InvalidConnection => DbError::Unavailable("the connection is no longer valid".into()),
        Error::DatabaseFull => DbError::Full,
        Error::Io(m) => DbError::Statement(m.clone()),
    }
}

impl Db for SpinSqlite {
    fn execute(&self, statement: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, DbError> {
        CONN.with(|cell| {
            let mut conn = cell.borrow_mut();
            if conn.is_none() {
                *conn = Some(Connection::open(DATABASE).map_err(|e| error(&e))?);
            }
            let Some(c) = conn.as_ref() else { return Err(DbError::Unavailable("not open".into())) };
            let params: Vec<Value> = params
                .iter()
                .map(|p| match p {
                    SqlValue::Null => Value::Null,
                    SqlValue::Integer(v) => Value::Integer(*v),
                    SqlValue::Real(v) => Value::Real(*v),
                    SqlValue::Text(v) => Value::Text(v.clone()),
                    SqlValue::Blob(v) => Value::Blob(v.clone()),
                })
                .collect();
            match c.execute(statement, &params) {
                Ok(r) => Ok(r
                    .rows
                    .into_iter()
                    .map(|row| {
                        row.values
                            .into_iter()
                            .map(|v| match v {
                                Value::Null => SqlValue::Null,
                                Value::Integer(v) => SqlValue::Integer(v),
                                Value::Real(v) => SqlValue::Real(v),
                                Value::Text(v) => SqlValue::Text(v),
                                Value::Blob(v) => SqlValue::Blob(v),
                            })
                            .collect()
                    })
                    .collect()),
                Err(e) => {
                    let e = error(&e);
                    if matches!(e, DbError::Unavailable(_)) {
                        *conn = None;
                    }
                    Err(e)
                }
            }
        })
    }
}

/// A random number for the prune's draw (std seeds each `RandomState` afresh
/// from `wasi:random`'s keys, and every new one differs).
fn draw() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

/// Logs a failure to record, at most once a minute per instance.
fn complain(what: &str, e: &InsightsError, now: u64) {
    let due = LAST_COMPLAINT.with(|t| {
        let mut t = t.borrow_mut();
        let due = now >= *t + 60 || *t == 0;
        if due {
            *t = now;
        }
        due
    });
    if due {
        eprintln!("insights: cannot record {what} ({e}); answering without recording");
    }
}

/// Records one event; returns the milliseconds it took, or `None` when nothing
/// was written (recording off, or the store failed: logged).
pub fn write(e: &Event, settings: Settings, clock: &dyn Fn() -> f64) -> Option<f64> {
    if !settings.enabled {
        return None;
    }
    let (t0, now) = (clock(), crate::api::now_unix());
    match RECORDER.with(|r| r.borrow_mut().write(&SpinSqlite, Write::Event(e), settings, now, draw())) {
        Ok(()) => Some(clock() - t0),
        Err(e) => {
            complain("the event", &e, now);
            None
        }
    }
}

/// Records feedback beside the answer it names. A store that is off or fails
/// leaves it for the log ([`FeedbackKept::Logged`]); only a store that works
/// and has no such answer refuses it.
pub fn feedback(f: &Feedback, settings: Settings) -> FeedbackKept {
    if !settings.enabled {
        return FeedbackKept::Logged;
    }
    let now = crate::api::now_unix();
    match RECORDER.with(|r| r.borrow_mut().write(&SpinSqlite, Write::Feedback(f), settings, now, draw())) {
        Ok(()) => FeedbackKept::Stored,
        Err(InsightsError::UnknownAnswer(_)) => FeedbackKept::UnknownAnswer,
        Err(e) => {
            complain("the feedback", &e, now);
            FeedbackKept::Logged
        }
    }
}

/// Records "Was this helpful?" on a page: stored, or left for the log
/// ([`FeedbackKept::Logged`]) when recording is off or the store fails.
pub fn page_feedback(f: &PageFeedback, settings: Settings) -> FeedbackKept {
    if !settings.enabled {
        return FeedbackKept::Logged;
    }
    let now = crate::api::now_unix();
    match RECORDER.with(|r| r.borrow_mut().write(&SpinSqlite, Write::PageFeedback(f), settings, now, draw())) {
        Ok(()) => FeedbackKept::Stored,
        Err(e) => {
            complain("the page's feedback", &e, now);
            FeedbackKept::Logged
        }
    }
}

/// Records the refusals of a client's minutes, `(minute, refused so far)` as
/// `crate::limit::refused` gives them (usually none, at most two); a store
/// that fails is logged.
pub fn rate_limited(bucket: &str, client: &str, rows: &[(u64, u64)], limit: u32, settings: Settings) {
    if !settings.enabled {
        return;
    }
    let now = crate::api::now_unix();
    for &(minute, refused) in rows {
        let r = RateLimited { bucket, client, minute, refused, limit };
        let written =
            RECORDER.with(|rec| rec.borrow_mut().write(&SpinSqlite, Write::RateLimited(&r), settings, now, draw()));
        if let Err(e) = written {
            complain("a rate-limited minute", &e, now);
            return;
        }
    }
}

/// The report for `GET /api/insights`.
pub fn report(svc: &Service, since: u64, settings: Settings) -> Result<report::Report, InsightsError> {
    report::compute(&SpinSqlite, svc, &report::Options::new(since, crate::api::now_unix(), settings))
}
