//! `site-builder ingest web`: any help-centre website (MkDocs, Zendesk, WordPress,
//! plain HTML) into the content folder, through what the site publishes for
//! crawlers.
//!
//! The run reads `robots.txt` on the sitemap's origin ([`crate::robots`]), then the
//! sitemap and the sitemaps a sitemap index names ([`crate::sitemap`]); keeps the
//! pages on that origin, under the `--include` prefixes, that robots allows; and
//! fetches them politely: at most `concurrency` requests in flight (one, spaced by
//! `Crawl-delay`, when robots asks for a delay), `Retry-After` honoured on 429 and
//! 503 (else a jittered backoff: the crate's `retry` module), a user agent that
//! names the tool. Each page's main content becomes Markdown ([`crate::html`] then
//! [`crate::storage::to_markdown`]) with links to the other ingested pages
//! rewritten to their files, under the frontmatter the Confluence path writes
//! (`title`, `path` from the breadcrumb, `parent`, `original_url`, `page_id`,
//! `last_updated` from `lastmod`).
//!
//! Incremental and resumable like `ingest confluence`: the state file
//! `OUT/.web-state.json` records each page's `lastmod`, `ETag`, `Last-Modified` and
//! file. A page whose `lastmod` is unchanged is not requested; one without asks
//! with `If-None-Match` / `If-Modified-Since` and a 304 leaves it alone. The state
//! is saved as pages are written, so a run that stops resumes where it stopped.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use futures_util::stream::{self, StreamExt};
use indicatif::ProgressBar;
use kb_common::frontmatter::Frontmatter;
use kb_common::slug::slugify;
use kb_common::write::{write_atomic, WriteError};
use reqwest::header::{HeaderMap, HeaderName, CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use reqwest::Url;
use serde::{Deserialize, Serialize};

use crate::folder::{load_json_state, save_json_state, StateError, STATE_SAVE_INTERVAL};
use crate::html::Extracted;
use crate::http::{read_body, CONNECT_TIMEOUT, REQUEST_TIMEOUT};
use crate::retry::{self, Attempt, Policy, Step};
use crate::robots::Robots;
use crate::sitemap::{self, Sitemap};

/// The state file, inside the output folder.
pub const STATE_FILE: &str = ".web-state.json";

/// Sitemaps read at most (a site that lists more is cut off, and the run says so).
const MAX_SITEMAPS: usize = 1_000;

/// What to ingest and where.
#[derive(Debug, Clone)]
pub struct WebOptions {
    /// The sitemap (or sitemap index) URL.
    pub sitemap: String,
    /// URL prefixes to keep (all pages on the sitemap's origin when empty).
    pub include: Vec<String>,
    /// URL prefixes to leave out, even under an `include` prefix.
    pub exclude: Vec<String>,
    pub out: PathBuf,
    /// Requests in flight at once (one when robots.txt sets a Crawl-delay).
    pub concurrency: usize,
    /// Delete the files of pages that left the sitemap.
    pub prune: bool,
    /// Draw a progress bar on stderr.
    pub progress: bool,
}

/// Why a run could not start. Pages that fail are skipped and reported instead.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("--sitemap {url}: {message}; pass the full http(s) URL of the site's sitemap.xml")]
    BadUrl { url: String, message: String },
    #[error("{url}: {message}")]
    Fetch { url: String, message: String },
    #[error("{url} answered {status}; robots.txt must be readable (RFC 9309 treats a server error as \"crawl nothing\"); try again later")]
    RobotsUnavailable { url: String, status: u16 },
    #[error("{url}: {source}")]
    Sitemap {
        url: String,
        #[source]
        source: sitemap::SitemapError,
    },
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// A page that was not written, and why.
#[derive(Debug, Clone, Serialize)]
pub struct WebSkipped {
    pub url: String,
    pub reason: String,
}

/// What a run did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct WebSummary {
    /// Pages the sitemaps list on the origin, under the prefixes.
    pub listed: usize,
    /// Of those, the ones robots.txt disallows (not fetched).
    pub disallowed: usize,
    pub fetched: usize,
    /// Not requested (same `lastmod`) or answered 304.
    pub unchanged: usize,
    pub written: usize,
    pub skipped: Vec<WebSkipped>,
    /// Files of pages that left the sitemap (deleted with `prune`).
    pub gone: Vec<String>,
    pub pruned: bool,
    pub retries: usize,
    /// Seconds robots.txt asked to wait between requests.
    pub crawl_delay: Option<f64>,
}

