//! The HTTP server: `/api/*` goes to the edge function, every other path to the
//! static site, as `spin.toml` routes them.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use tokio::sync::Semaphore;
use wasmtime_wasi_http::handler::{ExpirationError, ProxyHandler};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::WasiBody;

use crate::component::{Function, Services};
use crate::key_value::KeyValue;
use crate::spin_sqlite::Databases;
use crate::static_files::{self, Lookup};
use crate::{HostConfig, HostError};

/// Requests the function may hold at once; more wait for a slot. (The handler
/// itself has no backpressure.)
const MAX_API_REQUESTS: usize = 256;

struct State {
    site: PathBuf,
    handler: ProxyHandler<Function>,
    api_slots: Semaphore,
    log: bool,
}

/// A bound server, not yet accepting.
pub struct Server {
    listener: std::net::TcpListener,
    state: Arc<State>,
}

impl Server {
    /// Compiles the component, checks the site folder and binds the address.
    /// Must run inside a Tokio runtime.
    pub fn bind(cfg: HostConfig) -> Result<Server, HostError> {
        if !cfg.site.join("index.html").is_file() {
            return Err(HostError::NoSite { site: cfg.site });
        }
        if !cfg.component.is_file() {
            return Err(HostError::NoComponent { path: cfg.component });
        }
        let services = Services {
            variables: cfg.variables,
            key_value: KeyValue::open(&cfg.state)?,
            key_value_stores: cfg.key_value_stores,
            // Opened on the guest's first `open`: a database file that cannot be
            // opened fails that call, not the host.
            sqlite: Databases::new(&cfg.state, cfg.sqlite_max_bytes),
            sqlite_databases: cfg.sqlite_databases,
            allowed_outbound_hosts: cfg.allowed_outbound_hosts,
            postgres: crate::spin_postgres::Pools::new(cfg.postgres_ca.as_deref())?,
        };
        let function = Function::load(&cfg.component, services, cfg.request_timeout)?;
        let listener =
            std::net::TcpListener::bind(cfg.addr).map_err(|source| HostError::Bind { addr: cfg.addr, source })?;
        listener.set_nonblocking(true).map_err(|source| HostError::Bind { addr: cfg.addr, source })?;
        let state = State {
            site: cfg.site,
            handler: function.into_handler(),
            api_slots: Semaphore::new(MAX_API_REQUESTS),
            log: cfg.log,
        };
        Ok(Server { listener, state: Arc::new(state) })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Serves until `shutdown` resolves.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), HostError> {
        let addr = self.local_addr();
        let listener =
            tokio::net::TcpListener::from_std(self.listener).map_err(|source| HostError::Bind { addr, source })?;
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let (stream, peer) = tokio::select! {
                _ = &mut shutdown => return Ok(()),
                accepted = listener.accept() => match accepted {
                    Ok(s) => s,
                    // A failed accept (e.g. out of file descriptors) drops that
                    // connection, not the server.
                    Err(e) => { eprintln!("accept failed: {e}"); continue }
                },
            };
            // Small SSE frames must not wait for Nagle's algorithm.
            let _ = stream.set_nodelay(true);
            let state = self.state.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(respond(&state, req, peer).await) }
                });
                // Connection errors (a client hanging up) are the client's business.
                let _ = http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(stream), service).await;
            });
        }
    }
}

async fn respond(state: &State, req: Request<Incoming>, peer: SocketAddr) -> Response<WasiBody> {
    let start = Instant::now();
    let (method, target) = (req.method().clone(), req.uri().to_string());
    let path = req.uri().path();
    let resp = if path == "/api" || path.starts_with("/api/") {
        api(state, spin_headers(req, peer)).await
    } else {
        site(state, &req).await
    };
    if state.log {
        let ms = start.elapsed().as_secs_f64() * 1e3;
        eprintln!("{method} {target} {} {ms:.1} ms", resp.status().as_u16());
    }
    resp
}

