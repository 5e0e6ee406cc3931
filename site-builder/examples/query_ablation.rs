//! An ablation of query-time methods for the retrieval issue ("questions in the
//! reader's words"), each applied to the default fused ranking of a built index and
//! scored exactly as `site-builder eval` scores it (recall@5, context precision
//! over the 5 chunks, MRR@10 over pages), over every QA file given together:
//!
//! - `dense prf m β`: Rocchio on the query vector, `q + β · mean(top m vectors)`,
//!   renormalised, and the dense side searched again (BM25 unchanged);
//! - `rm3 m n λ`: RM3 on the BM25 side, the `n` terms that weigh most in the top
//!   `m` chunks (term frequency share × fused score), mixed with the query's own
//!   terms at `λ` / `1 − λ`;
//! - `linear hN aA`, `zscore hN`: fusion without the clamp (every candidate's exact
//!   cosine and BM25, each side scaled by the range, or mean ± 3σ, of its top N);
//!   `convex clamp ndN`: today's fusion with a deeper range;
//! - `title`, `path`: a second, short field (the page title, or the breadcrumb)
//!   scored by BM25 and by cosine and added to the fused score at weight `t`;
//! - `vocab`: the knowledge base's names (terms written capitalised mid-sentence
//!   in most of their occurrences) added to the BM25 query when the query's other
//!   terms co-occur with them (Σ idf · P(name | term) / Σ idf ≥ θ);
//! - `page γ`: a chunk's score moved toward its page's best by `γ`;
//! - `pages together nN`: the first N chunks reordered so that each page's chunks
//!   sit together; `page sum aA dD m1`: pages ranked by best + D · second best
//!   chunk, each page's best chunk first (what `Order::Pages` now does in the
//!   product), at convex α A; `page lse aA tT topN`: pages ranked by a
//!   log-sum-exp (temperature T) of their N best chunks' scores, a soft maximum
//!   in which a second chunk counts as much as it is close to the best;
//!   `page sum aA d1 second in topN`: best + second, the second counted only
//!   when it is among the first N fused chunks; `ident aA page sum d1`: queries
//!   that name an identifier fused at α A (the product's `fusion::for_query`
//!   uses 0.4), the rest at 0.5;
//! - `convex aA`, `bm25 kK bB`: the fusion weight and BM25's k1 and b;
//! - `maxp`, `blend+maxp w`: with `--windows FILE`, every 256-token window of every
//!   chunk is embedded (and kept in FILE for the next run), and the dense side
//!   scores a chunk by its best window (MaxP), or mixes that with the stored vector.
//!
//!     cargo run --release -p site-builder --example query_ablation -- INDEX QA.csv [QA.csv…] [--windows FILE]
//!
//! docs/benchmarks/readers-words.md has the table and what was kept.

use std::collections::HashMap;
use std::path::PathBuf;

use search_core::index::{analyzer, fusion, Candidates, Hit, Index, Mode, SearchParams};
use site_builder::eval::{context_precision, read_qa, reciprocal_rank, Question};
use site_builder::search::Searcher;

#[derive(Default, Clone, Copy)]
struct Acc {
    n: f64,
    recall: f64,
    cp: f64,
    mrr: f64,
}

impl Acc {
    fn add(&mut self, idx: &Index<'_>, hits: &[Hit], target: &str) {
        let urls: Vec<String> = hits.iter().map(|h| idx.chunk(h.doc).map(|m| m.url).unwrap_or_default()).collect();
        let rel: Vec<bool> = urls.iter().map(|u| u == target).collect();
        let mut seen = std::collections::HashSet::new();
        let pages: Vec<bool> = urls.iter().filter(|u| seen.insert(u.as_str())).map(|u| u == target).collect();
        self.n += 1.0;
        self.recall += f64::from(u8::from(rel.iter().take(5).any(|&r| r)));
        self.cp += context_precision(&rel, 5);
        self.mrr += reciprocal_rank(&pages, 10);
    }
    fn line(&self) -> String {
        format!("{:.3} / {:.3} / {:.3}", self.recall / self.n, self.cp / self.n, self.mrr / self.n)
    }
}

fn normalise(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= n);
}

fn dense_prf(idx: &Index<'_>, q: &[f32], first: &[Hit], m: usize, beta: f32) -> Vec<f32> {
    let mut v = q.to_vec();
    let top: Vec<&Hit> = first.iter().take(m).collect();
    for h in &top {
        for (x, y) in v.iter_mut().zip(idx.vector(h.doc)) {
            *x += beta * y / top.len() as f32;
        }
    }
    normalise(&mut v);
    v
}

