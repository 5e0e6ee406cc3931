//! A plain static file server for the browser-search tests: it serves a built
//! `site/` as object storage or a file server would (files as they are, no
//! compression, no `/api`), counts every byte it sends, and can put the real
//! edge function behind `/api/` or take it away while a page is open.
//!
//! Test-only control (GET): `/__mode?set=static|down|up` (`static`: `/api/*` is a
//! 404 page, as on a static host; `down`: 503 JSON, as during an outage; `up`:
//! forwarded to the host), `/__log` (every response so far as
//! `[[path, bytes], …]`) and `/__log?clear=1`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Static,
    Down,
    Up,
}

struct State {
    mode: Mode,
    log: Vec<(String, usize)>,
}

/// A running static server; stops with the test process.
pub struct StaticHost {
    url: String,
}

impl StaticHost {
    pub fn url(&self) -> String {
        self.url.clone()
    }
}

/// Serves `site` on an ephemeral port; `/api/` in `up` mode goes to `api` (the
/// edge host's base URL).
pub fn serve(site: &Path, api: Option<String>) -> StaticHost {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::new(Mutex::new(State { mode: Mode::Static, log: Vec::new() }));
    let site = site.to_path_buf();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            let (site, state, api) = (site.clone(), state.clone(), api.clone());
            std::thread::spawn(move || {
                if let Err(e) = handle(conn, &site, &state, api.as_deref()) {
                    eprintln!("static host: {e}");
                }
            });
        }
    });
    StaticHost { url }
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

fn respond(conn: &mut TcpStream, status: &str, ctype: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        conn,
        "HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n",
        body.len()
    )?;
    conn.write_all(body)
}

fn handle(mut conn: TcpStream, site: &Path, state: &Mutex<State>, api: Option<&str>) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or("GET").to_string(), parts.next().unwrap_or("/").to_string());
    let mut length = 0usize;
    let mut ctype = String::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h == "\r\n" {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if let Some(v) = h.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-type")) {
            ctype = v.1.trim().to_string();
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));

    if path == "/__mode" {
        let mode = match query.strip_prefix("set=") {
            Some("static") => Mode::Static,
            Some("down") => Mode::Down,
            _ => Mode::Up,
        };
        state.lock().unwrap().mode = mode;
        return respond(&mut conn, "200 OK", "text/plain", b"ok");
    }
    if path == "/__log" {
        let mut s = state.lock().unwrap();
        let json = serde_json::to_vec(&s.log).unwrap();
        if query == "clear=1" {
            s.log.clear();
        }
        return respond(&mut conn, "200 OK", "application/json", &json);
    }
    let mode = state.lock().unwrap().mode;
    let (status, ctype_out, bytes): (String, String, Vec<u8>) = if path.starts_with("/api/") {
        match (mode, api) {
            (Mode::Up, Some(api)) => {
                let url = format!("{api}{target}");
                let r = if method == "POST" {
                    crate::support::request("POST", &url, &[("content-type", &ctype)], Some(&body))
                } else {
                    crate::support::request("GET", &url, &[("accept", "application/json")], None)
                };
                let ct = r.header("content-type").unwrap_or("application/json").to_string();
                (format!("{} Forwarded", r.status), ct, r.body)
            }
            (Mode::Down, _) => (
                "503 Service Unavailable".into(),
                "application/json".into(),
                br#"{"error":{"code":"unavailable","message":"deploy in progress"}}"#.to_vec(),
            ),
            _ => ("404 Not Found".into(), "text/html".into(), b"<!doctype html><title>Not found</title>".to_vec()),
        }
    } else {
        let rel = percent_decode(path.trim_start_matches('/'));
        let mut file: PathBuf = site.join(if rel.is_empty() { "index.html".into() } else { rel });
        if file.is_dir() {
            file = file.join("index.html");
        }
        let inside = file.components().all(|c| !matches!(c, std::path::Component::ParentDir));
        match std::fs::read(&file) {
            Ok(b) if inside => ("200 OK".into(), content_type(&file).into(), b),
            _ => ("404 Not Found".into(), "text/html".into(), b"<!doctype html><title>Not found</title>".to_vec()),
        }
    };
    state.lock().unwrap().log.push((path.to_string(), bytes.len()));
    respond(&mut conn, &status, &ctype_out, &bytes)
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}
