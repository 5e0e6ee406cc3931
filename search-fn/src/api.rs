//! The HTTP API of the edge function, as plain data in and out: a request's method,
//! path, query string and `Origin` go in; a status, headers and a JSON body come
//! out. No Spin types here, so the routing, the parameter checks, the errors and
//! CORS are unit-tested natively; `component.rs` is the thin Spin glue around it.
//!
//! What a public endpoint owes its operator is checked here too, before any work:
//! an `Origin` outside `allowed_origins` is refused (403) on the server, not only
//! by the browser; bodies must be `application/json` (a `text/plain` POST is a
//! "simple" request that skips the CORS preflight); and [`Route::bucket`] says which
//! per-client rate limit ([`crate::limit`]) a route draws from.
//!
//! The contract is documented in `openapi.yaml` at the repository root, and a test
//! keeps the two in step.

use search_core::index::Mode;
use search_service::agent::{extractive, ChatRequest, Event};
use search_service::insights::record;
use search_service::service::{Service, ServiceError};
use serde::Serialize;

use crate::limit::{Bucket, Limits};

/// Longest query accepted, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Most results per page.
pub const MAX_K: usize = 50;
/// Results per page when `k` is not given.
pub const DEFAULT_K: usize = 5;
/// Deepest page of results.
pub const MAX_PAGE: usize = 20;

/// The routes this function serves, with their methods (`spin.toml` routes
/// `/api/...` here; a test checks the two agree).
pub const ROUTES: &[(&str, &[&str])] = &[
    ("/api/search", &["GET"]),
    ("/api/health", &["GET"]),
    ("/api/chat", &["POST"]),
    ("/api/feedback", &["POST"]),
    ("/api/insights", &["GET"]),
];

/// Largest `POST /api/chat` body accepted, in bytes.
pub const MAX_CHAT_BODY: usize = 512 * 1024;

/// Which origins may call the API from a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedOrigins {
    /// Any origin (`Access-Control-Allow-Origin: *`).
    Any,
    /// Exactly these origins (scheme, host and port), echoed back when they
    /// match. The site's own origin must be listed too: the request's `Host`
    /// says nothing, a client (or a DNS rebinding) chooses it.
    List(Vec<String>),
}

impl AllowedOrigins {
    /// Parses the `allowed_origins` variable: `*`, or origins separated by commas
    /// or spaces (`https://www.example.edu, https://help.example.edu`). Empty means `*`.
    pub fn parse(s: &str) -> Result<AllowedOrigins, String> {
        let items: Vec<&str> = s.split([',', ' ']).map(str::trim).filter(|x| !x.is_empty()).collect();
        if items.is_empty() || items == ["*"] {
            return Ok(AllowedOrigins::Any);
        }
        let mut list = Vec::with_capacity(items.len());
        for o in items {
            let ok = (o.starts_with("https://") || o.starts_with("http://"))
                && !o.trim_end_matches('/').contains(['?', '#'])
                && o.split("://").nth(1).is_some_and(|h| !h.is_empty() && !h.trim_end_matches('/').contains('/'));
            if !ok {
                return Err(format!(
                    "allowed_origins: `{o}` is not an origin; use `*` or a list like `https://www.example.edu, http://localhost:8080`"
                ));
            }
            list.push(o.trim_end_matches('/').to_ascii_lowercase());
        }
        Ok(AllowedOrigins::List(list))
    }

    /// Whether a request with this `Origin` header may be served at all. No header
    /// (curl, servers, same-origin GETs) is allowed: the check is against other
    /// sites driving their visitors' browsers, which always send one.
    pub fn permits(&self, origin: Option<&str>) -> bool {
        origin.is_none() || self.allow(origin).is_some()
    }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, if allowed.
    fn allow(&self, origin: Option<&str>) -> Option<String> {
        match self {
            AllowedOrigins::Any => Some("*".into()),
            AllowedOrigins::List(list) => {
                let o = origin?.trim_end_matches('/').to_ascii_lowercase();
                list.contains(&o).then_some(o)
            }
        }
    }
}

pub use search_service::agent::settings::LlmConfig;

/// Configuration from the Spin variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub allowed_origins: AllowedOrigins,
    pub llm: Option<LlmConfig>,
    pub limits: Limits,
    /// Query vectors each instance keeps (`query_cache_size`; 0: none).
    pub query_cache: usize,
    /// Where the index is read from.
    pub backend: Backend,
    /// Whether searches, chats and feedback are recorded, and for how long
    /// (`insights_recording`, `insights_retention_days`).
    pub insights: record::Settings,
    /// The bearer token of `GET /api/insights` (`insights_token`); `None`: the
    /// report is not served.
    pub insights_token: Option<String>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            allowed_origins: AllowedOrigins::Any,
            llm: None,
            limits: Limits::default(),
            query_cache: search_core::query_cache::DEFAULT_CAPACITY,
            backend: Backend::Bundled,
            insights: record::Settings::default(),
            insights_token: None,
        }
    }
}

/// Shortest `insights_token` accepted: the report holds what readers asked.
pub const MIN_INSIGHTS_TOKEN: usize = 16;

