//! The static site: files under `OUT/site/`, served the way Spin's static
//! fileserver serves them (`index.html` for a directory, the site's own `404.html`
//! for a miss), so that what a user sees locally is what a deployment shows.

use std::path::{Component, Path, PathBuf};

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
