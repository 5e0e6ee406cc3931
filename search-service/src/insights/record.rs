//! What is recorded, and how: one row per search, chat or feedback event, per
//! "Was this helpful?" on a page, and per client, endpoint and minute in which
//! the rate limit refused requests.
//!
//! Stored: the question as asked, the time (seconds), the mode, which pages were
//! retrieved and cited (page ids), whether the answer abstained or fell back, the
//! latency, the best result's cosine, for chats the answer id feedback refers to
//! and the answer as given (its text and citation URLs, in `kb_answers`), and the
//! widget's random per-browser id if it sent one. Feedback is kept only for an
//! answer recorded here, beside that answer's own question and text: a client
//! can rate an answer it was given, not write what the assistant said. Not
//! stored: IP addresses, user agents, cookies, the search box's keystrokes
//! (`partial` searches and later pages of one query are not events). A rate-limited
//! client is kept as a pseudonym that cannot be traced back once its day's salt is
//! deleted, the day after ([`rate_limited`]). Rows older than `insights_retention_days` are deleted by the
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
/// Longest comment on a page ("Was this helpful?" → No), in characters: a
/// short note, not a support ticket. The API refuses a longer one (rather than
/// cutting what the reader wrote), and the page's box stops there.
pub const MAX_PAGE_COMMENT_CHARS: usize = 500;

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

/// "Was this helpful?" on an article page: a thumb, and with a "No" maybe a
/// short comment. The page is one the caller found in the index (the API
/// refuses any other), so a report can name it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageFeedback {
    /// The page's site-relative URL, as the index records it
    /// (`campus/parking/buying-a-parking-permit.html`).
    pub page: String,
    /// The page's id in the index, when the caller could look it up (not with
    /// the PostgreSQL backend, whose pages are not listed).
    pub page_id: Option<String>,
    /// `true`: "Yes, it helped".
    pub up: bool,
    pub comment: Option<String>,
    pub visitor: Option<String>,
}

/// Requests of one client to one endpoint refused in one minute, so far. The
/// caller writes one when the minute's first request is refused and again as
/// the count grows (`search_fn::limit::refused` says when); each write of the
/// same minute raises the row's count, never adds a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimited<'a> {
    /// The endpoint's bucket: `search`, `chat`, `feedback` or `insights`.
    pub bucket: &'a str,
    /// The limiter's id of the client (an address, or an IPv6 /64). Never
    /// stored: only its pseudonym of the day is.
    pub client: &'a str,
    /// Minutes since the Unix epoch.
    pub minute: u64,
    /// Requests refused in that minute so far.
    pub refused: u64,
    /// The limit that refused them (requests a minute).
    pub limit: u32,
}

/// The Spin variable that sets a bucket's rate limit: `{bucket}_rate_limit`,
/// as `search_fn::limit::Bucket::variable` names it (a test there keeps the
/// two equal); what a report tells the operator to raise.
pub fn rate_limit_variable(bucket: &str) -> String {
    format!("{bucket}_rate_limit")
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
    SqlValue::opt_text(kept_visitor(v.as_deref()))
}

