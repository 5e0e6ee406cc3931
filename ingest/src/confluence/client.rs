//! An async client for the two Confluence REST calls the ingest needs: one page
//! with its storage body, and a page's children (paged). It runs on a tokio
//! runtime, so the caller can have many requests in flight on one thread; it
//! retries 429 and 5xx answers, dropped connections and bodies cut short
//! ([`crate::retry`]: exponential backoff with jitter, `Retry-After` honoured), and
//! turns 401/403 into an error that stops the run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use kb_common::percent::encode_segment;
use reqwest::header::ACCEPT;
use reqwest::Url;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::http::{read_body, CONNECT_TIMEOUT, REQUEST_TIMEOUT};
use crate::retry::{self, Attempt, Exhausted, Policy, Step};

/// What can go wrong talking to Confluence.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "the server refused the credentials ({status}) for page {page_id} at {url}: set --token-env to the name of \
         an environment variable holding a valid API token with read access to the space"
    )]
    Auth { status: u16, page_id: String, url: String },
    #[error("page {page_id}: {url} answered {status} after {attempts} attempt(s); check the page id and the base URL")]
    Status { status: u16, page_id: String, url: String, attempts: u32 },
    #[error(
        "page {page_id}: cannot reach {url} after {attempts} attempt(s): {message}; check --base-url and the network"
    )]
    Transport { page_id: String, url: String, attempts: u32, message: String },
    #[error("page {page_id}: {url} answered with JSON this tool does not understand: {message}")]
    Json { page_id: String, url: String, message: String },
    #[error(
        "page {page_id}: the server's next-page link {next} leads away from {base}; it was not followed, so that \
         the API token is only ever sent to --base-url (check the server's base URL setting, or use the URL it \
         links to as --base-url)"
    )]
    CrossOrigin { page_id: String, next: String, base: String },
    #[error("cannot set up the HTTP client: {message}")]
    Client { message: String },
}

impl FetchError {
    /// Whether the whole run must stop (credentials refused) rather than one page.
    pub fn is_fatal(&self) -> bool {
        matches!(self, FetchError::Auth { .. })
    }
}

