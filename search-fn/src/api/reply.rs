//! The request as the API sees it, the reply it gives, and the errors it
//! reports (`{"error": {status, code, message, parameter?}}`), one constructor
//! per kind so each message says what to do.

use search_service::insights::record;
use serde::Serialize;

use super::ROUTES;
use crate::limit::Bucket;

/// The parts of an HTTP request the API looks at.
#[derive(Debug, Clone, Copy)]
pub struct Request<'r> {
    pub method: &'r str,
    pub path: &'r str,
    /// The raw query string, without `?`.
    pub query: &'r str,
    /// The `Origin` header, if any.
    pub origin: Option<&'r str>,
    /// The `Content-Type` header, if any.
    pub content_type: Option<&'r str>,
    /// The `Authorization` header, if any (only `/api/insights` reads it).
    pub authorization: Option<&'r str>,
}

/// A finished HTTP response.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
    /// What the insights store records of this exchange, if anything (the
    /// component writes it: `api` does no I/O).
    pub record: Option<Box<record::Event>>,
    /// What the exchange cost, in units of its endpoint's rate-limit budget
    /// ([`limit::units`]): 1 for an ordinary request; the component charges
    /// the rest once it is served.
    pub units: u32,
}

impl Reply {
    /// An answer with nothing to record, costing one unit.
    pub fn new(status: u16, headers: Vec<(&'static str, String)>, body: Vec<u8>) -> Reply {
        Reply { status, headers, body, record: None, units: 1 }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub(super) fn json<T: Serialize>(status: u16, value: &T) -> Reply {
        match serde_json::to_vec(value) {
            Ok(body) => Reply::new(status, vec![("content-type", "application/json".into())], body),
            Err(e) => ApiError::internal(format!("cannot serialise the response: {e}")).reply(),
        }
    }
}

/// An error as the API reports it: `{"error": {status, code, message, parameter?}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiError {
    pub status: u16,
    /// Stable, machine-readable: `invalid_parameter`, `unknown_page`, `too_large`,
    /// `not_found`, `method_not_allowed`, `unavailable`, `internal`, …
    pub code: &'static str,
    pub message: String,
    /// The query parameter or body field at fault, for `invalid_parameter`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    #[serde(skip)]
    allow: Option<&'static [&'static str]>,
    /// Seconds for `Retry-After` (429).
    #[serde(skip)]
    pub(super) retry_after: Option<u64>,
}

