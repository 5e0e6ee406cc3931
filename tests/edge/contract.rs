//! `openapi.yaml` against the real component: every schema compiles as JSON
//! Schema 2020-12; every Server-Sent Event the agent emits (extractive, and over
//! an LLM: `search`, `sources`, `token`, `error`, `done`) validates against
//! `ChatEvent` and comes in the documented order; the schemas accept exactly the
//! request bodies the function accepts (and "blank" means the same to both);
//! past each endpoint's own rate limit the 429 is the documented one; and
//! Schemathesis generates requests from the file and checks every answer
//! (tests/contract: its pinned version and settings), over five seeds with the
//! limits raised, and once more with every limit at 1 so that it checks the 429s.
//!
//! Schemathesis comes from PyPI (`tests/contract/install` puts it in a venv and
//! prints `st`'s path; scripts/test exports it as KB_SCHEMATHESIS).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use crate::support::llm::{answer, search, ScriptedLlm, Step};
use crate::support::schema::{assert_event_valid, assert_valid, check, check_event, openapi, validator};
use crate::support::{repo, request, start, Resp};

/// The `(event, data)` pairs of an event stream, data as sent (one line of text).
fn events(text: &str) -> Vec<(String, String)> {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let pieces = vec![Ok::<_, std::io::Error>(bytes::Bytes::copy_from_slice(text.as_bytes()))];
    let parsed = futures::executor::block_on(futures::stream::iter(pieces).eventsource().collect::<Vec<_>>());
    parsed.into_iter().map(|e| e.map(|e| (e.event, e.data)).expect("an event stream")).collect()
}

fn post(url: &str, path: &str, body: &Value) -> Resp {
    let bytes = serde_json::to_vec(body).unwrap();
    request("POST", &format!("{url}{path}"), &[("content-type", "application/json")], Some(&bytes))
}

/// Streams an answer to `question` from the host at `url`; checks every event
/// against the contract and the order it documents; returns the event names and
/// the `done` object.
fn stream(url: &str, question: &str) -> (Vec<String>, Value) {
    let r = post(url, "/api/chat", &json!({ "messages": [{ "role": "user", "content": question }], "stream": true }));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.header("content-type").unwrap().starts_with("text/event-stream"));
    let events = events(&r.text());
    for (event, data) in &events {
        assert_event_valid(event, data);
    }
    let done: Value = events.last().and_then(|e| serde_json::from_str(&e.1).ok()).unwrap_or_default();
    let names: Vec<String> = events.into_iter().map(|e| e.0).collect();
    // The documented order: `done` once and last, `error` at most once, a
    // `sources` before the first `token`.
    let count = |n: &str| names.iter().filter(|x| *x == n).count();
    assert_eq!(count("done"), 1, "{names:?}");
    assert_eq!(names.last().map(String::as_str), Some("done"), "{names:?}");
    assert!(count("error") <= 1, "{names:?}");
    let first = |n: &str| names.iter().position(|x| x == n);
    assert!(first("sources").is_some(), "{names:?}");
    assert!(first("token").is_none_or(|t| first("sources").is_some_and(|s| s < t)), "{names:?}");
    (names, done)
}

/// Every rate-limit variable the application declares (`*_rate_limit`), at `value`.
fn limits_at(value: &'static str) -> Vec<(&'static str, &'static str)> {
    edge_host::variables::DECLARED
        .iter()
        .filter(|(n, _)| n.ends_with("_rate_limit"))
        .map(|(n, _)| (*n, value))
        .collect()
}

/// The Spin variables that raise every rate limit: these tests (and Schemathesis'
/// bursts, thousands of requests a minute from one address) are not what the
/// limits are for; `rate_limited_answers_follow_the_contract` is. By hand, the
/// same through the environment: `SPIN_VARIABLE_SEARCH_RATE_LIMIT=1000000` and so
/// on for `chat_`, `feedback_` and `insights_rate_limit`.
fn unlimited() -> Vec<(&'static str, &'static str)> {
    limits_at("1000000")
}

/// The insights token of the contract's host: Schemathesis sends it (`--auth`) to
/// reach the report's 200, and leaves it out to check the 401.
const INSIGHTS_TOKEN: &str = "contract-insights-token-0001";

