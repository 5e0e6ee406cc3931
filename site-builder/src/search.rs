//! `site-builder search`: the index and encoder files a build wrote, opened the way
//! the edge function opens them, and one query answered with scored, highlighted
//! results.

use std::path::{Path, PathBuf};
use std::time::Instant;

use search_core::container::AlignedBytes;
use search_core::index::{IndexError, SearchParams};
use search_service::service::{SearchResponse, Service, ServiceError};

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
    #[error(transparent)]
    Store(#[from] search_service::pg::StoreError),
    #[error("{0}")]
    Postgres(String),
}

/// An index and its encoder, loaded once; or the encoder and a tenant in
/// PostgreSQL (`--postgres`), searched the way the edge function searches it.
pub struct Searcher {
    index_path: PathBuf,
    corpus: Corpus,
    encoder_path: PathBuf,
    encoder: EncoderFile,
}

enum Corpus {
    File(AlignedBytes),
    Postgres { client: std::sync::Arc<crate::pg::Client>, tenant: String },
}

impl Searcher {
    /// Opens `index` and its encoder (default: `encoder.bin` beside the index).
    pub fn open(index: &Path, encoder: Option<&Path>) -> Result<Searcher, SearchError> {
        let read = |p: &Path| std::fs::read(p).map_err(|source| SearchError::Read { path: p.to_path_buf(), source });
        let bytes = AlignedBytes::new(&read(index)?);
        let enc_path = encoder.map(Path::to_path_buf).unwrap_or_else(|| index.with_file_name("encoder.bin"));
        let encoder = EncoderFile::read(&enc_path)?;
        let s =
            Searcher { index_path: index.to_path_buf(), corpus: Corpus::File(bytes), encoder_path: enc_path, encoder };
        s.service()?;
        Ok(s)
    }

    /// The encoder beside `index` (the index itself is not read) and `tenant` of
    /// the database at `url`, checked by reading the tenant once.
    /// `ca`: CAs trusted for TLS besides the system's roots ([`crate::pg::Client::new`]).
    pub fn open_postgres(index: &Path, url: &str, tenant: &str, ca: Option<&Path>) -> Result<Searcher, SearchError> {
        let enc_path = index.with_file_name("encoder.bin");
        let encoder = EncoderFile::read(&enc_path)?;
        let client =
            std::sync::Arc::new(crate::pg::Client::new(url, ca).map_err(|e| SearchError::Postgres(e.to_string()))?);
        let corpus = Corpus::Postgres { client, tenant: tenant.to_string() };
        let s = Searcher { index_path: index.to_path_buf(), corpus, encoder_path: enc_path, encoder };
        s.service()?.ready().map_err(|e| s.service_error(e))?;
        Ok(s)
    }

    /// The index and encoder as the shared search service.
    pub fn service(&self) -> Result<Service<'_>, SearchError> {
        match &self.corpus {
            Corpus::File(bytes) => Service::open(bytes.as_slice(), self.encoder.bytes()),
            Corpus::Postgres { client, tenant } => Service::postgres(
                self.encoder.bytes(),
                search_service::pg::Store::new(Box::new(crate::pg::Shared(client.clone())), tenant),
            ),
        }
        .map_err(|e| self.service_error(e))
    }

    /// A service error in this searcher's terms (which files, which database).
    pub fn service_error(&self, e: ServiceError) -> SearchError {
        match e {
            ServiceError::Index(source) => SearchError::Index { path: self.index_path.clone(), source },
            ServiceError::Encoder(e) => SearchError::Encoder(EmbedError::from(e)),
            ServiceError::Mismatch => {
                SearchError::Mismatch { index: self.index_path.clone(), encoder: self.encoder_path.clone() }
            }
            ServiceError::Store(e) => SearchError::Store(e),
        }
    }

    /// Searches and renders the first page of results, as `GET /api/search` would.
    pub fn answer(&self, query: &str, p: &SearchParams) -> Result<SearchResponse, SearchError> {
        let svc = self.service()?;
        let origin = Instant::now();
        let clock = || origin.elapsed().as_secs_f64() * 1e3;
        svc.search(query, p, 1, &clock).map_err(|e| self.service_error(e))
    }
}

/// The human-readable form of an answer.
pub fn render_text(a: &SearchResponse, color: bool) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} results for {:?} ({}; encode {:.1} ms, search {:.2} ms, fuse {:.2} ms)",
        a.results.len(),
        a.query,
        a.mode,
        a.timings_ms.encode,
        a.timings_ms.search,
        a.timings_ms.fuse
    );
    if !a.matched {
        let _ = writeln!(s, "\nNo good match: nothing in the knowledge base is close to this query.");
    }
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
