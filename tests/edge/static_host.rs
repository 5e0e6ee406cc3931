//! A plain static file server for the browser-search tests: it serves a built
//! `site/` as object storage or a file server would (files as they are, no
//! compression, no `/api`), counts every byte it sends, and can put the real
//! edge function behind `/api/` or take it away while a page is open.
//!
//! Test-only control (GET): `/__mode?set=static|down|busy|up` (`static`: `/api/*`
//! is a 404 page, as on a static host; `down`: 503 JSON, as during an outage;
//! `busy`: the edge function's 429 with `Retry-After: 7`, as when a rate limit
//! is reached; `up`: forwarded to the host), `/__log` (every response so far as
//! `[[path, bytes], …]`) and `/__log?clear=1`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use stub_http::{Request, Response, StubServer};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Static,
    Down,
    Busy,
    Up,
}

struct State {
    mode: Mode,
    log: Vec<(String, usize)>,
}

/// A running static server (the workspace's `stub-http` server); stops when
/// dropped.
pub struct StaticHost {
    server: StubServer,
}

impl StaticHost {
    pub fn url(&self) -> String {
        self.server.url()
    }
}

/// Serves `site` on an ephemeral port; `/api/` in `up` mode goes to `api` (the
/// edge host's base URL).
pub fn serve(site: &Path, api: Option<String>) -> StaticHost {
    let state = Mutex::new(State { mode: Mode::Static, log: Vec::new() });
    let site = site.to_path_buf();
    StaticHost { server: StubServer::start(move |req| handle(&req, &site, &state, api.as_deref())) }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css",
        "js" | "mjs" => "text/javascript",
        "json" => "application/json",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "xml" => "application/xml",
        _ => "application/octet-stream",
    }
}

fn respond(status: u16, ctype: &str, body: impl Into<bytes::Bytes>) -> Response {
    Response::new(status).header("content-type", ctype).header("cache-control", "no-store").body(body)
}

fn handle(req: &Request, site: &Path, state: &Mutex<State>, api: Option<&str>) -> Response {
    let (path, query) = (req.path(), req.query());
    if path == "/__mode" {
        let mode = match query.strip_prefix("set=") {
            Some("static") => Mode::Static,
            Some("down") => Mode::Down,
            Some("busy") => Mode::Busy,
            _ => Mode::Up,
        };
        state.lock().unwrap().mode = mode;
        return respond(200, "text/plain", "ok");
    }
    if path == "/__log" {
        let mut s = state.lock().unwrap();
        let json = serde_json::to_vec(&s.log).unwrap();
        if query == "clear=1" {
            s.log.clear();
        }
        return respond(200, "application/json", json);
    }
    let mode = state.lock().unwrap().mode;
    let (status, ctype, bytes) = if path.starts_with("/api/") { api_answer(req, mode, api) } else { file(site, path) };
    state.lock().unwrap().log.push((path.to_string(), bytes.len()));
    let r = respond(status, &ctype, bytes);
    if status == 429 {
        r.header("retry-after", "7")
    } else {
        r
    }
}

/// `/api/*` in `mode`: forwarded to `api`, a 503 outage, or a static host's 404.
fn api_answer(req: &Request, mode: Mode, api: Option<&str>) -> (u16, String, Vec<u8>) {
    match (mode, api) {
        (Mode::Up, Some(api)) => {
            let url = format!("{api}{}", req.target());
            let r = if req.method() == "POST" {
                let ctype = req.header("content-type").unwrap_or_default();
                crate::support::request("POST", &url, &[("content-type", ctype)], Some(req.body()))
            } else {
                crate::support::request("GET", &url, &[("accept", "application/json")], None)
            };
            let ct = r.header("content-type").unwrap_or("application/json").to_string();
            (r.status, ct, r.body)
        }
        (Mode::Busy, _) => (
            429,
            "application/json".into(),
            br#"{"error":{"status":429,"code":"rate_limited","message":"too many requests from this address; retry after 7 s"}}"#.to_vec(),
        ),
        (Mode::Down, _) => (
            503,
            "application/json".into(),
            br#"{"error":{"code":"unavailable","message":"deploy in progress"}}"#.to_vec(),
        ),
        _ => not_found(),
    }
}

/// A file of the site, as a file server finds it.
fn file(site: &Path, path: &str) -> (u16, String, Vec<u8>) {
    let rel = percent_decode(path.trim_start_matches('/'));
    let mut file: PathBuf = site.join(if rel.is_empty() { "index.html".into() } else { rel });
    if file.is_dir() {
        file = file.join("index.html");
    }
    let inside = file.components().all(|c| !matches!(c, std::path::Component::ParentDir));
    match std::fs::read(&file) {
        Ok(b) if inside => (200, content_type(&file).into(), b),
        _ => not_found(),
    }
}

fn not_found() -> (u16, String, Vec<u8>) {
    (404, "text/html".into(), b"<!doctype html><title>Not found</title>".to_vec())
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}
