//! BM25 scoring over any source of postings: the index file read in place
//! ([`super::Index`]) or the fragments the browser engine fetches
//! ([`super::fragments`]). One scoring loop, one idf, one way of completing the
//! word being typed, so the two engines give the same ranking and the same
//! scores to the bit (a test compares them on every CSC dev question).

use std::collections::HashMap;

use super::lang::{Lang, LangTag};
use super::Mode;
use super::{analyzer, compound};

/// Where postings come from.
pub trait Postings {
    /// The posting list of one term: (chunk, field-weighted term frequency,
    /// the chunk's length), chunks ascending.
    type List<'s>: Iterator<Item = (u32, f32, f32)> + Seek
    where
        Self: 's;

    /// Chunks in the collection (BM25's N).
    fn chunks(&self) -> usize;
    /// Mean field-weighted chunk length.
    fn avg_len(&self) -> f32;
    /// `term`'s document frequency and posting list; `None`: not a term.
    fn postings(&self, term: &str) -> Option<(usize, Self::List<'_>)>;
    /// L2 norm of a chunk's saturated term-frequency vector (the `dot` mode's
    /// sparse side); 1 where the source does not carry it.
    fn doc_norm(&self, doc: u32) -> f32;
    /// The completion of the lowercased, non-empty prefix `p` ([`complete_prefix`]):
    /// the index scans its vocabulary ([`best_completion`]); the browser engine
    /// reads the table of those scans made at build time.
    fn completion(&self, p: &str) -> Option<String>;
    /// The languages the chunks are written in, which a query is read in
    /// ([`super::lang::Languages::reading`]).
    fn languages(&self) -> &super::lang::Languages {
        &super::lang::ENGLISH
    }
}

/// The first of `n` ascending terms (`term(i)`) that is not below `t`: the one
/// binary search over a sorted vocabulary, whoever holds it.
pub fn lower_bound<'t>(n: usize, term: impl Fn(usize) -> &'t [u8], t: &[u8]) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if term(mid) < t {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// One posting list, each posting with its chunk's length (from the chunk
/// length table, 0 for a chunk it lacks).
pub struct PostingIter<'s> {
    docs: std::slice::Iter<'s, u32>,
    tfs: std::slice::Iter<'s, f32>,
    lens: &'s [f32],
}

impl<'s> PostingIter<'s> {
    /// `docs` and `tfs` side by side (the shorter ends the list).
    pub fn new(docs: &'s [u32], tfs: &'s [f32], lens: &'s [f32]) -> PostingIter<'s> {
        PostingIter { docs: docs.iter(), tfs: tfs.iter(), lens }
    }
}

/// A posting list that says whether it holds a chunk without being read
/// through: each result's own lexical evidence asks it for every term of the
/// query ([`super::relevance::lexical`]), and a scan would cost the length of
/// the list each time.
pub trait Seek {
    /// Whether chunk `doc` is in the rest of the list.
    fn contains(&self, doc: u32) -> bool;
}

impl Seek for PostingIter<'_> {
    /// By binary search: the chunks of a list are ascending (checked when an
    /// index opens; the fragments are written so).
    fn contains(&self, doc: u32) -> bool {
        self.docs.as_slice().binary_search(&doc).is_ok()
    }
}

/// A source whose lists stay elsewhere (the PostgreSQL tier's vocabulary
/// snapshot) holds no chunk here.
impl<T> Seek for std::iter::Empty<T> {
    fn contains(&self, _doc: u32) -> bool {
        false
    }
}

impl Iterator for PostingIter<'_> {
    type Item = (u32, f32, f32);

    #[inline]
    fn next(&mut self) -> Option<(u32, f32, f32)> {
        let (&d, &f) = (self.docs.next()?, self.tfs.next()?);
        Some((d, f, self.lens.get(d as usize).copied().unwrap_or(0.0)))
    }
}

/// The saturating term-frequency part of BM25.
#[inline]
pub fn bm25_tf(tf: f32, len: f32, avg_len: f32, k1: f32, b: f32) -> f32 {
    tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avg_len))
}

/// Lucene's BM25 idf (never negative). `libm`'s logarithm on every target:
/// glibc, musl (the edge component) and the browser build would otherwise each
/// bring their own, and they may differ in the last bit.
#[inline]
pub fn idf(df: usize, n: usize) -> f32 {
    libm::logf(1.0 + (n as f32 - df as f32 + 0.5) / (df as f32 + 0.5))
}

/// The idf of each of `qterms` some chunk of `src` has: what a snippet's window
/// weighs the query's words by ([`super::highlight::Highlighter::by_idf`]).
pub fn idf_weights<P: Postings + ?Sized>(src: &P, qterms: &[String]) -> Vec<(String, f32)> {
    let n = src.chunks();
    qterms.iter().filter_map(|t| src.postings(t).map(|(df, _)| (t.clone(), idf(df, n)))).collect()
}

