//! The Spin glue: the bundled index and encoder, the state each instance derives
//! from them once, the Spin variables, and the conversion between Spin's HTTP types
//! and [`crate::api`]'s plain ones.

use std::sync::OnceLock;
use std::time::Instant;

use search_core::service::Service;
use spin_sdk::experimental::wasi::keyvalue::{atomics, store as kv};
use spin_sdk::http::{FullBody, HeaderMap, HeaderName, HeaderValue, IntoResponse, Request, StatusCode};
use spin_sdk::http_service;

use search_core::insights::record::Write;

use crate::api::{self, Admission, AllowedOrigins, ApiError, Backend, Config, LlmConfig, Reply};
use crate::insights;
use crate::limit::{self, Bucket, Decision};
use crate::llm;

/// `Index::open` and `Encoder::open` view the bytes in place as `f32`/`u32`
/// arrays, so the data must start on a 64-byte boundary; `include_bytes!` alone
/// only promises 1.
#[repr(C, align(64))]
struct Aligned<B: ?Sized>(B);

static INDEX: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("KB_INDEX_FILE")));
static ENCODER: &Aligned<[u8]> = &Aligned(*include_bytes!(env!("KB_ENCODER_FILE")));

/// Opened once per instance: the host may serve many requests with one instance,
/// and opening validates the files and builds the encoder's layer table.
static SERVICE: OnceLock<Result<Service<'static>, String>> = OnceLock::new();

/// The Spin variables, read once per instance (they are fixed for the life of the
/// application).
static CONFIG: OnceLock<Result<Config, String>> = OnceLock::new();

/// A random name for this instance, drawn once (std seeds `RandomState` from
/// `wasi:random`): it tells instances apart in `Server-Timing`, nothing more.
fn instance_id() -> u64 {
    static ID: OnceLock<u64> = OnceLock::new();
    *ID.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new().build_hasher().finish()
    })
}

/// A fresh answer id: this instance's random name and a counter, unique across
/// instances for all practical purposes (it names an answer, it guards nothing).
fn answer_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    format!("{:012x}{:08x}{:04x}", instance_id() >> 16, t as u32, n & 0xffff)
}

/// The instance's service, opened on first use with a cache of `query_cache`
/// vectors (the configuration is fixed for the life of an instance): the bundled
/// index, or the encoder and a tenant in PostgreSQL (which is not read until the
/// first query, so a database that is down now fails only the requests made
/// while it is).
fn service(cfg: &Config) -> Result<&'static Service<'static>, &'static str> {
    SERVICE
        .get_or_init(|| {
            let opened = match &cfg.backend {
                Backend::Bundled if INDEX.0.is_empty() => Err(
                    "this component was built without an index (KB_ENCODER only); set search_backend=postgres, or build it with KB_INDEX"
                        .to_string(),
                ),
                Backend::Bundled => Service::open(&INDEX.0, &ENCODER.0).map_err(|e| e.to_string()),
                Backend::Postgres { urls, tenant } => {
                    let store = search_core::pg::Store::new(Box::new(crate::pg::SpinPg::new(urls.clone())), tenant);
                    Service::postgres(&ENCODER.0, store).map_err(|e| e.to_string())
                }
            };
            opened.map(|s| s.with_query_cache(cfg.query_cache))
        })
        .as_ref()
        .map_err(String::as_str)
}

async fn variable(name: &str) -> Result<Option<String>, String> {
    use spin_sdk::variables::Error;
    match spin_sdk::variables::get(name).await {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(Error::Undefined(_)) => Ok(None),
        Err(e) => Err(format!("Spin variable `{name}`: {e}")),
    }
}

async fn config() -> Result<&'static Config, String> {
    if CONFIG.get().is_none() {
        let read = async {
            let origins = variable("allowed_origins").await?.unwrap_or_default();
            let llm = LlmConfig::from_variables(
                &variable("llm_base_url").await?.unwrap_or_default(),
                &variable("llm_model").await?.unwrap_or_default(),
                &variable("llm_api_key").await?.unwrap_or_default(),
                &variable("llm_timeout_secs").await?.unwrap_or_default(),
                &variable("llm_max_total_secs").await?.unwrap_or_default(),
            )?;
            let mut limits = limit::Limits::default();
            for bucket in Bucket::ALL {
                limits.set_from_variable(bucket, &variable(bucket.variable()).await?.unwrap_or_default())?;
            }
            let query_cache = api::query_cache_size(&variable("query_cache_size").await?.unwrap_or_default())?;
            let backend = Backend::from_variables(
                &variable("search_backend").await?.unwrap_or_default(),
                &variable("postgres_url").await?.unwrap_or_default(),
                &variable("tenant").await?.unwrap_or_default(),
            )?;
            let insights = search_core::insights::record::Settings::from_variables(
                &variable("insights_recording").await?.unwrap_or_default(),
                &variable("insights_retention_days").await?.unwrap_or_default(),
            )?;
            let insights_token = api::insights_token(&variable("insights_token").await?.unwrap_or_default())?;
            Ok(Config {
                allowed_origins: AllowedOrigins::parse(&origins)?,
                llm,
                limits,
                query_cache,
                backend,
                insights,
                insights_token,
            })
        };
        let c: Result<Config, String> = read.await;
        let _ = CONFIG.set(c);
    }
    match CONFIG.get() {
        Some(Ok(c)) => Ok(c),
        Some(Err(e)) => Err(e.clone()),
        None => Err("configuration was not read".into()),
    }
}

