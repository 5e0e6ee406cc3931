//! `POST /api/chat` without an LLM: the extractive agent over the demo index,
//! as JSON and as Server-Sent Events.

use serde_json::{json, Value};

use crate::support::schema::assert_valid;
use crate::support::{host, request};

/// One parsed SSE event.
#[derive(Debug)]
pub struct SseEvent {
    pub event: String,
    pub data: Value,
}

/// Reads an event stream with a third-party SSE client (`eventsource-stream`, the
/// parser under reqwest-eventsource), fed in 7-byte pieces so that frames split
/// across network reads are part of the test. Every `data` must be JSON.
pub fn parse_sse(text: &str) -> Vec<SseEvent> {
    use eventsource_stream::Eventsource;
    use futures::StreamExt;
    let pieces: Vec<Result<bytes::Bytes, std::io::Error>> =
        text.as_bytes().chunks(7).map(|c| Ok(bytes::Bytes::copy_from_slice(c))).collect();
    let events = futures::executor::block_on(futures::stream::iter(pieces).eventsource().collect::<Vec<_>>());
    events
        .into_iter()
        .map(|e| {
            let e = e.unwrap_or_else(|err| panic!("not an event stream: {err}"));
            let data =
                serde_json::from_str(&e.data).unwrap_or_else(|err| panic!("data is not JSON ({err}): {}", e.data));
            SseEvent { event: e.event, data }
        })
        .collect()
}

pub fn chat(body: &Value) -> crate::support::Resp {
    let bytes = serde_json::to_vec(body).unwrap();
    request("POST", &format!("{}/api/chat", host().url()), &[("content-type", "application/json")], Some(&bytes))
}

