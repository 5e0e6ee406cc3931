//! Browser tests: tests/browser/check.mjs drives Debian's Chromium with
//! Playwright against the host (the real component over the demo index), a
//! scripted LLM, and a foreign page (another origin, hostile CSS) that embeds the
//! widget with its one script tag; and the hostile-content knowledge base
//! (tests/hostile) browsed, searched and answered with Chromium listening for
//! dialogs, script and foreign requests; the files its pages link to (SVG, HTML,
//! XML and PDF with script of their own) opened on their own, and its search page
//! framed by another site. Screenshots go to `target/browser-artifacts/`.
//!
//! Needs `node`, `npm ci` in tests/browser (scripts/test runs it) and Chromium
//! (`apt-get install chromium`; .ci/run installs it).

use std::path::PathBuf;
use std::process::Command;

use stub_http::{Response, StubServer};

use crate::support::llm::{answer, search, ScriptedLlm, Step};
use crate::support::{built, repo, start, start_over};

/// Serves the foreign page for any GET, on another port (another origin), until
/// dropped.
fn foreign_page(site: &str) -> StubServer {
    let html = format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Northbridge Alumni News</title>
<style>
  /* Hostile to embedded widgets: the widget must look right regardless. */
  * {{ box-sizing: content-box !important; letter-spacing: 0.2em; }}
  button {{ all: unset; background: hotpink; }}
  textarea, input {{ font-size: 40px; border: 5px dashed red; }}
  ol, li {{ list-style: none; margin: 0; padding: 0; }}
  body {{ font-family: Georgia, serif; background: #f7f3ea; margin: 3rem; color: #222; }}
</style></head>
<body>
  <h1>Alumni news</h1>
  <p>Class reunions, mentoring and the annual fund. <a href="https://example.org/">A link</a> before the widget.</p>
  <script src="{site}/widget.js" data-endpoint="{site}/api/chat" data-title="Ask Northbridge" defer></script>
</body></html>"#
    );
    StubServer::start(move |_| Response::new(200).header("content-type", "text/html; charset=utf-8").body(html.clone()))
}

fn artifacts() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().join("browser-artifacts")
}

/// Runs one scenario of check.mjs against `site` (and a foreign page embedding it).
fn run(scenario: &str, site: &str) {
    run_with(scenario, site, &[]);
}

/// [`run`] with more environment for the scenario.
fn run_with(scenario: &str, site: &str, env: &[(&str, String)]) {
    let dir = repo().join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "tests/browser has no node_modules: run `npm ci` there (scripts/test does)"
    );
    let chromium = std::env::var("KB_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(std::path::Path::new(&chromium).exists(), "{chromium} is missing: apt-get install chromium (.ci/run does)");
    let foreign = foreign_page(site);
    let o = Command::new("node")
        .arg("check.mjs")
        .arg(scenario)
        .current_dir(&dir)
        .env("KB_SITE", site)
        .env("KB_FOREIGN", format!("{}/alumni.html", foreign.url()))
        .env("KB_ARTIFACTS", artifacts())
        .env("KB_CHROMIUM", chromium)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    // What the scenario measured (bytes, latencies), for `--nocapture`.
    print!("{}", String::from_utf8_lossy(&o.stdout));
    assert!(
        o.status.success(),
        "{scenario} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn with_llm(steps: Vec<Step>) -> (ScriptedLlm, edge_host::Running) {
    // 40 ms between streamed pieces: slow enough to watch the answer grow.
    let llm = ScriptedLlm::start_paced(steps, std::time::Duration::from_millis(40));
    let url = llm.base_url();
    let host = start(&[("llm_base_url", &url), ("llm_model", "scripted"), ("llm_timeout_secs", "5")]);
    (llm, host)
}

/// axe-core (WCAG 2.1 A and AA) on an article, the home page, results, no
/// results, the dropdown and the widget's answer, light and dark: no violation.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn the_reader_pages_have_no_axe_violations() {
    let host = start(&[]);
    run("a11y", &host.url());
}

