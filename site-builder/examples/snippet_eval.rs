//! Measures where result snippets come from: for each question of QA sets, is
//! the snippet shown for the question's source page cut from the section that
//! holds the answer?
//!
//!     cargo run --release -p site-builder --no-default-features --example snippet_eval -- INDEX_DIR QA.csv…
//!
//! The section that holds the answer is the chunk of the source page with the
//! largest share of the ground truth's content words (analysed as BM25 analyses
//! them: stemmed, stop words out); a question whose ground truth shares no word
//! with its page is left out. Prints one JSON object per QA set: of the
//! questions whose source page is the top result, the share whose result is
//! that section (`top_section`); the same over the questions whose page is in
//! the top 5 (`top5_section`); and the mean share of the ground truth's words
//! the snippet shows (`snippet_recall`). docs/benchmarks/snippets.md.

use std::collections::HashSet;
use std::path::PathBuf;

use search_core::index::{analyzer, Index};
use search_service::service::Service;
use site_builder::search::Searcher;

/// The questions of one set, scored.
#[derive(Default)]
struct Tally {
    questions: usize,
    top: usize,
    top_section: usize,
    top5: usize,
    top5_section: usize,
    snippet_recall: f64,
}

/// The chunks of page `url` and the one with the most of `truth`'s words.
fn answer_chunk(idx: &Index<'_>, url: &str, truth: &HashSet<String>) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for d in 0..idx.len() as u32 {
        let Ok(m) = idx.chunk(d) else { continue };
        if m.url != url {
            continue;
        }
        let words: HashSet<String> = analyzer::terms(&m.text).into_iter().collect();
        let shared = truth.intersection(&words).count();
        if shared > 0 && best.as_ref().is_none_or(|b| shared > b.0) {
            best = Some((shared, m.id));
        }
    }
    best.map(|b| b.1)
}

fn score_set(svc: &Service<'_>, idx: &Index<'_>, qa: &str, t: &mut Tally) -> Result<(), Box<dyn std::error::Error>> {
    for q in site_builder::eval::read_qa(&PathBuf::from(qa))? {
        let url = site_builder::build::page_url(&q.source_file.replace('\\', "/"));
        let truth: HashSet<String> = analyzer::terms(&q.ground_truth).into_iter().collect();
        let Some(answer) = answer_chunk(idx, &url, &truth) else { continue };
        t.questions += 1;
        let clock = || 0.0;
        let r = svc.search(&q.question, &svc.default_params(5), 1, &clock)?;
        let Some(pos) = r.results.iter().position(|h| h.url.split('#').next() == Some(url.as_str())) else {
            continue;
        };
        let hit = &r.results[pos];
        let section = hit.chunk_id == answer;
        if pos == 0 {
            t.top += 1;
            t.top_section += usize::from(section);
        }
        t.top5 += 1;
        t.top5_section += usize::from(section);
        let shown: HashSet<String> =
            analyzer::terms(&hit.snippet.replace("<mark>", "").replace("</mark>", "")).into_iter().collect();
        t.snippet_recall += truth.intersection(&shown).count() as f64 / truth.len().max(1) as f64;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, qas @ ..] = args.as_slice() else {
        return Err("usage: snippet_eval INDEX_DIR QA.csv…".into());
    };
    let s = Searcher::open(&PathBuf::from(dir).join("index.bin"), None)?;
    let svc = s.service()?;
    let idx = svc.index().ok_or("a bundled index")?;
    for qa in qas {
        let mut t = Tally::default();
        score_set(&svc, idx, qa, &mut t)?;
        let share = |a: usize, b: usize| (a as f64 / b.max(1) as f64 * 1000.0).round() / 1000.0;
        let line = serde_json::json!({
            "qa": qa, "questions": t.questions, "top": t.top, "top5": t.top5,
            "top_section": share(t.top_section, t.top),
            "top5_section": share(t.top5_section, t.top5),
            "snippet_recall": (t.snippet_recall / t.top5.max(1) as f64 * 1000.0).round() / 1000.0,
        });
        println!("{line}");
    }
    Ok(())
}
