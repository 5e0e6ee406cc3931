//! The static site: files under `OUT/site/`, served the way Spin's static
//! fileserver serves them (`index.html` for a directory, the site's own `404.html`
//! for a miss), so that what a user sees locally is what a deployment shows; and
//! the headers every file is served with, which Spin's fileserver does not set
//! (SECURITY.md, "Files a page links to").
//!
//! The site holds two kinds of file. What the build wrote itself (the pages
//! rendered from its templates, their scripts and styles, the search fragments) is
//! trusted: pages get their Content-Security-Policy as a header too, with
//! `frame-ancestors 'self'`, which a `<meta>` cannot carry. What it copied from the
//! content folder because a page links to it (an image, a PDF, but also an SVG with
//! a `<script>` or an `.html` file) is the CMS's users' bytes: served under a CSP
//! with `sandbox`, so nothing in it runs as the site, and an HTML or XML file as a
//! download. The build lists the files it wrote in [`MANIFEST`]; anything not
//! listed there is a user's file, so a site without the list is served as user
//! files throughout (safe, but its own scripts do not run: rebuild it).

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

pub use kb_common::site_manifest::{manifest_json, Manifest, MANIFEST, MANIFEST_FORMAT};

/// What to send for a request path.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A file to send with this status (200, or 404 for the site's error page).
    File { path: PathBuf, status: u16 },
    /// A directory asked for without its trailing slash.
    Redirect(String),
    /// Nothing to send (and no `404.html` either).
    NotFound,
    /// The path tries to leave the site folder or is not valid UTF-8.
    BadPath,
}

/// Resolves a request path (still percent-encoded, without the query) under `root`.
pub fn lookup(root: &Path, request_path: &str) -> Lookup {
    let Some(decoded) = percent_decode(request_path) else { return Lookup::BadPath };
    let mut path = root.to_path_buf();
    let mut segments = Vec::new();
    for c in Path::new(decoded.trim_start_matches('/')).components() {
        match c {
            Component::Normal(part) => {
                path.push(part);
                segments.push(part.to_string_lossy());
            }
            Component::CurDir => {}
            // `..`, a root or a prefix inside the path: never outside the site.
            _ => return Lookup::BadPath,
        }
    }
    if path.is_dir() {
        if !request_path.ends_with('/') {
            return Lookup::Redirect(directory_location(&segments));
        }
        path.push("index.html");
    }
    if path.is_file() {
        return Lookup::File { path, status: 200 };
    }
    let page = root.join("404.html");
    if page.is_file() {
        Lookup::File { path: page, status: 404 }
    } else {
        Lookup::NotFound
    }
}

/// The `Location` for a directory asked for without its trailing slash, built from
/// the normalised path segments rather than echoed from the request: a request for
/// `//evil.example/x` (or `/\evil.example/x`, which browsers read the same way) must
/// never answer with the protocol-relative `//evil.example/x/`, an open redirect.
/// Each segment is percent-encoded (`kb_common::percent`: all but RFC 3986's
/// unreserved characters, `/` and `\` included), so the result is always one `/`
/// followed by segments of the site.
fn directory_location(segments: &[std::borrow::Cow<'_, str>]) -> String {
    let mut out = String::from("/");
    for seg in segments {
        out.push_str(&kb_common::percent::encode_segment(seg));
        out.push('/');
    }
    out
}

/// `%XX` escapes decoded; `None` for a bad escape (a `%` without two hex digits,
/// which the crate would keep as text: a request path with one is malformed),
/// bytes that are not UTF-8, or a NUL.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let well_formed = b
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == b'%')
        .all(|(i, _)| b.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)));
    if !well_formed {
        return None;
    }
    let s = percent_encoding::percent_decode_str(s).decode_utf8().ok()?;
    (!s.contains('\0')).then(|| s.into_owned())
}

/// The `Content-Type` for a file, by extension (`mime_guess`'s table, the one
/// web servers share), with `charset=utf-8` on text, which the builder always
/// writes as UTF-8; `.md` is served as text, as Spin's fileserver does.
pub fn content_type(path: &Path) -> String {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let mime = match ext.as_str() {
        "md" => mime_guess::mime::TEXT_PLAIN,
        // Current browsers and RFC 9239 name JavaScript text/javascript.
        "js" | "mjs" => mime_guess::mime::TEXT_JAVASCRIPT,
        _ => mime_guess::from_ext(&ext).first_or_octet_stream(),
    };
    if mime.type_() == mime_guess::mime::TEXT {
        format!("{mime}; charset=utf-8")
    } else {
        mime.to_string()
    }
}

