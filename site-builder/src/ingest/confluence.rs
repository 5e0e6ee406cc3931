//! A blocking client for the two Confluence REST calls the ingest needs: one page
//! with its storage body, and a page's children (paged). It retries 429 and 5xx
//! answers and dropped connections with exponential backoff, honouring
//! `Retry-After`, and turns 401/403 into an error that stops the run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;

/// Attempts per request, the first included.
pub const MAX_ATTEMPTS: u32 = 5;
/// The longest wait between attempts, whatever `Retry-After` asks for.
const MAX_WAIT: Duration = Duration::from_secs(30);
/// The first backoff when the server gives no `Retry-After`.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);

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

/// The client. Shared by the worker threads; counts the retries it made.
pub struct Client {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
    retries: AtomicUsize,
    /// Children asked for per request.
    pub page_size: usize,
}

impl Client {
    pub fn new(base_url: &str, token: Option<String>) -> Client {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(60)))
            .http_status_as_error(false)
            .build()
            .into();
        Client {
            agent,
            base: base_url.trim_end_matches('/').to_string(),
            token,
            retries: AtomicUsize::new(0),
            page_size: 25,
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn retries(&self) -> usize {
        self.retries.load(Ordering::Relaxed)
    }

    /// `GET {base}/rest/api/content/{id}?expand=...`
    pub fn page(&self, id: &str, expand: &str) -> Result<Page, FetchError> {
        let url = format!("{}/rest/api/content/{}?expand={expand}", self.base, super::encode_segment(id));
        let text = self.get(id, &url)?;
        serde_json::from_str(&text).map_err(|e| FetchError::Json { page_id: id.into(), url, message: e.to_string() })
    }

    /// Every child of a page, following `_links.next` (relative to the base) when
    /// the server gives it, else asking for the next `start` until a short page.
    pub fn children(&self, id: &str) -> Result<Vec<Listed>, FetchError> {
        let mut all = Vec::new();
        let mut url = format!(
            "{}/rest/api/content/{}/child/page?start=0&limit={}&expand=version",
            self.base,
            super::encode_segment(id),
            self.page_size
        );
        // Bounded so that a server that keeps handing out `next` cannot loop forever.
        for _ in 0..10_000 {
            let text = self.get(id, &url)?;
            let page: ChildPage = serde_json::from_str(&text).map_err(|e| FetchError::Json {
                page_id: id.into(),
                url: url.clone(),
                message: e.to_string(),
            })?;
            let got = page.results.len();
            let limit = page.limit.unwrap_or(self.page_size);
            all.extend(page.results);
            match page.links.next {
                Some(next) if got > 0 => {
                    url = if next.starts_with("http://") || next.starts_with("https://") {
                        next
                    } else {
                        format!("{}/{}", self.base, next.trim_start_matches('/'))
                    };
                }
                _ if got < limit || got == 0 => break,
                // No `next` link but a full page: ask for the following one.
                _ => {
                    url = format!(
                        "{}/rest/api/content/{}/child/page?start={}&limit={}&expand=version",
                        self.base,
                        super::encode_segment(id),
                        all.len(),
                        self.page_size
                    );
                }
            }
        }
        Ok(all)
    }

    /// GET with retries; the body of a 2xx answer.
    fn get(&self, page_id: &str, url: &str) -> Result<String, FetchError> {
        // The connection or the body read failed on every attempt.
        let transport = |attempts: u32, e: ureq::Error| FetchError::Transport {
            page_id: page_id.into(),
            url: url.into(),
            attempts,
            message: e.to_string(),
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut req = self.agent.get(url).header("Accept", "application/json");
            if let Some(t) = &self.token {
                req = req.header("Authorization", &format!("Bearer {t}"));
            }
            let wait = match req.call() {
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    if (200..300).contains(&status) {
                        match resp.body_mut().with_config().limit(64 * 1024 * 1024).read_to_string() {
                            Ok(text) => return Ok(text),
                            Err(e) if attempt >= MAX_ATTEMPTS => return Err(transport(attempt, e)),
                            Err(_) => backoff(attempt),
                        }
                    } else if status == 401 || status == 403 {
                        return Err(FetchError::Auth { status, page_id: page_id.into(), url: url.into() });
                    } else if (status == 429 || status >= 500) && attempt < MAX_ATTEMPTS {
                        let retry_after = resp
                            .headers()
                            .get("retry-after")
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.trim().parse::<u64>().ok())
                            .map(Duration::from_secs);
                        retry_after.unwrap_or_else(|| backoff(attempt))
                    } else {
                        return Err(FetchError::Status {
                            status,
                            page_id: page_id.into(),
                            url: url.into(),
                            attempts: attempt,
                        });
                    }
                }
                Err(e) if attempt >= MAX_ATTEMPTS => return Err(transport(attempt, e)),
                Err(_) => backoff(attempt),
            };
            self.retries.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(wait.min(MAX_WAIT));
        }
    }
}

/// 200 ms, 400 ms, 800 ms, … for attempt 1, 2, 3, …
fn backoff(attempt: u32) -> Duration {
    FIRST_BACKOFF.saturating_mul(1 << attempt.saturating_sub(1).min(10))
}
