//! From a request to a reply: which route it is, whether it is admitted (the
//! origin, the body's type, the rate-limit bucket), the work it dispatches to,
//! and CORS, applied once to every reply.

use search_service::service::Service;

use super::access::{bearer, insights_access, no_credentials, now_unix};
use super::config::{AllowedOrigins, Config};
use super::reply::{ApiError, Reply, Request};
use super::search::{search, service_error};
use super::ROUTES;
use crate::limit::Bucket;

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
        return reject(ApiError::method_not_allowed(path, methods, req.method));
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