/// Checks the `insights_token` variable (empty: the report is not served).
pub fn insights_token(v: &str) -> Result<Option<String>, String> {
    let v = v.trim();
    if v.is_empty() {
        return Ok(None);
    }
    if v.len() < MIN_INSIGHTS_TOKEN || !v.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "insights_token must be at least {MIN_INSIGHTS_TOKEN} printable ASCII characters without spaces (e.g. `openssl rand -hex 24`)"
        ));
    }
    Ok(Some(v.to_string()))
}

/// Where the function reads its index (`search_backend`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// The index bundled in the component (the default).
    Bundled,
    /// A tenant in PostgreSQL: the URLs (`postgres_url`, space-separated: a
    /// primary and its replicas, tried in order) and the tenant (`tenant`).
    Postgres { urls: Vec<String>, tenant: String },
}

impl Backend {
    /// The backend the three variables describe; an error names the variable.
    pub fn from_variables(backend: &str, postgres_url: &str, tenant: &str) -> Result<Backend, String> {
        match backend.trim() {
            "" | "bundled" => Ok(Backend::Bundled),
            "postgres" => {
                let urls: Vec<String> = postgres_url.split_whitespace().map(str::to_string).collect();
                if urls.is_empty() {
                    return Err("`search_backend` is `postgres` but `postgres_url` is empty; set it to the database's URL (postgres://user:password@host:port/db)".into());
                }
                let tenant = match tenant.trim() {
                    "" => "default",
                    t => t,
                };
                if !search_service::pg::valid_tenant(tenant) {
                    return Err(format!("`tenant` is `{tenant}`; use 1 to 63 letters, digits, `-` or `_`"));
                }
                Ok(Backend::Postgres { urls, tenant: tenant.to_string() })
            }
            other => Err(format!("`search_backend` is `{other}`; use `bundled` or `postgres`")),
        }
    }
}

/// The most query vectors `query_cache_size` may ask an instance to keep (about
/// 100 MB): a bound so that a typo in a variable cannot exhaust an instance.
pub const MAX_QUERY_CACHE: usize = 65_536;

/// `query_cache_size` (empty: the default).
pub fn query_cache_size(v: &str) -> Result<usize, String> {
    match v.trim() {
        "" => Ok(search_core::query_cache::DEFAULT_CAPACITY),
        t => t.parse::<usize>().ok().filter(|n| *n <= MAX_QUERY_CACHE).ok_or_else(|| {
            format!("query_cache_size: `{t}` is not a number of query vectors from 0 (no cache) to {MAX_QUERY_CACHE}")
        }),
    }
}

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

    fn json<T: Serialize>(status: u16, value: &T) -> Reply {
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
    /// Stable, machine-readable: `invalid_parameter`, `too_large`, `not_found`,
    /// `method_not_allowed`, `unavailable`, `internal`.
    pub code: &'static str,
    pub message: String,
    /// The query parameter or body field at fault, for `invalid_parameter`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    #[serde(skip)]
    allow: Option<&'static [&'static str]>,
    /// Seconds for `Retry-After` (429).
    #[serde(skip)]
    retry_after: Option<u64>,
}

impl ApiError {
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

    fn not_found(path: &str) -> ApiError {
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

/// Now, in Unix seconds (0 if the clock is before 1970).
pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Equal in time that does not depend on where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token of an `Authorization: Bearer <token>` header, if the request has one.
fn bearer<'r>(req: &Request<'r>) -> Option<&'r str> {
    req.authorization.and_then(|a| {
        let (scheme, value) = a.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| value.trim())
    })
}

fn no_credentials() -> ApiError {
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
}

impl SearchQuery {
    /// Parses and checks the query string of `GET /api/search`.
    pub fn parse(query: &str) -> Result<SearchQuery, ApiError> {
        const NAMES: [&str; 5] = ["q", "k", "mode", "page", "partial"];
        let mut values: [Option<String>; 5] = Default::default();
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            // Unknown parameters are ignored, so clients can send newer ones.
            let Some(i) = NAMES.iter().position(|n| *n == name) else { continue };
            if values[i].is_some() {
                return Err(ApiError::param(NAMES[i], format!("`{name}` is given more than once")));
            }
            values[i] = Some(value.into_owned());
        }
        let [q, k, mode, page, partial] = values;
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
            Some(m) => Some(m.parse::<Mode>().map_err(|e| ApiError::param("mode", e))?),
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
        Ok(SearchQuery { q: q.to_string(), k, mode, page, partial })
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

/// A route of the API, once [`admit`] has let the request in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Search,
    Health,
    Chat,
    Feedback,
    Insights,
}

impl Route {
    /// The rate limit this route draws from: each limited endpoint its own
    /// (health checks are free).
    pub fn bucket(self) -> Option<Bucket> {
        match self {
            Route::Search => Some(Bucket::Search),
            Route::Chat => Some(Bucket::Chat),
            Route::Feedback => Some(Bucket::Feedback),
            Route::Insights => Some(Bucket::Insights),
            Route::Health => None,
        }
    }
}

/// What [`admit`] decided.
#[derive(Debug)]
pub enum Admission {
    /// Go on with this route (after the rate limit, if it has one).
    Route(Route),
    /// Answer at once: a CORS preflight, or an error (CORS headers included).
    Reply(Reply),
}

