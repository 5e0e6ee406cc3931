//! What search as you type asks of the server, and what the answers are worth
//! while the reader is still typing:
//!
//!     cargo run --release -p site-builder --example typing_trace -- INDEX_DIR QA.csv [QA.csv …]
//!
//! 1. **A typing trace.** Readers type the QA questions into the search box, one
//!    session each: questions drawn by a Zipf law (popular questions come back),
//!    keystrokes timed as people type (per-typist mean inter-key interval from
//!    Dhakal et al., CHI 2018, 136 M keystrokes: 239 ms mean, 112 ms across
//!    typists; log-normal within a typist; a longer pause before some words), 3 %
//!    typos noticed a few keys later and erased with backspace, and 30 % of
//!    sessions ending with Enter on the results page. The box behaves as
//!    `templates/static/search.js` does: a request after 150 ms without a key,
//!    at 2 characters or more, never the same text twice in one page (its
//!    client-side cache); the results page asks again with k = 20.
//! 2. **The query-vector cache on that trace:** hit rate by capacity, for one
//!    instance and for requests spread over four.
//! 3. **Policies for the encoder:** fused on every pause (today), fused on every
//!    pause with the cache, and BM25 while typing with fused only after a pause
//!    of 600 ms or Enter: encoder passes per session.
//! 4. **What a reader sees while typing:** page recall@5 and MRR@10 of the
//!    questions cut at 25 / 50 / 75 / 100 % of their characters (mid-word, as
//!    typed), for BM25 and the fused default, each as is and with `partial`
//!    (the word being typed read as its most common completion in the
//!    vocabulary, `Index::partial_terms`).
//!
//! Prints one JSON object.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use search_core::index::{Mode, SearchParams};
use search_core::query_cache::QueryCache;
use search_service::service::{Query, Service};
use site_builder::eval::Question;
use site_builder::search::Searcher;

const SESSIONS: usize = 4000;
const DEBOUNCE_MS: f64 = 150.0;
const MIN_CHARS: usize = 2;
const SEARCH_PAGE_K: usize = 20;
const FUSED_PAUSE_MS: f64 = 600.0;

/// splitmix64: a fixed seed makes the trace the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    /// Log-normal with the given mean and coefficient of variation.
    fn lognormal(&mut self, mean: f64, cv: f64) -> f64 {
        let s2 = (1.0 + cv * cv).ln();
        (mean.ln() - s2 / 2.0 + s2.sqrt() * self.normal()).exp()
    }
}

/// One request the search box sends.
#[derive(Clone)]
struct Sent {
    text: String,
    k: usize,
    /// The reader had stopped for FUSED_PAUSE_MS, finished, or pressed Enter.
    settled: bool,
}

/// The requests of one reader typing `question`.
fn session(question: &str, rng: &mut Rng) -> Vec<Sent> {
    let mean_iki = (239.0 + 112.0 * rng.normal()).clamp(90.0, 700.0);
    // Keystrokes with the time before each: (text after the key, gap in ms).
    let mut keys: Vec<(String, f64)> = Vec::new();
    let mut text = String::new();
    let chars: Vec<char> = question.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let mut gap = rng.lognormal(mean_iki, 0.5);
        if i > 0 && chars[i - 1] == ' ' && rng.unit() < 0.15 {
            gap += rng.lognormal(900.0, 0.6); // thinking of the next word
        }
        if chars[i].is_alphabetic() && rng.unit() < 0.03 {
            // A wrong key, noticed 0–2 keys later, erased, then typed right.
            let extra = (rng.next() % 3) as usize;
            let mut typed = 0;
            text.push('x');
            keys.push((text.clone(), gap));
            for c in chars.iter().skip(i + 1).take(extra) {
                text.push(*c);
                typed += 1;
                keys.push((text.clone(), rng.lognormal(mean_iki, 0.5)));
            }
            for _ in 0..=typed {
                text.pop();
                keys.push((text.clone(), rng.lognormal(mean_iki * 1.2, 0.5)));
            }
            gap = rng.lognormal(mean_iki, 0.5);
        }
        text.push(chars[i]);
        keys.push((text.clone(), gap));
        i += 1;
    }
    let enter = rng.unit() < 0.3;
    let mut sent: Vec<Sent> = Vec::new();
    let mut asked: HashSet<String> = HashSet::new();
    for (n, (t, _)) in keys.iter().enumerate() {
        // The debounce fires when the next key comes 150 ms or more later (or never).
        let pause = keys.get(n + 1).map_or(f64::INFINITY, |(_, g)| *g);
        let q = t.split_whitespace().collect::<Vec<_>>().join(" ");
        if pause < DEBOUNCE_MS || q.chars().count() < MIN_CHARS {
            continue;
        }
        let last = n + 1 == keys.len();
        if asked.insert(q.clone()) {
            sent.push(Sent { text: q, k: 10, settled: pause >= FUSED_PAUSE_MS || last });
        } else if pause >= FUSED_PAUSE_MS || last {
            // Cached in the page, but a policy that settles later asks now.
            sent.push(Sent { text: q, k: 0, settled: true });
        }
    }
    if enter {
        let q = question.split_whitespace().collect::<Vec<_>>().join(" ");
        sent.push(Sent { text: q, k: SEARCH_PAGE_K, settled: true });
    }
    sent
}

