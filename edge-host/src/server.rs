//! The HTTP server: `/api/*` goes to the edge function, every other path to the
//! static site, as `spin.toml` routes them.
//!
//! Slow clients cannot hold the function: a connection has [`Limits::header_timeout`]
//! to send each request's headers (idle keep-alive connections included); an API
//! request's body is read whole by the host, within [`Limits::body_timeout`] and
//! [`MAX_BODY_BYTES`], before it takes an instance or one of the
//! [`MAX_API_REQUESTS`] slots; and one address may have at most
//! [`Limits::in_flight_per_client`] API requests in flight (body reading and
//! streaming answers included), so no one client can take every slot.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
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
pub const MAX_API_REQUESTS: usize = 256;

/// The largest API request body the host reads (twice the function's own limit,
/// 512 KiB, so that the function stays the one to answer 413 for bodies between
/// the two); a larger one is refused with 413 before it is read.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// How long and how much a client may take: the defences against slow clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From the first byte a connection waits for (a new connection, or one kept
    /// alive after a request) to the end of the request's headers; past it the
    /// connection is closed.
    pub header_timeout: Duration,
    /// From the end of an API request's headers to the end of its body; past it
    /// the answer is 408 and the connection is closed.
    pub body_timeout: Duration,
    /// API requests one client address (IPv6: its /64) may have in flight; more
    /// are answered 429 at once.
    pub in_flight_per_client: usize,
}

impl Default for Limits {
    /// 10 s for headers, 10 s for a body (a 512 KiB body at 50 KB/s), 16 API
    /// requests in flight per address (of [`MAX_API_REQUESTS`]).
    fn default() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            in_flight_per_client: 16,
        }
    }
}

struct State {
    site: PathBuf,
    handler: ProxyHandler<Function>,
    api_slots: Arc<Semaphore>,
    clients: Arc<Mutex<HashMap<IpAddr, usize>>>,
    limits: Limits,
    manifest: static_files::ManifestCache,
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
        if !cfg.site.join(static_files::MANIFEST).is_file() {
            eprintln!(
                "warning: {} has no {}, the list of the files the build wrote itself: every file is served as a user's file, so the site's own scripts will not run. Rebuild the site with this site-builder.",
                cfg.site.display(),
                static_files::MANIFEST
            );
        }
        let state = State {
            site: cfg.site,
            handler: function.into_handler(),
            api_slots: Arc::new(Semaphore::new(MAX_API_REQUESTS)),
            clients: Arc::default(),
            limits: cfg.limits,
            manifest: static_files::ManifestCache::default(),
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
            let header_timeout = state.limits.header_timeout;
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let state = state.clone();
                    async move { Ok::<_, Infallible>(respond(&state, req, peer).await) }
                });
                // Connection errors (a client hanging up, or too slow with its
                // headers) are the client's business.
                let _ = http1::Builder::new()
                    .keep_alive(true)
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(header_timeout)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}

async fn respond(state: &State, req: Request<Incoming>, peer: SocketAddr) -> Response<WasiBody> {
    let start = Instant::now();
    let (method, target) = (req.method().clone(), logged_target(req.uri()).to_string());
    let path = req.uri().path();
    let resp = if path == "/api" || path.starts_with("/api/") {
        api(state, spin_headers(req, peer), peer.ip()).await
    } else {
        site(state, &req).await
    };
    if state.log {
        let ms = start.elapsed().as_secs_f64() * 1e3;
        eprintln!("{method} {target} {} {ms:.1} ms", resp.status().as_u16());
    }
    resp
}

/// What the access log prints of a request: its path, never its query string,
/// which holds what readers search for (`?q=`) and tokens in the links they
/// follow; the log keeps no reader's words.
fn logged_target(uri: &hyper::Uri) -> &str {
    uri.path()
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

/// Whose requests count together: an IPv4 address, or an IPv6 address's /64 (what
/// one subscriber is usually given, as the function's rate limits count it).
fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(v6.to_bits() & !((1u128 << 64) - 1))),
        },
        v4 => v4,
    }
}

