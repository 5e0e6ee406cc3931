//! `site-builder ingest web` end to end, against a local help centre served from
//! this file: robots.txt, a sitemap index, MkDocs-like pages with navigation, a
//! cookie banner and links between them (and hostile ones), a page in a legacy
//! encoding, a 429 with Retry-After, an ETag, a PDF and a page on another origin.
//! The output is checked, built, and ingested again.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::{assert_ok, read, run, stderr, stdout};
use stub_http::{Request, Response, StubServer};

#[derive(Default)]
struct Seen {
    /// path → requests
    hits: HashMap<String, usize>,
    /// path → If-None-Match values received
    conditional: HashMap<String, Vec<String>>,
    user_agents: Vec<String>,
}

fn page(title: &str, body: &str, crumbs: &[(&str, &str)]) -> String {
    let crumbs: String = crumbs.iter().map(|(href, t)| format!("<li><a href=\"{href}\">{t}</a></li>")).collect();
    format!(
        r#"<!doctype html><html><head><title>{title} - Campus IT</title></head><body>
<div id="cookie-consent">We use cookies to improve this site. <button>OK</button></div>
<header><a href="/">Campus IT</a><nav><a href="/network/">Network</a> <a href="/printing/">Printing</a></nav></header>
<nav aria-label="breadcrumb"><ol>{crumbs}<li>{title}</li></ol></nav>
<main><h1>{title}</h1>{body}</main>
<footer>Campus IT · <a href="/privacy/">Privacy</a></footer></body></html>"#
    )
}

fn answer(path: &str, headers: &HashMap<String, String>, seen: &Mutex<Seen>) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = seen.lock().unwrap();
    let n = {
        let e = s.hits.entry(path.to_string()).or_default();
        *e += 1;
        *e
    };
    if let Some(v) = headers.get("if-none-match") {
        s.conditional.entry(path.to_string()).or_default().push(v.clone());
    }
    if let Some(ua) = headers.get("user-agent") {
        s.user_agents.push(ua.clone());
    }
    drop(s);
    let html =
        |body: String| (200, vec![("Content-Type".into(), "text/html; charset=utf-8".into())], body.into_bytes());
    match path {
        "/robots.txt" => (200, vec![], "User-agent: *\nDisallow: /private/\n".into()),
        "/sitemap.xml" => (
            200,
            vec![],
            // Two levels: an index of an index (and one that fails, reported).
            "<sitemapindex><sitemap><loc>BASE/sitemap-sections.xml</loc></sitemap><sitemap><loc>BASE/sitemap-gone.xml</loc></sitemap></sitemapindex>".into(),
        ),
        "/sitemap-sections.xml" => (
            200,
            vec![],
            "<sitemapindex><sitemap><loc>BASE/sitemap-pages.xml</loc></sitemap></sitemapindex>".into(),
        ),
        "/sitemap-pages.xml" => (
            200,
            vec![],
            "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">
<url><loc>BASE/</loc></url>
<url><loc>BASE/network/</loc></url>
<url><loc>BASE/network/eduroam/</loc><lastmod>2026-03-01</lastmod></url>
<url><loc>BASE/network/vpn.html</loc><lastmod>2026-02-01T08:00:00+00:00</lastmod></url>
<url><loc>BASE/network/cafe.html</loc></url>
<url><loc>BASE/private/salaries/</loc></url>
<url><loc>BASE/guide.pdf</loc></url>
<url><loc>https://elsewhere.example/page/</loc></url>
</urlset>"
                .into(),
        ),
        "/" => html(page("Campus IT help", "<p>Start with <a href=\"network/\">the network pages</a>.</p>", &[])),
        "/network/" => {
            if headers.get("if-none-match").is_some_and(|v| v == "\"net-1\"") {
                return (304, vec![], Vec::new());
            }
            let (code, mut h, body) = html(page(
                "Network",
                "<p>Wi-Fi and VPN for staff and students.</p><ul><li><a href=\"eduroam/\">Eduroam</a></li><li><a href=\"vpn.html#setup\">VPN</a></li></ul>",
                &[("/", "Home")],
            ));
            h.push(("ETag".into(), "\"net-1\"".into()));
            (code, h, body)
        }
        "/network/eduroam/" => html(page(
            "Connecting to eduroam",
            "<p>Eduroam gives you secure Wi-Fi on every campus. Off campus, use <a href=\"../vpn.html#setup\">the VPN</a>.</p>\
             <p>Still stuck? <a href=\"javascript:alert(document.cookie)\">Run the checker</a> or \
             <a href=\"data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;\">open the form</a>.</p>\
             <div class=\"admonition warning\"><p class=\"admonition-title\">Passwords</p><p>Use your university password.</p></div>\
             <h2>Steps</h2><ol><li>Open the Wi-Fi settings.</li><li>Choose eduroam.</li></ol>",
            &[("/", "Home"), ("/network/", "Network")],
        )),
        "/network/vpn.html" if n == 1 => (429, vec![("Retry-After".into(), "0".into())], "slow down".into()),
        "/network/vpn.html" => html(page(
            "VPN",
            "<p>Jump to <a href=\"#setup\">the setup</a>.</p><h2 id=\"setup\">Setup</h2><p>Install the VPN client and sign in with two-factor authentication.</p>",
            &[("/", "Home"), ("/network/", "Network")],
        )),
        // A page from before UTF-8, declared in the header: "Café Wi-Fi für Gäste".
        "/network/cafe.html" => {
            let body = page("Guest Wi-Fi", "<p>Caf\u{e9} Wi-Fi f\u{fc}r G\u{e4}ste: ask at the desk.</p>", &[]);
            let latin1: Vec<u8> = body.chars().map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?')).collect();
            (200, vec![("Content-Type".into(), "text/html; charset=ISO-8859-1".into())], latin1)
        }
        "/guide.pdf" => (200, vec![("Content-Type".into(), "application/pdf".into())], "%PDF-1.4".into()),
        _ => (404, vec![], "not found".into()),
    }
}