fn zipf_pick(weights: &[f64], rng: &mut Rng) -> usize {
    let total: f64 = weights.iter().sum();
    let mut x = rng.unit() * total;
    for (i, w) in weights.iter().enumerate() {
        x -= w;
        if x <= 0.0 {
            return i;
        }
    }
    weights.len() - 1
}

/// Page-level recall@5 and reciprocal rank (to 10) of `text` for `target`.
fn judge(svc: &Service, text: &str, mode: Mode, partial: bool, target: &str) -> (f64, f64) {
    let clock = || 0.0;
    let p = SearchParams { mode, partial, collapse_pages: true, ..svc.default_params(10) };
    let hits = match svc.rank(&Query { text, params: p, offset: 0, vector: None, count_more: false }, &clock) {
        Ok(r) => r.hits,
        Err(e) => panic!("the bundled index cannot fail to rank: {e}"),
    };
    let urls: Vec<String> = hits.iter().map(|h| svc.chunk(h.doc).map(|m| m.url).unwrap_or_default()).collect();
    let rank = urls.iter().position(|u| u.split('#').next() == Some(target));
    (f64::from(u8::from(rank.is_some_and(|r| r < 5))), rank.map_or(0.0, |r| 1.0 / (r + 1) as f64))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, qa @ ..] = args.as_slice() else {
        return Err("usage: typing_trace INDEX_DIR QA.csv [QA.csv …]".into());
    };
    if qa.is_empty() {
        return Err("usage: typing_trace INDEX_DIR QA.csv [QA.csv …]".into());
    }
    let s = Searcher::open(&PathBuf::from(dir).join("index.bin"), None)?;
    let svc = s.service()?;
    let mut questions = Vec::new();
    for f in qa {
        questions.extend(site_builder::eval::read_qa(&PathBuf::from(f))?);
    }

    // 1. The trace.
    let sessions = trace(&questions);
    let requests: Vec<&Sent> = sessions.iter().flatten().filter(|s| s.k > 0).collect();
    let per_session = requests.len() as f64 / SESSIONS as f64;
    // 2. The cache on today's policy (every request fused), by capacity and spread.
    let cache_rows = cache_hit_rates(&svc, &requests);
    // 3. Encoder passes per session under each policy (one instance, 512 vectors).
    let policies = serde_json::json!({
        "fused_every_pause": encoder_passes(&svc, &sessions, &|s: &Sent| s.k > 0, false),
        "fused_every_pause_cached": encoder_passes(&svc, &sessions, &|s: &Sent| s.k > 0, true),
        "bm25_typing_fused_settled_cached": encoder_passes(&svc, &sessions, &|s: &Sent| s.settled, true),
    });
    let settled_requests = sessions.iter().flatten().filter(|s| s.settled).count() as f64 / SESSIONS as f64;
    // 4. Quality while typing.
    let quality: Vec<serde_json::Value> =
        [0.25, 0.5, 0.75, 1.0].into_iter().map(|frac| quality_typed(&svc, &questions, frac)).collect();

    let out = serde_json::json!({
        "questions": questions.len(),
        "sessions": SESSIONS,
        "requests_per_session": per_session,
        "settled_requests_per_session": settled_requests,
        "cache": cache_rows,
        "encoder_passes_per_session": policies,
        "while_typing": quality,
    });
    println!("{out}");
    Ok(())
}

