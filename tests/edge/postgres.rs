//! The PostgreSQL backend end to end: a real PostgreSQL 16 + pgvector server
//! (the PyPI wheel, support::postgres), `site-builder publish`, and the real
//! component built with the encoder only (`KB_ENCODER`), hosted by edge-host's
//! `spin:postgres@4.2.0` with `search_backend = postgres`. Its answers are
//! compared with the bundled component's over the same index.

use std::process::Command;
use std::sync::Arc;

use search_core::index::Mode;
use search_service::pg::{Choices, Store};
use serde_json::Value;
use site_builder::pg::{Client, Shared};

use crate::support::postgres::Server;
use crate::support::{build_component, built, demo, get, request, start_over, Demo};

/// The component that carries only the encoder (no index).
fn encoder_only() -> Demo {
    let d = demo();
    let component = build_component("search-fn", &[("KB_ENCODER", &d.dist.join("encoder.bin"))]);
    Demo { dist: d.dist.clone(), component }
}

/// `site-builder publish --json` of `index` into `tenant`; the report, or stderr.
fn publish(url: &str, index: &std::path::Path, tenant: &str, extra: &[&str]) -> Result<Value, String> {
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["publish", "--json", "--postgres", url, "--tenant", tenant, "--index"])
        .arg(index)
        .args(extra)
        .output()
        .unwrap();
    if o.status.success() {
        Ok(serde_json::from_slice(&o.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

/// A host of the encoder-only component over `tenant` at `urls`.
fn pg_host(component: &Demo, server: &Server, urls: &str, tenant: &str) -> edge_host::Running {
    start_over(
        component,
        &[
            ("search_backend", "postgres"),
            ("postgres_url", urls),
            ("tenant", tenant),
            ("postgres_allowed_outbound_host", &format!("postgres://127.0.0.1:{}", server.port)),
        ],
    )
}

/// `GET /api/search?…` on `host`: status and the results (chunk id, score, bm25).
/// A result as these tests compare it: chunk id, fused score, BM25.
type Row = (String, f64, Option<f64>);

fn search(host: &edge_host::Running, qs: &str) -> (u16, Vec<Row>) {
    let (status, _, results) = search_matched(host, qs);
    (status, results)
}

/// [`search`], with the answer's `matched`.
fn search_matched(host: &edge_host::Running, qs: &str) -> (u16, bool, Vec<Row>) {
    let r = get(&format!("{}/api/search?{qs}", host.url()));
    if r.status != 200 {
        return (r.status, false, Vec::new());
    }
    let j = r.json();
    let matched = j["matched"].as_bool().unwrap();
    let results = j["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["chunk_id"].as_str().unwrap().to_string(), r["score"].as_f64().unwrap(), r["bm25"].as_f64()))
        .collect();
    (200, matched, results)
}

const QUERIES: &[&str] = &[
    "q=How%20do%20I%20buy%20a%20parking%20permit%3F&k=5",
    "q=eduroam+certificate&k=5",
    "q=refund+after+withdrawing+from+a+course&k=5",
    "q=library+study+room&k=5&mode=bm25",
    "q=library+study+room&k=5&mode=dense",
    "q=library+study+room&k=5&mode=rrf",
    "q=late+fee+payment+plan&k=5&mode=dot",
    "q=buy+a+parking+permi&mode=bm25&k=3&partial=true",
    "q=eduro&k=5&partial=true",
    // A typo: the tenant's vocabulary answers the correction as the index does.
    "q=how+do+I+buy+a+parkign+permti&k=5",
    "q=waitlist&k=3&page=2",
    // Hostile text reaches Postgres only as bound parameters: it is searched for.
    "q=%27%3B+DROP+TABLE+kb_terms%3B+--+%5C%24%241&k=5",
    "q=%E2%80%AE%00%F0%9F%98%80+parking&k=5&partial=true",
];

/// Same chunks in the same order; BM25 scores equal to the bit (the rescoring
/// is the index's own arithmetic), fused scores within f32 noise of pgvector's
/// inner product against the bundled f16 scan.
fn assert_same(a: &[(String, f64, Option<f64>)], b: &[(String, f64, Option<f64>)], what: &str) {
    let ids = |v: &[(String, f64, Option<f64>)]| v.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
    assert_eq!(ids(a), ids(b), "{what}");
    for (x, y) in a.iter().zip(b) {
        assert!((x.1 - y.1).abs() < 1e-4, "{what}: score {} vs {}", x.1, y.1);
        assert_eq!(x.2, y.2, "{what}: BM25 of {}", x.0);
    }
}

/// Questions whose common words (the demo's "student", "campus", "course", …)
/// a store with no selection cutoff leaves out of the BM25 candidate choice.
const COMMON_WORD_QUERIES: &[&str] = &[
    "how do I pay my tuition fees online",
    "student account password reset",
    "library opening hours during exams",
    "parking permit for students on campus",
    "course registration deadline for the semester",
    "campus wifi network for students and staff",
    "request an official transcript",
    "financial aid application for students",
    "international student visa letter",
    "when is the exam schedule published",
    "drop a course and get a refund",
    "student services office contact",
];

/// The `bm25` ranking, `depth` deep, of a store whose common terms only score
/// (selection cutoff 0: every term in more than N / 20 chunks, past the two
/// rarest, is left out of the candidate choice) equals the exact choice's
/// (every term chooses), chunk for chunk and score for score, on every query.
/// A store whose threshold may let a single candidate through (every chunk
/// the threshold keeps counts, not only the best ones it returns), so each
/// bounded choice is capped and its statement makes the exact choice instead:
/// that ranks the same too. Returns how the bounded store's choices went.
fn assert_bounded_choice_is_exact(url: &str, tenant: &str, depth: usize) -> Choices {
    let client = Arc::new(Client::new(url, None).unwrap());
    let exact = Store::new(Box::new(Shared(client.clone())), tenant).with_selection_df(usize::MAX);
    let bounded = Store::new(Box::new(Shared(client.clone())), tenant).with_selection_df(0);
    let capped = Store::new(Box::new(Shared(client)), tenant).with_selection_df(0).with_candidate_cap(1);
    let mut p = exact.default_params(depth).unwrap();
    (p.mode, p.depth) = (Mode::Bm25, depth);
    for q in COMMON_WORD_QUERIES {
        let (a, ea) = exact.search(q, None, &p).unwrap();
        let (b, eb) = bounded.search(q, None, &p).unwrap();
        let (c, ec) = capped.search(q, None, &p).unwrap();
        assert!(!a.is_empty(), "{q}");
        let key =
            |h: &[search_core::index::Hit]| h.iter().map(|h| (h.doc, h.bm25.map(f32::to_bits))).collect::<Vec<_>>();
        assert_eq!(key(&a), key(&b), "{q}");
        assert_eq!(key(&a), key(&c), "{q}, capped at one candidate");
        // Whether the query matched reads the best chunk's postings, which
        // every choice fetches; the snippets' weights read the vocabulary.
        assert_eq!((ea.evidence, ea.evidence), (eb.evidence, ec.evidence), "{q}");
        assert_eq!((&ea.weights, &ea.weights), (&eb.weights, &ec.weights), "{q}");
    }
    assert_eq!(exact.choices().all_terms, COMMON_WORD_QUERIES.len());
    let c = bounded.choices();
    assert_eq!(c.all_terms + c.bounded + c.fell_back, COMMON_WORD_QUERIES.len(), "{c:?}");
    let one = capped.choices();
    assert_eq!(
        (one.all_terms, one.bounded, one.fell_back, one.capped),
        (c.all_terms, 0, c.bounded + c.fell_back, c.bounded + c.fell_back),
        "a cap of one candidate leaves no bounded choice standing: {one:?}"
    );
    c
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn publish_is_incremental_and_the_postgres_backend_ranks_as_the_bundled_index() {
    let server = Server::start();
    let d = demo();
    let index = d.dist.join("index.bin");
    let first = publish(&server.url(), &index, "demo", &[]).unwrap();
    let chunks = first["chunks"].as_u64().unwrap();
    assert!(chunks > 20, "{first}");
    assert_eq!(first["added"].as_u64(), Some(chunks), "{first}");
    assert_eq!(first["generation"].as_i64(), Some(1));
    // Again: nothing to write, not even a new generation.
    let again = publish(&server.url(), &index, "demo", &[]).unwrap();
    assert_eq!(
        (again["added"].as_u64(), again["changed"].as_u64(), again["removed"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(0), Some(0), Some(chunks)),
        "{again}"
    );
    assert_eq!(again["generation"].as_i64(), Some(1));

    let component = encoder_only();
    let bundled_size = std::fs::metadata(&d.component).unwrap().len();
    let pg_size = std::fs::metadata(&component.component).unwrap().len();
    assert!(pg_size < bundled_size, "the encoder-only component ({pg_size} B) is not smaller than {bundled_size} B");

    let pg = pg_host(&component, &server, &server.url(), "demo");
    let bundled = crate::support::host();
    let health = get(&format!("{}/api/health", pg.url())).json();
    assert_eq!(health["index"]["backend"], "postgres", "{health}");
    assert_eq!(health["index"]["tenant"], "demo");
    assert_eq!(health["index"]["chunks"].as_u64(), Some(chunks));
    let mut shown = 0;
    for qs in QUERIES {
        let (s1, m1, a) = search_matched(bundled, qs);
        let (s2, m2, b) = search_matched(&pg, qs);
        assert_eq!((s1, s2), (200, 200), "{qs}");
        // "No good match" reads the same evidence from both backends.
        assert_eq!(m1, m2, "{qs}");
        assert_eq!(a.is_empty(), !m1, "{qs}: results exactly when matched");
        assert_same(&a, &b, qs);
        shown += usize::from(m1);
    }
    // Only the hostile strings are nonsense to the knowledge base.
    assert!(shown >= QUERIES.len() - 2, "{shown} of {} matched", QUERIES.len());
    // Common terms left out of the candidate choice, the threshold proves the
    // choice exact on most questions and falls back to the exact choice on the rest.
    let c = assert_bounded_choice_is_exact(&server.url(), "demo", 5);
    assert!(c.bounded >= COMMON_WORD_QUERIES.len() / 2, "{c:?}");

    // The chat answers from the same sources on both backends, and declines the
    // same way (the word no page uses is looked up in the tenant's kb_terms).
    let chat = |host: &edge_host::Running, question: &str| {
        let body = serde_json::to_vec(&serde_json::json!({
            "messages": [{ "role": "user", "content": question }],
            "stream": false
        }))
        .unwrap();
        let r =
            request("POST", &format!("{}/api/chat", host.url()), &[("content-type", "application/json")], Some(&body));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    };
    let q = "How do I buy a parking permit?";
    let (a, b) = (chat(bundled, q), chat(&pg, q));
    assert!(!a["citations"].as_array().unwrap().is_empty(), "{a}");
    assert_eq!(a["answer"], b["answer"], "{a}\n{b}");
    assert_eq!(a["citations"], b["citations"]);
    let q = "What are the opening hours of the gym?";
    let (a, b) = (chat(bundled, q), chat(&pg, q));
    assert_eq!((&a["abstained"], &b["abstained"]), (&serde_json::json!(true), &serde_json::json!(true)), "{a}\n{b}");
    assert_eq!(a["answer"], b["answer"], "{a}\n{b}");

    // "Was this helpful?" on this backend, whose pages the function does not
    // list: a URL of a page's form is taken (its id unknown), anything else is
    // refused as on the bundled one.
    let rate = |page: &str| {
        let body = serde_json::to_vec(&serde_json::json!({ "page": page, "rating": "down" })).unwrap();
        request("POST", &format!("{}/api/feedback", pg.url()), &[("content-type", "application/json")], Some(&body))
    };
    assert_eq!(rate("it-services/vpn.html").status, 202);
    for bad in ["/it-services/vpn.html", "https://evil.example/x.html", "../x.html", "a.html?x=1"] {
        let r = rate(bad);
        assert_eq!((r.status, r.json()["error"]["code"].as_str()), (400, Some("unknown_page")), "{bad}: {}", r.text());
    }
    let db = rusqlite::Connection::open(pg.state().join("sqlite_db.db")).unwrap();
    let (page, id): (String, Option<String>) =
        db.query_row("SELECT page, page_id FROM kb_page_feedback", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!((page.as_str(), id), ("it-services/vpn.html", None));
}

/// The demo content with one page edited and one page deleted, built.
fn edited_demo() -> std::path::PathBuf {
    let root = crate::support::state_dir().with_file_name(format!("edited-{}", std::process::id()));
    let content = root.join("content");
    let _ = std::fs::remove_dir_all(&root);
    for e in walkdir::WalkDir::new(crate::support::repo().join("content")) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(crate::support::repo().join("content")).unwrap();
        let to = content.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
    let page = content.join("campus/parking/buying-a-parking-permit.md");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, format!("{text}\n\nPermits for the Zanzibarquux lot are sold at the east gate.\n")).unwrap();
    std::fs::remove_file(content.join("campus/parking/shuttle-bus.md")).unwrap();
    let dist = root.join("dist");
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["build", "--quiet", "--no-browser-search", "--content"])
        .arg(&content)
        .arg("--out")
        .arg(&dist)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dist
}

/// `site-builder search --json` over an index file: (chunk id, score, bm25).
fn native_search(index: &std::path::Path, query: &str, mode: &str) -> Vec<(String, f64, Option<f64>)> {
    native_search_with(index, query, mode, &[])
}

/// [`native_search`] with more arguments (`--lang de`).
fn native_search_with(index: &std::path::Path, query: &str, mode: &str, extra: &[&str]) -> Vec<Row> {
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["search", "--json", "--k", "5", "--mode", mode, "--index"])
        .arg(index)
        .args(extra)
        .arg(query)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    j["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["chunk_id"].as_str().unwrap().to_string(), r["score"].as_f64().unwrap(), r["bm25"].as_f64()))
        .collect()
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn a_changed_knowledge_base_is_published_incrementally() {
    let server = Server::start();
    let d = demo();
    let before = publish(&server.url(), &d.dist.join("index.bin"), "demo", &[]).unwrap();
    let edited = edited_demo();
    let index = edited.join("index.bin");
    let r = publish(&server.url(), &index, "demo", &[]).unwrap();
    let (changed, kept) = (r["changed"].as_u64().unwrap(), r["kept_stale"].as_u64().unwrap());
    // The edited page's last section changed (or gained a chunk); the deleted
    // page's chunks stay without --prune; the rest is untouched.
    assert!(changed + r["added"].as_u64().unwrap() >= 1, "{r}");
    assert!(kept >= 1, "{r}");
    assert!(r["unchanged"].as_u64().unwrap() + 3 >= before["chunks"].as_u64().unwrap() - kept, "{r}");
    assert_eq!(r["generation"].as_i64(), Some(2));
    let component = encoder_only();
    let host = pg_host(&component, &server, &server.url(), "demo");
    let urls = |qs: &str| -> Vec<String> {
        get(&format!("{}/api/search?{qs}", host.url())).json()["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["url"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(urls("q=zanzibarquux&mode=bm25&k=3").first().is_some_and(|u| u.contains("buying-a-parking-permit")));
    assert!(urls("q=Northbridge+Loop+shuttle&k=5").iter().any(|u| u.contains("shuttle-bus")), "kept without --prune");
    // The weight bounds of terms this publish did not touch were computed at the
    // old mean length, and still bound (and prove) the choice.
    assert!(assert_bounded_choice_is_exact(&server.url(), "demo", 5).bounded > 0);
    // --prune removes the deleted page; the tenant then holds exactly the edited
    // index, and ranks as that index file does.
    let r = publish(&server.url(), &index, "demo", &["--prune"]).unwrap();
    assert_eq!(r["removed"].as_u64(), Some(kept), "{r}");
    assert_eq!(r["kept_stale"].as_u64(), Some(0), "{r}");
    assert!(!urls("q=Northbridge+Loop+shuttle&k=5").iter().any(|u| u.contains("shuttle-bus")), "pruned");
    for (q, mode) in
        [("how do I buy a parking permit", "bm25"), ("zanzibarquux lot", "convex"), ("library study room", "dense")]
    {
        let native = native_search(&index, q, mode);
        let (_, served) = search(&host, &format!("q={}&k=5&mode={mode}", q.replace(' ', "+")));
        assert!(!native.is_empty(), "{q}");
        assert_same(&native, &served, q);
    }
}

/// A tenant in German and English reads queries as the bundled index does:
/// German words stemmed as German, a word that does not say its language read
/// in each (and judged by its best reading), a compound no page has read as
/// its parts, and a search in one language that falls back to every language
/// when it has no match.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn a_tenant_in_two_languages_reads_queries_as_the_bundled_index_does() {
    let server = Server::start();
    let index = crate::support::two_languages().join("index.bin");
    publish(&server.url(), &index, "two", &[]).unwrap();
    let component = encoder_only();
    let host = pg_host(&component, &server, &server.url(), "two");
    for (q, mode, lang) in [
        ("Druckern", "bm25", None),
        ("Drucker", "bm25", Some("de")),
        ("Wo kann ich Dokumente drucken?", "convex", None),
        ("eduroam", "bm25", Some("de")),
        ("eduroam", "convex", Some("en")),
        ("parking permit semester", "convex", Some("de")),
        ("Druck", "bm25", None),
        // A compound no page has, read as its parts ("Drucker", "Kosten"):
        // the tenant fetches the parts' rows as the bundled index reads them.
        ("Druckerkosten", "bm25", None),
        ("Wie hoch sind die Druckerkosten?", "convex", Some("de")),
    ] {
        let mut args = vec![];
        if let Some(l) = lang {
            args.extend(["--lang", l]);
        }
        let native = native_search_with(&index, q, mode, &args);
        let qs = format!(
            "q={}&k=5&mode={mode}{}",
            q.replace(' ', "+"),
            lang.map(|l| format!("&lang={l}")).unwrap_or_default()
        );
        let (status, matched, served) = search_matched(&host, &qs);
        assert_eq!(status, 200, "{qs}");
        assert!(matched && !native.is_empty(), "{qs}: matched {matched}, native {native:?}");
        // Same chunks, BM25 to the bit; the fused scores of five chunks' min–max
        // magnify pgvector's halfvec against the bundled i16 (0.004 here).
        let ids = |v: &[Row]| v.iter().map(|r| (r.0.clone(), r.2)).collect::<Vec<_>>();
        assert_eq!(ids(&native), ids(&served), "{qs}");
        for (a, b) in native.iter().zip(&served) {
            assert!((a.1 - b.1).abs() < 0.01, "{qs}: score {} vs {}", a.1, b.1);
        }
    }
    let (_, _, served) = search_matched(&host, "q=Druckerkosten&k=1&mode=bm25");
    assert!(served.first().is_some_and(|r| r.0.starts_with("de-drucken")), "{served:?}");
    // The German stem: "Druckern" finds the printing page in German.
    let (_, _, served) = search_matched(&host, "q=Druckern&k=1&mode=bm25&partial=true");
    assert!(served.first().is_some_and(|r| r.0.starts_with("de-drucken")), "{served:?}");
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn tenants_are_isolated_and_a_publish_does_not_disturb_the_other() {
    let server = Server::start();
    let d = demo();
    let other = built("tests/hostile");
    publish(&server.url(), &d.dist.join("index.bin"), "demo", &[]).unwrap();
    publish(&server.url(), &other.dist.join("index.bin"), "other", &[]).unwrap();
    let component = encoder_only();
    let demo_host = pg_host(&component, &server, &server.url(), "demo");
    let other_host = pg_host(&component, &server, &server.url(), "other");

    // Every chunk either host returns is its own tenant's.
    let ids_of = |tenant: &str| -> std::collections::HashSet<String> {
        server
            .client()
            .query(
                "SELECT c.chunk_id FROM kb_chunks c JOIN kb_tenants t ON t.id = c.tenant WHERE t.name = $1",
                &[&tenant],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect()
    };
    let (ours, theirs) = (ids_of("demo"), ids_of("other"));
    assert!(!ours.is_empty() && !theirs.is_empty() && ours.is_disjoint(&theirs));
    let probes = [QUERIES, &["q=hostile+content+script&k=10", "q=javascript+link&k=10&mode=bm25"]].concat();
    let mut seen = (0, 0);
    for q in &probes {
        for r in search(&demo_host, q).1 {
            assert!(ours.contains(&r.0), "{q}: demo's host returned {}", r.0);
            seen.0 += 1;
        }
        for r in search(&other_host, q).1 {
            assert!(theirs.contains(&r.0), "{q}: other's host returned {}", r.0);
            seen.1 += 1;
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "{seen:?}");

    // While "other" is replaced by the demo index (pruned: every chunk written
    // or deleted), demo's queries keep their answers.
    let baseline: Vec<_> = QUERIES.iter().map(|q| search(&demo_host, q)).collect();
    let url = server.url();
    let idx = d.dist.join("index.bin");
    let publisher = std::thread::spawn(move || publish(&url, &idx, "other", &["--prune"]));
    let mut rounds = 0;
    while !publisher.is_finished() || rounds == 0 {
        for (q, expected) in QUERIES.iter().zip(&baseline) {
            let got = search(&demo_host, q);
            assert_eq!(got.0, 200, "{q}");
            assert_same(&expected.1, &got.1, q);
        }
        rounds += 1;
    }
    let report = publisher.join().unwrap().unwrap();
    assert!(report["removed"].as_u64().unwrap() > 0 && report["added"].as_u64().unwrap() > 0, "{report}");
    // Now "other" answers as demo does (same index), under its own tenant.
    let (_, a) = search(&demo_host, QUERIES[0]);
    let (_, b) = search(&other_host, QUERIES[0]);
    assert_same(&a, &b, "republished tenant");
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn a_replica_answers_the_same_and_the_function_fails_over_to_it() {
    let mut primary = Server::start();
    let d = demo();
    publish(&primary.url(), &d.dist.join("index.bin"), "demo", &[]).unwrap();
    let replica = primary.replica();
    // Streaming replication: wait for the replica to have the published tenant.
    let mut caught_up = false;
    for _ in 0..100 {
        let n: i64 = replica.client().query_one("SELECT count(*) FROM kb_chunks", &[]).map(|r| r.get(0)).unwrap_or(0);
        let m: i64 = primary.client().query_one("SELECT count(*) FROM kb_chunks", &[]).unwrap().get(0);
        if n == m {
            caught_up = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(caught_up, "the replica did not catch up");
    let component = encoder_only();
    let on_primary = pg_host(&component, &primary, &primary.url(), "demo");
    let baseline: Vec<_> = QUERIES.iter().map(|q| search(&on_primary, q)).collect();
    drop(on_primary);
    // Both servers listen on loopback; one pattern allows both ports.
    let both = start_over(
        &component,
        &[
            ("search_backend", "postgres"),
            ("postgres_url", &format!("{} {}", primary.url(), replica.url())),
            ("tenant", "demo"),
            ("postgres_allowed_outbound_host", "postgres://127.0.0.1:*"),
        ],
    );
    let only_replica = start_over(
        &component,
        &[
            ("search_backend", "postgres"),
            ("postgres_url", &replica.url()),
            ("tenant", "demo"),
            ("postgres_allowed_outbound_host", &replica.origin()),
        ],
    );
    for (q, expected) in QUERIES.iter().zip(&baseline) {
        assert_same(&expected.1, &search(&only_replica, q).1, q);
        assert_same(&expected.1, &search(&both, q).1, q);
    }
    // The primary goes down: the function that lists both keeps answering.
    primary.stop();
    for (q, expected) in QUERIES.iter().zip(&baseline) {
        let got = search(&both, q);
        assert_eq!(got.0, 200, "{q} after the primary stopped");
        assert_same(&expected.1, &got.1, q);
    }
}

/// A server without pgvector, and a database owner who may not create it: each
/// refusal says what to do, and nothing is written.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn publish_names_a_missing_or_forbidden_pgvector() {
    let index = demo().dist.join("index.bin");
    let plain = Server::start_without_pgvector();
    let e = publish(&plain.url(), &index, "demo", &[]).unwrap_err();
    assert!(e.contains("no pgvector extension") && e.contains("install pgvector"), "{e}");
    let tables: i64 =
        plain.client().query_one("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'kb_%'", &[]).unwrap().get(0);
    assert_eq!(tables, 0, "a refused publish wrote tables");

    let server = Server::start();
    let mut admin = server.client();
    admin.batch_execute("CREATE ROLE owner LOGIN").unwrap();
    admin.batch_execute("CREATE DATABASE owned OWNER owner").unwrap();
    let url = server.url_of("owned").replace("kb@", "owner@");
    let e = publish(&url, &index, "demo", &[]).unwrap_err();
    assert!(e.contains("CREATE EXTENSION vector") && e.contains("superuser"), "{e}");
    // Once the extension exists (a superuser created it), the owner publishes.
    postgres::Client::connect(&server.url_of("owned"), postgres::NoTls)
        .unwrap()
        .batch_execute("CREATE EXTENSION vector")
        .unwrap();
    publish(&url, &index, "demo", &[]).unwrap();
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn failures_say_what_to_do_and_never_half_answer() {
    let mut server = Server::start();
    let d = demo();
    let index = d.dist.join("index.bin");
    // Refused credentials, a bad tenant name, a database of another schema version.
    let e = publish(&server.url().replace("kb@", "nobody@"), &index, "demo", &[]).unwrap_err();
    assert!(e.contains("cannot connect") && e.contains("nobody"), "{e}");
    let e = publish(&server.url(), &index, "no spaces", &[]).unwrap_err();
    assert!(e.contains("--tenant"), "{e}");
    server.client().batch_execute("CREATE DATABASE old").unwrap();
    publish(&server.url_of("old"), &index, "demo", &[]).unwrap();
    let mut old = postgres::Client::connect(&server.url_of("old"), postgres::NoTls).unwrap();
    // A database of schema version 1 (no weight bounds) is read as it is, its
    // bounds unknown, and the next publish migrates it without rewriting a chunk.
    let fresh = assert_bounded_choice_is_exact(&server.url_of("old"), "demo", 5);
    old.batch_execute("ALTER TABLE kb_terms DROP COLUMN ub, DROP COLUMN ub_avg; UPDATE kb_schema SET version = 1")
        .unwrap();
    assert_bounded_choice_is_exact(&server.url_of("old"), "demo", 5);
    let r = publish(&server.url_of("old"), &index, "demo", &[]).unwrap();
    assert_eq!((r["unchanged"].as_u64(), r["generation"].as_i64()), (r["chunks"].as_u64(), Some(1)), "{r}");
    let version: i32 = old.query_one("SELECT version FROM kb_schema", &[]).unwrap().get(0);
    assert_eq!(version, 2);
    assert_eq!(assert_bounded_choice_is_exact(&server.url_of("old"), "demo", 5), fresh);
    // A tenant published before index formats were recorded still answers,
    // and /api/health says what to do; publishing the same index again writes
    // its settings (no chunk: their terms are the same) and the notice goes.
    let component = encoder_only();
    let current =
        get(&format!("{}/api/health", crate::support::host().url())).json()["index"]["format_version"].clone();
    old.batch_execute("UPDATE kb_tenants SET info = (info::jsonb - 'format')::text").unwrap();
    let host = pg_host(&component, &server, &server.url_of("old"), "demo");
    let index_health = || get(&format!("{}/api/health", host.url())).json()["index"].clone();
    let h = index_health();
    assert_eq!(h["format_version"], 0, "{h}");
    let notice = h["notice"].as_str().unwrap_or_default();
    assert!(notice.contains("format 3 or older") && notice.contains("site-builder publish --tenant demo"), "{h}");
    assert_eq!(search(&host, "q=parking").0, 200);
    let r = publish(&server.url_of("old"), &index, "demo", &[]).unwrap();
    let written = (r["settings_updated"].as_bool(), r["unchanged"].as_u64(), r["generation"].as_i64());
    assert_eq!(written, (Some(true), r["chunks"].as_u64(), Some(2)), "{r}");
    // The next search reads the new generation, and health its format.
    assert_eq!(search(&host, "q=parking").0, 200);
    let h = index_health();
    assert_eq!((&h["format_version"], h.get("notice")), (&current, None), "{h}");
    assert!(current.as_u64().is_some_and(|v| v >= 4), "{current}");
    old.batch_execute("UPDATE kb_schema SET version = 99").unwrap();
    let e = publish(&server.url_of("old"), &index, "demo", &[]).unwrap_err();
    assert!(e.contains("schema version 99") && e.contains("version 2"), "{e}");

    publish(&server.url(), &index, "demo", &[]).unwrap();
    // A tenant nobody published: 503 naming the command that publishes it.
    let missing = pg_host(&component, &server, &server.url(), "nobody");
    let r = get(&format!("{}/api/search?q=parking", missing.url()));
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains("site-builder publish --tenant nobody"), "{}", r.text());
    // A server outside allowed_outbound_hosts is never contacted.
    let denied =
        start_over(&component, &[("search_backend", "postgres"), ("postgres_url", &server.url()), ("tenant", "demo")]);
    let r = get(&format!("{}/api/search?q=parking", denied.url()));
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains("allowed_outbound_hosts"), "{}", r.text());
    // The database goes down: searches and chats are 503s with Retry-After,
    // and the function answers again when it is back.
    let host = pg_host(&component, &server, &server.url(), "demo");
    assert_eq!(search(&host, "q=parking").0, 200);
    server.stop();
    let r = get(&format!("{}/api/search?q=parking", host.url()));
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.header("retry-after").is_some());
    let body = br#"{"messages":[{"role":"user","content":"parking?"}],"stream":false}"#;
    let r = request("POST", &format!("{}/api/chat", host.url()), &[("content-type", "application/json")], Some(body));
    assert_eq!(r.status, 503, "{}", r.text());
    server.restart();
    let mut back = false;
    for _ in 0..50 {
        if search(&host, "q=parking").0 == 200 {
            back = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(back, "the function did not answer again once the database was back");
}

/// A CA, and a certificate it signed for 127.0.0.1 and localhost: (CA, certificate,
/// key), in PEM.
fn test_certificates(ca_name: &str) -> (String, String, String) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, ca_name);
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

/// `site-builder eval --json` of the demo QA set, on the index or on `tenant`.
fn eval_json(index: &std::path::Path, postgres: &[&str]) -> Value {
    let qa = crate::support::repo().join("site-builder/tests/fixtures/demo-qa.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["eval", "--json", "--mode", "convex", "--index"])
        .arg(index)
        .arg("--qa")
        .arg(qa)
        .args(postgres)
        .output()
        .unwrap();
    assert!(o.status.success(), "eval {postgres:?}: {}", String::from_utf8_lossy(&o.stderr));
    let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Timings differ between runs; the figures must not.
    if let Some(m) = v.as_object_mut() {
        m.retain(|k, _| !k.contains("ms"));
    }
    v
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and PostgreSQL (scripts/fetch-postgres): scripts/test runs it"]
fn tls_to_the_database_is_verified_and_a_plain_connection_is_refused() {
    // The wheel's server has no TLS of its own (support::tls_proxy says why);
    // every client below connects to the TLS end in front of it.
    let (ca, cert, key) = test_certificates("kb test CA");
    let (other_ca, _, _) = test_certificates("another CA");
    let server = Server::start();
    let proxy = crate::support::tls_proxy::TlsProxy::start(&cert, &key, server.port);
    let at = |sslmode: &str| format!("postgres://kb@127.0.0.1:{}/postgres?sslmode={sslmode}", proxy.port);
    let dir = crate::support::state_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let (ca_file, other_file) = (dir.join("ca.pem"), dir.join("other-ca.pem"));
    std::fs::write(&ca_file, &ca).unwrap();
    std::fs::write(&other_file, &other_ca).unwrap();
    let (ca_arg, other_arg) = (ca_file.to_str().unwrap(), other_file.to_str().unwrap());
    let d = demo();
    let index = d.dist.join("index.bin");
    let tls = at("require");

    // Not signed by a CA this machine trusts, or by the one given: refused,
    // saying what to do, and nothing written.
    for extra in [vec![], vec!["--postgres-ca", other_arg]] {
        let e = publish(&tls, &index, "demo", &extra).unwrap_err();
        assert!(e.contains("certificate") && e.contains("--postgres-ca"), "{extra:?}: {e}");
    }
    // Without TLS no one is admitted.
    let e = publish(&at("disable"), &index, "demo", &[]).unwrap_err();
    assert!(e.contains("no encryption"), "{e}");

    // With its CA: published over TLS, and evaluated through the same client as
    // `eval --postgres` uses, with the bundled figures.
    let r = publish(&tls, &index, "demo", &["--postgres-ca", ca_arg]).unwrap();
    assert!(r["chunks"].as_u64().unwrap() > 20, "{r}");
    assert_eq!(
        eval_json(&index, &["--postgres", &tls, "--tenant", "demo", "--postgres-ca", ca_arg]),
        eval_json(&index, &[])
    );

    // The host trusts the CA it is given: the component searches over TLS as it
    // does over the bundled index.
    let component = encoder_only();
    let vars = [
        ("search_backend", "postgres"),
        ("postgres_url", tls.as_str()),
        ("tenant", "demo"),
        ("postgres_allowed_outbound_host", &format!("postgres://127.0.0.1:{}", proxy.port)),
    ];
    let host = crate::support::start_configured(&component, &vars, |c| c.postgres_ca = Some(ca_file.clone()));
    for qs in &QUERIES[..4] {
        let (s1, a) = search(crate::support::host(), qs);
        let (s2, b) = search(&host, qs);
        assert_eq!((s1, s2), (200, 200), "{qs}");
        assert_same(&a, &b, qs);
    }
    // A host that does not trust it answers 503, never results from elsewhere.
    let untrusting = crate::support::start_configured(&component, &vars, |_| {});
    let r = get(&format!("{}/api/search?{}", untrusting.url(), QUERIES[0]));
    assert_eq!(r.status, 503, "{}", r.text());
}