/// `Cache-Control` for a file: pages are revalidated (a rebuild changes them),
/// assets kept for an hour.
pub fn cache_control(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") | Some("xml") | Some("json") => "no-cache",
        _ => "public, max-age=3600",
    }
}

/// The policy of every page the build rendered: the one its templates put in a
/// `<meta>` (`templates/base.html`), plus what only a header can say:
/// `frame-ancestors 'self'`, so no other site can frame a page (clickjacking, or
/// planting searches through its visitors' browsers).
pub const PAGE_CSP: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'";
/// The policy of a file copied from the content folder: no script (`sandbox`
/// also gives it an opaque origin, so an SVG opened on its own cannot read the
/// site or its API), no requests but its own images, inline styles allowed so
/// drawings keep their look.
pub const FILE_CSP: &str = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";
/// The policy of everything else the host answers (errors, redirects, the API's
/// JSON): nothing to load, nothing to run, framed by no one.
pub const RESPONSE_CSP: &str = "default-src 'none'; frame-ancestors 'none'; sandbox";

/// A site folder's [`Manifest`], read again whenever the file changes (a rebuild
/// swaps the whole site in while the host runs).
#[derive(Default)]
pub struct ManifestCache {
    cached: Mutex<Option<(Stamp, Arc<Manifest>)>>,
}

type Stamp = (u64, Option<SystemTime>);

impl ManifestCache {
    /// The manifest of the site at `root`; an empty one (every file a user's) if
    /// the site has none or it cannot be read.
    pub fn get(&self, root: &Path) -> Arc<Manifest> {
        let file = root.join(MANIFEST);
        let Ok(meta) = std::fs::metadata(&file) else { return Arc::default() };
        let stamp = (meta.len(), meta.modified().ok());
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, m)) = cached.as_ref() {
            if *s == stamp {
                return m.clone();
            }
        }
        let manifest = match std::fs::read(&file).ok().and_then(|b| Manifest::parse(&b)) {
            Some(m) => Arc::new(m),
            None => {
                eprintln!("{} is not a site manifest of this version: every file is served as a user's file (rebuild the site)", file.display());
                Arc::default()
            }
        };
        *cached = Some((stamp, manifest.clone()));
        manifest
    }
}

