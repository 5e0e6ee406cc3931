//! End-to-end tests of `site-builder ingest confluence`: the real binary against a
//! local HTTP/1.1 server that speaks the two Confluence REST calls over a tree of 20
//! pages. The server pages children three at a time, answers 429 and 5xx the first
//! time some pages are asked for, and can be told to refuse credentials after a
//! number of bodies (an interrupted run), so retries, paging, incremental runs,
//! resuming and bad input are all exercised.

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use common::{assert_ok, read, report, run, run_with_env, stderr, stdout, walk};
use serde_json::{json, Value};
use stub_http::{Request, Response, StubServer};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/confluence");
/// The most children the server returns per listing request, whatever is asked.
const SERVER_LIMIT: usize = 3;

#[derive(Clone)]
struct FPage {
    id: String,
    title: String,
    version: u64,
    parent: Option<String>,
    body: String,
}

#[derive(Default)]
struct Srv {
    pages: Vec<FPage>,
    /// Requests for a page with its body, by page id.
    body_requests: HashMap<String, usize>,
    /// When each body request came, by page id.
    body_times: HashMap<String, Vec<std::time::Instant>>,
    /// Failures already served (each flaky request fails once).
    failed: HashSet<String>,
    /// After this many successful body answers, everything gets a 401.
    deny_after: Option<usize>,
    bodies_served: usize,
    /// When set, requests must carry `Authorization: Bearer <this>`.
    token: Option<String>,
    /// How long each body request takes to answer.
    delay: std::time::Duration,
    /// Body requests being answered now, and the most at once.
    in_flight: usize,
    max_in_flight: usize,
}

impl Srv {
    fn page(&self, id: &str) -> Option<&FPage> {
        self.pages.iter().find(|p| p.id == id)
    }
    fn total_body_requests(&self) -> usize {
        self.body_requests.values().sum()
    }
}

/// The fake Confluence; it stops when dropped.
struct Server {
    base: String,
    state: Arc<Mutex<Srv>>,
    _http: StubServer,
}

impl Server {
    fn start(pages: Vec<FPage>) -> Server {
        let state = Arc::new(Mutex::new(Srv { pages, ..Srv::default() }));
        let st = state.clone();
        let http = StubServer::start(move |req| handle(&req, &st));
        Server { base: format!("{}/wiki", http.url()), state, _http: http }
    }
    fn with<R>(&self, f: impl FnOnce(&mut Srv) -> R) -> R {
        f(&mut self.state.lock().expect("server state"))
    }
}

