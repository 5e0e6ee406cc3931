//! What is recorded, and how: one row per search, chat or feedback event.
//!
//! Stored: the question as asked, the time (seconds), the mode, which pages were
//! retrieved and cited (page ids), whether the answer abstained or fell back, the
//! latency, the best result's cosine, for chats the answer id feedback refers to
//! and the answer as given (its text and citation URLs, in `kb_answers`), and the
//! widget's random per-browser id if it sent one. Feedback is kept only for an
//! answer recorded here, beside that answer's own question and text: a client
//! can rate an answer it was given, not write what the assistant said. Not
//! stored: IP addresses, user agents, cookies, the search box's keystrokes
//! (`partial` searches and later pages of one query are not events). Rows older than `insights_retention_days` are deleted by the
//! function as it writes ([`prune`]).

use super::{schema, Db, DbError, InsightsError, SqlValue, DAY};

/// Longest question stored, in characters (chat messages may be longer).
pub const MAX_QUESTION_CHARS: usize = 1000;
/// Most page ids stored per event (in rank order).
pub const MAX_PAGES: usize = 10;
/// Longest answer stored with feedback, in characters.
pub const MAX_ANSWER_CHARS: usize = 2000;
/// Longest feedback comment stored, in characters.
pub const MAX_COMMENT_CHARS: usize = 1000;
/// Most citations stored with feedback (the first ones).
pub const MAX_CITATIONS: usize = MAX_PAGES;
/// Longest citation URL stored, in characters.
pub const MAX_CITATION_CHARS: usize = 200;
/// Longest page path stored with feedback, in characters.
pub const MAX_PAGE_CHARS: usize = 200;

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
    /// Chats: the answer's text, kept (cut to [`MAX_ANSWER_CHARS`]) with its id
    /// for the feedback that names it.
    pub answer: Option<String>,
    /// Chats: the URLs the answer cites, in citation order.
    pub citations: Vec<String>,
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

/// A thumb or a comment on an answer. [`Feedback::reduced`] is what is kept
/// of it, stored or logged: whatever the client sent, a feedback row is a few
/// kilobytes at most (the `MAX_*` limits above). The question, the answer and
/// its citations are not the client's to say: the row takes them from the
/// answer's record ([`feedback`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Feedback {
    /// The answer rated: the `id` of a chat's `done` event.
    pub answer_id: String,
    /// `true`: thumbs up.
    pub up: bool,
    pub comment: Option<String>,
    /// The page the widget was on, path only (no query string or fragment).
    pub page: Option<String>,
    pub visitor: Option<String>,
}

/// Longest answer id kept (the function's are 32 characters).
pub const MAX_ANSWER_ID_CHARS: usize = 100;

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

/// An insights variable the function cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("insights_recording must be on or off, got `{0}`")]
    Recording(String),
    #[error("insights_retention_days must be a whole number of days from 1 to 3650, got `{0}`")]
    RetentionDays(String),
}

/// Days questions are kept when `insights_retention_days` is not set.
pub const DEFAULT_RETENTION_DAYS: u32 = 90;

impl Settings {
    /// From the variables' values (empty: the default).
    pub fn from_variables(recording: &str, retention_days: &str) -> Result<Settings, SettingsError> {
        let enabled = match recording.trim().to_ascii_lowercase().as_str() {
            "" | "on" | "true" | "1" => true,
            "off" | "false" | "0" => false,
            other => return Err(SettingsError::Recording(other.to_string())),
        };
        let retention_days = match retention_days.trim() {
            "" => DEFAULT_RETENTION_DAYS,
            v => match v.parse::<u32>() {
                Ok(n @ 1..=3650) => n,
                _ => return Err(SettingsError::RetentionDays(v.to_string())),
            },
        };
        Ok(Settings { enabled, retention_days })
    }
}

