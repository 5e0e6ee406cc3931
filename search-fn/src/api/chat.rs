//! `POST /api/chat`: the request body, the agent's events as JSON or a stream
//! of server-sent events, the extractive answer, what an answer costs in
//! rate-limit units, and what insights record of it.

use search_service::agent::{extractive, ChatRequest, Event};
use search_service::insights::record;
use search_service::service::Service;

use super::reply::{ApiError, Reply};
use crate::limit::Bucket;

/// Parses a chat body, or says what is wrong with it.
pub fn chat_request(body: &[u8]) -> Result<ChatRequest, ApiError> {
    ChatRequest::parse(body).map_err(|e| ApiError::param(&e.field, e.message))
}

/// The agent's events as the response: Server-Sent Events when the client asked
/// for a stream, else the `done` object as JSON.
pub fn events_reply(events: &[Event], stream: bool) -> Reply {
    if stream {
        let body = events.iter().map(Event::to_sse).collect::<String>().into_bytes();
        return Reply::new(200, sse_headers(), body);
    }
    match events.iter().rev().find_map(|e| if let Event::Done(d) = e { Some(d) } else { None }) {
        Some(done) => {
            let mut r = Reply::json(200, done);
            r.headers.push(("cache-control", "no-store".into()));
            r
        }
        None => ApiError::internal("the agent finished without an answer".into()).reply(),
    }
}

/// Headers of an event stream.
pub fn sse_headers() -> Vec<(&'static str, String)> {
    vec![
        ("content-type", "text/event-stream; charset=utf-8".into()),
        ("cache-control", "no-store".into()),
        // Proxies that buffer would hold the tokens back.
        ("x-accel-buffering", "no".into()),
    ]
}

/// `POST /api/chat` without an LLM: the extractive agent, events collected.
pub fn chat_extractive(req: &ChatRequest, svc: &Service, answer_id: &str, clock: &dyn Fn() -> f64) -> Reply {
    let mut events = Vec::new();
    let t0 = clock();
    extractive::answer(svc, req, &extractive::Config::default(), false, clock, &mut |e| events.push(e));
    name_answer(&mut events, answer_id);
    let mut r = events_reply(&events, req.stream);
    r.record = chat_record(req, &events, clock() - t0, "extractive").map(Box::new);
    r.units = chat_units(svc, &events);
    r
}

/// What a chat cost ([`limit::units`]): the word pieces its searches gave the
/// encoder (the question, its rewrites and its parts).
pub fn chat_units(svc: &Service, events: &[Event]) -> u32 {
    let pieces = events
        .iter()
        .map(|e| match e {
            Event::Search(step) => svc.encoder().tokenize(&step.query).len(),
            _ => 0,
        })
        .sum();
    crate::limit::units(Bucket::Chat, pieces)
}

/// Gives the `done` event its id (what feedback on the answer will name).
pub fn name_answer(events: &mut [Event], answer_id: &str) {
    for e in events {
        if let Event::Done(d) = e {
            d.id = answer_id.to_string();
        }
    }
}

/// What the insights store keeps of a chat, from its events: the question, the
/// pages the agent read (its sources, else its searches' hits), the citations.
pub fn chat_record(req: &ChatRequest, events: &[Event], latency_ms: f64, mode: &str) -> Option<record::Event> {
    let done = events.iter().rev().find_map(|e| if let Event::Done(d) = e { Some(d) } else { None })?;
    let mut pages: Vec<String> = Vec::new();
    let mut add = |p: &str| {
        if !p.is_empty() && !pages.iter().any(|q| q == p) {
            pages.push(p.to_string());
        }
    };
    for e in events {
        match e {
            Event::Sources { sources } => sources.iter().for_each(|s| add(&s.page_id)),
            Event::Search(step) => step.hits.iter().for_each(|h| add(&h.page_id)),
            _ => {}
        }
    }
    let mut cited: Vec<String> = Vec::new();
    for c in &done.citations {
        if !cited.contains(&c.page_id) {
            cited.push(c.page_id.clone());
        }
    }
    Some(record::Event {
        kind: record::Kind::Chat,
        mode: mode.into(),
        question: req.question().to_string(),
        answer_id: (!done.id.is_empty()).then(|| done.id.clone()),
        answer: Some(done.answer.clone()),
        citations: done.citations.iter().map(|c| c.url.clone()).collect(),
        visitor: req.visitor.clone(),
        results: done.citations.len(),
        pages,
        cited,
        abstained: done.abstained,
        degraded: done.degraded,
        latency_ms,
        // How close the first search came: the question as asked.
        top_score: events.iter().find_map(|e| match e {
            Event::Search(step) => step.hits.iter().filter_map(|h| h.dense).reduce(f32::max),
            _ => None,
        }),
    })
}