fn query(q: &str) -> HashMap<String, String> {
    q.split('&').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn handle(req: &Request, st: &Mutex<Srv>) -> Response {
    let target = req.target();
    let with_body = target.contains("body.storage");
    let delay = {
        let mut s = st.lock().expect("server state");
        if with_body {
            s.in_flight += 1;
            s.max_in_flight = s.max_in_flight.max(s.in_flight);
        }
        s.delay
    };
    // Outside the lock, so that slow answers overlap as a real server's do.
    std::thread::sleep(delay);
    let (status, retry_after, body) = answer(target, req.header("authorization"), st);
    if with_body {
        st.lock().expect("server state").in_flight -= 1;
    }
    let response = Response::new(status).header("content-type", "application/json").body(body);
    match retry_after {
        Some(when) => response.header("retry-after", &when),
        None => response,
    }
}

/// The status, `Retry-After` and body of the answer to `target`.
fn answer(target: &str, auth: Option<&str>, st: &Mutex<Srv>) -> (u16, Option<String>, String) {
    let mut s = st.lock().expect("server state");
    let (path, q) = target.split_once('?').unwrap_or((target, ""));
    let q = query(q);
    let Some(rest) = path.strip_prefix("/wiki/rest/api/content/") else {
        return (404, None, r#"{"message":"no such endpoint"}"#.into());
    };
    if let Some(token) = &s.token {
        if auth != Some(format!("Bearer {token}").as_str()) {
            return (401, None, r#"{"message":"unauthorized"}"#.into());
        }
    }
    if s.deny_after.is_some_and(|n| s.bodies_served >= n) {
        return (401, None, r#"{"message":"token expired"}"#.into());
    }
    if let Some(id) = rest.strip_suffix("/child/page") {
        // Flaky: the first listing of Campus answers 503.
        if id == "130" && s.failed.insert(format!("list:{id}")) {
            return (503, None, "{}".into());
        }
        let start: usize = q.get("start").and_then(|v| v.parse().ok()).unwrap_or(0);
        let limit: usize = q.get("limit").and_then(|v| v.parse().ok()).unwrap_or(25).min(SERVER_LIMIT);
        let children: Vec<&FPage> = s.pages.iter().filter(|p| p.parent.as_deref() == Some(id)).collect();
        let slice: Vec<Value> = children
            .iter()
            .skip(start)
            .take(limit)
            .map(|p| json!({"id": p.id, "type": "page", "title": p.title, "version": {"number": p.version}}))
            .collect();
        let mut links = json!({"base": "http://example.invalid/wiki", "context": "/wiki"});
        // Pages after the first of IT Services are asked for without a `next` link,
        // to exercise the "short page ends the listing" rule too.
        if start + limit < children.len() && id != "110" {
            links["next"] = json!(format!(
                "/rest/api/content/{id}/child/page?start={}&limit={limit}&expand=version",
                start + limit
            ));
        }
        let out = json!({"results": slice, "start": start, "limit": limit, "size": slice.len(), "_links": links});
        return (200, None, out.to_string());
    }
    let id = rest.to_string();
    let Some(page) = s.page(&id).cloned() else {
        return (404, None, r#"{"message":"no such page"}"#.into());
    };
    let expand = q.get("expand").cloned().unwrap_or_default();
    let with_body = expand.contains("body.storage");
    if with_body {
        *s.body_requests.entry(id.clone()).or_default() += 1;
        s.body_times.entry(id.clone()).or_default().push(std::time::Instant::now());
        // Flaky pages: the first request gets a 429 or a 5xx, some saying when to
        // come back in seconds, one with an HTTP date two seconds ahead.
        let flaky = match id.as_str() {
            "112" => Some((429, Some("0".to_string()))),
            "121" => Some((429, Some("1".to_string()))),
            "122" => Some((503, Some(httpdate::fmt_http_date(SystemTime::now() + std::time::Duration::from_secs(2))))),
            "113" | "132" => Some((500, None)),
            _ => None,
        };
        if let Some((code, extra)) = flaky {
            if s.failed.insert(format!("body:{id}")) {
                return (code, extra, r#"{"message":"try again"}"#.into());
            }
        }
        s.bodies_served += 1;
    }
    let mut ancestors = Vec::new();
    let mut p = page.parent.clone();
    while let Some(pid) = p {
        let Some(a) = s.page(&pid) else { break };
        ancestors.push(json!({"id": a.id, "title": a.title}));
        p = a.parent.clone();
    }
    ancestors.reverse();
    let mut out = json!({
        "id": page.id, "type": "page", "title": page.title,
        "version": {"number": page.version, "when": format!("2026-03-{:02}T10:15:00.000Z", page.version.min(28))},
        "ancestors": ancestors,
        "_links": {"webui": format!("/spaces/HC/pages/{}", page.id)},
    });
    if with_body {
        out["body"] = json!({"storage": {"value": page.body, "representation": "storage"}});
    }
    (200, None, out.to_string())
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(name)).expect("fixture")
}

/// The 20-page tree.
fn tree() -> Vec<FPage> {
    let generic = |title: &str, sibling: &str| {
        format!(
            "<p>How <strong>{title}</strong> works.</p><p>&nbsp;</p><ul><li>Step one</li><li>Step <em>two</em></li></ul>\
             <p>Related: <ac:link><ri:page ri:content-title=\"{sibling}\" /><ac:plain-text-link-body><![CDATA[{sibling}]]></ac:plain-text-link-body></ac:link></p>"
        )
    };
    let specs: &[(&str, &str, Option<&str>, Option<&str>)] = &[
        ("100", "Help Center", None, None),
        ("110", "IT Services", Some("100"), None),
        ("111", "Connecting to the VPN", Some("110"), Some("vpn.xml")),
        ("112", "Eduroam Wi-Fi", Some("110"), None),
        ("113", "Email on your phone", Some("110"), None),
        ("114", "Resetting your password", Some("110"), None),
        ("115", "Printing", Some("110"), None),
        ("120", "Finance", Some("100"), None),
        ("121", "Paying your bill", Some("120"), None),
        ("122", "Refunds", Some("120"), Some("refunds.xml")),
        ("123", "Payment plans", Some("120"), None),
        ("130", "Campus", Some("100"), None),
        ("131", "Parking", Some("130"), Some("parking.xml")),
        ("1311", "Buying a parking permit", Some("131"), None),
        ("1312", "Parking citations", Some("131"), None),
        ("1313", "Shuttle bus", Some("131"), None),
        ("1314", "Bikes on campus", Some("131"), None),
        ("132", "Dining", Some("130"), None),
        ("133", "Library", Some("130"), None),
        ("140", "FAQ", Some("100"), None),
    ];
    specs
        .iter()
        .map(|(id, title, parent, file)| FPage {
            id: id.to_string(),
            title: title.to_string(),
            version: 3,
            parent: parent.map(str::to_string),
            body: match file {
                Some(f) => fixture(f),
                None => generic(title, if *id == "100" { "FAQ" } else { "Help Center" }),
            },
        })
        .collect()
}

fn ingest(server: &Server, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["ingest", "confluence", "--base-url", &server.base, "--root-page", "100", "--quiet"];
    let out_s = out.to_str().expect("utf-8 path");
    args.extend(["--out", out_s]);
    args.extend(extra);
    run(&args)
}

/// Every file under `dir` (none if it is not there), relative, with its
/// modification time.
fn files(dir: &Path) -> BTreeMap<String, SystemTime> {
    if !dir.exists() {
        return BTreeMap::new();
    }
    walk(dir)
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(dir).expect("under dir").to_string_lossy().replace('\\', "/");
            (rel, p.metadata().and_then(|m| m.modified()).expect("mtime"))
        })
        .collect()
}

fn md_files(dir: &Path) -> Vec<String> {
    files(dir).into_keys().filter(|f| f.ends_with(".md")).collect()
}

fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("content");
    (t, out)
}

#[test]
#[ignore = "needs the model (scripts/fetch-model): scripts/test runs it"]
fn converts_the_tree_and_the_result_builds() {
    let server = Server::start(tree());
    let (t, out) = tempdir();
    let o = ingest(&server, &out, &[]);
    assert_ok(&o);
    let summary = stdout(&o);
    assert!(summary.starts_with("20 pages in the tree: 20 fetched, 0 unchanged, 20 written, 0 skipped"), "{summary}");
    assert!(!summary.contains(" 0 retries"), "the flaky answers must have been retried: {summary}");
    // `Retry-After` was honoured, in seconds and as an HTTP date (whole seconds,
    // so "two seconds ahead" is more than one).
    let gap = |id: &str| {
        let times = server.with(|s| s.body_times.get(id).cloned().unwrap_or_default());
        assert_eq!(times.len(), 2, "page {id}: one refusal, one retry");
        times[1] - times[0]
    };
    for id in ["121", "122"] {
        assert!(gap(id) >= std::time::Duration::from_millis(950), "page {id} was retried after {:?}", gap(id));
    }

    let mut want: Vec<String> = TREE_FILES.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(md_files(&out), want);
    assert!(out.join(".confluence-state.json").is_file());
    vpn_page_is_converted(&out, &server.base);
    tables_admonitions_and_links_are_converted(&out);
    builds_strictly(&out, &t.path().join("dist"));
}

/// The files the 20-page tree becomes.
const TREE_FILES: [&str; 20] = [
    "index.md",
    "it-services/index.md",
    "it-services/connecting-to-the-vpn.md",
    "it-services/eduroam-wi-fi.md",
    "it-services/email-on-your-phone.md",
    "it-services/resetting-your-password.md",
    "it-services/printing.md",
    "finance/index.md",
    "finance/paying-your-bill.md",
    "finance/refunds.md",
    "finance/payment-plans.md",
    "campus/index.md",
    "campus/parking/index.md",
    "campus/parking/buying-a-parking-permit.md",
    "campus/parking/parking-citations.md",
    "campus/parking/shuttle-bus.md",
    "campus/parking/bikes-on-campus.md",
    "campus/dining.md",
    "campus/library.md",
    "faq.md",
];

/// The VPN page (tests/fixtures/confluence/vpn.xml): frontmatter in the shape of
/// content/, then Markdown with nothing of the storage format left.
fn vpn_page_is_converted(out: &Path, base: &str) {
    let vpn = read(out, "it-services/connecting-to-the-vpn.md");
    let front = format!(
        "---\ntitle: Connecting to the VPN\nparent: IT Services\npath: Help Center / IT Services / Connecting to the VPN\n\
         original_url: {base}/spaces/HC/pages/111\npage_id: '111'\nversion: 3\nlast_updated: '2026-03-03'\n---\n\n# Connecting to the VPN\n\n"
    );
    assert!(vpn.starts_with(&front), "{vpn}");
    for want in [
        "The VPN lets you reach **campus-only** services from home \u{2014} library databases",
        "!!! info \"Before you start\"\n\n    You need a NetID with multi-factor authentication. If you forgot it, [reset your password](resetting-your-password.md) first.",
        "## Installing the client",
        "1.  Download the client from the software portal.\n2.  Run the installer",
        "`Campus-Full`",
        "```bash\nsudo openconnect --protocol=anyconnect vpn.example.edu\n# the prompt asks for your NetID & password < 60 s\n```",
        "!!! note\n\n    The VPN is not needed for email",
        "[Paying your bill](../finance/paying-your-bill.md)",
    ] {
        assert!(vpn.contains(want), "missing {want:?} in:\n{vpn}");
    }
    for gone in ["ac:", "ri:", "maxLevel", "style", "vpn-client-screenshot", "&nbsp;", "Terminal", "\n\n\n"] {
        assert!(!vpn.contains(gone), "{gone:?} leaked into:\n{vpn}");
    }
}

/// Tables, admonitions, child lists and links between pages, at every depth.
fn tables_admonitions_and_links_are_converted(out: &Path) {
    let refunds = read(out, "finance/refunds.md");
    for want in [
        "| Withdrawal | Refund |\n| --- | --- |\n| Week 1 | 100% (tuition \\| fees) |\n| Week 2\u{2013}3 | **50%** |\n| After week 3 | none |",
        "!!! warning \"Financial aid\"\n\n    Withdrawing may reduce your aid.\n\n    -   Talk to an adviser first.",
        "!!! tip\n\n    Refunds go to the card you paid with.",
        "Back to [Finance](index.md).",
    ] {
        assert!(refunds.contains(want), "missing {want:?} in:\n{refunds}");
    }
    let parking = read(out, "campus/parking/index.md");
    assert!(parking.contains("parent: Campus\npath: Help Center / Campus / Parking\n"), "{parking}");
    assert!(
        parking
            .contains("-   [Permits](buying-a-parking-permit.md)\n-   [Citations and *appeals*](parking-citations.md)"),
        "{parking}"
    );
    assert!(!parking.contains("ac:") && !parking.contains("60%"), "{parking}");
    let root = read(out, "index.md");
    let fm = kb_common::frontmatter::Frontmatter::of_page(&root).unwrap().unwrap();
    assert_eq!((fm.title.as_deref(), fm.parent, fm.path.as_deref()), (Some("Help Center"), None, Some("Help Center")));
    assert!(read(out, "faq.md").contains("[Help Center](index.md)"));
    assert!(read(out, "campus/parking/shuttle-bus.md").contains("[Help Center](../../index.md)"));
}

/// The content folder builds into `site`, strictly, with every internal link
/// resolved, into the site and the index.
fn builds_strictly(content: &Path, site: &Path) {
    let b = run(&[
        "build",
        "--content",
        content.to_str().expect("utf-8"),
        "--out",
        site.to_str().expect("utf-8"),
        "--no-embed-cache",
        "--strict",
        "--quiet",
    ]);
    assert_ok(&b);
    let report = report(site);
    assert_eq!(report["broken_links"], json!([]), "{report}");
    assert_eq!(report["skipped"], json!([]), "{report}");
    assert_eq!(report["missing_assets"], json!([]), "{report}");
    assert_eq!(report["warnings"], json!([]), "{report}");
    assert_eq!(report["pages"]["rendered"], json!(20), "{}", report["pages"]);
    assert!(report["index"]["chunks"].as_u64().expect("index chunks") >= 20, "{}", report["index"]);
    assert!(site.join("index.bin").is_file());
}

#[test]
fn reruns_are_incremental_and_a_new_version_rewrites_one_page() {
    let server = Server::start(tree());
    let (_t, out) = tempdir();
    assert!(ingest(&server, &out, &[]).status.success());
    let before = files(&out);
    let bodies = server.with(|s| s.total_body_requests());

    let o = ingest(&server, &out, &[]);
    assert_ok(&o);
    assert!(stdout(&o).starts_with("20 pages in the tree: 0 fetched, 20 unchanged, 0 written"), "{}", stdout(&o));
    assert_eq!(files(&out), before, "a run with nothing new must not touch a file");
    assert_eq!(server.with(|s| s.total_body_requests()), bodies, "no body may be fetched again");

    // One page changes.
    server.with(|s| {
        let p = s.pages.iter_mut().find(|p| p.id == "133").expect("library");
        p.version = 4;
        p.body = "<p>New opening hours.</p>".into();
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    let o = ingest(&server, &out, &[]);
    assert_ok(&o);
    assert!(stdout(&o).starts_with("20 pages in the tree: 1 fetched, 19 unchanged, 1 written"), "{}", stdout(&o));
    let after = files(&out);
    let changed: Vec<&String> = after.iter().filter(|(k, v)| before.get(*k) != Some(*v)).map(|(k, _)| k).collect();
    assert_eq!(changed, [".confluence-state.json", "campus/library.md"]);
    let lib = read(&out, "campus/library.md");
    assert!(lib.contains("version: 4\n") && lib.contains("New opening hours."), "{lib}");
    assert_eq!(server.with(|s| s.total_body_requests()), bodies + 1);
}

#[test]
fn pages_are_fetched_concurrently_up_to_the_bound() {
    for (concurrency, expected) in [("1", 1), ("4", 4)] {
        let server = Server::start(tree());
        server.with(|s| s.delay = std::time::Duration::from_millis(150));
        let (_t, out) = tempdir();
        let o = ingest(&server, &out, &["--concurrency", concurrency]);
        assert_ok(&o);
        assert!(stdout(&o).starts_with("20 pages in the tree: 20 fetched"), "{}", stdout(&o));
        // 20 bodies at 150 ms each: one at a time never overlaps, four at once
        // must reach four (and never five).
        assert_eq!(server.with(|s| s.max_in_flight), expected, "--concurrency {concurrency}");
        assert_eq!(md_files(&out).len(), 20);
    }
}

#[test]
fn an_interrupted_run_resumes() {
    let server = Server::start(tree());
    let (_t, out) = tempdir();
    server.with(|s| s.deny_after = Some(7));
    let o = ingest(&server, &out, &["--concurrency", "2"]);
    assert!(!o.status.success(), "the refused run must fail");
    let err = stderr(&o);
    assert!(err.contains("refused the credentials") && err.contains("--token-env"), "{err}");
    assert!(err.contains("rerun resumes"), "{err}");
    let first = files(&out);
    let written: Vec<String> = md_files(&out);
    assert!(!written.is_empty() && written.len() < 20, "{written:?}");
    assert!(first.keys().all(|f| !f.contains(".tmp")), "temporary files left: {first:?}");
    for f in &written {
        let text = read(&out, f);
        assert!(
            text.starts_with("---\ntitle: ") && text.contains("\npage_id: '") && text.ends_with('\n'),
            "{f}: {text}"
        );
    }
    let state: Value = serde_json::from_str(&read(&out, ".confluence-state.json")).expect("state");
    assert_eq!(state["pages"].as_object().map(|m| m.len()), Some(written.len()));

    server.with(|s| s.deny_after = None);
    let served = server.with(|s| s.bodies_served);
    let o = ingest(&server, &out, &[]);
    assert_ok(&o);
    let n = written.len();
    assert!(
        stdout(&o).starts_with(&format!("20 pages in the tree: {} fetched, {n} unchanged, {} written", 20 - n, 20 - n)),
        "{}",
        stdout(&o)
    );
    // Only the pages the first run did not write are fetched (retried requests aside).
    assert_eq!(server.with(|s| s.bodies_served) - served, 20 - n);
    let second = files(&out);
    for f in &written {
        assert_eq!(second.get(f), first.get(f), "{f} was rewritten");
    }
    assert_eq!(md_files(&out).len(), 20);
    assert!(second.keys().all(|f| !f.contains(".tmp")));
}

#[test]
fn invalid_xml_skips_that_page_only() {
    let mut pages = tree();
    if let Some(p) = pages.iter_mut().find(|p| p.id == "123") {
        p.body = fixture("broken.xml");
    }
    let server = Server::start(pages);
    let (_t, out) = tempdir();
    let o = ingest(&server, &out, &[]);
    assert_ok(&o);
    let s = stdout(&o);
    assert!(s.starts_with("20 pages in the tree: 20 fetched, 0 unchanged, 19 written, 1 skipped"), "{s}");
    assert!(s.contains("skipped page 123 (Payment plans): page 123: the storage body is not well-formed"), "{s}");
    assert!(!out.join("finance/payment-plans.md").exists());
    assert_eq!(md_files(&out).len(), 19);
    // The skipped page is tried again next time.
    let o = ingest(&server, &out, &[]);
    assert!(stdout(&o).contains("1 fetched, 19 unchanged, 0 written, 1 skipped"), "{}", stdout(&o));
}

#[test]
fn refused_credentials_stop_before_anything_is_written() {
    let server = Server::start(tree());
    server.with(|s| s.token = Some("s3cret".into()));
    let (_t, out) = tempdir();
    let o = ingest(&server, &out, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("refused the credentials (401) for page 100") && err.contains("set --token-env"), "{err}");
    assert!(files(&out).is_empty(), "{:?}", files(&out));

    // An unset variable is named.
    let o = ingest(&server, &out, &["--token-env", "KB_TEST_UNSET_TOKEN"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("KB_TEST_UNSET_TOKEN is not set"), "{}", stderr(&o));

    // The right token works.
    let out_s = out.to_str().expect("utf-8");
    let o = run_with_env(
        &[
            "ingest",
            "confluence",
            "--base-url",
            &server.base,
            "--root-page",
            "100",
            "--out",
            out_s,
            "--token-env",
            "KB_TEST_TOKEN",
        ],
        &[("KB_TEST_TOKEN", "s3cret")],
    );
    assert_ok(&o);
    assert_eq!(md_files(&out).len(), 20);
}

#[test]
fn pages_that_left_the_tree_are_reported_and_pruned() {
    let server = Server::start(tree());
    let (_t, out) = tempdir();
    assert!(ingest(&server, &out, &[]).status.success());
    server.with(|s| s.pages.retain(|p| p.id != "1314"));

    let o = ingest(&server, &out, &[]);
    assert_ok(&o);
    assert!(stdout(&o).contains("19 unchanged, 0 written, 0 skipped, 1 gone (0 pruned)"), "{}", stdout(&o));
    assert!(stdout(&o).contains("gone: page 1314 (campus/parking/bikes-on-campus.md), kept; pass --prune"));
    assert!(out.join("campus/parking/bikes-on-campus.md").exists());

    let o = ingest(&server, &out, &["--prune"]);
    assert_ok(&o);
    assert!(stdout(&o).contains("1 gone (1 pruned)"), "{}", stdout(&o));
    assert!(!out.join("campus/parking/bikes-on-campus.md").exists());
    assert_eq!(md_files(&out).len(), 19);
    // Once pruned, it is forgotten.
    let o = ingest(&server, &out, &["--prune"]);
    assert!(stdout(&o).contains("0 gone"), "{}", stdout(&o));
}