/// Everything that is checked before any work and without the index or the body:
/// the route (404), the method (405), the CORS preflight (204), the `Origin`
/// (403), for routes that read a body, its `Content-Type` (415), and for the
/// report, whether credentials were sent at all (401).
pub fn admit(req: &Request, cfg: &Config) -> Admission {
    let reject = |e: ApiError| Admission::Reply(with_cors(e.reply(), cfg, req.origin));
    let Some(&(path, methods)) = ROUTES.iter().find(|r| r.0 == req.path) else {
        return reject(ApiError::not_found(req.path));
    };
    if !cfg.allowed_origins.permits(req.origin) {
        return reject(ApiError::forbidden_origin(req.origin.unwrap_or("")));
    }
    if req.method == "OPTIONS" {
        return Admission::Reply(with_cors(
            Reply::new(
                204,
                vec![
                    ("access-control-allow-methods", format!("{}, OPTIONS", methods.join(", "))),
                    ("access-control-allow-headers", "content-type".into()),
                    ("access-control-max-age", "86400".into()),
                ],
                Vec::new(),
            ),
            cfg,
            req.origin,
        ));
    }
    if !methods.contains(&req.method) {
        return reject(ApiError {
            status: 405,
            code: "method_not_allowed",
            message: format!("{path} accepts {}, not {}", methods.join(", "), req.method),
            parameter: None,
            allow: Some(methods),
            retry_after: None,
        });
    }
    let route = match path {
        "/api/search" => Route::Search,
        "/api/chat" => Route::Chat,
        "/api/feedback" => Route::Feedback,
        "/api/insights" => Route::Insights,
        _ => Route::Health,
    };
    if matches!(route, Route::Chat | Route::Feedback) && !is_json(req.content_type) {
        return reject(ApiError::unsupported_media_type(req.content_type));
    }
    // A report request with no credentials at all is answered before the rate
    // limit: it costs nothing and guesses nothing, and the 401 says what to send
    // (a wrong token is counted, then refused).
    if route == Route::Insights && bearer(req).is_none() {
        return reject(no_credentials());
    }
    Admission::Route(route)
}

/// `application/json`, with or without parameters (`; charset=utf-8`).
fn is_json(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|c| c.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")))
}

/// What the component does with a request.
#[derive(Debug)]
pub enum Dispatch {
    /// Send this (the caller adds the CORS headers).
    Reply(Reply),
    /// `POST /api/chat` with a working index: read the body and run the agent.
    Chat,
    /// `POST /api/feedback`: read the body and record it ([`feedback`]).
    Feedback,
    /// `GET /api/insights`, authorised: compute the report from `since` (Unix s).
    Insights { since: u64 },
}

/// Serves an admitted request. `service` is the opened index and encoder, or why
/// they could not be opened; `clock` gives milliseconds for the server timings.
/// The reply has no CORS headers yet: the caller adds them once, to whatever it
/// answers ([`with_cors`]).
pub fn dispatch(
    req: &Request,
    route: Route,
    service: Result<&Service, &str>,
    cfg: &Config,
    clock: &dyn Fn() -> f64,
) -> Dispatch {
    let reply = match route {
        // Feedback needs no index.
        Route::Feedback => return Dispatch::Feedback,
        Route::Insights => match insights_access(req, cfg, now_unix()) {
            Ok(since) => return Dispatch::Insights { since },
            Err(e) => Err(e),
        },
        _ => match (route, service) {
            (_, Err(e)) => Err(ApiError::unavailable(format!("the search index cannot be opened: {e}"))),
            // A database that cannot be read refuses the chat before it starts.
            (Route::Chat, Ok(svc)) => match svc.ready() {
                Ok(()) => return Dispatch::Chat,
                Err(e) => Err(service_error(e)),
            },
            (Route::Search, Ok(svc)) => search(req, svc, clock),
            (_, Ok(svc)) => svc.health().map_err(service_error).map(|h| {
                let mut r = Reply::json(200, &h);
                r.headers.push(("cache-control", "no-store".into()));
                r
            }),
        },
    };
    Dispatch::Reply(reply.unwrap_or_else(|e| e.reply()))
}

/// [`admit`] then [`dispatch`], for requests that read no body (tests, tools);
/// rate limits are the component's and are not applied.
pub fn handle(req: &Request, service: Result<&Service, &str>, cfg: &Config, clock: &dyn Fn() -> f64) -> Reply {
    let route = match admit(req, cfg) {
        Admission::Reply(r) => return r,
        Admission::Route(route) => route,
    };
    let reply = match dispatch(req, route, service, cfg, clock) {
        Dispatch::Reply(r) => r,
        Dispatch::Chat | Dispatch::Feedback | Dispatch::Insights { .. } => {
            ApiError::internal("this route needs the component; use dispatch".into()).reply()
        }
    };
    with_cors(reply, cfg, req.origin)
}

