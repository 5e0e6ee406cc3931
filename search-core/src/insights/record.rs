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
/// kilobytes at most (the `MAX_*` limits above).
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
    /// path only, texts cut to their `MAX_*` lengths, the first
    /// [`MAX_CITATIONS`] citations cut to [`MAX_CITATION_CHARS`], a visitor id
    /// that is not the widget's kind of token dropped.
    pub fn reduced(&self) -> Feedback {
        let text = |t: &Option<String>, max: usize| {
            t.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(|t| truncate(t, max))
        };
        Feedback {
            answer_id: self.answer_id.as_deref().map(|a| truncate(a, 100)),
            up: self.up,
            comment: text(&self.comment, MAX_COMMENT_CHARS),
            question: text(&self.question, MAX_QUESTION_CHARS),
            answer: self.answer.as_deref().map(|a| truncate(a, MAX_ANSWER_CHARS)),
            citations: self
                .citations
                .iter()
                .take(MAX_CITATIONS)
                .map(|c| truncate(c.trim(), MAX_CITATION_CHARS))
                .collect(),
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

/// Writes one feedback event at `now`: what [`Feedback::reduced`] keeps of it.
pub fn feedback(db: &dyn Db, f: &Feedback, now: u64) -> Result<(), DbError> {
    let f = f.reduced();
    db.execute(
        "INSERT INTO kb_feedback (time, answer_id, rating, comment, question, answer, citations, page, visitor)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &[
            SqlValue::Integer(now as i64),
            SqlValue::opt_text(f.answer_id.as_deref()),
            (if f.up { "up" } else { "down" }).into(),
            SqlValue::opt_text(f.comment.as_deref()),
            SqlValue::opt_text(f.question.as_deref()),
            SqlValue::opt_text(f.answer.as_deref()),
            SqlValue::Text(serde_json::to_string(&f.citations).unwrap_or_else(|_| "[]".into())),
            SqlValue::opt_text(f.page.as_deref()),
            SqlValue::opt_text(f.visitor.as_deref()),
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
            answer_id: Some("a".repeat(100)),
            up: false,
            comment: Some(big(2000)),
            question: Some(big(4000)),
            answer: Some(big(20_000)),
            citations: vec![big(2000); 20],
            page: Some(format!("https://x.example/{}?token=s", big(2000))),
            visitor: Some("not a token!".into()),
        };
        let sent: usize =
            [&f.comment, &f.question, &f.answer, &f.page].iter().map(|t| t.as_ref().unwrap().len()).sum::<usize>()
                + f.citations.iter().map(String::len).sum::<usize>();
        assert!(sent > 190_000, "{sent}");
        let r = f.reduced();
        let kept: usize =
            [&r.comment, &r.question, &r.answer, &r.page].iter().map(|t| t.as_ref().unwrap().len()).sum::<usize>()
                + serde_json::to_string(&r.citations).unwrap().len();
        assert!(
            kept <= 4 * (MAX_COMMENT_CHARS + MAX_QUESTION_CHARS + MAX_ANSWER_CHARS + MAX_PAGE_CHARS)
                + 4 * MAX_CITATIONS * (MAX_CITATION_CHARS + 1),
            "{kept}"
        );
        assert!(kept < 32_000, "{kept}");
        assert_eq!(r.citations.len(), MAX_CITATIONS);
        assert!(r.citations.iter().all(|c| c.chars().count() == MAX_CITATION_CHARS));
        assert!(r.page.as_deref().unwrap().starts_with("/\u{1F600}") && !r.page.as_deref().unwrap().contains('?'));
        assert_eq!(r.visitor, None);
        assert_eq!(r.answer_id, f.answer_id);
    }
}
