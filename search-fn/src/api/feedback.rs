//! `POST /api/feedback`: the body, checked and cut to its limits, and the reply
//! for each way it was kept; and the `GET /api/insights` report as a reply.

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

/// Limits of a feedback body's fields, in characters.
pub const FEEDBACK_LIMITS: &[(&str, usize)] =
    &[("id", record::MAX_ANSWER_ID_CHARS), ("comment", 2000), ("page", 2000), ("visitor", 64)];

/// Validates a feedback body; on success, the feedback to record or log,
/// [`Feedback::reduced`]. Whether it names a real answer is the store's to say
/// ([`feedback_reply`]).
pub fn feedback(body: &[u8]) -> Result<Feedback, ApiError> {
    let not_feedback = |e: &dyn std::fmt::Display| {
        let msg = format!("the body is not feedback ({e}); send {{\"id\":\"<the answer's id>\", \"rating\":\"up\"|\"down\", \"comment\":\"…\"}}");
        ApiError::param("body", msg)
    };
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
    let fb: Feedback = serde_json::from_value(value).map_err(|e| not_feedback(&e))?;
    if fb.rating != "up" && fb.rating != "down" {
        return Err(ApiError::param("rating", format!("`rating` must be \"up\" or \"down\", got {:?}", fb.rating)));
    }
    let chars = |s: Option<&str>| s.map_or(0, |s| s.chars().count());
    let sizes =
        [chars(Some(&fb.id)), chars(fb.comment.as_deref()), chars(fb.page.as_deref()), chars(fb.visitor.as_deref())];
    for (n, (name, limit)) in sizes.into_iter().zip(FEEDBACK_LIMITS) {
        if n > *limit {
            return Err(ApiError::param(name, format!("`{name}` has {n} characters; the limit is {limit}")));
        }
    }
    Ok(fb.reduced())
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

/// The reply to feedback: 202, or 404 when it names no answer the function gave.
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
