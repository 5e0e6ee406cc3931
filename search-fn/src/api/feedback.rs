//! `POST /api/feedback`: the body, checked and cut to its limits, and the reply
//! for each way it was kept; and the `GET /api/insights` report as a reply.
//!
//! One route takes both kinds of feedback, told apart by what they name: an
//! answer by its `id` (the widget's thumbs), or, with no `id`, a `page` of the
//! site ("Was this helpful?" under an article). Why one route: both are a thumb
//! and an optional comment, written to the same store under the same rate-limit
//! bucket (`feedback_rate_limit`), and a site that embeds the widget already
//! allows this path.

use std::collections::HashMap;

use search_service::insights::record;
use serde::Serialize;

use super::reply::{ApiError, Reply};

/// Feedback on an answer, as `POST /api/feedback` takes it. The question, the
/// answer and its citations are not sent: the insights store has them under
/// the answer's id, as the assistant gave them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Feedback {
    /// Names the answer: the `id` of the chat's `done` event. The widget sends
    /// the same id with the thumb and with a later comment, so the later line
    /// supersedes the earlier one.
    pub id: String,
    /// `up` or `down`.
    pub rating: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The page the widget was on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// The widget's random per-browser id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visitor: Option<String>,
}

impl Feedback {
    /// What the insights store keeps of it ([`record::Feedback::reduced`]).
    pub fn record(&self) -> record::Feedback {
        record::Feedback {
            answer_id: self.id.clone(),
            up: self.rating == "up",
            comment: self.comment.clone(),
            page: self.page.clone(),
            visitor: self.visitor.clone(),
        }
        .reduced()
    }

    /// What is kept of it, stored or logged: the page's path only (never the
    /// client's query string or fragment), the comment cut to what the store
    /// keeps.
    pub fn reduced(self) -> Feedback {
        let r = self.record();
        Feedback { id: r.answer_id, rating: self.rating, comment: r.comment, page: r.page, visitor: r.visitor }
    }

    /// One structured line (`{"event":"feedback","time":…,…}`), for the log when
    /// the store cannot take it.
    pub fn line(&self, now_unix: u64) -> String {
        let mut line = serde_json::json!({ "event": "feedback", "time": search_service::service::rfc3339(now_unix) });
        if let (Some(obj), Ok(serde_json::Value::Object(fields))) = (line.as_object_mut(), serde_json::to_value(self)) {
            obj.extend(fields);
        }
        line.to_string()
    }
}

/// "Was this helpful?" on a page, as `POST /api/feedback` takes it: a body
/// with a `page` and no `id`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PageFeedback {
    /// The page rated: its URL as the site's index records it, relative to
    /// the site's root (`campus/parking/buying-a-parking-permit.html`), which
    /// is what the page's block sends.
    pub page: String,
    /// `up` (it helped) or `down`.
    pub rating: String,
    /// With a "No": what was missing, at most [`record::MAX_PAGE_COMMENT_CHARS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The widget's random per-browser id (so a reader who answers twice counts once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visitor: Option<String>,
}

impl PageFeedback {
    /// What the insights store keeps of it, with the page's id in the index
    /// (when known).
    pub fn record(&self, page_id: Option<String>) -> record::PageFeedback {
        record::PageFeedback {
            page: self.page.clone(),
            page_id,
            up: self.rating == "up",
            comment: self.comment.clone(),
            visitor: record::kept_visitor(self.visitor.as_deref()).map(str::to_string),
        }
    }

    /// One structured line (`{"event":"page_feedback","time":…,…}`), for the
    /// log when the store cannot take it; a visitor id that is not the
    /// widget's kind is left out, as the store leaves it out.
    pub fn line(&self, now_unix: u64) -> String {
        let kept = PageFeedback {
            visitor: record::kept_visitor(self.visitor.as_deref()).map(str::to_string),
            comment: self.comment.as_deref().map(str::trim).filter(|c| !c.is_empty()).map(str::to_string),
            ..self.clone()
        };
        let mut line =
            serde_json::json!({ "event": "page_feedback", "time": search_service::service::rfc3339(now_unix) });
        if let (Some(obj), Ok(serde_json::Value::Object(fields))) = (line.as_object_mut(), serde_json::to_value(kept)) {
            obj.extend(fields);
        }
        line.to_string()
    }
}

/// A feedback body: on an answer, or on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedbackBody {
    Answer(Feedback),
    Page(PageFeedback),
}

/// Limits of a feedback body's fields, in characters (a page's comment has its
/// own, shorter one: [`record::MAX_PAGE_COMMENT_CHARS`]).
pub const FEEDBACK_LIMITS: &[(&str, usize)] =
    &[("id", record::MAX_ANSWER_ID_CHARS), ("comment", 2000), ("page", 2000), ("visitor", 64)];

/// What a body that is not feedback is told to send.
fn not_feedback(e: &dyn std::fmt::Display) -> ApiError {
    let msg = format!(
        "the body is not feedback ({e}); send {{\"id\":\"<the answer's id>\", \"rating\":\"up\"|\"down\", \"comment\":\"…\"}} on an answer, or {{\"page\":\"<the page's URL in the site>\", \"rating\":\"up\"|\"down\", \"comment\":\"…\"}} on a page"
    );
    ApiError::param("body", msg)
}

