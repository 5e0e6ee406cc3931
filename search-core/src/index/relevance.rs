//! Whether a query found anything worth showing: the one "no good match" rule
//! that the search API, the browser engine, the results page, the chat agent and
//! insights share.
//!
//! A ranking always has a first result, however unrelated: `xqzv blorf` still
//! has a nearest chunk. What tells a match from none is read before the results
//! are cut, from two sides:
//!
//! - the dense side: the best cosine of any chunk with the query (MiniLM
//!   cosines are comparable across queries, unlike fused scores, which are
//!   normalised per result list);
//! - the lexical side, [`Evidence::lexical`]: the mean of the share of the
//!   query's idf that the vocabulary knows and the share that the best BM25
//!   chunk matches (a term no chunk has counts with the idf of a term in no
//!   chunk, the largest there is; but the pair where two words of a Chinese
//!   or Japanese run meet, and a Korean question's ending, are not terms:
//!   [`seams`], [`endings`]).
//!
//! A search without a good match answers no results (`matched` false in the
//! wire format); insights record it so, among the searches with no results.
//!
//! The same evidence, read on one result (its own cosine, and the share of the
//! query's idf its chunk has: [`Evidence::of_hit`]), decides which results of
//! a matched search are shown ([`Evidence::shows`]): a search for "parking
//! permit" on a 46-page help centre listed 20 articles, the last dozen
//! (*Graduation audit*, *Waitlists*) only the nearest of what was left. The
//! first result is always shown; each other one when its evidence is at least
//! [`SHOWN_SHARE`] of the query's.
//!
//! With a vector (every fused mode, and `dense`), a query matches when
//! `cosine + LEXICAL_WEIGHT · lexical ≥ FUSED_MATCH`, or `≥ AGREED_MATCH`
//! when the two sides agree (their best chunks are on one page,
//! [`Evidence::agree`]); without one (`bm25`, the browser's default engine),
//! when `lexical ≥ LEXICAL_MATCH`. Set on the five
//! dev sets (CSC ×2, Quartz, Docusaurus, VS Code, Kubernetes) and the 50
//! queries of `eval/no-match.txt` over each knowledge base and the demo
//! (docs/benchmarks/no-match.md): no answerable question whose page the
//! ranking shows is lost anywhere from 0.42 to 0.48 (fused), and 0.46 takes
//! 97.7 % of the nonsense and off-topic queries; the lexical rule alone takes
//! 98.7 % and loses one question of 180.
//!
//! Why agreement lowers the bar: a question in everyday words ("Mir wurde der
//! Geldbeutel geklaut, da war auch die Karte drin…") shares few words with its
//! page and reads only loosely like it, so each side alone is as weak as an
//! off-topic question's. But the vector and the words are two readings that
//! share nothing but the question, and when both put one page first that
//! page is rarely chance. On a help centre in four languages it took the
//! natural questions shown from 0.69 to 0.88, and over the 112 nonsense and
//! off-topic queries asked of twelve knowledge bases "no results" went from
//! 99.0 % to 98.6 % (docs/benchmarks/no-match.md, "When both sides agree").

use serde::{Deserialize, Serialize};

use super::bm25::{self, Postings, Seek};
use super::{Hit, Mode};

/// The weight of the lexical evidence beside the best cosine.
pub const LEXICAL_WEIGHT: f32 = 0.4;
/// A query with a vector matches from this `cosine + LEXICAL_WEIGHT · lexical`.
pub const FUSED_MATCH: f32 = 0.46;
/// A query with a vector whose two sides agree ([`Evidence::agree`]) matches
/// from this `cosine + LEXICAL_WEIGHT · lexical`.
pub const AGREED_MATCH: f32 = 0.32;
/// A query without a vector matches from this lexical evidence.
pub const LEXICAL_MATCH: f32 = 0.47;
/// A result is shown when its own evidence scores at least this share of the
/// query's ([`Evidence::shows`]). Set on 400 answerable questions, 20 results
/// each as the results page asks (docs/benchmarks/no-match.md, "Results that
/// are no match"): the six English dev sets with MiniLM and the Kubernetes
/// set in six languages with multilingual-e5 over all eight languages. At
/// 0.55 no answer in the top five is cut on any set and the results page
/// lists 11 to 19.5 pages where it listed 20; at 0.6 two e5 answers in the
/// top five go (Japanese, English). An absolute bar (each result a match on
/// its own, the query's threshold) cut a top-five answer on Docusaurus and
/// CSC and still listed 19 pages on CSC: a result's lexical share keeps the
/// half that the query's words being known earns, so only a bar relative to
/// the query tells the tail apart.
pub const SHOWN_SHARE: f32 = 0.55;
/// A match whose best cosine is below this is weak: shown, but from pages that
/// barely touch the question. The extractive agent declines a weak match with
/// a word no page uses; insights count such
/// searches and answers as weak matches, a lead for the team
/// (docs/benchmarks/insights.md).
pub const WEAK_COSINE: f32 = 0.45;