/// The site's answer to `req`, `BASE` in its text replaced by the site's own URL.
fn serve(req: &Request, seen: &Mutex<Seen>) -> Response {
    let headers: HashMap<String, String> = req.headers().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let (status, extra, body) = answer(req.target(), &headers, seen);
    let base = format!("http://{}", req.header("host").unwrap_or_default());
    let body = match String::from_utf8(body) {
        Ok(text) => text.replace("BASE", &base).into_bytes(),
        Err(e) => e.into_bytes(),
    };
    extra.iter().fold(Response::new(status), |r, (k, v)| r.header(k, v)).body(body)
}

/// The site, and what it saw; it stops when the server is dropped.
fn start() -> (StubServer, String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s = Arc::clone(&seen);
    let server = StubServer::start(move |req| serve(&req, &s));
    let base = server.url();
    (server, base, seen)
}

#[test]
fn a_help_centre_is_ingested_politely_and_incrementally() {
    let (_server, base, seen) = start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("content");
    let sitemap = format!("{base}/sitemap.xml");
    let ingest = || run(&["ingest", "web", "--sitemap", &sitemap, "--out", out.to_str().unwrap()]);

    let o = ingest();
    let summary = stdout(&o);
    assert!(o.status.success(), "{summary}\n{}", stderr(&o));
    assert!(summary.contains("7 pages listed: 1 disallowed by robots.txt"), "{summary}");
    assert!(summary.contains("5 written"), "{summary}");
    assert!(
        summary.contains("guide.pdf: not an HTML page (application/pdf); ingest it with `site-builder ingest pdf`"),
        "{summary}"
    );
    assert!(summary.contains("elsewhere.example/page/: on another origin"), "{summary}");
    assert!(summary.contains("1 retries"), "the 429 was retried: {summary}");
    assert!(summary.contains("sitemap-gone.xml: answered 404"), "{summary}");
    {
        let s = seen.lock().unwrap();
        assert!(!s.hits.contains_key("/private/salaries/"), "robots.txt was obeyed");
        assert!(s.user_agents.iter().all(|ua| ua.starts_with("kb-site-builder/")), "{:?}", s.user_agents);
    }

    let edu = read(&out, "network/eduroam/index.md");
    for field in [
        "title: Connecting to eduroam\n",
        "page_id: network-eduroam\n",
        "parent: Network\n",
        "path: Home / Network / Connecting to eduroam\n",
        &format!("original_url: {base}/network/eduroam/\n"),
        "last_updated: '2026-03-01'\n",
    ] {
        assert!(edu.contains(field), "{field:?} in\n{edu}");
    }
    assert!(edu.contains("\n# Connecting to eduroam\n"), "{edu}");
    assert!(edu.contains("[the VPN](../vpn.md#setup)"), "links to ingested pages point at their files: {edu}");
    assert!(edu.contains("!!! warning \"Passwords\""), "{edu}");
    assert!(edu.contains("## Steps"), "{edu}");
    // Script and data URLs keep their words and lose the link.
    assert!(edu.contains("Still stuck? Run the checker or open the form."), "{edu}");
    for hostile in ["javascript", "data:", "script", "alert"] {
        assert!(!edu.contains(hostile), "{hostile:?} in\n{edu}");
    }
    // Read in the encoding the server declared, not as broken UTF-8.
    let cafe = read(&out, "network/cafe.md");
    assert!(cafe.contains("Café Wi-Fi für Gäste: ask at the desk."), "{cafe}");
    for chrome in ["cookies", "Privacy", "Printing", "Campus IT"] {
        assert!(!edu.contains(chrome), "{chrome:?} in\n{edu}");
    }
    assert!(read(&out, "network/index.md").contains("[Eduroam](eduroam/index.md)"));
    assert!(read(&out, "index.md").contains("[the network pages](network/index.md)"));
    let vpn = read(&out, "network/vpn.md");
    assert!(vpn.contains("two-factor authentication"), "{vpn}");
    assert!(vpn.contains("[the setup](#setup)"), "a link within the page stays an anchor: {vpn}");
    assert!(!out.join("private").exists());

    // The pages build as any content folder does, with no broken link.
    let site = dir.path().join("site");
    let o =
        run(&["build", "--content", out.to_str().unwrap(), "--out", site.to_str().unwrap(), "--no-index", "--strict"]);
    assert_ok(&o);

    // Again: the pages with the same lastmod are not requested, the one with an ETag
    // is asked conditionally and answers 304, nothing is rewritten.
    let before = std::fs::metadata(out.join("network/eduroam/index.md")).unwrap().modified().unwrap();
    let o = ingest();
    let summary = stdout(&o);
    assert!(o.status.success(), "{summary}");
    assert!(summary.contains("0 written"), "{summary}");
    let s = seen.lock().unwrap();
    assert_eq!(s.hits["/network/eduroam/"], 1, "unchanged lastmod: not requested again");
    assert_eq!(s.conditional.get("/network/").map(Vec::len), Some(1), "asked with If-None-Match");
    assert_eq!(std::fs::metadata(out.join("network/eduroam/index.md")).unwrap().modified().unwrap(), before);
}

