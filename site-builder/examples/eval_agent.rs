//! Measures the extractive agent (the answer `/api/chat` gives without an LLM) on
//! a QA set and on questions the knowledge base cannot answer:
//!
//!     cargo run --release -p site-builder --example eval_agent -- INDEX_DIR QA.csv [OFF_TOPIC.txt]
//!
//! For each QA question: did it answer (not abstain), does a citation point to
//! the question's source page, and was that page among the results the agent
//! searched (the gap between the two is the answer's choice)? For the built-in questions the knowledge base
//! cannot answer, far off topic and those a university help desk gets that a
//! research-computing one does not cover: did it abstain? Each figure three
//! times: the default (`unknown_words`), without the unknown-word rule (the
//! cosine bar alone, `cosine_only`) and with passages scored by their MiniLM
//! cosine too (`passage_cosine`: what the encoder pass costs and gains).
//! `OFF_TOPIC.txt` (one question a line, `#` comments; `eval/no-match.txt`,
//! `bench/languages/help-centre-offtopic.txt`) adds questions in the knowledge
//! base's own language that it does not answer: `own_off_topic_abstained`.
//! Prints one JSON object.

use std::path::PathBuf;
use std::time::Instant;

use search_service::agent::{extractive, ChatRequest, Event, Message, Role};
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

/// Help-desk questions beside the corpus's subject (CSC's research computing):
/// a campus's other services, which share its words (password, register, card).
const NEAR_DOMAIN: &[&str] = &[
    "How do I reset my Netflix password?",
    "What time does the university library close on Sundays?",
    "How do I apply for a campus parking permit?",
    "What is the tuition fee for master's students?",
    "How do I register for the spring exams?",
    "Where can I get a new student card?",
    "How do I book a room in student housing?",
    "When is the deadline to apply for a scholarship?",
    "How do I change my Moodle course enrolment?",
    "Can I get a refund for my cafeteria lunch card?",
    "How do I set up an out-of-office reply in Outlook?",
    "How do I join a Zoom meeting from my browser?",
    "What are the opening hours of the university gym?",
    "How many days of annual leave do employees get?",
    "Who do I contact about a broken projector in lecture hall 3?",
    "How do I install Microsoft Office on my laptop for free?",
    "How do I request a transcript of my grades?",
    "Can I bring my dog to the office?",
    "How do I pay my parking fine?",
    "Is the campus closed on public holidays?",
];

/// The agent's answer to `q`, its time in milliseconds, and the URLs of every
/// result its searches found, best first.
fn ask(
    svc: &search_service::service::Service,
    q: &str,
    cfg: &extractive::Config,
) -> (search_service::agent::Done, f64, Vec<String>) {
    let req = ChatRequest {
        messages: vec![Message { role: Role::User, content: q.into() }],
        stream: false,
        visitor: None,
        lang: None,
    };
    let t = Instant::now();
    let clock = || t.elapsed().as_secs_f64() * 1e3;
    let mut found = Vec::new();
    let done = extractive::answer(svc, &req, cfg, false, &clock, &mut |e| {
        if let Event::Search(step) = e {
            found.extend(step.hits.into_iter().map(|h| h.url));
        }
    });
    (done, t.elapsed().as_secs_f64() * 1e3, found)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, qa, own) = match args.as_slice() {
        [dir, qa] => (dir, qa, Vec::new()),
        [dir, qa, off] => (dir, qa, site_builder::eval::read_queries(&PathBuf::from(off))?),
        _ => return Err("usage: eval_agent INDEX_DIR QA.csv [OFF_TOPIC.txt]".into()),
    };
    let s = Searcher::open(&PathBuf::from(dir).join("index.bin"), None)?;
    let svc = s.service()?;
    let questions = site_builder::eval::read_qa(&PathBuf::from(qa))?;
    let on = extractive::Config::default();
    let off = extractive::Config { unknown_words: false, ..on };
    let dense = extractive::Config { passage_cosine: true, ..on };
    let mut out = serde_json::Map::new();
    for (name, cfg) in [("unknown_words", &on), ("cosine_only", &off), ("passage_cosine", &dense)] {
        let mut m = measure(&svc, &questions, cfg);
        if !own.is_empty() {
            let answered = answered_of(&svc, own.iter().map(String::as_str), cfg);
            let share = 1.0 - answered.len() as f64 / own.len() as f64;
            m["own_off_topic"] = serde_json::json!(own.len());
            m["own_off_topic_abstained"] = serde_json::json!(share);
            m["own_off_topic_answered"] = serde_json::json!(answered);
        }
        out.insert(name.into(), m);
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}

/// The questions of `qs` the agent answers (does not abstain on).
fn answered_of<'q>(
    svc: &search_service::service::Service,
    qs: impl Iterator<Item = &'q str>,
    cfg: &extractive::Config,
) -> Vec<&'q str> {
    qs.filter(|q| !ask(svc, q, cfg).0.abstained).collect()
}

fn measure(
    svc: &search_service::service::Service,
    questions: &[site_builder::eval::Question],
    cfg: &extractive::Config,
) -> serde_json::Value {
    let (mut answered, mut cited, mut retrieved, mut ms) = (0usize, 0usize, 0usize, Vec::new());
    let mut misses = Vec::new();
    let mut declined = Vec::new();
    for q in questions {
        let (done, t, found) = ask(svc, &q.question, cfg);
        ms.push(t);
        let target = site_builder::build::page_url(&q.source_file.replace('\\', "/"));
        let page = |u: &str| u.split('#').next().unwrap_or("").to_string();
        if !done.abstained {
            answered += 1;
        } else {
            declined.push(q.question.clone());
        }
        let at = found.iter().position(|u| page(u) == target);
        retrieved += usize::from(at.is_some());
        if done.citations.iter().any(|c| page(&c.url) == target) {
            cited += 1;
        } else {
            // Where the searches had the page: a miss of the answer's choice, or of search.
            let had = at.map_or("not found".to_string(), |i| format!("result {}", i + 1));
            misses.push(format!("{} ({had})", q.question));
        }
    }
    let abstained = |qs: &[&str]| qs.iter().filter(|q| ask(svc, q, cfg).0.abstained).count();
    let far = abstained(OFF_TOPIC);
    let answered_near = answered_of(svc, NEAR_DOMAIN.iter().copied(), cfg);
    let near = NEAR_DOMAIN.len() - answered_near.len();
    ms.sort_by(f64::total_cmp);
    serde_json::json!({
        "questions": questions.len(),
        "answered": answered as f64 / questions.len() as f64,
        "source_page_cited": cited as f64 / questions.len() as f64,
        "source_page_searched": retrieved as f64 / questions.len() as f64,
        "off_topic": OFF_TOPIC.len(),
        "off_topic_abstained": far as f64 / OFF_TOPIC.len() as f64,
        "near_domain": NEAR_DOMAIN.len(),
        "near_domain_abstained": near as f64 / NEAR_DOMAIN.len() as f64,
        "near_domain_answered": answered_near,
        "median_ms_native": ms[ms.len() / 2],
        "declined": declined,
        "misses": misses,
    })
}