/// BM25 scores of every chunk that matches one of `qterms` (analysed terms), and
/// the L2-normalised sparse dot product used by the `dot` mode; best first, ties
/// by chunk id.
pub fn scores<P: Postings + ?Sized>(src: &P, mut qterms: Vec<String>, k1: f32, b: f32) -> Vec<(u32, f32, f32)> {
    qterms.sort();
    qterms.dedup();
    let n = src.chunks();
    let avg_len = src.avg_len();
    let mut acc: HashMap<u32, f32> = HashMap::new();
    let mut q_norm_sq = 0.0;
    // Terms in sorted order and chunks ascending within a term: every source
    // adds the same numbers in the same order.
    for t in &qterms {
        let Some((df, list)) = src.postings(t) else { continue };
        let w = idf(df, n);
        q_norm_sq += w * w;
        for (d, f, len) in list {
            *acc.entry(d).or_default() += w * bm25_tf(f, len, avg_len, k1, b);
        }
    }
    let q_norm = q_norm_sq.sqrt().max(1e-12);
    let mut out: Vec<(u32, f32, f32)> = acc
        .into_iter()
        // The sparse dot product of the L2-normalised query (idf) and document
        // (saturated tf) vectors is the BM25 score over the two norms.
        .map(|(d, score)| (d, score, score / (q_norm * src.doc_norm(d).max(1e-12))))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// [`scores`] of candidate chunks whose postings of the query terms were fetched
/// elsewhere (the PostgreSQL backend): `tf_of(term, doc)` gives a candidate's
/// (term frequency, length) under a term, `norm` its sparse norm. The additions
/// are [`scores`]' own, term by term in sorted order, so a chunk gets the same
/// `f32` score to the bit; `src` answers only the terms' document frequencies.
pub fn rescore<P: Postings + ?Sized, D>(
    src: &P,
    mut qterms: Vec<String>,
    docs: impl Iterator<Item = (u32, D)>,
    tf_of: impl Fn(&str, &D) -> Option<(f32, f32)>,
    norm: impl Fn(u32) -> f32,
    k1: f32,
    b: f32,
) -> Vec<(u32, f32, f32)> {
    qterms.sort();
    qterms.dedup();
    let n = src.chunks();
    let avg_len = src.avg_len();
    let weighted: Vec<(&str, f32)> =
        qterms.iter().filter_map(|t| src.postings(t).map(|(df, _)| (t.as_str(), idf(df, n)))).collect();
    let q_norm = weighted.iter().fold(0.0f32, |acc, (_, w)| acc + w * w).sqrt().max(1e-12);
    let mut out: Vec<(u32, f32, f32)> = docs
        .filter_map(|(d, data)| {
            let mut score = None::<f32>;
            for &(t, w) in &weighted {
                if let Some((f, len)) = tf_of(t, &data) {
                    *score.get_or_insert(0.0) += w * bm25_tf(f, len, avg_len, k1, b);
                }
            }
            score.map(|s| (d, s, s / (q_norm * norm(d).max(1e-12))))
        })
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// How many vocabulary terms a completion reads at most.
pub const COMPLETION_SCAN: usize = 4096;

/// The vocabulary term that starts with `partial` (lowercased) and is in the
/// most chunks: what a word being typed most likely becomes. Reads at most
/// [`COMPLETION_SCAN`] terms of the sorted vocabulary's matching range;
/// identifier terms (`=…`) are never completions.
pub fn complete_prefix<P: Postings + ?Sized>(src: &P, partial: &str) -> Option<String> {
    let p = partial.to_lowercase();
    if p.is_empty() {
        return None;
    }
    src.completion(&p)
}

/// [`complete_prefix`] of a lowercased prefix from the vocabulary's terms (with
/// their document frequencies) in order from the first not below `p`, read
/// lazily: at most [`COMPLETION_SCAN`] of them, and only while they start with `p`.
pub fn best_completion<'t>(p: &str, from: impl Iterator<Item = (&'t [u8], usize)>) -> Option<String> {
    from.take(COMPLETION_SCAN)
        .enumerate()
        .take_while(|(_, (t, _))| t.starts_with(p.as_bytes()))
        .filter(|(_, (t, _))| !t.starts_with(b"="))
        .max_by_key(|&(i, (_, df))| (df, std::cmp::Reverse(i)))
        .and_then(|(_, (t, _))| std::str::from_utf8(t).ok().map(str::to_string))
}

/// The BM25 terms of a query whose last word is still being typed: the words
/// before it as usual, and the last as its completion ([`complete_prefix`])
/// when it is not a term of its own. A prefix with no completion is cut back
/// (to three characters at least) until one is found: stems are often shorter
/// than the word being typed ("certifica" → "certif").
pub fn partial_terms<P: Postings + ?Sized>(src: &P, query: &str) -> Vec<String> {
    partial_terms_in(src, query, &src.languages().reading(query, None))
}