/// The request headers Spin's HTTP trigger sets for a component, set the same way:
/// any `spin-*` header the client sent is dropped first, so a client cannot pose
/// as another address (`spin-client-addr` is what the function's rate limits key
/// on).
fn spin_headers(mut req: Request<Incoming>, peer: SocketAddr) -> Request<Incoming> {
    let spin: Vec<header::HeaderName> =
        req.headers().keys().filter(|n| n.as_str().starts_with("spin-")).cloned().collect();
    for name in spin {
        req.headers_mut().remove(name);
    }
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost").to_string();
    let full_url = format!("http://{host}{}", req.uri().path_and_query().map_or("/", |p| p.as_str()));
    let path_info = req.uri().path().strip_prefix("/api").unwrap_or("").to_string();
    for (name, value) in [
        ("spin-client-addr", peer.to_string()),
        ("spin-full-url", full_url),
        ("spin-path-info", path_info),
        ("spin-matched-route", "/api/...".to_string()),
    ] {
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            req.headers_mut().insert(header::HeaderName::from_static(name), v);
        }
    }
    req
}

async fn api(state: &State, req: Request<Incoming>) -> Response<WasiBody> {
    let Ok(_slot) = state.api_slots.acquire().await else {
        return error(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "the server is shutting down");
    };
    let req = req.map(|body| body.map_err(Into::into).boxed_unsync());
    let start = Instant::now();
    let timeout = state.handler.state().request_timeout();
    match state.handler.handle((), req).await {
        Ok(resp) => resp,
        // An instance torn down at the deadline reports a trap; it was a timeout.
        Err(e) if e.is::<ExpirationError>() || start.elapsed() >= timeout => {
            let secs = state.handler.state().request_timeout().as_secs_f64();
            error(
                StatusCode::GATEWAY_TIMEOUT,
                "timeout",
                &format!("the search function did not answer within {secs} s"),
            )
        }
        Err(e) => {
            eprintln!("edge function failed: {e:#}");
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the search function failed; the host's log has the details",
            )
        }
    }
}

/// A JSON error in the same envelope the function uses.
fn error(status: StatusCode, code: &str, message: &str) -> Response<WasiBody> {
    let body = serde_json::json!({ "error": { "status": status.as_u16(), "code": code, "message": message } });
    let mut r = Response::new(full(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    r
}

fn full(b: Bytes) -> WasiBody {
    Full::new(b).map_err(|never: Infallible| match never {}).boxed_unsync()
}

async fn site(state: &State, req: &Request<Incoming>) -> Response<WasiBody> {
    let head = req.method() == Method::HEAD;
    if req.method() != Method::GET && !head {
        let mut r = Response::new(full(Bytes::from_static(b"405 method not allowed\n")));
        *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        r.headers_mut().insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let (status, body, headers): (StatusCode, Bytes, Vec<(header::HeaderName, String)>) =
        match static_files::lookup(&state.site, req.uri().path()) {
            Lookup::File { path, status } => match tokio::fs::read(&path).await {
                Ok(bytes) => (
                    StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                    Bytes::from(bytes),
                    vec![
                        (header::CONTENT_TYPE, static_files::content_type(&path)),
                        (header::CACHE_CONTROL, static_files::cache_control(&path).to_string()),
                    ],
                ),
                Err(e) => {
                    eprintln!("cannot read {}: {e}", path.display());
                    (StatusCode::INTERNAL_SERVER_ERROR, Bytes::from_static(b"cannot read the file\n"), vec![])
                }
            },
            Lookup::Redirect(to) => (StatusCode::MOVED_PERMANENTLY, Bytes::new(), vec![(header::LOCATION, to)]),
            Lookup::NotFound => (StatusCode::NOT_FOUND, Bytes::from_static(b"404 not found\n"), vec![]),
            Lookup::BadPath => (StatusCode::BAD_REQUEST, Bytes::from_static(b"400 bad path\n"), vec![]),
        };
    let len = body.len();
    let mut r = Response::new(full(if head { Bytes::new() } else { body }));
    *r.status_mut() = status;
    for (name, value) in headers {
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            r.headers_mut().insert(name, v);
        }
    }
    r.headers_mut().insert(header::CONTENT_LENGTH, header::HeaderValue::from(len));
    r
}
