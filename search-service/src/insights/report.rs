//! The insights report: what `site-builder insights` renders and
//! `GET /api/insights` returns (JSON, documented in `openapi.yaml`).
//!
//! Counts come from SQL aggregates over the period, so a report reads a bounded
//! number of rows however much traffic was recorded; what is held in memory is
//! bounded too (the [`MAX_GAP_QUESTIONS`] most asked unanswered questions, the
//! [`MAX_FEEDBACK`] newest feedback rows).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use super::record::{rate_limit_variable, Settings};
use super::{cluster, schema, Db, InsightsError, SqlValue};
use crate::service::{rfc3339, Service};

/// Most distinct unanswered questions clustered into gaps (the most asked).
pub const MAX_GAP_QUESTIONS: usize = 500;
/// Most feedback rows read (the newest).
pub const MAX_FEEDBACK: usize = 5000;
/// Gap groups in a report.
pub const MAX_GAPS: usize = 25;
/// Example questions per gap group.
pub const MAX_EXAMPLES: usize = 5;

/// A best result below this cosine with the question is a weak match: answered,
/// but from pages that barely touch it (the extractive agent's own `weak_below`,
/// where a word no page uses makes it decline). Measured on CSC with all-MiniLM-L6-v2
/// (docs/benchmarks/insights.md): 4 of the 100 dev questions (all answerable)
/// score below it, off-topic questions 0.17–0.42, and needs the guide meets
/// only in passing 0.39–0.60; so a weak match is a lead worth a look, while
/// an abstention or a thumbs down is a verdict.
pub const WEAK_MATCH: f32 = search_core::index::relevance::WEAK_COSINE;

/// The SQL of a weak match (an answer or results, from a best cosine below
/// [`WEAK_MATCH`]).
fn weak_sql() -> String {
    format!("(abstained = 0 AND results > 0 AND top_score < {WEAK_MATCH})")
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// When it was computed (RFC 3339).
    pub generated: String,
    pub period: Period,
    pub recording: Recording,
    pub totals: Totals,
    /// Questions over time, one entry per bucket of the period (empty ones included).
    pub series: Vec<Bucket>,
    /// Unanswered, weakly matched and thumbs-down questions grouped by meaning, biggest first:
    /// the first five are what the knowledge base should answer next.
    pub gaps: Vec<Gap>,
    /// Distinct gap questions in the period, and how many of them were clustered.
    pub gap_questions: usize,
    pub gap_questions_clustered: usize,
    /// The most asked questions, answered or not.
    pub top_questions: Vec<Asked>,
    /// Pages by citations in answers, then by appearances in results.
    pub cited_pages: Vec<PageStat>,
    /// Pages of the index no search or chat retrieved in the period (candidates
    /// for cleanup, or for better titles); `None` when the pages cannot be listed
    /// (the PostgreSQL backend).
    pub never_retrieved: Option<Vec<PageRef>>,
    /// Pages in the index, when known.
    pub pages_total: Option<usize>,
    /// Feedback, newest first, one entry per answer (its last thumb, its comment).
    pub feedback: Vec<FeedbackItem>,
    /// "Was this helpful?" on article pages: each page rated, worst first.
    /// (`default`: a report from a function older than the page ratings has none.)
    #[serde(default)]
    pub pages_rated: Vec<PageRating>,
    /// Requests the rate limit refused, so that a limit that locks out many
    /// readers behind one address (a campus lab) is seen.
    #[serde(default)]
    pub rate_limited: RateLimits,
}

/// The "Was this helpful?" answers of one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRating {
    /// The page as the index names it now (its title and URL); a page no longer
    /// in the index keeps the URL it was rated at, as its title too.
    #[serde(flatten)]
    pub page: PageRef,
    /// Readers who said it helped, and who said it did not: each reader's last
    /// answer on the page (readers the widget gives no id count once per answer).
    pub yes: u64,
    pub no: u64,
    /// `yes / (yes + no)`.
    pub helpful: f64,
    /// When it was last rated (RFC 3339).
    pub last: String,
    /// Its newest comments, newest first (at most [`MAX_PAGE_COMMENTS`]).
    pub comments: Vec<PageComment>,
}

/// A reader's comment on a page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageComment {
    pub time: String,
    /// `up` or `down`: the answer it came with.
    pub rating: String,
    pub comment: String,
}

/// Comments shown per rated page.
pub const MAX_PAGE_COMMENTS: usize = 5;
/// Rated pages in a report (the worst first).
pub const MAX_RATED_PAGES: usize = 100;

/// Requests refused by the rate limit in the period. The counts are lower
/// bounds: the function writes a minute's count at each of its first 8
/// refusals, then at 16, 32, 64, … (a flood costs a few writes, not one per
/// request), and settles it exactly at the client's first refusal of the next
/// minute, so only the last minute of a run of more than 8 refusals may be
/// counted short, by less than half.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RateLimits {
    /// Requests refused (at least).
    pub refused: u64,
    /// Distinct clients refused (pseudonyms of a day: an address refused on two
    /// days counts twice).
    pub clients: u64,
    /// Minutes in which some request was refused.
    pub minutes: u64,
    /// The minute with the most refusals.
    pub busiest_minute: Option<BusyMinute>,
    /// The refusals of the client refused most: when it is nearly all of them,
    /// one address (a lab or a campus behind NAT) hit the limit.
    pub busiest_client_refused: u64,
    /// Per endpoint, most refused first.
    pub buckets: Vec<BucketLimit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyMinute {
    /// Its first second (RFC 3339).
    pub start: String,
    pub refused: u64,
    pub clients: u64,
}

/// One endpoint's refusals, and the variable that sets its limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketLimit {
    /// `search`, `chat`, `feedback` or `insights`.
    pub bucket: String,
    /// The Spin variable to raise (`search_rate_limit`).
    pub variable: String,
    /// The limit when it last refused (requests a minute per client).
    pub limit: u64,
    pub refused: u64,
    pub clients: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Period {
    pub since: String,
    pub until: String,
    /// The width of a [`Bucket`]: `hour`, `day` or `week`.
    pub bucket: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    pub enabled: bool,
    pub retention_days: u32,
    /// The oldest event still stored, if any.
    pub oldest: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub searches: u64,
    pub chats: u64,
    /// Chats that abstained (the knowledge base did not answer).
    pub abstained: u64,
    /// Chats answered by the extractive fallback because the LLM failed.
    pub degraded: u64,
    /// Searches that found nothing.
    pub no_results: u64,
    /// Searches and chats answered from a weak match (best cosine below [`WEAK_MATCH`]).
    pub weak: u64,
    /// Distinct widget ids (browsers that sent one).
    pub visitors: u64,
    /// Answers rated, by their last thumb.
    pub thumbs_up: u64,
    pub thumbs_down: u64,
    pub comments: u64,
    /// `abstained / chats`, `degraded / chats`, `thumbs_down / rated` (0 when
    /// there is nothing to divide).
    pub abstention_rate: f64,
    pub degraded_rate: f64,
    pub thumbs_down_rate: f64,
    pub search_latency_p50_ms: Option<f64>,
    pub search_latency_p95_ms: Option<f64>,
    pub chat_latency_p50_ms: Option<f64>,
    pub chat_latency_p95_ms: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The bucket's first second (RFC 3339).
    pub start: String,
    pub searches: u64,
    pub chats: u64,
    pub abstained: u64,
    pub degraded: u64,
}

/// A group of questions that ask for one thing the knowledge base does not answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    /// The group's most asked question.
    pub label: String,
    /// Times its questions were asked (searches and chats) or rated down.
    pub count: u64,
    /// Distinct questions in it.
    pub questions: usize,
    pub abstained: u64,
    pub no_results: u64,
    pub weak: u64,
    pub thumbs_down: u64,
    pub examples: Vec<Asked>,
    /// The pages retrieved or cited for these questions most often: the nearest
    /// the knowledge base came, where a fix would start.
    pub closest_pages: Vec<PageStat>,
}