/// Adds the CORS headers for a request from `origin`.
pub fn with_cors(mut reply: Reply, cfg: &Config, origin: Option<&str>) -> Reply {
    if let Some(allow) = cfg.allowed_origins.allow(origin) {
        reply.headers.push(("access-control-allow-origin", allow));
        reply.headers.push(("access-control-expose-headers", "server-timing".into()));
    }
    if cfg.allowed_origins != AllowedOrigins::Any {
        reply.headers.push(("vary", "Origin".into()));
    }
    reply
}

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
        return ApiError {
            status: 404,
            code: "unknown_answer",
            message: format!(
                "no answer `{id}` is recorded here (made up, or older than the retention period); feedback names the `id` of a chat's `done` event"
            ),
            parameter: Some("id".into()),
            allow: None,
            retry_after: None,
        }
        .reply();
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

/// Parses a chat body, or says what is wrong with it.
pub fn chat_request(body: &[u8]) -> Result<ChatRequest, ApiError> {
    ChatRequest::parse(body).map_err(|e| ApiError::param(&e.field, e.message))
}

/// The agent's events as the response: Server-Sent Events when the client asked
/// for a stream, else the `done` object as JSON.
pub fn events_reply(events: &[Event], stream: bool) -> Reply {
    if stream {
        let body = events.iter().map(Event::to_sse).collect::<String>().into_bytes();
        return Reply::new(200, sse_headers(), body);
    }
    match events.iter().rev().find_map(|e| if let Event::Done(d) = e { Some(d) } else { None }) {
        Some(done) => {
            let mut r = Reply::json(200, done);
            r.headers.push(("cache-control", "no-store".into()));
            r
        }
        None => ApiError::internal("the agent finished without an answer".into()).reply(),
    }
}

/// Headers of an event stream.
pub fn sse_headers() -> Vec<(&'static str, String)> {
    vec![
        ("content-type", "text/event-stream; charset=utf-8".into()),
        ("cache-control", "no-store".into()),
        // Proxies that buffer would hold the tokens back.
        ("x-accel-buffering", "no".into()),
    ]
}

/// `POST /api/chat` without an LLM: the extractive agent, events collected.
pub fn chat_extractive(req: &ChatRequest, svc: &Service, answer_id: &str, clock: &dyn Fn() -> f64) -> Reply {
    let mut events = Vec::new();
    let t0 = clock();
    extractive::answer(svc, req, &extractive::Config::default(), false, clock, &mut |e| events.push(e));
    name_answer(&mut events, answer_id);
    let mut r = events_reply(&events, req.stream);
    r.record = chat_record(req, &events, clock() - t0, "extractive").map(Box::new);
    r.units = chat_units(svc, &events);
    r
}

/// What a chat cost ([`limit::units`]): the word pieces its searches gave the
/// encoder (the question, its rewrites and its parts).
pub fn chat_units(svc: &Service, events: &[Event]) -> u32 {
    let pieces = events
        .iter()
        .map(|e| match e {
            Event::Search(step) => svc.encoder().tokenize(&step.query).len(),
            _ => 0,
        })
        .sum();
    crate::limit::units(Bucket::Chat, pieces)
}

/// Gives the `done` event its id (what feedback on the answer will name).
pub fn name_answer(events: &mut [Event], answer_id: &str) {
    for e in events {
        if let Event::Done(d) = e {
            d.id = answer_id.to_string();
        }
    }
}

/// What the insights store keeps of a chat, from its events: the question, the
/// pages the agent read (its sources, else its searches' hits), the citations.
pub fn chat_record(req: &ChatRequest, events: &[Event], latency_ms: f64, mode: &str) -> Option<record::Event> {
    let done = events.iter().rev().find_map(|e| if let Event::Done(d) = e { Some(d) } else { None })?;
    let mut pages: Vec<String> = Vec::new();
    let mut add = |p: &str| {
        if !p.is_empty() && !pages.iter().any(|q| q == p) {
            pages.push(p.to_string());
        }
    };
    for e in events {
        match e {
            Event::Sources { sources } => sources.iter().for_each(|s| add(&s.page_id)),
            Event::Search(step) => step.hits.iter().for_each(|h| add(&h.page_id)),
            _ => {}
        }
    }
    let mut cited: Vec<String> = Vec::new();
    for c in &done.citations {
        if !cited.contains(&c.page_id) {
            cited.push(c.page_id.clone());
        }
    }
    Some(record::Event {
        kind: record::Kind::Chat,
        mode: mode.into(),
        question: req.question().to_string(),
        answer_id: (!done.id.is_empty()).then(|| done.id.clone()),
        answer: Some(done.answer.clone()),
        citations: done.citations.iter().map(|c| c.url.clone()).collect(),
        visitor: req.visitor.clone(),
        results: done.citations.len(),
        pages,
        cited,
        abstained: done.abstained,
        degraded: done.degraded,
        latency_ms,
        // How close the first search came: the question as asked.
        top_score: events.iter().find_map(|e| match e {
            Event::Search(step) => step.hits.iter().filter_map(|h| h.dense).reduce(f32::max),
            _ => None,
        }),
    })
}

/// A backend that cannot be read (the database down or refusing) is a 503 the
/// client may retry; anything else is the function's fault.
fn service_error(e: ServiceError) -> ApiError {
    match e {
        ServiceError::Store(e) => {
            let mut err = ApiError::unavailable(format!("the search database cannot be read: {e}"));
            err.retry_after = Some(5);
            err
        }
        e => ApiError::internal(e.to_string()),
    }
}

