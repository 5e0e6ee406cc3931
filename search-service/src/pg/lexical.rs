//! The query's BM25 side over a tenant: its terms' statistics as one
//! snapshot the index's BM25 code reads, and the exact rescoring of the
//! candidates' postings.

use std::collections::HashMap;

use search_core::index::bm25::Postings;
use search_core::index::lang::Languages;
use search_core::index::{bm25, relevance, SearchParams};

use super::sql::Value;
use super::statements::Term;

/// Rows of (doc, term id, tf, len, …), as [`BM25`] and [`BM25_BOUNDED`]
/// return them, per doc.
pub(super) fn postings_of(rows: &[Vec<Value>]) -> DocPostings {
    let mut postings: DocPostings = HashMap::new();
    for r in rows {
        if let (Some(d), Some(term), Some(tf), Some(len)) = (
            r.first().and_then(Value::int),
            r.get(1).and_then(Value::int),
            r.get(2).and_then(Value::real),
            r.get(3).and_then(Value::real),
        ) {
            postings.entry(d as u32).or_default().push((term, tf, len));
        }
    }
    postings
}

/// The completion of each prefix of the word being typed (`None`: no term has it).
pub(super) type Completions = HashMap<String, Option<String>>;

/// A chunk's postings of the query's terms: (term id, tf, length).
pub(super) type DocPostings = HashMap<u32, Vec<(i32, f32, f32)>>;

/// The BM25 side of one query over a tenant as last read ([`Store::lexical`]).
pub(super) struct Lexical {
    pub(super) chunks: usize,
    pub(super) avg_len: f32,
    pub(super) vocab: HashMap<String, Term>,
    pub(super) completions: Completions,
    /// The languages queries are read in (the tenant's).
    pub(super) langs: Languages,
    /// The query's analysed terms (with the completion of a word being typed).
    pub(super) qterms: Vec<String>,
    /// Its readings, one per language it is read in ([`bm25::QueryReading`]).
    pub(super) readings: Vec<Vec<String>>,
    /// Their ids in `kb_terms`, for the terms the tenant has.
    pub(super) ids: HashMap<String, i32>,
}

impl Lexical {
    /// The query's lexical evidence ([`relevance::lexical`], from the rows
    /// fetched): `best` is the best BM25 chunk, whose postings of the query's
    /// terms are among `postings`.
    pub(super) fn evidence(&self, postings: &DocPostings, best: Option<u32>) -> f32 {
        let has: Vec<i32> =
            best.and_then(|b| postings.get(&b)).map(|l| l.iter().map(|p| p.0).collect()).unwrap_or_default();
        // The best reading's, as `relevance::lexical_of` judges the bundled index's.
        let of = |r: &Vec<String>| {
            relevance::lexical_by(r, self.chunks, |t| self.vocab.get(t).map(|v| (v.df, has.contains(&v.id))))
        };
        self.readings.iter().map(of).fold(0.0, f32::max)
    }

    /// The idf of the query's terms the tenant has ([`bm25::idf_weights`]).
    pub(super) fn weights(&self) -> Vec<(String, f32)> {
        self.qterms
            .iter()
            .filter_map(|q| self.vocab.get(q).map(|v| (q.clone(), bm25::idf(v.df, self.chunks))))
            .collect()
    }

    pub(super) fn snapshot(&self) -> Snapshot<'_> {
        Snapshot {
            chunks: self.chunks,
            avg_len: self.avg_len,
            vocab: &self.vocab,
            completions: &self.completions,
            langs: &self.langs,
        }
    }

    /// The exact BM25 scores of the chunks in `postings`, best first, as the
    /// bundled index scores them (`norms` missing: 1).
    pub(super) fn rescore(
        &self,
        postings: &DocPostings,
        norms: &HashMap<u32, f32>,
        p: &SearchParams,
    ) -> Vec<(u32, f32, f32)> {
        bm25::rescore(
            &self.snapshot(),
            self.qterms.clone(),
            postings.iter().map(|(&d, list)| {
                let lookup: HashMap<i32, (f32, f32)> = list.iter().map(|&(t, tf, len)| (t, (tf, len))).collect();
                (d, lookup)
            }),
            |term, doc_terms: &HashMap<i32, (f32, f32)>| self.ids.get(term).and_then(|id| doc_terms.get(id)).copied(),
            |d| norms.get(&d).copied().unwrap_or(1.0),
            p.k1,
            p.b,
        )
    }
}

/// What one query learnt of the tenant's vocabulary, as a source of postings
/// for [`bm25::partial_terms`] (which asks only whether a term exists and what a
/// prefix completes to); the lists themselves stay in Postgres.
pub(super) struct Snapshot<'s> {
    chunks: usize,
    avg_len: f32,
    vocab: &'s HashMap<String, Term>,
    completions: &'s HashMap<String, Option<String>>,
    langs: &'s Languages,
}

impl Postings for Snapshot<'_> {
    type List<'l>
        = std::iter::Empty<(u32, f32, f32)>
    where
        Self: 'l;

    fn chunks(&self) -> usize {
        self.chunks
    }

    fn avg_len(&self) -> f32 {
        self.avg_len
    }

    fn postings(&self, term: &str) -> Option<(usize, Self::List<'_>)> {
        self.vocab.get(term).map(|t| (t.df, std::iter::empty()))
    }

    fn doc_norm(&self, _doc: u32) -> f32 {
        1.0
    }

    fn completion(&self, p: &str) -> Option<String> {
        self.completions.get(p).cloned().flatten()
    }

    fn languages(&self) -> &Languages {
        self.langs
    }
}
