//! What is recorded, and how: one row per search, chat or feedback event.
//!
//! Stored: the question as asked, the time (seconds), the mode, which pages were
//! retrieved and cited (page ids), whether the answer abstained or fell back, the
//! latency, the best result's cosine, for chats the answer id feedback refers to, and the widget's random
//! per-browser id if it sent one. Not stored: IP addresses, user agents, cookies,
//! the search box's keystrokes (`partial` searches and later pages of one query
//! are not events). Rows older than `insights_retention_days` are deleted by the
//! function as it writes ([`prune`]).

use super::{schema, Db, DbError, InsightsError, SqlValue, DAY};

/// Longest question stored, in characters (chat messages may be longer).
pub const MAX_QUESTION_CHARS: usize = 1000;
/// Most page ids stored per event (in rank order).
pub const MAX_PAGES: usize = 10;
/// Longest answer stored with feedback, in characters.
pub const MAX_ANSWER_CHARS: usize = 4000;

/// Searches or chats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Search,
    Chat,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Search => "search",
            Kind::Chat => "chat",
        }
    }
}

/// A search or a chat, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub kind: Kind,
    /// `convex`, `bm25`, … for searches; `extractive` or `llm` for chats.
    pub mode: String,
    pub question: String,
    /// Chats: the `done` event's `id`, which feedback refers to.
    pub answer_id: Option<String>,
    /// The widget's random per-browser id, if it sent one.
    pub visitor: Option<String>,
    /// Searches: results found (all pages); chats: citations.
    pub results: usize,
    /// Page ids retrieved, best first (a search's first page; a chat's evidence).
    pub pages: Vec<String>,
    /// Page ids the answer cites.
    pub cited: Vec<String>,
    pub abstained: bool,
    pub degraded: bool,
    pub latency_ms: f64,
    /// The best result's cosine with the question (a chat's first search), when
    /// the mode computed one: how close the knowledge base came.
    pub top_score: Option<f32>,
}

/// A thumb or a comment on an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    pub answer_id: Option<String>,
    /// `true`: thumbs up.
    pub up: bool,
    pub comment: Option<String>,
    pub question: Option<String>,
    pub answer: Option<String>,
    pub citations: Vec<String>,
    /// The page the widget was on, path only (no query string or fragment).
    pub page: Option<String>,
    pub visitor: Option<String>,
}

/// The recording settings (Spin variables `insights_recording`,
/// `insights_retention_days`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub enabled: bool,
    pub retention_days: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { enabled: true, retention_days: DEFAULT_RETENTION_DAYS }
    }
}

/// Days questions are kept when `insights_retention_days` is not set.
pub const DEFAULT_RETENTION_DAYS: u32 = 90;

impl Settings {
    /// From the variables' values (empty: the default).
    pub fn from_variables(recording: &str, retention_days: &str) -> Result<Settings, String> {
        let enabled = match recording.trim().to_ascii_lowercase().as_str() {
            "" | "on" | "true" | "1" => true,
            "off" | "false" | "0" => false,
            other => return Err(format!("insights_recording must be on or off, got `{other}`")),
        };
        let retention_days = match retention_days.trim() {
            "" => DEFAULT_RETENTION_DAYS,
            v => match v.parse::<u32>() {
                Ok(n @ 1..=3650) => n,
                _ => {
                    return Err(format!(
                        "insights_retention_days must be a whole number of days from 1 to 3650, got `{v}`"
                    ))
                }
            },
        };
        Ok(Settings { enabled, retention_days })
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => s[..i].to_string(),
        None => s.to_string(),
    }
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(&items.iter().take(MAX_PAGES).collect::<Vec<_>>()).unwrap_or_else(|_| "[]".into())
}

/// A visitor id is the widget's random token: short and plain, or dropped.
fn visitor(v: &Option<String>) -> SqlValue {
    match v {
        Some(v) if (8..=64).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') => {
            SqlValue::Text(v.clone())
        }
        _ => SqlValue::Null,
    }
}

/// Writes one event at `now` (Unix seconds).
pub fn event(db: &dyn Db, e: &Event, now: u64) -> Result<(), DbError> {
    db.execute(
        "INSERT INTO kb_events (time, kind, mode, question, answer_id, visitor, results, pages, cited, abstained, degraded, latency_ms, top_score)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &[
            SqlValue::Integer(now as i64),
            e.kind.as_str().into(),
            e.mode.as_str().into(),
            SqlValue::Text(truncate(e.question.trim(), MAX_QUESTION_CHARS)),
            SqlValue::opt_text(e.answer_id.as_deref()),
            visitor(&e.visitor),
            SqlValue::Integer(e.results as i64),
            SqlValue::Text(json_list(&e.pages)),
            SqlValue::Text(json_list(&e.cited)),
            SqlValue::Integer(e.abstained.into()),
            SqlValue::Integer(e.degraded.into()),
            SqlValue::Real((e.latency_ms * 1000.0).round() / 1000.0),
            e.top_score.filter(|s| s.is_finite()).map_or(SqlValue::Null, |s| SqlValue::Real(f64::from(s))),
        ],
    )?;
    Ok(())
}

