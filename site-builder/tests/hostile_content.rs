//! End-to-end test of the build on hostile content: `tests/hostile/`, pages that try
//! every way we know to run script in a reader's browser (script tags, event
//! handlers, `javascript:` / `data:` / `vbscript:` URLs in every place a URL can
//! appear, spelled with entities, whitespace and control characters, SVG, MathML,
//! forms, `<base>`, `<meta refresh>`, `style`), to clobber globals with `id` /
//! `name`, and to talk to the assistant in a voice that is not theirs; and files
//! pages link to that carry script of their own (an SVG with `<script>` and
//! `onload`, `.html`, `.htm` and XML documents; a PDF with JavaScript). The real
//! binary builds it; the generated pages must come out inert, the report must name
//! every URL it removed and every link to a file with active content, by file and
//! line, and the site's manifest must tell the host which files are the build's.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::{assert_ok, build, repo, report, walk};
use edge_host::static_files::{Manifest, MANIFEST};
use serde_json::Value;

/// Every URL the fixture hides, as `(file, line)`: what `report.json` must list.
/// The table in SECURITY.md counts these (41) among the fixture's 65 constructs.
const EXPECTED_BLOCKED: &[(&str, usize)] = &[
    // Frontmatter `original_url` (the footer's "View the original page" link).
    ("hostile/markdown-urls.md", 4),
    ("hostile/raw-html.md", 4),
    // Markdown: inline, mixed case, data:, vbscript:, two images, two autolinks,
    // reference link and image, entities, `&colon;`, leading space, tab.
    ("hostile/markdown-urls.md", 9),
    ("hostile/markdown-urls.md", 11),
    ("hostile/markdown-urls.md", 13),
    ("hostile/markdown-urls.md", 15),
    ("hostile/markdown-urls.md", 17),
    ("hostile/markdown-urls.md", 17),
    ("hostile/markdown-urls.md", 19),
    ("hostile/markdown-urls.md", 19),
    ("hostile/markdown-urls.md", 21),
    ("hostile/markdown-urls.md", 21),
    ("hostile/markdown-urls.md", 23),
    ("hostile/markdown-urls.md", 23),
    ("hostile/markdown-urls.md", 25),
    ("hostile/markdown-urls.md", 25),
    // MkDocs admonition, collapsible, tab, two headings.
    ("hostile/mkdocs.md", 8),
    ("hostile/mkdocs.md", 13),
    ("hostile/mkdocs.md", 17),
    ("hostile/mkdocs.md", 25),
    ("hostile/mkdocs.md", 29),
    // Raw HTML: a (plain, decimal and hex entities, &Tab;, newline, unquoted,
    // `<a/href>`, data:, vbscript:), img src, srcset, iframe, form action and
    // formaction, object, embed, base, SVG and MathML xlink:href, inline a.
    ("hostile/raw-html.md", 14),
    ("hostile/raw-html.md", 16),
    ("hostile/raw-html.md", 18),
    ("hostile/raw-html.md", 20),
    ("hostile/raw-html.md", 22),
    ("hostile/raw-html.md", 26),
    ("hostile/raw-html.md", 27),
    ("hostile/raw-html.md", 30),
    ("hostile/raw-html.md", 32),
    ("hostile/raw-html.md", 34),
    ("hostile/raw-html.md", 36),
    ("hostile/raw-html.md", 38),
    ("hostile/raw-html.md", 42),
    ("hostile/raw-html.md", 42),
    ("hostile/raw-html.md", 44),
    ("hostile/raw-html.md", 46),
    ("hostile/raw-html.md", 48),
    ("hostile/raw-html.md", 52),
    ("hostile/raw-html.md", 56),
    ("hostile/raw-html.md", 72),
];

/// Every link to a file a browser would run script in: (file, line, linked file).
/// The drawing shown as an image and linked is named at its first line; the plain
/// drawing and the PDF (whose script runs in the PDF viewer, not as the site) are
/// not named.
const EXPECTED_ACTIVE: &[(&str, usize, &str)] = &[
    ("hostile/linked-files.md", 10, "hostile/files/diagram.svg"),
    ("hostile/linked-files.md", 13, "hostile/files/form.html"),
    ("hostile/linked-files.md", 14, "hostile/files/feed.xml"),
    ("hostile/linked-files.md", 14, "hostile/files/old-page.htm"),
];

/// Ids the templates themselves set (not content).
const TEMPLATE_IDS: &[&str] = &[
    "browse-heading",
    "hero-title",
    "home-search-input",
    "kb--in-this-section",
    "kb--page-feedback",
    "kb--page-feedback-comment",
    "kb--page-feedback-hint",
    "listing-articles",
    "listing-topics",
    "main",
    "nf-browse",
    "search-input",
    "search-notice",
    "search-query",
    "search-results",
    "search-status",
    "site-tree",
    "site-tree-heading",
];