impl ApiError {
    /// A method the route does not accept (405, with `Allow`).
    pub fn method_not_allowed(path: &str, methods: &'static [&'static str], method: &str) -> ApiError {
        ApiError {
            status: 405,
            code: "method_not_allowed",
            message: format!("{path} accepts {}, not {method}", methods.join(", ")),
            parameter: None,
            allow: Some(methods),
            retry_after: None,
        }
    }

    /// Feedback naming an answer this function never gave (or no longer keeps).
    pub fn unknown_answer(id: &str) -> ApiError {
        ApiError {
            status: 404,
            code: "unknown_answer",
            message: format!(
                "no answer `{id}` is recorded here (made up, or older than the retention period); feedback names the `id` of a chat's `done` event"
            ),
            parameter: Some("id".into()),
            allow: None,
            retry_after: None,
        }
    }

    /// A page rating that names no page of this site.
    pub fn unknown_page(page: &str) -> ApiError {
        let shown: String = page.chars().take(120).collect();
        ApiError {
            status: 400,
            code: "unknown_page",
            message: format!(
                "`{shown}` is not a page of this site; send the page's URL as the site's index has it, relative to the site's root (`campus/parking/buying-a-parking-permit.html`), as the page's \"Was this helpful?\" block does"
            ),
            parameter: Some("page".into()),
            allow: None,
            retry_after: None,
        }
    }

    pub fn param(parameter: &str, message: String) -> ApiError {
        ApiError {
            status: 400,
            code: "invalid_parameter",
            message,
            parameter: Some(parameter.into()),
            allow: None,
            retry_after: None,
        }
    }

    pub fn too_large(limit: usize) -> ApiError {
        ApiError {
            status: 413,
            code: "too_large",
            message: format!("the body is larger than {limit} bytes"),
            parameter: Some("body".into()),
            allow: None,
            retry_after: None,
        }
    }

    pub(super) fn not_found(path: &str) -> ApiError {
        let known: Vec<&str> = ROUTES.iter().map(|r| r.0).collect();
        ApiError {
            status: 404,
            code: "not_found",
            message: format!("no API route {path}; the routes are {}", known.join(", ")),
            parameter: None,
            allow: None,
            retry_after: None,
        }
    }

    /// The function could not open its bundled index (a broken build).
    pub fn unavailable(message: String) -> ApiError {
        ApiError { status: 503, code: "unavailable", message, parameter: None, allow: None, retry_after: None }
    }

    /// A browser on another site, not in `allowed_origins`.
    pub fn forbidden_origin(origin: &str) -> ApiError {
        ApiError {
            status: 403,
            code: "forbidden_origin",
            message: format!(
                "requests from {origin} are not allowed; add it to the `allowed_origins` variable to embed the search or the chat there"
            ),
            parameter: Some("origin".into()),
            allow: None,
            retry_after: None,
        }
    }

    /// A body that is not declared as JSON.
    pub fn unsupported_media_type(got: Option<&str>) -> ApiError {
        ApiError {
            status: 415,
            code: "unsupported_media_type",
            message: format!(
                "send the body as JSON with `Content-Type: application/json` (got {})",
                got.map_or("no Content-Type".to_string(), |c| format!("`{c}`"))
            ),
            parameter: Some("content-type".into()),
            allow: None,
            retry_after: None,
        }
    }

    /// Too many requests to one endpoint from one client in the last minute.
    pub fn rate_limited(bucket: Bucket, limit: u32, retry_after_secs: u64) -> ApiError {
        ApiError {
            status: 429,
            code: "rate_limited",
            message: format!(
                "more than {limit} requests a minute to {} from this address{}; try again in {retry_after_secs} s",
                bucket.path(),
                if crate::limit::pieces_per_unit(bucket).is_some() { " (a long query counts as several)" } else { "" }
            ),
            parameter: None,
            allow: None,
            retry_after: Some(retry_after_secs),
        }
    }

    pub fn internal(message: String) -> ApiError {
        ApiError { status: 500, code: "internal", message, parameter: None, allow: None, retry_after: None }
    }

    pub fn reply(&self) -> Reply {
        #[derive(Serialize)]
        struct Envelope<'a> {
            error: &'a ApiError,
        }
        // Serialising this struct cannot fail (strings and integers only).
        let body = serde_json::to_vec(&Envelope { error: self }).unwrap_or_default();
        let mut headers = vec![("content-type", "application/json".into()), ("cache-control", "no-store".into())];
        if let Some(methods) = self.allow {
            headers.push(("allow", format!("{}, OPTIONS", methods.join(", "))));
        }
        if let Some(secs) = self.retry_after {
            headers.push(("retry-after", secs.to_string()));
        }
        if self.status == 401 {
            headers.push(("www-authenticate", "Bearer realm=\"insights\"".into()));
        }
        Reply::new(self.status, headers, body)
    }

    /// `GET /api/insights` without credentials.
    pub fn unauthorized(message: &str) -> ApiError {
        ApiError {
            status: 401,
            code: "unauthorized",
            message: message.into(),
            parameter: None,
            allow: None,
            retry_after: None,
        }
    }

    /// `GET /api/insights` with the wrong credentials, or none configured.
    pub fn forbidden(message: &str) -> ApiError {
        ApiError {
            status: 403,
            code: "forbidden",
            message: message.into(),
            parameter: None,
            allow: None,
            retry_after: None,
        }
    }
}