/// The path of a page URL, at most [`MAX_PAGE_CHARS`] long: no scheme, host,
/// user, query string or fragment (these may carry what is not ours to keep, a
/// token, a session). `None` when nothing like a path is left.
pub fn page_path(url: &str) -> Option<String> {
    let url = url.trim();
    let url = url.split(['?', '#']).next().unwrap_or("");
    let path = if let Some(rest) = url.strip_prefix("//") {
        rest.find('/').map_or("/", |i| &rest[i..])
    } else {
        match url.split_once("://") {
            Some((scheme, rest)) if !scheme.contains('/') => rest.find('/').map_or("/", |i| &rest[i..]),
            _ => url,
        }
    };
    path.starts_with('/').then(|| truncate(path, MAX_PAGE_CHARS))
}

impl Feedback {
    /// What is kept of this feedback, in the store or in the log: the page's
    /// path only, the comment cut to [`MAX_COMMENT_CHARS`], a visitor id that is
    /// not the widget's kind of token dropped.
    pub fn reduced(&self) -> Feedback {
        let text = |t: &Option<String>, max: usize| {
            t.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(|t| truncate(t, max))
        };
        Feedback {
            answer_id: truncate(&self.answer_id, MAX_ANSWER_ID_CHARS),
            up: self.up,
            comment: text(&self.comment, MAX_COMMENT_CHARS),
            page: self.page.as_deref().and_then(page_path),
            visitor: match visitor(&self.visitor) {
                SqlValue::Text(v) => Some(v),
                _ => None,
            },
        }
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

/// Citation URLs as stored: the first [`MAX_CITATIONS`], each cut to
/// [`MAX_CITATION_CHARS`], as a JSON array.
fn citation_list(citations: &[String]) -> String {
    let kept: Vec<String> =
        citations.iter().take(MAX_CITATIONS).map(|c| truncate(c.trim(), MAX_CITATION_CHARS)).collect();
    serde_json::to_string(&kept).unwrap_or_else(|_| "[]".into())
}

/// Writes one event at `now` (Unix seconds); a chat's answer goes into
/// `kb_answers` first, so that a retry after a migration (see [`Recorder`])
/// replaces it rather than adding a second event.
pub fn event(db: &dyn Db, e: &Event, now: u64) -> Result<(), DbError> {
    if let (Kind::Chat, Some(id)) = (e.kind, e.answer_id.as_deref()) {
        db.execute(
            "INSERT OR REPLACE INTO kb_answers (answer_id, time, question, answer, citations) VALUES (?, ?, ?, ?, ?)",
            &[
                SqlValue::Text(truncate(id, MAX_ANSWER_ID_CHARS)),
                SqlValue::Integer(now as i64),
                SqlValue::Text(truncate(e.question.trim(), MAX_QUESTION_CHARS)),
                SqlValue::Text(truncate(e.answer.as_deref().unwrap_or(""), MAX_ANSWER_CHARS)),
                SqlValue::Text(citation_list(&e.citations)),
            ],
        )?;
    }
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

/// Writes one feedback event at `now`, what [`Feedback::reduced`] keeps of it,
/// beside the question, answer and citations of the answer it names; `false`
/// when no answer with that id is recorded (nothing is written). One statement,
/// so the check and the write cannot be split by a prune.
pub fn feedback(db: &dyn Db, f: &Feedback, now: u64) -> Result<bool, DbError> {
    let f = f.reduced();
    let rows = db.execute(
        "INSERT INTO kb_feedback (time, answer_id, rating, comment, question, answer, citations, page, visitor)
         SELECT ?, answer_id, ?, ?, question, answer, citations, ?, ? FROM kb_answers WHERE answer_id = ?
         RETURNING id",
        &[
            SqlValue::Integer(now as i64),
            (if f.up { "up" } else { "down" }).into(),
            SqlValue::opt_text(f.comment.as_deref()),
            SqlValue::opt_text(f.page.as_deref()),
            SqlValue::opt_text(f.visitor.as_deref()),
            SqlValue::Text(f.answer_id),
        ],
    )?;
    Ok(!rows.is_empty())
}

/// Deletes what is older than the retention period: events, answers, feedback
/// and question vectors (four indexed deletes).
pub fn prune(db: &dyn Db, retention_days: u32, now: u64) -> Result<(), DbError> {
    let cutoff = SqlValue::Integer(now.saturating_sub(u64::from(retention_days) * DAY) as i64);
    db.execute("DELETE FROM kb_events WHERE time < ?", std::slice::from_ref(&cutoff))?;
    db.execute("DELETE FROM kb_feedback WHERE time < ?", std::slice::from_ref(&cutoff))?;
    db.execute("DELETE FROM kb_answers WHERE time < ?", std::slice::from_ref(&cutoff))?;
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
#[derive(Clone, Copy)]
pub enum Write<'a> {
    Event(&'a Event),
    Feedback(&'a Feedback),
}

impl Recorder {
    /// Writes `w` at `now`; `draw` is a random number (a prune when it is a
    /// multiple of [`PRUNE_EVERY`]). Feedback that names no recorded answer is
    /// [`InsightsError::UnknownAnswer`], and nothing is written.
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
        // `false`: feedback on an answer that is not recorded.
        let once = |db: &dyn Db| match w {
            Write::Event(e) => event(db, e, now).map(|()| true),
            Write::Feedback(f) => feedback(db, f, now),
        };
        let known = match once(db) {
            Ok(known) => known,
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
                once(db)?
            }
            Err(DbError::Full) => {
                // What retention frees is reused by the next write.
                let _ = prune(db, settings.retention_days, now);
                return Err(DbError::Full.into());
            }
            Err(e) => return Err(e.into()),
        };
        if draw.is_multiple_of(PRUNE_EVERY) {
            prune(db, settings.retention_days, now)?;
        }
        match w {
            Write::Feedback(f) if !known => Err(InsightsError::UnknownAnswer(f.answer_id.clone())),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_url_is_reduced_to_its_path() {
        let cases = [
            ("https://x.example/a?token=s#access_token=t", Some("/a")),
            ("https://user:pw@x.example/a/b.html?q=1", Some("/a/b.html")),
            ("http://x.example", Some("/")),
            ("http://x.example?token=s", Some("/")),
            ("http://x.example#/secret/path", Some("/")),
            ("//x.example/p?s=1", Some("/p")),
            ("/campus/index.html?session=secret", Some("/campus/index.html")),
            ("  /a#frag  ", Some("/a")),
            ("javascript:alert(1)", None),
            ("relative/page.html", None),
            ("", None),
            ("?token=s", None),
        ];
        for (url, want) in cases {
            assert_eq!(page_path(url).as_deref(), want, "{url}");
        }
        let long = format!("https://x.example/{}", "é".repeat(5000));
        assert_eq!(page_path(&long).unwrap().chars().count(), MAX_PAGE_CHARS);
    }

    #[test]
    fn a_feedback_row_is_a_few_kilobytes_whatever_was_sent() {
        // Each field at the API's limit, in 4-byte characters.
        let big = |n: usize| "\u{1F600}".repeat(n);
        let f = Feedback {
            answer_id: "a".repeat(200),
            up: false,
            comment: Some(big(2000)),
            page: Some(format!("https://x.example/{}?token=s", big(2000))),
            visitor: Some("not a token!".into()),
        };
        let r = f.reduced();
        assert_eq!(r.comment.as_deref().map(|c| c.chars().count()), Some(MAX_COMMENT_CHARS));
        assert!(r.page.as_deref().unwrap().starts_with("/\u{1F600}") && !r.page.as_deref().unwrap().contains('?'));
        assert_eq!(r.page.as_deref().unwrap().chars().count(), MAX_PAGE_CHARS);
        assert_eq!(r.visitor, None);
        assert_eq!(r.answer_id.len(), MAX_ANSWER_ID_CHARS);
    }

    #[test]
    fn the_answer_kept_for_feedback_is_cut_like_the_rest() {
        let big = "\u{1F600}".repeat(20_000);
        let list = citation_list(&vec![big.clone(); 20]);
        let kept: Vec<String> = serde_json::from_str(&list).unwrap();
        assert_eq!(kept.len(), MAX_CITATIONS);
        assert!(kept.iter().all(|c| c.chars().count() == MAX_CITATION_CHARS));
        assert!(list.len() < 4 * MAX_CITATIONS * (MAX_CITATION_CHARS + 4));
    }
}