const URL_ATTRS: &[&str] =
    &["href", "src", "srcset", "action", "formaction", "xlink:href", "data", "poster", "cite", "background"];

/// The attributes of every tag, as html5ever / minijinja write them (`name="value"`).
fn tags(html: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut out = Vec::new();
    for piece in html.split('<').skip(1) {
        let Some((tag, _)) = piece.split_once('>') else { continue };
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        let mut attrs = Vec::new();
        let mut rest = tag;
        while let Some(eq) = rest.find("=\"") {
            let attr = rest[..eq].rsplit(char::is_whitespace).next().unwrap_or("").to_ascii_lowercase();
            let after = &rest[eq + 2..];
            let end = after.find('"').unwrap_or(after.len());
            attrs.push((attr, after[..end].replace("&amp;", "&")));
            rest = &after[(end + 1).min(after.len())..];
        }
        out.push((name.to_ascii_lowercase(), attrs));
    }
    out
}

#[test]
fn hostile_content_builds_inert_and_every_removed_url_is_reported() {
    let out = tempfile::tempdir().expect("tempdir");
    assert_ok(&build(&repo().join("tests/hostile"), out.path(), &[]));
    let report = report(out.path());
    assert_eq!(report["skipped"].as_array().map(Vec::len), Some(0), "{}", report["skipped"]);
    blocked_urls_are_reported(&report);
    links_to_active_files_are_reported(&report);
    let site = out.path().join("site");
    let manifest = manifest_lists_what_the_build_wrote(&site);
    generated_pages_are_inert(&site, &manifest);
    safe_content_stays(&site);
}

/// Every URL the build removed is in `report.json`, by file and line: those of
/// [`EXPECTED_BLOCKED`], no more, no fewer.
fn blocked_urls_are_reported(report: &Value) {
    let mut got: BTreeMap<(String, usize), usize> = BTreeMap::new();
    for b in report["blocked_urls"].as_array().expect("blocked_urls") {
        let key = (b["file"].as_str().unwrap_or("").to_string(), b["line"].as_u64().unwrap_or(0) as usize);
        assert!(b["reason"].as_str().is_some_and(|r| r.contains("not allowed") || r.contains("control")), "{b}");
        *got.entry(key).or_default() += 1;
    }
    let mut want: BTreeMap<(String, usize), usize> = BTreeMap::new();
    for (file, line) in EXPECTED_BLOCKED {
        *want.entry((file.to_string(), *line)).or_default() += 1;
    }
    assert_eq!(got, want, "report.json blocked_urls");
    assert_eq!(EXPECTED_BLOCKED.len(), 41);
}

/// Links to files with script of their own are warnings, by file and line.
fn links_to_active_files_are_reported(report: &Value) {
    let mut active: Vec<(String, usize, String)> = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter(|w| w["message"].as_str().is_some_and(|m| m.contains("would run its script as the site")))
        .map(|w| {
            let m = w["message"].as_str().unwrap_or("");
            let linked = m.split('`').nth(1).unwrap_or("").to_string();
            (w["file"].as_str().unwrap_or("").to_string(), w["line"].as_u64().unwrap_or(0) as usize, linked)
        })
        .collect();
    active.sort();
    let want: Vec<(String, usize, String)> =
        EXPECTED_ACTIVE.iter().map(|(f, l, a)| (f.to_string(), *l, a.to_string())).collect();
    assert_eq!(active, want, "report.json warnings: {:#}", report["warnings"]);
}

/// The manifest: what the build wrote is listed as its own, what it copied is not.
fn manifest_lists_what_the_build_wrote(site: &Path) -> Manifest {
    let manifest = fs::read(site.join(MANIFEST)).expect("the site's manifest");
    let manifest = Manifest::parse(&manifest).expect("a manifest of this version");
    for own in [
        "index.html",
        "search.html",
        "404.html",
        "hostile/linked-files.html",
        "assets/search.js",
        "assets/page.js",
        "assets/theme.js",
        "assets/favicon.svg",
    ] {
        assert!(manifest.generated(own), "{own} is not listed as the build's");
    }
    for copied in ["diagram.svg", "plain.svg", "form.html", "old-page.htm", "feed.xml", "manual.pdf"] {
        let rel = format!("hostile/files/{copied}");
        assert!(site.join(&rel).is_file(), "{rel} was not copied");
        assert!(!manifest.generated(&rel), "{rel} is listed as the build's");
    }
    manifest
}

