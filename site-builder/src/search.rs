//! `site-builder search`: the index and encoder files a build wrote, opened the way
//! the edge function opens them, and one query answered with scored, highlighted
//! results.

use std::path::{Path, PathBuf};
use std::time::Instant;

use search_core::container::AlignedBytes;
use search_core::index::{highlight, Hit, Index, IndexError, SearchParams};
use serde::Serialize;

use crate::embed::{EmbedError, EncoderFile};

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("cannot read {path}: {source}; build it with `site-builder build`")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Index { path: PathBuf, source: IndexError },
    #[error(transparent)]
    Encoder(#[from] EmbedError),
    #[error("{encoder} was not made with the weights that built {index}; rebuild both with one `site-builder build`")]
    Mismatch { index: PathBuf, encoder: PathBuf },
}

/// An index and its encoder, loaded once.
pub struct Searcher {
    index_path: PathBuf,
    index: AlignedBytes,
    encoder: EncoderFile,
}

/// One result, as `--json` prints it (and as the edge function will serve it).
#[derive(Debug, Clone, Serialize)]
pub struct ResultItem {
    pub rank: usize,
    pub chunk_id: String,
    pub page_id: String,
    pub title: String,
    pub path: Vec<String>,
    pub url: String,
    pub snippet: String,
    pub score: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25: Option<f32>,
}

/// A query's answer.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub query: String,
    pub mode: String,
    pub results: Vec<ResultItem>,
    pub timings_ms: Timings,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Timings {
    pub encode: f64,
    pub search: f64,
}

impl Searcher {
    /// Opens `index` and its encoder (default: `encoder.bin` beside the index).
    pub fn open(index: &Path, encoder: Option<&Path>) -> Result<Searcher, SearchError> {
        let read = |p: &Path| std::fs::read(p).map_err(|source| SearchError::Read { path: p.to_path_buf(), source });
        let bytes = AlignedBytes::new(&read(index)?);
        let enc_path = encoder.map(Path::to_path_buf).unwrap_or_else(|| index.with_file_name("encoder.bin"));
        let encoder = EncoderFile::read(&enc_path)?;
        let s = Searcher { index_path: index.to_path_buf(), index: bytes, encoder };
        let idx = s.index()?;
        let fp = s.encoder.encoder().map_err(EmbedError::from)?.fingerprint();
        if idx.info().encoder_fingerprint != fp {
            return Err(SearchError::Mismatch { index: index.to_path_buf(), encoder: enc_path });
        }
        Ok(s)
    }

    pub fn index(&self) -> Result<Index<'_>, SearchError> {
        Index::open(self.index.as_slice())
            .map_err(|source| SearchError::Index { path: self.index_path.clone(), source })
    }

    /// Embeds the query (when the mode uses vectors) and searches.
    pub fn hits(&self, query: &str, p: &SearchParams) -> Result<(Vec<Hit>, Timings), SearchError> {
        let idx = self.index()?;
        let t = Instant::now();
        let qvec = if p.mode == search_core::index::Mode::Bm25 {
            None
        } else {
            Some(self.encoder.encoder().map_err(EmbedError::from)?.embed(query))
        };
        let encode = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let hits = idx.search(query, qvec.as_deref(), p);
        Ok((hits, Timings { encode, search: t.elapsed().as_secs_f64() * 1e3 }))
    }

    /// Searches and renders the results.
    pub fn answer(&self, query: &str, p: &SearchParams) -> Result<Answer, SearchError> {
        let (hits, timings) = self.hits(query, p)?;
        let idx = self.index()?;
        let mut results = Vec::with_capacity(hits.len());
        for (i, h) in hits.iter().enumerate() {
            let m = idx.chunk(h.doc).map_err(|source| SearchError::Index { path: self.index_path.clone(), source })?;
            results.push(ResultItem {
                rank: i + 1,
                url: if m.anchor.is_empty() { m.url.clone() } else { format!("{}#{}", m.url, m.anchor) },
                snippet: highlight::snippet(&m.text, query),
                chunk_id: m.id,
                page_id: m.page_id,
                title: m.title,
                path: m.path,
                score: h.score,
                dense: h.dense,
                bm25: h.bm25,
            });
        }
        Ok(Answer { query: query.to_string(), mode: p.mode.name().to_string(), results, timings_ms: timings })
    }
}

/// The human-readable form of an answer.
pub fn render_text(a: &Answer, color: bool) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} results for {:?} ({}; encode {:.1} ms, search {:.2} ms)",
        a.results.len(),
        a.query,
        a.mode,
        a.timings_ms.encode,
        a.timings_ms.search
    );
    for r in &a.results {
        let comp = match (r.dense, r.bm25) {
            (Some(d), Some(b)) => format!("dense {d:.3}, bm25 {b:.2}"),
            (Some(d), None) => format!("dense {d:.3}"),
            (None, Some(b)) => format!("bm25 {b:.2}"),
            (None, None) => String::new(),
        };
        let _ = writeln!(s, "\n{}. {}  [{:.4}; {}]", r.rank, r.path.join(" / "), r.score, comp);
        let _ = writeln!(s, "   {}", r.url);
        let (on, off) = if color { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
        let plain = r.snippet.replace("<mark>", on).replace("</mark>", off);
        let plain = plain.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&amp;", "&");
        let _ = writeln!(s, "   {plain}");
    }
    s
}