/// "Was this page helpful?" in Chromium against the real component: No, a
/// comment, Send, the thanks (light and dark), Yes by keyboard; and what was
/// said is in the insights the team reads, the comment as written.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn readers_rate_a_page_and_the_team_sees_it() {
    let token = "page-feedback-insights-token-0001";
    let host = start(&[("insights_token", token)]);
    run_with("page-feedback", &host.url(), &[("KB_TOKEN", token.into())]);
    let r = crate::support::request(
        "GET",
        &format!("{}/api/insights?since=1d", host.url()),
        &[("authorization", &format!("Bearer {token}"))],
        None,
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let rated = r.json()["pages_rated"].clone();
    let permit = rated
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["url"] == "campus/parking/buying-a-parking-permit.html")
        .unwrap_or_else(|| panic!("the permit page is rated: {rated:#}"));
    assert_eq!((permit["yes"].as_u64(), permit["no"].as_u64()), (Some(0), Some(1)));
    assert_eq!(permit["comments"][0]["comment"], "The light page lacks the fee for one semester <b>really</b>");
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn site_search_as_you_type_in_chromium() {
    let host = start(&[]);
    run("search", &host.url());
}

/// A German page of a site in several languages searches German, falls back to
/// every language when German has no match (the real API), and offers every
/// language; a one-language site sends no `lang`.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn site_search_in_the_readers_language_in_chromium() {
    let host = start(&[]);
    run("languages", &host.url());
}

/// The demo site on a plain static server: with no `/api` at all, with `/api`
/// answering 503 and then coming back, and with the chat away (the widget offers
/// sections); every byte the server sends is counted against the budgets.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn browser_search_on_a_static_host_and_when_the_api_is_away() {
    let host = start(&[]);
    let site = crate::support::demo().dist.join("site");
    assert!(
        site.join("_search/search.json").is_file(),
        "the demo site has no browser search: build the engine first (scripts/build-search-web; scripts/test does)"
    );
    let front = crate::static_host::serve(&site, Some(host.url()));
    run("static", &front.url());
}

/// A German and English help centre on a plain static server (no `/api`):
/// the browser engine that reads German searches the reader's language
/// (German stems: "Druckern" finds "Drucken"), says when it has no match and
/// shows the English page instead, and searches every language on request.
#[test]
#[ignore = "needs the model, the browser engines and Chromium: scripts/test runs it"]
fn a_site_in_two_languages_searches_in_the_browser_in_chromium() {
    let dist = crate::support::two_languages();
    let site = dist.join("site");
    let pointer = std::fs::read_to_string(site.join("_search/search.json")).unwrap();
    assert!(pointer.contains("search_web_languages"), "{pointer}");
    let front = crate::static_host::serve(&site, None);
    run("languages-static", &front.url());
}

/// An English help desk with one Finnish page, on a plain static server: the
/// English pages' readers load the English engine; the Finnish page's reader
/// the engine that reads Finnish, so that a Finnish word ("salasanasi") is
/// read by its Finnish stem and finds the page, as the API's search does.
#[test]
#[ignore = "needs the model, the browser engines and Chromium: scripts/test runs it"]
fn a_page_in_a_rare_language_is_searched_in_its_language_in_chromium() {
    let site = crate::support::rare_language().join("site");
    let pointer: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("_search/search.json")).unwrap()).unwrap();
    assert!(pointer["engine"].as_str().unwrap().starts_with("search_web.js?v="), "{pointer}");
    assert_eq!(pointer["languages"]["for"], serde_json::json!(["fi"]), "{pointer}");
    assert!(site.join("_search/search_web_languages_bg.wasm.gz").is_file());
    let front = crate::static_host::serve(&site, None);
    run("rare-language-static", &front.url());
}

