//! Who may read `GET /api/insights`: the bearer token, compared in constant
//! time, and the `since` parameter's forms.

use super::config::Config;
use super::reply::{ApiError, Request};

/// Now, in Unix seconds (0 if the clock is before 1970).
pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Equal in time that does not depend on where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token of an `Authorization: Bearer <token>` header, if the request has one.
pub(super) fn bearer<'r>(req: &Request<'r>) -> Option<&'r str> {
    req.authorization.and_then(|a| {
        let (scheme, value) = a.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| value.trim())
    })
}

pub(super) fn no_credentials() -> ApiError {
    ApiError::unauthorized("send the insights token as `Authorization: Bearer <insights_token>`")
}

/// Who may read `GET /api/insights`: a request with `Authorization: Bearer
/// <insights_token>`. Returns the period's first second (`since`, default 30d).
pub fn insights_access(req: &Request, cfg: &Config, now: u64) -> Result<u64, ApiError> {
    let Some(given) = bearer(req) else {
        return Err(no_credentials());
    };
    let Some(token) = &cfg.insights_token else {
        return Err(ApiError::forbidden(
            "the insights report is not served: set the secret Spin variable `insights_token` to enable it",
        ));
    };
    if !same_secret(given.as_bytes(), token.as_bytes()) {
        return Err(ApiError::forbidden("the insights token is not right"));
    }
    let mut since = None;
    for (k, v) in form_urlencoded::parse(req.query.as_bytes()) {
        if k == "since" {
            if since.is_some() {
                return Err(ApiError::param("since", "`since` is given more than once".into()));
            }
            since = Some(v.into_owned());
        }
    }
    let since = since.unwrap_or_else(|| "30d".into());
    // The API takes exactly what openapi.yaml spells (the command line's
    // `--since` is more forgiving: spaces, `ALL`).
    if !is_period(&since) && !is_date(&since) {
        return Err(ApiError::param(
            "since",
            format!("`since` must be `all`, a period like 30d, 12h or 2w, or a date like 2026-11-01, got `{since}`"),
        ));
    }
    search_service::insights::parse_since(&since, now).map_err(|e| ApiError::param("since", e.to_string()))
}

/// `all` or `[1-9][0-9]{0,5}[hdw]`, as `since`'s first pattern in openapi.yaml.
fn is_period(s: &str) -> bool {
    if s == "all" {
        return true;
    }
    let Some(n) = s.strip_suffix(['h', 'd', 'w']) else { return false };
    (1..=6).contains(&n.len()) && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit())
}

/// `YYYY-MM-DD` in ASCII digits: the shape of a `format: date` (`parse_since`
/// then checks that the day exists).
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10 && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}
