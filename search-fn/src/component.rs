//! The Spin glue: the bundled index and encoder, the state each instance derives
//! from them once, the Spin variables, and the conversion between Spin's HTTP types
//! and [`crate::api`]'s plain ones.

use std::sync::OnceLock;
use std::time::Instant;

use search_service::service::Service;
use spin_sdk::experimental::wasi::keyvalue::{atomics, store as kv};
use spin_sdk::http::{FullBody, HeaderMap, HeaderName, HeaderValue, IntoResponse, Request, StatusCode};
use spin_sdk::http_service;

use crate::api::{self, Admission, AllowedOrigins, ApiError, Backend, Config, LlmConfig, Reply};
use crate::insights;
use crate::limit::{self, Bucket, Decision, LimitError};
use crate::llm;
use search_service::agent::settings::SettingsError;

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
static CONFIG: OnceLock<Result<Config, ConfigError>> = OnceLock::new();

/// Why the Spin variables do not make a configuration: every request is then
/// answered 500 `misconfigured: …`, the message naming the variable.
#[derive(Debug, thiserror::Error)]
enum ConfigError {
    #[error("Spin variable `{name}`: {source}")]
    Variable {
        name: &'static str,
        #[source]
        source: spin_sdk::variables::Error,
    },
    #[error(transparent)]
    Llm(#[from] SettingsError),
    #[error(transparent)]
    Limit(#[from] LimitError),
    #[error(transparent)]
    Setting(#[from] api::SettingError),
    #[error(transparent)]
    Insights(#[from] search_service::insights::record::SettingsError),
    #[error("configuration was not read")]
    NotRead,
}

/// A random name for this instance, drawn once (std seeds `RandomState` from
/// `wasi:random`): it tells instances apart in `Server-Timing`, nothing more.
fn instance_id() -> u64 {
    static ID: OnceLock<u64> = OnceLock::new();
    *ID.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new().build_hasher().finish()
    })
}

/// A fresh answer id: 128 bits from `wasi:random`, in hex. Feedback is taken
/// only for an id the function recorded, and only the reader who got the
/// answer knows its id: nobody else can rate it, or guess one to rate.
fn answer_id() -> String {
    let mut bytes = [0u8; 16];
    if let Err(e) = getrandom::fill(&mut bytes) {
        // No randomness from the host: the id stays unique (time and a counter),
        // and the log says it is guessable.
        eprintln!("answer id: no randomness from the host ({e}); using time and a counter");
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        bytes[..8].copy_from_slice(&(instance_id() ^ t).to_le_bytes());
        bytes[8..].copy_from_slice(&N.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
                    let store = search_service::pg::Store::new(Box::new(crate::pg::SpinPg::new(urls.clone())), tenant);
                    Service::postgres(&ENCODER.0, store).map_err(|e| e.to_string())
                }
            };
            opened.map(|s| s.with_query_cache(cfg.query_cache))
        })
        .as_ref()
        .map_err(String::as_str)
}

async fn variable(name: &'static str) -> Result<Option<String>, ConfigError> {
    use spin_sdk::variables::Error;
    match spin_sdk::variables::get(name).await {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(Error::Undefined(_)) => Ok(None),
        Err(source) => Err(ConfigError::Variable { name, source }),
    }
}

async fn config() -> Result<&'static Config, &'static ConfigError> {
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
            let insights = search_service::insights::record::Settings::from_variables(
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
        let c: Result<Config, ConfigError> = read.await;
        let _ = CONFIG.set(c);
    }
    static NOT_READ: ConfigError = ConfigError::NotRead;
    match CONFIG.get() {
        Some(Ok(c)) => Ok(c),
        Some(Err(e)) => Err(e),
        None => Err(&NOT_READ),
    }
}