impl WebSummary {
    pub fn text(&self) -> String {
        let mut s = format!(
            "{} pages listed: {} disallowed by robots.txt, {} fetched, {} unchanged, {} written, {} skipped, {} gone{}, {} retries\n",
            self.listed,
            self.disallowed,
            self.fetched,
            self.unchanged,
            self.written,
            self.skipped.len(),
            self.gone.len(),
            if self.pruned { " (pruned)" } else { "" },
            self.retries
        );
        if let Some(d) = self.crawl_delay {
            let _ = writeln!(s, "  robots.txt asks for {d} s between requests: fetched one at a time");
        }
        for k in &self.skipped {
            let _ = writeln!(s, "  skipped {}: {}", k.url, k.reason);
        }
        for g in &self.gone {
            let what = if self.pruned { "deleted" } else { "kept; pass --prune to delete it" };
            let _ = writeln!(s, "  gone: {g}, {what}");
        }
        s
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
struct StateEntry {
    path: String,
    #[serde(default)]
    lastmod: Option<String>,
    #[serde(default)]
    etag: Option<String>,
    #[serde(default)]
    last_modified: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    #[serde(default)]
    sitemap: String,
    #[serde(default)]
    pages: BTreeMap<String, StateEntry>,
}

/// A URL as pages are keyed: no fragment, and `…/index.html` as its folder.
fn normalise(mut url: Url) -> Url {
    url.set_fragment(None);
    let path = url.path().to_string();
    for index in ["index.html", "index.htm", "index.php"] {
        if let Some(dir) = path.strip_suffix(index) {
            if dir.ends_with('/') {
                url.set_path(dir);
            }
        }
    }
    url
}

/// The file of each page, `/`-separated under OUT: the URL's path, `.html` and the
/// like dropped; the site's root is `index.md`, and a folder's page (a URL that ends
/// in `/`, as `…/index.html` is read) or a page other pages sit under
/// (`/network/vpn` above `/network/vpn/linux`) is `…/index.md`, so the build's tree
/// follows the site's. Segments keep their spelling when they are already safe file
/// names (letters, digits, `-`, `_`, `.`, `+`, `~`; case kept), so a page keeps
/// its address when the site is rebuilt (`/data/Allas/web_client.html` stays that,
/// not `/data/allas/web_client.html`); others are slugged. Two URLs that would
/// share a file on a case-insensitive file system are told apart by -2, -3, … in
/// sitemap order.
fn assign_paths(urls: &[Url]) -> HashMap<String, String> {
    let file_name = |segment: &str| -> String {
        let decoded = kb_common::percent::decode_lossy(segment);
        let safe = !decoded.is_empty()
            && !decoded.starts_with('.')
            && decoded.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '~'));
        if safe {
            decoded
        } else {
            slugify(&decoded)
        }
    };
    let segments = |u: &Url| -> Vec<String> {
        let mut segs: Vec<String> =
            u.path_segments().map(|s| s.filter(|x| !x.is_empty()).map(str::to_string).collect()).unwrap_or_default();
        if let Some(last) = segs.last_mut() {
            for ext in [".html", ".htm", ".php", ".aspx", ".asp", ".jsp"] {
                if let Some(stem) = last.strip_suffix(ext) {
                    *last = stem.to_string();
                }
            }
        }
        let mut segs: Vec<String> = segs.iter().map(|s| file_name(s)).filter(|s| !s.is_empty()).collect();
        if let Some(q) = u.query().map(slugify).filter(|q| !q.is_empty()) {
            match segs.last_mut() {
                Some(last) => *last = format!("{last}-{q}"),
                None => segs.push(q),
            }
        }
        segs
    };
    let all: Vec<Vec<String>> = urls.iter().map(segments).collect();
    let dirs: HashSet<Vec<String>> = all.iter().flat_map(|s| (1..s.len()).map(|n| s[..n].to_vec())).collect();
    let mut used: HashSet<String> = HashSet::new();
    let mut out = HashMap::new();
    for (u, segs) in urls.iter().zip(&all) {
        let folder = u.path().ends_with('/') && u.query().is_none();
        let base = if segs.is_empty() {
            "index".to_string()
        } else if folder || dirs.contains(segs) {
            format!("{}/index", segs.join("/"))
        } else {
            segs.join("/")
        };
        let mut path = format!("{base}.md");
        let mut n = 2;
        while !used.insert(path.to_lowercase()) {
            path = format!("{base}-{n}.md");
            n += 1;
        }
        out.insert(u.to_string(), path);
    }
    out
}

