//! Fusing the dense and the BM25 ranking into one.
//!
//! | mode | score of a chunk |
//! | --- | --- |
//! | `dense` | cosine similarity with the query |
//! | `bm25` | BM25 |
//! | `rrf` | Σ over the two lists of 1 / (k + rank), k = 60 |
//! | `convex` | α · minmax(cosine) + (1 − α) · minmax(BM25), each list scaled so that its top `norm_depth` scores span [0, 1] |
//! | `dot` | cosine + the dot product of the L2-normalised sparse vectors (the advising paper's Pinecone-style hybrid) |
//!
//! The fused list is then put in page order ([`pages_first`]): pages ranked by
//! their best chunk plus what their second best scores above the list's floor,
//! each page's best chunk first.
//!
//! No cut-off on raw cosine (Orama's 0.8 default silently drops good hits): every
//! candidate from either list is ranked. For `convex` and `dot`, a chunk that only
//! BM25 found still gets its exact cosine (the flat scan can score any chunk), and
//! a chunk BM25 did not match scores 0 on that side.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{Hit, SearchParams};

/// How the two rankings are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Rrf,
    Convex,
    Dot,
    Dense,
    Bm25,
}

impl Mode {
    pub const ALL: [Mode; 5] = [Mode::Rrf, Mode::Convex, Mode::Dot, Mode::Dense, Mode::Bm25];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Rrf => "rrf",
            Mode::Convex => "convex",
            Mode::Dot => "dot",
            Mode::Dense => "dense",
            Mode::Bm25 => "bm25",
        }
    }
}

/// A fusion mode's name that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode `{0}`; use one of rrf, convex, dot, dense, bm25")]
pub struct UnknownMode(pub String);

impl std::str::FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        Mode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| UnknownMode(s.to_string()))
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Min-max normalisation bounds of a list's scores.
fn bounds(scores: impl Iterator<Item = f32>) -> (f32, f32) {
    scores.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), s| (lo.min(s), hi.max(s)))
}