/// A visitor id as it is kept, stored or logged: the widget's random token
/// (8 to 64 letters, digits or `-`), or nothing.
pub fn kept_visitor(v: Option<&str>) -> Option<&str> {
    v.filter(|v| (8..=64).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
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

/// Writes one "Was this helpful?" at `now`: the page as given (cut to
/// [`MAX_PAGE_CHARS`]), the comment trimmed (empty: none) and cut to
/// [`MAX_PAGE_COMMENT_CHARS`], a visitor id only if it is the widget's kind.
pub fn page_feedback(db: &dyn Db, f: &PageFeedback, now: u64) -> Result<(), DbError> {
    let comment =
        f.comment.as_deref().map(str::trim).filter(|c| !c.is_empty()).map(|c| truncate(c, MAX_PAGE_COMMENT_CHARS));
    db.execute(
        "INSERT INTO kb_page_feedback (time, page, page_id, rating, comment, visitor) VALUES (?, ?, ?, ?, ?, ?)",
        &[
            SqlValue::Integer(now as i64),
            SqlValue::Text(truncate(f.page.trim(), MAX_PAGE_CHARS)),
            SqlValue::opt_text(f.page_id.as_deref().map(|id| truncate(id, MAX_ANSWER_ID_CHARS)).as_deref()),
            (if f.up { "up" } else { "down" }).into(),
            SqlValue::opt_text(comment.as_deref()),
            visitor(&f.visitor),
        ],
    )?;
    Ok(())
}

/// A day's salt, as a recorder keeps it between writes: `(day, salt)`.
pub type DaySalt = Option<(u64, Vec<u8>)>;

/// Writes (or raises) the row of `r`'s client, endpoint and minute: one row per
/// minute however many requests were refused in it; its count only grows, so
/// writes that arrive out of order cannot lower it. The client is stored as its
/// pseudonym of the day ([`pseudonym`]); `salt` caches the day's salt.
pub fn rate_limited(db: &dyn Db, r: &RateLimited<'_>, salt: &mut DaySalt) -> Result<(), DbError> {
    let time = r.minute.saturating_mul(60);
    let client = pseudonym(db, r.client, time / DAY, salt)?;
    db.execute(
        "INSERT INTO kb_rate_limited (time, bucket, client, refused, rate_limit) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (time, bucket, client) DO UPDATE SET refused = max(refused, excluded.refused), rate_limit = excluded.rate_limit",
        &[
            SqlValue::Integer(time as i64),
            SqlValue::Text(truncate(r.bucket, 20)),
            SqlValue::Text(client),
            SqlValue::Integer(i64::try_from(r.refused).unwrap_or(i64::MAX)),
            SqlValue::Integer(i64::from(r.limit)),
        ],
    )?;
    Ok(())
}

/// What a client is called in the store on `day` (Unix days): 24 hex digits of
/// SHA-256(the day's salt ‖ the client id). The salt is 16 random bytes SQLite
/// draws (`randomblob`) the first time a day needs one: one statement, so
/// instances that start together agree on it (`INSERT OR IGNORE`, then read).
/// Salts older than yesterday are deleted here (yesterday's is kept for a
/// minute that is settled after midnight): from then on an address cannot be
/// found from its pseudonym by anyone, even with the database in hand. Why not
/// the widget's visitor id, as the other tables do: the limiter knows only the
/// address, and an address must not be stored.
pub fn pseudonym(db: &dyn Db, client: &str, day: u64, cache: &mut DaySalt) -> Result<String, DbError> {
    use sha2::Digest;
    let salt = match cache {
        Some((d, salt)) if *d == day => salt.clone(),
        _ => {
            let d = SqlValue::Integer(day as i64);
            db.execute(
                "INSERT OR IGNORE INTO kb_client_salts (day, salt) VALUES (?, randomblob(16))",
                std::slice::from_ref(&d),
            )?;
            db.execute("DELETE FROM kb_client_salts WHERE day < ?", &[SqlValue::Integer(day as i64 - 1)])?;
            let rows = db.execute("SELECT salt FROM kb_client_salts WHERE day = ?", &[d])?;
            let salt = rows
                .first()
                .and_then(|r| r.first())
                .and_then(SqlValue::blob)
                .filter(|b| b.len() >= 16)
                .ok_or_else(|| DbError::Statement("kb_client_salts has no salt for the day".into()))?
                .to_vec();
            *cache = Some((day, salt.clone()));
            salt
        }
    };
    let digest = sha2::Sha256::new().chain_update(&salt).chain_update(client.as_bytes()).finalize();
    Ok(digest.iter().take(12).map(|b| format!("{b:02x}")).collect())
}

/// Deletes what is older than the retention period: events, answers, feedback
/// (on answers and on pages), rate-limit rows and question vectors (indexed
/// deletes), and the salts of days before yesterday.
pub fn prune(db: &dyn Db, retention_days: u32, now: u64) -> Result<(), DbError> {
    let cutoff = SqlValue::Integer(now.saturating_sub(u64::from(retention_days) * DAY) as i64);
    for table in ["kb_events", "kb_feedback", "kb_answers", "kb_page_feedback", "kb_rate_limited"] {
        db.execute(&format!("DELETE FROM {table} WHERE time < ?"), std::slice::from_ref(&cutoff))?;
    }
    // A vector is as old as the question it was computed for may be; one still
    // asked is computed again by the next report.
    db.execute("DELETE FROM kb_question_vectors WHERE created < ?", &[cutoff])?;
    db.execute("DELETE FROM kb_client_salts WHERE day < ?", &[SqlValue::Integer((now / DAY) as i64 - 1)])?;
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
    /// The day's salt of the rate-limit pseudonyms, once read ([`pseudonym`]).
    salt: DaySalt,
}

/// One write in this many prunes (drawn at random, so that instances that live
/// for one request, as on Spin, prune as often as long-lived ones).
pub const PRUNE_EVERY: u64 = 500;

/// What a recorder can be asked to write.
#[derive(Clone, Copy)]
pub enum Write<'a> {
    Event(&'a Event),
    Feedback(&'a Feedback),
    PageFeedback(&'a PageFeedback),
    RateLimited(&'a RateLimited<'a>),
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
        let salt = &mut self.salt;
        let mut once = |db: &dyn Db| match w {
            Write::Event(e) => event(db, e, now).map(|()| true),
            Write::Feedback(f) => feedback(db, f, now),
            Write::PageFeedback(f) => page_feedback(db, f, now).map(|()| true),
            Write::RateLimited(r) => rate_limited(db, r, salt).map(|()| true),
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
            // A database an older build made has what that build wrote but
            // not the tables it did not know, which the prune also empties:
            // the write went through without a migration, so migrate now.
            if let Err(DbError::Statement(_)) = prune(db, settings.retention_days, now) {
                schema::ensure(db, now)?;
                prune(db, settings.retention_days, now)?;
            }
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
