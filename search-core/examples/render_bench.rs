//! Times what a page of results costs after ranking (reading each hit's record
//! and cutting its snippet), natively or in wasm:
//! `cargo run --release -p search-core --example render_bench -- INDEX QUESTIONS [ROUNDS]`
//! ranks each line of QUESTIONS (one question a line) in `bm25` mode, ten
//! results, and prints one JSON line: the p50 / p90 over the questions of the
//! records' decoding and of the snippets (one `Highlighter` for the page, as
//! the service cuts them), each the best of ROUNDS passes.

use std::time::Instant;

use search_core::container::AlignedBytes;
use search_core::index::{highlight, Index, Mode, SearchParams};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(index), Some(questions)) = (args.next(), args.next()) else {
        eprintln!("usage: render_bench INDEX QUESTIONS [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let bytes = AlignedBytes::new(&std::fs::read(&index).expect("index file"));
    let idx = Index::open(bytes.as_slice()).expect("an index");
    let text = std::fs::read_to_string(&questions).expect("questions file");
    let qs: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let p = SearchParams { mode: Mode::Bm25, ..idx.default_params(10) };
    let (mut records, mut snippets) = (Vec::new(), Vec::new());
    for q in &qs {
        let hits = idx.fuse(&idx.candidates(q, None, &p), None, &p);
        let hits = &hits[..hits.len().min(10)];
        let (mut best_r, mut best_s) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let t = Instant::now();
            let metas: Vec<_> = hits.iter().filter_map(|h| idx.chunk(h.doc).ok()).collect();
            let t1 = Instant::now();
            let mut hl = highlight::Highlighter::new(q);
            for m in &metas {
                std::hint::black_box(hl.snippet(&m.text));
            }
            let t2 = Instant::now();
            best_r = best_r.min((t1 - t).as_secs_f64() * 1e3);
            best_s = best_s.min((t2 - t1).as_secs_f64() * 1e3);
        }
        records.push(best_r);
        snippets.push(best_s);
    }
    let pct = |v: &mut Vec<f64>, f: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() as f64 * f) as usize).min(v.len() - 1)]
    };
    println!(
        "{{\"questions\":{},\"records_p50_ms\":{:.3},\"records_p90_ms\":{:.3},\"snippets_p50_ms\":{:.3},\"snippets_p90_ms\":{:.3}}}",
        qs.len(),
        pct(&mut records, 0.5),
        pct(&mut records, 0.9),
        pct(&mut snippets, 0.5),
        pct(&mut snippets, 0.9)
    );
}