#[http_service]
async fn handle(req: Request) -> Response {
    let start = Instant::now();
    let clock = move || start.elapsed().as_secs_f64() * 1e3;
    let cfg = match config().await {
        Ok(cfg) => cfg,
        Err(e) => return Ok(into_response(ApiError::internal(format!("misconfigured: {e}")).reply()).into_response()?),
    };
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
    let (origin, content_type, authorization) = (header("origin"), header("content-type"), header("authorization"));
    let client = limit::client_id(header("spin-client-addr").as_deref());
    let r = api::Request {
        method: req.method().as_str(),
        path: req.uri().path(),
        query: req.uri().query().unwrap_or(""),
        origin: origin.as_deref(),
        content_type: content_type.as_deref(),
        authorization: authorization.as_deref(),
    };
    let route = match api::admit(&r, cfg) {
        Admission::Reply(reply) => return Ok(into_response(reply).into_response()?),
        Admission::Route(route) => route,
    };
    if let (Some(bucket), Some(client)) = (route.bucket(), client.as_deref()) {
        if let Some(e) = rate_limit(bucket, cfg, client) {
            return Ok(into_response(api::with_cors(e.reply(), cfg, origin.as_deref())).into_response()?);
        }
    }
    let reply = match api::dispatch(&r, route, service(cfg), cfg, &clock) {
        api::Dispatch::Reply(reply) => searched(reply, cfg, &clock),
        api::Dispatch::Insights { since } => insights_report(cfg, since),
        api::Dispatch::Feedback => feedback(req, cfg).await,
        api::Dispatch::Chat => match chat(req, cfg, &clock, client.clone(), origin.as_deref()).await {
            Chat::Answered(reply) => reply,
            Chat::Streaming(response) => return response,
        },
    };
    if let Some(bucket) = route.bucket() {
        charge(bucket, cfg, client.as_deref(), reply.units);
    }
    Ok(into_response(api::with_cors(reply, cfg, origin.as_deref())).into_response()?)
}

/// A search or health answer, with the search recorded (written before the
/// answer goes: one short statement, its time in Server-Timing) and the
/// instance that answered named beside its timings (the host may run several,
/// and `scripts/bench-serve` compares them).
fn searched(mut reply: Reply, cfg: &Config, clock: &dyn Fn() -> f64) -> Reply {
    let recorded = reply.record.take().and_then(|e| insights::write(&e, cfg.insights, clock));
    if let Some((_, timing)) = reply.headers.iter_mut().find(|(name, _)| *name == "server-timing") {
        if let Some(ms) = recorded {
            timing.push_str(&format!(", record;dur={ms:.2}"));
        }
        timing.push_str(&format!(", instance;desc={:016x}", instance_id()));
    }
    reply
}

/// `GET /api/insights`, authorised: the report from `since` (Unix s).
fn insights_report(cfg: &Config, since: u64) -> Reply {
    match service(cfg) {
        Ok(svc) => match insights::report(svc, since, cfg.insights) {
            Ok(report) => api::insights_reply(&report),
            Err(e) => ApiError::unavailable(format!("the insights cannot be read: {e}")).reply(),
        },
        Err(e) => ApiError::unavailable(format!("the search index cannot be opened: {e}")).reply(),
    }
}

/// `POST /api/feedback`: on an answer, kept beside the answer it names; on a
/// page, kept if it is a page of the site. Logged when there is no store to
/// keep it in (one structured line on stderr, which the platform's log keeps).
async fn feedback(req: Request, cfg: &Config) -> Reply {
    let fb = match read_body(req).await.and_then(|body| api::feedback(&body)) {
        Ok(api::FeedbackBody::Answer(fb)) => fb,
        Ok(api::FeedbackBody::Page(pf)) => return page_feedback(&pf, cfg),
        Err(e) => return e.reply(),
    };
    let kept = insights::feedback(&fb.record(), cfg.insights);
    if kept == api::FeedbackKept::Logged {
        eprintln!("{}", fb.line(api::now_unix()));
    }
    api::feedback_reply(kept, &fb.id)
}

/// The site's pages the index knows, URL → page id, listed once per instance
/// (one display record read per page); `None` with the PostgreSQL backend,
/// whose pages are not listed.
static PAGES: OnceLock<Option<std::collections::HashMap<String, String>>> = OnceLock::new();

/// "Was this helpful?" on a page: refused (400 `unknown_page`) unless the page
/// is one of the index's, then recorded or logged like feedback on an answer.
fn page_feedback(pf: &api::PageFeedback, cfg: &Config) -> Reply {
    let svc = match service(cfg) {
        Ok(svc) => svc,
        Err(e) => return ApiError::unavailable(format!("the search index cannot be opened: {e}")).reply(),
    };
    let pages = PAGES.get_or_init(|| {
        search_service::insights::report::pages_of(svc)
            .map(|pages| pages.into_values().map(|p| (p.url, p.page_id)).collect())
    });
    let page_id = match api::rated_page(&pf.page, pages.as_ref()) {
        Ok(id) => id,
        Err(e) => return e.reply(),
    };
    let kept = insights::page_feedback(&pf.record(page_id), cfg.insights);
    if kept == api::FeedbackKept::Logged {
        eprintln!("{}", pf.line(api::now_unix()));
    }
    api::feedback_reply(kept, "")
}

type Response = Result<spin_sdk::wasip3::http::types::Response, spin_sdk::http::Error>;

/// What a chat answered with.
enum Chat {
    /// The whole answer (JSON, or the extractive agent's events at once).
    Answered(Reply),
    /// An LLM answer as it is written: its headers (CORS included) are out, the
    /// events follow as the agent makes them.
    Streaming(Response),
}