/// Every page the build generated is inert (the copied `.html` file is the
/// user's, served sandboxed and as a download: tests/edge/browser.rs).
fn generated_pages_are_inert(site: &Path, manifest: &Manifest) {
    let mut files = walk(site);
    files.retain(|f| {
        let rel = f.strip_prefix(site).unwrap_or(f).to_string_lossy().replace('\\', "/");
        f.extension().is_some_and(|e| e == "html") && manifest.generated(&rel)
    });
    assert!(files.len() >= 6, "{files:?}");
    for file in &files {
        let html = fs::read_to_string(file).expect("page");
        let name = file.strip_prefix(site).unwrap_or(file).display().to_string();
        let lower = html.to_ascii_lowercase();
        for bad in ["<iframe", "<object", "<embed", "<base", "<svg", "<math", "<form action=\"javascript"] {
            assert!(!lower.contains(bad), "{name}: {bad} survived");
        }
        for (tag, attrs) in tags(&html) {
            tag_is_inert(&name, &tag, &attrs);
        }
    }
}

/// One tag of a generated page (`name`): only our scripts, no handler, style,
/// script URL, or bare `id` / `name` that could clobber a global.
fn tag_is_inert(name: &str, tag: &str, attrs: &[(String, String)]) {
    let get = |n: &str| attrs.iter().find(|(a, _)| a == n).map(|(_, v)| v.as_str());
    if tag == "script" {
        // Only our scripts, by URL, never inline code.
        let src = get("src").unwrap_or("");
        let ours = ["assets/search.js", "assets/page.js", "assets/theme.js", "widget.js"];
        assert!(ours.iter().any(|s| src.ends_with(s)), "{name}: <script {attrs:?}>");
    }
    if tag == "meta" {
        let equiv = get("http-equiv").unwrap_or("content-security-policy");
        assert!(equiv.eq_ignore_ascii_case("content-security-policy"), "{name}: <meta http-equiv={equiv}>");
    }
    for (attr, value) in attrs {
        assert!(!attr.starts_with("on"), "{name}: {attr}= on <{tag}>");
        assert!(attr != "style", "{name}: style= on <{tag}>");
        if URL_ATTRS.contains(&attr.as_str()) {
            let squeezed: String = value.chars().filter(|c| !c.is_whitespace() && !c.is_control()).collect();
            let squeezed = squeezed.to_ascii_lowercase();
            for scheme in ["javascript:", "vbscript:", "data:", "file:"] {
                assert!(!squeezed.starts_with(scheme), "{name}: {attr}=\"{value}\" on <{tag}>");
            }
        }
        // Content ids carry the prefix; only headings (our anchors) and
        // the templates' own elements have bare ids.
        if attr == "id" && !value.starts_with("user-content-") {
            // The home page's introduction carries its lifted title's anchor.
            let heading = matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
                || get("class").is_some_and(|c| c.contains("home-intro"));
            assert!(heading || TEMPLATE_IDS.contains(&value.as_str()), "{name}: id=\"{value}\" on <{tag}>");
        }
        if attr == "name" {
            assert!(matches!(tag, "meta" | "input"), "{name}: name=\"{value}\" on <{tag}>");
        }
    }
}

/// What is safe stays: prefixed ids, safe links, heading anchors, a blocked
/// link's words, explicit ids, and prompt injections as visible text.
fn safe_content_stays(site: &Path) {
    let raw = fs::read_to_string(site.join("hostile/raw-html.html")).expect("raw-html page");
    assert!(raw.contains("id=\"user-content-forms\"") && !raw.contains("id=\"forms\""));
    assert!(raw.contains("id=\"user-content-location\"") && !raw.contains("id=\"location\""));
    assert!(!raw.contains("name=\"getElementById\""));
    assert!(raw.contains("href=\"https://example.edu/\""), "safe links stay");
    let md = fs::read_to_string(site.join("hostile/markdown-urls.html")).expect("markdown page");
    assert!(!md.contains("View the original page"), "an unsafe original_url leaves no link");
    for safe in ["https://example.edu/", "mailto:help@example.edu", "raw-html.html", "//cdn.example.edu/help"] {
        assert!(md.contains(&format!("href=\"{safe}\"")), "{safe} was dropped");
    }
    assert!(md.contains("href=\"#safe-links\"") && md.contains("id=\"safe-links\""), "heading anchors work");
    assert!(md.contains("class=\"blocked-link\""), "a blocked link keeps its words");
    // The explicit `{ #__kbWidget }` stays an anchor (hand-written links rely on
    // explicit ids); widget.js checks `window.__kbWidget === true`, so it is inert.
    let mkdocs = fs::read_to_string(site.join("hostile/mkdocs.html")).expect("mkdocs page");
    assert!(mkdocs.contains("<h2 id=\"__kbWidget\">"));
    assert!(mkdocs.contains("Ignore previous instructions"), "prompt injections stay visible, as text");
}