/// Weighted BM25: Σ_t w_t · BM25_t(d), best first.
fn weighted_bm25(idx: &Index<'_>, terms: &[(String, f32)], p: &SearchParams) -> Vec<(u32, f32, f32)> {
    let mut acc: HashMap<u32, f32> = HashMap::new();
    for (t, w) in terms {
        for (d, s, _) in idx.bm25_scores_of(vec![t.clone()], p.k1, p.b) {
            *acc.entry(d).or_default() += w * s;
        }
    }
    let mut out: Vec<(u32, f32, f32)> = acc.into_iter().map(|(d, s)| (d, s, 0.0)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out.truncate(p.depth);
    out
}

fn rm3_terms(idx: &Index<'_>, query: &str, first: &[Hit], m: usize, n: usize, lambda: f32) -> Vec<(String, f32)> {
    let orig = analyzer::terms(query);
    let mut fb: HashMap<String, f32> = HashMap::new();
    for h in first.iter().take(m) {
        let Ok(c) = idx.chunk(h.doc) else { continue };
        let ts = analyzer::terms(&format!("{}\n{}", c.title, c.text));
        let len = ts.len().max(1) as f32;
        for t in ts {
            *fb.entry(t).or_default() += h.score.max(0.0) / len;
        }
    }
    let mut fb: Vec<(String, f32)> = fb.into_iter().filter(|(t, _)| !orig.contains(t)).collect();
    fb.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fb.truncate(n);
    let total: f32 = fb.iter().map(|x| x.1).sum::<f32>().max(1e-12);
    let mut out: Vec<(String, f32)> = {
        let mut o = orig.clone();
        o.sort();
        o.dedup();
        o.into_iter().map(|t| (t, lambda)).collect()
    };
    // Original terms each weigh λ (as the unweighted query does, scaled); the
    // feedback terms share (1 − λ) · |query| in proportion to their weight.
    let q_terms = out.len().max(1) as f32;
    out.extend(fb.into_iter().map(|(t, w)| (t, (1.0 - lambda) * q_terms * w / total)));
    out
}

fn page_group(idx: &Index<'_>, hits: &[Hit], gamma: f32) -> Vec<Hit> {
    let mut best: HashMap<u32, f32> = HashMap::new();
    for h in hits {
        let e = best.entry(idx.page_of(h.doc)).or_insert(f32::MIN);
        *e = e.max(h.score);
    }
    let mut out: Vec<Hit> = hits
        .iter()
        .map(|h| Hit { score: h.score + gamma * (best[&idx.page_of(h.doc)] - h.score), ..h.clone() })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
    out
}

/// The first `n` hits reordered so that each page's chunks sit together, pages in
/// the order of their best chunk (the order the results page shows them in);
/// which chunks are in the first `n`, and the page ranking, do not change.
fn pages_together(idx: &Index<'_>, hits: &[Hit], n: usize) -> Vec<Hit> {
    let n = n.min(hits.len());
    let mut first: HashMap<u32, usize> = HashMap::new();
    for (i, h) in hits[..n].iter().enumerate() {
        first.entry(idx.page_of(h.doc)).or_insert(i);
    }
    let mut head: Vec<(usize, usize, Hit)> =
        hits[..n].iter().enumerate().map(|(i, h)| (first[&idx.page_of(h.doc)], i, h.clone())).collect();
    head.sort_by_key(|&(p, i, _)| (p, i));
    head.into_iter().map(|(_, _, h)| h).chain(hits[n..].iter().cloned()).collect()
}

/// Pages ranked by their best chunk plus `delta` times their second best (a page
/// that several chunks match beats one lucky chunk), each page's first `per_page`
/// chunks together in that order, the rest after in their own order.
fn page_sum(idx: &Index<'_>, hits: &[Hit], delta: f32, per_page: usize) -> Vec<Hit> {
    page_by(idx, hits, per_page, |s| s[0] + delta * s.get(1).copied().unwrap_or(0.0).max(0.0))
}

/// Pages ranked by `score` of their chunks' fused scores (best first), each
/// page's first `per_page` chunks together in that order, the rest after.
fn page_by(idx: &Index<'_>, hits: &[Hit], per_page: usize, score: impl Fn(&[f32]) -> f32) -> Vec<Hit> {
    let mut all: HashMap<u32, (Vec<f32>, usize)> = HashMap::new();
    for (i, h) in hits.iter().enumerate() {
        all.entry(idx.page_of(h.doc)).or_insert((Vec::new(), i)).0.push(h.score);
    }
    let tops: HashMap<u32, (f32, usize)> = all.iter().map(|(p, (s, i))| (*p, (score(s), *i))).collect();
    let mut pages: Vec<u32> = tops.keys().copied().collect();
    pages.sort_by(|a, b| tops[b].0.total_cmp(&tops[a].0).then(tops[a].1.cmp(&tops[b].1)));
    let mut head = Vec::new();
    let mut tail = Vec::new();
    let mut taken: HashMap<u32, usize> = HashMap::new();
    for h in hits {
        let n = taken.entry(idx.page_of(h.doc)).or_insert(0);
        *n += 1;
        if *n <= per_page {
            head.push(h.clone())
        } else {
            tail.push(h.clone())
        }
    }
    let rank: HashMap<u32, usize> = pages.iter().enumerate().map(|(i, p)| (*p, i)).collect();
    head.sort_by_key(|h| rank[&idx.page_of(h.doc)]);
    head.extend(tail);
    head
}

/// Linear fusion without clamping: every candidate's exact cosine and exact BM25
/// (0 when no term matched), each side scaled by the range of its top `head`.
/// `z`: scale by mean ± 3σ of the side's top `head` (distribution-based).
fn linear(
    idx: &Index<'_>,
    qv: &[f32],
    dense: &[(u32, f32)],
    sparse: &[(u32, f32, f32)],
    head: usize,
    alpha: f32,
    z: bool,
) -> Vec<Hit> {
    let range = |xs: Vec<f32>| -> (f32, f32) {
        if z {
            let n = xs.len().max(1) as f32;
            let mean = xs.iter().sum::<f32>() / n;
            let sd = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n).sqrt();
            (mean - 3.0 * sd, mean + 3.0 * sd)
        } else {
            xs.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &s| (lo.min(s), hi.max(s)))
        }
    };
    let (dl, dh) = range(dense.iter().take(head).map(|x| x.1).collect());
    let (sl, sh) = range(sparse.iter().take(head).map(|x| x.1).collect());
    let bm: HashMap<u32, f32> = sparse.iter().map(|x| (x.0, x.1)).collect();
    let mut docs: Vec<u32> = dense.iter().map(|x| x.0).chain(sparse.iter().take(100).map(|x| x.0)).collect();
    docs.sort_unstable();
    docs.dedup();
    let mut out: Vec<Hit> = docs
        .into_iter()
        .map(|d| {
            let c = idx.dense_score(qv, d);
            let b = bm.get(&d).copied().unwrap_or(0.0);
            let nd = if dh > dl { (c - dl) / (dh - dl) } else { 0.0 };
            let ns = if sh > sl { (b - sl) / (sh - sl) } else { 0.0 };
            Hit { doc: d, score: alpha * nd + (1.0 - alpha) * ns, dense: Some(c), bm25: Some(b) }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
    out
}

/// Pages' titles as a second, short field: BM25 over the titles alone (k1 1.2,
/// b 0.75) and each title's vector.
struct Titles {
    /// page ordinal → analysed terms of the title (with its breadcrumb when `path`).
    terms: HashMap<u32, Vec<String>>,
    vectors: HashMap<u32, Vec<f32>>,
    df: HashMap<String, usize>,
    avg_len: f32,
}

impl Titles {
    fn new(svc: &search_service::service::Service<'_>, path: bool) -> Titles {
        let Some(idx) = svc.index() else { panic!("query_ablation reads an index file") };
        let mut terms = HashMap::new();
        let mut vectors = HashMap::new();
        for d in 0..idx.len() as u32 {
            let page = idx.page_of(d);
            if terms.contains_key(&page) {
                continue;
            }
            let Ok(m) = idx.chunk(d) else { continue };
            let text = if path && !m.path.is_empty() { m.path.join(" / ") } else { m.title.clone() };
            terms.insert(page, analyzer::terms(&text));
            vectors.insert(page, svc.embed_for(&text, Mode::Dense).unwrap_or_default());
        }
        let mut df: HashMap<String, usize> = HashMap::new();
        for ts in terms.values() {
            let mut u = ts.clone();
            u.sort();
            u.dedup();
            for t in u {
                *df.entry(t).or_default() += 1;
            }
        }
        let avg_len = terms.values().map(|t| t.len() as f32).sum::<f32>() / terms.len().max(1) as f32;
        Titles { terms, vectors, df, avg_len }
    }
    fn bm25(&self, page: u32, q: &[String]) -> f32 {
        let Some(ts) = self.terms.get(&page) else { return 0.0 };
        let n = self.terms.len() as f32;
        let len = ts.len() as f32;
        let mut s = 0.0;
        let mut qs = q.to_vec();
        qs.sort();
        qs.dedup();
        for t in &qs {
            let tf = ts.iter().filter(|x| *x == t).count() as f32;
            if tf == 0.0 {
                continue;
            }
            let df = self.df.get(t).copied().unwrap_or(0) as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / self.avg_len));
        }
        s
    }
}