/// `target` seen from the file `from` (both `/`-separated under OUT).
fn relative(from: &str, target: &str) -> String {
    let from_dir: Vec<&str> = from.rsplit_once('/').map_or(vec![], |(d, _)| d.split('/').collect());
    crate::folder::relative(&from_dir, target)
}

/// One fetched answer.
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// GET with retries ([`crate::retry`]: 429 and 5xx honour `Retry-After`, else
/// back off), bounded body. `Err` when every attempt failed in transport, or a
/// 2xx answer's body could not be read.
async fn get(
    http: &reqwest::Client,
    url: &str,
    extra: &[(HeaderName, String)],
    retries: &mut usize,
) -> Result<Answer, String> {
    let count = || *retries += 1;
    let outcome = retry::run(&Policy::DEFAULT, count, move |a| attempt(http, url, extra, a)).await;
    outcome.unwrap_or_else(|gave_up| Err(gave_up.why))
}

/// One attempt of [`get`]. A 429 or 5xx on the last attempt is the answer; a body
/// that cannot be read (too large, cut short) ends the request.
async fn attempt(
    http: &reqwest::Client,
    url: &str,
    extra: &[(HeaderName, String)],
    a: Attempt,
) -> Step<Result<Answer, String>> {
    let mut req = http.get(url);
    for (k, v) in extra {
        req = req.header(k, v);
    }
    let resp = match req.send().await {
        Ok(resp) => resp,
        Err(e) => return Step::Retry { why: kb_common::http::describe(&e), retry_after: None },
    };
    let status = resp.status().as_u16();
    if retry::retryable(status) && !a.last {
        let retry_after = retry::retry_after(resp.headers(), SystemTime::now());
        return Step::Retry { why: format!("answered {status}"), retry_after };
    }
    let headers = resp.headers().clone();
    let body = if resp.status().is_success() {
        match read_body(resp).await {
            Ok(body) => body,
            Err(why) => return Step::Done(Err(why)),
        }
    } else {
        Vec::new()
    };
    Step::Done(Ok(Answer { status, headers, body }))
}

fn header(h: &HeaderMap, name: HeaderName) -> Option<String> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// `YYYY-MM-DD` from a sitemap `lastmod` or an HTTP date.
fn date_of(lastmod: Option<&str>, last_modified: Option<&str>) -> Option<String> {
    let from_lastmod = lastmod.and_then(|l| {
        let mut parts = l.get(..10)?.splitn(3, '-');
        let (y, m, d) = (parts.next()?.parse().ok()?, parts.next()?.parse::<u8>().ok()?, parts.next()?.parse().ok()?);
        time::Date::from_calendar_date(y, time::Month::try_from(m).ok()?, d).ok().map(|d| d.to_string())
    });
    from_lastmod.or_else(|| {
        let t = httpdate::parse_http_date(last_modified?).ok()?;
        let t = time::OffsetDateTime::from(t);
        Some(t.date().to_string())
    })
}