/// The demo built with `--browser-semantic` on a plain static server: the first
/// query answers by words while the query encoder and the vectors load in the
/// background, then settled queries rank by meaning, as the API's `convex` does;
/// a browser without relaxed SIMD keeps to words and says so.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn semantic_search_in_the_browser() {
    let host = start(&[]);
    let dist = crate::support::target_dir().join("edge-tests/content-semantic");
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["build", "--quiet", "--browser-semantic", "--content", "content", "--out"])
        .arg(&dist)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "semantic build failed:\n{}", String::from_utf8_lossy(&o.stderr));
    let site = dist.join("site");
    let pointer: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("_search/search.json")).unwrap()).unwrap();
    assert!(pointer["semantic"]["bytes"].as_u64().unwrap() > 10_000_000, "{pointer}");
    // A reader describing phishing without its name: BM25 ranks another page
    // first (advising: "confirm", "details"), the fused ranking the phishing page.
    let (question, page) = ("an email asked me to confirm my login details", "phishing");
    let body =
        crate::support::get(&format!("{}/api/search?mode=bm25&k=1&q={}", host.url(), urlencode(question))).text();
    assert!(!body.contains(page), "BM25 alone already finds {page}: pick a harder question ({body})");
    let front = crate::static_host::serve(&site, Some(host.url()));
    run_with("semantic", &front.url(), &[("KB_MEANING", question.into()), ("KB_MEANING_PAGE", page.into())]);
}

