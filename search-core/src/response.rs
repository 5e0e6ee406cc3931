//! The answer to one search as every front end serves it: the results of
//! `GET /api/search`, `site-builder search --json` and the browser engine.
//!
//! One owner for that wire format: the edge function, the CLI, the browser and
//! the agents build their results here, so a field added once shows everywhere.

use serde::{Deserialize, Serialize};

use crate::index::highlight::Highlighter;
use crate::index::{ChunkMeta, Hit, Mode};

/// One result of `GET /api/search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    /// 1-based position over all pages of results.
    pub rank: usize,
    pub chunk_id: String,
    pub page_id: String,
    pub title: String,
    /// Breadcrumb of the page: section titles down to the page's own.
    pub path: Vec<String>,
    /// Site-relative URL of the page, with `#anchor` of the chunk's section.
    pub url: String,
    /// A window of the chunk's text, HTML-escaped, query terms in `<mark>`
    /// ([`crate::index::highlight`]).
    pub snippet: String,
    /// The fused score (what the results are ordered by).
    pub score: f32,
    /// Cosine similarity with the query, when the dense side scored the chunk.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub dense: Option<f32>,
    /// BM25 score, when a query term matched.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bm25: Option<f32>,
    /// The page's language tag (`en`, `de`, `zh-cn`).
    #[serde(default = "english")]
    pub lang: String,
}

fn english() -> String {
    "en".into()
}

impl SearchResult {
    /// Chunk `m`, hit `h`, rendered as the result at `rank`, its snippet cut by
    /// `hl` (one [`Highlighter`] for the query's page of results; the edge and the
    /// browser engine both render results here).
    pub fn from_chunk(rank: usize, m: ChunkMeta, h: &Hit, hl: &mut Highlighter) -> SearchResult {
        SearchResult {
            rank,
            url: if m.anchor.is_empty() { m.url.clone() } else { format!("{}#{}", m.url, m.anchor) },
            snippet: hl.snippet_in(
                &m.text,
                crate::index::lang::Lang::from_tag(m.lang()).unwrap_or(crate::index::lang::Lang::EN),
            ),
            lang: m.lang().to_string(),
            chunk_id: m.id,
            page_id: m.page_id,
            title: m.title,
            path: m.path,
            score: h.score,
            dense: h.dense,
            bm25: h.bm25,
        }
    }
}

/// Server-side time spent on one query, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// Tokenising and embedding the query (0 for `bm25`).
    pub encode: f64,
    /// Reading the query's typos, the dense scan or graph walk, and BM25 scoring.
    pub search: f64,
    /// Fusing the two lists and rendering the results (snippets).
    pub fuse: f64,
    /// All of the above.
    pub total: f64,
}

/// The answer to one query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    pub query: String,
    pub mode: Mode,
    pub k: usize,
    /// 1-based page of results.
    pub page: usize,
    pub results: Vec<SearchResult>,
    /// Whether the query has a good match ([`crate::index::relevance`]); when
    /// not, `results` is empty: the nearest chunks of nonsense are not results.
    #[serde(default = "matched_by_default")]
    pub matched: bool,
    /// The query as searched, when words of it were read as the words one
    /// keyboard slip away (`univeristy` → `university`;
    /// [`crate::index::typo`]): "showing results for …".
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub corrected: Option<String>,
    /// The language the results are in, when the search asked for one
    /// (`lang`); absent when it searched every language.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lang: Option<String>,
    /// The language the search asked for when none of its pages matched and
    /// the results come from every language instead ("no German pages match;
    /// showing pages in other languages").
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lang_fallback: Option<String>,
    /// Whether asking for the next page may return more results.
    pub has_more: bool,
    pub timings_ms: Timings,
    /// The query's vector came from the query cache (not part of the JSON; the
    /// edge function says it in `Server-Timing`).
    #[serde(skip)]
    pub encode_cached: bool,
}

/// Answers serialised before `matched` existed showed every result.
fn matched_by_default() -> bool {
    true
}