/// Reads the sitemaps under `url`: the pages of a `<urlset>`, and those of every
/// sitemap an index names, indexes of indexes included down to [`MAX_DEPTH`]
/// levels (each sitemap read once). The first sitemap must be readable; one that
/// an index names and that fails is reported and skipped.
async fn read_sitemaps(
    http: &reqwest::Client,
    url: &str,
    retries: &mut usize,
    skipped: &mut Vec<WebSkipped>,
) -> Result<Vec<sitemap::Entry>, WebError> {
    const MAX_DEPTH: usize = 3;
    let answer = get(http, url, &[], retries).await.map_err(|message| WebError::Fetch { url: url.into(), message })?;
    if answer.status != 200 {
        return Err(WebError::Fetch {
            url: url.into(),
            message: format!("answered {}, not the sitemap", answer.status),
        });
    }
    let first = sitemap::parse(&answer.body).map_err(|source| WebError::Sitemap { url: url.into(), source })?;
    let mut all = Vec::new();
    let mut seen: HashSet<String> = HashSet::from([url.to_string()]);
    let mut queue: std::collections::VecDeque<(String, Sitemap, usize)> = [(url.to_string(), first, 1)].into();
    let mut read = 1;
    while let Some((at, map, depth)) = queue.pop_front() {
        let children = match map {
            Sitemap::Urls(entries) => {
                all.extend(entries);
                continue;
            }
            Sitemap::Index(children) => children,
        };
        if depth >= MAX_DEPTH {
            skipped
                .push(WebSkipped { url: at, reason: format!("a sitemap index nested deeper than {MAX_DEPTH} levels") });
            continue;
        }
        for child in children {
            if !seen.insert(child.clone()) {
                continue;
            }
            if read >= MAX_SITEMAPS {
                skipped.push(WebSkipped { url: child, reason: format!("more than {MAX_SITEMAPS} sitemaps") });
                continue;
            }
            read += 1;
            let parsed = match get(http, &child, &[], retries).await {
                Ok(a) if a.status == 200 => sitemap::parse(&a.body).map_err(|e| e.to_string()),
                Ok(a) => Err(format!("answered {}", a.status)),
                Err(e) => Err(e),
            };
            match parsed {
                Ok(map) => queue.push_back((child, map, depth + 1)),
                Err(reason) => skipped.push(WebSkipped { url: child, reason }),
            }
        }
    }
    Ok(all)
}

/// What every step of a run reads.
struct Run<'a> {
    opts: &'a WebOptions,
    http: reqwest::Client,
    state_path: PathBuf,
    bar: ProgressBar,
}

/// A page to request: its URL, its sitemap `lastmod`, and the conditional
/// headers its state entry allows.
struct Request {
    url: Url,
    lastmod: Option<String>,
    conditions: Vec<(HeaderName, String)>,
}

/// Ingests the pages a sitemap lists.
pub fn ingest_web(opts: &WebOptions) -> Result<WebSummary, WebError> {
    let sitemap_url = sitemap_url(opts)?;
    let state_path = opts.out.join(STATE_FILE);
    let mut state = load_json_state::<State>(&state_path)?;
    state.sitemap = opts.sitemap.clone();
    let setup = |message: String| WebError::Fetch { url: opts.sitemap.clone(), message };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| setup(e.to_string()))?;
    let http = kb_common::http::client()
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(CONNECT_TIMEOUT)
        .build()
        .map_err(|e| setup(e.to_string()))?;
    let mut summary = WebSummary { pruned: opts.prune, ..WebSummary::default() };
    let bar = if opts.progress { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    bar.set_message("reading robots.txt and the sitemap");
    let run = Run { opts, http, state_path, bar };
    let crawled = rt.block_on(run.crawl(&sitemap_url, &mut state, &mut summary));
    run.bar.finish_and_clear();
    // Saved on the error path too when pages were written: they are recorded, so
    // the next run resumes after them. A run that stopped before writing anything
    // leaves the folder as it was.
    if crawled.is_ok() || summary.written > 0 {
        save_json_state(&run.state_path, &state)?;
    }
    crawled?;
    summary.skipped.sort_by(|a, b| a.url.cmp(&b.url));
    Ok(summary)
}