fn urlencode(s: &str) -> String {
    s.bytes().map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") }).collect()
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn widget_on_a_foreign_page_streams_cites_and_abstains() {
    let (_llm, host) = with_llm(vec![
        // Light theme: a cited answer, then an abstention.
        search("parking permit"),
        answer("You buy a permit in the **parking portal**: sign in and select Purchase permit [1]."),
        search("pizza restaurant"),
        answer("NO_ANSWER: The knowledge base does not cover restaurants."),
        // Dark theme.
        search("parking permit"),
        answer("You buy a permit in the **parking portal**: sign in and select Purchase permit [1]."),
    ]);
    run("widget", &host.url());
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn widget_works_by_keyboard_alone() {
    let (_llm, host) =
        with_llm(vec![search("parking permit"), answer("Sign in to the parking portal and buy it there [1].")]);
    run("keyboard", &host.url());
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn a_hostile_answer_stays_inert() {
    let (_llm, host) = with_llm(vec![
        search("vpn"),
        answer("Try this: <img src=x onerror=\"window.__pwned=1\"> and <script>window.__pwned=2</script> [1]"),
    ]);
    run("hostile", &host.url());
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn without_an_llm_the_widget_labels_extractive_answers() {
    let host = start(&[]);
    run("extractive", &host.url());
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn hostile_content_is_inert_when_browsed_searched_and_answered() {
    // tests/hostile: script tags, event handlers, script URLs in every place a URL
    // can go, SVG, CSS, prompt injections; built into a site and an index, with
    // the function compiled over that index.
    let kb = built("tests/hostile");
    let site = kb.dist.join("site");
    // The pages the build generated (a linked `.html` file is the user's: served
    // as a download, and opened in `linked_files_run_no_script_as_the_site`).
    let manifest = std::fs::read(site.join(edge_host::static_files::MANIFEST)).expect("the site's manifest");
    let manifest = edge_host::static_files::Manifest::parse(&manifest).expect("a manifest of this version");
    let mut pages: Vec<String> = walk_html(&site)
        .iter()
        .map(|p| p.strip_prefix(&site).unwrap().to_string_lossy().replace('\\', "/"))
        .filter(|p| manifest.generated(p))
        .collect();
    pages.sort();
    assert!(pages.len() >= 5, "{pages:?}");
    // The model repeats what the pages say, and adds its own attempts.
    let llm = ScriptedLlm::start_paced(
        vec![
            search("ignore previous instructions"),
            answer(concat!(
                "Per the page [1]: <img src=x onerror=\"alert('llm img')\"> <script>alert('llm script')</script> ",
                "[click here](javascript:alert('llm link')) [data](data:text/html,<script>alert(1)</script>) ",
                "![tracker](https://evil.example/pixel.png) <a href=\"https://evil.example/\" onclick=\"alert(2)\">x</a> ",
                "Visit https://evil.example/login to re-verify. <svg onload=alert('svg')></svg>"
            )),
        ],
        std::time::Duration::from_millis(5),
    );
    let host = start_over(&kb, &[("llm_base_url", &llm.base_url()), ("llm_model", "scripted")]);
    run_with("hostile-site", &host.url(), &[("KB_PAGES", pages.join("\n"))]);
}

/// Every file a hostile page links to, opened in Chromium on its own: an SVG with
/// `<script>` and `onload`, `.html`, `.htm` and XML documents with script, a PDF
/// with JavaScript, a plain SVG. Nothing may run as the site (no dialog, no request
/// to `/__pwned` or `/api`, the document not retitled); HTML and XML arrive as
/// downloads. And a foreign page framing `search.html?q=…` gets no page and
/// causes no search (`frame-ancestors 'self'`).
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Chromium: scripts/test runs it"]
fn linked_files_run_no_script_as_the_site() {
    let kb = built("tests/hostile");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(kb.dist.join("report.json")).unwrap()).unwrap();
    let files: Vec<String> = {
        let m: serde_json::Value = serde_json::from_slice(
            &std::fs::read(kb.dist.join("site").join(edge_host::static_files::MANIFEST)).unwrap(),
        )
        .unwrap();
        m["copied"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(files.len(), 6, "{files:?} ({})", report["site"]);
    let host = start_over(&kb, &[]);
    run_with("hostile-files", &host.url(), &[("KB_FILES", files.join("\n"))]);
}

fn walk_html(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_html(&p));
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
    out
}

/// The site's navigation and page tools in Chromium, on a plain static server
/// (no `/api`, no index: the pages alone): the demo's sidebar (the page marked,
/// sections opened by keyboard), previous / next, the code copy button, the
/// contents list following the reading, the theme button remembered across a
/// reload, the favicon, a section page listing each child once, and a phone's
/// header, menu and chat button; then a site of 18 top sections ("More" holds
/// what the row cannot) served under `/docs/`, whose 404 page keeps its styles
/// at any depth.
#[test]
#[ignore = "needs Chromium and node (tests/browser): scripts/test runs it"]
fn site_navigation_and_page_tools_in_chromium() {
    let root = crate::support::target_dir().join("edge-tests/navigation");
    let build = |content: &std::path::Path, out: &std::path::Path, extra: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
            .args(["build", "--quiet", "--no-index", "--content"])
            .arg(content)
            .arg("--out")
            .arg(out)
            .args(extra)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(o.status.success(), "build of {} failed:\n{}", content.display(), String::from_utf8_lossy(&o.stderr));
        out.join("site")
    };
    let demo = build(&repo().join("content"), &root.join("demo"), &[]);
    // Eighteen top sections of four pages each: more than the header's row
    // holds, and more than a sidebar lists whole.
    let content = root.join("wide-content");
    let _ = std::fs::remove_dir_all(&content);
    let write = |rel: &str, text: String| {
        let path = content.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("index.md", "# Wide Help\n\nEvery section of a big help centre.\n".into());
    for s in 1..=18 {
        write(&format!("s{s:02}/index.md"), format!("# Section {s:02}\n\nThe pages of section {s:02}.\n"));
        for p in 1..=4 {
            let text = format!("# Page {p} of section {s:02}\n\nWhat page {p} of section {s:02} says.\n");
            write(&format!("s{s:02}/page-{p}.md"), text);
        }
    }
    let wide = build(&content, &root.join("wide"), &["--site-url", "http://kb.example/docs/"]);
    let front = crate::static_host::serve(&demo, None);
    let wide_front = crate::static_host::serve(&wide, None);
    run_with("navigation", &front.url(), &[("KB_WIDE", wide_front.url()), ("KB_WIDE_DIR", wide.display().to_string())]);
}