/// How one model's cosines read on the scale of the thresholds above, which
/// were set with all-MiniLM-L6-v2: `(cosine − shift) · scale`.
///
/// A cosine is not a probability, and models spread theirs differently:
/// MiniLM gives an answerable question's best chunk about 0.6 and keyboard
/// mash about 0.15, multilingual-e5-small 0.89 and 0.83 (its training
/// temperature packs every cosine into a narrow band). Every dense score the
/// engine hands on ([`super::Index::dense_scorer`], the browser engine's, the
/// PostgreSQL tier's) is mapped here, so the "no results" rule, the agent's
/// weak matches, insights and the `dot` fusion read one scale whatever the
/// model; the ranking by cosine is unchanged (the map is increasing), and for
/// MiniLM it is the identity, to the bit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CosineScale {
    pub shift: f32,
    pub scale: f32,
}

impl CosineScale {
    /// all-MiniLM-L6-v2, the scale itself.
    pub const REFERENCE: CosineScale = CosineScale { shift: 0.0, scale: 1.0 };
    /// multilingual-e5-small: MiniLM's best cosine regressed on e5's over the
    /// same queries on the same pages (docs/benchmarks/no-match.md, "Other
    /// models and languages").
    pub const MULTILINGUAL_E5: CosineScale = CosineScale { shift: E5_SHIFT, scale: E5_SCALE };

    /// The scale of the model an index names ([`super::IndexInfo::encoder`]).
    pub fn of_encoder(encoder: &str) -> CosineScale {
        if encoder.contains("multilingual-e5") {
            CosineScale::MULTILINGUAL_E5
        } else {
            CosineScale::REFERENCE
        }
    }

    /// `cosine` on the reference scale.
    #[inline]
    pub fn apply(self, cosine: f32) -> f32 {
        if self == CosineScale::REFERENCE {
            cosine
        } else {
            (cosine - self.shift) * self.scale
        }
    }

    /// The model's own cosine that reads as `reference` (what a threshold set
    /// on the reference scale is for raw cosines, e.g. between two questions).
    pub fn raw(self, reference: f32) -> f32 {
        reference / self.scale + self.shift
    }
}

const E5_SHIFT: f32 = 0.808;
const E5_SCALE: f32 = 6.565;

/// What a ranking says about its query, read before its results are cut.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Evidence {
    /// The best cosine of any chunk with the query; `None` when the query has
    /// no vector (`bm25`).
    pub cosine: Option<f32>,
    /// In [0, 1]: the mean of the share of the query's idf the vocabulary
    /// knows and the share the best BM25 chunk matches; 0 for a query with no
    /// term (only stop words, or nothing).
    pub lexical: f32,
    /// Whether the best chunk by cosine and the best chunk by BM25 are on the
    /// same page ([`agree`]): two readings of the question that share nothing
    /// but the question pointing at one page.
    #[serde(default)]
    pub agree: bool,
}

impl Evidence {
    /// The score the thresholds read: `cosine + LEXICAL_WEIGHT · lexical`, or
    /// the lexical evidence alone without a vector.
    pub fn score(&self) -> f32 {
        match self.cosine {
            Some(c) => c + LEXICAL_WEIGHT * self.lexical,
            None => self.lexical,
        }
    }