/// `--sitemap` as a URL: an absolute http(s) URL with a host.
fn sitemap_url(opts: &WebOptions) -> Result<Url, WebError> {
    let url = Url::parse(&opts.sitemap).map_err(|e| bad_url(opts, e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad_url(opts, "not an http(s) URL".into()));
    }
    Ok(url)
}

fn bad_url(opts: &WebOptions, message: String) -> WebError {
    WebError::BadUrl { url: opts.sitemap.clone(), message }
}

impl Run<'_> {
    /// The run on the runtime: robots.txt and the sitemaps, the plan of what to
    /// request, then the requests.
    async fn crawl(&self, sitemap_url: &Url, state: &mut State, summary: &mut WebSummary) -> Result<(), WebError> {
        let robots = self.read_robots(sitemap_url, &mut summary.retries).await?;
        summary.crawl_delay = robots.crawl_delay;
        let entries =
            read_sitemaps(&self.http, sitemap_url.as_str(), &mut summary.retries, &mut summary.skipped).await?;
        let pages = select_pages(entries, sitemap_url, self.opts, &mut summary.skipped);
        summary.listed = pages.len();
        let allowed: Vec<(Url, Option<String>)> =
            pages.into_iter().filter(|(u, _)| robots.allowed(&robots_path(u))).collect();
        summary.disallowed = summary.listed - allowed.len();
        let urls: Vec<Url> = allowed.iter().map(|(u, _)| u.clone()).collect();
        let paths = assign_paths(&urls);
        self.leave_gone(&urls, state, summary);
        let work = plan(&self.opts.out, &allowed, &paths, state, &mut summary.unchanged);
        self.fetch_all(work, robots.crawl_delay, &paths, state, summary).await
    }

    /// robots.txt on the sitemap's origin. A server error stops the run: RFC 9309
    /// reads it as "crawl nothing".
    async fn read_robots(&self, sitemap_url: &Url, retries: &mut usize) -> Result<Robots, WebError> {
        let robots_url = sitemap_url.join("/robots.txt").map_err(|e| bad_url(self.opts, e.to_string()))?;
        match get(&self.http, robots_url.as_str(), &[], retries).await {
            Ok(a) if a.status == 200 => {
                Ok(Robots::parse(&String::from_utf8_lossy(&a.body), kb_common::http::USER_AGENT))
            }
            Ok(a) if a.status >= 500 => {
                Err(WebError::RobotsUnavailable { url: robots_url.to_string(), status: a.status })
            }
            // 4xx (no robots.txt) and redirects to nowhere: everything is allowed.
            Ok(_) => Ok(Robots::allow_all()),
            Err(message) => Err(WebError::Fetch { url: robots_url.to_string(), message }),
        }
    }

    /// Pages recorded before that are gone from the sitemap (`urls`): reported, and
    /// with `--prune` their files deleted and their records dropped.
    fn leave_gone(&self, urls: &[Url], state: &mut State, summary: &mut WebSummary) {
        let listed: HashSet<&str> = urls.iter().map(Url::as_str).collect();
        let gone: Vec<String> = state.pages.keys().filter(|k| !listed.contains(k.as_str())).cloned().collect();
        for g in gone {
            if let Some(entry) = state.pages.remove(&g) {
                if self.opts.prune {
                    let _ = std::fs::remove_file(self.opts.out.join(&entry.path));
                } else {
                    state.pages.insert(g.clone(), entry.clone());
                }
                summary.gone.push(entry.path);
            }
        }
    }

    /// Requests the planned pages, `concurrency` in flight (one at a time, spaced
    /// by the delay, when robots.txt asks for a `Crawl-delay`), and takes each
    /// answer as it arrives ([`Run::take`]), saving the state at most every
    /// [`STATE_SAVE_INTERVAL`] while pages are recorded.
    async fn fetch_all(
        &self,
        work: Vec<Request>,
        crawl_delay: Option<f64>,
        paths: &HashMap<String, String>,
        state: &mut State,
        summary: &mut WebSummary,
    ) -> Result<(), WebError> {
        self.bar.set_length(work.len() as u64);
        self.bar.set_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        self.bar.set_message("fetching pages");
        let concurrency = if crawl_delay.is_some() { 1 } else { self.opts.concurrency.max(1) };
        let delay = crawl_delay.map(|d| Duration::from_secs_f64(d.min(60.0)));
        let http = &self.http;
        let mut answers = stream::iter(work.into_iter().enumerate())
            .map(|(i, req)| async move {
                if let (Some(d), true) = (delay, i > 0) {
                    tokio::time::sleep(d).await;
                }
                let mut retries = 0;
                let answer = get(http, req.url.as_str(), &req.conditions, &mut retries).await;
                (req, answer, retries)
            })
            .buffer_unordered(concurrency);
        let mut last_save = Instant::now();
        while let Some((req, answer, retries)) = answers.next().await {
            self.bar.inc(1);
            summary.retries += retries;
            let answer = match answer {
                Ok(a) => a,
                Err(reason) => {
                    summary.skipped.push(WebSkipped { url: req.url.to_string(), reason });
                    continue;
                }
            };
            summary.fetched += 1;
            if !self.take(&req.url, req.lastmod, answer, paths, state, summary)? {
                continue;
            }
            if last_save.elapsed() >= STATE_SAVE_INTERVAL {
                save_json_state(&self.state_path, state)?;
                last_save = Instant::now();
            }
        }
        Ok(())
    }

    /// Takes one answer: a 304 leaves the page alone (its new `lastmod` recorded);
    /// an HTML page is converted, written (unless its file already says the same)
    /// and recorded; anything else is skipped. `Ok(true)` when the page was
    /// recorded.
    fn take(
        &self,
        url: &Url,
        lastmod: Option<String>,
        a: Answer,
        paths: &HashMap<String, String>,
        state: &mut State,
        summary: &mut WebSummary,
    ) -> Result<bool, WebError> {
        let key = url.to_string();
        if a.status == 304 {
            summary.unchanged += 1;
            if let Some(e) = state.pages.get_mut(&key) {
                e.lastmod = lastmod;
            }
            return Ok(false);
        }
        if a.status != 200 {
            summary.skipped.push(WebSkipped { url: key, reason: format!("answered {}", a.status) });
            return Ok(false);
        }
        let path = paths[&key].clone();
        let (page, markdown) = match convert(url, &path, paths, &a) {
            Ok(converted) => converted,
            Err(reason) => {
                summary.skipped.push(WebSkipped { url: key, reason });
                return Ok(false);
            }
        };
        let last_modified = header(&a.headers, LAST_MODIFIED);
        let file = page_file(&key, &path, &page, &markdown, lastmod.as_deref(), last_modified.as_deref())?;
        let out = self.opts.out.join(&path);
        // A page fetched again (no lastmod, no validator) that converts to the
        // same file is not rewritten: a run that changed nothing writes nothing.
        if std::fs::read(&out).is_ok_and(|old| old == file.as_bytes()) {
            summary.unchanged += 1;
        } else {
            write_atomic(&out, file.as_bytes())?;
            summary.written += 1;
        }
        state.pages.insert(key, StateEntry { path, lastmod, etag: header(&a.headers, ETAG), last_modified });
        Ok(true)
    }
}