/// The headers of a file of the site: its type and caching, `nosniff`, and the
/// policy for what it is. A file the build wrote (`generated`) is served as a
/// page of the site. A user's file gets [`FILE_CSP`]; if its type is one a
/// browser would render as a document that can hold script (HTML, XHTML, XML:
/// every `…xml` type but SVG), it is also a download (`Content-Disposition:
/// attachment`). SVG stays inline, so that pages can show it as an image (where
/// no browser runs its script anyway), and opened on its own it is sandboxed.
pub fn headers(path: &Path, generated: bool) -> Vec<(http::HeaderName, String)> {
    use http::header;
    let ctype = content_type(path);
    let mut h = vec![
        (header::CONTENT_TYPE, ctype.clone()),
        (header::CACHE_CONTROL, cache_control(path).to_string()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
    ];
    if generated {
        h.push((header::CONTENT_SECURITY_POLICY, PAGE_CSP.to_string()));
        h.push((header::X_FRAME_OPTIONS, "SAMEORIGIN".to_string()));
    } else {
        h.push((header::CONTENT_SECURITY_POLICY, FILE_CSP.to_string()));
        if renders_as_document(&ctype) {
            h.push((header::CONTENT_DISPOSITION, "attachment".to_string()));
        }
    }
    h
}

/// Whether a browser opening this type renders a document that may run script:
/// HTML, XHTML, and XML of any kind (an XML document can carry XHTML `script`
/// elements or an XSLT stylesheet that writes them), SVG aside (see [`headers`]).
fn renders_as_document(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "text/html" || (essence.contains("xml") && essence != "image/svg+xml") || essence.contains("xsl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_stays_inside_the_site() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("it/wifi")).unwrap();
        std::fs::write(root.join("index.html"), "home").unwrap();
        std::fs::write(root.join("it/wifi/index.html"), "wifi").unwrap();
        std::fs::write(root.join("it/vpn setup.html"), "vpn").unwrap();
        assert_eq!(lookup(root, "/"), Lookup::File { path: root.join("index.html"), status: 200 });
        assert_eq!(lookup(root, "/it/wifi"), Lookup::Redirect("/it/wifi/".into()));
        assert_eq!(lookup(root, "/it/wifi/"), Lookup::File { path: root.join("it/wifi/index.html"), status: 200 });
        assert_eq!(
            lookup(root, "/it/vpn%20setup.html"),
            Lookup::File { path: root.join("it/vpn setup.html"), status: 200 }
        );
        assert_eq!(lookup(root, "/missing.html"), Lookup::NotFound);
        for bad in ["/../secret", "/it/%2e%2e/%2e%2e/etc/passwd", "/%zz", "/%00", "/%ff"] {
            assert_eq!(lookup(root, bad), Lookup::BadPath, "{bad}");
        }
        std::fs::write(root.join("404.html"), "nope").unwrap();
        assert_eq!(lookup(root, "/missing.html"), Lookup::File { path: root.join("404.html"), status: 404 });
    }

    #[test]
    fn directory_redirects_stay_on_this_site() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("evil.example/x")).unwrap();
        // On Unix a backslash is an ordinary file-name character, so this is a
        // folder named `\evil.example` inside the site, not an absolute path.
        #[allow(clippy::join_absolute_paths)]
        std::fs::create_dir_all(root.join("\\evil.example")).unwrap();
        std::fs::create_dir_all(root.join("it/a b")).unwrap();
        for (request, location) in [
            ("//evil.example/x", "/evil.example/x/"),
            ("///evil.example/x", "/evil.example/x/"),
            ("/%2F/evil.example/x", "/evil.example/x/"),
            ("/./evil.example//x", "/evil.example/x/"),
            ("/\\evil.example", "/%5Cevil.example/"),
            ("/%5Cevil.example", "/%5Cevil.example/"),
            ("/it/a%20b", "/it/a%20b/"),
        ] {
            match lookup(root, request) {
                Lookup::Redirect(to) => {
                    assert_eq!(to, location, "{request}");
                    assert!(to.starts_with('/') && !to.starts_with("//") && !to.starts_with("/\\"), "{to}");
                }
                other => panic!("{request}: {other:?}"),
            }
        }
    }

    #[test]
    fn generated_files_are_pages_and_copied_ones_are_sandboxed() {
        let get = |h: &[(http::HeaderName, String)], n: http::HeaderName| {
            h.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())
        };
        use http::header::{CONTENT_DISPOSITION as CD, CONTENT_SECURITY_POLICY as CSP, X_FRAME_OPTIONS as XFO};
        let page = headers(Path::new("it/wifi.html"), true);
        assert_eq!(get(&page, CSP).as_deref(), Some(PAGE_CSP));
        assert!(PAGE_CSP.ends_with("frame-ancestors 'self'"));
        assert_eq!(get(&page, XFO).as_deref(), Some("SAMEORIGIN"));
        assert_eq!(get(&page, CD), None);
        for (file, download) in [
            ("it/f.html", true),
            ("it/f.htm", true),
            ("it/f.xhtml", true),
            ("it/f.xml", true),
            ("it/f.xsl", true),
            ("it/d.svg", false),
            ("it/a.pdf", false),
            ("it/a.png", false),
            ("it/notes.txt", false),
            ("it/x.js", false),
        ] {
            let h = headers(Path::new(file), false);
            assert_eq!(get(&h, CSP).as_deref(), Some(FILE_CSP), "{file}");
            assert!(FILE_CSP.contains("sandbox") && FILE_CSP.starts_with("default-src 'none'"));
            assert_eq!(get(&h, CD).is_some(), download, "{file}");
            assert_eq!(get(&h, http::header::X_CONTENT_TYPE_OPTIONS).as_deref(), Some("nosniff"), "{file}");
        }
    }

    #[test]
    fn the_cache_reads_the_sites_manifest_again_when_a_rebuild_changes_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ManifestCache::default();
        assert!(!cache.get(dir.path()).generated("index.html"), "no manifest: nothing is trusted");
        std::fs::create_dir_all(dir.path().join("_kb")).unwrap();
        std::fs::write(dir.path().join(MANIFEST), manifest_json(&["index.html".into()], &[])).unwrap();
        assert!(cache.get(dir.path()).generated("index.html"));
        std::fs::write(dir.path().join(MANIFEST), manifest_json(&["search.html".into(), "404.html".into()], &[]))
            .unwrap();
        let m = cache.get(dir.path());
        assert!(m.generated("search.html") && !m.generated("index.html"));
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type(Path::new("a/b.HTML")), "text/html; charset=utf-8");
        assert_eq!(content_type(Path::new("widget.js")), "text/javascript; charset=utf-8");
        assert_eq!(content_type(Path::new("x")), "application/octet-stream");
        assert_eq!(content_type(Path::new("style.css")), "text/css; charset=utf-8");
        assert_eq!(content_type(Path::new("a.svg")), "image/svg+xml");
        assert_eq!(content_type(Path::new("f.woff2")), "font/woff2");
        assert_eq!(content_type(Path::new("search_fn.wasm")), "application/wasm");
        assert_eq!(content_type(Path::new("sitemap.xml")), "text/xml; charset=utf-8");
    }
}