/// SESSIONS readers, each typing a question drawn by a Zipf law over the
/// questions in a shuffled order: the requests of each session.
fn trace(questions: &[Question]) -> Vec<Vec<Sent>> {
    let mut rng = Rng(20261130);
    let weights: Vec<f64> = (1..=questions.len()).map(|r| 1.0 / r as f64).collect();
    let mut order: Vec<usize> = (0..questions.len()).collect();
    // Popularity independent of the file's order.
    for i in (1..order.len()).rev() {
        order.swap(i, (rng.next() % (i as u64 + 1)) as usize);
    }
    (0..SESSIONS).map(|_| session(&questions[order[zipf_pick(&weights, &mut rng)]].question, &mut rng)).collect()
}

/// The query-vector cache's hit rate on `requests`, by capacity, for one
/// instance and for requests spread at random over four.
fn cache_hit_rates(svc: &Service, requests: &[&Sent]) -> Vec<serde_json::Value> {
    let tokens: HashMap<&str, Vec<u32>> =
        requests.iter().map(|s| (s.text.as_str(), svc.encoder().tokenize(&s.text))).collect();
    let mut cache_rows = Vec::new();
    for instances in [1usize, 4] {
        for capacity in [64usize, 512, 4096] {
            let mut caches: Vec<QueryCache> = (0..instances).map(|_| QueryCache::new(capacity)).collect();
            let mut spread = Rng(7);
            for s in requests {
                let c = &mut caches[(spread.next() % instances as u64) as usize];
                let t = &tokens[s.text.as_str()];
                if c.get(t).is_none() {
                    c.insert(t.clone(), Vec::new());
                }
            }
            let (h, m) = caches.iter().fold((0, 0), |(h, m), c| (h + c.stats().0, m + c.stats().1));
            cache_rows.push(serde_json::json!({"instances": instances, "capacity": capacity,
                "hit_rate": h as f64 / (h + m) as f64}));
        }
    }
    cache_rows
}

/// Encoder passes per session when the requests `fused` picks are fused, with a
/// cache of 512 vectors when `cached`.
fn encoder_passes(svc: &Service, sessions: &[Vec<Sent>], fused: &dyn Fn(&Sent) -> bool, cached: bool) -> f64 {
    let mut c = QueryCache::new(if cached { 512 } else { 0 });
    let mut n = 0usize;
    for s in sessions.iter().flatten().filter(|s| fused(s)) {
        let t = svc.encoder().tokenize(&s.text);
        if c.get(&t).is_none() {
            n += 1;
            c.insert(t, Vec::new());
        }
    }
    n as f64 / SESSIONS as f64
}

/// Page recall@5 and MRR@10 of the questions cut at `frac` of their characters,
/// for BM25 and the fused default, each as is and with `partial`.
fn quality_typed(svc: &Service, questions: &[Question], frac: f64) -> serde_json::Value {
    let mut sums: HashMap<&str, (f64, f64)> = HashMap::new();
    for q in questions {
        let n = q.question.chars().count();
        let cut: String = q.question.chars().take(((n as f64 * frac).ceil() as usize).max(2)).collect();
        let cut = cut.trim_end().to_string();
        let target = site_builder::build::page_url(&q.source_file.replace('\\', "/"));
        let fused = svc.default_params(10).mode;
        // Mid-word unless the cut fell on a space (then the word is whole).
        let typing = !q.question.chars().nth(cut.chars().count()).is_some_and(char::is_whitespace);
        for (name, mode, partial) in [
            ("bm25", Mode::Bm25, false),
            ("bm25_partial", Mode::Bm25, typing),
            ("fused", fused, false),
            ("fused_partial", fused, typing),
        ] {
            let (r, rr) = judge(svc, &cut, mode, partial, &target);
            let e = sums.entry(name).or_default();
            e.0 += r;
            e.1 += rr;
        }
    }
    let n = questions.len() as f64;
    let row: serde_json::Map<String, serde_json::Value> = sums
        .iter()
        .map(|(k, (r, rr))| (k.to_string(), serde_json::json!({"recall_at_5": r / n, "mrr_at_10": rr / n})))
        .collect();
    serde_json::json!({"typed": frac, "modes": row})
}