/// The sitemap's pages a run keeps, each once, in sitemap order: on the sitemap's
/// origin (the others are reported), under an `--include` prefix (any, when none
/// is given) and under no `--exclude` prefix.
fn select_pages(
    entries: Vec<sitemap::Entry>,
    sitemap_url: &Url,
    opts: &WebOptions,
    skipped: &mut Vec<WebSkipped>,
) -> Vec<(Url, Option<String>)> {
    let origin = sitemap_url.origin();
    let mut pages: Vec<(Url, Option<String>)> = Vec::new();
    let mut seen = HashSet::new();
    for e in entries {
        let Ok(u) = Url::parse(&e.loc) else {
            skipped.push(WebSkipped { url: e.loc, reason: "not a URL".into() });
            continue;
        };
        let u = normalise(u);
        if u.origin() != origin {
            skipped.push(WebSkipped { url: u.to_string(), reason: "on another origin than the sitemap".into() });
            continue;
        }
        if !opts.include.is_empty() && !opts.include.iter().any(|p| u.as_str().starts_with(p.as_str())) {
            continue;
        }
        if opts.exclude.iter().any(|p| u.as_str().starts_with(p.as_str())) {
            continue;
        }
        if seen.insert(u.to_string()) {
            pages.push((u, e.lastmod));
        }
    }
    pages
}

