//! Measures the "no good match" rule ([`search_core::index::relevance`]) over one
//! built index: the queries of `eval/no-match.txt` (nonsense and off-topic) and
//! the answerable questions of QA sets.
//!
//!     cargo run --release -p site-builder --example no_match -- [--dump] INDEX_DIR NO_MATCH.txt QA.csv…
//!
//! Prints one JSON object: for the index's default mode (what `/api/search`
//! answers) and for `bm25` (the browser's default engine), the share of the
//! no-match queries answered "no results", recall@5 of the answerable
//! questions as ranked and as shown (a question whose page is ranked but whose
//! results are withheld counts as lost), the questions lost, and, as the
//! results page asks (20 results), how many pages an answerable question shows
//! and how often its page is among them. `--dump`
//! prints instead one line per query with its evidence, whether its two sides
//! agree, and the first ten pages ranked (the calibration's input:
//! docs/benchmarks/no-match.md).

use std::path::PathBuf;

use search_core::index::lang::LangChoice;
use search_core::index::{Mode, SearchParams};
use search_service::service::{Query, Service};
use site_builder::search::Searcher;

/// One query asked in one mode.
struct Asked {
    hit5: bool,
    /// The target page among all the results shown.
    hit_all: bool,
    /// Distinct pages among the results shown.
    pages: usize,
    matched: bool,
    cosine: Option<f32>,
    lexical: f32,
    agree: bool,
    /// The distinct pages ranked, best first (at most ten).
    top: Vec<String>,
}

fn ask(svc: &Service<'_>, q: &str, params: SearchParams, target: Option<&str>) -> Result<Asked, String> {
    let t = std::time::Instant::now();
    let clock = || t.elapsed().as_secs_f64() * 1e3;
    // As `/api/search` without `lang`: in the question's language, else every one.
    let params = SearchParams { lang: svc.search_language(LangChoice::Question, q), ..params };
    let (r, _) = svc
        .rank_in_language(&Query { text: q, params, offset: 0, vector: None, count_more: false }, &clock)
        .map_err(|e| e.to_string())?;
    let urls: Vec<String> = r.hits.iter().filter_map(|h| svc.chunk(h.doc).ok().map(|m| m.url)).collect();
    let hit5 = target.is_some_and(|t| urls.iter().take(5).any(|u| u == t));
    let hit_all = target.is_some_and(|t| urls.iter().any(|u| u == t));
    let pages = urls.iter().collect::<std::collections::HashSet<_>>().len();
    let mut top: Vec<String> = Vec::new();
    for u in &urls {
        if top.len() < 10 && !top.contains(u) {
            top.push(u.clone());
        }
    }
    let (matched, cosine, lexical) = (r.evidence.matched(), r.evidence.cosine, r.evidence.lexical);
    Ok(Asked { hit5, hit_all, pages, matched, cosine, lexical, agree: r.evidence.agree, top })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let dump = args.first().is_some_and(|a| a == "--dump");
    if dump {
        args.remove(0);
    }
    let [dir, nomatch, qas @ ..] = args.as_slice() else {
        return Err("usage: no_match [--dump] INDEX_DIR NO_MATCH.txt QA.csv…".into());
    };
    let s = Searcher::open(&PathBuf::from(dir).join("index.bin"), None)?;
    let svc = s.service()?;
    let mut queries: Vec<(String, Option<String>)> =
        site_builder::eval::read_queries(&PathBuf::from(nomatch))?.into_iter().map(|q| (q, None)).collect();
    for qa in qas {
        for q in site_builder::eval::read_qa(&PathBuf::from(qa))? {
            queries.push((q.question, Some(site_builder::build::page_url(&q.source_file.replace('\\', "/")))));
        }
    }
    let default = svc.default_params(20);
    let modes = [("default", default), ("bm25", SearchParams { mode: Mode::Bm25, ..default })];
    let mut out = serde_json::Map::new();
    for (name, params) in modes {
        let (mut nonsense, mut declined, mut answerable, mut ranked, mut shown) = (0, 0, 0, 0, 0);
        let (mut shown_all, mut pages) = (0, 0);
        let mut lost = Vec::new();
        for (q, target) in &queries {
            let a = ask(&svc, q, params, target.as_deref())?;
            if dump {
                let set = if target.is_some() { "answerable" } else { "nomatch" };
                let line = serde_json::json!({"mode": name, "set": set, "q": q, "hit5": a.hit5,
                    "matched": a.matched, "cosine": a.cosine, "lexical": a.lexical, "agree": a.agree, "top": a.top,
                    "target": target});
                println!("{line}");
            }
            match target {
                None => {
                    nonsense += 1;
                    declined += usize::from(!a.matched);
                }
                Some(_) => {
                    answerable += 1;
                    ranked += usize::from(a.hit5);
                    shown += usize::from(a.hit5 && a.matched);
                    shown_all += usize::from(a.hit_all && a.matched);
                    pages += if a.matched { a.pages } else { 0 };
                    if a.hit5 && !a.matched {
                        lost.push(q.clone());
                    }
                }
            }
        }
        let share = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        out.insert(
            name.into(),
            serde_json::json!({
                "mode": params.mode.name(),
                "no_match_queries": nonsense,
                "answered_no_results": share(declined, nonsense),
                "answerable": answerable,
                "recall_at_5_ranked": share(ranked, answerable),
                "recall_at_5_shown": share(shown, answerable),
                "recall_at_20_shown": share(shown_all, answerable),
                "pages_shown_mean": share(pages, answerable),
                "lost": lost,
            }),
        );
    }
    if !dump {
        println!("{}", serde_json::Value::Object(out));
    }
    Ok(())
}