/// A question and how often it was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    pub question: String,
    pub count: u64,
    /// When it was last asked (RFC 3339).
    pub last: String,
    /// Of those times, how many went unanswered (abstained, nothing found, a weak
    /// match, rated down).
    pub unanswered: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRef {
    pub page_id: String,
    pub title: String,
    /// Site-relative; empty when the page is not in the index any more.
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageStat {
    #[serde(flatten)]
    pub page: PageRef,
    /// Answers citing it (for gap groups: times it was retrieved or cited for the group).
    pub citations: u64,
    /// Times it was among the results or the evidence.
    pub retrievals: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackItem {
    /// Of the last event on this answer (RFC 3339).
    pub time: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub answer_id: Option<String>,
    /// `up` or `down`: the last thumb.
    pub rating: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub comment: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub question: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub answer: Option<String>,
    pub citations: Vec<String>,
}

/// What to report on.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// First second of the period (Unix).
    pub since: u64,
    pub now: u64,
    pub settings: Settings,
    /// The cosine from which two questions are one need ([`cluster::THRESHOLD`]),
    /// on the reference scale (`relevance::CosineScale`).
    pub threshold: f32,
}

impl Options {
    /// The period from `since` to `now`, grouped at [`cluster::THRESHOLD`].
    pub fn new(since: u64, now: u64, settings: Settings) -> Options {
        Options { since, now, settings, threshold: cluster::THRESHOLD }
    }
}

fn int(row: &[SqlValue], i: usize) -> Result<i64, InsightsError> {
    row.get(i).and_then(SqlValue::int).ok_or_else(|| InsightsError::Row(format!("column {i} is not an integer")))
}

fn count(row: &[SqlValue], i: usize) -> Result<u64, InsightsError> {
    // SUM over no rows is NULL.
    match row.get(i) {
        Some(SqlValue::Null) => Ok(0),
        _ => Ok(int(row, i)?.max(0) as u64),
    }
}

fn text(row: &[SqlValue], i: usize) -> Result<String, InsightsError> {
    row.get(i)
        .and_then(SqlValue::text)
        .map(str::to_string)
        .ok_or_else(|| InsightsError::Row(format!("column {i} is not text")))
}

fn opt_text(row: &[SqlValue], i: usize) -> Option<String> {
    row.get(i).and_then(SqlValue::text).map(str::to_string)
}

fn list(row: &[SqlValue], i: usize) -> Vec<String> {
    row.get(i).and_then(SqlValue::text).and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default()
}

fn time(row: &[SqlValue], i: usize) -> Result<String, InsightsError> {
    Ok(rfc3339(int(row, i)?.max(0) as u64))
}

/// The pages of the index, by id (title, URL), when the corpus is bundled
/// (`None` for the PostgreSQL backend, whose pages are not listed). One display
/// record is read per page, not per chunk.
pub fn pages_of(svc: &Service) -> Option<BTreeMap<String, PageRef>> {
    let index = svc.index()?;
    let mut pages = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    for doc in 0..index.len() as u32 {
        if !seen.insert(index.page_of(doc)) {
            continue;
        }
        let Ok(m) = index.chunk(doc) else { continue };
        pages.entry(m.page_id.clone()).or_insert(PageRef { page_id: m.page_id, title: m.title, url: m.url });
    }
    Some(pages)
}

/// The period a report covers: its first second, how wide a bucket of the series
/// is and its name, and the oldest second recorded (if anything is).
struct Span {
    start: u64,
    width: u64,
    bucket: &'static str,
    oldest: Option<i64>,
}

fn span(db: &dyn Db, opts: &Options) -> Result<Span, InsightsError> {
    let oldest = db
        .execute(
            "SELECT MIN(time) FROM (SELECT MIN(time) AS time FROM kb_events UNION ALL SELECT MIN(time) FROM kb_feedback
             UNION ALL SELECT MIN(time) FROM kb_page_feedback UNION ALL SELECT MIN(time) FROM kb_rate_limited)",
            &[],
        )?
        .first()
        .and_then(|r| r.first().and_then(SqlValue::int));
    // The period starts at `since`, or at the oldest event for `all`.
    let start = if opts.since == 0 { oldest.unwrap_or(opts.now as i64).max(0) as u64 } else { opts.since };
    let span = opts.now.saturating_sub(start);
    let (width, bucket) = if span <= 2 * super::DAY {
        (3600, "hour")
    } else if span <= 92 * super::DAY {
        (super::DAY, "day")
    } else {
        (7 * super::DAY, "week")
    };
    Ok(Span { start, width, bucket, oldest })
}

/// Questions over time, and the totals they add up to (feedback's are added by
/// [`feedback`]).
fn series(db: &dyn Db, since: &SqlValue, span: &Span, now: u64) -> Result<(Totals, Vec<Bucket>), InsightsError> {
    let mut totals = Totals::default();
    let first = span.start / span.width;
    let last = now / span.width;
    let mut series: Vec<Bucket> =
        (first..=last.max(first)).map(|b| Bucket { start: rfc3339(b * span.width), ..Bucket::default() }).collect();
    let weak = weak_sql();
    let rows = db.execute(
        &format!(
            "SELECT time / ?, kind, COUNT(*), SUM(abstained), SUM(degraded), SUM(results = 0), SUM({weak})
             FROM kb_events WHERE time >= ? GROUP BY 1, 2"
        ),
        &[SqlValue::Integer(span.width as i64), since.clone()],
    )?;
    for r in &rows {
        let b = int(r, 0)?.max(0) as u64;
        let (n, abstained, degraded, none) = (count(r, 2)?, count(r, 3)?, count(r, 4)?, count(r, 5)?);
        totals.weak += count(r, 6)?;
        let slot = b.checked_sub(first).and_then(|i| series.get_mut(i as usize));
        match text(r, 1)?.as_str() {
            "search" => {
                totals.searches += n;
                totals.no_results += none;
                if let Some(slot) = slot {
                    slot.searches += n;
                }
            }
            _ => {
                totals.chats += n;
                totals.abstained += abstained;
                totals.degraded += degraded;
                if let Some(slot) = slot {
                    slot.chats += n;
                    slot.abstained += abstained;
                    slot.degraded += degraded;
                }
            }
        }
    }
    totals.visitors = db
        .execute(
            "SELECT COUNT(DISTINCT visitor) FROM kb_events WHERE time >= ? AND visitor IS NOT NULL",
            std::slice::from_ref(since),
        )?
        .first()
        .map(|r| count(r, 0))
        .transpose()?
        .unwrap_or(0);
    latencies(db, since, &mut totals)?;
    Ok((totals, series))
}

/// The p50 and p95 latencies of searches and chats, each one indexed query.
fn latencies(db: &dyn Db, since: &SqlValue, totals: &mut Totals) -> Result<(), InsightsError> {
    for (kind, n, p50, p95) in [
        ("search", totals.searches, &mut totals.search_latency_p50_ms, &mut totals.search_latency_p95_ms),
        ("chat", totals.chats, &mut totals.chat_latency_p50_ms, &mut totals.chat_latency_p95_ms),
    ] {
        for (q, out) in [(0.5, p50), (0.95, p95)] {
            if n == 0 {
                continue;
            }
            let offset = ((n - 1) as f64 * q).round() as i64;
            *out = db
                .execute(
                    "SELECT latency_ms FROM kb_events WHERE time >= ? AND kind = ? ORDER BY latency_ms LIMIT 1 OFFSET ?",
                    &[since.clone(), kind.into(), SqlValue::Integer(offset)],
                )?
                .first()
                .and_then(|r| r.first().and_then(SqlValue::real));
        }
    }
    Ok(())
}

/// An answer rated down: its question normalised (the gap key), as shown, and
/// the answer's id.
struct RatedDown {
    key: String,
    question: String,
    answer_id: Option<String>,
}