#[http_service]
async fn handle(req: Request) -> Result<spin_sdk::wasip3::http::types::Response, spin_sdk::http::Error> {
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64() * 1e3;
    let cfg = match config().await {
        Ok(cfg) => cfg,
        Err(e) => return Ok(into_response(ApiError::internal(format!("misconfigured: {e}")).reply()).into_response()?),
    };
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    // Where the request was sent: Spin (and the local host) say it in
    // `spin-full-url`; the `Host` header does not reach a wasi:http guest.
    let host = header("spin-full-url")
        .and_then(|u| u.split_once("://").map(|(_, rest)| rest.split('/').next().unwrap_or("").to_string()))
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_string()))
        .or_else(|| header("host"));
    let (origin, content_type, authorization) = (header("origin"), header("content-type"), header("authorization"));
    let client = limit::client_id(header("spin-client-addr").as_deref());
    let r = api::Request {
        method: req.method().as_str(),
        path: req.uri().path(),
        query: req.uri().query().unwrap_or(""),
        origin: origin.as_deref(),
        host: host.as_deref(),
        content_type: content_type.as_deref(),
        authorization: authorization.as_deref(),
    };
    let route = match api::admit(&r, cfg) {
        Admission::Reply(reply) => return Ok(into_response(reply).into_response()?),
        Admission::Route(route) => route,
    };
    if let (Some(bucket), Some(client)) = (route.bucket(), client.as_deref()) {
        if let Some(e) = rate_limit(bucket, cfg.limits.of(bucket), client) {
            return Ok(into_response(api::with_cors(e.reply(), cfg, origin.as_deref())).into_response()?);
        }
    }
    let reply = match api::dispatch(&r, route, service(cfg), cfg, &clock) {
        api::Dispatch::Reply(mut reply) => {
            // The search as the insights store keeps it, written before the answer
            // goes (one short statement; its time is in Server-Timing).
            let recorded = reply.record.take().and_then(|e| insights::write(Write::Event(&e), cfg.insights, &clock));
            // Which instance answered, beside its timings: the host may run several,
            // and a benchmark compares them (scripts/bench-serve).
            if let Some((_, timing)) = reply.headers.iter_mut().find(|(name, _)| *name == "server-timing") {
                if let Some(ms) = recorded {
                    timing.push_str(&format!(", record;dur={ms:.2}"));
                }
                timing.push_str(&format!(", instance;desc={:016x}", instance_id()));
            }
            reply
        }
        api::Dispatch::Insights { since } => {
            let reply = match service(cfg) {
                Ok(svc) => match insights::report(svc, since, cfg.insights) {
                    Ok(report) => api::insights_reply(&report),
                    Err(e) => ApiError::unavailable(format!("the insights cannot be read: {e}")).reply(),
                },
                Err(e) => ApiError::unavailable(format!("the search index cannot be opened: {e}")).reply(),
            };
            api::with_cors(reply, cfg, origin.as_deref())
        }
        api::Dispatch::Feedback => {
            let reply = match read_body(req).await {
                Ok(body) => {
                    let (reply, fb) = api::feedback(&body);
                    if let Some(fb) = fb {
                        let kept = insights::write(Write::Feedback(&fb.record()), cfg.insights, &clock);
                        // Without the store (recording off, or it failed), the
                        // platform's log keeps it: one structured line on stderr.
                        if kept.is_none() {
                            eprintln!("{}", fb.line(api::now_unix()));
                        }
                    }
                    reply
                }
                Err(e) => e.reply(),
            };
            api::with_cors(reply, cfg, origin.as_deref())
        }
        api::Dispatch::Chat => {
            let reply = match (read_body(req).await, service(cfg)) {
                (Ok(body), Ok(svc)) => match (api::chat_request(&body), &cfg.llm) {
                    (Ok(chat), None) => {
                        let mut reply = api::chat_extractive(&chat, svc, &answer_id(), &clock);
                        if let Some(e) = reply.record.take() {
                            insights::write(Write::Event(&e), cfg.insights, &clock);
                        }
                        reply
                    }
                    (Ok(chat), Some(llm)) if chat.stream => {
                        // Headers now, events as the agent produces them; the
                        // record once the answer is out.
                        let (tx, body) = spin_sdk::http::body::stream::<bytes::Bytes>();
                        let llm = llm.clone();
                        spin_sdk::wasip3::spawn(async move {
                            let (id, t0, mut seen) = (answer_id(), clock(), Vec::new());
                            let out = llm::Out { sink: llm::Sink::Stream(tx), seen: &mut seen, answer_id: &id };
                            llm::run(svc, &llm, &chat, &clock, out).await;
                            if let Some(e) = api::chat_record(&chat, &seen, clock() - t0, "llm") {
                                insights::write(Write::Event(&e), cfg.insights, &clock);
                            }
                        });
                        let head = api::with_cors(
                            Reply { status: 200, headers: api::sse_headers(), body: Vec::new(), record: None },
                            cfg,
                            origin.as_deref(),
                        );
                        return Ok((StatusCode::OK, header_map(head.headers), body).into_response()?);
                    }
                    (Ok(chat), Some(llm)) => {
                        let (id, t0, mut events) = (answer_id(), clock(), Vec::new());
                        let out = llm::Out { sink: llm::Sink::Collect, seen: &mut events, answer_id: &id };
                        llm::run(svc, llm, &chat, &clock, out).await;
                        if let Some(e) = api::chat_record(&chat, &events, clock() - t0, "llm") {
                            insights::write(Write::Event(&e), cfg.insights, &clock);
                        }
                        api::events_reply(&events, false)
                    }
                    (Err(e), _) => e.reply(),
                },
                (Err(e), _) => e.reply(),
                (_, Err(e)) => ApiError::unavailable(e.to_string()).reply(),
            };
            api::with_cors(reply, cfg, origin.as_deref())
        }
    };
    Ok(into_response(reply).into_response()?)
}