/// `POST /api/chat`: the extractive agent without an LLM, else the LLM agent,
/// streamed when the client asked for a stream. Each chat is recorded once its
/// answer is out, and charged what its searches cost.
async fn chat(
    req: Request,
    cfg: &'static Config,
    clock: &dyn Fn() -> f64,
    client: Option<String>,
    origin: Option<&str>,
) -> Chat {
    let (body, svc) = match (read_body(req).await, service(cfg)) {
        (Ok(body), Ok(svc)) => (body, svc),
        (Err(e), _) => return Chat::Answered(e.reply()),
        (_, Err(e)) => return Chat::Answered(ApiError::unavailable(e.to_string()).reply()),
    };
    let chat = match api::chat_request(&body) {
        Ok(chat) => chat,
        Err(e) => return Chat::Answered(e.reply()),
    };
    let Some(llm) = &cfg.llm else {
        let mut reply = api::chat_extractive(&chat, svc, &answer_id(), clock);
        if let Some(e) = reply.record.take() {
            insights::write(&e, cfg.insights, clock);
        }
        return Chat::Answered(reply);
    };
    if !chat.stream {
        let (id, t0, mut events) = (answer_id(), clock(), Vec::new());
        let out = llm::Out { sink: llm::Sink::Collect, seen: &mut events, answer_id: &id };
        llm::run(svc, llm, &chat, clock, out).await;
        if let Some(e) = api::chat_record(&chat, &events, clock() - t0, "llm") {
            insights::write(&e, cfg.insights, clock);
        }
        let mut reply = api::events_reply(&events, false);
        reply.units = api::chat_units(svc, &events);
        return Chat::Answered(reply);
    }
    // Headers now, events as the agent produces them; the record and the charge
    // once the answer is out.
    let (tx, body) = spin_sdk::http::body::stream::<bytes::Bytes>();
    let (llm, start) = (llm.clone(), Instant::now());
    spin_sdk::wasip3::spawn(async move {
        let clock = move || start.elapsed().as_secs_f64() * 1e3;
        let (id, mut seen) = (answer_id(), Vec::new());
        let out = llm::Out { sink: llm::Sink::Stream(tx), seen: &mut seen, answer_id: &id };
        llm::run(svc, &llm, &chat, &clock, out).await;
        if let Some(e) = api::chat_record(&chat, &seen, clock(), "llm") {
            insights::write(&e, cfg.insights, &clock);
        }
        charge(Bucket::Chat, cfg, client.as_deref(), api::chat_units(svc, &seen));
    });
    let head = api::with_cors(Reply::new(200, api::sse_headers(), Vec::new()), cfg, origin);
    Chat::Streaming((StatusCode::OK, header_map(head.headers), body).into_response().map_err(Into::into))
}

/// Charges `client` what a served request cost beyond the unit its admission
/// counted ([`limit::charge`]); a store that cannot be reached is logged.
fn charge(bucket: Bucket, cfg: &Config, client: Option<&str>, units: u32) {
    let Some(client) = client.filter(|_| units > 1 && cfg.limits.of(bucket) > 0) else { return };
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let charged = kv::open("default").and_then(|s| limit::charge(&Counters(s), bucket, client, now_ms, units));
    if let Err(e) = charged {
        eprintln!("rate limit: cannot charge {units} units in the store `default` ({e:?})");
    }
}

/// Counts one request of `client` against the bucket's limit per minute in the
/// key-value store; `Some` is the 429 to answer (its refusal counted for
/// insights). A store that cannot be reached lets the request through
/// (logged): readers are never locked out by the limiter itself.
fn rate_limit(bucket: Bucket, cfg: &Config, client: &str) -> Option<ApiError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let limit = cfg.limits.of(bucket);
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
        Ok(Decision::Deny { retry_after_secs }) => {
            refusal(&store, bucket, client, now_ms, cfg);
            Some(ApiError::rate_limited(bucket, limit, retry_after_secs))
        }
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

/// Counts a refused request ([`limit::refused`]) and records its minute in
/// insights when that says to: each of a client's first few refusals in a
/// minute, then as the count doubles, so a flood costs a few writes. Nothing is counted
/// when recording is off; a store that fails is logged, and the 429 goes out.
fn refusal(store: &Counters, bucket: Bucket, client: &str, now_ms: u64, cfg: &Config) {
    if !cfg.insights.enabled {
        return;
    }
    match limit::refused(store, bucket, client, now_ms) {
        Ok(rows) => insights::rate_limited(bucket.name(), client, &rows, cfg.limits.of(bucket), cfg.insights),
        Err(e) => eprintln!("rate limit: cannot count a refusal in the store `default` ({e:?})"),
    }
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