/// Validates a feedback body; on success, the feedback to record or log: on an
/// answer ([`Feedback::reduced`]: whether it names a real answer is the
/// store's to say, [`feedback_reply`]), or on a page (whether it is a page of
/// the site is [`rated_page`]'s to say).
pub fn feedback(body: &[u8]) -> Result<FeedbackBody, ApiError> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|e| not_feedback(&e))?;
    // serde reads a struct from an array too (`["a1","down"]`), field by field.
    let Some(fields) = value.as_object() else { return Err(not_feedback(&"a JSON object is expected")) };
    // A field of the wrong type is named, `null` included: an optional field that
    // is unknown is omitted, as openapi.yaml says (its fields are never nullable).
    for (name, v) in fields {
        let known = name == "rating" || FEEDBACK_LIMITS.iter().any(|(f, _)| *f == name.as_str());
        if known && !v.is_string() {
            let got = match v {
                serde_json::Value::Null => "null; omit the field instead",
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::Object(_) => "an object",
            };
            return Err(ApiError::param(name, format!("`{name}` must be a string, got {got}")));
        }
    }
    if fields.contains_key("id") {
        answer_feedback(value).map(FeedbackBody::Answer)
    } else if fields.contains_key("page") {
        page_feedback(value).map(FeedbackBody::Page)
    } else {
        Err(not_feedback(&"it names neither an answer (`id`) nor a page (`page`)"))
    }
}

fn check_rating(rating: &str) -> Result<(), ApiError> {
    match rating {
        "up" | "down" => Ok(()),
        _ => Err(ApiError::param("rating", format!("`rating` must be \"up\" or \"down\", got {rating:?}"))),
    }
}

/// Each field's length in characters against its limit: the first over it is named.
fn check_sizes(fields: &[(&str, Option<&str>, usize)]) -> Result<(), ApiError> {
    for &(name, value, limit) in fields {
        let n = value.map_or(0, |s| s.chars().count());
        if n > limit {
            return Err(ApiError::param(name, format!("`{name}` has {n} characters; the limit is {limit}")));
        }
    }
    Ok(())
}

fn answer_feedback(value: serde_json::Value) -> Result<Feedback, ApiError> {
    let fb: Feedback = serde_json::from_value(value).map_err(|e| not_feedback(&e))?;
    check_rating(&fb.rating)?;
    let values = [Some(fb.id.as_str()), fb.comment.as_deref(), fb.page.as_deref(), fb.visitor.as_deref()];
    let fields: Vec<(&str, Option<&str>, usize)> =
        FEEDBACK_LIMITS.iter().zip(values).map(|(&(name, limit), v)| (name, v, limit)).collect();
    check_sizes(&fields)?;
    Ok(fb.reduced())
}

fn page_feedback(value: serde_json::Value) -> Result<PageFeedback, ApiError> {
    let pf: PageFeedback = serde_json::from_value(value).map_err(|e| not_feedback(&e))?;
    check_rating(&pf.rating)?;
    check_sizes(&[
        ("page", Some(pf.page.as_str()), 2000),
        ("comment", pf.comment.as_deref(), record::MAX_PAGE_COMMENT_CHARS),
        ("visitor", pf.visitor.as_deref(), 64),
    ])?;
    Ok(pf)
}

/// Which page a page rating names: `Ok(Some(page_id))` for a page of the
/// index (`pages`: its URLs, each to its page id); with no list of pages (the
/// PostgreSQL backend, which lists none) `Ok(None)` for a URL of the form the
/// site's pages have (relative, no scheme, query, fragment or `..`); anything
/// else is 400 `unknown_page`, so the store only ever names pages of the site.
pub fn rated_page(page: &str, pages: Option<&HashMap<String, String>>) -> Result<Option<String>, ApiError> {
    match pages {
        Some(pages) => pages.get(page).cloned().map(Some).ok_or_else(|| ApiError::unknown_page(page)),
        None if site_path(page) => Ok(None),
        None => Err(ApiError::unknown_page(page)),
    }
}

/// A path of the form the site's page URLs have: relative to its root, at most
/// [`record::MAX_PAGE_CHARS`] characters, no scheme, query, fragment, `..`
/// segment, backslash, white space or control character.
fn site_path(p: &str) -> bool {
    !p.is_empty()
        && p.chars().count() <= record::MAX_PAGE_CHARS
        && !p.starts_with('/')
        && !p.contains("://")
        && !p.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '\\' | ':'))
        && !p.split('/').any(|seg| seg == ".." || seg == "." || seg.is_empty())
}

/// What became of valid feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackKept {
    /// In the insights store, beside the answer it names.
    Stored,
    /// In the log: recording is off, or the store could not take it.
    Logged,
    /// Not kept: the store has no answer with that id.
    UnknownAnswer,
}

/// The reply to feedback: 202, or 404 when it names no answer the function gave
/// (`id` is the answer's; a page's feedback is never `UnknownAnswer`).
pub fn feedback_reply(kept: FeedbackKept, id: &str) -> Reply {
    if kept == FeedbackKept::UnknownAnswer {
        return ApiError::unknown_answer(id).reply();
    }
    let mut r = Reply::json(202, &serde_json::json!({ "status": "recorded" }));
    r.headers.push(("cache-control", "no-store".into()));
    r
}

/// `GET /api/insights`: the report as JSON, never cached.
pub fn insights_reply(report: &search_service::insights::report::Report) -> Reply {
    let mut r = Reply::json(200, report);
    r.headers.push(("cache-control", "no-store".into()));
    r
}
