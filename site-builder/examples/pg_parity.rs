//! How often the PostgreSQL backend's top 5 equals the bundled index's, chunk
//! for chunk and in order, over QA questions (docs/benchmarks/postgres.md).
//!
//!     cargo run --release -p site-builder --example pg_parity -- INDEX URL TENANT QA.csv...

use search_service::service::Query;
use site_builder::search::Searcher;

fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    let index = std::path::Path::new(&a[1]);
    let bundled = Searcher::open(index, None).map_err(|e| e.to_string())?;
    let remote = Searcher::open_postgres(index, &a[2], &a[3], None).map_err(|e| e.to_string())?;
    let (b, r) = (bundled.service().map_err(|e| e.to_string())?, remote.service().map_err(|e| e.to_string())?);
    let (mut n, mut same, mut same_set) = (0, 0, 0);
    for qa in &a[4..] {
        for q in site_builder::eval::read_qa(std::path::Path::new(qa)).map_err(|e| e.to_string())? {
            let p = b.default_params(5);
            let query = Query { text: &q.question, params: p, offset: 0, vector: None, count_more: false };
            let ids = |s: &search_service::service::Service| -> Result<Vec<String>, String> {
                let hits = s.rank(&query, &|| 0.0).map_err(|e| e.to_string())?.hits;
                hits.iter().map(|h| s.chunk(h.doc).map(|m| m.id).map_err(|e| e.to_string())).collect()
            };
            let (x, y) = (ids(&b)?, ids(&r)?);
            n += 1;
            same += usize::from(x == y);
            let mut xs = x.clone();
            let mut ys = y.clone();
            xs.sort();
            ys.sort();
            same_set += usize::from(xs == ys);
            if x != y {
                println!("differs: {}\n  bundled  {x:?}\n  postgres {y:?}", q.question);
            }
        }
    }
    println!(
        "{n} questions: top 5 identical in order {same} ({:.1} %), as a set {same_set} ({:.1} %)",
        100.0 * same as f64 / n as f64,
        100.0 * same_set as f64 / n as f64
    );
    Ok(())
}