/// A host of these tests' own (not the shared one, whose limits other tests use).
fn host() -> &'static edge_host::Running {
    static HOST: std::sync::OnceLock<edge_host::Running> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let mut vars = unlimited();
        vars.push(("insights_token", INSIGHTS_TOKEN));
        start(&vars)
    })
}

#[test]
fn every_schema_compiles_and_the_event_schema_is_not_vacuous() {
    for name in openapi()["components"]["schemas"].as_object().unwrap().keys() {
        validator(name);
    }
    assert!(check_event("token", r#"{"text":"a"}"#).is_empty());
    for (event, data) in [
        ("tokens", r#"{"text":"a"}"#),
        ("token", r#"{"text":1}"#),
        ("token", r#"{"text":"a","extra":true}"#),
        ("token", "not json"),
        ("done", "{}"),
    ] {
        assert!(!check_event(event, data).is_empty(), "{event} {data} passed");
    }
    assert!(!check("Health", &json!({ "status": "ok" })).is_empty());
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Schemathesis (tests/contract/install): scripts/test runs it"]
fn every_event_of_the_extractive_agent_is_documented() {
    let url = host().url();
    for question in [
        "How do I buy a parking permit?",
        "How do I connect to eduroam? How do I buy a parking permit?",
        "What is the airspeed velocity of an unladen swallow?",
    ] {
        let (names, done) = stream(&url, question);
        assert!(names.iter().any(|n| n == "search"), "{names:?}");
        assert_eq!(done["extractive"], true, "{done}");
    }
}

#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Schemathesis (tests/contract/install): scripts/test runs it"]
fn every_event_of_the_llm_agent_is_documented() {
    // The LLM's own events (it searches, then streams a cited answer), and a
    // failure (the `error` event, then the extractive fallback's events).
    let runs: Vec<(Vec<Step>, &[&str], bool)> = vec![
        (
            vec![search("parking permit"), answer("Buy the permit online with your card [1].")],
            &["search", "sources", "token", "done"],
            false,
        ),
        (
            vec![Step::Status(500, r#"{"error":"overloaded at provider-x"}"#.into())],
            &["sources", "error", "done"],
            true,
        ),
    ];
    for (steps, expected, degraded) in runs {
        let llm = ScriptedLlm::start(steps);
        let base = llm.base_url();
        let mut vars =
            vec![("llm_base_url", base.as_str()), ("llm_model", "scripted-model"), ("llm_timeout_secs", "2")];
        vars.extend(unlimited());
        let host = start(&vars);
        let (names, done) = stream(&host.url(), "How do I buy a parking permit?");
        for e in expected {
            assert!(names.iter().any(|n| n == e), "no {e} in {names:?}");
        }
        assert_eq!(done["degraded"], degraded, "{done}");
    }
    // The `error` event is generic (ChatError): nothing of what the provider said.
    let llm = ScriptedLlm::start(vec![Step::Status(500, r#"{"error":"overloaded at provider-x"}"#.into())]);
    let base = llm.base_url();
    let mut vars = vec![("llm_base_url", base.as_str()), ("llm_model", "scripted-model"), ("llm_timeout_secs", "2")];
    vars.extend(unlimited());
    let host = start(&vars);
    let body = json!({ "messages": [{ "role": "user", "content": "How do I buy a parking permit?" }], "stream": true });
    let text = post(&host.url(), "/api/chat", &body).text();
    let (_, data) = events(&text).into_iter().find(|e| e.0 == "error").expect("an error event");
    for leak in ["provider-x", "overloaded", "500", "127.0.0.1"] {
        assert!(!data.contains(leak), "the error event tells the client `{leak}`: {data}");
    }
}

/// Chat bodies, valid and not, for [`the_schemas_accept_exactly_the_bodies_the_function_accepts`].
fn chat_bodies() -> Vec<(&'static str, &'static str, Value)> {
    let user = |c: &str| json!({ "role": "user", "content": c });
    let assistant = |c: &str| json!({ "role": "assistant", "content": c });
    vec![
        ("/api/chat", "ChatRequest", json!([[user("Where can I park?")], false])),
        ("/api/chat", "ChatRequest", json!({ "messages": [["user", "Where can I park?"]] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Where can I park?")] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Where can I park?")], "stream": false })),
        ("/api/chat", "ChatRequest", json!({ "messages": [] })),
        ("/api/chat", "ChatRequest", json!({ "messages": vec![user("Where can I park?"); 41] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user(&"a".repeat(4001))] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Where can I park?")], "stream": null })),
        ("/api/chat", "ChatRequest", json!({ "messages": [{ "role": "system", "content": "hi" }] })),
        ("/api/chat", "ChatRequest", json!({ "question": "Where can I park?" })),
        // A user's message is never blank, wherever it is; an answer may be empty.
        ("/api/chat", "ChatRequest", json!({ "messages": [user("")] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user(" \t\u{3000}\u{85}")] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user(""), assistant("a"), user("Where can I park?")] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?"), assistant(""), user("And bikes?")] })),
        // Not white space to Rust's trim, so not blank to the pattern either
        // (Python's `\s` would say otherwise of U+001C).
        ("/api/chat", "ChatRequest", json!({ "messages": [user("\u{1c}")] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("\u{feff}")] })),
        // `visitor`: a string of at most 64 characters, never null.
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "visitor": "v-12345678" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "visitor": "é".repeat(64) })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "visitor": "v".repeat(65) })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "visitor": null })),
        // `lang`: the reader's language, a tag, `all` or empty; never null.
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": "de" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": "zh_CN" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": "all" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": "" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": "de DE" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": "-de" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": "abcdefghijklmnop" })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": null })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Parking?")], "lang": 7 })),
    ]
}

/// What the schema says of a body agrees with what the function answers.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Schemathesis (tests/contract/install): scripts/test runs it"]
fn the_schemas_accept_exactly_the_bodies_the_function_accepts() {
    let url = host().url();
    let user = |c: &str| json!({ "role": "user", "content": c });
    let assistant = |c: &str| json!({ "role": "assistant", "content": c });
    // Feedback names an answer the function gave: a real id, from a chat.
    let answered = post(&url, "/api/chat", &json!({ "messages": [user("Where can I park?")] })).json();
    let id = answered["id"].as_str().expect("the answer's id").to_string();
    // A page's feedback names a page of the site: one its search finds.
    let found = crate::support::get(&format!("{url}/api/search?q=parking+permit&k=1&mode=bm25")).json();
    let page = found["results"][0]["url"].as_str().unwrap().split('#').next().unwrap().to_string();
    let mut cases: Vec<(&str, &str, Value)> = vec![
        ("/api/feedback", "PageFeedback", json!({ "page": page, "rating": "up" })),
        ("/api/feedback", "PageFeedback", json!({ "page": page, "rating": "down", "comment": "é".repeat(500) })),
        ("/api/feedback", "PageFeedback", json!({ "page": page, "rating": "down", "comment": "é".repeat(501) })),
        ("/api/feedback", "PageFeedback", json!({ "page": page, "rating": "down", "comment": null })),
        ("/api/feedback", "PageFeedback", json!({ "page": page, "rating": "sideways" })),
        ("/api/feedback", "PageFeedback", json!({ "page": page, "rating": "up", "question": "q" })),
        ("/api/feedback", "PageFeedback", json!({ "page": page })),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": "up" })),
        ("/api/feedback", "Feedback", json!({ "rating": "up" })),
        (
            "/api/feedback",
            "Feedback",
            json!({ "rating": "down", "id": id, "comment": "wrong room", "page": "/x.html" }),
        ),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": "up", "citations": ["/a.html#b"] })),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": "up", "answer": "It is free." })),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": "up", "page": null })),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": "up", "comment": null })),
        ("/api/feedback", "Feedback", json!({ "id": null, "rating": "up" })),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": null })),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": "sideways" })),
        ("/api/feedback", "Feedback", json!({ "id": id, "rating": "up", "mood": "great" })),
        ("/api/feedback", "Feedback", json!({ "rating": "up", "id": "x".repeat(101) })),
        ("/api/feedback", "Feedback", json!({})),
        ("/api/feedback", "Feedback", json!([id, "up"])),
    ];
    cases.extend(chat_bodies());
    // The one rule the schema cannot state (hooks.py): the last message is the
    // user's. Valid to the schema, refused naming `messages`.
    let ends_with_an_answer = json!({ "messages": [user("Parking?"), assistant("Buy a permit.")] });
    assert!(check("ChatRequest", &ends_with_an_answer).is_empty());
    let r = post(&url, "/api/chat", &ends_with_an_answer);
    assert_eq!((r.status, r.json()["error"]["parameter"].as_str()), (400, Some("messages")), "{}", r.text());
    // Valid feedback on an answer never given: the documented 404, naming `id`.
    let made_up = json!({ "id": "0123456789abcdef0123456789abcdef", "rating": "up" });
    assert!(check("Feedback", &made_up).is_empty());
    let r = post(&url, "/api/feedback", &made_up);
    assert_eq!((r.status, r.json()["error"]["code"].as_str()), (404, Some("unknown_answer")), "{}", r.text());
    assert_documented("/api/feedback", "POST", &r);
    // Valid feedback on a page the site does not have: the documented 400, naming `page`.
    let no_page = json!({ "page": "campus/no-such-page.html", "rating": "up" });
    assert!(check("PageFeedback", &no_page).is_empty());
    let r = post(&url, "/api/feedback", &no_page);
    let e = &r.json()["error"];
    assert_eq!((r.status, e["code"].as_str(), e["parameter"].as_str()), (400, Some("unknown_page"), Some("page")));
    assert_documented("/api/feedback", "POST", &r);
    for (path, schema, body) in cases {
        let valid = check(schema, &body).is_empty();
        let r = post(&url, path, &body);
        let accepted = (200..300).contains(&r.status);
        assert_eq!(accepted, valid, "{path} {body}: the schema says valid={valid}, the function answered {}", r.text());
        if !accepted {
            assert_eq!(r.status, 400, "{}", r.text());
            // A field of the wrong type (null included) is named.
            if let Some(field) = body
                .as_object()
                .filter(|o| path == "/api/feedback" || o.contains_key("lang"))
                .and_then(|o| o.iter().find(|(_, v)| v.is_null()).map(|(k, _)| k))
            {
                assert_eq!(r.json()["error"]["parameter"], field.as_str(), "{}", r.text());
            }
        }
    }
}