    /// The evidence of a search restricted to one language, from its own
    /// lists: with a vector but no chunk of the language ranked, the lowest
    /// cosine there is (not `None`, which would switch to the lexical rule);
    /// with no chunk of the language matching a word, no lexical evidence
    /// (the vocabulary knowing the words from other languages' pages is not
    /// a match in this one).
    pub fn in_language(self, has_vector: bool, any_lexical_match: bool) -> Evidence {
        Evidence {
            cosine: if has_vector { Some(self.cosine.unwrap_or(-1.0)) } else { self.cosine },
            lexical: if any_lexical_match { self.lexical } else { 0.0 },
            agree: self.agree && any_lexical_match,
        }
    }

    /// One result's own evidence in a search in `mode`: its cosine (none in
    /// `bm25`, whose rule is the lexical one even when a vector scored the
    /// hit) and `lexical`, the query's lexical evidence with this chunk as the
    /// best ([`lexical_of`] with `Some(hit.doc)` when BM25 scored it, `None`
    /// when it did not).
    pub fn of_hit(mode: Mode, hit: &Hit, lexical: f32) -> Evidence {
        Evidence { cosine: if mode == Mode::Bm25 { None } else { hit.dense }, lexical, agree: false }
    }

    /// Whether a result with evidence `hit` ([`Evidence::of_hit`]) is shown
    /// in a search whose evidence this is: when it scores at least
    /// [`SHOWN_SHARE`] of the query's.
    pub fn shows(&self, hit: Evidence) -> bool {
        hit.score() >= SHOWN_SHARE * self.score()
    }

    /// Whether the query has a good match: results are worth showing, and the
    /// agent may answer. With a vector, from [`FUSED_MATCH`], or from
    /// [`AGREED_MATCH`] when both sides' best chunks are on one page.
    pub fn matched(&self) -> bool {
        match self.cosine {
            Some(_) => self.score() >= if self.agree { AGREED_MATCH } else { FUSED_MATCH },
            None => self.lexical >= LEXICAL_MATCH,
        }
    }
}

/// Whether the two sides agree ([`Evidence::agree`]): the best dense chunk and
/// the best BM25 chunk (each list's first) are on one page, `page_of` telling
/// a chunk's page as the engine at hand knows it ([`NO_PAGE`]: unknown, which
/// agrees with nothing).
pub fn agree(dense: &[(u32, f32)], sparse: &[(u32, f32, f32)], page_of: impl Fn(u32) -> u32) -> bool {
    match (dense.first(), sparse.first()) {
        (Some(d), Some(s)) => {
            let (a, b) = (page_of(d.0), page_of(s.0));
            a == b && a != NO_PAGE
        }
        _ => false,
    }
}

/// The page of a chunk an engine does not have (`Index::page_of`, the
/// browser's fragments): it agrees with nothing ([`agree`]).
pub const NO_PAGE: u32 = u32::MAX;

/// The lexical evidence of a query from its idf sums: `total` over all its
/// terms (an unknown one at the idf of a term no chunk has), `known` over those
/// some chunk has, `matched` over those the best BM25 chunk has.
fn lexical_share(total: f32, known: f32, matched: f32) -> f32 {
    if total <= 0.0 {
        return 0.0;
    }
    (((known + matched) / total) * 0.5).clamp(0.0, 1.0)
}

/// The lexical evidence of `qterms` (analysed; duplicates count once) over
/// `src`, with `best` the best BM25 chunk (`None`: no term matched).
pub fn lexical<P: Postings + ?Sized>(src: &P, qterms: &[String], best: Option<u32>) -> f32 {
    lexical_by(qterms, src.chunks(), |t| {
        let (df, list) = src.postings(t)?;
        Some((df, best.is_some_and(|b| list.contains(b))))
    })
}

/// Whether a result of a search in `mode` with evidence `query` is shown
/// ([`Evidence::shows`]), its lexical evidence read from `src` with the
/// query's `readings`: what the index file and the browser's fragments hand
/// [`super::fusion::finish`] (the PostgreSQL tier reads the same from the
/// postings it fetched).
pub fn shown_over<'a, P: Postings + ?Sized>(
    src: &'a P,
    readings: &'a [Vec<String>],
    query: Evidence,
    mode: Mode,
) -> impl Fn(&Hit) -> bool + 'a {
    move |h| query.shows(Evidence::of_hit(mode, h, lexical_of(src, readings, h.bm25.map(|_| h.doc))))
}