fn ask(question: &str) -> Value {
    let r = chat(&json!({ "messages": [{ "role": "user", "content": question }] }));
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_valid("ChatDone", &v);
    v
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn an_answerable_question_is_answered_from_cited_sources() {
    let v = ask("How do I buy a parking permit?");
    assert_eq!((v["extractive"].as_bool(), v["abstained"].as_bool()), (Some(true), Some(false)), "{v:#}");
    let citations = v["citations"].as_array().unwrap();
    assert!(!citations.is_empty());
    assert!(citations[0]["url"].as_str().unwrap().contains("parking"), "{v:#}");
    let answer = v["answer"].as_str().unwrap();
    for c in citations {
        assert!(answer.contains(&format!("[{}]", c["n"])), "citation {} unused in {answer}", c["n"]);
    }
    assert!(answer.to_lowercase().contains("permit"), "{answer}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_question_outside_the_knowledge_base_is_declined() {
    let v = ask("What is the airspeed velocity of an unladen swallow?");
    assert_eq!(v["abstained"], true, "{v:#}");
    assert!(v["answer"].as_str().unwrap().contains("does not seem to answer"));
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_weak_match_on_a_word_no_page_uses_is_declined_and_names_the_word() {
    // The demo has opening hours (the libraries) but no gym: the cosine bar alone
    // answered with the libraries' hours.
    let v = ask("What are the opening hours of the gym?");
    assert_eq!(v["abstained"], true, "{v:#}");
    assert!(v["answer"].as_str().unwrap().contains("no page mentions \u{201c}gym\u{201d}"), "{v:#}");
    // A word the pages do use is no reason to decline.
    let v = ask("What are the opening hours of the library?");
    assert_eq!(v["abstained"], false, "{v:#}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_short_new_question_is_not_read_as_a_follow_up() {
    let turns = |last: &str| {
        json!({ "messages": [
            { "role": "user", "content": "How do I buy a parking permit?" },
            { "role": "assistant", "content": "Buy it online [1]." },
            { "role": "user", "content": last }
        ], "stream": true })
    };
    let searched = |body: &Value| -> (Vec<String>, Value) {
        let r = chat(body);
        assert_eq!(r.status, 200, "{}", r.text());
        let events = parse_sse(&r.text());
        let queries = events
            .iter()
            .filter(|e| e.event == "search")
            .map(|e| e.data["query"].as_str().unwrap().to_string())
            .collect();
        (queries, events.last().unwrap().data.clone())
    };
    let (queries, done) = searched(&turns("How do I bake banana bread?"));
    assert!(queries.iter().all(|q| !q.contains("parking")), "{queries:?}");
    assert_eq!(done["abstained"], true, "{done:#}");
    // A follow-up still reads the question before it.
    let (queries, done) = searched(&turns("and for visitors?"));
    assert!(queries[0].contains("parking permit") && queries[0].contains("visitors"), "{queries:?}");
    assert_eq!(done["abstained"], false, "{done:#}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn a_two_part_question_searches_each_part_and_streams_events_in_order() {
    let r = chat(&json!({
        "messages": [{ "role": "user", "content": "How do I connect to eduroam? How do I buy a parking permit?" }],
        "stream": true
    }));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.header("content-type").unwrap().starts_with("text/event-stream"));
    let events = parse_sse(&r.text());
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    let searches: Vec<&str> =
        events.iter().filter(|e| e.event == "search").map(|e| e.data["query"].as_str().unwrap()).collect();
    assert!(searches.len() >= 2, "{names:?}");
    assert!(searches.iter().any(|q| q.contains("eduroam")) && searches.iter().any(|q| q.contains("parking")));
    let sources = names.iter().position(|n| *n == "sources").expect("a sources event");
    let first_token = names.iter().position(|n| *n == "token").expect("tokens");
    assert!(sources < first_token, "sources come before any answer text: {names:?}");
    assert_eq!(names.last(), Some(&"done"));
    let done = &events.last().unwrap().data;
    assert_valid("ChatDone", done);
    let streamed: String =
        events.iter().filter(|e| e.event == "token").map(|e| e.data["text"].as_str().unwrap()).collect();
    assert_eq!(streamed, done["answer"].as_str().unwrap(), "the tokens add up to the answer");
    let cited: Vec<&str> = done["citations"].as_array().unwrap().iter().map(|c| c["url"].as_str().unwrap()).collect();
    assert!(cited.iter().any(|u| u.contains("eduroam") || u.contains("wifi")), "{cited:?}");
    assert!(cited.iter().any(|u| u.contains("parking")), "{cited:?}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn bad_chat_requests_are_refused_with_the_field_at_fault() {
    for (body, field) in [
        (json!({}), "body"),
        (json!({ "messages": [] }), "messages"),
        (json!({ "messages": [{ "role": "assistant", "content": "hi" }] }), "messages"),
        (json!({ "messages": [{ "role": "user", "content": "x".repeat(4001) }] }), "messages[0].content"),
    ] {
        let r = chat(&body);
        assert_eq!(r.status, 400, "{body}: {}", r.text());
        assert_valid("Error", &r.json());
        assert_eq!(r.json()["error"]["parameter"], field, "{body}");
    }
    let huge = vec![b' '; 600 * 1024];
    let json = [("content-type", "application/json")];
    let r = request("POST", &format!("{}/api/chat", host().url()), &json, Some(&huge));
    assert_eq!(r.status, 413, "{}", r.text());
    let r = request("GET", &format!("{}/api/chat", host().url()), &[], None);
    assert_eq!((r.status, r.header("allow")), (405, Some("POST, OPTIONS")));
}

/// The `[n]` markers of an answer, in order.
fn markers(answer: &str) -> Vec<u64> {
    answer.split('[').filter_map(|s| s.split_once(']').and_then(|(n, _)| n.parse().ok())).collect()
}

/// Citations numbered 1, 2, 3 in the order the answer first uses them, each
/// page once, and every marker a citation.
fn assert_cited_in_order(done: &Value) {
    let answer = done["answer"].as_str().unwrap();
    let citations = done["citations"].as_array().unwrap();
    let numbers: Vec<u64> = citations.iter().map(|c| c["n"].as_u64().unwrap()).collect();
    assert_eq!(numbers, (1..=citations.len() as u64).collect::<Vec<_>>(), "{done:#}");
    let mut first_uses: Vec<u64> = Vec::new();
    for n in markers(answer) {
        if !first_uses.contains(&n) {
            first_uses.push(n);
        }
    }
    assert_eq!(first_uses, numbers, "{answer}");
    let mut pages: Vec<&str> =
        citations.iter().map(|c| c["url"].as_str().unwrap().split('#').next().unwrap()).collect();
    pages.sort_unstable();
    pages.dedup();
    assert_eq!(pages.len(), citations.len(), "a page is cited once: {done:#}");
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn extractive_answers_quote_the_row_or_steps_that_answer() {
    // The price table's rows, read with their header.
    let v = ask("How much is a parking permit for a semester?");
    let answer = v["answer"].as_str().unwrap();
    assert!(answer.contains("Fall only: $230") && answer.contains("Spring only: $230"), "{answer}");
    assert_cited_in_order(&v);
    // The MacBook gets the macOS steps, in order, and no other platform's.
    let v = ask("How do I connect my MacBook to eduroam?");
    let answer = v["answer"].as_str().unwrap();
    let (open, install) = (answer.find("eduroam-NBU.mobileconfig"), answer.find("click Install"));
    assert!(open.is_some() && install.is_some() && open < install, "{answer}");
    assert!(!answer.contains("eduroam-W10-NBU.exe") && !answer.contains("nmcli"), "{answer}");
    assert_cited_in_order(&v);
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn an_error_code_gets_the_fix_from_its_table_and_the_stream_numbers_sources_as_cited() {
    let question = "VPN-504 gateway unreachable";
    let r = chat(&json!({ "messages": [{ "role": "user", "content": question }], "stream": true }));
    assert_eq!(r.status, 200, "{}", r.text());
    let events = parse_sse(&r.text());
    let done = &events.last().unwrap().data;
    assert_valid("ChatDone", done);
    let answer = done["answer"].as_str().unwrap();
    assert!(answer.contains("UDP port 4443") && answer.contains("nbvpn connect --profile student --tcp"), "{answer}");
    let cited: Vec<&str> = done["citations"].as_array().unwrap().iter().map(|c| c["url"].as_str().unwrap()).collect();
    assert!(cited.iter().any(|u| u.starts_with("it-services/vpn.html")), "{cited:?}");
    assert_cited_in_order(done);
    // The search step is the question as asked; the sources the widget numbers
    // the streamed text by are the citations.
    let searched: Vec<&str> =
        events.iter().filter(|e| e.event == "search").map(|e| e.data["query"].as_str().unwrap()).collect();
    assert_eq!(searched, vec![question]);
    let sources = events.iter().find(|e| e.event == "sources").expect("a sources event");
    assert_eq!(sources.data["sources"], done["citations"]);
}
