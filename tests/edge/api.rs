//! `/api/search` and `/api/health` through the host: results and their fields,
//! every error case, CORS, the static site beside the API, concurrency.

use std::collections::HashSet;

use serde_json::Value;

use crate::support::schema::assert_valid;
use crate::support::{demo, get, host, request, start};

fn search(qs: &str) -> crate::support::Resp {
    get(&format!("{}/api/search?{qs}", host().url()))
}

fn ok_search(qs: &str) -> Value {
    let r = search(qs);
    assert_eq!(r.status, 200, "{qs}: {}", r.text());
    let v = r.json();
    assert_valid("SearchResponse", &v);
    v
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn search_returns_ranked_sections_with_every_field() {
    let r = search("q=How%20do%20I%20buy%20a%20parking%20permit%3F&k=5");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v = r.json();
    assert_valid("SearchResponse", &v);
    assert_eq!(v["query"], "How do I buy a parking permit?");
    assert_eq!(v["mode"], "convex", "the demo index's default mode");
    assert_eq!((v["k"].as_u64(), v["page"].as_u64()), (Some(5), Some(1)));
    assert_eq!(v["matched"], true);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    let top = &results[0];
    assert!(top["url"].as_str().unwrap().starts_with("campus/parking/buying-a-parking-permit.html#"), "{top}");
    assert!(top["chunk_id"].as_str().unwrap().starts_with(&format!("{}_chunk_", top["page_id"].as_str().unwrap())));
    assert_eq!(top["path"].as_array().unwrap().last().unwrap(), &top["title"]);
    assert!(top["snippet"].as_str().unwrap().contains("<mark>"), "{top}");
    // Hybrid: both component scores; results pages first (no page returns
    // before every page listed has appeared).
    assert!(top["dense"].as_f64().unwrap() > 0.3 && top["bm25"].as_f64().unwrap() > 0.0, "{top}");
    let pages: Vec<&str> = results.iter().map(|r| r["page_id"].as_str().unwrap()).collect();
    let mut seen = std::collections::HashSet::new();
    let firsts = pages.iter().take_while(|p| seen.insert(**p)).count();
    assert!(pages[firsts..].iter().all(|p| pages[..firsts].contains(p)), "{pages:?}");
    assert!(firsts >= 2, "the parking question matches more than one page: {pages:?}");
    let ranks: Vec<u64> = results.iter().map(|r| r["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [1, 2, 3, 4, 5]);
    // Server timings in the body and as a Server-Timing header.
    let t = &v["timings_ms"];
    assert!(t["encode"].as_f64().unwrap() > 0.0);
    let sum = t["encode"].as_f64().unwrap() + t["search"].as_f64().unwrap() + t["fuse"].as_f64().unwrap();
    assert!((sum - t["total"].as_f64().unwrap()).abs() < 0.01, "{t}");
    let st = r.header("server-timing").unwrap();
    assert!(st.contains("encode;dur=") && st.contains("search;dur=") && st.contains("fuse;dur="), "{st}");
}

/// `(instance, cached)` from a search's `Server-Timing`.
fn timing_of(r: &crate::support::Resp) -> (String, bool) {
    let st = r.header("server-timing").unwrap_or_default();
    let instance = st.split(", ").find_map(|m| m.strip_prefix("instance;desc=")).unwrap_or_default();
    assert_eq!(instance.len(), 16, "{st}");
    (instance.to_string(), st.starts_with("encode;") && st.split(", ").next().unwrap_or("").ends_with(";desc=cached"))
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_query_asked_again_reuses_its_vector_on_the_same_instance() {
    // Words no other test asks, so this test's requests fill the cache.
    let q = "q=cached+vector+of+an+eduroam+certificate+question";
    let mut seen: HashSet<String> = HashSet::new();
    let mut first: Option<Value> = None;
    let mut hits = 0;
    for k in [5, 5, 3, 5, 5, 5] {
        let r = search(&format!("{q}&k={k}"));
        assert_eq!(r.status, 200, "{}", r.text());
        let (instance, cached) = timing_of(&r);
        // Each instance encodes the text once; after that (any k) it has the vector.
        assert_eq!(cached, !seen.insert(instance.clone()), "instance {instance}");
        hits += usize::from(cached);
        let mut v = r.json();
        if k == 5 {
            // The same results and scores, whether or not the encoder ran.
            v["timings_ms"] = Value::Null;
            match &first {
                None => first = Some(v),
                Some(f) => assert_eq!(&v, f),
            }
        }
    }
    assert!(hits > 0, "six requests, each on a new instance?");
    // bm25 never encodes, so it never says cached.
    let r = search(&format!("{q}&mode=bm25"));
    assert!(!timing_of(&r).1);
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn partial_reads_the_word_being_typed_as_the_word_it_becomes() {
    let urls = |v: &Value| -> Vec<String> {
        v["results"].as_array().unwrap().iter().map(|r| r["url"].as_str().unwrap().to_string()).collect()
    };
    // "eduro" is no word of the knowledge base, so BM25 alone finds nothing...
    assert!(urls(&ok_search("q=eduro&mode=bm25&k=3")).is_empty());
    // ...but while it is being typed it reads as "eduroam".
    let typing = urls(&ok_search("q=eduro&mode=bm25&k=3&partial=true"));
    assert!(typing[0].starts_with("it-services/eduroam-wifi.html#"), "{typing:?}");
    // Cut back to a stem: "permi" is no term, "permit" is.
    let typing = urls(&ok_search("q=buy+a+parking+permi&mode=bm25&k=3&partial=true"));
    assert!(typing[0].starts_with("campus/parking/buying-a-parking-permit.html#"), "{typing:?}");
    // A whole word is read as it is: partial changes nothing for "parking permit".
    let whole = ok_search("q=parking+permit&mode=bm25&k=5");
    let same = ok_search("q=parking+permit&mode=bm25&k=5&partial=true");
    assert_eq!(urls(&whole), urls(&same));
    // And the fused modes take it too.
    let fused = urls(&ok_search("q=connect+to+eduro&k=3&partial=true"));
    assert!(fused[0].starts_with("it-services/eduroam-wifi.html#"), "{fused:?}");
    expect_error("GET", "/api/search?q=eduro&partial=maybe", 400, "invalid_parameter", Some("partial"));
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn every_mode_answers_and_bm25_skips_the_encoder() {
    for mode in ["rrf", "convex", "dot", "dense", "bm25"] {
        let v = ok_search(&format!("q=eduroam+wifi+certificate&mode={mode}&k=3"));
        assert_eq!(v["mode"], mode);
        assert_eq!(v["results"].as_array().unwrap().len(), 3, "{mode}");
    }
    let v = ok_search("q=eduroam&mode=bm25");
    assert_eq!(v["timings_ms"]["encode"], 0.0);
    let first = &v["results"][0];
    assert!(first["bm25"].as_f64().unwrap() > 0.0 && first.get("dense").is_none(), "{first}");
    let v = ok_search("q=eduroam&mode=dense");
    assert!(v["results"][0]["dense"].as_f64().unwrap() > 0.0);
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn pages_continue_the_ranking() {
    let p1 = ok_search("q=password&k=4&mode=rrf");
    let p2 = ok_search("q=password&k=4&mode=rrf&page=2");
    let both = ok_search("q=password&k=8&mode=rrf");
    let ids = |v: &Value| -> Vec<String> {
        v["results"].as_array().unwrap().iter().map(|r| r["chunk_id"].as_str().unwrap().to_string()).collect()
    };
    let mut joined = ids(&p1);
    joined.extend(ids(&p2));
    assert_eq!(joined, ids(&both));
    assert_eq!(p2["results"][0]["rank"], 5);
    assert_eq!(p1["has_more"], true);
    let far = ok_search("q=zzyzx+qwv&k=50&page=20&mode=bm25");
    assert_eq!((far["results"].as_array().unwrap().len(), &far["has_more"]), (0, &Value::Bool(false)));
}

fn expect_error(method: &str, path_qs: &str, status: u16, code: &str, parameter: Option<&str>) -> Value {
    let r = request(method, &format!("{}{path_qs}", host().url()), &[], None);
    assert_eq!(r.status, status, "{method} {path_qs}: {}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"), "{path_qs}");
    let v = r.json();
    assert_valid("Error", &v);
    assert_eq!(v["error"]["code"], code, "{path_qs}");
    assert_eq!(v["error"]["status"], status);
    assert_eq!(v["error"]["parameter"].as_str(), parameter, "{path_qs}: {v}");
    assert!(v["error"]["message"].as_str().unwrap().len() > 10);
    v
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn bad_requests_get_json_errors_that_name_the_parameter() {
    expect_error("GET", "/api/search", 400, "invalid_parameter", Some("q"));
    expect_error("GET", "/api/search?q=", 400, "invalid_parameter", Some("q"));
    expect_error("GET", "/api/search?q=+++", 400, "invalid_parameter", Some("q"));
    let long = "a".repeat(1001);
    let v = expect_error("GET", &format!("/api/search?q={long}"), 400, "invalid_parameter", Some("q"));
    assert!(v["error"]["message"].as_str().unwrap().contains("1000"));
    assert_eq!(search(&format!("q={}", "a".repeat(1000))).status, 200, "1000 characters are allowed");
    for k in ["0", "51", "ten", "-3", "2.5"] {
        expect_error("GET", &format!("/api/search?q=x&k={k}"), 400, "invalid_parameter", Some("k"));
    }
    expect_error("GET", "/api/search?q=x&page=0", 400, "invalid_parameter", Some("page"));
    expect_error("GET", "/api/search?q=x&page=21", 400, "invalid_parameter", Some("page"));
    let v = expect_error("GET", "/api/search?q=x&mode=semantic", 400, "invalid_parameter", Some("mode"));
    assert!(v["error"]["message"].as_str().unwrap().contains("rrf, convex, dot, dense, bm25"));
    expect_error("GET", "/api/search?q=x&q=y", 400, "invalid_parameter", Some("q"));
    expect_error("GET", "/api/nothing-here", 404, "not_found", None);
    expect_error("GET", "/api", 404, "not_found", None);
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        expect_error(method, "/api/search?q=x", 405, "method_not_allowed", None);
    }
    let r = request("POST", &format!("{}/api/health", host().url()), &[], Some(b"{}"));
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, OPTIONS")));
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn odd_but_valid_queries_are_answered() {
    // Unicode, markup, identifiers, a lone operator: answered, escaped in snippets.
    for q in ["%C3%A9t%C3%A9", "%3Cscript%3Ealert(1)%3C%2Fscript%3E", "--gres%3Dnvme%3A100", "%2A", "%F0%9F%98%80"] {
        let v = ok_search(&format!("q={q}"));
        for r in v["results"].as_array().unwrap() {
            let s = r["snippet"].as_str().unwrap();
            assert!(!s.contains("<script"), "{s}");
        }
    }
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn nonsense_and_off_topic_queries_get_no_results() {
    // The nearest chunks of nonsense are not results, in the fused mode and in
    // BM25 alike (search_core::index::relevance; eval/no-match.txt).
    for q in ["xqzv+blorf", "qqqqqqqqq", "How+do+I+bake+banana+bread%3F", "who+won+the+football+world+cup"] {
        for mode in ["convex", "bm25"] {
            let v = ok_search(&format!("q={q}&mode={mode}"));
            assert_valid("SearchResponse", &v);
            assert_eq!(v["matched"], false, "{q} {mode}: {v}");
            assert_eq!(v["results"], serde_json::json!([]), "{q} {mode}");
            assert_eq!(v["has_more"], false);
        }
    }
    // What the knowledge base answers still matches: a question, an error code
    // MiniLM reads as word pieces, a word being typed.
    for qs in
        ["q=How+do+I+buy+a+parking+permit%3F", "q=VPN-504", "q=VPN-504&mode=bm25", "q=eduro&mode=bm25&partial=true"]
    {
        let v = ok_search(qs);
        assert_eq!(v["matched"], true, "{qs}: {v}");
        assert!(!v["results"].as_array().unwrap().is_empty(), "{qs}");
    }
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_typo_is_read_as_the_word_meant_and_said() {
    let urls = |v: &Value| -> Vec<String> {
        v["results"].as_array().unwrap().iter().map(|r| r["url"].as_str().unwrap().to_string()).collect()
    };
    for mode in ["convex", "bm25"] {
        let v = ok_search(&format!("q=how+do+I+by+a+parkign+permti%3F&mode={mode}&k=3"));
        assert_valid("SearchResponse", &v);
        assert_eq!(v["corrected"], "how do I by a parking permit?", "{mode}: {v}");
        assert!(urls(&v)[0].starts_with("campus/parking/buying-a-parking-permit.html#"), "{mode}: {v}");
        // The snippet marks the words searched, not the ones typed.
        let snippet = v["results"][0]["snippet"].as_str().unwrap().to_lowercase();
        assert!(snippet.contains("<mark>parking</mark>") || snippet.contains("<mark>permit</mark>"), "{v}");
        assert!(!snippet.contains("parkign") && !snippet.contains("permti"), "{v}");
    }
    // Words the knowledge base has, and codes, are searched as written.
    for qs in ["q=parking+permit", "q=VPN-504", "q=eduro&mode=bm25&partial=true"] {
        assert!(ok_search(qs).get("corrected").is_none(), "{qs}");
    }
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn health_describes_the_bundled_index() {
    let r = get(&format!("{}/api/health", host().url()));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let v = r.json();
    assert_valid("Health", &v);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(demo().dist.join("report.json")).unwrap()).unwrap();
    assert_eq!(v["index"]["chunks"], report["index"]["chunks"]);
    assert_eq!(v["index"]["dim"], 384);
    assert!(v["encoder"]["name"].as_str().unwrap().contains("all-MiniLM-L6-v2"), "{v}");
    let built = v["index"]["built"].as_str().unwrap();
    assert!(built.len() == 20 && built.ends_with('Z'), "{built}");
    let age = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
        - v["index"]["built_unix"].as_u64().unwrap();
    assert!(age < 24 * 3600, "built {age} s ago");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn cors_allows_any_origin_by_default() {
    let url = format!("{}/api/search", host().url());
    let r = request(
        "OPTIONS",
        &url,
        &[("origin", "https://www.example.edu"), ("access-control-request-method", "GET")],
        None,
    );
    assert_eq!(r.status, 204);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.header("access-control-allow-methods"), Some("GET, OPTIONS"));
    let r = request("GET", &format!("{url}?q=vpn"), &[("origin", "https://elsewhere.example")], None);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    // Errors carry the header too, so a browser can read the message.
    let r = request("GET", &format!("{url}?k=0"), &[("origin", "https://elsewhere.example")], None);
    assert_eq!((r.status, r.header("access-control-allow-origin")), (400, Some("*")));
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn cors_honours_the_allowed_origins_variable() {
    let h = start(&[("allowed_origins", "https://www.example.edu, http://localhost:8080")]);
    let url = format!("{}/api/search?q=vpn", h.url());
    let r = request("GET", &url, &[("origin", "https://www.example.edu")], None);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), Some("https://www.example.edu"));
    assert_eq!(r.header("vary"), Some("Origin"));
    // Another site is refused by the server too, not only by the browser.
    let r = request("GET", &url, &[("origin", "https://evil.example")], None);
    assert_eq!((r.status, r.header("access-control-allow-origin")), (403, None));
    // A malformed setting is reported, not ignored.
    let h = start(&[("allowed_origins", "www.example.edu")]);
    let r = get(&format!("{}/api/search?q=vpn", h.url()));
    assert_eq!(r.status, 500);
    assert!(r.text().contains("allowed_origins"), "{}", r.text());
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn concurrent_requests_all_succeed_and_agree() {
    // A host of its own: the shared one serves the other tests from the same
    // address, and their requests count against the per-address cap of 16 in
    // flight that these 16 threads fill (a 429 here was such a neighbour).
    let h = start(&[]);
    let base = h.url();
    let queries = ["reset my password", "parking permit", "eduroam wifi", "print on campus"];
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let base = base.clone();
            let q = queries[i % queries.len()].replace(' ', "+");
            std::thread::spawn(move || {
                (0..4)
                    .map(|_| {
                        let r = get(&format!("{base}/api/search?q={q}&k=3"));
                        assert_eq!(r.status, 200, "{}", r.text());
                        let v = r.json();
                        let ids: Vec<String> = v["results"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| r["chunk_id"].as_str().unwrap().to_string())
                            .collect();
                        (q.clone(), ids)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut answers: std::collections::HashMap<String, HashSet<Vec<String>>> = Default::default();
    for t in threads {
        for (q, ids) in t.join().unwrap() {
            answers.entry(q).or_default().insert(ids);
        }
    }
    assert_eq!(answers.len(), queries.len());
    for (q, set) in answers {
        assert_eq!(set.len(), 1, "{q}: different answers under concurrency: {set:?}");
    }
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn the_site_is_served_beside_the_api() {
    let base = host().url();
    let r = get(&format!("{base}/"));
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(r.text().contains("search-input"), "the header search box");
    let r = get(&format!("{base}/campus/parking/buying-a-parking-permit.html"));
    assert_eq!(r.status, 200);
    assert!(r.text().contains("parking"));
    let r = get(&format!("{base}/no/such/page.html"));
    assert_eq!(r.status, 404);
    assert!(r.header("content-type").unwrap().starts_with("text/html"), "the site's own 404 page");
    let r = get(&format!("{base}/..%2f..%2fCargo.toml"));
    assert!(r.status == 400 || r.status == 404, "{}", r.status);
    assert!(!r.text().contains("[workspace]"));
    let r = request("POST", &format!("{base}/index.html"), &[], Some(b"x"));
    assert_eq!(r.status, 405);
}
