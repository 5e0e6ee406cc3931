//! Insights through the real component: searches, chats and feedback recorded in
//! the host's SQLite database (`spin:sqlite`, `STATE/sqlite_db.db`), read back by
//! `GET /api/insights` and by `site-builder insights`; and a store that is down
//! or full never failing a search or a chat.

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::schema::assert_valid;
use crate::support::{demo, request, state_dir};

const TOKEN: &str = "insights-token-for-the-tests-0001";

fn host(cfg: impl FnOnce(&mut edge_host::HostConfig)) -> edge_host::Running {
    let d = demo();
    let mut variables = edge_host::Variables::defaults();
    variables.set("insights_token", TOKEN).unwrap();
    let mut c = edge_host::HostConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        request_timeout: Duration::from_secs(60),
        ..edge_host::HostConfig::search_fn(d.dist.join("site"), d.component.clone(), variables, state_dir())
    };
    cfg(&mut c);
    edge_host::spawn(c).unwrap()
}

fn json_post(h: &edge_host::Running, path: &str, body: &Value) -> crate::support::Resp {
    let bytes = serde_json::to_vec(body).unwrap();
    request("POST", &format!("{}{path}", h.url()), &[("content-type", "application/json")], Some(&bytes))
}

fn ask(h: &edge_host::Running, q: &str) -> Value {
    let r = json_post(
        h,
        "/api/chat",
        &json!({ "messages": [{ "role": "user", "content": q }], "visitor": "test-visitor-01" }),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_valid("ChatDone", &v);
    v
}

fn search(h: &edge_host::Running, query: &str) -> crate::support::Resp {
    let r = request("GET", &format!("{}/api/search?{query}", h.url()), &[], None);
    assert_eq!(r.status, 200, "{}", r.text());
    r
}

fn insights(h: &edge_host::Running, auth: Option<&str>) -> crate::support::Resp {
    let header = auth.map(|a| ("authorization", a));
    request("GET", &format!("{}/api/insights?since=1d", h.url()), header.as_slice(), None)
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn chats_searches_and_feedback_become_the_report() {
    let h = host(|_| {});
    let answered = chats_searches_and_feedback_are_recorded(&h);
    let id = answered["id"].as_str().unwrap().to_string();
    feedback_on_no_answer_of_ours_is_refused(&h, &id);
    let report = the_endpoint_serves_the_report_to_its_token_only(&h);
    the_report_counts_groups_and_joins_feedback(&report, &answered);
    the_database_keeps_no_page_query_and_no_address(&h);
    the_cli_renders_the_same_report(&h, &report);
    the_cli_names_bad_input(&h);
}

/// Four chats (one answered, two abstentions of one question), three searches
/// (one recorded) and a thumb then a comment on the answer; the answer's `done`.
fn chats_searches_and_feedback_are_recorded(h: &edge_host::Running) -> Value {
    let answered = ask(h, "How do I buy a parking permit?");
    assert_eq!(answered["abstained"], false);
    let id = answered["id"].as_str().expect("the done event names the answer").to_string();
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "128 random bits: {id}");
    ask(h, "Where can I renew my student ID card?");
    let swallow = ask(h, "What is the airspeed velocity of an unladen swallow?");
    assert_eq!(swallow["abstained"], true);
    ask(h, "what is the airspeed velocity of an unladen swallow");
    assert_ne!(swallow["id"], answered["id"]);
    // A search records its time of writing in Server-Timing; keystrokes and later
    // pages are not recorded.
    let r = search(h, "q=parking+permit");
    let timing = r.header("server-timing").unwrap().to_string();
    assert!(timing.contains("record;dur="), "{timing}");
    search(h, "q=parki&partial=true");
    search(h, "q=parking+permit&page=2");
    // The thumb, then the comment, on one answer.
    let fb = |comment: Option<&str>| {
        let mut body = json!({ "id": id, "rating": "down",
            "page": "http://localhost/campus/index.html?session=secret", "visitor": "test-visitor-01" });
        if let Some(c) = comment {
            body["comment"] = json!(c);
        }
        let r = json_post(h, "/api/feedback", &body);
        assert_eq!(r.status, 202, "{}", r.text());
    };
    fb(None);
    fb(Some("The permit prices are from last year"));
    answered
}

/// Feedback on an answer the function never gave is refused and kept nowhere.
fn feedback_on_no_answer_of_ours_is_refused(h: &edge_host::Running, id: &str) {
    // A made-up id, another instance's old-style id, an array read positionally.
    for body in [
        json!({ "id": "0123456789abcdef0123456789abcdef", "rating": "down", "comment": "The assistant said to call 555" }),
        json!({ "id": "5f3a9c1200000000", "rating": "up" }),
    ] {
        let r = json_post(h, "/api/feedback", &body);
        assert_eq!(r.status, 404, "{}", r.text());
        assert_valid("Error", &r.json());
        assert_eq!(r.json()["error"]["code"], "unknown_answer");
    }
    let r = json_post(h, "/api/feedback", &json!([id, "down"]));
    assert_eq!((r.status, r.json()["error"]["parameter"].as_str()), (400, Some("body")), "{}", r.text());
    // Nor may a client say what the question or the answer was.
    let r = json_post(h, "/api/feedback", &json!({ "id": id, "rating": "down", "answer": "Call 555" }));
    assert_eq!(r.status, 400, "{}", r.text());
}

/// The endpoint: no token 401, a wrong one 403, the right one the report.
fn the_endpoint_serves_the_report_to_its_token_only(h: &edge_host::Running) -> Value {
    let r = insights(h, None);
    assert_eq!(r.status, 401);
    assert_valid("Error", &r.json());
    assert_eq!(r.header("www-authenticate"), Some("Bearer realm=\"insights\""));
    assert_eq!(insights(h, Some("Bearer not-the-token-at-all")).status, 403);
    let r = insights(h, Some(&format!("Bearer {TOKEN}")));
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_valid("Insights", &v);
    v
}

/// The totals, the gap groups, the feedback beside what it rates, the pages.
fn the_report_counts_groups_and_joins_feedback(v: &Value, answered: &Value) {
    let id = answered["id"].as_str().unwrap();
    let t = &v["totals"];
    assert_eq!(
        (t["chats"].as_u64(), t["searches"].as_u64(), t["abstained"].as_u64()),
        (Some(4), Some(1), Some(2)),
        "{t:#}"
    );
    assert_eq!(
        (t["thumbs_down"].as_u64(), t["comments"].as_u64(), t["visitors"].as_u64()),
        (Some(1), Some(1), Some(1))
    );
    // The abstained question, asked twice in two spellings, is one gap group, and
    // the first; the answer rated down is a gap too.
    let gaps = v["gaps"].as_array().unwrap();
    let swallow_gap = &gaps[0];
    assert!(swallow_gap["label"].as_str().unwrap().to_lowercase().contains("swallow"), "{gaps:#?}");
    assert_eq!(swallow_gap["count"], 2);
    assert_eq!(swallow_gap["abstained"], 2);
    let permit = gaps.iter().find(|g| g["label"] == "How do I buy a parking permit?").expect("the thumbs-down gap");
    assert_eq!(permit["thumbs_down"], 1);
    assert!(permit["closest_pages"][0]["url"].as_str().unwrap().contains("parking"), "{permit:#}");
    // One feedback entry for the answer: its thumb and its comment.
    let feedback = v["feedback"].as_array().unwrap();
    assert_eq!(feedback.len(), 1);
    assert_eq!(feedback[0]["comment"], "The permit prices are from last year");
    assert_eq!(feedback[0]["answer_id"], id);
    // Shown beside the question and answer the function recorded under the id.
    assert_eq!(feedback[0]["question"], "How do I buy a parking permit?");
    assert_eq!(feedback[0]["answer"], answered["answer"]);
    let cited: Vec<&str> = answered["citations"].as_array().unwrap().iter().filter_map(|c| c["url"].as_str()).collect();
    assert!(!cited.is_empty());
    assert_eq!(feedback[0]["citations"], json!(cited));
    // Pages: the permit page was cited; the demo has pages nothing retrieved.
    let cited = v["cited_pages"].as_array().unwrap();
    assert!(cited.iter().all(|p| p["citations"].as_u64() > Some(0) || p["retrievals"].as_u64() > Some(0)));
    assert!(
        cited.iter().any(|p| p["url"].as_str().unwrap().contains("parking") && p["citations"].as_u64() >= Some(1)),
        "{cited:#?}"
    );
    assert!(!v["never_retrieved"].as_array().unwrap().is_empty());
}

/// The database holds what the README says, and not the page's query string.
fn the_database_keeps_no_page_query_and_no_address(h: &edge_host::Running) {
    let db = rusqlite::Connection::open(h.state().join("sqlite_db.db")).unwrap();
    let page: String = db.query_row("SELECT page FROM kb_feedback LIMIT 1", [], |r| r.get(0)).unwrap();
    assert_eq!(page, "/campus/index.html");
    let columns: Vec<String> = db
        .prepare("SELECT name FROM pragma_table_info('kb_events')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!columns.iter().any(|c| c.contains("addr") || c.contains("agent") || c == "ip"), "{columns:?}");
}

/// `site-builder insights --since 1d` over `h`'s state folder and the demo's
/// index, with `extra` arguments; it must succeed.
fn insights_cli(h: &edge_host::Running, extra: &[&str]) -> std::process::Output {
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["insights", "--since", "1d", "--state"])
        .arg(h.state())
        .arg("--index")
        .arg(demo().dist.join("index.bin"))
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The CLI reads the same state folder (or the deployed function): the same
/// counts, and an HTML page.
fn the_cli_renders_the_same_report(h: &edge_host::Running, v: &Value) {
    let out = h.state().join("report.html");
    let run = |extra: &[&str]| insights_cli(h, extra);
    let o = run(&["--json"]);
    let cli: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cli["totals"], v["totals"]);
    assert_eq!(cli["gaps"], v["gaps"]);
    // From the deployed function instead of its state folder (the token from the
    // environment), and refused with the server's reason when the token is wrong.
    let remote = |token: &str| {
        Command::new(env!("CARGO_BIN_EXE_site-builder"))
            .args(["insights", "--json", "--since", "1d", "--from"])
            .arg(h.url())
            .env("KB_INSIGHTS_TOKEN", token)
            .output()
            .unwrap()
    };
    let o = remote(TOKEN);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fetched: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(fetched["totals"], v["totals"]);
    assert_eq!(fetched["gaps"], v["gaps"]);
    let o = remote("not-the-token-but-long-enough");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("answered 403: the insights token is not right"));
    let o = run(&["--out", out.to_str().unwrap(), "--site", "https://help.example.edu/kb"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("answer next 1:"));
    let html = std::fs::read_to_string(&out).unwrap();
    // Page links open from wherever the report is saved.
    assert!(html.contains("href=\"https://help.example.edu/kb/campus/parking/"), "page links are not rebased");
    assert!(html.contains("unladen swallow"));
    assert!(html.contains("The permit prices are from last year"));
    assert!(html.contains("<svg"));
}

/// Bad input is named, and nothing is written.
fn the_cli_names_bad_input(h: &edge_host::Running) {
    let index = demo().dist.join("index.bin");
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["insights", "--since", "soon", "--state"])
        .arg(h.state())
        .arg("--index")
        .arg(&index)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--since: `soon`"), "{}", String::from_utf8_lossy(&o.stderr));
    let empty = state_dir();
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["insights", "--json", "--state"])
        .arg(&empty)
        .arg("--index")
        .arg(&index)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("sqlite_db.db does not exist"));
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_feedback_row_is_stored_small_and_without_the_page_query() {
    let h = host(|_| {});
    // A long question, and feedback with every field at the API's limit, in
    // 4-byte characters.
    let big = |n: usize| "\u{1F600}".repeat(n);
    let id = ask(&h, &format!("How do I buy a parking permit? {}", big(3000)))["id"].as_str().unwrap().to_string();
    let body = json!({ "id": id, "rating": "down", "comment": big(2000), "visitor": "test-visitor-01",
        "page": format!("https://x.example/a?token=s#access_token={}", big(1950)) });
    let sent = serde_json::to_vec(&body).unwrap().len();
    let r = json_post(&h, "/api/feedback", &body);
    assert_eq!(r.status, 202, "{}", r.text());
    let db = rusqlite::Connection::open(h.state().join("sqlite_db.db")).unwrap();
    let (stored, page, citations): (i64, String, String) = db
        .query_row(
            "SELECT length(CAST(coalesce(answer_id,'') || coalesce(comment,'') || coalesce(question,'') || coalesce(answer,'') \
             || citations || coalesce(page,'') || coalesce(visitor,'') AS BLOB)), page, citations FROM kb_feedback",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    eprintln!("feedback row: {sent} bytes sent, {stored} bytes stored");
    assert!(stored < 32_000, "{stored} bytes stored");
    assert_eq!(page, "/a");
    assert!(serde_json::from_str::<Vec<String>>(&citations).unwrap().len() <= 10);
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_store_that_is_down_or_full_fails_nothing() {
    // Down: the database is not granted (as if the manifest lacked it).
    let down = host(|c| c.sqlite_databases.clear());
    // Full: a quota of a few pages beyond the schema's (19 of 4 KiB since the
    // page ratings and rate-limit tables; a quarter of the quota is the
    // write-ahead log's), filled by the first writes.
    let full = host(|c| c.sqlite_max_bytes = Some(128 * 1024));
    for h in [&down, &full] {
        for i in 0..40 {
            let q = format!("How do I buy a parking permit number {i}? {}", "padding ".repeat(100));
            search(h, &format!("q={}", q.replace(' ', "+")));
        }
        let answered = ask(h, "How do I buy a parking permit?");
        assert_eq!(answered["abstained"], false);
        let r = json_post(h, "/api/feedback", &json!({ "id": answered["id"], "rating": "up", "comment": "ok" }));
        // Down: the platform's log keeps it (202). Full: kept beside the answer
        // if the answer still fitted (202), else a clear 404, nothing failing.
        let recorded = rusqlite::Connection::open(h.state().join("sqlite_db.db")).is_ok_and(|db| {
            db.query_row("SELECT COUNT(*) FROM kb_answers WHERE answer_id = ?1", [answered["id"].as_str()], |r| {
                r.get::<_, i64>(0)
            })
            .is_ok_and(|n| n == 1)
        });
        if std::ptr::eq(h, &down) || recorded {
            assert_eq!(r.status, 202, "{}", r.text());
        } else {
            assert_eq!((r.status, r.json()["error"]["code"].as_str()), (404, Some("unknown_answer")), "{}", r.text());
        }
    }
    // The full store kept what fitted, and the report still reads it.
    let r = insights(&full, Some(&format!("Bearer {TOKEN}")));
    assert_eq!(r.status, 200, "{}", r.text());
    let searches = r.json()["totals"]["searches"].as_u64().unwrap();
    assert!(searches > 0 && searches < 40, "{searches}");
    // The store that is down says so on the report's endpoint, as a 503.
    let r = insights(&down, Some(&format!("Bearer {TOKEN}")));
    assert_eq!(r.status, 503, "{}", r.text());
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn recording_off_records_nothing_and_the_report_is_not_served_without_a_token() {
    let d = demo();
    let mut variables = edge_host::Variables::defaults();
    variables.set("insights_recording", "off").unwrap();
    let h = edge_host::spawn(edge_host::HostConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        ..edge_host::HostConfig::search_fn(d.dist.join("site"), d.component.clone(), variables, state_dir())
    })
    .unwrap();
    search(&h, "q=parking");
    ask(&h, "How do I buy a parking permit?");
    assert!(!h.state().join("sqlite_db.db").exists(), "recording off must not create the database");
    let r = insights(&h, Some("Bearer anything-at-all-really"));
    assert_eq!(r.status, 403);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("insights_token"));
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn llm_answers_are_recorded_streamed_or_not_and_a_failed_llm_counts_as_degraded() {
    use crate::support::llm::{answer, search, ScriptedLlm};
    // Chat 1 (streamed): a search, then a cited answer. Chat 2 (JSON): the script
    // is over, the LLM answers 500, the extractive fallback answers.
    let llm = ScriptedLlm::start(vec![search("parking permit"), answer("Buy the permit online with your card [1].")]);
    let base = llm.base_url();
    let h = host(|c| {
        for (n, v) in [
            ("llm_base_url", base.as_str()),
            ("llm_model", "scripted-model"),
            ("llm_timeout_secs", "2"),
            ("llm_allowed_outbound_host", "http://127.0.0.1:*"),
        ] {
            c.variables.set(n, v).unwrap();
        }
    });
    let streamed = json_post(
        &h,
        "/api/chat",
        &json!({ "messages": [{ "role": "user", "content": "How do I pay for a parking permit?" }], "stream": true }),
    );
    assert_eq!(streamed.status, 200);
    let events = crate::chat::parse_sse(&streamed.text());
    let done = &events.iter().find(|e| e.event == "done").expect("a done event").data;
    assert_eq!(done["degraded"], false, "{done}");
    assert!(done["id"].as_str().is_some_and(|id| id.len() == 32), "{done}");
    let fallback = ask(&h, "Where do I park on campus?");
    assert_eq!(fallback["degraded"], true, "{fallback}");
    // The streamed chat is written once its stream has ended: poll briefly.
    let mut report = Value::Null;
    for _ in 0..50 {
        let r = insights(&h, Some(&format!("Bearer {TOKEN}")));
        assert_eq!(r.status, 200, "{}", r.text());
        report = r.json();
        if report["totals"]["chats"] == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let t = &report["totals"];
    assert_eq!((t["chats"].as_u64(), t["degraded"].as_u64()), (Some(2), Some(1)), "{t:#}");
    let cited = report["cited_pages"].as_array().unwrap();
    assert!(cited.iter().any(|p| p["url"].as_str().unwrap().contains("parking") && p["citations"].as_u64() >= Some(1)));
}

/// A question carrying terminal escape sequences (clear the screen, retitle the
/// window, a hyperlink, colours, their C1 forms, a bidirectional override) is
/// recorded as asked, but `site-builder insights` prints none of them: not in the
/// gaps it lists on standard error, not raw in its JSON on standard output (the
/// same value, as `\u` escapes).
#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn terminal_escapes_in_questions_reach_no_terminal() {
    let h = host(|_| {});
    let question = "\u{1b}[2J\u{1b}]0;pwned\u{7}airspeed of an \u{1b}[5munladen\u{1b}[0m swallow \
                    \u{9b}31mc1 \u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\ \u{202e}txt.exe";
    assert_eq!(ask(&h, question)["abstained"], true);
    let run = |extra: &[&str]| insights_cli(&h, extra);
    // Raw control bytes: C0 but newline and tab, DEL, and C1 and the bidi
    // overrides as UTF-8.
    let raw = |bytes: &[u8]| -> Vec<String> {
        let text = String::from_utf8_lossy(bytes);
        text.chars()
            .filter(|c| (c.is_control() && *c != '\n' && *c != '\t') || ('\u{202a}'..='\u{202e}').contains(c))
            .map(|c| format!("U+{:04X}", c as u32))
            .collect()
    };
    let out = h.state().join("report.html");
    let o = run(&["--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("answer next 1:") && stderr.contains("unladen swallow"), "{stderr}");
    assert_eq!(raw(&o.stderr), Vec::<String>::new(), "control characters on standard error: {stderr:?}");
    let o = run(&["--json"]);
    assert_eq!(raw(&o.stdout), Vec::<String>::new(), "control characters on standard output");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let label = v["gaps"][0]["label"].as_str().unwrap();
    assert!(label.contains('\u{1b}') && label.contains("unladen"), "the data keeps what was asked: {label:?}");
}

/// The URLs of the demo's pages the index has (what a page's rating may name).
fn indexed_pages() -> std::collections::BTreeSet<String> {
    let chunks = std::fs::read_to_string(demo().dist.join("chunks.jsonl")).unwrap();
    search_core::chunk::decode_jsonl(&chunks).unwrap().into_iter().map(|c| c.url).collect()
}

/// "Was this helpful?" on pages: ratings of pages the index has are kept, each
/// reader once per page, and reported worst first with their comments (escaped
/// in the HTML); a page the site does not have, a comment over the limit or a
/// rating that is neither is refused with a code naming the field, and nothing
/// of it is kept.
#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn page_ratings_are_checked_kept_and_reported_worst_first() {
    let h = host(|_| {});
    let pages = indexed_pages();
    let (permit, vpn) = ("campus/parking/buying-a-parking-permit.html", "it-services/vpn.html");
    assert!(pages.contains(permit) && pages.contains(vpn), "{pages:?}");
    let rate = |page: &str, rating: &str, comment: Option<&str>, visitor: Option<&str>| {
        let mut body = json!({ "page": page, "rating": rating });
        if let Some(c) = comment {
            body["comment"] = json!(c);
        }
        if let Some(v) = visitor {
            body["visitor"] = json!(v);
        }
        json_post(&h, "/api/feedback", &body)
    };
    let hostile = "<script>alert('rated')</script> The semester price is missing";
    for (page, rating, comment, visitor) in [
        (permit, "up", None, Some("test-visitor-01")),
        // The same reader changes their mind: their last answer counts.
        (permit, "down", Some(hostile), Some("test-visitor-01")),
        (permit, "down", None, None),
        (permit, "up", None, Some("test-visitor-02")),
        (vpn, "up", Some("Worked first time"), None),
    ] {
        let r = rate(page, rating, comment, visitor);
        assert_eq!(r.status, 202, "{}", r.text());
        assert_eq!(r.json()["status"], "recorded");
    }
    // Refused, each naming its field: a page the site does not have (made up,
    // written as a path from the host's root, or an article the index has no
    // chunk of, which shows no block), a comment over 500 characters, a rating
    // that is neither.
    assert!(!pages.contains("campus/index.html"));
    let limit = search_service::insights::record::MAX_PAGE_COMMENT_CHARS;
    let long = "é".repeat(limit + 1);
    for (r, code, field) in [
        (rate("campus/no-such-page.html", "up", None, None), "unknown_page", "page"),
        (rate(&format!("/{permit}"), "up", None, None), "unknown_page", "page"),
        (rate("campus/index.html", "down", None, None), "unknown_page", "page"),
        (rate(permit, "down", Some(&long), None), "invalid_parameter", "comment"),
        (rate(permit, "sideways", None, None), "invalid_parameter", "rating"),
    ] {
        assert_eq!(r.status, 400, "{}", r.text());
        assert_valid("Error", &r.json());
        let e = &r.json()["error"];
        assert_eq!((e["code"].as_str(), e["parameter"].as_str()), (Some(code), Some(field)), "{}", r.text());
    }
    assert!(rate(permit, "down", Some(&long[..2 * limit]), None).status == 202, "at the limit it is taken");
    let db = rusqlite::Connection::open(h.state().join("sqlite_db.db")).unwrap();
    let kept: i64 = db.query_row("SELECT COUNT(*) FROM kb_page_feedback", [], |r| r.get(0)).unwrap();
    assert_eq!(kept, 6, "the five ratings and the one at the limit; nothing refused");
    let events: i64 = db.query_row("SELECT COUNT(*) FROM kb_events", [], |r| r.get(0)).unwrap();
    assert_eq!(events, 0, "a rating is not a question");

    // The report: the permit page first (1 yes, 3 no), its newest comment first.
    let r = insights(&h, Some(&format!("Bearer {TOKEN}")));
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_valid("Insights", &v);
    let rated = v["pages_rated"].as_array().unwrap();
    let got: Vec<(&str, u64, u64)> = rated
        .iter()
        .map(|p| (p["url"].as_str().unwrap(), p["yes"].as_u64().unwrap(), p["no"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, [(permit, 1, 3), (vpn, 1, 0)]);
    assert!(rated[0]["title"].as_str().unwrap().to_lowercase().contains("parking"), "{rated:#?}");
    assert_eq!(rated[0]["comments"][1]["comment"], hostile);
    assert_eq!((v["totals"]["searches"].as_u64(), v["totals"]["thumbs_down"].as_u64()), (Some(0), Some(0)));
    // The CLI: the same ratings, the comment escaped in the page.
    let o = insights_cli(&h, &["--json"]);
    let cli: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cli["pages_rated"], v["pages_rated"]);
    let out = h.state().join("rated.html");
    let o = insights_cli(&h, &["--out", out.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("2 pages rated by readers; least helpful: {permit}")));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("&lt;script&gt;alert(") && html.contains(")&lt;/script&gt; The semester price is missing"));
    assert!(!html.contains("<script>alert"), "a comment is text, never markup");
}

/// A flood from one address (and a few requests from a second) past the search
/// limit: every refusal is a 429, but insights keep one row per client and
/// minute (two if the flood straddles a minute), counting a few refusals
/// exactly and a flood at least half right; no address is stored; refused
/// requests are not searches; and the report names the variable to raise.
#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_flood_of_refused_requests_is_one_row_per_client_and_minute() {
    let h = host(|c| c.variables.set("search_rate_limit", "5").unwrap());
    let url = format!("{}/api/search?q=parking+permit&mode=bm25", h.url());
    let lab = crate::support::get;
    // The second client: the same host from another loopback address.
    let other = kb_common::http::blocking_client()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let flood = 200;
    let started = std::time::Instant::now();
    let lab_statuses: Vec<u16> = (0..flood).map(|_| lab(&url).status).collect();
    let other_statuses: Vec<u16> = (0..12).map(|_| other.get(&url).send().unwrap().status().as_u16()).collect();
    let elapsed = started.elapsed();
    let refused = |s: &[u16]| s.iter().filter(|&&c| c == 429).count() as i64;
    let (lab_refused, other_refused) = (refused(&lab_statuses), refused(&other_statuses));
    assert!(lab_statuses.iter().chain(&other_statuses).all(|&c| c == 200 || c == 429));
    assert!(lab_refused >= flood as i64 - 10 && other_refused >= 2, "{lab_refused} {other_refused}");

    let db = rusqlite::Connection::open(h.state().join("sqlite_db.db")).unwrap();
    let rows: Vec<(i64, String, String, i64)> = db
        .prepare("SELECT time, bucket, client, refused FROM kb_rate_limited ORDER BY client, time")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    eprintln!(
        "rate-limit flood: {flood} + 12 requests in {:.1} s, {lab_refused} + {other_refused} refused, {} rows: {rows:?}",
        elapsed.as_secs_f64(),
        rows.len()
    );
    let clients: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(clients.len(), 2, "{rows:?}");
    for c in &clients {
        let mine: Vec<&(i64, String, String, i64)> = rows.iter().filter(|r| r.2 == *c).collect();
        let counted: i64 = mine.iter().map(|r| r.3).sum();
        // Which client a pseudonym is cannot be read from the store: by its count.
        let truly = if counted > other_refused { lab_refused } else { other_refused };
        assert!(mine.len() <= 2, "one row per minute, the flood lasting under two: {mine:?}");
        assert!(mine.iter().all(|r| r.1 == "search" && r.0 % 60 == 0), "{mine:?}");
        assert!(counted <= truly && 2 * counted >= truly, "{counted} counted of {truly} refused");
        if truly <= search_fn::limit::EXACT_REFUSALS as i64 {
            assert_eq!(counted, truly, "a few refusals are counted exactly");
        }
        assert!(c.len() == 24 && c.bytes().all(|b| b.is_ascii_hexdigit()), "a pseudonym, not an address: {c}");
    }
    let dump: String =
        db.query_row("SELECT group_concat(client || bucket) FROM kb_rate_limited", [], |r| r.get(0)).unwrap();
    assert!(!dump.contains("127.0.0"), "{dump}");

    // The report: refused requests are not searches; the refusals, the two
    // clients, and the variable to raise.
    let r = insights(&h, Some(&format!("Bearer {TOKEN}")));
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_valid("Insights", &v);
    let served = lab_statuses.iter().chain(&other_statuses).filter(|&&c| c == 200).count() as u64;
    assert_eq!(v["totals"]["searches"].as_u64(), Some(served), "{:#}", v["totals"]);
    assert!(v["gaps"].as_array().unwrap().is_empty() && v["top_questions"][0]["count"].as_u64() == Some(served));
    let rl = &v["rate_limited"];
    let recorded: i64 = rows.iter().map(|r| r.3).sum();
    assert_eq!((rl["refused"].as_i64(), rl["clients"].as_u64()), (Some(recorded), Some(2)), "{rl:#}");
    assert_eq!(rl["buckets"][0]["variable"], "search_rate_limit");
    assert_eq!(rl["buckets"][0]["limit"], 5);
    assert!(rl["busiest_client_refused"].as_i64().unwrap() * 2 >= lab_refused, "{rl:#}");
    let out = h.state().join("limited.html");
    let o = insights_cli(&h, &["--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("raise `search_rate_limit` (now 5 a minute per address)"), "{stderr}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("<code>search_rate_limit</code>") && html.contains("from 2 clients"), "the report's section");
}