fn minmax(s: f32, (lo, hi): (f32, f32)) -> f32 {
    if hi > lo {
        ((s - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else if hi.is_finite() && s >= hi {
        1.0
    } else {
        0.0
    }
}

/// Reciprocal-rank fusion scores: Σ 1 / (k + rank) over the lists a chunk is in.
fn rrf(p: &SearchParams, dense: &[(u32, f32)], sparse: &[(u32, f32, f32)]) -> HashMap<u32, f32> {
    let mut score: HashMap<u32, f32> = HashMap::new();
    for (rank, &(d, _)) in dense.iter().enumerate() {
        *score.entry(d).or_default() += 1.0 / (p.rrf_k + rank as f32 + 1.0);
    }
    for (rank, &(d, _, _)) in sparse.iter().enumerate() {
        *score.entry(d).or_default() += 1.0 / (p.rrf_k + rank as f32 + 1.0);
    }
    score
}

/// The share of the dense side's convex weight a query that names an identifier
/// keeps ([`analyzer::names_identifier`]): such strings are word pieces to
/// MiniLM and exact terms to BM25, so the exact side is the better evidence for
/// them. 0.8 turns the default α 0.5 into 0.4; any share from 0.4 to 0.9 gave
/// the same or better on both CSC dev sets (docs/benchmarks/readers-words.md, "Queries that name an
/// identifier").
pub const IDENTIFIER_DENSE_SHARE: f32 = 0.8;

/// `p` as `query` is fused with it: convex α scaled by
/// [`IDENTIFIER_DENSE_SHARE`] when the query names an identifier. Every caller
/// that fuses a query's lists (the service, the index's own search, the browser
/// engine) weighs it here, so they agree.
pub fn for_query(p: &SearchParams, query: &str) -> SearchParams {
    if p.mode == Mode::Convex && super::analyzer::names_identifier(query) {
        SearchParams { alpha: p.alpha * IDENTIFIER_DENSE_SHARE, ..*p }
    } else {
        *p
    }
}

/// Fuses `dense` (chunk, cosine) and `sparse` (chunk, BM25, normalised sparse dot),
/// both best first. `dense_of` gives the exact cosine of any chunk when the query
/// has a vector. Returns every candidate, best first.
pub fn fuse(
    p: &SearchParams,
    dense: &[(u32, f32)],
    sparse: &[(u32, f32, f32)],
    dense_of: impl Fn(u32) -> Option<f32>,
) -> Vec<Hit> {
    let sparse_by: HashMap<u32, (f32, f32)> = sparse.iter().map(|&(d, s, n)| (d, (s, n))).collect();
    let dense_by: HashMap<u32, f32> = dense.iter().copied().collect();
    let mut hits: Vec<Hit> = match p.mode {
        Mode::Dense => dense
            .iter()
            .map(|&(d, c)| Hit { doc: d, score: c, dense: Some(c), bm25: sparse_by.get(&d).map(|s| s.0) })
            .collect(),
        Mode::Bm25 => {
            sparse.iter().map(|&(d, s, _)| Hit { doc: d, score: s, dense: dense_of(d), bm25: Some(s) }).collect()
        }
        Mode::Rrf => rrf(p, dense, sparse)
            .into_iter()
            .map(|(d, s)| Hit {
                doc: d,
                score: s,
                dense: dense_by.get(&d).copied().or_else(|| dense_of(d)),
                bm25: sparse_by.get(&d).map(|x| x.0),
            })
            .collect(),
        Mode::Convex => {
            // The head: the top `norm_depth` of each list, min-max scaled over that
            // head and clamped to [0, 1]; a chunk one list did not rank in its head
            // scores 0 on that side. The tail (deeper candidates) follows the head
            // in reciprocal-rank order, so deep recall keeps a sensible order.
            let head = p.norm_depth.max(1);
            let db = bounds(dense.iter().take(head).map(|x| x.1));
            let sb = bounds(sparse.iter().take(head).map(|x| x.1));
            let head_docs: std::collections::HashSet<u32> =
                dense.iter().take(head).map(|x| x.0).chain(sparse.iter().take(head).map(|x| x.0)).collect();
            rrf(p, dense, sparse)
                .into_iter()
                .map(|(d, r)| {
                    let cos = dense_by.get(&d).copied().or_else(|| dense_of(d));
                    let sp = sparse_by.get(&d).copied();
                    let score = if head_docs.contains(&d) {
                        p.alpha * cos.map_or(0.0, |c| minmax(c, db))
                            + (1.0 - p.alpha) * sp.map_or(0.0, |s| minmax(s.0, sb))
                    } else {
                        r - 1.0
                    };
                    Hit { doc: d, score, dense: cos, bm25: sp.map(|s| s.0) }
                })
                .collect()
        }
        Mode::Dot => {
            let mut docs: Vec<u32> = dense.iter().map(|x| x.0).chain(sparse.iter().map(|x| x.0)).collect();
            docs.sort_unstable();
            docs.dedup();
            docs.into_iter()
                .map(|d| {
                    let cos = dense_by.get(&d).copied().or_else(|| dense_of(d));
                    let sp = sparse_by.get(&d).copied();
                    Hit {
                        doc: d,
                        score: cos.unwrap_or(0.0) + sp.map_or(0.0, |s| s.1),
                        dense: cos,
                        bm25: sp.map(|s| s.0),
                    }
                })
                .collect()
        }
    };
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
    hits
}

/// What follows fusion, wherever the candidates came from: the list put in
/// `p.order`, one chunk per page if `p.collapse_pages`, the top `p.k` kept of
/// the first and those `shown` keeps ([`super::relevance::Evidence::shows`]:
/// a result far weaker than the query's best evidence is not shown). `shown`
/// is asked in order, only until `p.k` are kept.
pub fn finish(
    p: &SearchParams,
    hits: Vec<Hit>,
    page_of: impl Fn(u32) -> u32,
    shown: impl Fn(&Hit) -> bool,
) -> Vec<Hit> {
    let mut hits = match p.order {
        Order::Chunks => hits,
        Order::Pages { second } => {
            let floor = floor(&hits);
            pages_first(hits, &page_of, second, floor)
        }
    };
    if p.collapse_pages {
        let mut seen = std::collections::HashSet::new();
        hits.retain(|h| seen.insert(page_of(h.doc)));
    }
    hits.into_iter().enumerate().filter(|(i, h)| *i == 0 || shown(h)).map(|(_, h)| h).take(p.k).collect()
}

/// How many top scores of each list define its `convex` min–max range
/// ([`SearchParams::norm_depth`]), by default. 30, measured with the page floor
/// ([`floor`]) on seventeen dev sets: MiniLM's six (CSC ×2 within 0.005 of 10,
/// mean recall@5 0.907 → 0.923) and multilingual-e5's eleven (the Kubernetes
/// set in six languages and five English sets: 0.832 → 0.853, MRR@10
/// 0.684 → 0.702), where e5's narrow band made a head of 10 span a few
/// thousandths of cosine, noise stretched over [0, 1]
/// (docs/benchmarks/languages.md, "A page's second chunk").
pub const NORM_DEPTH: usize = 30;

/// The default weight of a page's second-best chunk in its page score.
///
/// Measured on both CSC dev sets (docs/benchmarks/readers-words.md, "Pages first"): 0.5 to 2 all
/// beat 0 (the best chunk alone) by about a point of MRR; 1 (the two best
/// chunks summed) is the middle of that plateau.
pub const SECOND_CHUNK: f32 = 1.0;

/// The rank whose score is a list's floor ([`floor`]).
pub const FLOOR_RANK: usize = 10;

/// The score a page's second-best chunk must pass to add to its page score:
/// the score at rank [`FLOOR_RANK`] of the list, or 0 if that is lower.
///
/// Raw scores have a baseline far from 0: an unrelated chunk of a long page
/// scores 0.3 in MiniLM's cosine, 0.87 in multilingual-e5's, a few BM25
/// points, and a `convex` head 30 deep gives most of its chunks a positive
/// share. Summed as they were, every long page outranked the one-chunk page
/// with the answer (e5's dense recall@5 on the German Kubernetes set fell from
/// 0.77 to 0.40). Above the floor, only a second chunk that would itself make
/// the top of the list counts, and by how much it does: the same rule in every
/// mode and scale (docs/benchmarks/languages.md, "A page's second chunk").
pub fn floor(hits: &[Hit]) -> f32 {
    let mut scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
    let at = FLOOR_RANK.min(scores.len());
    if at == 0 {
        return 0.0;
    }
    // The list is best first already when it comes from `fuse`; select, not
    // trust, so that any caller gets the same floor. Never below 0: the tail
    // of `convex` scores below zero, and a second chunk there adds nothing.
    let (_, nth, _) = scores.select_nth_unstable_by(at - 1, |a, b| b.total_cmp(a));
    nth.max(0.0)
}

/// The order of a result list.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Order {
    /// Each chunk by its own fused score: how the agent reads its evidence
    /// (several sections of the best page beat the best sections of five).
    Chunks,
    /// Pages first ([`pages_first`]), with this weight of a page's second-best
    /// chunk: what a reader is shown.
    Pages { second: f32 },
}

impl Order {
    /// The default: pages first, a page scored by its two best chunks.
    pub const PAGES: Order = Order::Pages { second: SECOND_CHUNK };
}

/// Puts a fused list (best first) in page order: pages ranked by the score of
/// their best chunk plus `second` times what their second best scores above
/// `floor` ([`floor`]; a page that two sections match outranks a page with one
/// lucky section), then the best chunk of every page in that order, then every
/// page's further chunks in their fused order.
///
/// Why: a reader is shown pages (the results group sections by page) and the
/// agent reads the top chunks, so the top of the list should be the best pages,
/// one each, not three sections of one page that crowd out the page with the
/// answer. The order depends only on the list, not on how much of it a caller
/// asks for, so offsets page through it consistently. A second chunk at or
/// below the floor (the far tail of `convex` scores below zero) adds nothing.
pub fn pages_first(hits: Vec<Hit>, page_of: impl Fn(u32) -> u32, second: f32, floor: f32) -> Vec<Hit> {
    // page → (rank of its best chunk, best score, second score)
    let mut pages: HashMap<u32, (usize, f32, Option<f32>)> = HashMap::new();
    let mut firsts = Vec::new();
    let mut rest = Vec::new();
    for (i, h) in hits.into_iter().enumerate() {
        match pages.entry(page_of(h.doc)) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((i, h.score, None));
                firsts.push(h);
            }
            std::collections::hash_map::Entry::Occupied(mut e) => {
                let v = e.get_mut();
                if v.2.is_none() {
                    v.2 = Some(h.score);
                }
                rest.push(h);
            }
        }
    }
    let page_score = |h: &Hit| {
        let (rank, best, next) = pages[&page_of(h.doc)];
        (best + second * next.map_or(0.0, |n| (n - floor).max(0.0)), rank)
    };
    // Ties keep the fused order (the rank of the page's best chunk).
    firsts.sort_by(|a, b| {
        let (sa, ra) = page_score(a);
        let (sb, rb) = page_score(b);
        sb.total_cmp(&sa).then(ra.cmp(&rb))
    });
    firsts.extend(rest);
    firsts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(mode: Mode) -> SearchParams {
        SearchParams { mode, alpha: 0.7, norm_depth: 100, ..SearchParams::defaults(10) }
    }

    const DENSE: [(u32, f32); 3] = [(1, 0.9), (2, 0.5), (3, 0.1)];
    const SPARSE: [(u32, f32, f32); 3] = [(3, 12.0, 0.8), (4, 6.0, 0.4), (1, 3.0, 0.2)];

    fn exact(d: u32) -> Option<f32> {
        Some(match d {
            4 => 0.3,
            _ => 0.0,
        })
    }

    fn scores(mode: Mode) -> Vec<(u32, f32)> {
        fuse(&params(mode), &DENSE, &SPARSE, exact).into_iter().map(|h| (h.doc, h.score)).collect()
    }

    fn close(a: &[(u32, f32)], b: &[(u32, f32)]) {
        assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.0, y.0, "{a:?} vs {b:?}");
            assert!((x.1 - y.1).abs() < 1e-6, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn rrf_by_hand() {
        // doc 1: ranks 1 and 3; doc 3: ranks 3 and 1; doc 2: rank 2; doc 4: rank 2.
        let r = |rank: f32| 1.0 / (60.0 + rank);
        close(&scores(Mode::Rrf), &[(1, r(1.0) + r(3.0)), (3, r(3.0) + r(1.0)), (2, r(2.0)), (4, r(2.0))]);
    }

    #[test]
    fn convex_by_hand() {
        // dense min-max over 0.1..0.9; sparse over 3..12; doc 2 has no BM25 match (0
        // on that side); doc 4's cosine 0.3 comes from the exact scorer.
        let nd = |c: f32| (c - 0.1) / 0.8;
        let ns = |s: f32| (s - 3.0) / 9.0;
        let mut want = vec![
            (1, 0.7 * nd(0.9) + 0.3 * ns(3.0)),
            (2, 0.7 * nd(0.5)),
            (3, 0.7 * nd(0.1) + 0.3 * ns(12.0)),
            (4, 0.7 * nd(0.3) + 0.3 * ns(6.0)),
        ];
        want.sort_by(|a, b| b.1.total_cmp(&a.1));
        close(&scores(Mode::Convex), &want);
    }

    #[test]
    fn convex_fuses_the_head_and_ranks_the_tail_by_rrf() {
        // norm_depth 1: the head is doc 1 (dense) and doc 3 (BM25); ranges collapse,
        // so each head doc scores 1 on the side it tops. Docs 2 and 4 form the tail,
        // in RRF order (both rank 2 in one list: tie broken by doc id), below the head.
        let p = SearchParams { norm_depth: 1, ..params(Mode::Convex) };
        let hits = fuse(&p, &DENSE, &SPARSE, exact);
        let order: Vec<u32> = hits.iter().map(|h| h.doc).collect();
        assert_eq!(order, vec![1, 3, 2, 4]);
        assert!((hits[0].score - 0.7).abs() < 1e-6 && (hits[1].score - 0.3).abs() < 1e-6);
        assert!(hits[2].score < 0.0 && hits[3].score < 0.0);
    }

    #[test]
    fn a_query_naming_an_identifier_leans_on_its_exact_terms() {
        // α 0.55: doc 1 tops dense (0.55) and doc 3 tops BM25 (0.45) when the query
        // is prose; scaled by 0.8 for `--gres=nvme` (α 0.44), BM25's top wins.
        let prose = fusion_order(&for_query(&SearchParams { alpha: 0.55, ..params(Mode::Convex) }, "fast local disk"));
        let ident = for_query(&SearchParams { alpha: 0.55, ..params(Mode::Convex) }, "what is --gres=nvme");
        assert!((ident.alpha - 0.55 * IDENTIFIER_DENSE_SHARE).abs() < 1e-6);
        assert_eq!(prose[0], 1);
        assert_eq!(fusion_order(&ident)[0], 3);
        // Only convex has an α to move.
        for mode in [Mode::Rrf, Mode::Dot, Mode::Dense, Mode::Bm25] {
            assert_eq!(for_query(&params(mode), "what is --gres=nvme"), params(mode));
        }
    }

    fn fusion_order(p: &SearchParams) -> Vec<u32> {
        fuse(p, &DENSE, &SPARSE, exact).into_iter().map(|h| h.doc).collect()
    }

    #[test]
    fn dot_by_hand() {
        let mut want: Vec<(u32, f32)> = vec![(1, 0.9 + 0.2), (2, 0.5), (3, 0.1 + 0.8), (4, 0.3 + 0.4)];
        want.sort_by(|a, b| b.1.total_cmp(&a.1));
        close(&scores(Mode::Dot), &want);
    }

    #[test]
    fn single_lists_keep_their_order_and_components() {
        close(&scores(Mode::Dense), &DENSE);
        let bm25 = fuse(&params(Mode::Bm25), &DENSE, &SPARSE, exact);
        assert_eq!(bm25.iter().map(|h| h.doc).collect::<Vec<_>>(), vec![3, 4, 1]);
        assert_eq!(bm25[1].dense, Some(0.3));
        let rrf = fuse(&params(Mode::Rrf), &DENSE, &SPARSE, exact);
        let d2 = rrf.iter().find(|h| h.doc == 2).unwrap();
        assert_eq!((d2.dense, d2.bm25), (Some(0.5), None));
    }

    #[test]
    fn modes_parse() {
        assert_eq!("convex".parse::<Mode>(), Ok(Mode::Convex));
        assert!("hybrid".parse::<Mode>().unwrap_err().to_string().contains("rrf, convex"));
    }

    fn hit(doc: u32, score: f32) -> Hit {
        Hit { doc, score, dense: None, bm25: None }
    }

    #[test]
    fn pages_first_ranks_pages_by_their_two_best_chunks() {
        // Chunks 0..=5 on pages 0, 0, 1, 2, 1, 2 (page = chunk's entry below).
        let page = |d: u32| [0, 0, 1, 2, 1, 2][d as usize];
        let fused = vec![hit(0, 0.9), hit(2, 0.8), hit(3, 0.7), hit(4, 0.6), hit(1, 0.2), hit(5, -0.5)];
        let order = |second: f32| -> Vec<u32> {
            pages_first(fused.clone(), page, second, 0.0).into_iter().map(|h| h.doc).collect()
        };
        // Page scores: 0 → 0.9 + 0.2, 1 → 0.8 + 0.6, 2 → 0.7 (a negative second adds nothing).
        assert_eq!(order(1.0), vec![2, 0, 3, 4, 1, 5]);
        // Best chunk alone: the pages in the fused order of their best chunk.
        assert_eq!(order(0.5), vec![2, 0, 3, 4, 1, 5]);
        assert_eq!(order(0.0), vec![0, 2, 3, 4, 1, 5]);
        // Every chunk kept, each once, with its own score.
        let out = pages_first(fused.clone(), page, 1.0, 0.0);
        assert_eq!(out.len(), fused.len());
        assert!(out.iter().all(|h| fused.contains(h)));
        // One chunk per page: the fused order is kept as it is.
        let own = |d: u32| d;
        let same: Vec<u32> = pages_first(fused.clone(), own, 1.0, 0.0).into_iter().map(|h| h.doc).collect();
        assert_eq!(same, vec![0, 2, 3, 4, 1, 5]);
        // Ties between pages keep the fused order.
        let tied = vec![hit(0, 0.5), hit(2, 0.5), hit(3, 0.5)];
        let t: Vec<u32> = pages_first(tied, page, 1.0, 0.0).into_iter().map(|h| h.doc).collect();
        assert_eq!(t, vec![0, 2, 3]);
    }

    #[test]
    fn a_second_chunk_adds_only_what_it_scores_above_the_floor() {
        // Raw cosines in a narrow band (multilingual-e5): page 0 is one chunk
        // with the best score; page 1 has two chunks a little below it; twelve
        // one-chunk pages (2..=13) fill the list at 0.860..0.849.
        let mut fused = vec![hit(0, 0.885), hit(1, 0.880), hit(2, 0.872)];
        fused.extend((0..12).map(|i| hit(3 + i, 0.860 - 0.001 * i as f32)));
        let page = |d: u32| {
            if d == 2 {
                1
            } else if d >= 3 {
                d - 1
            } else {
                d
            }
        };
        let p = SearchParams { mode: Mode::Dense, ..params(Mode::Dense) };
        // The floor is the 10th score: chunk 9 (0.854).
        assert!((floor(&fused) - 0.854).abs() < 1e-6);
        // Page 1 scores 0.880 + (0.872 - 0.854) = 0.898 > 0.885: two good
        // sections still outrank one slightly better one …
        let top = |hits: Vec<Hit>| page(finish(&p, hits, page, |_| true)[0].doc);
        assert_eq!(top(fused.clone()), 1);
        // … but a second chunk at the list's baseline adds nothing, where the
        // raw sum (0.880 + 0.852) would have put page 1 first by a mile.
        let mut flat = fused.clone();
        flat[2].score = 0.852;
        assert_eq!(top(flat), 0);
        // A list shorter than the floor's rank: its last score; never below 0
        // (the tail of `convex`).
        assert!((floor(&fused[..3]) - 0.872).abs() < 1e-6);
        assert_eq!(floor(&[]), 0.0);
        assert_eq!(floor(&[hit(0, 0.4), hit(1, -0.98)]), 0.0);
    }
}