/// A page as listed among its parent's children (no body).
#[derive(Debug, Clone, Deserialize)]
pub struct Listed {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub version: Option<Version>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Version {
    pub number: u64,
    #[serde(default)]
    pub when: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Ancestor {
    #[serde(default)]
    pub id: String,
    pub title: String,
}

/// A page with its storage body.
#[derive(Debug, Clone, Deserialize)]
pub struct Page {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub version: Option<Version>,
    #[serde(default)]
    pub ancestors: Vec<Ancestor>,
    #[serde(default)]
    pub body: Option<Body>,
    #[serde(default, rename = "_links")]
    pub links: Links,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Body {
    pub storage: Option<Storage>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Storage {
    pub value: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Links {
    #[serde(default)]
    pub webui: Option<String>,
    #[serde(default)]
    pub next: Option<String>,
}

#[derive(Deserialize)]
struct ChildPage {
    #[serde(default)]
    results: Vec<Listed>,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default, rename = "_links")]
    links: Links,
}

/// The client. Its methods take `&self`, so one client serves every request in
/// flight; it counts the retries it made.
pub struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
    retries: AtomicUsize,
    /// Children asked for per request.
    pub page_size: usize,
}

impl Client {
    pub fn new(base_url: &str, token: Option<String>) -> Result<Client, FetchError> {
        let http = kb_common::http::client()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            // Redirects are followed (http → https, a moved context path); reqwest
            // drops the Authorization header when one leads to another host.
            .build()
            .map_err(|e| FetchError::Client { message: e.to_string() })?;
        Ok(Client {
            http,
            base: base_url.trim_end_matches('/').to_string(),
            token,
            retries: AtomicUsize::new(0),
            page_size: 25,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn retries(&self) -> usize {
        self.retries.load(Ordering::Relaxed)
    }

    /// `GET {base}/rest/api/content/{id}?expand=...`
    pub async fn page(&self, id: &str, expand: &str) -> Result<Page, FetchError> {
        let url = format!("{}/rest/api/content/{}?expand={expand}", self.base, encode_segment(id));
        self.get_json(id, &url).await
    }

    /// Every child of a page, following `_links.next` (relative to the base) when
    /// the server gives it, else asking for the next `start` until a short page.
    /// An absolute `next` is followed only on the base URL's origin: every request
    /// carries the bearer token, and a page body (written by anyone who can edit
    /// Confluence, or a compromised proxy) must not be able to send it elsewhere.
    pub async fn children(&self, id: &str) -> Result<Vec<Listed>, FetchError> {
        let listing = |start: usize| {
            format!(
                "{}/rest/api/content/{}/child/page?start={start}&limit={}&expand=version",
                self.base,
                encode_segment(id),
                self.page_size
            )
        };
        let mut all = Vec::new();
        let mut url = listing(0);
        // Bounded so that a server that keeps handing out `next` cannot loop forever.
        for _ in 0..10_000 {
            let page: ChildPage = self.get_json(id, &url).await?;
            let got = page.results.len();
            let limit = page.limit.unwrap_or(self.page_size);
            all.extend(page.results);
            match page.links.next {
                Some(next) if got > 0 => {
                    url = if is_absolute(&next) {
                        if origin(&next).is_none() || origin(&next) != origin(&self.base) {
                            return Err(FetchError::CrossOrigin { page_id: id.into(), next, base: self.base.clone() });
                        }
                        next
                    } else {
                        // Relative (`/rest/...`, also `//host/...`): always under the base.
                        format!("{}/{}", self.base, next.trim_start_matches('/'))
                    };
                }
                _ if got < limit || got == 0 => break,
                // No `next` link but a full page: ask for the following one.
                _ => url = listing(all.len()),
            }
        }
        Ok(all)
    }

    async fn get_json<T: DeserializeOwned>(&self, page_id: &str, url: &str) -> Result<T, FetchError> {
        let bytes = self.get(page_id, url).await?;
        serde_json::from_slice(&bytes).map_err(|e| FetchError::Json {
            page_id: page_id.into(),
            url: url.into(),
            message: e.to_string(),
        })
    }

    /// GET with retries; the body of a 2xx answer.
    async fn get(&self, page_id: &str, url: &str) -> Result<Vec<u8>, FetchError> {
        let retries = &self.retries;
        let count = || {
            retries.fetch_add(1, Ordering::Relaxed);
        };
        match retry::run(&Policy::DEFAULT, count, move |a| self.attempt(page_id, url, a)).await {
            Ok(outcome) => outcome,
            Err(Exhausted { attempts, why }) => {
                Err(FetchError::Transport { page_id: page_id.into(), url: url.into(), attempts, message: why })
            }
        }
    }

    /// One attempt of [`Client::get`]. A body cut short is retried like a
    /// dropped connection; a 429 or 5xx on the last attempt is reported with its
    /// status.
    async fn attempt(&self, page_id: &str, url: &str, a: Attempt) -> Step<Result<Vec<u8>, FetchError>> {
        let mut req = self.http.get(url).header(ACCEPT, "application/json");
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = match req.send().await {
            Ok(resp) => resp,
            Err(e) => return Step::Retry { why: kb_common::http::describe(&e), retry_after: None },
        };
        let status = resp.status().as_u16();
        if resp.status().is_success() {
            match read_body(resp).await {
                Ok(bytes) => Step::Done(Ok(bytes)),
                Err(why) => Step::Retry { why, retry_after: None },
            }
        } else if status == 401 || status == 403 {
            Step::Done(Err(FetchError::Auth { status, page_id: page_id.into(), url: url.into() }))
        } else if retry::retryable(status) && !a.last {
            let retry_after = retry::retry_after(resp.headers(), SystemTime::now());
            Step::Retry { why: format!("answered {status}"), retry_after }
        } else {
            Step::Done(Err(FetchError::Status { status, page_id: page_id.into(), url: url.into(), attempts: a.number }))
        }
    }
}

/// Whether a link is absolute (`scheme:…`) rather than relative to the base.
fn is_absolute(link: &str) -> bool {
    Url::parse(link).is_ok()
}

/// The origin of an absolute http(s) URL: scheme, host and port (the scheme's
/// default when none is written), as the URL standard normalises them; `None` for
/// other schemes or what is not a URL.
fn origin(url: &str) -> Option<(String, String, u16)> {
    let url = Url::parse(url).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    Some((url.scheme().to_string(), url.host_str()?.to_string(), url.port_or_known_default()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex, OnceLock};

    use stub_http::{Response, StubServer};

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(f)
    }

    #[test]
    fn origins() {
        let o = |u: &str| origin(u);
        assert_eq!(o("https://Wiki.Example.org/wiki"), o("https://wiki.example.org:443/rest/x?y"));
        assert_ne!(o("https://wiki.example.org"), o("http://wiki.example.org"));
        assert_ne!(o("https://wiki.example.org"), o("https://wiki.example.org:8443"));
        assert_ne!(o("https://wiki.example.org"), o("https://wiki.example.org.evil.example"));
        assert_ne!(o("https://wiki.example.org"), o("https://evil.example@wiki.example.org.evil.example/"));
        assert_eq!(o("ftp://x/y"), None);
        assert!(is_absolute("HTTPS://x") && is_absolute("javascript:x"));
        assert!(!is_absolute("/rest/a:b") && !is_absolute("//host/x") && !is_absolute("rest/a:b"));
    }

    /// A server that answers its n-th request with the n-th of `bodies(base)` (the
    /// last one again after that) and records each request's `Authorization`,
    /// lower-cased. It stops when the returned server is dropped.
    fn server(bodies: impl Fn(&str) -> Vec<String>) -> (StubServer, String, Arc<Mutex<Vec<Option<String>>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answers: Arc<OnceLock<Vec<String>>> = Arc::default();
        let (log, list) = (seen.clone(), answers.clone());
        let stub = StubServer::start(move |req| {
            let n = {
                let mut log = log.lock().expect("log");
                log.push(req.header("authorization").map(str::to_ascii_lowercase));
                log.len() - 1
            };
            let bodies = list.get().expect("the bodies are set before any request");
            Response::new(200).header("content-type", "application/json").body(bodies[n.min(bodies.len() - 1)].clone())
        });
        let base = stub.url();
        answers.set(bodies(&base)).expect("set once");
        (stub, base, seen)
    }

    /// A server that answers every request with a redirect to `to`.
    fn redirector(to: String) -> StubServer {
        StubServer::start(move |_| Response::new(302).header("location", &to))
    }

    #[test]
    fn a_redirect_to_another_origin_does_not_carry_the_token() {
        let page = r#"{"id": "1", "title": "Home"}"#.to_string();
        let (_other, other, other_seen) = server(|_| vec![page.clone()]);
        let redirect = redirector(format!("{other}/wiki/rest/api/content/1"));
        let client = Client::new(&format!("{}/wiki", redirect.url()), Some("s3cret".into())).expect("client");
        let got = block_on(client.page("1", "version")).expect("followed");
        assert_eq!(got.title, "Home");
        assert_eq!(other_seen.lock().expect("log").as_slice(), [None], "the token went to another origin");
    }

    fn listing(id: &str, next: &str) -> String {
        format!(
            r#"{{"results": [{{"id": "{id}", "title": "Child {id}"}}], "limit": 1, "_links": {{"next": "{next}"}}}}"#
        )
    }

    const DONE: &str = r#"{"results": [], "limit": 1}"#;

    #[test]
    fn a_next_link_to_another_origin_is_not_followed_with_the_token() {
        let (_evil, evil, evil_seen) = server(|_| vec![DONE.to_string()]);
        // Another host, the same host on another port, another scheme.
        for next in [
            format!("{evil}/rest/api/content/1/child/page?start=1"),
            "http://127.0.0.1:1/x".to_string(),
            "HTTPS://127.0.0.1/x".to_string(),
        ] {
            let (_stub, base, base_seen) = server(|_| vec![listing("2", &next)]);
            let client = Client::new(&format!("{base}/wiki"), Some("s3cret".into())).expect("client");
            let err = block_on(client.children("1")).expect_err("must stop");
            assert!(matches!(err, FetchError::CrossOrigin { .. }), "{err}");
            assert!(err.to_string().contains("was not followed"), "{err}");
            assert_eq!(base_seen.lock().expect("log").as_slice(), [Some("bearer s3cret".to_string())]);
        }
        assert!(evil_seen.lock().expect("log").is_empty(), "the other host was asked");
    }

    #[test]
    fn a_next_link_on_the_same_origin_is_followed() {
        let (_stub, base, seen) = server(|base| {
            // The same origin, written with an upper-case scheme and explicit path.
            let next = format!("{}/wiki/rest/api/content/1/child/page?start=1&limit=1", base.replace("http", "HTTP"));
            vec![listing("2", &next), listing("3", "/rest/api/content/1/child/page?start=2&limit=1"), DONE.into()]
        });
        let client = Client::new(&format!("{base}/wiki"), Some("s3cret".into())).expect("client");
        let children = block_on(client.children("1")).expect("listed");
        assert_eq!(children.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["2", "3"]);
        assert_eq!(seen.lock().expect("log").len(), 3);
    }
}