/// Feedback, one entry per answer (its last thumb, its comment), newest first;
/// the answers rated down; and the feedback totals added to `totals`.
fn feedback(
    db: &dyn Db,
    since: &SqlValue,
    totals: &mut Totals,
) -> Result<(Vec<FeedbackItem>, Vec<RatedDown>), InsightsError> {
    // The rows newest first, so the first row of an answer has its last thumb.
    let rows = db.execute(
        "SELECT time, answer_id, rating, comment, question, answer, citations, lower(trim(question))
         FROM kb_feedback WHERE time >= ? ORDER BY time DESC, id DESC LIMIT ?",
        &[since.clone(), SqlValue::Integer(MAX_FEEDBACK as i64)],
    )?;
    let mut feedback: Vec<FeedbackItem> = Vec::new();
    let mut by_answer: HashMap<String, usize> = HashMap::new();
    let mut down = Vec::new();
    for r in &rows {
        let answer_id = opt_text(r, 1);
        let comment = opt_text(r, 3);
        if let Some(&i) = answer_id.as_ref().and_then(|id| by_answer.get(id)) {
            let item: &mut FeedbackItem = &mut feedback[i];
            if item.comment.is_none() {
                item.comment = comment;
            }
            item.question = item.question.take().or_else(|| opt_text(r, 4));
            item.answer = item.answer.take().or_else(|| opt_text(r, 5));
            continue;
        }
        let item = FeedbackItem {
            time: time(r, 0)?,
            answer_id: answer_id.clone(),
            rating: text(r, 2)?,
            comment,
            question: opt_text(r, 4),
            answer: opt_text(r, 5),
            citations: list(r, 6),
        };
        if item.rating == "down" {
            if let (Some(q), Some(key)) = (&item.question, opt_text(r, 7)) {
                down.push(RatedDown { key, question: q.clone(), answer_id: answer_id.clone() });
            }
        }
        if let Some(id) = answer_id {
            by_answer.insert(id, feedback.len());
        }
        feedback.push(item);
    }
    totals.thumbs_up = feedback.iter().filter(|f| f.rating == "up").count() as u64;
    totals.thumbs_down = feedback.iter().filter(|f| f.rating == "down").count() as u64;
    totals.comments = feedback.iter().filter(|f| f.comment.is_some()).count() as u64;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    totals.abstention_rate = ratio(totals.abstained, totals.chats);
    totals.degraded_rate = ratio(totals.degraded, totals.chats);
    totals.thumbs_down_rate = ratio(totals.thumbs_down, totals.thumbs_up + totals.thumbs_down);
    Ok((feedback, down))
}

/// One gap question: how often it was asked and left unanswered, and the pages
/// that came closest.
#[derive(Default)]
struct Q {
    text: String,
    count: u64,
    last: i64,
    abstained: u64,
    no_results: u64,
    weak: u64,
    thumbs_down: u64,
    pages: HashMap<String, u64>,
}

/// The gap questions, by their normalised text: searches and chats left
/// unanswered, with the pages retrieved for them (the first three of each
/// event), then the answers rated down with the pages they drew on. Also how
/// many distinct questions were unanswered in all (past the cap too).
fn gap_questions(
    db: &dyn Db,
    since: &SqlValue,
    down: Vec<RatedDown>,
) -> Result<(BTreeMap<String, Q>, usize), InsightsError> {
    let s = std::slice::from_ref(since);
    let weak = weak_sql();
    let mut qs: BTreeMap<String, Q> = BTreeMap::new();
    let unanswered = format!("time >= ? AND (abstained = 1 OR (kind = 'search' AND results = 0) OR {weak})");
    let rows = db.execute(
        &format!(
            // `trim(question)` beside MAX(time) is read from the latest row (SQLite's
            // rule for a bare column with MAX): the question as last spelled.
            "SELECT lower(trim(question)), trim(question), COUNT(*), MAX(time), SUM(abstained), SUM(kind = 'search' AND results = 0), SUM({weak})
             FROM kb_events WHERE {unanswered} GROUP BY 1 ORDER BY 3 DESC, 4 DESC LIMIT ?"
        ),
        &[since.clone(), SqlValue::Integer(MAX_GAP_QUESTIONS as i64)],
    )?;
    let gap_distinct = db
        .execute(&format!("SELECT COUNT(DISTINCT lower(trim(question))) FROM kb_events WHERE {unanswered}"), s)?
        .first()
        .map(|r| count(r, 0))
        .transpose()?
        .unwrap_or(0) as usize;
    for r in &rows {
        qs.insert(
            text(r, 0)?,
            Q {
                text: text(r, 1)?,
                count: count(r, 2)?,
                last: int(r, 3)?,
                abstained: count(r, 4)?,
                no_results: count(r, 5)?,
                weak: count(r, 6)?,
                ..Q::default()
            },
        );
    }
    let rows = db.execute(
        &format!(
            "SELECT lower(trim(question)), pages FROM kb_events WHERE {unanswered} ORDER BY time DESC LIMIT 20000"
        ),
        s,
    )?;
    for r in &rows {
        if let Some(q) = qs.get_mut(&text(r, 0)?) {
            for p in list(r, 1).into_iter().take(3) {
                *q.pages.entry(p).or_default() += 1;
            }
        }
    }
    let down_extra = rated_down(db, since, down, &mut qs)?;
    Ok((qs, gap_distinct + down_extra))
}

/// Adds the answers rated down to the gap questions, with the pages they cited
/// and retrieved; returns how many questions that added.
fn rated_down(
    db: &dyn Db,
    since: &SqlValue,
    down: Vec<RatedDown>,
    qs: &mut BTreeMap<String, Q>,
) -> Result<usize, InsightsError> {
    let cited_by_answer: HashMap<String, (Vec<String>, i64)> = db
        .execute(
            "SELECT answer_id, cited, pages, time FROM kb_events WHERE answer_id IN
               (SELECT answer_id FROM kb_feedback WHERE time >= ? AND rating = 'down' AND answer_id IS NOT NULL)",
            std::slice::from_ref(since),
        )?
        .iter()
        .filter_map(|r| {
            let mut pages = list(r, 1);
            pages.extend(list(r, 2));
            Some((opt_text(r, 0)?, (pages, int(r, 3).ok()?)))
        })
        .collect();
    let mut added = 0;
    for RatedDown { key, question, answer_id } in down {
        let (pages, at) = answer_id.as_ref().and_then(|id| cited_by_answer.get(id)).cloned().unwrap_or_default();
        if !qs.contains_key(&key) {
            if qs.len() >= MAX_GAP_QUESTIONS {
                continue;
            }
            added += 1;
        }
        let q = qs.entry(key).or_insert_with(|| Q { text: question, ..Q::default() });
        q.count += 1;
        q.thumbs_down += 1;
        q.last = q.last.max(at);
        for p in pages.into_iter().take(3) {
            *q.pages.entry(p).or_default() += 1;
        }
    }
    Ok(added)
}

/// One group of gap questions (`members` index `keys`) as the report shows it.
fn gap(members: &[usize], keys: &[String], qs: &BTreeMap<String, Q>, page_ref: &dyn Fn(&str) -> PageRef) -> Gap {
    let ms: Vec<&Q> = members.iter().map(|&i| &qs[&keys[i]]).collect();
    let mut pages: HashMap<&str, u64> = HashMap::new();
    for q in &ms {
        for (p, n) in &q.pages {
            *pages.entry(p).or_default() += n;
        }
    }
    let mut closest: Vec<(&str, u64)> = pages.into_iter().collect();
    closest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    Gap {
        label: ms[0].text.clone(),
        count: ms.iter().map(|q| q.count).sum(),
        questions: ms.len(),
        abstained: ms.iter().map(|q| q.abstained).sum(),
        no_results: ms.iter().map(|q| q.no_results).sum(),
        weak: ms.iter().map(|q| q.weak).sum(),
        thumbs_down: ms.iter().map(|q| q.thumbs_down).sum(),
        examples: ms
            .iter()
            .take(MAX_EXAMPLES)
            .map(|q| Asked {
                question: q.text.clone(),
                count: q.count,
                last: rfc3339(q.last.max(0) as u64),
                unanswered: q.abstained + q.no_results + q.weak + q.thumbs_down,
            })
            .collect(),
        closest_pages: closest
            .into_iter()
            .take(3)
            .map(|(p, n)| PageStat { page: page_ref(p), citations: n, retrievals: n })
            .collect(),
    }
}

/// The ten questions asked most, with how often each went unanswered.
fn top_questions(db: &dyn Db, since: &SqlValue) -> Result<Vec<Asked>, InsightsError> {
    let weak = weak_sql();
    db.execute(
        &format!(
            "SELECT trim(question), COUNT(*), MAX(time), SUM(abstained = 1 OR (kind = 'search' AND results = 0) OR {weak})
             FROM kb_events WHERE time >= ? GROUP BY lower(trim(question)) ORDER BY 2 DESC, 3 DESC LIMIT 10"
        ),
        std::slice::from_ref(since),
    )?
    .iter()
    .map(|r| Ok(Asked { question: text(r, 0)?, count: count(r, 1)?, last: time(r, 2)?, unanswered: count(r, 3)? }))
    .collect()
}

