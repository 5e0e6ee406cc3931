//! `openapi.yaml` against the real component: every schema compiles as JSON
//! Schema 2020-12; every Server-Sent Event the agent emits (extractive, and over
//! an LLM: `search`, `sources`, `token`, `error`, `done`) validates against
//! `ChatEvent` and comes in the documented order; the schemas accept exactly the
//! request bodies the function accepts; and Schemathesis generates requests from
//! the file and checks every answer (tests/contract: its pinned version, settings
//! and seed).
//!
//! Schemathesis comes from PyPI (`tests/contract/install` puts it in a venv and
//! prints `st`'s path; scripts/test exports it as KB_SCHEMATHESIS).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use crate::support::llm::{answer, search, ScriptedLlm, Step};
use crate::support::schema::{assert_event_valid, check, check_event, openapi, validator};
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

/// The Spin variables that raise the rate limits, where the function has them: these
/// tests (and Schemathesis' bursts) are not what the limits are for.
fn unlimited() -> Vec<(&'static str, &'static str)> {
    let declared = |n: &str| edge_host::variables::DECLARED.iter().any(|(d, _)| *d == n);
    ["search_rate_limit", "chat_rate_limit"].into_iter().filter(|n| declared(n)).map(|n| (n, "100000")).collect()
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

/// What the schema says of a body agrees with what the function answers.
#[test]
fn the_schemas_accept_exactly_the_bodies_the_function_accepts() {
    let url = host().url();
    let user = |c: &str| json!({ "role": "user", "content": c });
    let cases: Vec<(&str, &str, Value)> = vec![
        ("/api/feedback", "Feedback", json!({ "rating": "up" })),
        (
            "/api/feedback",
            "Feedback",
            json!({ "rating": "down", "id": "a1", "comment": "wrong room", "page": "/x.html" }),
        ),
        ("/api/feedback", "Feedback", json!({ "rating": "up", "citations": ["/a.html#b"] })),
        ("/api/feedback", "Feedback", json!({ "rating": "up", "page": null })),
        ("/api/feedback", "Feedback", json!({ "rating": "up", "comment": null })),
        ("/api/feedback", "Feedback", json!({ "rating": "up", "citations": null })),
        ("/api/feedback", "Feedback", json!({ "rating": null })),
        ("/api/feedback", "Feedback", json!({ "rating": "sideways" })),
        ("/api/feedback", "Feedback", json!({ "rating": "up", "mood": "great" })),
        ("/api/feedback", "Feedback", json!({ "rating": "up", "id": "x".repeat(101) })),
        ("/api/feedback", "Feedback", json!({})),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Where can I park?")] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Where can I park?")], "stream": false })),
        ("/api/chat", "ChatRequest", json!({ "messages": [] })),
        ("/api/chat", "ChatRequest", json!({ "messages": vec![user("Where can I park?"); 41] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user(&"a".repeat(4001))] })),
        ("/api/chat", "ChatRequest", json!({ "messages": [user("Where can I park?")], "stream": null })),
        ("/api/chat", "ChatRequest", json!({ "messages": [{ "role": "system", "content": "hi" }] })),
        ("/api/chat", "ChatRequest", json!({ "question": "Where can I park?" })),
    ];
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
                .filter(|_| path == "/api/feedback")
                .and_then(|o| o.iter().find(|(_, v)| v.is_null()).map(|(k, _)| k))
            {
                assert_eq!(r.json()["error"]["parameter"], field.as_str(), "{}", r.text());
            }
        }
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

/// Schemathesis with all its checks, the settings and seed of
/// tests/contract/schemathesis.toml, against the real component.
#[test]
fn schemathesis_finds_nothing_the_contract_does_not_allow() {
    let st = schemathesis();
    let host = host();
    let dir = repo().join("tests/contract");
    let reports = std::env::current_exe().unwrap().ancestors().nth(3).unwrap().join("contract-report");
    let t = Instant::now();
    let o = Command::new(&st)
        .args(["run", "../../openapi.yaml", "--url"])
        .arg(host.url())
        .arg("--header")
        .arg(format!("Authorization: Bearer {INSIGHTS_TOKEN}"))
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
    let out = String::from_utf8_lossy(&o.stdout);
    eprintln!("schemathesis: {:.0} s\n{out}", t.elapsed().as_secs_f64());
    assert!(o.status.success(), "schemathesis failed:\n{out}\n{}", String::from_utf8_lossy(&o.stderr));
}