/// Counts one request of `client` against `limit` per minute in the key-value
/// store; `Some` is the 429 to answer. A store that cannot be reached lets the
/// request through (logged): readers are never locked out by the limiter itself.
fn rate_limit(bucket: Bucket, limit: u32, client: &str) -> Option<ApiError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    if limit == 0 {
        return None;
    }
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let store = match kv::open("default") {
        Ok(s) => Counters(s),
        Err(e) => {
            eprintln!("rate limit: cannot open the key-value store `default` ({e:?}); not limiting");
            return None;
        }
    };
    let verdict = match limit::admit(&store, bucket, client, now_ms, limit) {
        Ok(Decision::Allow) => None,
        Ok(Decision::Deny { retry_after_secs }) => Some(ApiError::rate_limited(bucket, limit, retry_after_secs)),
        Err(e) => {
            eprintln!("rate limit: cannot count in the store `default` ({e:?}); not limiting");
            None
        }
    };
    // Counters of past minutes are swept now and then (every SWEEP_EVERY requests
    // of an instance, a page of keys at a time), so the store holds only the
    // clients of the last two minutes.
    static SEEN: AtomicU64 = AtomicU64::new(0);
    const SWEEP_EVERY: u64 = 1000;
    if SEEN.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
        sweep(&store.0, now_ms);
    }
    verdict
}

/// The key-value bucket as the limiter's counters.
struct Counters(kv::Bucket);

impl limit::Counters for Counters {
    type Error = kv::Error;
    fn increment(&self, key: &str, delta: i64) -> Result<i64, kv::Error> {
        atomics::increment(&self.0, key, delta)
    }
}

thread_local! {
    /// Where the next sweep resumes its walk over the store's keys.
    static SWEEP_CURSOR: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Deletes the stale rate-limit counters in one page of keys, resuming where the
/// previous sweep stopped, so one sweep's work is bounded however large the store.
fn sweep(bucket: &kv::Bucket, now_ms: u64) {
    let cursor = SWEEP_CURSOR.with(|c| c.borrow_mut().take());
    match bucket.list_keys(cursor.as_deref()) {
        Ok(page) => {
            for key in page.keys.iter().filter(|k| limit::is_stale(k, now_ms)) {
                if let Err(e) = bucket.delete(key) {
                    eprintln!("rate limit: cannot delete the stale counter {key} ({e:?})");
                }
            }
            SWEEP_CURSOR.with(|c| *c.borrow_mut() = page.cursor);
        }
        Err(e) => eprintln!("rate limit: cannot list the store's keys to sweep ({e:?})"),
    }
}

/// The request body, at most [`api::MAX_CHAT_BODY`] bytes.
async fn read_body(req: Request) -> Result<Vec<u8>, ApiError> {
    use futures::StreamExt;
    use spin_sdk::http::body::IncomingBodyExt;
    let mut stream = req.into_body().stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ApiError::param("body", format!("cannot read the body: {e:?}")))?;
        if body.len() + chunk.len() > api::MAX_CHAT_BODY {
            return Err(ApiError::too_large(api::MAX_CHAT_BODY));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn header_map(pairs: Vec<(&'static str, String)>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value)) {
            headers.append(n, v);
        }
    }
    headers
}

fn into_response(r: Reply) -> (StatusCode, HeaderMap, FullBody<bytes::Bytes>) {
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, header_map(r.headers), FullBody::new(bytes::Bytes::from(r.body)))
}