fn search(req: &Request, svc: &Service, clock: &dyn Fn() -> f64) -> Result<Reply, ApiError> {
    let sq = SearchQuery::parse(req.query)?;
    let mut p = svc.default_params(sq.k);
    p.mode = sq.mode.unwrap_or(p.mode);
    p.partial = sq.partial;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn err(qs: &str) -> ApiError {
        SearchQuery::parse(qs).expect_err(qs)
    }

    #[test]
    fn backend_variables_are_checked_and_named_when_wrong() {
        assert_eq!(Backend::from_variables("", "", ""), Ok(Backend::Bundled));
        assert_eq!(Backend::from_variables("bundled", "postgres://x/db", "t"), Ok(Backend::Bundled));
        assert_eq!(
            Backend::from_variables("postgres", " postgres://a/db  postgres://b/db ", ""),
            Ok(Backend::Postgres {
                urls: vec!["postgres://a/db".into(), "postgres://b/db".into()],
                tenant: "default".into()
            })
        );
        assert!(Backend::from_variables("postgres", "", "t").unwrap_err().contains("postgres_url"));
        assert!(Backend::from_variables("postgres", "postgres://a/db", "a b").unwrap_err().contains("tenant"));
        assert!(Backend::from_variables("mysql", "", "").unwrap_err().contains("search_backend"));
    }

    #[test]
    fn query_cache_size_is_bounded_and_named_when_wrong() {
        assert_eq!(query_cache_size(""), Ok(search_core::query_cache::DEFAULT_CAPACITY));
        assert_eq!(query_cache_size(" 0 "), Ok(0));
        assert_eq!(query_cache_size("65536"), Ok(MAX_QUERY_CACHE));
        for bad in ["65537", "-1", "lots", "1e3"] {
            let e = query_cache_size(bad).unwrap_err();
            assert!(e.starts_with("query_cache_size: `") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn search_query_defaults_and_decoding() {
        let q = SearchQuery::parse("q=reset+my%20password&unknown=1").unwrap();
        assert_eq!(q, SearchQuery { q: "reset my password".into(), k: DEFAULT_K, mode: None, page: 1, partial: false });
        let q = SearchQuery::parse("q=%C3%A9t%C3%A9&k=50&mode=bm25&page=20&partial=true").unwrap();
        assert_eq!((q.q.as_str(), q.k, q.mode, q.page, q.partial), ("été", 50, Some(Mode::Bm25), 20, true));
        for (v, partial) in [("true", true), ("false", false)] {
            assert_eq!(SearchQuery::parse(&format!("q=a&partial={v}")).unwrap().partial, partial, "{v}");
        }
        // Leading and trailing white space is not searched, and a character Rust
        // does not call white space (U+001C, which Python's `\s` does) is a query.
        assert_eq!(SearchQuery::parse("q=%20parking%E3%80%80").unwrap().q, "parking");
        assert_eq!(SearchQuery::parse("q=%1C").unwrap().q, "\u{1c}");
        assert_eq!(SearchQuery::parse("q=a&k=05&page=007").map(|q| (q.k, q.page)), Ok((5, 7)));
    }

    #[test]
    fn search_query_errors_name_the_parameter() {
        for (qs, param) in [
            ("", "q"),
            ("q=", "q"),
            ("q=%20%20", "q"),
            ("q=a&k=0", "k"),
            ("q=a&k=51", "k"),
            ("q=a&k=five", "k"),
            ("q=a&k=-1", "k"),
            ("q=a&page=0", "page"),
            ("q=a&page=21", "page"),
            ("q=a&mode=semantic", "mode"),
            ("q=a&mode=%20bm25", "mode"),
            ("q=a&mode=%20", "mode"),
            ("q=a&q=b", "q"),
            ("q=a&k=1&k=2", "k"),
            ("q=a&partial=yes", "partial"),
            ("q=a&partial=true&partial=true", "partial"),
            // A boolean is `true` or `false`, spelled exactly so.
            ("q=a&partial=", "partial"),
            ("q=a&partial=1", "partial"),
            ("q=a&partial=0", "partial"),
            ("q=a&partial=True", "partial"),
            ("q=a&partial=%20true", "partial"),
            // A whole number is digits: no sign, space or exponent.
            ("q=a&k=%2B5", "k"),
            ("q=a&k=%205", "k"),
            ("q=a&k=5%20", "k"),
            ("q=a&k=", "k"),
            ("q=a&page=1e1", "page"),
            ("q=a&page=99999999999999999999999", "page"),
            // Blank is every character white space, Unicode's included.
            ("q=%E3%80%80%C2%85%0B", "q"),
        ] {
            let e = err(qs);
            assert_eq!(
                (e.status, e.code, e.parameter.as_deref()),
                (400, "invalid_parameter", Some(param)),
                "{qs}: {e:?}"
            );
        }
        assert!(err("q=a&mode=semantic").message.contains("rrf, convex, dot, dense, bm25"));
    }

    #[test]
    fn query_length_is_counted_in_characters_as_sent() {
        let ok = "é".repeat(MAX_QUERY_CHARS);
        assert!(SearchQuery::parse(&format!("q={ok}")).is_ok());
        let e = err(&format!("q={ok}a"));
        assert!(e.message.contains("1001 characters"), "{}", e.message);
        // White space counts: maxLength is of the parameter as sent.
        let e = err(&format!("q=%20{}", "a".repeat(MAX_QUERY_CHARS)));
        assert_eq!(e.parameter.as_deref(), Some("q"));
        assert!(e.message.contains("1001 characters"), "{}", e.message);
    }

    #[test]
    fn blank_is_what_trim_removes() {
        for c in ['\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{200a}'] {
            assert!(is_blank(&c.to_string()), "{c:?}");
        }
        for c in ['\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}'] {
            assert!(is_blank(&c.to_string()), "{c:?}");
        }
        // Not white space to Rust, whatever a regex dialect's `\s` says.
        for c in ['\u{1c}', '\u{1f}', '\u{feff}', '\u{200b}', '\u{180e}', '\0', 'a'] {
            assert!(!is_blank(&c.to_string()), "{c:?}");
        }
        assert!(is_blank(""));
    }

    #[test]
    fn feedback_is_validated_recorded_and_logged_as_one_json_line() {
        let fb = feedback(br#"{"id":"a1","rating":"down","comment":"Out of date","visitor":"v-123456789"}"#).unwrap();
        let rec = fb.record();
        assert_eq!((rec.answer_id.as_str(), rec.up, rec.visitor.as_deref()), ("a1", false, Some("v-123456789")));
        assert_eq!(rec.comment.as_deref(), Some("Out of date"));
        let v: serde_json::Value = serde_json::from_str(&fb.line(0)).unwrap();
        assert_eq!(v["event"], "feedback");
        assert_eq!(v["time"], "1970-01-01T00:00:00Z");
        assert_eq!((v["rating"].as_str(), v["comment"].as_str()), (Some("down"), Some("Out of date")));
        assert_eq!(v["id"], "a1");
        for (body, param) in [
            (r#"{"id":"a","rating":"meh"}"#.to_string(), "rating"),
            (r#"{"id":"a","comment":"no rating"}"#.to_string(), "body"),
            (r#"{"rating":"up"}"#.to_string(), "body"),
            (format!(r#"{{"rating":"up","id":"{}"}}"#, "i".repeat(101)), "id"),
            (r#"{"id":"a","rating":"up","extra":1}"#.to_string(), "body"),
            // The answer's text is the store's, not the client's to send.
            (r#"{"id":"a","rating":"up","answer":"The assistant said: call 555"}"#.to_string(), "body"),
            (r#"{"id":"a","rating":"up","question":"q"}"#.to_string(), "body"),
            (format!(r#"{{"id":"a","rating":"up","comment":"{}"}}"#, "x".repeat(2001)), "comment"),
            ("not json".to_string(), "body"),
            (r#"{"id":7,"rating":"up"}"#.to_string(), "id"),
            (r#"{"id":"a","rating":"up","page":null}"#.to_string(), "page"),
            (format!(r#"{{"id":"a","rating":"up","visitor":"{}"}}"#, "v".repeat(65)), "visitor"),
            // serde reads a struct from an array, positionally; the API does not.
            (r#"["a1","down"]"#.to_string(), "body"),
            (r#"[null,"down"]"#.to_string(), "body"),
        ] {
            let e = feedback(body.as_bytes()).unwrap_err();
            assert_eq!((e.status, e.parameter.as_deref()), (400, Some(param)), "{body}: {}", e.message);
        }
    }

    #[test]
    fn feedback_on_an_answer_never_given_is_404_and_the_rest_202() {
        let r = feedback_reply(FeedbackKept::UnknownAnswer, "made-up");
        assert_eq!(r.status, 404);
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            (v["error"]["code"].as_str(), v["error"]["parameter"].as_str()),
            (Some("unknown_answer"), Some("id"))
        );
        assert!(v["error"]["message"].as_str().unwrap().contains("made-up"));
        for kept in [FeedbackKept::Stored, FeedbackKept::Logged] {
            assert_eq!(feedback_reply(kept, "a").status, 202);
        }
    }

    #[test]
    fn feedback_keeps_the_page_path_only_and_cuts_what_it_logs_and_stores() {
        let big = "\u{1F600}".repeat(2000);
        let body = serde_json::json!({ "id": "a1", "rating": "up", "page": "https://x.example/a?token=s#access_token=t",
            "comment": big });
        let fb = feedback(&serde_json::to_vec(&body).unwrap()).unwrap();
        assert_eq!(fb.page.as_deref(), Some("/a"));
        assert_eq!(fb.record().page.as_deref(), Some("/a"));
        let line = fb.line(0);
        assert!(!line.contains("token") && !line.contains("x.example"), "{line}");
        assert!(line.len() < 8_000, "{}", line.len());
    }

    #[test]
    fn insights_need_the_bearer_token() {
        let now = 1_800_000_000;
        let token = "0123456789abcdef0123";
        let with = |auth: Option<&'static str>, query: &'static str| Request {
            query,
            authorization: auth,
            ..req("GET", "/api/insights", None)
        };
        let off = Config::default();
        let e = insights_access(&with(Some("Bearer x"), ""), &off, now).unwrap_err();
        assert_eq!((e.status, e.code), (403, "forbidden"));
        assert!(e.message.contains("insights_token"));
        // No credentials at all is a 401 whatever the configuration.
        assert_eq!(insights_access(&with(None, ""), &off, now).unwrap_err().status, 401);
        let cfg = Config { insights_token: insights_token(token).unwrap(), ..Config::default() };
        let e = insights_access(&with(None, ""), &cfg, now).unwrap_err();
        assert_eq!((e.status, e.code), (401, "unauthorized"));
        assert_eq!(e.reply().header("www-authenticate"), Some("Bearer realm=\"insights\""));
        assert_eq!(insights_access(&with(Some("Basic abc"), ""), &cfg, now).unwrap_err().status, 401);
        assert_eq!(insights_access(&with(Some("Bearer 0123456789abcdef0124"), ""), &cfg, now).unwrap_err().status, 403);
        assert_eq!(insights_access(&with(Some("Bearer 0123456789abcdef"), ""), &cfg, now).unwrap_err().status, 403);
        let ok = Some("bearer 0123456789abcdef0123");
        assert_eq!(insights_access(&with(ok, ""), &cfg, now), Ok(now - 30 * 86_400));
        assert_eq!(insights_access(&with(ok, "since=7d"), &cfg, now), Ok(now - 7 * 86_400));
        let e = insights_access(&with(ok, "since=soon"), &cfg, now).unwrap_err();
        assert_eq!((e.status, e.parameter.as_deref()), (400, Some("since")));
        // `since` exactly as openapi.yaml spells it: its pattern, or a date.
        for good in ["all", "1h", "999999w", "2026-11-01", "2024-02-29", "1970-01-01"] {
            assert!(insights_access(&with(ok, leak(format!("since={good}"))), &cfg, now).is_ok(), "{good}");
        }
        for bad in [
            "",
            "%2030d",
            "30d%20",
            "ALL",
            "030d",
            "0d",
            "1234567d",
            "30",
            "30m",
            "%2B202-01-01",
            "2026-1-01",
            "2026-02-30",
            "2026-11-01T00:00:00Z",
            "30d&since=7d",
        ] {
            let e = insights_access(&with(ok, leak(format!("since={bad}"))), &cfg, now).unwrap_err();
            assert_eq!((e.status, e.parameter.as_deref()), (400, Some("since")), "{bad}");
        }
        assert!(insights_token("short").unwrap_err().contains("at least 16"));
        assert!(insights_token("with space in the middle").is_err());
        assert_eq!(insights_token("  "), Ok(None));
        assert_eq!(Route::Insights.bucket(), Some(Bucket::Insights));
        // No credentials at all is refused at admission, before the rate limit
        // counts the request; credentials, right or wrong, go on to be counted.
        let (code, name, _) = status(admit(&with(None, ""), &cfg));
        assert_eq!((code, name.as_deref()), (401, Some("unauthorized")));
        assert_eq!(status(admit(&with(Some("Basic abc"), ""), &cfg)).0, 401);
        assert_eq!(status(admit(&with(Some("Bearer wrong"), ""), &cfg)).1.as_deref(), Some("Insights"));
    }

    /// A query string for [`Request`], which borrows it (tests only).
    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }

    #[test]
    fn allowed_origins_parse() {
        assert_eq!(AllowedOrigins::parse("").unwrap(), AllowedOrigins::Any);
        assert_eq!(AllowedOrigins::parse(" * ").unwrap(), AllowedOrigins::Any);
        assert_eq!(
            AllowedOrigins::parse("https://a.example.edu/, http://localhost:8080").unwrap(),
            AllowedOrigins::List(vec!["https://a.example.edu".into(), "http://localhost:8080".into()])
        );
        for bad in ["a.example.edu", "https://", "https://a.edu/path", "ftp://a.edu"] {
            assert!(AllowedOrigins::parse(bad).is_err(), "{bad}");
        }
    }

    fn req<'a>(method: &'a str, path: &'a str, origin: Option<&'a str>) -> Request<'a> {
        Request { method, path, query: "q=x", origin, content_type: None, authorization: None }
    }

    fn listed(origins: &str) -> Config {
        Config { allowed_origins: AllowedOrigins::parse(origins).unwrap(), ..Config::default() }
    }

    fn status(a: Admission) -> (u16, Option<String>, Option<String>) {
        match a {
            Admission::Route(r) => (0, Some(format!("{r:?}")), None),
            Admission::Reply(r) => {
                let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
                (r.status, v["error"]["code"].as_str().map(String::from), r.header("retry-after").map(String::from))
            }
        }
    }

    #[test]
    fn other_sites_are_refused_on_the_server_when_origins_are_listed() {
        let cfg = listed("https://www.example.edu");
        let chat = |origin, ct| Request { content_type: ct, ..req("POST", "/api/chat", origin) };
        let json = Some("application/json; charset=utf-8");
        // Listed, and no Origin at all: in.
        for origin in [Some("https://www.example.edu"), Some("https://WWW.example.edu/"), None] {
            assert_eq!(status(admit(&chat(origin, json), &cfg)).1.as_deref(), Some("Chat"), "{origin:?}");
        }
        // Any other site, `null` (sandboxed frames), a look-alike, and a page
        // whose origin is the request's Host but is not listed (a forged Host,
        // or DNS rebinding): 403, also for the preflight and for GETs.
        for origin in [
            "https://evil.example",
            "null",
            "https://www.example.edu.evil.example",
            "http://www.example.edu",
            "https://help.example.edu",
        ] {
            assert_eq!(status(admit(&chat(Some(origin), json), &cfg)).0, 403, "{origin}");
            assert_eq!(status(admit(&req("OPTIONS", "/api/chat", Some(origin)), &cfg)).0, 403);
            let (code, name, _) = status(admit(&req("GET", "/api/search", Some(origin)), &cfg));
            assert_eq!((code, name.as_deref()), (403, Some("forbidden_origin")));
        }
        // `*` lets every origin in.
        let any = Config::default();
        assert_eq!(status(admit(&chat(Some("https://evil.example"), json), &any)).1.as_deref(), Some("Chat"));
    }

    #[test]
    fn bodies_must_be_declared_json() {
        let cfg = Config::default();
        for path in ["/api/chat", "/api/feedback"] {
            for ct in [None, Some("text/plain"), Some("application/x-www-form-urlencoded"), Some("multipart/form-data")]
            {
                let r = Request { content_type: ct, ..req("POST", path, None) };
                let (code, name, _) = status(admit(&r, &cfg));
                assert_eq!((code, name.as_deref()), (415, Some("unsupported_media_type")), "{path} {ct:?}");
            }
            let r = Request { content_type: Some("Application/JSON"), ..req("POST", path, None) };
            assert_eq!(status(admit(&r, &cfg)).0, 0);
        }
        // GETs read no body.
        assert_eq!(status(admit(&req("GET", "/api/search", None), &cfg)).0, 0);
    }

    #[test]
    fn rate_limit_errors_carry_retry_after_and_name_the_endpoint() {
        let long = " (a long query counts as several)";
        for (bucket, path, note) in [
            (Bucket::Search, "/api/search", long),
            (Bucket::Chat, "/api/chat", long),
            (Bucket::Feedback, "/api/feedback", ""),
            (Bucket::Insights, "/api/insights", ""),
        ] {
            let r = ApiError::rate_limited(bucket, 20, 7).reply();
            assert_eq!((r.status, r.header("retry-after")), (429, Some("7")));
            let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
            assert_eq!((v["error"]["status"].as_u64(), v["error"]["code"].as_str()), (Some(429), Some("rate_limited")));
            assert_eq!(
                v["error"]["message"],
                format!("more than 20 requests a minute to {path} from this address{note}; try again in 7 s")
            );
        }
        // Each limited route draws from its own bucket.
        for (route, bucket) in [
            (Route::Search, Some(Bucket::Search)),
            (Route::Chat, Some(Bucket::Chat)),
            (Route::Feedback, Some(Bucket::Feedback)),
            (Route::Insights, Some(Bucket::Insights)),
            (Route::Health, None),
        ] {
            assert_eq!(route.bucket(), bucket, "{route:?}");
            if let Some(b) = bucket {
                let path = ROUTES.iter().find(|(p, _)| *p == b.path()).map(|(p, _)| *p);
                assert_eq!(path, Some(b.path()), "{route:?} is limited under a route that exists");
            }
        }
    }

    #[test]
    fn routing_errors_without_an_index() {
        let clock = || 0.0;
        let cfg = Config::default();
        let r = handle(&req("GET", "/api/nope", None), Err("x"), &cfg, &clock);
        assert_eq!(r.status, 404);
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["error"]["code"], "not_found");
        let r = handle(&req("POST", "/api/search", None), Err("x"), &cfg, &clock);
        assert_eq!((r.status, r.header("allow")), (405, Some("GET, OPTIONS")));
        let r = handle(&req("GET", "/api/search", None), Err("bad magic"), &cfg, &clock);
        assert_eq!(r.status, 503);
        assert!(String::from_utf8_lossy(&r.body).contains("bad magic"));
    }

    #[test]
    fn cors_any_and_list() {
        let clock = || 0.0;
        let any = Config::default();
        let r = handle(&req("OPTIONS", "/api/search", Some("https://x.org")), Err("x"), &any, &clock);
        assert_eq!(r.status, 204);
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        assert_eq!(r.header("access-control-allow-methods"), Some("GET, OPTIONS"));
        let list = listed("https://www.example.edu");
        let r = handle(&req("OPTIONS", "/api/search", Some("https://WWW.example.edu")), Err("x"), &list, &clock);
        assert_eq!(r.header("access-control-allow-origin"), Some("https://www.example.edu"));
        assert_eq!(r.header("vary"), Some("Origin"));
        let r = handle(&req("GET", "/api/search", Some("https://evil.example")), Err("x"), &list, &clock);
        assert_eq!((r.status, r.header("access-control-allow-origin")), (403, None));
    }
}