/// [`partial_terms`] read in `langs` (English when empty).
fn partial_terms_in<P: Postings + ?Sized>(src: &P, query: &str, langs: &[Lang]) -> Vec<String> {
    let (head, last) = split_last_word(query);
    let mut terms = query_terms_over(src, head, langs);
    let own = analyzer::query_terms(last, langs);
    // A stop word ("do", "how") has no terms and is left alone: completing it
    // would add a word the reader may not mean ("do" → "document"); one more
    // character and it is no longer a stop word.
    let typing = last.chars().count() >= 2 && last.chars().all(char::is_alphanumeric) && !own.is_empty();
    if !typing || own.iter().any(|t| src.postings(t).is_some()) {
        terms.extend(own);
        return terms;
    }
    let completion = word_prefixes(last).into_iter().find_map(|p| complete_prefix(src, p));
    match completion {
        // The completion read as the word it is: a vocabulary term can be a word
        // kept as written ("parking" in a file name) whose analysed form is the
        // stem the pages use ("park"); the reader typing "parki" means the word.
        Some(t) => {
            let analysed = analyzer::query_terms(&t, langs);
            if !analysed.is_empty() && analysed.iter().all(|a| src.postings(a).is_some()) {
                terms.extend(analysed);
            } else {
                terms.push(t);
            }
        }
        None => terms.extend(own),
    }
    terms
}

/// A query as one search reads it ([`read_query`]).
pub struct QueryReading {
    /// The terms BM25 scores.
    pub terms: Vec<String>,
    /// The terms of each language the query is read in, which the "no
    /// results" rule judges one by one ([`super::relevance::lexical_of`]);
    /// one reading when the words tell the language.
    pub readings: Vec<Vec<String>>,
}

/// `query` as a search in `mode` reads it over `src`: no words for `dense`;
/// with `partial`, the last word completed ([`partial_terms`]); else its terms
/// ([`analyzer::query_terms`]), in the languages
/// [`super::lang::Languages::reading`] says (`lang`'s when a search is
/// restricted to one some chunk is in). The index
/// file, the browser's fragments and the PostgreSQL tier all read through here.
pub fn read_query<P: Postings + ?Sized>(
    src: &P,
    query: &str,
    mode: Mode,
    partial: bool,
    lang: Option<LangTag>,
) -> QueryReading {
    let langs = src.languages().reading(query, lang);
    match (mode, partial) {
        (Mode::Dense, _) => QueryReading { terms: Vec::new(), readings: Vec::new() },
        (_, true) => {
            let terms = partial_terms_in(src, query, &langs);
            // Undecided between languages: each reading judged on its own.
            let readings = if langs.len() > 1 && Lang::of_query(query, &langs).is_none() {
                langs.iter().map(|l| partial_terms_in(src, query, std::slice::from_ref(l))).collect()
            } else {
                vec![terms.clone()]
            };
            QueryReading { terms, readings }
        }
        (_, false) => {
            let readings = readings_over(src, query, &langs);
            QueryReading { terms: analyzer::joined(readings.clone(), &langs), readings }
        }
    }
}

/// The readings of `query` in `langs` ([`analyzer::readings_in`]), each with
/// the words no chunk of `src` has read as their parts, where they split into
/// words chunks have ([`compound::decompound`]).
fn readings_over<P: Postings + ?Sized>(src: &P, query: &str, langs: &[Lang]) -> Vec<Vec<String>> {
    let df = |t: &str| src.postings(t).map_or(0, |(df, _)| df);
    let mut readings = analyzer::readings_in(query, langs);
    for (lang, reading) in &mut readings {
        compound::decompound(query, *lang, reading, &df);
    }
    readings.into_iter().map(|(_, r)| r).collect()
}

/// [`analyzer::query_terms`] over `src`, compounds no chunk has split
/// ([`readings_over`]).
fn query_terms_over<P: Postings + ?Sized>(src: &P, query: &str, langs: &[Lang]) -> Vec<String> {
    analyzer::joined(readings_over(src, query, langs), langs)
}

/// The prefixes of a word being typed that [`partial_terms`] tries to complete,
/// longest first: the whole word down to its first three characters (two for
/// a two-character word).
pub fn word_prefixes(word: &str) -> Vec<&str> {
    let ends: Vec<usize> = word.char_indices().map(|(i, _)| i).skip(1).chain([word.len()]).collect();
    let shortest = ends.len().min(3);
    ends[shortest - 1..].iter().rev().map(|&e| &word[..e]).collect()
}

/// The query before its last word, and the last word (what is being typed).
pub fn split_last_word(query: &str) -> (&str, &str) {
    let query = query.trim_end();
    query.rsplit_once(char::is_whitespace).unwrap_or(("", query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_being_typed_is_tried_from_whole_down_to_three_characters() {
        assert_eq!(word_prefixes("parki"), vec!["parki", "park", "par"]);
        assert_eq!(word_prefixes("pa"), vec!["pa"]);
        assert_eq!(word_prefixes("päät"), vec!["päät", "pää"]);
        assert_eq!(word_prefixes(""), vec![""]);
    }

    #[test]
    fn lower_bound_finds_the_first_term_not_below() {
        let terms: [&[u8]; 4] = [b"alpha", b"beta", b"beta2", b"gamma"];
        let at = |t: &[u8]| lower_bound(terms.len(), |i| terms[i], t);
        assert_eq!((at(b"a"), at(b"beta"), at(b"beta1"), at(b"zeta")), (0, 1, 2, 4));
    }
}