/// One API request of a client, counted while it lives.
struct InFlight {
    clients: Arc<Mutex<HashMap<IpAddr, usize>>>,
    client: IpAddr,
}

impl InFlight {
    /// Counts one more request of `client`, unless it already has `cap` in flight.
    fn enter(clients: &Arc<Mutex<HashMap<IpAddr, usize>>>, client: IpAddr, cap: usize) -> Option<InFlight> {
        let mut map = clients.lock().unwrap_or_else(|e| e.into_inner());
        let n = map.entry(client).or_insert(0);
        if *n >= cap {
            return None;
        }
        *n += 1;
        Some(InFlight { clients: clients.clone(), client })
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut map = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = map.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                map.remove(&self.client);
            }
        }
    }
}

/// A response body that keeps its request's slot and in-flight count until it has
/// been sent (or the client has gone): a streamed answer is still the function's
/// work.
struct Held<B> {
    body: B,
    _slot: OwnedSemaphorePermit,
    _in_flight: InFlight,
}

impl<B: Body + Unpin> Body for Held<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Why an API request's body was not read.
enum BodyError {
    TooLarge,
    Timeout,
    Broken,
}

/// Reads a request body whole, within `deadline` and [`MAX_BODY_BYTES`].
async fn read_body(mut body: Incoming, deadline: Duration) -> Result<Bytes, BodyError> {
    if body.size_hint().lower() > MAX_BODY_BYTES as u64 {
        return Err(BodyError::TooLarge);
    }
    if body.is_end_stream() {
        return Ok(Bytes::new());
    }
    let read = async move {
        let mut buf = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyError::Broken)?;
            if let Some(data) = frame.data_ref() {
                if buf.len() + data.len() > MAX_BODY_BYTES {
                    return Err(BodyError::TooLarge);
                }
                buf.extend_from_slice(data);
            }
        }
        Ok(Bytes::from(buf))
    };
    tokio::time::timeout(deadline, read).await.map_err(|_| BodyError::Timeout)?
}

async fn api(state: &State, req: Request<Incoming>, peer: IpAddr) -> Response<WasiBody> {
    // The client's count first: a client over it waits for nothing.
    let Some(in_flight) = InFlight::enter(&state.clients, client_of(peer), state.limits.in_flight_per_client) else {
        let mut r = error(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            &format!(
                "this address already has {} requests in flight; wait for one to finish",
                state.limits.in_flight_per_client
            ),
        );
        r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        // Its body (if any) is not read: the connection is done.
        r.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
        return r;
    };
    // Then the body, whole, before the request takes a slot or an instance: a
    // client that sends it slowly holds only its own connection.
    let (mut parts, body) = req.into_parts();
    let body = match read_body(body, state.limits.body_timeout).await {
        Ok(b) => b,
        Err(e) => {
            let (status, code, message) = match e {
                BodyError::TooLarge => (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "too_large",
                    format!("the request body is over {MAX_BODY_BYTES} bytes"),
                ),
                BodyError::Timeout => (
                    StatusCode::REQUEST_TIMEOUT,
                    "timeout",
                    format!("the request body did not arrive within {} s", state.limits.body_timeout.as_secs_f64()),
                ),
                BodyError::Broken => {
                    (StatusCode::BAD_REQUEST, "invalid_parameter", "the request body could not be read".to_string())
                }
            };
            let mut r = error(status, code, &message);
            // The rest of the body is never read: this connection is done.
            r.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            return r;
        }
    };
    if parts.headers.contains_key(header::TRANSFER_ENCODING) || !body.is_empty() {
        parts.headers.remove(header::TRANSFER_ENCODING);
        parts.headers.insert(header::CONTENT_LENGTH, header::HeaderValue::from(body.len()));
    }
    let Ok(slot) = state.api_slots.clone().acquire_owned().await else {
        return error(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "the server is shutting down");
    };
    let req = Request::from_parts(parts, full(body));
    let start = Instant::now();
    let timeout = state.handler.state().request_timeout();
    match state.handler.handle((), req).await {
        Ok(resp) => {
            let mut resp = resp.map(|body| Held { body, _slot: slot, _in_flight: in_flight }.boxed_unsync());
            let h = resp.headers_mut();
            h.entry(header::X_CONTENT_TYPE_OPTIONS).or_insert(header::HeaderValue::from_static("nosniff"));
            h.entry(header::CONTENT_SECURITY_POLICY)
                .or_insert(header::HeaderValue::from_static(static_files::RESPONSE_CSP));
            resp
        }
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
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, header::HeaderValue::from_static("nosniff"));
    h.insert(header::CONTENT_SECURITY_POLICY, header::HeaderValue::from_static(static_files::RESPONSE_CSP));
    r
}