/// Writes one feedback event at `now`.
pub fn feedback(db: &dyn Db, f: &Feedback, now: u64) -> Result<(), DbError> {
    let page = f.page.as_deref().map(|p| {
        // The path only: a query string or fragment may carry what is not ours to keep.
        let p = p.split(['?', '#']).next().unwrap_or("");
        match p.split_once("://") {
            Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]).to_string(),
            None => p.to_string(),
        }
    });
    db.execute(
        "INSERT INTO kb_feedback (time, answer_id, rating, comment, question, answer, citations, page, visitor)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &[
            SqlValue::Integer(now as i64),
            SqlValue::opt_text(f.answer_id.as_deref()),
            (if f.up { "up" } else { "down" }).into(),
            SqlValue::opt_text(f.comment.as_deref().map(str::trim).filter(|c| !c.is_empty())),
            SqlValue::opt_text(f.question.as_deref().map(|q| truncate(q.trim(), MAX_QUESTION_CHARS)).as_deref()),
            SqlValue::opt_text(f.answer.as_deref().map(|a| truncate(a, MAX_ANSWER_CHARS)).as_deref()),
            SqlValue::Text(serde_json::to_string(&f.citations).unwrap_or_else(|_| "[]".into())),
            SqlValue::opt_text(page.as_deref()),
            visitor(&f.visitor),
        ],
    )?;
    Ok(())
}

/// Deletes what is older than the retention period: events, feedback and
/// question vectors (three indexed deletes).
pub fn prune(db: &dyn Db, retention_days: u32, now: u64) -> Result<(), DbError> {
    let cutoff = SqlValue::Integer(now.saturating_sub(u64::from(retention_days) * DAY) as i64);
    db.execute("DELETE FROM kb_events WHERE time < ?", std::slice::from_ref(&cutoff))?;
    db.execute("DELETE FROM kb_feedback WHERE time < ?", std::slice::from_ref(&cutoff))?;
    // A vector is as old as the question it was computed for may be; one still
    // asked is computed again by the next report.
    db.execute("DELETE FROM kb_question_vectors WHERE created < ?", &[cutoff])?;
    Ok(())
}

/// The writer one function instance keeps: writes, migrates when a write fails
/// (see [`schema`]: no version check per write), and prunes now and then. Every
/// failure is returned for the caller to log, and leaves the writer usable: a
/// store that is down now may be back later.
#[derive(Debug, Default)]
pub struct Recorder {
    /// The database is newer than this build: write nothing into it.
    refused: bool,
}

/// One write in this many prunes (drawn at random, so that instances that live
/// for one request, as on Spin, prune as often as long-lived ones).
pub const PRUNE_EVERY: u64 = 500;

/// What a recorder can be asked to write.
pub enum Write<'a> {
    Event(&'a Event),
    Feedback(&'a Feedback),
}

impl Recorder {
    /// Writes `w` at `now`; `draw` is a random number (a prune when it is a
    /// multiple of [`PRUNE_EVERY`]).
    pub fn write(
        &mut self,
        db: &dyn Db,
        w: Write<'_>,
        settings: Settings,
        now: u64,
        draw: u64,
    ) -> Result<(), InsightsError> {
        if !settings.enabled || self.refused {
            return Ok(());
        }
        let once = |db: &dyn Db| match w {
            Write::Event(e) => event(db, e, now),
            Write::Feedback(f) => feedback(db, f, now),
        };
        match once(db) {
            Ok(()) => {}
            Err(DbError::Statement(_)) => {
                // A table or column missing: a new database, or one this build
                // has not migrated yet.
                match schema::ensure(db, now) {
                    Ok(_) => {}
                    Err(e @ InsightsError::NewerSchema { .. }) => {
                        self.refused = true;
                        return Err(e);
                    }
                    Err(e) => return Err(e),
                }
                once(db)?;
            }
            Err(DbError::Full) => {
                // What retention frees is reused by the next write.
                let _ = prune(db, settings.retention_days, now);
                return Err(DbError::Full.into());
            }
            Err(e) => return Err(e.into()),
        }
        if draw.is_multiple_of(PRUNE_EVERY) {
            prune(db, settings.retention_days, now)?;
        }
        Ok(())
    }
}