#[test]
fn excluded_prefixes_are_left_out_and_links_to_them_stay_absolute() {
    let (_server, base, seen) = start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("content");
    let sitemap = format!("{base}/sitemap.xml");
    let (include, exclude) = (format!("{base}/network/"), format!("{base}/network/vpn"));
    let o = run(&[
        "ingest",
        "web",
        "--sitemap",
        &sitemap,
        "--include",
        &include,
        "--exclude",
        &exclude,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let summary = stdout(&o);
    assert!(o.status.success(), "{summary}\n{}", stderr(&o));
    assert!(summary.contains("3 pages listed"), "the root, vpn, the PDF and the private page are out: {summary}");
    assert!(!out.join("network/vpn.md").exists() && !out.join("index.md").exists());
    assert!(!seen.lock().unwrap().hits.contains_key("/network/vpn.html"), "an excluded page is not requested");
    let edu = read(&out, "network/eduroam/index.md");
    assert!(edu.contains(&format!("[the VPN]({base}/network/vpn.html#setup)")), "{edu}");
}

#[test]
fn a_wrong_sitemap_url_is_refused_with_the_reason() {
    let o = run(&["ingest", "web", "--sitemap", "help.example.edu/sitemap.xml", "--out", "/nonexistent/x"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("--sitemap help.example.edu/sitemap.xml") && err.contains("full http(s) URL"), "{err}");
}
