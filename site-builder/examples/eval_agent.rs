//! Measures the extractive agent (the answer `/api/chat` gives without an LLM) on
//! a QA set and on questions the knowledge base cannot answer:
//!
//!     cargo run --release -p site-builder --example eval_agent -- INDEX_DIR QA.csv
//!
//! For each QA question: did it answer (not abstain), and does a citation point
//! to the question's source page? For the built-in off-topic questions: did it
//! abstain? Prints one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use search_core::agent::{extractive, ChatRequest, Message, Role};
use site_builder::search::Searcher;

/// Questions no help desk's knowledge base answers.
const OFF_TOPIC: &[&str] = &[
    "What is the airspeed velocity of an unladen swallow?",
    "Who won the football world cup in 2018?",
    "How do I bake banana bread?",
    "What is the capital of Mongolia?",
    "Recommend a good science fiction novel",
    "What will the weather be like tomorrow?",
    "How tall is the Eiffel Tower?",
    "Write me a poem about autumn leaves",
    "What is the best pizza place in town?",
    "How do I change the oil in my car?",
];

fn ask(svc: &search_core::service::Service, q: &str) -> (search_core::agent::Done, f64) {
    let req =
        ChatRequest { messages: vec![Message { role: Role::User, content: q.into() }], stream: false, visitor: None };
    let t = Instant::now();
    let clock = || t.elapsed().as_secs_f64() * 1e3;
    let done = extractive::answer(svc, &req, &extractive::Config::default(), false, &clock, &mut |_| {});
    (done, t.elapsed().as_secs_f64() * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, qa] = args.as_slice() else {
        return Err("usage: eval_agent INDEX_DIR QA.csv".into());
    };
    let s = Searcher::open(&PathBuf::from(dir).join("index.bin"), None)?;
    let svc = s.service()?;
    let questions = site_builder::eval::read_qa(&PathBuf::from(qa))?;
    let (mut answered, mut cited, mut ms) = (0usize, 0usize, Vec::new());
    let mut misses = Vec::new();
    for q in &questions {
        let (done, t) = ask(&svc, &q.question);
        ms.push(t);
        let target = site_builder::build::page_url(&q.source_file.replace('\\', "/"));
        let page = |u: &str| u.split('#').next().unwrap_or("").to_string();
        if !done.abstained {
            answered += 1;
        }
        if done.citations.iter().any(|c| page(&c.url) == target) {
            cited += 1;
        } else {
            misses.push(q.question.clone());
        }
    }
    let abstained = OFF_TOPIC.iter().filter(|q| ask(&svc, q).0.abstained).count();
    ms.sort_by(f64::total_cmp);
    let out = serde_json::json!({
        "questions": questions.len(),
        "answered": answered as f64 / questions.len() as f64,
        "source_page_cited": cited as f64 / questions.len() as f64,
        "off_topic": OFF_TOPIC.len(),
        "off_topic_abstained": abstained as f64 / OFF_TOPIC.len() as f64,
        "median_ms_native": ms[ms.len() / 2],
        "misses": misses,
    });
    println!("{out}");
    Ok(())
}