/// What robots.txt rules are matched against: the URL's path and query.
fn robots_path(u: &Url) -> String {
    match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_string(),
    }
}

/// Which pages to request, with their conditional headers. A page whose file is
/// where its state entry says and whose sitemap `lastmod` is the one recorded is
/// not requested (counted in `unchanged`); one the state knows is asked with its
/// `If-None-Match` / `If-Modified-Since`, so that an unchanged page answers 304.
fn plan(
    out: &Path,
    allowed: &[(Url, Option<String>)],
    paths: &HashMap<String, String>,
    state: &State,
    unchanged: &mut usize,
) -> Vec<Request> {
    let mut work = Vec::new();
    for (u, lastmod) in allowed {
        let key = u.to_string();
        let path = &paths[&key];
        let known = state.pages.get(&key).filter(|e| e.path == *path && out.join(path).is_file());
        if let Some(k) = known {
            if lastmod.is_some() && k.lastmod == *lastmod {
                *unchanged += 1;
                continue;
            }
        }
        let mut conditions = Vec::new();
        if let Some(k) = known {
            if let Some(e) = &k.etag {
                conditions.push((IF_NONE_MATCH, e.clone()));
            }
            if let Some(m) = &k.last_modified {
                conditions.push((IF_MODIFIED_SINCE, m.clone()));
            }
        }
        work.push(Request { url: u.clone(), lastmod: lastmod.clone(), conditions });
    }
    work
}

/// A fetched page's parts and its main content as Markdown, links to the other
/// ingested pages rewritten to their files. `Err` is why the page is skipped: it
/// is not HTML, or its content cannot be converted.
fn convert(url: &Url, path: &str, paths: &HashMap<String, String>, a: &Answer) -> Result<(Extracted, String), String> {
    let ctype = header(&a.headers, CONTENT_TYPE).unwrap_or_default();
    if !ctype.is_empty() && !ctype.contains("html") {
        let hint = if ctype.contains("pdf") { "; ingest it with `site-builder ingest pdf`" } else { "" };
        return Err(format!("not an HTML page ({ctype}){hint}"));
    }
    let text = crate::html::decode(&a.body, Some(&ctype));
    let dom = crate::html::Dom::parse(&text);
    let page = crate::html::extract(&dom, &|href: &str| link_target(url, path, paths, href));
    let markdown = crate::storage::to_markdown(&page.xhtml, &crate::storage::TitleLinks).map_err(|e| e.to_string())?;
    Ok((page, markdown))
}

/// What a link (`href`) of the page at `url`, written to `path`, becomes: the
/// relative path of another ingested page's file (an anchor when it is this
/// page), the absolute URL of any other http(s) or mailto target, `None` (only
/// the words kept) for other schemes.
fn link_target(url: &Url, path: &str, paths: &HashMap<String, String>, href: &str) -> Option<String> {
    let target = url.join(href.trim()).ok()?;
    match target.scheme() {
        "http" | "https" => {}
        "mailto" => return Some(target.to_string()),
        _ => return None,
    }
    let frag = target.fragment().map(|f| format!("#{f}")).unwrap_or_default();
    let t = normalise(target.clone());
    match paths.get(t.as_str()) {
        // A link within the page stays an anchor.
        Some(file) if *file == path && !frag.is_empty() => Some(frag),
        Some(file) => Some(format!("{}{frag}", relative(path, file))),
        None => Some(target.to_string()),
    }
}