/// The lexical evidence of a query read in several languages
/// ([`super::bm25::QueryReading::readings`]): its best reading's. One reading
/// is judged as [`lexical`] judges its terms.
pub fn lexical_of<P: Postings + ?Sized>(src: &P, readings: &[Vec<String>], best: Option<u32>) -> f32 {
    readings.iter().map(|r| lexical(src, r, best)).fold(0.0, f32::max)
}

/// [`lexical`] over a source that answers, for each term, its document
/// frequency and whether the best BM25 chunk has it (`None`: no chunk has the
/// term); `chunks` is the collection's size. The PostgreSQL tier answers from
/// the rows it fetched. The seams between a CJK run's words ([`seams`]) and
/// a Korean word's ending ([`endings`]) are not terms of the query here.
pub fn lexical_by(qterms: &[String], chunks: usize, term: impl Fn(&str) -> Option<(usize, bool)>) -> f32 {
    let mut terms: Vec<&str> = qterms.iter().map(String::as_str).collect();
    terms.sort_unstable();
    terms.dedup();
    // Each term looked up once (a posting list may be read to answer): the
    // seams and endings ask only whether some chunk has it.
    let found: Vec<Option<(usize, bool)>> = terms.iter().map(|t| term(t)).collect();
    let has = |t: &str| terms.binary_search(&t).is_ok_and(|i| found[i].is_some());
    let mut left_out = seams(qterms, &has);
    left_out.extend(endings(qterms, &has));
    let (mut total, mut known, mut matched) = (0.0, 0.0, 0.0);
    for (t, found) in terms.iter().zip(&found) {
        if left_out.contains(t) {
            continue;
        }
        match *found {
            Some((df, in_best)) => {
                let w = bm25::idf(df, chunks);
                total += w;
                known += w;
                if in_best {
                    matched += w;
                }
            }
            None => total += bm25::idf(0, chunks),
        }
    }
    lexical_share(total, known, matched)
}

/// The pairs of a query's CJK runs that no chunk has and that sit between two
/// pairs some chunk has, the first's last character their first and the
/// second's first their last: `群的` in 集群的数据 ("the cluster's data",
/// read 集群 群的 的数 数据) when no chunk has it. Chinese and Japanese are
/// read in overlapping pairs ([`super::analyzer`]), so a run of words also
/// yields the pairs that join one word's end to the next one's start; such a
/// pair is where two words meet, not a word the pages lack, and
/// [`lexical_by`] leaves it out. In Chinese, a word of one character between
/// two words (取 in 可以取哪些, "which can it take") gives two such pairs in a
/// row (`以取 取哪`), left out alike when all their characters are Han; in
/// Japanese that one character is mostly a particle (の, を), and leaving it
/// out let off-topic questions through (docs/benchmarks/languages.md). A
/// pair no chunk has at a run's edge, or among more unknown ones, still
/// counts as a word no page uses: a question about something else
/// (`长城有多长`, "how long is the Great Wall") keeps its evidence.
fn seams<'q>(qterms: &'q [String], has: &impl Fn(&str) -> bool) -> Vec<&'q str> {
    let pair = |t: &str| t.chars().count() == 2 && t.chars().all(super::analyzer::is_paired);
    let known: Vec<bool> = qterms.iter().map(|t| pair(t) && has(t)).collect();
    let unknown = |i: usize| pair(&qterms[i]) && !known[i];
    let chain = |from: usize, to: usize| (from..to).all(|j| joined(&qterms[j], &qterms[j + 1]));
    let mut out = Vec::new();
    for i in 1..qterms.len() {
        if !unknown(i) || !known[i - 1] {
            continue;
        }
        if known.get(i + 1) == Some(&true) && chain(i - 1, i + 1) {
            out.push(qterms[i].as_str());
        } else if known.get(i + 2) == Some(&true) && unknown(i + 1) && chain(i - 1, i + 2) {
            let han = qterms[i].chars().chain(qterms[i + 1].chars()).all(super::analyzer::is_han);
            if han {
                out.extend([qterms[i].as_str(), qterms[i + 1].as_str()]);
            }
        }
    }
    out
}

/// The endings of a Korean question or request, as the last pair of its
/// last word reads them: *되나요*, *싶어요*, *알려주세요*, *하려면*.
/// Documentation is written in the plain style (`-다`, `-니다`), so a
/// question's polite endings are on no page.
const KOREAN_ENDINGS: &[&str] =
    &["나요", "가요", "까요", "어요", "아요", "여요", "세요", "해요", "래요", "네요", "지요", "니까", "려면", "는지"];