/// A query parameter's text as the contract's type reads it: an integer is
/// decimal digits, a boolean `true` or `false`; any other text stays a string
/// (which an integer or boolean schema refuses).
fn as_typed(schema: &Value, text: &str) -> Value {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        _ => vec![],
    };
    if types.contains(&"integer") && !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<u64>() {
            return json!(n);
        }
    }
    if types.contains(&"boolean") && (text == "true" || text == "false") {
        return json!(text == "true");
    }
    json!(text)
}

/// What the parameter schemas say of a query agrees with what the function
/// answers: accepted (2xx) exactly when every parameter is valid, else 400 naming
/// the parameter. The cases are the edges: a boolean's other spellings (empty,
/// `1`, `True`), integers with signs, spaces and zeros, blank and long queries,
/// and `since`'s forms.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Schemathesis (tests/contract/install): scripts/test runs it"]
fn the_parameter_schemas_accept_exactly_the_queries_the_function_accepts() {
    let url = host().url();
    let doc = openapi();
    let auth = format!("Bearer {INSIGHTS_TOKEN}");
    let long = "a".repeat(1000);
    let cases: Vec<(&str, &str, String)> = [
        ("/api/search", "partial", "true"),
        ("/api/search", "partial", "false"),
        ("/api/search", "partial", ""),
        ("/api/search", "partial", "1"),
        ("/api/search", "partial", "0"),
        ("/api/search", "partial", "True"),
        ("/api/search", "partial", "yes"),
        ("/api/search", "k", "5"),
        ("/api/search", "k", "05"),
        ("/api/search", "k", "+5"),
        ("/api/search", "k", " 5"),
        ("/api/search", "k", "5.0"),
        ("/api/search", "k", "51"),
        ("/api/search", "k", ""),
        ("/api/search", "page", "20"),
        ("/api/search", "page", "0"),
        ("/api/search", "mode", ""),
        ("/api/search", "mode", "bm25"),
        ("/api/search", "mode", "BM25"),
        ("/api/search", "mode", " bm25"),
        ("/api/search", "mode", " "),
        ("/api/insights", "since", "30d"),
        ("/api/insights", "since", "all"),
        ("/api/insights", "since", "2026-11-01"),
        ("/api/insights", "since", "ALL"),
        ("/api/insights", "since", " 30d"),
        ("/api/insights", "since", "030d"),
        ("/api/insights", "since", "1234567d"),
        ("/api/insights", "since", "2026-1-01"),
    ]
    .into_iter()
    .map(|(path, name, value)| (path, name, value.to_string()))
    .chain(
        [
            ("q", long.clone()),
            ("q", format!(" {long}")),
            ("q", " parking ".into()),
            ("q", "\u{1c}".into()),
            ("q", "\u{3000}\t".into()),
            ("q", "".into()),
        ]
        .into_iter()
        .map(|(name, value)| ("/api/search", name, value)),
    )
    .collect();
    for (path, name, value) in &cases {
        let params = doc["paths"][*path]["get"]["parameters"].as_array().unwrap();
        let schema = &params.iter().find(|p| p["name"] == *name).unwrap()["schema"];
        // Its references resolve inside the document's components; formats
        // (`date`) are asserted.
        let root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "components": doc["components"],
            "allOf": [schema],
        });
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .unwrap();
        let valid = validator.is_valid(&as_typed(schema, value));
        // `q` is required: the other cases send a plain one beside theirs.
        let mut pairs = vec![(*name, value.as_str())];
        if *path == "/api/search" && *name != "q" {
            pairs.insert(0, ("q", "parking"));
        }
        let target = reqwest::Url::parse_with_params(&format!("{url}{path}"), &pairs).unwrap();
        let r = request("GET", target.as_str(), &[("authorization", auth.as_str())], None);
        let accepted = (200..300).contains(&r.status);
        assert_eq!(
            accepted,
            valid,
            "{path} {name}={value:?}: the schema says valid={valid}, the function answered {}",
            r.text()
        );
        if !accepted {
            let e = &r.json()["error"];
            assert_eq!((r.status, e["parameter"].as_str()), (400, Some(*name)), "{path} {name}={value:?}: {e}");
        }
    }
}