/// A converted page's file: the frontmatter (`title`, the breadcrumb as `path`
/// and `parent`, `original_url`, `page_id`, `last_updated` from `lastmod` or
/// `Last-Modified`), the title as its `#` heading, then the Markdown.
fn page_file(
    key: &str,
    path: &str,
    page: &Extracted,
    markdown: &str,
    lastmod: Option<&str>,
    last_modified: Option<&str>,
) -> Result<String, WebError> {
    let title = if page.title.is_empty() { key.to_string() } else { page.title.clone() };
    let mut chain = page.breadcrumb.clone();
    chain.push(title.clone());
    // The file's path, `/` as `-`: unique as the file is, stable across runs.
    let page_id = path.trim_end_matches(".md").trim_end_matches("/index").replace('/', "-");
    let fm = Frontmatter {
        title: Some(title.clone()),
        parent: page.breadcrumb.last().cloned(),
        path: Some(chain.join(" / ")),
        original_url: Some(key.to_string()),
        page_id: Some(page_id),
        last_updated: date_of(lastmod, last_modified),
        ..Frontmatter::default()
    };
    fm.page_file(&format!("# {title}\n\n{markdown}"))
        .map_err(|e| WebError::Fetch { url: key.to_string(), message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<Url> {
        list.iter().map(|u| normalise(Url::parse(u).unwrap())).collect()
    }

    #[test]
    fn files_follow_the_site_tree() {
        let u = urls(&[
            "https://h.edu/",
            "https://h.edu/network/",
            "https://h.edu/network/eduroam/",
            "https://h.edu/network/vpn.html",
            "https://h.edu/network/vpn/linux.html",
            "https://h.edu/apps/starccm+.html",
            "https://h.edu/printing/index.html",
            "https://h.edu/Printing/",
            "https://h.edu/data/Allas/web_client.html",
            "https://h.edu/caf%C3%A9%20menu.html",
            "https://h.edu/search?q=x",
        ]);
        let p = assign_paths(&u);
        let get = |k: &str| p[normalise(Url::parse(k).unwrap()).as_str()].clone();
        assert_eq!(get("https://h.edu/"), "index.md");
        assert_eq!(get("https://h.edu/network/"), "network/index.md");
        assert_eq!(get("https://h.edu/network/eduroam/"), "network/eduroam/index.md", "a folder's page");
        assert_eq!(get("https://h.edu/network/vpn.html"), "network/vpn/index.md", "a page with pages below it");
        assert_eq!(get("https://h.edu/network/vpn/linux.html"), "network/vpn/linux.md");
        assert_eq!(get("https://h.edu/apps/starccm+.html"), "apps/starccm+.md");
        assert_eq!(get("https://h.edu/printing/"), "printing/index.md");
        assert_eq!(
            get("https://h.edu/Printing/"),
            "Printing/index-2.md",
            "names that differ only in case are numbered"
        );
        assert_eq!(get("https://h.edu/data/Allas/web_client.html"), "data/Allas/web_client.md", "spelling kept");
        assert_eq!(get("https://h.edu/caf%C3%A9%20menu.html"), "cafe-menu.md", "unsafe names are slugged");
        assert_eq!(get("https://h.edu/search?q=x"), "search-qx.md");
        assert_eq!(relative("network/eduroam.md", "network/vpn.md"), "vpn.md");
        assert_eq!(relative("network/eduroam.md", "printing/index.md"), "../printing/index.md");
        assert_eq!(relative("index.md", "network/index.md"), "network/index.md");
    }

    #[test]
    fn dates_come_from_lastmod_then_last_modified() {
        assert_eq!(date_of(Some("2026-03-01T10:00:00+02:00"), None).as_deref(), Some("2026-03-01"));
        assert_eq!(date_of(Some("garbage"), Some("Wed, 21 Oct 2015 07:28:00 GMT")).as_deref(), Some("2015-10-21"));
        assert_eq!(date_of(None, None), None);
    }
}