/// The pairs of a query's hangul words that are a Korean ending
/// ([`KOREAN_ENDINGS`]) no chunk has, last in their word and after its stem
/// (the pair before, joined to it): `나요` in *되나요* (read `되나 나요`).
/// Korean writes its words apart but glues endings and particles to them,
/// and the analyzer reads hangul in pairs; an ending the pages never use is
/// the question's grammar, not a word the pages lack, and [`lexical_by`]
/// leaves it out. The stem still counts, known or not (*자나요*, "does it
/// sleep", keeps `자나`).
fn endings<'q>(qterms: &'q [String], has: &impl Fn(&str) -> bool) -> Vec<&'q str> {
    let mut out = Vec::new();
    for (i, t) in qterms.iter().enumerate().skip(1) {
        let last = qterms.get(i + 1).is_none_or(|next| !joined(t, next));
        if KOREAN_ENDINGS.contains(&t.as_str()) && last && joined(&qterms[i - 1], t) && !has(t) {
            out.push(t.as_str());
        }
    }
    out
}

/// Whether pair `b` follows pair `a` in one run of a query: `a`'s last
/// character is `b`'s first (集群 then 群的).
fn joined(a: &str, b: &str) -> bool {
    a.chars().nth(1).is_some_and(|c| b.starts_with(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_cosines_map_onto_the_reference_scale() {
        let (mini, e5) = (CosineScale::REFERENCE, CosineScale::MULTILINGUAL_E5);
        // MiniLM's are the scale itself, to the bit.
        for c in [-0.3f32, 0.0, 0.123_456_7, 0.46, 1.0] {
            assert_eq!(mini.apply(c).to_bits(), c.to_bits());
        }
        // e5's medians over the same 390 English queries (nonsense 0.84,
        // answerable 0.90) read as MiniLM's (0.17, 0.59), near enough.
        assert!((e5.apply(0.8405) - 0.17).abs() < 0.05, "{}", e5.apply(0.8405));
        assert!((e5.apply(0.8982) - 0.59).abs() < 0.02, "{}", e5.apply(0.8982));
        // Increasing, and `raw` undoes `apply`.
        assert!(e5.apply(0.86) < e5.apply(0.87));
        for r in [0.0f32, 0.45, 0.9] {
            assert!((e5.apply(e5.raw(r)) - r).abs() < 1e-5);
        }
        assert_eq!(CosineScale::of_encoder("intfloat/multilingual-e5-small (4-bit word table, int8 weights)"), e5);
        assert_eq!(CosineScale::of_encoder("sentence-transformers/all-MiniLM-L6-v2"), mini);
        assert_eq!(CosineScale::of_encoder("synthetic"), mini);
    }

    #[test]
    fn the_thresholds_read_the_side_the_query_has() {
        let strong = Evidence { cosine: Some(0.40), lexical: 0.5, agree: false };
        assert!((strong.score() - 0.60).abs() < 1e-6);
        assert!(strong.matched());
        // The best cosine of nonsense is about 0.1–0.3, and its words are unknown.
        assert!(!Evidence { cosine: Some(0.30), lexical: 0.0, agree: false }.matched());
        // Exact words save a query MiniLM reads poorly (an error code)...
        assert!(Evidence { cosine: Some(0.10), lexical: 0.95, agree: false }.matched());
        // ...and a close meaning saves one that shares no word.
        assert!(Evidence { cosine: Some(0.50), lexical: 0.0, agree: false }.matched());
        // Without a vector the lexical evidence alone decides.
        assert!(Evidence { cosine: None, lexical: 0.5, agree: false }.matched());
        assert!(!Evidence { cosine: None, lexical: 0.45, agree: false }.matched());
        assert!(!Evidence::default().matched());
    }

    #[test]
    fn the_seam_between_two_words_of_a_cjk_run_is_no_word_the_pages_lack() {
        // 集群的数据: 集群, 的数 and 数据 are pairs some chunk has, 群的 is not.
        let df = |t: &str| match t {
            "集群" | "数据" => Some((5, true)),
            "的数" => Some((40, false)),
            "kubernetes" => Some((30, true)),
            _ => None,
        };
        let q = |ts: &[&str]| ts.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        let run = lexical_by(&q(&["集群", "群的", "的数", "数据"]), 100, df);
        assert_eq!(run, lexical_by(&q(&["集群", "的数", "数据"]), 100, df));
        assert!(run > 0.9, "{run}");
        // Unknown at a run's edge, or beside another unknown pair that does
        // not reach a known one: a word no page uses ("长城有多长" on a
        // Kubernetes site), which still counts.
        let edge = lexical_by(&q(&["长城", "城集", "集群"]), 100, df);
        assert!(edge < lexical_by(&q(&["集群"]), 100, df), "{edge}");
        let two = lexical_by(&q(&["集群", "群的", "的的", "数据"]), 100, df);
        assert!(two < lexical_by(&q(&["集群", "数据"]), 100, df), "{two}");
        // A one-character Chinese word between two words: two pairs in a row.
        let one = lexical_by(&q(&["集群", "群取", "取的", "的数"]), 100, df);
        assert_eq!(one, lexical_by(&q(&["集群", "的数"]), 100, df));
        // Not with kana (a Japanese particle), nor three unknown pairs.
        let kana = lexical_by(&q(&["集群", "群の", "の的", "的数"]), 100, df);
        assert!(kana < one, "{kana}");
        let three = lexical_by(&q(&["集群", "群取", "取吃", "吃的", "的数"]), 100, df);
        assert!(three < one, "{three}");
        // Terms no analyzer writes (empty, one character, three, a lone
        // surrogate's replacement) are read without a panic, as unknown words.
        for odd in [&["", "集群", ""][..], &["集", "集群群", "群"], &["集群", "\u{FFFD}\u{FFFD}", "的数"], &["群的"]]
        {
            let l = lexical_by(&q(odd), 100, df);
            assert!((0.0..=1.0).contains(&l), "{odd:?}: {l}");
        }
        // Pairs that do not join (a Latin word between them) are not a seam.
        let apart = lexical_by(&q(&["集群", "群的", "kubernetes", "的数"]), 100, df);
        assert!(apart < lexical_by(&q(&["集群", "kubernetes", "的数"]), 100, df), "{apart}");
    }

    #[test]
    fn a_korean_ending_the_pages_never_use_is_no_word_they_lack() {
        // 노드가 응답하지 않나요: 노드, 응답, 답하 are on some page; 않나, 나요 on none.
        let df = |t: &str| match t {
            "노드" | "응답" => Some((5, true)),
            "답하" => Some((20, true)),
            _ => None,
        };
        let q = |ts: &[&str]| ts.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        let asked = lexical_by(&q(&["노드", "응답", "답하", "않나", "나요"]), 100, df);
        assert_eq!(asked, lexical_by(&q(&["노드", "응답", "답하", "않나"]), 100, df));
        assert!(asked > lexical_by(&q(&["노드", "응답", "답하", "않나", "xyzzy"]), 100, df));
        // An ending some page uses is a term like any other.
        let used = |t: &str| if t == "나요" { Some((3, false)) } else { df(t) };
        let with = lexical_by(&q(&["노드", "응답", "답하", "않나", "나요"]), 100, used);
        assert!(with < lexical_by(&q(&["노드", "응답", "답하", "않나"]), 100, used), "{with}");
        // Only last in its word and after its stem: a word that is itself
        // `가요` ("songs"), or a pair inside a word, still counts.
        let alone = lexical_by(&q(&["노드", "가요"]), 100, df);
        assert!(alone < lexical_by(&q(&["노드"]), 100, df), "{alone}");
        let inside = lexical_by(&q(&["응답", "답나", "나요", "요청"]), 100, df);
        assert!(inside < lexical_by(&q(&["응답", "답나", "요청"]), 100, df), "{inside}");
    }

    #[test]
    fn agreeing_sides_match_from_a_lower_bar() {
        // A natural question in everyday words: its cosine and its words each weak.
        let weak = Evidence { cosine: Some(0.25), lexical: 0.25, agree: false };
        assert!(!weak.matched());
        // Both sides' best chunks on one page: a match from AGREED_MATCH...
        assert!(Evidence { agree: true, ..weak }.matched());
        // ...but not below it, however much they agree.
        assert!(!Evidence { cosine: Some(0.15), lexical: 0.3, agree: true }.matched());
        // Without a vector there are not two sides: the lexical rule decides.
        assert!(!Evidence { cosine: None, lexical: 0.4, agree: true }.matched());
        // In one language, agreement needs a word matched in it.
        assert!(!Evidence { agree: true, ..weak }.in_language(true, false).agree);
        assert!(Evidence { agree: true, ..weak }.in_language(true, true).agree);
    }

    #[test]
    fn agreement_is_one_page_first_on_both_sides() {
        let page = |d: u32| d / 2; // chunks 0 and 1 are page 0; 2 and 3 page 1
        assert!(agree(&[(1, 0.5)], &[(0, 3.0, 0.1), (2, 1.0, 0.1)], page));
        assert!(!agree(&[(2, 0.5), (0, 0.4)], &[(0, 3.0, 0.1)], page));
        assert!(!agree(&[], &[(0, 3.0, 0.1)], page));
        assert!(!agree(&[(0, 0.5)], &[], page));
        // A page the engine cannot tell agrees with nothing, not with another unknown.
        assert!(!agree(&[(1, 0.5)], &[(0, 3.0, 0.1)], |_| NO_PAGE));
    }

    #[test]
    fn a_result_is_shown_from_a_share_of_the_querys_evidence() {
        let query = Evidence { cosine: Some(0.60), lexical: 1.0, agree: false };
        // 0.55 of the query's 1.00.
        assert!(query.shows(Evidence { cosine: Some(0.35), lexical: 0.5, agree: false }));
        assert!(!query.shows(Evidence { cosine: Some(0.30), lexical: 0.5, agree: false }));
        // Without a vector, lexical evidence against lexical evidence.
        let lexical = Evidence { cosine: None, lexical: 0.9, agree: false };
        assert!(lexical.shows(Evidence { cosine: None, lexical: 0.5, agree: false }));
        assert!(!lexical.shows(Evidence { cosine: None, lexical: 0.45, agree: false }));
        // In `bm25` a hit's cosine (the browser's vectors scored it) is not read.
        let hit = Hit { doc: 0, score: 1.0, dense: Some(0.9), bm25: Some(2.0) };
        assert_eq!(Evidence::of_hit(Mode::Bm25, &hit, 0.5), Evidence { cosine: None, lexical: 0.5, agree: false });
        assert_eq!(Evidence::of_hit(Mode::Convex, &hit, 0.5).cosine, Some(0.9));
    }

    #[test]
    fn lexical_share_is_the_mean_of_known_and_matched() {
        assert_eq!(lexical_share(0.0, 0.0, 0.0), 0.0);
        assert_eq!(lexical_share(4.0, 4.0, 4.0), 1.0);
        assert_eq!(lexical_share(4.0, 2.0, 1.0), 0.375);
    }

    #[test]
    fn lexical_evidence_over_an_index() {
        use crate::testing::{chunk, files};
        let (bytes, _) = files(&[
            chunk("a", "a", "Passwords", "reset your password in the portal"),
            chunk("b", "b", "Parking", "parking permits for the semester"),
            chunk("c", "c", "Printing", "print from your laptop"),
        ]);
        let idx = crate::index::Index::open(bytes.as_slice()).expect("the fixture opens");
        let terms = crate::index::analyzer::terms;
        let best = |q: &[String]| idx.bm25_scores_of(q.to_vec(), 1.2, 0.75).first().map(|x| x.0);
        let q = terms("reset password");
        assert_eq!(lexical(&idx, &q, best(&q)), 1.0, "every word known, both in the best chunk");
        // Known words the best chunk does not have count only once.
        let spread = terms("password parking");
        let e = lexical(&idx, &spread, best(&spread));
        assert!(e > 0.7 && e < 0.8, "{e}");
        // An unknown word weighs the most a term can.
        let odd = terms("password xqzvblorf");
        let e = lexical(&idx, &odd, best(&odd));
        assert!(e < 0.5 && e > 0.0, "{e}");
        assert_eq!(lexical(&idx, &terms("xqzv blorf"), None), 0.0);
        assert_eq!(lexical(&idx, &[], None), 0.0);
    }
}