fn full(b: Bytes) -> WasiBody {
    Full::new(b).map_err(|never: Infallible| match never {}).boxed_unsync()
}

async fn site(state: &State, req: &Request<Incoming>) -> Response<WasiBody> {
    let head = req.method() == Method::HEAD;
    let text = |s: &'static str| Bytes::from_static(s.as_bytes());
    let plain = || (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_string());
    let (status, body, headers): (StatusCode, Bytes, Vec<(header::HeaderName, String)>) =
        if req.method() != Method::GET && !head {
            (
                StatusCode::METHOD_NOT_ALLOWED,
                text("405 method not allowed\n"),
                vec![plain(), (header::ALLOW, "GET, HEAD".into())],
            )
        } else {
            match static_files::lookup(&state.site, req.uri().path()) {
                Lookup::File { path, status } => match tokio::fs::read(&path).await {
                    Ok(bytes) => {
                        // Relative to the site, `/`-separated, as the manifest lists it.
                        let rel = path.strip_prefix(&state.site).unwrap_or(&path);
                        let rel: Vec<_> = rel.components().map(|c| c.as_os_str().to_string_lossy()).collect();
                        let generated = state.manifest.get(&state.site).generated(&rel.join("/"));
                        (
                            StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                            Bytes::from(bytes),
                            static_files::headers(&path, generated),
                        )
                    }
                    Err(e) => {
                        eprintln!("cannot read {}: {e}", path.display());
                        (StatusCode::INTERNAL_SERVER_ERROR, text("cannot read the file\n"), vec![plain()])
                    }
                },
                Lookup::Redirect(to) => (StatusCode::MOVED_PERMANENTLY, Bytes::new(), vec![(header::LOCATION, to)]),
                Lookup::NotFound => (StatusCode::NOT_FOUND, text("404 not found\n"), vec![plain()]),
                Lookup::BadPath => (StatusCode::BAD_REQUEST, text("400 bad path\n"), vec![plain()]),
            }
        };
    let len = body.len();
    let mut r = Response::new(full(if head { Bytes::new() } else { body }));
    *r.status_mut() = status;
    // Whatever the answer, it is what it says it is, and (unless it is a file
    // with a policy of its own) it loads and runs nothing.
    let h = r.headers_mut();
    h.insert(header::X_CONTENT_TYPE_OPTIONS, header::HeaderValue::from_static("nosniff"));
    h.insert(header::CONTENT_SECURITY_POLICY, header::HeaderValue::from_static(static_files::RESPONSE_CSP));
    for (name, value) in headers {
        if let Ok(v) = header::HeaderValue::from_str(&value) {
            h.insert(name, v);
        }
    }
    h.insert(header::CONTENT_LENGTH, header::HeaderValue::from(len));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_access_log_prints_no_query_string() {
        let uri: hyper::Uri = "/api/search?q=my+password&k=5#x".parse().unwrap();
        assert_eq!(logged_target(&uri), "/api/search");
        let uri: hyper::Uri = "/it/vpn.html?token=secret".parse().unwrap();
        assert_eq!(logged_target(&uri), "/it/vpn.html");
    }
}
