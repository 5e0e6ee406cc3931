//! What browser search downloads: for each question of the QA files, the bytes a
//! reader's browser fetches from a site's `_search/` (as stored, compressed) to
//! answer it with `k` results, the first query (nothing cached: pointer,
//! manifest, engine, fragments) and later ones (the questions asked one after
//! another in one page, each fetching only what it lacks), and how long the
//! engine takes natively once it has the fragments.
//!
//!     cargo run --release -p site-builder --example browser_bytes -- SITE_DIR K QA.csv [QA.csv …]
//!
//! Prints one JSON object (docs/benchmarks/browser.md).

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use search_core::index::fragments::{Engine, Step, MANIFEST};
use site_builder::eval::read_qa;

fn inflate(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    if flate2::read::GzDecoder::new(bytes).read_to_end(&mut out).is_err() {
        return bytes.to_vec();
    }
    out
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Runs `q` to its end; returns the bytes fetched (compressed, as stored).
fn answer(e: &mut Engine, dir: &Path, have: &mut HashSet<String>, q: &str, k: usize) -> u64 {
    ask(e, dir, have, q, k, false)
}

fn ask(e: &mut Engine, dir: &Path, have: &mut HashSet<String>, q: &str, k: usize, partial: bool) -> u64 {
    let mut bytes = 0;
    // As browser-search.js asks: at most five rounds of fragments, then the answer.
    for _ in 0..8 {
        match e.search(q, k, 1, partial) {
            Step::Done(_) => return bytes,
            Step::Need(files) => {
                for f in files {
                    let raw = std::fs::read(dir.join(format!("{f}.gz"))).unwrap_or_default();
                    bytes += raw.len() as u64;
                    have.insert(f.clone());
                    e.add(&f, &inflate(&raw)).unwrap_or_else(|err| panic!("{f}: {err}"));
                }
            }
        }
    }
    panic!("no answer for {q}");
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [site, k, qa @ ..] = args.as_slice() else {
        return Err("usage: browser_bytes SITE_DIR K QA.csv [QA.csv …]".into());
    };
    let k: usize = k.parse()?;
    let search = PathBuf::from(site).join("_search");
    let pointer: serde_json::Value = serde_json::from_slice(&std::fs::read(search.join("search.json"))?)?;
    let build = pointer["build"].as_str().ok_or("search.json has no build")?;
    let dir = search.join(build);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    let manifest_gz = dir.join(format!("{MANIFEST}.gz"));
    // As stored, which is what a host that compresses nothing sends; the glue
    // and browser-search.js are small scripts left as they are.
    let engine = size(&search.join("search_web.js")) + size(&search.join("search_web_bg.wasm.gz"));
    let module = size(&PathBuf::from(site).join("assets/browser-search.js"));
    let fixed = size(&search.join("search.json")) + size(&manifest_gz) + engine + module;
    let manifest = inflate(&std::fs::read(&manifest_gz)?);
    let mut questions = Vec::new();
    for f in qa {
        questions.extend(read_qa(&PathBuf::from(f))?);
    }
    let (mut first, mut later, mut ms, mut typed) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut warm = Engine::open(&manifest)?;
    let mut have = HashSet::new();
    for (i, q) in questions.iter().enumerate() {
        let mut fresh = Engine::open(&manifest)?;
        let b = answer(&mut fresh, &dir, &mut HashSet::new(), &q.question, k);
        first.push(b as f64);
        // Typed from nothing, asked as search as you type asks (the word being
        // typed read as a prefix) at every word's end and at the last keystroke:
        // what the suggestions cost beyond the question itself.
        let mut typing = Engine::open(&manifest)?;
        let mut own = HashSet::new();
        let mut b = 0;
        let chars: Vec<(usize, char)> = q.question.char_indices().collect();
        for (n, &(i, c)) in chars.iter().enumerate().skip(1) {
            if c == ' ' || n + 1 == chars.len() {
                let end = if c == ' ' { i } else { q.question.len() };
                b += ask(&mut typing, &dir, &mut own, &q.question[..end], k, true);
            }
        }
        b += answer(&mut typing, &dir, &mut own, &q.question, k);
        typed.push(b as f64);
        let b = answer(&mut warm, &dir, &mut have, &q.question, k);
        if i > 0 {
            later.push(b as f64);
        }
        let t = std::time::Instant::now();
        for _ in 0..20 {
            std::hint::black_box(fresh.search(&q.question, k, 1, false));
        }
        ms.push(t.elapsed().as_secs_f64() * 1e3 / 20.0);
    }
    let kb = |v: f64| (v / 1024.0 * 10.0).round() / 10.0;
    println!(
        "{}",
        serde_json::json!({
            "questions": questions.len(),
            "k": k,
            "engine_kb": kb(engine as f64),
            "manifest_kb": kb(size(&manifest_gz) as f64),
            "first_query_kb": {
                "median": kb(percentile(&mut first.clone(), 0.5) + fixed as f64),
                "p90": kb(percentile(&mut first.clone(), 0.9) + fixed as f64),
                "max": kb(percentile(&mut first.clone(), 1.0) + fixed as f64),
            },
            "typed_question_fragments_kb": { "median": kb(percentile(&mut typed.clone(), 0.5)), "max": kb(percentile(&mut typed, 1.0)) },
            "first_query_fragments_kb": { "median": kb(percentile(&mut first.clone(), 0.5)), "max": kb(percentile(&mut first, 1.0)) },
            "later_query_kb": {
                "median": kb(percentile(&mut later.clone(), 0.5)),
                "p90": kb(percentile(&mut later.clone(), 0.9)),
                "max": kb(percentile(&mut later, 1.0)),
            },
            "fragments_fetched_over_all_questions": have.len(),
            "engine_ms_native_median": (percentile(&mut ms, 0.5) * 1000.0).round() / 1000.0,
        })
    );
    Ok(())
}