/// "Blank" means one thing to the contract and the function: the `pattern` of `q`
/// and of a user's `content` needs a character outside exactly the set Rust's
/// `str::trim` removes (Unicode's White_Space), whatever regex dialect reads it.
#[test]
fn blank_is_the_same_to_the_contract_and_the_function() {
    let doc = openapi();
    let q =
        doc["paths"]["/api/search"]["get"]["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "q").unwrap()
            ["schema"]["pattern"]
            .clone();
    let branches = doc["components"]["schemas"]["ChatRequest"]["properties"]["messages"]["items"]["oneOf"].clone();
    let user = branches.as_array().unwrap().iter().find(|b| b["properties"]["role"]["const"] == "user").unwrap();
    let content = user["properties"]["content"]["pattern"].clone();
    assert_eq!(q, content, "one pattern for both");
    assert_eq!(user["properties"]["content"]["minLength"], 1);
    let pattern = jsonschema::validator_for(&json!({ "type": "string", "pattern": q })).unwrap();
    // Every character of the Basic Multilingual Plane and a few beyond, alone
    // and between spaces.
    let chars = (0u32..0x1_0000).chain([0x1_0000, 0x1_f600, 0xe_0001, 0x10_ffff]).filter_map(char::from_u32);
    let mut checked = 0;
    for c in chars {
        for s in [c.to_string(), format!(" {c}\u{3000}")] {
            assert_eq!(pattern.is_valid(&json!(s)), !search_fn::api::is_blank(&s), "U+{:04X}", c as u32);
        }
        checked += 1;
    }
    assert!(checked > 63_000);
}

/// A request to each limited endpoint (valid, so that what refuses the second one
/// is the limit alone).
fn limited_request(url: &str, bucket: search_fn::limit::Bucket, answer_id: &str) -> Resp {
    use search_fn::limit::Bucket;
    let origin = ("origin", "https://elsewhere.example");
    let json = ("content-type", "application/json");
    let auth = format!("Bearer {INSIGHTS_TOKEN}");
    match bucket {
        Bucket::Search => request("GET", &format!("{url}/api/search?q=parking&mode=bm25"), &[origin], None),
        Bucket::Chat => {
            let body = json!({ "messages": [{ "role": "user", "content": "How do I buy a parking permit?" }] });
            request("POST", &format!("{url}/api/chat"), &[origin, json], Some(&serde_json::to_vec(&body).unwrap()))
        }
        Bucket::Feedback => {
            let body = serde_json::to_vec(&json!({ "id": answer_id, "rating": "up" })).unwrap();
            request("POST", &format!("{url}/api/feedback"), &[origin, json], Some(&body))
        }
        Bucket::Insights => {
            request("GET", &format!("{url}/api/insights?since=7d"), &[origin, ("authorization", &auth)], None)
        }
    }
}

/// The answer `r` to `method path` is one the contract documents: its status is
/// listed for the operation, every header it declares required is there and
/// valid against its schema, and the body is of a documented media type and
/// valid against that type's schema.
fn assert_documented(path: &str, method: &str, r: &Resp) {
    let doc = openapi();
    let op = &doc["paths"][path][method.to_lowercase()];
    let mut response = &op["responses"][r.status.to_string()];
    assert!(!response.is_null(), "{method} {path}: status {} is not documented", r.status);
    if let Some(name) = response["$ref"].as_str().and_then(|p| p.strip_prefix("#/components/responses/")) {
        response = &doc["components"]["responses"][name];
    }
    for (name, header) in response["headers"].as_object().into_iter().flatten() {
        let value = r.header(name);
        if header["required"] == true {
            assert!(value.is_some(), "{method} {path} {}: no {name} header", r.status);
        }
        if let Some(v) = value {
            // A header's value as its schema's type reads it.
            let v = match header["schema"]["type"].as_str() {
                Some("integer") => v.parse::<i64>().map(Value::from).unwrap_or_else(|_| json!(v)),
                _ => json!(v),
            };
            let schema = jsonschema::validator_for(&header["schema"]).unwrap();
            assert!(schema.is_valid(&v), "{method} {path} {}: {name}: {v} against {}", r.status, header["schema"]);
        }
    }
    let media = r.header("content-type").unwrap_or("").split(';').next().unwrap_or("").trim().to_string();
    let content = &response["content"][&media];
    assert!(!content.is_null(), "{method} {path} {}: content type `{media}` is not documented", r.status);
    match content["schema"]["$ref"].as_str().and_then(|p| p.strip_prefix("#/components/schemas/")) {
        Some(name) => assert_valid(name, &r.json()),
        // An inline schema (no references in it).
        None => {
            let schema = jsonschema::validator_for(&content["schema"]).unwrap();
            assert!(schema.is_valid(&r.json()), "{method} {path} {}: {}", r.status, r.text());
        }
    }
}

/// Past each endpoint's own limit: the 429 the contract documents (the status
/// listed for the operation, `Retry-After` in seconds, the `Error` envelope with
/// `rate_limited`, a message naming that endpoint, CORS headers as on any answer),
/// and no other endpoint's budget spent by it. Health checks and a report request
/// without credentials are not counted.
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Schemathesis (tests/contract/install): scripts/test runs it"]
fn rate_limited_answers_follow_the_contract() {
    use search_fn::limit::Bucket;
    let mut vars = limits_at("1");
    vars.push(("insights_token", INSIGHTS_TOKEN));
    let host = start(&vars);
    let url = host.url();
    // Feedback names the answer the chat gave (the chat comes first in ALL).
    let mut answer_id = String::new();
    for bucket in Bucket::ALL {
        // The endpoints before this one are spent; this one's budget is whole.
        let first = limited_request(&url, bucket, &answer_id);
        if bucket == Bucket::Chat {
            answer_id = first.json()["id"].as_str().unwrap_or_default().to_string();
        }
        assert!((200..300).contains(&first.status), "{}: {} {}", bucket.path(), first.status, first.text());
        let method = search_fn::api::ROUTES.iter().find(|r| r.0 == bucket.path()).unwrap().1[0];
        assert_documented(bucket.path(), method, &first);
        let r = limited_request(&url, bucket, &answer_id);
        assert_eq!(r.status, 429, "{}: {}", bucket.path(), r.text());
        assert_documented(bucket.path(), method, &r);
        let e = &r.json()["error"];
        assert_eq!((e["status"].as_u64(), e["code"].as_str()), (Some(429), Some("rate_limited")), "{e}");
        let message = e["message"].as_str().unwrap();
        let retry = r.header("retry-after").unwrap();
        let note =
            if search_fn::limit::pieces_per_unit(bucket).is_some() { " (a long query counts as several)" } else { "" };
        assert_eq!(
            message,
            format!(
                "more than 1 requests a minute to {} from this address{note}; try again in {retry} s",
                bucket.path()
            )
        );
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{}", bucket.path());
        assert_eq!(r.header("cache-control"), Some("no-store"), "{}", bucket.path());
    }
    // A report request with no credentials is answered 401 at once, spent budget
    // or not (and is not counted); health is never limited.
    for _ in 0..3 {
        let r = request("GET", &format!("{url}/api/insights"), &[], None);
        assert_eq!(r.status, 401, "{}", r.text());
        assert_documented("/api/insights", "GET", &r);
        assert_eq!(request("GET", &format!("{url}/api/health"), &[], None).status, 200);
    }
}

/// `st`, the Schemathesis command line (KB_SCHEMATHESIS, else the venv that
/// tests/contract/install makes in the CI cache).
fn schemathesis() -> PathBuf {
    let st = std::env::var_os("KB_SCHEMATHESIS").map(PathBuf::from).unwrap_or_else(|| {
        let cache = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"));
        cache.join("kb-ci/schemathesis/bin/st")
    });
    assert!(st.is_file(), "{} is missing: run `bash tests/contract/install` (scripts/test does)", st.display());
    st
}

/// One `st run` of tests/contract/schemathesis.toml against `url` with `args`
/// added; its reports go to `contract-report/NAME/`. Returns whether it passed and
/// its output.
fn run_schemathesis(name: &str, url: &str, args: &[&str]) -> (bool, String) {
    let st = schemathesis();
    let dir = repo().join("tests/contract");
    let reports = std::env::current_exe().unwrap().ancestors().nth(3).unwrap().join("contract-report").join(name);
    let t = Instant::now();
    let o = Command::new(&st)
        .args(["run", "../../openapi.yaml", "--url", url])
        .arg("--header")
        .arg(format!("Authorization: Bearer {INSIGHTS_TOKEN}"))
        .args(args)
        .arg("--report=junit")
        .arg("--report-dir")
        .arg(&reports)
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        // Hypothesis' own files go beside the reports, not into the source tree.
        .env("HYPOTHESIS_STORAGE_DIRECTORY", reports.join("hypothesis"))
        .env("SCHEMATHESIS_TELEMETRY", "false")
        .output()
        .unwrap();
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    eprintln!("schemathesis {name}: {:.0} s\n{out}", t.elapsed().as_secs_f64());
    (o.status.success(), out)
}

/// The seeds every run tries: five fixed ones, so a failure reproduces
/// (`st run … --seed N` in tests/contract), and five times the inputs one seed finds.
const SEEDS: std::ops::RangeInclusive<u32> = 1..=5;

/// Schemathesis with all its checks and every phase (stateful included, over the
/// `FeedbackOnTheAnswer` link), the settings of tests/contract/schemathesis.toml,
/// seeds 1 to 5, against the real component with every rate limit raised: no
/// failure, and no operation "mostly 429" (the configuration fails on every
/// warning Schemathesis displays).
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Schemathesis (tests/contract/install): scripts/test runs it"]
fn schemathesis_finds_nothing_the_contract_does_not_allow() {
    let url = host().url();
    let mut failed = Vec::new();
    for seed in SEEDS {
        let (ok, out) = run_schemathesis(&format!("seed-{seed}"), &url, &["--seed", &seed.to_string()]);
        assert!(!out.contains("mostly returned 429"), "seed {seed}: an operation was mostly rate-limited:\n{out}");
        if !ok {
            failed.push(seed);
        }
    }
    assert!(failed.is_empty(), "schemathesis failed with seeds {failed:?} (their output is above)");
}

/// The same run against a host whose every rate limit is 1 a minute, so that
/// nearly every answer is a 429: Schemathesis' checks (status listed, headers,
/// content type, schema) then hold for the 429s of every operation, valid request
/// or not. ("Mostly 429" is the point here, so warnings are off.)
#[test]
#[ignore = "needs the model, the wasm32-wasip2 target and Schemathesis (tests/contract/install): scripts/test runs it"]
fn schemathesis_finds_the_429s_documented() {
    let mut vars = limits_at("1");
    vars.push(("insights_token", INSIGHTS_TOKEN));
    let host = start(&vars);
    let (ok, out) =
        run_schemathesis("rate-limited", &host.url(), &["--seed", "1", "--max-examples", "25", "--warnings", "off"]);
    assert!(ok, "schemathesis failed against the rate-limited host:\n{out}");
}