/// Pages: the fifteen most cited (then retrieved), and, when the corpus is
/// bundled, the pages nothing retrieved in the period.
fn page_stats(
    db: &dyn Db,
    since: &SqlValue,
    pages: Option<&BTreeMap<String, PageRef>>,
    page_ref: &dyn Fn(&str) -> PageRef,
) -> Result<(Vec<PageStat>, Option<Vec<PageRef>>), InsightsError> {
    let per_page = |column: &str| -> Result<HashMap<String, u64>, InsightsError> {
        db.execute(
            &format!("SELECT j.value, COUNT(*) FROM kb_events, json_each(kb_events.{column}) AS j WHERE kb_events.time >= ? GROUP BY j.value"),
            std::slice::from_ref(since),
        )?
        .iter()
        .map(|r| Ok((text(r, 0)?, count(r, 1)?)))
        .collect()
    };
    let citations = per_page("cited")?;
    let retrievals = per_page("pages")?;
    let mut cited: Vec<PageStat> = citations
        .keys()
        .chain(retrievals.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|p| PageStat {
            page: page_ref(p),
            citations: citations.get(p).copied().unwrap_or(0),
            retrievals: retrievals.get(p).copied().unwrap_or(0),
        })
        .collect();
    cited.sort_by(|a, b| {
        (b.citations, b.retrievals).cmp(&(a.citations, a.retrievals)).then(a.page.page_id.cmp(&b.page.page_id))
    });
    cited.truncate(15);
    let never_retrieved = pages.map(|all| {
        let mut v: Vec<PageRef> = all.values().filter(|p| !retrievals.contains_key(&p.page_id)).cloned().collect();
        v.sort_by(|a, b| a.title.to_lowercase().cmp(&b.title.to_lowercase()).then(a.page_id.cmp(&b.page_id)));
        v
    });
    Ok((cited, never_retrieved))
}

/// The pages readers rated ("Was this helpful?"), worst first: the lowest
/// helpful share, then the most "No"s. Each reader counts once per page (their
/// last answer in the period); answers with no reader id count one each.
fn pages_rated(
    db: &dyn Db,
    since: &SqlValue,
    page_ref: &dyn Fn(&str) -> PageRef,
) -> Result<Vec<PageRating>, InsightsError> {
    // `page_id` and `page` beside MAX(time) come from the latest row.
    let rows = db.execute(
        "SELECT page, SUM(rating = 'up'), SUM(rating = 'down'), MAX(time), page_id FROM kb_page_feedback f
         WHERE time >= ?1 AND (visitor IS NULL OR NOT EXISTS (SELECT 1 FROM kb_page_feedback g
           WHERE g.page = f.page AND g.visitor = f.visitor AND g.time >= ?1 AND g.id > f.id))
         GROUP BY page",
        std::slice::from_ref(since),
    )?;
    // Each with the URL it was rated at: the key its comments are found by.
    let mut rated: Vec<(String, PageRating)> = Vec::with_capacity(rows.len());
    for r in &rows {
        let url = text(r, 0)?;
        let (yes, no) = (count(r, 1)?, count(r, 2)?);
        let page = match opt_text(r, 4).map(|id| page_ref(&id)) {
            // Found in the index: its title and its URL now.
            Some(p) if !p.url.is_empty() => p,
            found => {
                PageRef { page_id: found.map_or_else(String::new, |p| p.page_id), title: url.clone(), url: url.clone() }
            }
        };
        let helpful = if yes + no == 0 { 0.0 } else { yes as f64 / (yes + no) as f64 };
        rated.push((url, PageRating { page, yes, no, helpful, last: time(r, 3)?, comments: Vec::new() }));
    }
    rated.sort_by(|(_, a), (_, b)| {
        a.helpful.total_cmp(&b.helpful).then(b.no.cmp(&a.no)).then(a.page.url.cmp(&b.page.url))
    });
    rated.truncate(MAX_RATED_PAGES);
    let at: HashMap<&str, usize> = rated.iter().enumerate().map(|(i, (url, _))| (url.as_str(), i)).collect();
    let comments = db.execute(
        "SELECT page, time, rating, comment FROM kb_page_feedback
         WHERE time >= ? AND comment IS NOT NULL ORDER BY time DESC, id DESC LIMIT ?",
        &[since.clone(), SqlValue::Integer(MAX_FEEDBACK as i64)],
    )?;
    let mut kept: Vec<Vec<PageComment>> = vec![Vec::new(); rated.len()];
    for r in &comments {
        let Some(&i) = at.get(text(r, 0)?.as_str()) else { continue };
        if kept[i].len() < MAX_PAGE_COMMENTS {
            kept[i].push(PageComment { time: time(r, 1)?, rating: text(r, 2)?, comment: text(r, 3)? });
        }
    }
    Ok(rated
        .into_iter()
        .zip(kept)
        .map(|((_, mut p), c)| {
            p.comments = c;
            p
        })
        .collect())
}

