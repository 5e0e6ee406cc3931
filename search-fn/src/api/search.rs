//! `GET /api/search`: its parameters, checked once into a [`SearchQuery`], and
//! the answer from the service.

use search_core::index::lang::LangChoice;
use search_core::index::Mode;
use search_service::insights::record;
use search_service::service::{Service, ServiceError};

use super::reply::{ApiError, Reply, Request};
use super::{DEFAULT_K, MAX_K, MAX_PAGE, MAX_QUERY_CHARS};
use crate::limit::Bucket;

/// A validated `GET /api/search` query.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    pub q: String,
    pub k: usize,
    /// `None`: the index's default mode.
    pub mode: Option<Mode>,
    pub page: usize,
    /// The last word is still being typed (`partial=true`).
    pub partial: bool,
    /// The languages searched: one (`lang=de`), every one (`lang=all`), or
    /// by default the question's own when its words tell.
    pub lang: LangChoice,
}

impl SearchQuery {
    /// Parses and checks the query string of `GET /api/search`.
    pub fn parse(query: &str) -> Result<SearchQuery, ApiError> {
        const NAMES: [&str; 6] = ["q", "k", "mode", "page", "partial", "lang"];
        let mut values: [Option<String>; 6] = Default::default();
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            // Unknown parameters are ignored, so clients can send newer ones.
            let Some(i) = NAMES.iter().position(|n| *n == name) else { continue };
            if values[i].is_some() {
                return Err(ApiError::param(NAMES[i], format!("`{name}` is given more than once")));
            }
            values[i] = Some(value.into_owned());
        }
        let [q, k, mode, page, partial, lang] = values;
        let q = q.unwrap_or_default();
        // As openapi.yaml says it: at most MAX_QUERY_CHARS characters as sent, at
        // least one of them not white space; the query searched is trimmed.
        let chars = q.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(ApiError::param(
                "q",
                format!("the query `q` is {chars} characters long; the limit is {MAX_QUERY_CHARS}"),
            ));
        }
        if is_blank(&q) {
            return Err(ApiError::param("q", "the query `q` is missing, empty or only white space".into()));
        }
        let q = q.trim();
        let int = |name: &'static str, v: Option<String>, default: usize, max: usize| match v {
            None => Ok(default),
            Some(s) => match whole_number(&s) {
                Some(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(ApiError::param(name, format!("`{name}` must be a whole number from 1 to {max}, got `{s}`"))),
            },
        };
        let k = int("k", k, DEFAULT_K, MAX_K)?;
        let page = int("page", page, 1, MAX_PAGE)?;
        // One of the modes, or empty (as an HTML form sends it), spelled exactly.
        let mode = match mode.as_deref() {
            None | Some("") => None,
            Some(m) => Some(m.parse::<Mode>().map_err(|e| ApiError::param("mode", e.to_string()))?),
        };
        // A boolean as OpenAPI spells one in a query: `true` or `false`, nothing else
        // (not empty, not `1`, not `True`).
        let partial = match partial.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(ApiError::param("partial", format!("`partial` must be `true` or `false`, got `{other}`")))
            }
        };
        // A language tag, `all` / empty for every language, or the question's.
        let lang = LangChoice::of(lang.as_deref()).map_err(|_| {
            ApiError::param(
                "lang",
                format!(
                    "`lang` must be a language tag such as `de` or `zh-cn`, `all` or `question`, got `{}`",
                    lang.as_deref().unwrap_or_default()
                ),
            )
        })?;
        Ok(SearchQuery { q: q.to_string(), k, mode, page, partial, lang })
    }
}

/// Whether `s` is empty or only white space (what `str::trim` removes: Unicode's
/// White_Space, the very characters the `pattern` of `q` and of a user's `content`
/// in `openapi.yaml` names).
pub fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// A whole number spelled as an integer query parameter is: ASCII digits only (no
/// sign, no white space, no exponent); `None` if it is not one or does not fit.
fn whole_number(s: &str) -> Option<usize> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A backend that cannot be read (the database down or refusing) is a 503 the
/// client may retry; anything else is the function's fault.
pub(super) fn service_error(e: ServiceError) -> ApiError {
    match e {
        ServiceError::Store(e) => {
            let mut err = ApiError::unavailable(format!("the search database cannot be read: {e}"));
            err.retry_after = Some(5);
            err
        }
        e => ApiError::internal(e.to_string()),
    }
}

pub(super) fn search(req: &Request, svc: &Service, clock: &dyn Fn() -> f64) -> Result<Reply, ApiError> {
    let sq = SearchQuery::parse(req.query)?;
    let mut p = svc.default_params(sq.k);
    p.mode = sq.mode.unwrap_or(p.mode);
    p.partial = sq.partial;
    p.lang = svc.search_language(sq.lang, &sq.q);
    let t0 = clock();
    let answer = svc.search(&sq.q, &p, sq.page, clock).map_err(service_error)?;
    let t = answer.timings_ms;
    let mut r = Reply::json(200, &answer);
    // The encoder's work is the cost: none for BM25 alone or a cached vector.
    if answer.mode != Mode::Bm25 && !answer.encode_cached {
        r.units = crate::limit::units(Bucket::Search, svc.encoder().tokenize(&sq.q).len());
    }
    // A question, not a keystroke: suggestions while typing and later pages of
    // the same query are not recorded.
    if !sq.partial && sq.page == 1 {
        let mut pages: Vec<String> = Vec::new();
        for hit in &answer.results {
            if !pages.contains(&hit.page_id) {
                pages.push(hit.page_id.clone());
            }
        }
        r.record = Some(Box::new(record::Event {
            kind: record::Kind::Search,
            mode: answer.mode.to_string(),
            question: sq.q.clone(),
            answer_id: None,
            answer: None,
            citations: Vec::new(),
            visitor: None,
            results: answer.results.len(),
            pages,
            cited: Vec::new(),
            abstained: false,
            degraded: false,
            latency_ms: clock() - t0,
            top_score: answer.results.iter().filter_map(|r| r.dense).reduce(f32::max),
        }));
    }
    // A bundled index is immutable for the life of a deployment, so a shared
    // cache may keep an answer for a while; a database changes with each publish.
    let max_age = if svc.index().is_some() { 300 } else { 60 };
    r.headers.push(("cache-control", format!("public, max-age={max_age}")));
    r.headers.push((
        "server-timing",
        format!(
            "encode;dur={:.2}{}, search;dur={:.2}, fuse;dur={:.2}",
            t.encode,
            if answer.encode_cached { ";desc=cached" } else { "" },
            t.search,
            t.fuse
        ),
    ));
    Ok(r)
}