/// The first ranking's top 100 re-scored with `tau` times a title signal of the
/// chunk's page (min-max over the best 10 pages among the candidates).
fn with_titles(
    idx: &Index<'_>,
    titles: &Titles,
    query: &str,
    qv: &[f32],
    base: &[Hit],
    tau: f32,
    dense_w: f32,
) -> Vec<Hit> {
    let qt = analyzer::terms(query);
    let mut page_sig: HashMap<u32, (f32, f32)> = HashMap::new();
    for h in base.iter().take(100) {
        let page = idx.page_of(h.doc);
        page_sig.entry(page).or_insert_with(|| {
            let cos = titles.vectors.get(&page).map(|v| v.iter().zip(qv).map(|(a, b)| a * b).sum()).unwrap_or(0.0);
            (titles.bm25(page, &qt), cos)
        });
    }
    let head = |f: &dyn Fn(&(f32, f32)) -> f32| -> (f32, f32) {
        let mut v: Vec<f32> = page_sig.values().map(f).collect();
        v.sort_by(|a, b| b.total_cmp(a));
        v.truncate(10);
        (v.last().copied().unwrap_or(0.0), v.first().copied().unwrap_or(0.0))
    };
    let (bl, bh) = head(&|x| x.0);
    let (cl, ch) = head(&|x| x.1);
    let mm = |x: f32, (lo, hi): (f32, f32)| if hi > lo { ((x - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 0.0 };
    let mut out: Vec<Hit> = base
        .iter()
        .take(100)
        .map(|h| {
            let s = page_sig[&idx.page_of(h.doc)];
            let t = dense_w * mm(s.1, (cl, ch)) + (1.0 - dense_w) * mm(s.0, (bl, bh));
            Hit { score: h.score + tau * t, ..h.clone() }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
    out
}

/// The knowledge base's names (terms written capitalised mid-sentence in most of
/// their occurrences: Allas, cPouta, Puhti) and, for every other term, how often
/// a chunk that has it also has each name: P(name | term) over chunks.
struct Vocabulary {
    names: std::collections::HashSet<String>,
    df: HashMap<String, usize>,
    co: HashMap<String, HashMap<String, usize>>,
    chunks: usize,
}

impl Vocabulary {
    fn new(idx: &Index<'_>) -> Vocabulary {
        let mut cap: HashMap<String, usize> = HashMap::new();
        let mut tf: HashMap<String, usize> = HashMap::new();
        let mut sets: Vec<Vec<String>> = Vec::new();
        for d in 0..idx.len() as u32 {
            let Ok(m) = idx.chunk(d) else { continue };
            let ts = analyzer::terms(&m.text);
            for t in &ts {
                *tf.entry(t.clone()).or_default() += 1;
            }
            let mut prev = '.';
            for w in m.text.split_whitespace() {
                let word = w.trim_matches(|c: char| !c.is_alphanumeric());
                let initial = matches!(prev, '.' | '!' | '?' | ':' | '#' | '*' | '-' | '|' | '>' | '[' | '(' | '"');
                if !initial && word.chars().any(char::is_uppercase) && word.chars().all(char::is_alphanumeric) {
                    if let Some(t) = analyzer::terms(word).into_iter().next() {
                        *cap.entry(t).or_default() += 1;
                    }
                }
                prev = w.chars().last().unwrap_or('.');
            }
            let mut u = ts;
            u.sort();
            u.dedup();
            sets.push(u);
        }
        let mut df: HashMap<String, usize> = HashMap::new();
        for u in &sets {
            for t in u {
                *df.entry(t.clone()).or_default() += 1;
            }
        }
        let names: std::collections::HashSet<String> = cap
            .iter()
            .filter(|(t, &c)| {
                let n = tf.get(*t).copied().unwrap_or(0);
                let dfn = df.get(*t).copied().unwrap_or(0);
                n >= 5 && c * 4 >= n && dfn >= 3 && dfn * 4 <= sets.len() && t.len() >= 2 && !t.starts_with('=')
            })
            .map(|(t, _)| t.clone())
            .collect();
        let mut co: HashMap<String, HashMap<String, usize>> = HashMap::new();
        for u in &sets {
            let ns: Vec<&String> = u.iter().filter(|t| names.contains(*t)).collect();
            for t in u.iter().filter(|t| !names.contains(*t)) {
                let e = co.entry(t.clone()).or_default();
                for n in &ns {
                    *e.entry((*n).clone()).or_default() += 1;
                }
            }
        }
        Vocabulary { names, df, co, chunks: sets.len() }
    }

    /// Names the query does not say but its other terms point to: score(n) =
    /// Σ idf(t) · P(n | t) / Σ idf(t) over the query's non-name terms.
    fn expand(&self, query: &str, theta: f32, max: usize) -> Vec<(String, f32)> {
        let mut q = analyzer::terms(query);
        q.sort();
        q.dedup();
        let n = self.chunks as f32;
        let mut total = 0.0;
        let mut score: HashMap<&str, f32> = HashMap::new();
        for t in q.iter().filter(|t| !self.names.contains(*t)) {
            let Some(&df) = self.df.get(t) else { continue };
            let idf = ((n - df as f32 + 0.5) / (df as f32 + 0.5) + 1.0).ln();
            total += idf;
            if let Some(m) = self.co.get(t) {
                for (name, &c) in m {
                    *score.entry(name.as_str()).or_default() += idf * c as f32 / df as f32;
                }
            }
        }
        let mut out: Vec<(String, f32)> = score
            .into_iter()
            .filter(|(name, _)| !q.iter().any(|t| t == name))
            .map(|(name, s)| (name.to_string(), s / total.max(1e-6)))
            .filter(|(_, s)| *s >= theta)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(max);
        out
    }
}

/// Every window vector of every chunk (`chunks.jsonl` beside the index, the
/// indexed text as the build embedded it), cached in `file` as little-endian f32
/// rows preceded by each chunk's window count.
fn window_vectors(
    svc: &search_service::service::Service<'_>,
    index: &std::path::Path,
    file: &std::path::Path,
) -> Result<Vec<Vec<Vec<f32>>>, Box<dyn std::error::Error>> {
    use rayon::prelude::*;
    const DIM: usize = search_core::encoder::DIM;
    let chunks_path = index.with_file_name("chunks.jsonl");
    let chunks = search_core::chunk::decode_jsonl(&std::fs::read_to_string(&chunks_path)?)?;
    if let Ok(bytes) = std::fs::read(file) {
        let mut out = Vec::new();
        let mut at = 0;
        let f = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        while at + 4 <= bytes.len() {
            let n = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize;
            at += 4;
            let rows = (0..n).map(|w| (0..DIM).map(|d| f(&bytes[at + (w * DIM + d) * 4..])).collect()).collect();
            at += n * DIM * 4;
            out.push(rows);
        }
        if out.len() == chunks.len() {
            return Ok(out);
        }
    }
    let enc = svc.encoder();
    let t = std::time::Instant::now();
    let out: Vec<Vec<Vec<f32>>> = chunks
        .par_iter()
        .map(|c| {
            let seqs = site_builder::embed::windows(enc, &c.index_text, site_builder::embed::LongText::Mean);
            let v = enc.embed_tokens(&seqs);
            v.chunks_exact(DIM).map(<[f32]>::to_vec).collect()
        })
        .collect();
    let windows: usize = out.iter().map(Vec::len).sum();
    println!("embedded {windows} windows of {} chunks in {:.0} s", chunks.len(), t.elapsed().as_secs_f64());
    let mut bytes = Vec::new();
    for rows in &out {
        bytes.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        for r in rows {
            for x in r {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    std::fs::write(file, bytes)?;
    Ok(out)
}

/// One question and what every variant of it needs: the index, the default
/// parameters (convex over 100 candidates), the page it is about and its vector.
struct Case<'q, 'i> {
    idx: &'q Index<'i>,
    p: SearchParams,
    question: &'q str,
    category: &'q str,
    target: String,
    qv: Vec<f32>,
}

impl Case<'_, '_> {
    /// The exact cosine of chunk `d` with the question's vector.
    fn dense(&self, d: u32) -> Option<f32> {
        Some(self.idx.dense_score(&self.qv, d))
    }

    /// The candidates of the question's vector under `p`.
    fn candidates(&self, p: &SearchParams) -> Candidates {
        self.idx.candidates(self.question, Some(&self.qv), p)
    }

    /// The candidates of `qvec` under `cand` (BM25's side replaced by `sparse` when
    /// given), fused under `fuse` with exact cosines of `qvec`.
    fn fuse_with(
        &self,
        qvec: &[f32],
        sparse: Option<Vec<(u32, f32, f32)>>,
        cand: &SearchParams,
        fuse: &SearchParams,
    ) -> Vec<Hit> {
        let mut c: Candidates = self.idx.candidates(self.question, Some(qvec), cand);
        if let Some(s) = sparse {
            c.sparse = s;
        }
        let dense_of = |d: u32| Some(self.idx.dense_score(qvec, d));
        fusion::fuse(fuse, &c.dense, &c.sparse, dense_of)
    }

    /// The default ranking with `qvec` for the dense side and `sparse`, when
    /// given, for BM25's.
    fn search(&self, qvec: &[f32], sparse: Option<Vec<(u32, f32, f32)>>) -> Vec<Hit> {
        self.fuse_with(qvec, sparse, &self.p, &self.p)
    }

    /// The question's own ranking under `p`.
    fn fused(&self, p: &SearchParams) -> Vec<Hit> {
        self.fuse_with(&self.qv, None, p, p)
    }
}

/// The table: one row per variant, in the order the variants first came, each
/// scored over every question and by category.
#[derive(Default)]
struct Table {
    rows: Vec<(String, HashMap<String, Acc>)>,
}

impl Table {
    fn record(&mut self, case: &Case<'_, '_>, name: String, hits: &[Hit]) {
        let pos = self.rows.iter().position(|r| r.0 == name).unwrap_or_else(|| {
            self.rows.push((name.clone(), HashMap::new()));
            self.rows.len() - 1
        });
        self.rows[pos].1.entry("all".into()).or_default().add(case.idx, hits, &case.target);
        self.rows[pos].1.entry(case.category.into()).or_default().add(case.idx, hits, &case.target);
    }

    fn print(&self) {
        println!("{:<24} {:<24} {:<24} {:<24} {:<24}", "variant", "all R/CP/MRR", "natural", "keyword", "identifier");
        for (name, accs) in &self.rows {
            let get = |c: &str| accs.get(c).map(|a| a.line()).unwrap_or_default();
            println!(
                "{name:<24} {:<24} {:<24} {:<24} {:<24}",
                get("all"),
                get("natural"),
                get("keyword"),
                get("identifier")
            );
        }
    }
}

/// What some variants read besides the index: the window vectors (`--windows`),
/// the pages' titles and breadcrumbs, the knowledge base's names.
struct Fields {
    windows: Option<Vec<Vec<Vec<f32>>>>,
    titles: Titles,
    paths: Titles,
    vocab: Vocabulary,
}

/// The command line: the index, the QA files and the `--windows` file.
struct Args {
    index: String,
    qa: Vec<String>,
    windows_file: Option<PathBuf>,
}

fn parse_args() -> Result<Args, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (args, windows_file) = match args.iter().position(|a| a == "--windows") {
        Some(i) if i + 1 < args.len() => {
            let f = PathBuf::from(&args[i + 1]);
            ([&args[..i], &args[i + 2..]].concat(), Some(f))
        }
        Some(_) => return Err("--windows needs a FILE".into()),
        None => (args, None),
    };
    let [index, qa @ ..] = args.as_slice() else {
        return Err("usage: query_ablation INDEX QA.csv [QA.csv…] [--windows FILE]".into());
    };
    if qa.is_empty() {
        return Err("usage: query_ablation INDEX QA.csv [QA.csv…]".into());
    }
    Ok(Args { index: index.clone(), qa: qa.to_vec(), windows_file })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { index, qa, windows_file } = parse_args()?;
    let searcher = Searcher::open(&PathBuf::from(&index), None)?;
    let svc = searcher.service()?;
    let idx = svc.index().ok_or("this example reads an index file")?;
    let mut questions: Vec<Question> = Vec::new();
    for f in &qa {
        questions.extend(read_qa(&PathBuf::from(f))?);
    }
    let p = SearchParams { k: 100, mode: Mode::Convex, ..idx.default_params(100) };
    let windows = match &windows_file {
        Some(f) => Some(window_vectors(&svc, &PathBuf::from(&index), f)?),
        None => None,
    };
    let titles = Titles::new(&svc, false);
    let paths = Titles::new(&svc, true);
    let vocab = Vocabulary::new(idx);
    println!("{} names found in {} chunks", vocab.names.len(), vocab.chunks);
    let fields = Fields { windows, titles, paths, vocab };
    let mut table = Table::default();
    for q in &questions {
        let case = Case {
            idx,
            p,
            question: &q.question,
            category: &q.category,
            target: site_builder::build::page_url(&q.source_file.replace('\\', "/")),
            qv: svc.embed_for(&q.question, Mode::Convex).ok_or("no query vector")?,
        };
        ablate(&case, &fields, &mut table)?;
    }
    table.print();
    Ok(())
}

/// Every variant of one question, in the order the table lists them.
fn ablate(case: &Case<'_, '_>, fields: &Fields, table: &mut Table) -> Result<(), Box<dyn std::error::Error>> {
    let base = baseline(case, table)?;
    feedback(case, &base, table);
    unclamped(case, table);
    if let Some(windows) = &fields.windows {
        maxp(case, windows, table);
    }
    second_field(case, fields, &base, table);
    names(case, &fields.vocab, table);
    grouping(case, &base, table);
    identifiers(case, &base, table);
    for alpha in [0.5f32, 0.55, 0.6] {
        page_ranking(case, alpha, table);
    }
    weights(case, table);
    Ok(())
}

/// The default ranking (returned) and the dense side alone; a question whose page
/// the default does not rank in its first 5 is printed with what came instead.
fn baseline(case: &Case<'_, '_>, table: &mut Table) -> Result<Vec<Hit>, Box<dyn std::error::Error>> {
    let (idx, p, target) = (case.idx, case.p, &case.target);
    let base = case.search(&case.qv, None);
    table.record(case, "convex".into(), &base);
    let h = case.fuse_with(&case.qv, None, &p, &SearchParams { mode: Mode::Dense, ..p });
    table.record(case, "dense (stored vector)".into(), &h);
    let rank = base.iter().position(|h| idx.chunk(h.doc).map(|m| &m.url == target).unwrap_or(false));
    if rank.is_none_or(|r| r >= 5) {
        println!("base rank {:?}: {}", rank.map(|r| r + 1), case.question);
        println!("    target {target}");
        for h in base.iter().take(5) {
            let m = idx.chunk(h.doc)?;
            println!("    {:.3} {} › {}", h.score, m.title, m.headers.join(" › "));
        }
    }
    Ok(base)
}

/// Pseudo-relevance feedback from the default ranking: Rocchio on the query
/// vector, RM3 on the BM25 side.
fn feedback(case: &Case<'_, '_>, base: &[Hit], table: &mut Table) {
    for m in [1, 3, 5] {
        for beta in [0.25f32, 0.5, 1.0] {
            let v = dense_prf(case.idx, &case.qv, base, m, beta);
            table.record(case, format!("dense prf m{m} b{beta}"), &case.search(&v, None));
        }
    }
    for m in [3, 5] {
        for n in [5, 10, 20] {
            for lambda in [0.5f32, 0.7] {
                let terms = rm3_terms(case.idx, case.question, base, m, n, lambda);
                let s = weighted_bm25(case.idx, &terms, &case.p);
                table.record(case, format!("rm3 m{m} n{n} l{lambda}"), &case.search(&case.qv, Some(s)));
            }
        }
    }
}

/// Fusion without the clamp (linear over the range, or z-scores, of each side's
/// top N), and today's clamped fusion with a deeper range.
fn unclamped(case: &Case<'_, '_>, table: &mut Table) {
    let (idx, p) = (case.idx, case.p);
    let c = case.candidates(&p);
    let full = idx.bm25_scores(case.question, p.k1, p.b);
    for head in [5usize, 10, 20, 50, 100] {
        for alpha in [0.4f32, 0.5, 0.6] {
            let h = linear(idx, &case.qv, &c.dense, &full, head, alpha, false);
            table.record(case, format!("linear h{head} a{alpha}"), &h);
        }
        let h = linear(idx, &case.qv, &c.dense, &full, head, 0.5, true);
        table.record(case, format!("zscore h{head}"), &h);
    }
    for nd in [20usize, 50] {
        let pp = SearchParams { norm_depth: nd, ..p };
        let h = fusion::fuse(&pp, &c.dense, &c.sparse, |d| case.dense(d));
        table.record(case, format!("convex clamp nd{nd}"), &h);
    }
}

/// With window vectors: the dense side rescored over every chunk by its best
/// window (MaxP), or by a blend of that and the stored vector.
fn maxp(case: &Case<'_, '_>, windows: &[Vec<Vec<f32>>], table: &mut Table) {
    let (idx, p, qv) = (case.idx, case.p, &case.qv);
    let cos = |v: &[f32]| v.iter().zip(qv).map(|(a, b)| a * b).sum::<f32>();
    for w in [1.0f32, 0.5, 0.25] {
        // Dense side rescored over every chunk: w · best window + (1 − w) · stored vector.
        let mut dense: Vec<(u32, f32)> = (0..idx.len() as u32)
            .map(|d| {
                let best = windows[d as usize].iter().map(|v| cos(v)).fold(f32::MIN, f32::max);
                (d, w * best + (1.0 - w) * idx.dense_score(qv, d))
            })
            .collect();
        dense.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        dense.truncate(p.depth);
        let score: HashMap<u32, f32> = dense.iter().copied().collect();
        let c: Candidates = case.candidates(&p);
        let dense_of = |d: u32| {
            Some(score.get(&d).copied().unwrap_or_else(|| {
                let best = windows[d as usize].iter().map(|v| cos(v)).fold(f32::MIN, f32::max);
                w * best + (1.0 - w) * idx.dense_score(qv, d)
            }))
        };
        let name = if w == 1.0 { "maxp".to_string() } else { format!("blend+maxp w{w}") };
        table.record(
            case,
            format!("{name} dense"),
            &fusion::fuse(&SearchParams { mode: Mode::Dense, ..p }, &dense, &c.sparse, dense_of),
        );
        table.record(case, name, &fusion::fuse(&p, &dense, &c.sparse, dense_of));
    }
}

/// The page title, or the breadcrumb, as a second field added at weight `t`.
fn second_field(case: &Case<'_, '_>, fields: &Fields, base: &[Hit], table: &mut Table) {
    for tau in [0.1f32, 0.2, 0.3] {
        for dw in [0.0f32, 0.5, 1.0] {
            let h = with_titles(case.idx, &fields.titles, case.question, &case.qv, base, tau, dw);
            table.record(case, format!("title t{tau} d{dw}"), &h);
            let h = with_titles(case.idx, &fields.paths, case.question, &case.qv, base, tau, dw);
            table.record(case, format!("path t{tau} d{dw}"), &h);
        }
    }
}

/// The knowledge base's names the question's terms point to, added to its BM25 query.
fn names(case: &Case<'_, '_>, vocab: &Vocabulary, table: &mut Table) {
    for theta in [0.15f32, 0.25, 0.35] {
        for max in [1usize, 2] {
            let ex = vocab.expand(case.question, theta, max);
            for w in [0.3f32, 0.6, 1.0] {
                let mut terms: Vec<(String, f32)> = {
                    let mut o = analyzer::terms(case.question);
                    o.sort();
                    o.dedup();
                    o.into_iter().map(|t| (t, 1.0)).collect()
                };
                terms.extend(ex.iter().map(|(t, s)| (t.clone(), w * s)));
                let sp = weighted_bm25(case.idx, &terms, &case.p);
                table.record(case, format!("vocab t{theta} m{max} w{w}"), &case.search(&case.qv, Some(sp)));
            }
        }
    }
}

/// Chunks moved toward their page's best, and pages' chunks put together.
fn grouping(case: &Case<'_, '_>, base: &[Hit], table: &mut Table) {
    let idx = case.idx;
    for gamma in [0.1f32, 0.25, 0.5, 1.0] {
        table.record(case, format!("page g{gamma}"), &page_group(idx, base, gamma));
    }
    for n in [5usize, 10] {
        table.record(case, format!("pages together n{n}"), &pages_together(idx, base, n));
        let g = page_group(idx, base, 0.1);
        table.record(case, format!("page g0.1 + together n{n}"), &pages_together(idx, &g, n));
    }
}

/// Queries with an identifier (an exact `=` term: letters or digits with
/// identifier punctuation) fused with more weight on BM25.
/// (The analyzer's exact terms as the detector also caught every hyphenated
/// word: 0.867–0.880 over the same grid.)
fn identifiers(case: &Case<'_, '_>, base: &[Hit], table: &mut Table) {
    let has_ident = analyzer::names_identifier(case.question);
    for a_id in [0.2f32, 0.3, 0.4, 0.45] {
        let alpha = if has_ident { a_id } else { 0.5 };
        let fused = case.fused(&SearchParams { alpha, ..case.p });
        table.record(case, format!("ident a{a_id} page sum d1"), &page_sum(case.idx, &fused, 1.0, 1));
    }
    if has_ident {
        table.record(case, "(queries with an identifier)".into(), base);
    }
}

/// Pages ranked by more than their best chunk, at convex α `alpha`: a soft
/// maximum of their best chunks, best + second when the second is near the top,
/// and best + δ · second.
fn page_ranking(case: &Case<'_, '_>, alpha: f32, table: &mut Table) {
    let idx = case.idx;
    let fused = case.fused(&SearchParams { alpha, ..case.p });
    for tau in [0.05f32, 0.1, 0.2, 0.3, 0.5, 1.0] {
        for top in [2usize, 3, 100] {
            let lse = |s: &[f32]| {
                let m = s[0];
                m + tau * s.iter().take(top).map(|&x| ((x - m) / tau).exp()).sum::<f32>().ln()
            };
            table.record(case, format!("page lse a{alpha} t{tau} top{top}"), &page_by(idx, &fused, 1, lse));
        }
    }
    for n in [5usize, 10, 20] {
        table.record(case, format!("page sum a{alpha} d1 second in top{n}"), &second_in_top(idx, &fused, n));
    }
    for delta in [0.0f32, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0] {
        table.record(case, format!("page sum a{alpha} d{delta} m1"), &page_sum(idx, &fused, delta, 1));
    }
}

/// Pages by best + second chunk, a page's second chunk counted only when it is
/// among the first `n`; each chunk keeps its own fused score.
fn second_in_top(idx: &Index<'_>, fused: &[Hit], n: usize) -> Vec<Hit> {
    let mut seconds: HashMap<u32, usize> = HashMap::new();
    let capped: Vec<Hit> = fused
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let k = seconds.entry(idx.page_of(h.doc)).or_insert(0);
            *k += 1;
            Hit { score: if *k > 1 && i >= n { 0.0 } else { h.score }, ..h.clone() }
        })
        .collect();
    let mut order = page_sum(idx, &capped, 1.0, 1);
    let own: HashMap<u32, f32> = fused.iter().map(|h| (h.doc, h.score)).collect();
    order.iter_mut().for_each(|h| h.score = own[&h.doc]);
    order
}

/// The fusion weight, and BM25's k1 and b.
fn weights(case: &Case<'_, '_>, table: &mut Table) {
    for alpha in [0.35f32, 0.4, 0.45, 0.55, 0.6, 0.7] {
        table.record(case, format!("convex a{alpha}"), &case.fused(&SearchParams { alpha, ..case.p }));
    }
    for k1 in [0.9f32, 1.2, 1.5, 2.0] {
        for b in [0.4f32, 0.6, 0.75, 0.9] {
            table.record(case, format!("bm25 k{k1} b{b}"), &case.fused(&SearchParams { k1, b, ..case.p }));
        }
    }
}
