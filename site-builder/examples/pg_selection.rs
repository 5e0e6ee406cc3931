//! Whether the BM25 candidate choice of the PostgreSQL backend (common terms
//! left out of the choice, `search_service::pg::SELECTION_DF`, and the threshold
//! that proves the choice exact or falls back) gives the `bm25` ranking of the
//! exact choice (every term summed), and what each costs, on a published tenant.
//!
//!     cargo run --release -p site-builder --example pg_selection -- URL TENANT QUERIES.txt [N] [PASSAGES]
//!
//! PASSAGES: for a scale_corpus tenant, the number of distinct passages (its
//! log says it): chunk i is a variant of passage i mod PASSAGES, and its 32-odd
//! variants nearly tie, so overlap is also counted by passage.
//! A sixth argument sets the cutoff (default `SELECTION_DF`), a seventh the
//! candidate cap (default `CANDIDATE_CAP`), an eighth how deep the rankings are
//! read and compared (default 100).
//!
//! With `KB_EXPLAIN=N`, the plan of the chosen store's BM25 statements
//! (`EXPLAIN ANALYZE`, run beside each) is printed for the first N queries;
//! their chosen times then include the explained run, so time without it.
//!
//! QUERIES.txt: one `/api/search?q=…` path per line (scale_corpus writes them).
//! Prints how many of the rankings are identical (chunks and scores
//! to the bit), the mean top-10 overlap, how the choices went (all terms,
//! proven by the threshold, fell back) and the median / p90 time of both.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use search_core::index::Mode;
use search_service::pg::{Sql, SqlError, Store, Value};
use site_builder::pg::{Client, Shared};

/// A client that also explains the BM25 statements (those that start `WITH`)
/// while `left` is above zero.
struct Explain {
    sql: Shared,
    left: Arc<AtomicUsize>,
}

impl Sql for Explain {
    fn query(&self, statement: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, SqlError> {
        if statement.starts_with("WITH") && self.left.load(Ordering::Relaxed) > 0 {
            let plan = self.sql.query(&format!("EXPLAIN (ANALYZE, BUFFERS) {statement}"), params)?;
            for row in plan {
                if let Some(Value::Text(line)) = row.first() {
                    println!("{line}");
                }
            }
        }
        self.sql.query(statement, params)
    }
}

fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    let (url, tenant, file) = (&a[1], &a[2], &a[3]);
    let n: usize = a.get(4).map_or(200, |s| s.parse().unwrap_or(200));
    let passages: u32 = a.get(5).map_or(u32::MAX, |s| s.parse().unwrap_or(u32::MAX));
    let client = Arc::new(Client::new(url, None).map_err(|e| e.to_string())?);
    let exact = Store::new(Box::new(Shared(client.clone())), tenant).with_selection_df(usize::MAX);
    let cutoff: usize = a.get(6).map_or(search_service::pg::SELECTION_DF, |s| s.parse().unwrap_or(usize::MAX));
    let cap: usize = a.get(7).map_or(search_service::pg::CANDIDATE_CAP, |s| s.parse().unwrap_or(usize::MAX));
    let explain: usize = std::env::var("KB_EXPLAIN").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let left = Arc::new(AtomicUsize::new(explain));
    let chosen = Store::new(Box::new(Explain { sql: Shared(client), left: left.clone() }), tenant)
        .with_selection_df(cutoff)
        .with_candidate_cap(cap);
    println!("selection df: max({cutoff}, N / 20), candidate cap {cap}");
    let depth: usize = a.get(8).map_or(100, |s| s.parse().unwrap_or(100));
    let mut p = exact.default_params(depth).map_err(|e| e.to_string())?;
    (p.mode, p.depth) = (Mode::Bm25, depth);
    let queries: Vec<String> = std::fs::read_to_string(file)
        .map_err(|e| e.to_string())?
        .lines()
        .filter_map(|l| l.split("q=").nth(1))
        .map(|q| {
            percent_encoding::percent_decode_str(q.split('&').next().unwrap_or("")).decode_utf8_lossy().into_owned()
        })
        .take(n)
        .collect();
    let (mut overlap, mut by_passage, mut top1, mut te, mut tc) = (0.0, 0.0, 0, Vec::new(), Vec::new());
    let mut identical = 0;
    for q in &queries {
        let t = Instant::now();
        let (e, _) = exact.search(q, None, &p).map_err(|e| e.to_string())?;
        te.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let (c, _) = chosen.search(q, None, &p).map_err(|e| e.to_string())?;
        tc.push(t.elapsed().as_secs_f64() * 1e3);
        if left.load(Ordering::Relaxed) > 0 {
            left.fetch_sub(1, Ordering::Relaxed);
            println!("-- {q}: {:?}", chosen.choices());
        }
        let es: std::collections::HashSet<u32> = e.iter().take(10).map(|h| h.doc).collect();
        let shared = c.iter().take(10).filter(|h| es.contains(&h.doc)).count();
        overlap += shared as f64 / es.len().max(1) as f64;
        let ep: std::collections::HashSet<u32> = e.iter().take(10).map(|h| h.doc % passages).collect();
        let cp: std::collections::HashSet<u32> = c.iter().take(10).map(|h| h.doc % passages).collect();
        by_passage += ep.intersection(&cp).count() as f64 / ep.len().max(1) as f64;
        top1 += usize::from(e.first().map(|h| h.doc) == c.first().map(|h| h.doc));
        let key =
            |h: &[search_core::index::Hit]| h.iter().map(|h| (h.doc, h.bm25.map(f32::to_bits))).collect::<Vec<_>>();
        identical += usize::from(key(&e) == key(&c));
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[v.len() / 2], v[v.len() * 9 / 10])
    };
    let (em, ep) = med(&mut te);
    let (cm, cp) = med(&mut tc);
    println!("{identical} of {} rankings identical {depth} deep; choices {:?}", queries.len(), chosen.choices());
    println!(
        "{} queries: top-10 overlap {:.3} (by passage {:.3}), same top result {:.3}; exact p50 {em:.1} ms p90 {ep:.1} ms; chosen p50 {cm:.1} ms p90 {cp:.1} ms",
        queries.len(),
        overlap / queries.len() as f64,
        by_passage / queries.len() as f64,
        top1 as f64 / queries.len() as f64
    );
    Ok(())
}