/// What the rate limit refused in the period: the totals, the busiest minute
/// and client, and each endpoint with the variable that sets its limit.
fn rate_limits(db: &dyn Db, since: &SqlValue) -> Result<RateLimits, InsightsError> {
    let s = std::slice::from_ref(since);
    let one =
        |sql: &str| -> Result<Option<Vec<SqlValue>>, InsightsError> { Ok(db.execute(sql, s)?.into_iter().next()) };
    let mut out = RateLimits::default();
    if let Some(r) =
        one("SELECT SUM(refused), COUNT(DISTINCT client), COUNT(DISTINCT time) FROM kb_rate_limited WHERE time >= ?")?
    {
        (out.refused, out.clients, out.minutes) = (count(&r, 0)?, count(&r, 1)?, count(&r, 2)?);
    }
    if out.refused == 0 {
        return Ok(out);
    }
    if let Some(r) = one("SELECT time, SUM(refused), COUNT(DISTINCT client) FROM kb_rate_limited WHERE time >= ?
         GROUP BY time ORDER BY 2 DESC, 1 DESC LIMIT 1")?
    {
        out.busiest_minute = Some(BusyMinute { start: time(&r, 0)?, refused: count(&r, 1)?, clients: count(&r, 2)? });
    }
    if let Some(r) =
        one("SELECT SUM(refused) FROM kb_rate_limited WHERE time >= ? GROUP BY client ORDER BY 1 DESC LIMIT 1")?
    {
        out.busiest_client_refused = count(&r, 0)?;
    }
    // `rate_limit` beside MAX(time): the limit of the latest refusal.
    for r in db.execute(
        "SELECT bucket, SUM(refused), COUNT(DISTINCT client), MAX(time), rate_limit FROM kb_rate_limited
         WHERE time >= ? GROUP BY bucket ORDER BY 2 DESC, 1",
        s,
    )? {
        let bucket = text(&r, 0)?;
        out.buckets.push(BucketLimit {
            variable: rate_limit_variable(&bucket),
            bucket,
            limit: count(&r, 4)?,
            refused: count(&r, 1)?,
            clients: count(&r, 2)?,
        });
    }
    Ok(out)
}

/// Computes the report: the period, questions over time, feedback, the gaps
/// (unanswered questions grouped by meaning), the top questions and the pages,
/// the pages readers rated and what the rate limit refused.
pub fn compute(db: &dyn Db, svc: &Service, opts: &Options) -> Result<Report, InsightsError> {
    schema::migrate(db, schema::MIGRATIONS, opts.now)?;
    let since = SqlValue::Integer(opts.since as i64);
    let pages = pages_of(svc);
    let page_ref = |id: &str| match pages.as_ref().and_then(|p| p.get(id)) {
        Some(p) => p.clone(),
        None => PageRef { page_id: id.to_string(), title: id.to_string(), url: String::new() },
    };
    let span = span(db, opts)?;
    let (mut totals, series) = series(db, &since, &span, opts.now)?;
    let (feedback, down) = feedback(db, &since, &mut totals)?;
    let (qs, gap_questions) = gap_questions(db, &since, down)?;
    let keys: Vec<String> = qs.keys().cloned().collect();
    let vectors = question_vectors(db, svc, &keys, opts.now);
    let weights: Vec<f64> = keys.iter().map(|k| qs[k].count as f64).collect();
    // The threshold is on the reference scale; the vectors are the encoder's own.
    let gaps = cluster::groups(&vectors, &weights, svc.cosine_scale().raw(opts.threshold))
        .iter()
        .take(MAX_GAPS)
        .map(|members| gap(members, &keys, &qs, &page_ref))
        .collect();
    let (cited_pages, never_retrieved) = page_stats(db, &since, pages.as_ref(), &page_ref)?;
    Ok(Report {
        generated: rfc3339(opts.now),
        period: Period { since: rfc3339(span.start), until: rfc3339(opts.now), bucket: span.bucket.into() },
        recording: Recording {
            enabled: opts.settings.enabled,
            retention_days: opts.settings.retention_days,
            oldest: span.oldest.map(|t| rfc3339(t.max(0) as u64)),
        },
        totals,
        series,
        gaps,
        gap_questions,
        gap_questions_clustered: keys.len(),
        top_questions: top_questions(db, &since)?,
        cited_pages,
        pages_total: pages.as_ref().map(BTreeMap::len),
        never_retrieved,
        feedback: feedback.into_iter().take(200).collect(),
        pages_rated: pages_rated(db, &since, &page_ref)?,
        rate_limited: rate_limits(db, &since)?,
    })
}

/// The questions' vectors, `keys.len() × 384`: from `kb_question_vectors` where
/// the encoder computed them before, else encoded now (in batches) and kept. A
/// cache that cannot be read or written costs time, not the report.
fn question_vectors(db: &dyn Db, svc: &Service, keys: &[String], now: u64) -> Vec<f32> {
    let encoder = format!("{:016x}", svc.encoder().fingerprint());
    let mut known: HashMap<String, Vec<f32>> = HashMap::new();
    for part in keys.chunks(200) {
        let marks = vec!["?"; part.len()].join(", ");
        let mut params = vec![SqlValue::Text(encoder.clone())];
        params.extend(part.iter().map(|k| SqlValue::Text(k.clone())));
        let Ok(rows) = db.execute(
            &format!("SELECT question, vector FROM kb_question_vectors WHERE encoder = ? AND question IN ({marks})"),
            &params,
        ) else {
            continue;
        };
        for r in rows {
            if let (Some(q), Some(b)) = (r.first().and_then(SqlValue::text), r.get(1).and_then(SqlValue::blob)) {
                if b.len() == cluster::DIM * 4 {
                    let v = b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                    known.insert(q.to_string(), v);
                }
            }
        }
    }
    let missing: Vec<&String> = keys.iter().filter(|k| !known.contains_key(*k)).collect();
    for part in missing.chunks(32) {
        let tokens: Vec<Vec<u32>> = part.iter().map(|k| svc.encoder().tokenize_query(k)).collect();
        let flat = svc.encoder().embed_tokens(&tokens);
        for (k, v) in part.iter().zip(flat.chunks_exact(cluster::DIM)) {
            let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            let _ = db.execute(
                "INSERT OR IGNORE INTO kb_question_vectors (question, encoder, vector, created) VALUES (?, ?, ?, ?)",
                &[
                    SqlValue::Text((*k).clone()),
                    SqlValue::Text(encoder.clone()),
                    SqlValue::Blob(blob),
                    SqlValue::Integer(now as i64),
                ],
            );
            known.insert((*k).clone(), v.to_vec());
        }
    }
    keys.iter().flat_map(|k| known.get(k).cloned().unwrap_or_else(|| vec![0.0; cluster::DIM])).collect()
}

#[cfg(all(test, not(target_arch = "wasm32")))]
pub(crate) mod tests {
    use super::*;
    use crate::insights::record::{self, Event, Feedback, Kind, PageFeedback, RateLimited, Recorder, Write};
    use crate::insights::{DbError, DAY};
    use search_core::container::AlignedBytes;

    /// The statements on a real SQLite, in memory.
    pub(crate) struct Lite(pub rusqlite::Connection);

    impl Db for Lite {
        fn execute(&self, statement: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>, DbError> {
            use rusqlite::types::{Value as V, ValueRef};
            let err = |e: rusqlite::Error| DbError::Statement(e.to_string());
            let mut st = self.0.prepare(statement).map_err(err)?;
            let n = st.column_count();
            let ps: Vec<V> = params
                .iter()
                .map(|p| match p {
                    SqlValue::Null => V::Null,
                    SqlValue::Integer(v) => V::Integer(*v),
                    SqlValue::Real(v) => V::Real(*v),
                    SqlValue::Text(v) => V::Text(v.clone()),
                    SqlValue::Blob(v) => V::Blob(v.clone()),
                })
                .collect();
            let mut rows = st.query(rusqlite::params_from_iter(ps)).map_err(err)?;
            let mut out = Vec::new();
            while let Some(r) = rows.next().map_err(err)? {
                out.push(
                    (0..n)
                        .map(|i| match r.get_ref(i) {
                            Ok(ValueRef::Integer(v)) => SqlValue::Integer(v),
                            Ok(ValueRef::Real(v)) => SqlValue::Real(v),
                            Ok(ValueRef::Text(t)) => SqlValue::Text(String::from_utf8_lossy(t).into()),
                            Ok(ValueRef::Blob(b)) => SqlValue::Blob(b.to_vec()),
                            _ => SqlValue::Null,
                        })
                        .collect(),
                );
            }
            Ok(out)
        }
    }

    pub(crate) fn lite() -> Lite {
        Lite(rusqlite::Connection::open_in_memory().unwrap())
    }

    fn files() -> (AlignedBytes, AlignedBytes) {
        let chunk = |page: &str, title: &str| search_core::testing::chunk(&format!("{page}#0"), page, title, title);
        search_core::testing::files(&[
            chunk("wifi", "Eduroam"),
            chunk("reset", "Passwords"),
            chunk("print", "Printing"),
        ])
    }

    fn chat(q: &str, id: &str, abstained: bool, cited: &[&str]) -> Event {
        Event {
            kind: Kind::Chat,
            mode: "extractive".into(),
            question: q.into(),
            answer_id: Some(id.into()),
            answer: Some(format!("The answer to {q}")),
            citations: cited.iter().map(|p| format!("/{p}.html")).collect(),
            visitor: Some("visitor-0001".into()),
            results: cited.len(),
            pages: vec!["reset".into(), "wifi".into()],
            cited: cited.iter().map(|s| s.to_string()).collect(),
            abstained,
            degraded: false,
            latency_ms: 40.0,
            top_score: Some(0.8),
        }
    }

    fn search(q: &str, pages: &[&str]) -> Event {
        Event {
            kind: Kind::Search,
            mode: "convex".into(),
            question: q.into(),
            answer_id: None,
            answer: None,
            citations: vec![],
            visitor: None,
            results: pages.len(),
            pages: pages.iter().map(|s| s.to_string()).collect(),
            cited: vec![],
            abstained: false,
            degraded: false,
            latency_ms: 10.0,
            top_score: if pages.is_empty() { None } else { Some(0.7) },
        }
    }

    fn thumb(id: &str, up: bool, comment: Option<&str>) -> Feedback {
        Feedback {
            answer_id: id.into(),
            up,
            comment: comment.map(str::to_string),
            page: Some("https://help.example.edu/kb/a.html?token=secret#top".into()),
            visitor: Some("visitor-0001".into()),
        }
    }

    const NOW: u64 = 1_796_083_200 + 12 * 3600;

    #[test]
    fn the_report_counts_groups_and_deduplicates() {
        let (idx, enc) = files();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let db = lite();
        let mut rec = Recorder::default();
        let settings = Settings::default();
        let mut w = |wr: Write<'_>, t: u64| rec.write(&db, wr, settings, t, 1).unwrap();
        w(Write::Event(&chat("How do I reset my password?", "a1", false, &["reset"])), NOW - 3600);
        w(Write::Event(&chat("Can I borrow a laptop?", "a2", true, &[])), NOW - 1800);
        w(Write::Event(&chat("can I borrow a laptop? ", "a3", true, &[])), NOW - 60);
        w(Write::Event(&search("eduroam", &["wifi", "reset"])), NOW - 30);
        w(Write::Event(&search("zzzz", &[])), NOW - 20);
        // Found, but from a page that barely matches: a weak match.
        w(Write::Event(&Event { top_score: Some(0.3), ..search("eduroam on linux", &["wifi"]) }), NOW - 15);
        w(Write::Feedback(&thumb("a1", false, None)), NOW - 10);
        w(Write::Feedback(&thumb("a1", false, Some("The link is broken"))), NOW - 5);
        // Older than the period: not counted.
        w(Write::Event(&search("old question", &["print"])), NOW - 40 * DAY);

        let r = compute(&db, &svc, &Options { threshold: 1.5, ..Options::new(NOW - 30 * DAY, NOW, settings) }).unwrap();
        assert_eq!((r.totals.searches, r.totals.chats, r.totals.abstained, r.totals.no_results), (3, 3, 2, 1));
        assert_eq!(r.totals.weak, 1);
        assert_eq!(r.totals.visitors, 1);
        assert_eq!((r.totals.thumbs_up, r.totals.thumbs_down, r.totals.comments), (0, 1, 1));
        assert!((r.totals.abstention_rate - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(r.period.bucket, "day");
        assert_eq!(r.series.len(), 31);
        assert_eq!(r.series.iter().map(|b| b.searches + b.chats).sum::<u64>(), 6);
        assert_eq!(r.series.last().unwrap().chats, 3);
        // One feedback entry for the answer: its thumb, then its comment.
        assert_eq!(r.feedback.len(), 1);
        assert_eq!(r.feedback[0].rating, "down");
        assert_eq!(r.feedback[0].comment.as_deref(), Some("The link is broken"));
        // Shown beside the answer as the assistant gave it.
        assert_eq!(r.feedback[0].question.as_deref(), Some("How do I reset my password?"));
        assert_eq!(r.feedback[0].answer.as_deref(), Some("The answer to How do I reset my password?"));
        assert_eq!(r.feedback[0].citations, ["/reset.html"]);
        // The gaps: the laptop question asked twice (two spellings, one question),
        // then the password answer rated down, then the search that found nothing.
        let labels: Vec<(&str, u64)> = r.gaps.iter().map(|g| (g.label.as_str(), g.count)).collect();
        assert!(labels.contains(&("can I borrow a laptop?", 2)), "{labels:?}");
        assert!(labels.contains(&("How do I reset my password?", 1)), "{labels:?}");
        assert!(labels.contains(&("zzzz", 1)), "{labels:?}");
        let weak = r.gaps.iter().find(|g| g.label == "eduroam on linux").expect("the weak match is a gap");
        assert_eq!((weak.weak, weak.abstained, weak.no_results), (1, 0, 0));
        assert_eq!(weak.closest_pages[0].page.title, "Eduroam");
        assert_eq!(r.gaps[0].label, "can I borrow a laptop?");
        assert_eq!(r.gaps[0].abstained, 2);
        let pw = r.gaps.iter().find(|g| g.label.starts_with("How do I reset")).unwrap();
        assert_eq!(pw.thumbs_down, 1);
        assert_eq!(pw.closest_pages[0].page.title, "Passwords");
        assert_eq!(r.gap_questions, 4);
        // Pages: cited first, then retrieved; the one page nothing retrieved.
        assert_eq!(r.cited_pages[0].page.page_id, "reset");
        assert_eq!((r.cited_pages[0].citations, r.cited_pages[0].retrievals), (1, 4));
        assert_eq!(r.cited_pages[1].page.page_id, "wifi");
        let never: Vec<&str> = r.never_retrieved.as_ref().unwrap().iter().map(|p| p.page_id.as_str()).collect();
        assert_eq!(never, ["print"]);
        assert_eq!(r.pages_total, Some(3));
        assert_eq!(r.top_questions[0].question, "can I borrow a laptop?");
        assert_eq!(r.top_questions[0].count, 2);
        // Computed vectors were kept: a second report encodes nothing new.
        let kept = db.execute("SELECT COUNT(*) FROM kb_question_vectors", &[]).unwrap();
        assert_eq!(kept[0][0], SqlValue::Integer(4));
        assert_eq!(
            compute(&db, &svc, &Options { threshold: 1.5, ..Options::new(NOW - 30 * DAY, NOW, settings) }).unwrap(),
            r
        );
    }

    #[test]
    fn what_is_stored_is_only_what_the_readme_says() {
        let db = lite();
        let mut rec = Recorder::default();
        rec.write(&db, Write::Event(&chat(&"x".repeat(5000), "a1", false, &[])), Settings::default(), NOW, 1).unwrap();
        rec.write(&db, Write::Feedback(&thumb("a1", true, Some("  "))), Settings::default(), NOW, 1).unwrap();
        let rows = db.execute("SELECT page, comment, length(question), visitor FROM kb_feedback", &[]).unwrap();
        // The page's path only, an empty comment as none, questions truncated.
        assert_eq!(rows[0][0], SqlValue::Text("/kb/a.html".into()));
        assert_eq!(rows[0][1], SqlValue::Null);
        assert_eq!(rows[0][2], SqlValue::Integer(record::MAX_QUESTION_CHARS as i64));
        // A visitor id that is not the widget's plain token is dropped.
        let mut e = search("q", &[]);
        e.visitor = Some("<script>".into());
        rec.write(&db, Write::Event(&e), Settings::default(), NOW, 1).unwrap();
        let rows = db.execute("SELECT visitor FROM kb_events WHERE kind = 'search'", &[]).unwrap();
        assert_eq!(rows[0][0], SqlValue::Null);
    }

    #[test]
    fn feedback_is_kept_only_for_an_answer_the_function_gave() {
        let db = lite();
        let mut rec = Recorder::default();
        let on = Settings::default();
        // Nothing recorded yet (not even the tables): unknown, and nothing written.
        let e = rec.write(&db, Write::Feedback(&thumb("made-up", false, Some("spam"))), on, NOW, 1).unwrap_err();
        assert_eq!(e, InsightsError::UnknownAnswer("made-up".into()));
        rec.write(&db, Write::Event(&chat("Where is the library?", "a7", false, &["wifi"])), on, NOW, 1).unwrap();
        let e = rec.write(&db, Write::Feedback(&thumb("a8", false, None)), on, NOW, 1).unwrap_err();
        assert!(e.to_string().contains("a8"), "{e}");
        let count = |t: &str| db.execute(&format!("SELECT COUNT(*) FROM {t}"), &[]).unwrap()[0][0].clone();
        assert_eq!(count("kb_feedback"), SqlValue::Integer(0));
        // The real id: kept, with the answer's own question, text and citations.
        rec.write(&db, Write::Feedback(&thumb("a7", true, None)), on, NOW, 1).unwrap();
        let rows = db.execute("SELECT question, answer, citations, rating FROM kb_feedback", &[]).unwrap();
        assert_eq!(
            rows[0],
            [
                SqlValue::Text("Where is the library?".into()),
                SqlValue::Text("The answer to Where is the library?".into()),
                SqlValue::Text(r#"["/wifi.html"]"#.into()),
                SqlValue::Text("up".into()),
            ]
        );
        // Past the retention period the answer goes, and feedback on it is refused.
        let week = Settings { enabled: true, retention_days: 7 };
        rec.write(&db, Write::Event(&search("later", &[])), week, NOW + 8 * DAY, record::PRUNE_EVERY).unwrap();
        assert_eq!(count("kb_answers"), SqlValue::Integer(0));
        assert!(rec.write(&db, Write::Feedback(&thumb("a7", false, None)), week, NOW + 8 * DAY, 1).is_err());
    }

    #[test]
    fn a_version_1_database_gains_the_answers_table_on_the_next_write() {
        use crate::insights::schema::{migrate, Migration, MIGRATIONS};
        let db = lite();
        const V1: &[Migration] = &[Migration { version: 1, statements: MIGRATIONS[0].statements }];
        migrate(&db, V1, NOW).unwrap();
        record::event(&db, &search("kept", &["wifi"]), NOW).unwrap();
        let mut rec = Recorder::default();
        rec.write(&db, Write::Event(&chat("q", "a1", false, &[])), Settings::default(), NOW, 1).unwrap();
        assert_eq!(schema::version(&db).unwrap(), schema::latest());
        // One chat event, not two: the answer is written first, so the retry
        // after the migration did not add a second event.
        let n = db.execute("SELECT kind, COUNT(*) FROM kb_events GROUP BY kind ORDER BY kind", &[]).unwrap();
        assert_eq!(n, [["chat".into(), SqlValue::Integer(1)], ["search".into(), SqlValue::Integer(1)]]);
        rec.write(&db, Write::Feedback(&thumb("a1", true, None)), Settings::default(), NOW, 1).unwrap();
    }

    #[test]
    fn a_version_2_database_is_pruned_and_migrated_though_its_writes_need_no_migration() {
        use crate::insights::schema::{migrate, MIGRATIONS};
        let db = lite();
        migrate(&db, &MIGRATIONS[..2], NOW).unwrap();
        record::event(&db, &search("old", &["wifi"]), NOW - 100 * DAY).unwrap();
        // A search fits version 2's tables; its prune reaches the newer ones.
        let mut rec = Recorder::default();
        rec.write(&db, Write::Event(&search("q", &[])), Settings::default(), NOW, record::PRUNE_EVERY).unwrap();
        assert_eq!(schema::version(&db).unwrap(), schema::latest());
        let n = db.execute("SELECT COUNT(*) FROM kb_events", &[]).unwrap();
        assert_eq!(n[0][0], SqlValue::Integer(1), "the old search was pruned, the new one kept");
    }

    #[test]
    fn recording_off_writes_nothing_and_retention_prunes() {
        let db = lite();
        let mut rec = Recorder::default();
        let off = Settings { enabled: false, ..Settings::default() };
        rec.write(&db, Write::Event(&search("q", &[])), off, NOW, 0).unwrap();
        assert!(db.execute("SELECT 1 FROM kb_events", &[]).is_err(), "recording off must not even create tables");
        let on = Settings { enabled: true, retention_days: 7 };
        for age in [10 * DAY, 8 * DAY, DAY] {
            rec.write(&db, Write::Event(&search(&format!("q{age}"), &[])), on, NOW - age, 1).unwrap();
        }
        db.execute(
            "INSERT INTO kb_question_vectors (question, encoder, vector, created) VALUES ('old', 'e', x'00', ?), ('new', 'e', x'00', ?)",
            &[SqlValue::Integer((NOW - 9 * DAY) as i64), SqlValue::Integer(NOW as i64)],
        )
        .unwrap();
        let count = |table: &str| db.execute(&format!("SELECT COUNT(*) FROM {table}"), &[]).unwrap()[0][0].clone();
        assert_eq!(count("kb_events"), SqlValue::Integer(3), "no prune without the draw");
        // The draw that prunes: what is older than 7 days goes, the write stays.
        rec.write(&db, Write::Event(&search("today", &[])), on, NOW, record::PRUNE_EVERY * 3).unwrap();
        let rows = db.execute("SELECT COUNT(*), MIN(time) FROM kb_events", &[]).unwrap();
        assert_eq!(rows[0][0], SqlValue::Integer(2));
        assert_eq!(rows[0][1], SqlValue::Integer((NOW - DAY) as i64));
        assert_eq!(count("kb_question_vectors"), SqlValue::Integer(1));
    }

    #[test]
    fn migrations_are_idempotent_and_a_newer_schema_is_left_alone() {
        use crate::insights::schema::{migrate, version, Migration, MIGRATIONS};
        let db = lite();
        assert_eq!(version(&db).unwrap(), 0);
        assert_eq!(migrate(&db, MIGRATIONS, NOW).unwrap(), schema::latest());
        // Twice (two instances starting together) is harmless.
        assert_eq!(migrate(&db, MIGRATIONS, NOW).unwrap(), schema::latest());
        record::event(&db, &search("kept", &["wifi"]), NOW).unwrap();
        // An upgrade applies only what is new, and keeps the rows.
        const NEXT: &[Migration] = &[
            Migration { version: 1, statements: MIGRATIONS[0].statements },
            Migration { version: 2, statements: MIGRATIONS[1].statements },
            Migration { version: 3, statements: MIGRATIONS[2].statements },
            Migration { version: 4, statements: &["CREATE TABLE IF NOT EXISTS kb_extra (x INTEGER)"] },
        ];
        assert_eq!(migrate(&db, NEXT, NOW).unwrap(), 4);
        assert_eq!(version(&db).unwrap(), 4);
        assert_eq!(db.execute("SELECT COUNT(*) FROM kb_events", &[]).unwrap()[0][0], SqlValue::Integer(1));
        // A version 4 this build (version 3) cannot write into: its write fails,
        // the migration then finds the newer version, says so, and the recorder
        // writes nothing more.
        db.execute("DROP TABLE kb_events", &[]).unwrap();
        db.execute("CREATE TABLE kb_events (id INTEGER PRIMARY KEY, v4 TEXT NOT NULL)", &[]).unwrap();
        let mut rec = Recorder::default();
        let e = rec.write(&db, Write::Event(&search("q", &[])), Settings::default(), NOW, 1).unwrap_err();
        assert!(matches!(e, InsightsError::NewerSchema { found: 4, known: 3 }), "{e}");
        assert!(e.to_string().contains("newer site-builder"));
        assert!(rec.write(&db, Write::Event(&search("q", &[])), Settings::default(), NOW, 1).is_ok());
        assert_eq!(db.execute("SELECT COUNT(*) FROM kb_events", &[]).unwrap()[0][0], SqlValue::Integer(0));
    }

    #[test]
    fn a_new_database_is_migrated_by_the_first_write_and_a_vanished_table_comes_back() {
        let db = lite();
        let mut rec = Recorder::default();
        rec.write(&db, Write::Event(&search("first", &[])), Settings::default(), NOW, 1).unwrap();
        assert_eq!(schema::version(&db).unwrap(), schema::latest());
        rec.write(&db, Write::Event(&chat("q", "a", false, &[])), Settings::default(), NOW, 1).unwrap();
        db.execute("DROP TABLE kb_feedback", &[]).unwrap();
        rec.write(&db, Write::Feedback(&thumb("a", true, None)), Settings::default(), NOW, 1).unwrap();
        assert_eq!(db.execute("SELECT COUNT(*) FROM kb_feedback", &[]).unwrap()[0][0], SqlValue::Integer(1));
    }

    fn limited<'a>(client: &'a str, minute: u64, refused: u64) -> RateLimited<'a> {
        RateLimited { bucket: "search", client, minute, refused, limit: 600 }
    }

    fn rated(
        page: &str,
        page_id: Option<&str>,
        up: bool,
        comment: Option<&str>,
        visitor: Option<&str>,
    ) -> PageFeedback {
        PageFeedback {
            page: page.into(),
            page_id: page_id.map(str::to_string),
            up,
            comment: comment.map(str::to_string),
            visitor: visitor.map(str::to_string),
        }
    }

    /// The report of the last 30 days at NOW over `db`.
    fn report_of(db: &Lite, svc: &Service) -> Report {
        let opts = Options { threshold: 1.5, ..Options::new(NOW - 30 * DAY, NOW, Settings::default()) };
        compute(db, svc, &opts).unwrap()
    }

    #[test]
    fn rate_limited_minutes_are_one_row_each_counted_apart_from_the_questions() {
        let (idx, enc) = files();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let db = lite();
        let mut rec = Recorder::default();
        let on = Settings::default();
        rec.write(&db, Write::Event(&chat("How do I reset my password?", "a1", false, &["reset"])), on, NOW - 900, 1)
            .unwrap();
        rec.write(&db, Write::Event(&search("zzzz", &[])), on, NOW - 800, 1).unwrap();
        rec.write(&db, Write::Feedback(&thumb("a1", false, Some("wrong"))), on, NOW - 700, 1).unwrap();
        let before = report_of(&db, &svc);
        assert_eq!(before.rate_limited, RateLimits::default());

        // A lab behind one address floods search in one minute: its count is
        // written at 1, 2, 4 and 8, then settled at 11 by its next minute's first
        // refusal; a late, smaller write does not lower it. Another client is
        // refused once in the same minute.
        let minute = (NOW - 600) / 60;
        let lab = "192.0.2.10";
        for (client, m, n) in [(lab, minute, 1), (lab, minute, 2), (lab, minute, 4), (lab, minute, 8)] {
            rec.write(&db, Write::RateLimited(&limited(client, m, n)), on, NOW - 600, 1).unwrap();
        }
        rec.write(&db, Write::RateLimited(&limited("198.51.100.7", minute, 1)), on, NOW - 590, 1).unwrap();
        rec.write(&db, Write::RateLimited(&limited(lab, minute + 1, 1)), on, NOW - 540, 1).unwrap();
        rec.write(&db, Write::RateLimited(&limited(lab, minute, 11)), on, NOW - 540, 1).unwrap();
        rec.write(&db, Write::RateLimited(&limited(lab, minute, 4)), on, NOW - 530, 1).unwrap();
        let rate = RateLimited { bucket: "chat", limit: 20, ..limited(lab, minute + 1, 2) };
        rec.write(&db, Write::RateLimited(&rate), on, NOW - 530, 1).unwrap();
        let rows = db.execute("SELECT time, bucket, refused FROM kb_rate_limited ORDER BY time, bucket, refused", &[]);
        let rows = rows.unwrap();
        assert_eq!(rows.len(), 4, "one row per client, endpoint and minute: {rows:?}");
        let t = |m: u64| SqlValue::Integer((m * 60) as i64);
        assert_eq!(rows[1], [t(minute), "search".into(), SqlValue::Integer(11)]);

        // No address is stored: the clients are pseudonyms, one per address.
        let clients = db.execute("SELECT DISTINCT client FROM kb_rate_limited", &[]).unwrap();
        assert_eq!(clients.len(), 2);
        for c in &clients {
            let c = c[0].text().unwrap();
            assert!(c.len() == 24 && c.bytes().all(|b| b.is_ascii_hexdigit()), "{c}");
        }
        let dump = db.execute("SELECT group_concat(client) FROM kb_rate_limited", &[]).unwrap();
        assert!(!format!("{dump:?}").contains("192.0.2") && !format!("{dump:?}").contains("198.51"), "{dump:?}");

        // Every part of the report that was there before is what it was: a
        // refused request is not a search, a question, a visitor or a gap.
        let after = report_of(&db, &svc);
        assert_eq!(Report { rate_limited: before.rate_limited.clone(), ..after.clone() }, before);
        let r = &after.rate_limited;
        assert_eq!((r.refused, r.clients, r.minutes), (11 + 1 + 1 + 2, 2, 2));
        let busiest = r.busiest_minute.as_ref().unwrap();
        assert_eq!((busiest.start.as_str(), busiest.refused, busiest.clients), (rfc3339(minute * 60).as_str(), 12, 2));
        assert_eq!(r.busiest_client_refused, 14);
        let buckets: Vec<(&str, &str, u64, u64, u64)> =
            r.buckets.iter().map(|b| (b.bucket.as_str(), b.variable.as_str(), b.limit, b.refused, b.clients)).collect();
        assert_eq!(buckets, [("search", "search_rate_limit", 600, 13, 2), ("chat", "chat_rate_limit", 20, 2, 1)]);
    }

    #[test]
    fn a_pseudonym_holds_for_a_day_and_its_salt_is_gone_the_day_after_next() {
        let db = lite();
        schema::migrate(&db, schema::MIGRATIONS, NOW).unwrap();
        let day = NOW / DAY;
        let (mut a, mut b) = (None, None);
        // Two instances, each with its own cache, name an address alike.
        let p = record::pseudonym(&db, "192.0.2.10", day, &mut a).unwrap();
        assert_eq!(record::pseudonym(&db, "192.0.2.10", day, &mut b).unwrap(), p);
        assert_ne!(record::pseudonym(&db, "192.0.2.11", day, &mut a).unwrap(), p);
        // The next day it is another name; the day after, the first day's salt
        // is deleted, so nothing can link the name to the address any more.
        let mut c = None;
        assert_ne!(record::pseudonym(&db, "192.0.2.10", day + 1, &mut c).unwrap(), p);
        let salts = |db: &Lite| db.execute("SELECT day FROM kb_client_salts ORDER BY day", &[]).unwrap();
        assert_eq!(salts(&db).len(), 2, "yesterday's salt is kept");
        record::pseudonym(&db, "192.0.2.10", day + 2, &mut c).unwrap();
        let kept: Vec<SqlValue> = salts(&db).into_iter().map(|r| r[0].clone()).collect();
        assert_eq!(kept, [SqlValue::Integer(day as i64 + 1), SqlValue::Integer(day as i64 + 2)]);
        // A prune also deletes them, whoever writes.
        record::prune(&db, 90, (day + 9) * DAY).unwrap();
        assert!(salts(&db).is_empty());
    }

    #[test]
    fn pages_readers_rated_count_each_reader_once_worst_first() {
        let (idx, enc) = files();
        let svc = Service::open(idx.as_slice(), enc.as_slice()).unwrap();
        let db = lite();
        let mut rec = Recorder::default();
        let on = Settings::default();
        rec.write(&db, Write::Event(&chat("How do I reset my password?", "a1", false, &["reset"])), on, NOW - 900, 1)
            .unwrap();
        rec.write(&db, Write::Feedback(&thumb("a1", true, None)), on, NOW - 850, 1).unwrap();
        let before = report_of(&db, &svc);
        let mut w = |f: PageFeedback, t: u64| rec.write(&db, Write::PageFeedback(&f), on, t, 1).unwrap();
        // Passwords: one reader changed their mind (their "No" counts), another
        // said yes, an anonymous reader said no with a comment.
        w(rated("reset.html", Some("reset"), true, None, Some("visitor-0001")), NOW - 500);
        w(rated("reset.html", Some("reset"), false, Some("Step 3 is <b>wrong</b>"), Some("visitor-0001")), NOW - 400);
        w(rated("reset.html", Some("reset"), true, None, Some("visitor-0002")), NOW - 300);
        w(rated("reset.html", Some("reset"), false, Some("  "), None), NOW - 200);
        // Eduroam: liked twice. A page the index no longer has: its URL names it.
        w(rated("wifi.html", Some("wifi"), true, None, None), NOW - 150);
        w(rated("wifi.html", Some("wifi"), true, Some("Clear, thanks"), None), NOW - 100);
        w(rated("old/gone.html", None, false, None, None), NOW - 50);
        // Older than the period: not counted.
        w(rated("wifi.html", Some("wifi"), false, None, None), NOW - 40 * DAY);
        let after = report_of(&db, &svc);
        // The answers' feedback and the questions are untouched (the oldest row
        // stored is now the rating older than the period).
        assert_eq!(Report { pages_rated: vec![], recording: before.recording.clone(), ..after.clone() }, before);
        assert_eq!(after.recording.oldest, Some(rfc3339(NOW - 40 * DAY)));
        let got: Vec<(&str, &str, u64, u64)> =
            after.pages_rated.iter().map(|p| (p.page.url.as_str(), p.page.title.as_str(), p.yes, p.no)).collect();
        assert_eq!(
            got,
            [
                ("old/gone.html", "old/gone.html", 0, 1),
                ("reset.html", "Passwords", 1, 2),
                ("wifi.html", "Eduroam", 2, 0)
            ]
        );
        let reset = &after.pages_rated[1];
        assert!((reset.helpful - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(reset.last, rfc3339(NOW - 200));
        // Comments as written (escaping is the renderer's), blank ones dropped.
        let comments: Vec<(&str, &str)> =
            reset.comments.iter().map(|c| (c.rating.as_str(), c.comment.as_str())).collect();
        assert_eq!(comments, [("down", "Step 3 is <b>wrong</b>")]);
        assert_eq!(after.pages_rated[2].comments[0].comment, "Clear, thanks");
        // A long comment is cut to the limit in the store too.
        w(rated("wifi.html", Some("wifi"), false, Some(&"é".repeat(2000)), None), NOW - 10);
        let kept = db.execute("SELECT length(comment) FROM kb_page_feedback ORDER BY id DESC LIMIT 1", &[]).unwrap();
        assert_eq!(kept[0][0], SqlValue::Integer(record::MAX_PAGE_COMMENT_CHARS as i64));
    }

    #[test]
    fn settings_parse_and_bad_values_are_named() {
        assert_eq!(Settings::from_variables("", "").unwrap(), Settings::default());
        assert_eq!(Settings::from_variables("off", "30").unwrap(), Settings { enabled: false, retention_days: 30 });
        assert!(Settings::from_variables("maybe", "").unwrap_err().to_string().contains("insights_recording"));
        assert!(Settings::from_variables("", "0").unwrap_err().to_string().contains("insights_retention_days"));
        assert!(Settings::from_variables("", "ninety").unwrap_err().to_string().contains("insights_retention_days"));
    }
}
