//! The hybrid index: one file (`index.bin`) holding, for every chunk, its display
//! record, its dense vector and its BM25 postings; and the search over it.
//!
//! Layout (sections of a [`crate::container`] file, magic `KBINDEX`):
//!
//! | section | type | what |
//! | --- | --- | --- |
//! | `info` | JSON | [`IndexInfo`]: counts, parameters, encoder fingerprint, build time |
//! | `meta.off`, `meta` | u32[n+1], bytes | one JSON [`ChunkMeta`] per chunk, parsed only for results |
//! | `doc.page` | u32[n] | page ordinal of each chunk (collapsing to one hit per page) |
//! | `vec.i16`, `vec.f16`, `vec.f32` or `vec.i8` + `vec.scale` | i16[n·384] (fixed point, ±1 = ±32767) / u16[n·384] (IEEE half) / f32[n·384] / i8[n·384], f32[n] | unit-length dense vectors |
//! | `terms.off`, `terms` | u32[t+1], bytes | the BM25 vocabulary, sorted (term id = position) |
//! | `post.off`, `post.doc`, `post.tf` | u32[t+1], u32[p], f32[p] | postings: chunk and field-weighted term frequency |
//! | `doc.len`, `doc.norm` | f32[n], f32[n] | field-weighted length; norm of the BM25 document vector |
//! | `hnsw.*` | u32 | optional HNSW graph ([`graph`]), for corpora above the build's threshold |
//!
//! [`Index::open`] validates the header, the section table and the section sizes,
//! parses the small `info` record, and makes one pass over the offset tables, the
//! ids and the vocabulary so that no query can be led out of bounds by the file
//! (about 1 ms for a 2,800-chunk, 12 MB index; the vectors and records are not
//! read). Nothing proportional to the corpus is copied or allocated. Dense search is a flat scan of the vectors (exact; ~5k
//! chunks scan in about a millisecond) or, when the build added one, a walk of the
//! HNSW graph; BM25 walks the query terms' postings.

pub mod analyzer;
pub mod bm25;
pub mod compound;
pub mod fragments;
pub mod fusion;
mod gradation;
pub mod graph;
pub mod highlight;
pub mod lang;
pub mod relevance;
pub mod typo;
mod vectors;
mod write;

use serde::{Deserialize, Serialize};

use crate::chunk::Chunk;
use crate::container::{check_offsets, corrupt, product, Container, ContainerError};
pub use fusion::{Mode, Order};
use vectors::{dot, f16_to_f32, TopK, Q15};
pub(crate) use vectors::{dot_f16, f16_bits, top_f16, top_rows, I16Query, Scored};
pub use write::{build, BuildParams};

pub const MAGIC: [u8; 8] = *b"KBINDEX\0";
/// 2: the analyzer folds only the Latin blocks and stems with the newer Snowball
/// English (`analyzer`), so an index written before has other terms and is refused.
/// 3: CJK runs are read in pairs and each chunk in its own language
/// (`IndexInfo::languages`).
/// 4: French, Italian, Catalan and Irish words lose an elided article
/// (`l'applicazione` → `applicazione`; `analyzer`).
/// 5: Finnish stems are levelled across consonant gradation (`gradation`:
/// `vaihdan` and `vaihtaa` → `vaiht`).
pub const VERSION: u32 = 5;

/// Why an index file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    #[error("index file: {0}")]
    Container(#[from] ContainerError),
    #[error("index file: {0}")]
    Invalid(String),
}

/// BM25 parameters (`k1`, `b`) and the extra weight of the title and header trail.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Params {
    pub k1: f32,
    pub b: f32,
    /// Each title term counts `1 + title_weight` times.
    pub title_weight: f32,
    /// Each header-trail term counts `1 + header_weight` times.
    pub header_weight: f32,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params { k1: 1.2, b: 0.75, title_weight: 1.0, header_weight: 0.5 }
    }
}

/// How vectors are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorStorage {
    /// IEEE half precision: half the bytes of f32 and, for unit vectors, the same
    /// rankings (relative error 2^-11 per component; measured in BENCHMARKS.md).
    F16,
    F32,
    /// int8 with one scale per vector.
    Int8,
    /// Fixed point, 15 fraction bits (`round(x · 32767)`): the bytes of f16 and at
    /// least its precision for every component of a unit vector above 2^-5 in
    /// magnitude (an absolute error of 1.5·10^-5 throughout, where a half's grows
    /// with the value), and a scan of exact integer products: `i32x4.dot_i16x8_s`
    /// in wasm, `pmaddwd` on x86, eight products in one instruction where a half
    /// takes a widening per component first (docs/benchmarks/edge-load.md, "Vectors in fixed
    /// point").
    I16,
}

/// The `info` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexInfo {
    pub chunks: usize,
    pub pages: usize,
    pub terms: usize,
    pub dim: usize,
    pub vectors: VectorStorage,
    pub encoder: String,
    pub encoder_fingerprint: u64,
    pub bm25: Bm25Params,
    pub default_mode: Mode,
    pub alpha: f32,
    pub rrf_k: f32,
    /// Default [`SearchParams::norm_depth`].
    #[serde(default = "default_norm_depth")]
    pub norm_depth: usize,
    /// How text beyond the encoder's 256 tokens was handled ("blend", "mean" or
    /// "truncate"; see `site-builder build --long-text`).
    pub long_text: String,
    /// Seconds since the Unix epoch when the index was written.
    pub built_unix: u64,
    /// The languages queries are read in ([`lang::Lang`] codes): those of at
    /// least 5 % of the chunks, most first; empty when that is English alone
    /// (and in indexes written before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    /// Every language tag a chunk has, sorted: what the `doc.lang` section's
    /// bytes number. Empty when every chunk is English (and in indexes
    /// written before), and then the index has no `doc.lang`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunk_languages: Vec<String>,
    /// The sets of languages chunks stand in for (`Chunk::stands_in`): what
    /// the `doc.stands_in` section's bytes number, from 1 (0: none). Empty
    /// when no chunk stands in for a language (and in indexes written
    /// before), and then the index has no `doc.stands_in`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stand_in_sets: Vec<Vec<String>>,
    /// The index format its terms were analysed at: [`VERSION`] in an index
    /// file (set on open from its checked container, whatever the record
    /// says) and in a PostgreSQL tenant published from one; 0 in a tenant
    /// published before formats were recorded (format 3 or older), whose
    /// terms a query may no longer meet (`/api/health` says so until it is
    /// published again).
    #[serde(default)]
    pub format: u32,
}

impl IndexInfo {
    /// How this index's encoder's cosines read on the reference scale.
    pub fn cosine_scale(&self) -> relevance::CosineScale {
        relevance::CosineScale::of_encoder(&self.encoder)
    }
}

/// Indexes written before the field were built with 10.
fn default_norm_depth() -> usize {
    10
}

/// What a result shows of a chunk (the `meta` record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkMeta {
    pub id: String,
    pub page_id: String,
    pub title: String,
    pub path: Vec<String>,
    pub headers: Vec<String>,
    pub url: String,
    pub anchor: String,
    pub text: String,
    /// The page's language tag; empty for English (and in indexes written
    /// before languages).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lang: String,
    /// The languages the page stands in for (`Chunk::stands_in`): what the
    /// PostgreSQL tier filters a search in one language by, beside `lang`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stands_in: Vec<String>,
}

impl ChunkMeta {
    /// The page's language tag (`en` when the record has none).
    pub fn lang(&self) -> &str {
        if self.lang.is_empty() {
            "en"
        } else {
            &self.lang
        }
    }
}

impl From<&Chunk> for ChunkMeta {
    fn from(c: &Chunk) -> Self {
        ChunkMeta {
            id: c.id.clone(),
            page_id: c.page_id.clone(),
            title: c.title.clone(),
            path: c.path.clone(),
            headers: c.headers.clone(),
            url: c.url.clone(),
            anchor: c.anchor.clone(),
            text: c.text.clone(),
            lang: if c.lang == "en" { String::new() } else { c.lang.clone() },
            stands_in: c.stands_in.clone(),
        }
    }
}

#[derive(Clone, Copy)]
enum Vectors<'a> {
    F16(&'a [u16]),
    I16(&'a [i16]),
    F32(&'a [f32]),
    Int8(&'a [i8], &'a [f32]),
}

/// An index read in place.
pub struct Index<'a> {
    info: IndexInfo,
    meta_off: &'a [u32],
    meta: &'a [u8],
    doc_page: &'a [u32],
    vectors: Vectors<'a>,
    terms_off: &'a [u32],
    terms: &'a [u8],
    post_off: &'a [u32],
    post_doc: &'a [u32],
    post_tf: &'a [f32],
    doc_len: &'a [f32],
    doc_norm: &'a [f32],
    avg_len: f32,
    graph: Option<graph::GraphView<'a>>,
    /// `info.languages` and `info.chunk_languages` read.
    langs: lang::Languages,
    /// The encoder's cosines on the reference scale ([`IndexInfo::cosine_scale`]).
    cosine_scale: relevance::CosineScale,
    /// Each chunk's language, as its place in `info.chunk_languages` (empty:
    /// every chunk is English).
    doc_lang: &'a [u8],
    /// Each chunk's stand-in set, by number in `info.stand_in_sets` from 1
    /// (empty: no chunk stands in for a language).
    doc_stands_in: &'a [u8],
}

/// One scored chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub doc: u32,
    pub score: f32,
    /// Cosine similarity with the query on the reference scale
    /// ([`relevance::CosineScale`]; MiniLM's own), when the dense side saw this chunk.
    pub dense: Option<f32>,
    /// BM25 score, when a query term matched.
    pub bm25: Option<f32>,
}

/// Each side's ranked candidates for one query, before fusion.
#[derive(Debug, Clone, Default)]
pub struct Candidates {
    /// (chunk, cosine), best first.
    pub dense: Vec<(u32, f32)>,
    /// (chunk, BM25, normalised sparse dot), best first.
    pub sparse: Vec<(u32, f32, f32)>,
    /// Whether anything matched well enough to show ([`relevance`]), read
    /// from both lists before they are cut.
    pub evidence: relevance::Evidence,
    /// The idf of the query's terms the chunks have ([`bm25::idf_weights`]):
    /// what the results' snippets weigh the query's words by.
    pub weights: Vec<(String, f32)>,
    /// The query's terms as read in each of its languages
    /// ([`bm25::QueryReading::readings`]): what each result's own lexical
    /// evidence is read from ([`relevance::Evidence::of_hit`]).
    pub readings: Vec<Vec<String>>,
}

/// Per-query settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchParams {
    pub k: usize,
    pub mode: Mode,
    /// Weight of the dense side in `convex` and `dot`.
    pub alpha: f32,
    pub rrf_k: f32,
    /// How deep each list is read before fusing.
    pub depth: usize,
    /// `convex`: the top this-many scores of each list define its min-max range
    /// (the head of a list, where the decision is). A chunk below one list's head
    /// scores 0 on that side; chunks in neither head follow in reciprocal-rank
    /// order, so deep recall keeps a sensible order. Not clamping (every
    /// candidate's exact scores over that range) measured worse: docs/benchmarks/readers-words.md,
    /// "Query-time methods tried on top".
    pub norm_depth: usize,
    /// Keep only the best chunk of each page.
    pub collapse_pages: bool,
    /// Pages first (the default) or each chunk by its own score.
    pub order: Order,
    pub k1: f32,
    pub b: f32,
    /// Scan every vector even when the index has an HNSW graph.
    pub exact: bool,
    /// HNSW beam width (0: the index's default).
    pub ef: usize,
    /// The query's last word is still being typed: BM25 reads it as its most
    /// common completion ([`Index::partial_terms`]). Search as you type sets it.
    pub partial: bool,
    /// Only chunks in this language ([`lang::LangTag::covers`]); `None`: all.
    pub lang: Option<lang::LangTag>,
}

impl SearchParams {
    /// The parameters an index's settings give, for `k` results: what the
    /// bundled index and a PostgreSQL tenant (which stores the same settings)
    /// both search with by default.
    pub fn of_index(info: &IndexInfo, k: usize) -> SearchParams {
        SearchParams {
            k,
            mode: info.default_mode,
            alpha: info.alpha,
            rrf_k: info.rrf_k,
            depth: 100,
            norm_depth: info.norm_depth,
            collapse_pages: false,
            order: Order::PAGES,
            k1: info.bm25.k1,
            b: info.bm25.b,
            exact: false,
            ef: 0,
            partial: false,
            lang: None,
        }
    }

    /// The parameters a build given no settings writes into its index (`convex`,
    /// alpha 0.5, RRF k 60, norm depth 30, BM25's defaults), for `k` results: for a
    /// search with no index settings to read.
    pub fn defaults(k: usize) -> SearchParams {
        let bm25 = Bm25Params::default();
        SearchParams {
            k,
            mode: Mode::Convex,
            alpha: 0.5,
            rrf_k: 60.0,
            depth: 100,
            norm_depth: fusion::NORM_DEPTH,
            collapse_pages: false,
            order: Order::PAGES,
            k1: bm25.k1,
            b: bm25.b,
            exact: false,
            ef: 0,
            partial: false,
            lang: None,
        }
    }
}

impl<'a> Index<'a> {
    /// Opens an index in place (64-byte aligned bytes, as `include_bytes!` in an
    /// aligned static or [`crate::container::AlignedBytes`] give).
    ///
    /// Everything a query later trusts is checked here, once, so that no search
    /// can panic or allocate by an amount the file chose: every count against its
    /// section's size (checked arithmetic), every offset table ascending and inside
    /// its data, every posting's chunk id, every page ordinal, the vocabulary in
    /// strictly ascending order (binary search depends on it) and the graph's ids.
    /// That is one linear pass over the offset, id and term sections (not the
    /// vectors or the records): about 2 ms for a 20k-chunk index, once per open.
    pub fn open(bytes: &'a [u8]) -> Result<Index<'a>, IndexError> {
        let c = Container::open(bytes, MAGIC, VERSION)?;
        let mut info: IndexInfo =
            serde_json::from_slice(c.bytes("info")?).map_err(|e| IndexError::Invalid(format!("info record: {e}")))?;
        // The container's version, checked: files written before the record
        // carried it say nothing.
        info.format = VERSION;
        let n = info.chunks;
        let vectors = match info.vectors {
            VectorStorage::F16 => Vectors::F16(c.exact("vec.f16", product("vec.f16", n, info.dim)?)?),
            VectorStorage::F32 => Vectors::F32(c.exact("vec.f32", product("vec.f32", n, info.dim)?)?),
            VectorStorage::I16 => Vectors::I16(c.exact("vec.i16", product("vec.i16", n, info.dim)?)?),
            VectorStorage::Int8 => {
                Vectors::Int8(c.exact("vec.i8", product("vec.i8", n, info.dim)?)?, c.exact("vec.scale", n)?)
            }
        };
        let plus_one = |section: &str, v: usize| v.checked_add(1).ok_or_else(|| corrupt(section, "count overflows"));
        let meta_off: &[u32] = c.exact("meta.off", plus_one("meta.off", n)?)?;
        let meta = c.bytes("meta")?;
        check_offsets("meta.off", meta_off, meta.len())?;

        let doc_page: &[u32] = c.exact("doc.page", n)?;
        if let Some(d) = doc_page.iter().position(|&p| p as usize >= info.pages) {
            let msg = format!("chunk {d} is on page {}, the index has {} pages", doc_page[d], info.pages);
            return Err(corrupt("doc.page", msg).into());
        }

        let terms_off: &[u32] = c.exact("terms.off", plus_one("terms.off", info.terms)?)?;
        let terms = c.bytes("terms")?;
        check_offsets("terms.off", terms_off, terms.len())?;
        let term = |i: usize| &terms[terms_off[i] as usize..terms_off[i + 1] as usize];
        if let Some(i) = (1..info.terms).find(|&i| term(i - 1) >= term(i)) {
            return Err(corrupt("terms", format!("term {i} is out of order (the vocabulary must be sorted)")).into());
        }

        let post_off: &[u32] = c.exact("post.off", plus_one("post.off", info.terms)?)?;
        let post_doc: &[u32] = c.u32s("post.doc")?;
        check_offsets("post.off", post_off, post_doc.len())?;
        if let Some(i) = post_doc.iter().position(|&d| d as usize >= n) {
            return Err(
                corrupt("post.doc", format!("posting {i} names chunk {}, the index has {n}", post_doc[i])).into()
            );
        }
        Ok(Index {
            meta_off,
            meta,
            doc_page,
            vectors,
            terms_off,
            terms,
            post_off,
            post_doc,
            post_tf: c.exact("post.tf", post_doc.len())?,
            doc_len: c.exact("doc.len", n)?,
            doc_norm: c.exact("doc.norm", n)?,
            avg_len: c.exact::<f32>("stats", 1)?[0].max(1e-6),
            graph: graph::GraphView::open(&c, n)?,
            langs: languages(&info)?,
            cosine_scale: info.cosine_scale(),
            doc_lang: doc_languages(&c, &info)?,
            doc_stands_in: doc_stand_ins(&c, &info)?,
            info,
        })
    }

    /// The languages of the chunks, as queries are read in them.
    pub fn languages(&self) -> &lang::Languages {
        &self.langs
    }

    pub fn info(&self) -> &IndexInfo {
        &self.info
    }

    pub fn len(&self) -> usize {
        self.info.chunks
    }

    pub fn is_empty(&self) -> bool {
        self.info.chunks == 0
    }

    /// Default per-query settings from the index's build parameters.
    pub fn default_params(&self, k: usize) -> SearchParams {
        SearchParams::of_index(&self.info, k)
    }

    /// Whether dense search walks an HNSW graph (else it scans every vector).
    pub fn has_graph(&self) -> bool {
        self.graph.is_some()
    }

    /// The `depth` chunks closest to `q`: through the HNSW graph when the index
    /// has one and `exact` is false, else by the exact scan.
    pub fn dense_candidates(&self, q: &[f32], depth: usize, exact: bool, ef: usize) -> Vec<(u32, f32)> {
        self.dense_candidates_in(q, depth, exact, ef, None)
    }

    /// [`Index::dense_candidates`] in `lang` only. The exact scan skips the
    /// other chunks; the graph walk reads four times as deep and keeps this
    /// language's (an HNSW graph is not built per language: a language with
    /// under a quarter of the chunks may find fewer than `depth`).
    pub fn dense_candidates_in(
        &self,
        q: &[f32],
        depth: usize,
        exact: bool,
        ef: usize,
        lang: Option<lang::LangTag>,
    ) -> Vec<(u32, f32)> {
        let keep = self.in_language(lang);
        match (&self.graph, exact) {
            (Some(g), false) => {
                let wide = if lang.is_some() { depth.saturating_mul(4) } else { depth };
                let ef = if ef == 0 { g.ef } else { ef }.max(wide);
                let mut found = g.search(wide, ef, self.dense_scorer(q));
                found.retain(|&(d, _)| keep(d));
                found.truncate(depth);
                found
            }
            _ => self.dense_top_where(q, depth, keep),
        }
    }

    /// The display record of chunk `doc`.
    pub fn chunk(&self, doc: u32) -> Result<ChunkMeta, IndexError> {
        let d = doc as usize;
        let (a, b) = match (self.meta_off.get(d), self.meta_off.get(d + 1)) {
            (Some(&a), Some(&b)) if a <= b => (a as usize, b as usize),
            _ => return Err(IndexError::Invalid(format!("no chunk {doc}"))),
        };
        let raw = self.meta.get(a..b).ok_or_else(|| IndexError::Invalid(format!("chunk {doc} out of bounds")))?;
        serde_json::from_slice(raw).map_err(|e| IndexError::Invalid(format!("chunk {doc}: {e}")))
    }

    /// Chunk `doc`'s field-weighted length (BM25's length norm).
    pub fn doc_len_of(&self, doc: u32) -> f32 {
        self.doc_len.get(doc as usize).copied().unwrap_or(0.0)
    }

    /// Mean field-weighted chunk length.
    pub fn avg_len_value(&self) -> f32 {
        self.avg_len
    }

    /// Every term in byte order with its postings (chunks ascending, term
    /// frequencies), as [`fragments::split`] shards them.
    pub fn vocabulary(&self) -> impl Iterator<Item = (&'a [u8], &'a [u32], &'a [f32])> + '_ {
        (0..self.info.terms).map(move |i| {
            let (a, e) = (self.post_off[i] as usize, self.post_off[i + 1] as usize);
            (self.term(i), self.post_doc.get(a..e).unwrap_or(&[]), self.post_tf.get(a..e).unwrap_or(&[]))
        })
    }

    /// Page ordinal of chunk `doc` ([`relevance::NO_PAGE`] for a chunk the
    /// index does not have).
    pub fn page_of(&self, doc: u32) -> u32 {
        self.doc_page.get(doc as usize).copied().unwrap_or(relevance::NO_PAGE)
    }

    /// The stored vector of chunk `doc` (f16 and int8 storage widened to f32);
    /// empty for a chunk the index does not have.
    pub fn vector(&self, doc: u32) -> Vec<f32> {
        let d = doc as usize;
        match self.vectors {
            Vectors::F16(v) => self.row(v, d).iter().map(|&h| f16_to_f32(h)).collect(),
            Vectors::I16(v) => self.row(v, d).iter().map(|&x| f32::from(x) / Q15).collect(),
            Vectors::F32(v) => self.row(v, d).to_vec(),
            Vectors::Int8(v, s) => {
                let scale = s.get(d).copied().unwrap_or(0.0);
                self.row(v, d).iter().map(|&x| f32::from(x) * scale).collect()
            }
        }
    }

    /// The fixed-point rows of an [`VectorStorage::I16`] index, as stored (what
    /// the browser's `vectors.bin` carries for it).
    pub(crate) fn fixed_rows(&self) -> Option<&'a [i16]> {
        match self.vectors {
            Vectors::I16(v) => Some(v),
            _ => None,
        }
    }

    /// Row `d` of the `n × dim` vectors (`open` checked the section holds exactly
    /// that many values, so only an id beyond the chunks gives the empty row).
    fn row<'v, T>(&self, v: &'v [T], d: usize) -> &'v [T] {
        let dim = self.info.dim;
        d.checked_mul(dim).and_then(|a| v.get(a..a.checked_add(dim)?)).unwrap_or(&[])
    }

    /// Cosine similarity of chunk `doc` with the unit query vector `q`. Scoring
    /// many chunks against one query: [`Index::dense_scorer`], which prepares the
    /// query once.
    pub fn dense_score(&self, q: &[f32], doc: u32) -> f32 {
        self.dense_scorer(q)(doc)
    }

    /// [`Index::dense_score`] of `q` for any chunk, the query converted once for
    /// the storage (fixed point) rather than at every call; the scores are the
    /// exact scan's ([`Index::dense_top`]) to the bit.
    pub fn dense_scorer<'s>(&'s self, q: &'s [f32]) -> impl Fn(u32) -> f32 + 's {
        let fixed = matches!(self.vectors, Vectors::I16(_)).then(|| I16Query::new(q));
        let scale = self.cosine_scale;
        move |doc| scale.apply(self.score_prepared(q, fixed.as_ref(), doc))
    }

    /// The score of chunk `doc`; `fixed` is `q` in fixed point for an i16 index.
    fn score_prepared(&self, q: &[f32], fixed: Option<&I16Query>, doc: u32) -> f32 {
        let d = doc as usize;
        match self.vectors {
            Vectors::F16(v) => dot_f16(q, self.row(v, d)),
            Vectors::I16(v) => fixed.map_or(0.0, |fq| fq.dot(self.row(v, d))),
            Vectors::F32(v) => dot(q, self.row(v, d)),
            Vectors::Int8(v, s) => {
                let Some(&scale) = s.get(d) else { return 0.0 };
                let row = self.row(v, d);
                let mut acc = [0f32; 8];
                for (qc, rc) in q.chunks_exact(8).zip(row.chunks_exact(8)) {
                    for l in 0..8 {
                        acc[l] += qc[l] * f32::from(rc[l]);
                    }
                }
                acc.iter().sum::<f32>() * scale
            }
        }
    }

    /// The `depth` chunks closest to `q`, best first (exact scan), scored as
    /// [`Index::dense_scorer`] scores them.
    pub fn dense_top(&self, q: &[f32], depth: usize) -> Vec<(u32, f32)> {
        self.dense_top_where(q, depth, |_| true)
    }

    /// [`Index::dense_top`] over the chunks `keep` keeps.
    pub fn dense_top_where(&self, q: &[f32], depth: usize, keep: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        let on_scale = |mut top: Vec<(u32, f32)>| {
            top.iter_mut().for_each(|t| t.1 = self.cosine_scale.apply(t.1));
            top
        };
        match self.vectors {
            Vectors::F16(v) => return on_scale(top_f16(q, v, self.info.dim, depth, keep)),
            Vectors::I16(v) => {
                let fq = I16Query::new(q);
                return on_scale(top_rows(v, self.info.dim, depth, keep, |row| fq.dot(row)));
            }
            _ => {}
        }
        let score = self.dense_scorer(q);
        let mut top = TopK::new(depth);
        for d in (0..self.info.chunks as u32).filter(|&d| keep(d)) {
            top.push(d, score(d));
        }
        top.into_sorted()
    }

    /// Chunk `doc`'s place in `info.chunk_languages` (0 when the index has
    /// none, or for a chunk it does not have).
    pub fn lang_index(&self, doc: u32) -> u8 {
        self.doc_lang.get(doc as usize).copied().unwrap_or(0)
    }

    /// Chunk `doc`'s stand-in set, by number in `info.stand_in_sets` from 1
    /// (0: none, and for a chunk the index does not have).
    pub fn stand_in_index(&self, doc: u32) -> u8 {
        self.doc_stands_in.get(doc as usize).copied().unwrap_or(0)
    }

    /// Whether chunk `doc` is one `lang` asks for (every chunk without a
    /// filter): in it, or standing in for it. Reads two bytes; no allocation
    /// but the ≤ 256 flags of each table.
    fn in_language<'s>(&'s self, lang: Option<lang::LangTag>) -> impl Fn(u32) -> bool + 's {
        let keep = lang.map(|tag| lang::InLanguage::new(tag, &self.info.chunk_languages, &self.info.stand_in_sets));
        move |doc| match &keep {
            None => true,
            Some(k) => k.keeps(usize::from(self.lang_index(doc)), usize::from(self.stand_in_index(doc))),
        }
    }

    /// Term `i` of the sorted vocabulary (offsets checked at open).
    fn term(&self, i: usize) -> &'a [u8] {
        self.terms.get(self.terms_off[i] as usize..self.terms_off[i + 1] as usize).unwrap_or(&[])
    }

    fn term_id(&self, term: &str) -> Option<usize> {
        let i = bm25::lower_bound(self.info.terms, |i| self.term(i), term.as_bytes());
        (i < self.info.terms && self.term(i) == term.as_bytes()).then_some(i)
    }

    /// How many chunks have the analysed term `term` (`None`: none).
    pub fn df(&self, term: &str) -> Option<usize> {
        self.term_id(term).map(|i| self.df_at(i))
    }

    /// How many chunks in the languages `covered` marks (by place in
    /// `info.chunk_languages`, [`lang::spelled_in`]) have `term`: `Some(0)`
    /// when only chunks of other languages have it, `None` when none has.
    pub fn df_among(&self, term: &str, covered: &[bool]) -> Option<usize> {
        let i = self.term_id(term)?;
        if covered.iter().all(|&c| c) {
            return Some(self.df_at(i));
        }
        let (a, e) = (self.post_off[i] as usize, self.post_off[i + 1] as usize);
        let docs = self.post_doc.get(a..e).unwrap_or(&[]);
        Some(docs.iter().filter(|&&d| covered.get(usize::from(self.lang_index(d))).copied().unwrap_or(false)).count())
    }

    /// The document frequency of term id `i` (its posting list's length).
    fn df_at(&self, i: usize) -> usize {
        self.post_off[i + 1].saturating_sub(self.post_off[i]) as usize
    }

    /// The vocabulary term that starts with `partial` (lowercased) and is in the
    /// most chunks ([`bm25::complete_prefix`]).
    pub fn complete_prefix(&self, partial: &str) -> Option<String> {
        bm25::complete_prefix(self, partial)
    }

    /// The BM25 terms of a query whose last word is still being typed
    /// ([`bm25::partial_terms`]).
    pub fn partial_terms(&self, query: &str) -> Vec<String> {
        bm25::partial_terms(self, query)
    }

    /// BM25 scores of every chunk that matches a query term, and the L2-normalised
    /// sparse dot product used by the `dot` mode.
    pub fn bm25_scores(&self, query: &str, k1: f32, b: f32) -> Vec<(u32, f32, f32)> {
        self.bm25_scores_of(analyzer::terms(query), k1, b)
    }

    /// [`Index::bm25_scores`] of terms already analysed.
    pub fn bm25_scores_of(&self, qterms: Vec<String>, k1: f32, b: f32) -> Vec<(u32, f32, f32)> {
        bm25::scores(self, qterms, k1, b)
    }

    /// Searches with the query's text and (for the modes that use it) its vector.
    pub fn search(&self, query: &str, qvec: Option<&[f32]>, p: &SearchParams) -> Vec<Hit> {
        let p = &fusion::for_query(p, query);
        let c = self.candidates(query, qvec, p);
        self.fuse(&c, qvec, p)
    }

    /// The first stage of [`Index::search`]: each side's ranked candidates (the
    /// dense scan or graph walk, and BM25), read `p.depth` deep.
    pub fn candidates(&self, query: &str, qvec: Option<&[f32]>, p: &SearchParams) -> Candidates {
        let depth = p.depth.max(p.k);
        let needs_dense = p.mode != Mode::Bm25;
        let dense = match (needs_dense, qvec) {
            (true, Some(q)) if q.len() == self.info.dim => self.dense_candidates_in(q, depth, p.exact, p.ef, p.lang),
            _ => Vec::new(),
        };
        let bm25::QueryReading { terms, readings } = bm25::read_query(self, query, p.mode, p.partial, p.lang);
        let mut sparse = if terms.is_empty() { Vec::new() } else { self.bm25_scores_of(terms.clone(), p.k1, p.b) };
        if p.lang.is_some() {
            let keep = self.in_language(p.lang);
            sparse.retain(|s| keep(s.0));
        }
        let mut evidence = relevance::Evidence {
            cosine: needs_dense.then(|| dense.first().map(|d| d.1)).flatten(),
            lexical: relevance::lexical_of(self, &readings, sparse.first().map(|s| s.0)),
            agree: relevance::agree(&dense, &sparse, |d| self.page_of(d)),
        };
        if p.lang.is_some() {
            evidence = evidence.in_language(needs_dense && qvec.is_some(), !sparse.is_empty());
        }
        sparse.truncate(depth);
        let weights = bm25::idf_weights(self, &terms);
        Candidates { dense, sparse, evidence, weights, readings }
    }

    /// The second stage of [`Index::search`]: the two lists fused into the top `p.k`.
    pub fn fuse(&self, c: &Candidates, qvec: Option<&[f32]>, p: &SearchParams) -> Vec<Hit> {
        let scorer = qvec.filter(|q| q.len() == self.info.dim).map(|q| self.dense_scorer(q));
        let dense_of = |d: u32| scorer.as_ref().map(|s| s(d));
        let hits = fusion::fuse(p, &c.dense, &c.sparse, dense_of);
        let shown = relevance::shown_over(self, &c.readings, c.evidence, p.mode);
        fusion::finish(p, hits, |d| self.page_of(d), shown)
    }
}

/// The index file as a source of postings.
impl bm25::Postings for Index<'_> {
    type List<'s>
        = bm25::PostingIter<'s>
    where
        Self: 's;

    fn chunks(&self) -> usize {
        self.info.chunks
    }

    fn avg_len(&self) -> f32 {
        self.avg_len
    }

    fn postings(&self, term: &str) -> Option<(usize, Self::List<'_>)> {
        let id = self.term_id(term)?;
        let (a, e) = (self.post_off[id] as usize, self.post_off[id + 1] as usize);
        // Checked at open; an empty list rather than a panic if not.
        let (docs, tfs) = (self.post_doc.get(a..e).unwrap_or(&[]), self.post_tf.get(a..e).unwrap_or(&[]));
        Some((docs.len(), bm25::PostingIter::new(docs, tfs, self.doc_len)))
    }

    fn doc_norm(&self, doc: u32) -> f32 {
        self.doc_norm.get(doc as usize).copied().unwrap_or(1.0)
    }

    fn completion(&self, p: &str) -> Option<String> {
        let from = bm25::lower_bound(self.info.terms, |i| self.term(i), p.as_bytes());
        bm25::best_completion(p, (from..self.info.terms).map(|i| (self.term(i), self.df_at(i))))
    }

    fn languages(&self) -> &lang::Languages {
        &self.langs
    }
}

/// The `doc.lang` section, each byte checked against `info.chunk_languages`;
/// empty when the index has no languages but English.
fn doc_languages<'a>(c: &Container<'a>, info: &IndexInfo) -> Result<&'a [u8], IndexError> {
    if info.chunk_languages.is_empty() {
        return Ok(&[]);
    }
    let langs: &[u8] = c.exact("doc.lang", info.chunks)?;
    if let Some(d) = langs.iter().position(|&l| usize::from(l) >= info.chunk_languages.len()) {
        let msg = format!("chunk {d} has language {}, the index names {}", langs[d], info.chunk_languages.len());
        return Err(corrupt("doc.lang", msg).into());
    }
    Ok(langs)
}

/// The `doc.stands_in` section, each byte checked against
/// `info.stand_in_sets`; empty when no chunk stands in for a language.
fn doc_stand_ins<'a>(c: &Container<'a>, info: &IndexInfo) -> Result<&'a [u8], IndexError> {
    if info.stand_in_sets.is_empty() {
        return Ok(&[]);
    }
    let sets: &[u8] = c.exact("doc.stands_in", info.chunks)?;
    if let Some(d) = sets.iter().position(|&s| usize::from(s) > info.stand_in_sets.len()) {
        let msg = format!("chunk {d} stands in for set {}, the index names {}", sets[d], info.stand_in_sets.len());
        return Err(corrupt("doc.stands_in", msg).into());
    }
    Ok(sets)
}

/// The languages `info` names, refused by name when this build cannot read
/// one queries are read in as the index was written (a browser engine built
/// without them).
fn languages(info: &IndexInfo) -> Result<lang::Languages, IndexError> {
    lang::Languages::read(&info.languages, &info.chunk_languages).map_err(|code| {
        IndexError::Invalid(format!(
            "the index is in {code}, which this build does not read; build it with the `languages` feature"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::vectors::{dot_i16, f16_unscaled, q15, F16Query};
    use super::*;
    use crate::container::{AlignedBytes, Writer};
    use crate::index::bm25::{bm25_tf, idf};

    /// [`crate::testing::chunk`] under a `KB` root, its title its one header.
    pub(super) fn chunk(id: &str, page: &str, title: &str, text: &str) -> Chunk {
        Chunk {
            path: vec!["KB".into(), title.into()],
            headers: vec![title.into()],
            ..crate::testing::chunk(id, page, title, text)
        }
    }

    pub(super) fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    pub(super) fn params(vectors: VectorStorage) -> BuildParams {
        BuildParams {
            encoder: "test".into(),
            encoder_fingerprint: 7,
            built_unix: 1,
            ..crate::testing::build_params(vectors, Mode::Rrf)
        }
    }

    pub(super) fn sample(vectors: VectorStorage) -> (Vec<Chunk>, AlignedBytes) {
        let chunks = vec![
            chunk("a_0", "a", "Wi-Fi", "Connect to eduroam with your NetID and password."),
            chunk("a_1", "a", "Wi-Fi", "Troubleshooting: forget the network and reconnect."),
            chunk("b_0", "b", "Storage", "Request local disk with --gres=nvme:100 in the batch script."),
            chunk("c_0", "c", "Uploads", "Upload files with a-put to the object storage."),
        ];
        let dim = 8;
        let mut vecs = Vec::new();
        for i in 0..chunks.len() {
            let mut v = vec![0.1f32; dim];
            v[i] = 1.0;
            vecs.extend(unit(&v));
        }
        let bytes = build(&chunks, &vecs, dim, &params(vectors));
        (chunks, AlignedBytes::new(&bytes))
    }

    #[test]
    #[cfg(feature = "languages")]
    fn a_search_in_one_language_returns_only_its_chunks() {
        let lang = |mut c: Chunk, l: &str| {
            c.lang = l.into();
            c
        };
        let chunks = vec![
            chunk("a_0", "a", "WLAN", "Verbinden Sie Ihren Laptop mit eduroam und dem WLAN."),
            lang(chunk("b_0", "b", "Wi-Fi", "Connect your laptop to eduroam and the wireless network."), "de"),
            lang(chunk("c_0", "c", "Wi-Fi", "Connectez votre portable à eduroam."), "fr"),
            lang(chunk("d_0", "d", "WLAN", "Yhdistä kannettava eduroam-verkkoon."), "zh-tw"),
            lang(chunk("e_0", "e", "WLAN", "Kannettava eduroam."), "zh-cn"),
        ];
        let dim = 8;
        let vecs: Vec<f32> = (0..chunks.len())
            .flat_map(|i| {
                let mut v = vec![0.2f32; dim];
                v[i] = 1.0;
                unit(&v)
            })
            .collect();
        for storage in [VectorStorage::I16, VectorStorage::F32] {
            let bytes = AlignedBytes::new(&build(&chunks, &vecs, dim, &params(storage)));
            let idx = Index::open(bytes.as_slice()).unwrap();
            assert_eq!(idx.info().chunk_languages, ["de", "en", "fr", "zh-cn", "zh-tw"]);
            assert_eq!(idx.chunk(1).unwrap().lang(), "de");
            assert_eq!(idx.chunk(0).unwrap().lang(), "en");
            let q = unit(&[0.3; 8]);
            let pages = |tag: Option<&str>, mode: Mode| -> Vec<String> {
                let p = SearchParams { mode, lang: tag.and_then(lang::LangTag::parse), ..SearchParams::defaults(10) };
                let mut v: Vec<String> =
                    idx.search("eduroam", Some(&q), &p).iter().map(|h| idx.chunk(h.doc).unwrap().page_id).collect();
                v.sort();
                v
            };
            for mode in [Mode::Convex, Mode::Dense, Mode::Bm25] {
                assert_eq!(pages(None, mode), ["a", "b", "c", "d", "e"], "{mode:?}");
                assert_eq!(pages(Some("de"), mode), ["b"], "{mode:?}");
                assert_eq!(pages(Some("en"), mode), ["a"], "{mode:?}");
                assert_eq!(pages(Some("zh"), mode), ["d", "e"], "{mode:?}: zh covers its regions");
                assert_eq!(pages(Some("zh-cn"), mode), ["e"], "{mode:?}");
                assert!(pages(Some("sv"), mode).is_empty(), "{mode:?}");
            }
            // The evidence is the language's own: nothing in Swedish matched.
            let sv = SearchParams { lang: lang::LangTag::parse("sv"), ..SearchParams::defaults(10) };
            assert!(!idx.candidates("eduroam", Some(&q), &sv).evidence.matched());
        }
        // An English-only index has no `doc.lang`; `en` is every chunk.
        let (_, english) = sample(VectorStorage::F32);
        let idx = Index::open(english.as_slice()).unwrap();
        assert!(idx.info().chunk_languages.is_empty());
        let en = SearchParams { lang: lang::LangTag::parse("en"), ..SearchParams::defaults(10) };
        assert_eq!(idx.search("eduroam", None, &SearchParams { mode: Mode::Bm25, ..en }).len(), 1);
        let de = SearchParams { mode: Mode::Bm25, lang: lang::LangTag::parse("de"), ..SearchParams::defaults(10) };
        assert!(idx.search("eduroam", None, &de).is_empty());
    }

    #[test]
    fn an_index_hands_on_its_models_cosines_on_the_reference_scale() {
        let q = unit(&[0.1, 0.9, 0.1, 0.3, 0.1, 0.1, 0.1, 0.1]);
        for storage in [VectorStorage::F16, VectorStorage::I16, VectorStorage::F32, VectorStorage::Int8] {
            let (chunks, mini) = sample(storage);
            let e5_params = BuildParams { encoder: "intfloat/multilingual-e5-small (4-bit)".into(), ..params(storage) };
            let vecs: Vec<f32> =
                (0..chunks.len() as u32).flat_map(|d| Index::open(mini.as_slice()).unwrap().vector(d)).collect();
            let e5 = AlignedBytes::new(&build(&chunks, &vecs, 8, &e5_params));
            let (mini, e5) = (Index::open(mini.as_slice()).unwrap(), Index::open(e5.as_slice()).unwrap());
            let scale = relevance::CosineScale::MULTILINGUAL_E5;
            assert_eq!(e5.info().cosine_scale(), scale);
            assert_eq!(mini.info().cosine_scale(), relevance::CosineScale::REFERENCE);
            // The same order, each score mapped; the scan and the scorer agree.
            let (a, b) = (mini.dense_top(&q, 4), e5.dense_top(&q, 4));
            assert_eq!(a.iter().map(|x| x.0).collect::<Vec<_>>(), b.iter().map(|x| x.0).collect::<Vec<_>>());
            for (&(d, raw), &(_, mapped)) in a.iter().zip(&b) {
                assert!((scale.apply(raw) - mapped).abs() < 1e-5, "{storage:?}: {raw} → {mapped}");
                assert_eq!(e5.dense_score(&q, d), mapped, "{storage:?}");
                assert_eq!(mini.dense_score(&q, d), raw, "{storage:?}");
            }
            // What the "no results" rule reads is the mapped best.
            let p = SearchParams { mode: Mode::Dense, ..SearchParams::defaults(4) };
            let c = e5.candidates("", Some(&q), &p);
            assert_eq!(c.evidence.cosine, Some(b[0].1));
        }
    }

    #[test]
    fn the_sides_agree_when_their_best_chunks_share_a_page() {
        let (_, bytes) = sample(VectorStorage::I16);
        let idx = Index::open(bytes.as_slice()).unwrap();
        let p = SearchParams::defaults(4);
        let near = |i: usize| {
            let mut v = vec![0.1f32; 8];
            v[i] = 1.0;
            unit(&v)
        };
        // BM25's best for "eduroam" is a_0; the vector's best is a_1, the same page.
        let c = idx.candidates("eduroam", Some(&near(1)), &p);
        assert_eq!((c.dense[0].0, c.sparse[0].0), (1, 0));
        assert!(c.evidence.agree);
        // The vector's best on another page (b_0): no agreement.
        assert!(!idx.candidates("eduroam", Some(&near(2)), &p).evidence.agree);
        // One side only (no vector, or no word matched): nothing to agree.
        assert!(!idx.candidates("eduroam", None, &SearchParams { mode: Mode::Bm25, ..p }).evidence.agree);
        assert!(!idx.candidates("xqzv", Some(&near(0)), &p).evidence.agree);
    }

    #[test]
    fn round_trip_reads_back_what_was_written() {
        for storage in [VectorStorage::F16, VectorStorage::I16, VectorStorage::F32, VectorStorage::Int8] {
            let (chunks, bytes) = sample(storage);
            let idx = Index::open(bytes.as_slice()).unwrap();
            assert_eq!(idx.len(), 4);
            assert_eq!(idx.info().pages, 3);
            assert_eq!(idx.info().encoder_fingerprint, 7);
            for (i, c) in chunks.iter().enumerate() {
                assert_eq!(idx.chunk(i as u32).unwrap(), ChunkMeta::from(c));
            }
            assert_eq!(idx.page_of(0), idx.page_of(1));
            assert_ne!(idx.page_of(1), idx.page_of(2));
            let mut q = vec![0.1f32; 8];
            q[2] = 1.0;
            let q = unit(&q);
            let top = idx.dense_top(&q, 2);
            assert_eq!(top[0].0, 2);
            assert!((top[0].1 - 1.0).abs() < 0.02, "{storage:?} {}", top[0].1);
        }
    }

    /// The value of half-float bits, computed the slow way from the definition.
    fn half_value(h: u16) -> f64 {
        let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
        let (e, m) = (i32::from((h >> 10) & 0x1F), f64::from(h & 0x3FF));
        sign * if e == 0 { m * 2f64.powi(-24) } else { (1.0 + m / 1024.0) * 2f64.powi(e - 15) }
    }

    #[test]
    fn half_floats_decode_exactly_and_encode_to_the_nearest() {
        for h in 0..=u16::MAX {
            if (h >> 10) & 0x1F == 0x1F {
                continue; // infinities and NaN: never written
            }
            let x = f16_to_f32(h);
            assert_eq!(f64::from(x), half_value(h), "decoding {h:#06x}");
            // Every half survives the round trip (−0 included).
            assert_eq!(f16_bits(x), h, "encoding {x:e}");
        }
        // Between neighbours: below the midpoint rounds down, above rounds up,
        // on it goes to the even one; for normals and subnormals alike.
        for h in [0x0001u16, 0x0002, 0x03FE, 0x0400, 0x3555, 0x3C00, 0x3C01, 0x7BFE] {
            let (lo, hi) = (half_value(h), half_value(h + 1));
            let mid = (lo + hi) / 2.0;
            let even = if h % 2 == 0 { h } else { h + 1 };
            assert_eq!(f16_bits(mid as f32), even, "tie between {h:#06x} and the next");
            assert_eq!(f16_bits((mid - (hi - lo) / 8.0) as f32), h);
            assert_eq!(f16_bits((mid + (hi - lo) / 8.0) as f32), h + 1);
            assert_eq!(f16_bits(-(mid as f32)), 0x8000 | even);
        }
        // Beyond the range: the largest finite half, never infinity.
        assert_eq!(f16_bits(1e6), 0x7BFF);
        assert_eq!(f16_bits(-1e6), 0xFBFF);
        assert_eq!(f16_bits(f32::INFINITY), 0x7BFF);
        assert_eq!(f16_bits(1e-9), 0);
    }

    #[test]
    fn the_prescaled_scan_gives_the_same_scores_to_the_bit() {
        // Every half (subnormals, zeros, both signs) against query components
        // from tiny to one: (q·2^112)·b is q·(b·2^112) to the bit.
        let xs = [1.0f32, -1.0, 0.05, -0.0371, 3.1e-5, -7.7e-9, 1e-30, 0.999_999_9, 0.0];
        let scaled = F16Query::new(&xs);
        for h in 0..=u16::MAX {
            if h & 0x7C00 == 0x7C00 {
                continue; // infinities and NaN: never written
            }
            for (x, sx) in xs.iter().zip(&scaled.0) {
                assert_eq!((sx * f16_unscaled(h)).to_bits(), (x * f16_to_f32(h)).to_bits(), "{h:#06x} × {x:e}");
            }
        }
        // And whole rows, the scan's way, with subnormal and zero components.
        let mut seed = 5u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            seed
        };
        for _ in 0..200 {
            let q: Vec<f32> = (0..389).map(|_| (next() >> 8) as f32 / (1u32 << 24) as f32 - 0.5).collect();
            let row: Vec<u16> = (0..389).map(|_| (next() >> 16) as u16 & 0xBFFF).collect();
            assert_eq!(F16Query::new(&q).dot(&row).to_bits(), dot_f16(&q, &row).to_bits());
        }
    }

    #[test]
    fn the_integer_dot_product_is_the_scalar_sum_on_every_target() {
        // Extremes and odd lengths: the wasm kernel's 16-lane blocks, its tail,
        // and pairs whose products come near the i32 limit.
        let mut seed = 11u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 16) as u16 as i16
        };
        for n in [0, 1, 7, 8, 15, 16, 17, 383, 384, 385] {
            for extreme in [false, true] {
                let q: Vec<i16> = (0..n).map(|i| if extreme { [32767, -32767][i % 2] } else { next() }).collect();
                let r: Vec<i16> = (0..n).map(|i| if extreme { [-32768, 32767][i % 2] } else { next() }).collect();
                let want = q.iter().zip(&r).fold(0i32, |s, (&x, &y)| s.wrapping_add(i32::from(x) * i32::from(y)));
                assert_eq!(dot_i16(&q, &r), want, "n {n} extreme {extreme}");
            }
        }
    }

    /// Unit vectors of `dim` components of the shape MiniLM gives (around
    /// ±0.05), one per call, from a fixed seed.
    fn unit_vectors(dim: usize, mut seed: u32) -> impl FnMut() -> Vec<f32> {
        move || {
            let v: Vec<f32> = (0..dim)
                .map(|_| {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
                })
                .collect();
            unit(&v)
        }
    }

    #[test]
    fn fixed_point_scores_are_closer_to_f32_than_halves_and_the_scan_agrees_to_the_bit() {
        let dim = 384;
        let mut next = unit_vectors(dim, 3);
        let q = next();
        let fq = I16Query::new(&q);
        let (mut worst_fixed, mut worst_half) = (0f32, 0f32);
        let mut rows = Vec::new();
        for _ in 0..200 {
            let v = next();
            let fixed: Vec<i16> = v.iter().map(|&x| q15(x)).collect();
            let half: Vec<u16> = v.iter().map(|&x| f16_bits(x)).collect();
            let exact = dot(&q, &v);
            worst_fixed = worst_fixed.max((fq.dot(&fixed) - exact).abs());
            worst_half = worst_half.max((dot_f16(&q, &half) - exact).abs());
            rows.extend(fixed);
        }
        assert!(worst_fixed < 1e-4 && worst_fixed <= worst_half, "fixed {worst_fixed} vs half {worst_half}");
        // The scan of an index and the per-chunk score give the same numbers.
        let chunks: Vec<Chunk> = (0..200).map(|i| chunk(&format!("p{i}_0"), &format!("p{i}"), "T", "text")).collect();
        let vecs: Vec<f32> = rows.iter().map(|&x| f32::from(x) / Q15).collect();
        let bytes = AlignedBytes::new(&build(&chunks, &vecs, dim, &params(VectorStorage::I16)));
        let idx = Index::open(bytes.as_slice()).unwrap();
        let top = idx.dense_top(&q, 200);
        assert_eq!(top.len(), 200);
        for (d, score) in top {
            assert_eq!(score.to_bits(), idx.dense_score(&q, d).to_bits());
            assert_eq!(score.to_bits(), fq.dot(&rows[d as usize * dim..][..dim]).to_bits());
        }
        // Rows no unit vector gives (a corrupt file) wrap around: wrong scores, no panic;
        // a zero or non-finite query scores 0.
        let ones = I16Query::new(&vec![1.0; dim]);
        let _ = ones.dot(&vec![i16::MIN; dim]);
        assert_eq!(I16Query::new(&vec![0.0; dim]).dot(&rows[..dim]), 0.0);
        assert_eq!(I16Query::new(&vec![f32::NAN; dim]).dot(&rows[..dim]), 0.0);
        assert_eq!((q15(1.5), q15(-2.0), q15(f32::NAN), q15(0.5)), (32767, -32767, 0, 16384));
    }

    #[test]
    fn f16_scores_match_f32_scores() {
        let mut next = unit_vectors(384, 1);
        let q = next();
        for _ in 0..50 {
            let v = next();
            let h: Vec<u16> = v.iter().map(|&x| f16_bits(x)).collect();
            let (exact, half) = (dot(&q, &v), dot_f16(&q, &h));
            assert!((exact - half).abs() < 1e-3, "{exact} vs {half}");
        }
    }

    #[test]
    fn a_partial_word_completes_to_its_most_common_term() {
        let (_, bytes) = sample(VectorStorage::F32);
        let idx = Index::open(bytes.as_slice()).unwrap();
        assert_eq!(idx.complete_prefix("Netw"), Some("network".to_string()));
        assert_eq!(idx.complete_prefix("up"), Some("upload".to_string()));
        // "reconnect" and "request", one chunk each: the first in order.
        assert_eq!(idx.complete_prefix("re"), Some("reconnect".to_string()));
        // Exact identifier terms (`=…`) are never a completion; nothing matches zz.
        assert_eq!(idx.complete_prefix("="), None);
        assert_eq!(idx.complete_prefix("zz"), None);
        assert_eq!(idx.complete_prefix(""), None);
    }

    #[test]
    fn partial_queries_complete_only_the_unfinished_word() {
        let (_, bytes) = sample(VectorStorage::F32);
        let idx = Index::open(bytes.as_slice()).unwrap();
        let terms = |q: &str| idx.partial_terms(q);
        assert_eq!(terms("connect to eduro"), ["connect", "eduroam"]);
        // Cut back until a completion exists: "networking" is no term, "network" is.
        assert_eq!(terms("netwo"), ["network"]);
        assert_eq!(terms("networki"), ["network"]);
        // A word that is a term stays itself; so do stop words and identifiers.
        assert_eq!(terms("forget the network"), analyzer::terms("forget the network"));
        assert_eq!(terms("eduroam and"), analyzer::terms("eduroam and"));
        assert_eq!(terms("a-pu"), analyzer::terms("a-pu"));
        // With `partial`, BM25 finds what the whole word would.
        let p = SearchParams { mode: Mode::Bm25, partial: true, ..idx.default_params(1) };
        assert_eq!(idx.search("reconn", None, &p)[0].doc, 1);
        assert!(idx.search("reconn", None, &SearchParams { partial: false, ..p }).is_empty());
    }

    #[test]
    fn bm25_finds_identifiers_and_ranks_by_score() {
        let (_, bytes) = sample(VectorStorage::F32);
        let idx = Index::open(bytes.as_slice()).unwrap();
        let p = SearchParams { mode: Mode::Bm25, ..idx.default_params(3) };
        assert_eq!(idx.search("--gres=nvme:100", None, &p)[0].doc, 2);
        assert_eq!(idx.search("a-put", None, &p)[0].doc, 3);
        assert_eq!(idx.search("eduroam", None, &p)[0].doc, 0);
        assert!(idx.search("zebra", None, &p).is_empty());
        let hits = idx.search("network reconnect eduroam", None, &SearchParams { order: Order::Chunks, ..p });
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    }

    #[test]
    fn results_far_weaker_than_the_best_are_not_shown() {
        let (_, bytes) = sample(VectorStorage::F32);
        let idx = Index::open(bytes.as_slice()).unwrap();
        let docs = |hits: Vec<Hit>| hits.iter().map(|h| h.doc).collect::<Vec<_>>();
        // The Wi-Fi page's two chunks at cosine 0.78, the other two at 0.24:
        // not a match beside them, so ten results asked for, two shown.
        let q = unit(&[1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]);
        let dense = SearchParams { mode: Mode::Dense, ..idx.default_params(10) };
        assert_eq!(docs(idx.search("wifi", Some(&q), &dense)), vec![0, 1]);
        // The first result is shown whatever `shown` says of it.
        let hits = idx.search("wifi", Some(&q), &SearchParams { order: Order::Chunks, ..dense });
        assert_eq!(docs(fusion::finish(&dense, hits, |d| idx.page_of(d), |_| false)), vec![0]);
        // By words alone, each chunk with one of two equally rare words is as
        // good a match as the best: both show.
        let bm25 = SearchParams { mode: Mode::Bm25, ..dense };
        assert_eq!(docs(idx.search("eduroam batch", None, &bm25)), vec![0, 2]);
        // Fused, the Wi-Fi page's second chunk (no word, cosine 0.78) shows
        // and the disk chunk (half the words, cosine 0.24) does not.
        let convex = SearchParams { mode: Mode::Convex, ..dense };
        assert_eq!(docs(idx.search("eduroam batch", Some(&q), &convex)), vec![0, 1]);
    }

    #[test]
    fn collapse_keeps_one_chunk_per_page() {
        let (_, bytes) = sample(VectorStorage::F32);
        let idx = Index::open(bytes.as_slice()).unwrap();
        // Cosines 0.73 (a_0), 0.52 (a_1), 0.68 (b_0), 0.62 (c_0): every chunk
        // near enough the best to be shown.
        let q = unit(&[1.0, 0.6, 0.9, 0.8, 0.1, 0.1, 0.1, 0.1]);
        let p = SearchParams { mode: Mode::Dense, ..idx.default_params(4) };
        let all = idx.search("wifi", Some(&q), &SearchParams { k: 10, ..p });
        // Pages first: the top two are on different pages, and a page's second
        // chunk still comes, later.
        assert_ne!(idx.page_of(all[0].doc), idx.page_of(all[1].doc));
        let pages: std::collections::HashSet<u32> = all.iter().map(|h| idx.page_of(h.doc)).collect();
        assert!(pages.len() < all.len(), "{all:?}");
        let one = idx.search("wifi", Some(&q), &SearchParams { collapse_pages: true, ..p });
        assert_eq!(one.len(), 3);
        assert_ne!(idx.page_of(one[0].doc), idx.page_of(one[1].doc));
    }

    #[test]
    fn corrupt_index_is_an_error() {
        let (_, bytes) = sample(VectorStorage::F32);
        let good = bytes.as_slice();
        assert!(Index::open(&good[..100]).is_err());
        let mut bad = good.to_vec();
        bad[8] = 9; // version
        let err = Index::open(AlignedBytes::new(&bad).as_slice()).err().unwrap();
        assert!(err.to_string().contains("rebuild"), "{err}");
        // Flips across the whole file and truncations at every section boundary:
        // each is refused at open or answers queries without a panic.
        let (mut refused, mut opened) = (0, 0);
        for bad in crate::container::corruptions(good) {
            let b = AlignedBytes::new(&bad);
            match Index::open(b.as_slice()) {
                Ok(idx) => {
                    opened += 1;
                    exercise(&idx);
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        assert!(refused > 100 && opened > 100, "refused {refused}, opened {opened}");
    }

    /// Every query path over an index that opened.
    fn exercise(idx: &Index<'_>) {
        let q = [0.35f32; 8];
        for mode in Mode::ALL {
            let p = SearchParams { mode, collapse_pages: true, ..idx.default_params(3) };
            let _ = idx.search("eduroam a-put network reconnect", Some(&q), &p);
            let _ = idx.search("eduroam", Some(&q), &SearchParams { exact: true, ef: usize::MAX, ..p });
        }
        for d in 0..idx.len().min(64) as u32 + 2 {
            let _ = idx.chunk(d);
            let _ = idx.vector(d);
            let _ = idx.dense_score(&q, d);
        }
    }

    /// `sample` with the `info` record rewritten by `edit` (same length or not:
    /// the container is rebuilt).
    fn with_info(edit: impl Fn(&mut serde_json::Value)) -> AlignedBytes {
        let (_, bytes) = sample(VectorStorage::F32);
        let c = Container::open(bytes.as_slice(), MAGIC, VERSION).unwrap();
        let mut w = Writer::new(MAGIC, VERSION);
        for name in c.names() {
            let mut b = c.bytes(&name).unwrap().to_vec();
            if name == "info" {
                let mut v: serde_json::Value = serde_json::from_slice(&b).unwrap();
                edit(&mut v);
                b = serde_json::to_vec(&v).unwrap();
            }
            w.add(&name, b);
        }
        AlignedBytes::new(&w.finish())
    }

    #[test]
    fn counts_that_overflow_or_disagree_are_refused_by_name() {
        // 4 chunks × 2^62 wraps to 0 on 64 bits (and far smaller products on wasm32).
        for (field, value, section) in [
            ("dim", serde_json::json!(1u64 << 62), "vec.f32"),
            ("chunks", serde_json::json!(u64::MAX), "vec.f32"),
            ("terms", serde_json::json!(u64::MAX), "terms.off"),
            ("pages", serde_json::json!(1), "doc.page"),
        ] {
            let b = with_info(|v| v[field] = value.clone());
            let err = Index::open(b.as_slice()).err().unwrap_or_else(|| panic!("{field} = {value} opened"));
            // On 32 bits a count beyond usize is already refused as the info record is read.
            let by_info = cfg!(target_pointer_width = "32") && value.as_u64() > Some(u64::from(u32::MAX));
            let named = if by_info { "info record".to_string() } else { format!("`{section}`") };
            assert!(err.to_string().contains(&named), "{field}: {err}");
        }
    }

    #[test]
    fn ids_and_offsets_out_of_range_are_refused_by_name() {
        let (_, bytes) = sample(VectorStorage::F32);
        let good = bytes.as_slice();
        let c = Container::open(good, MAGIC, VERSION).unwrap();
        let at = |name: &str| c.bytes(name).unwrap().as_ptr() as usize - good.as_ptr() as usize;
        let set = |name: &str, i: usize, v: u32| {
            let mut b = good.to_vec();
            let o = at(name) + 4 * i;
            b[o..o + 4].copy_from_slice(&v.to_le_bytes());
            AlignedBytes::new(&b)
        };
        for (name, i, v) in [
            ("post.doc", 0, 4),
            ("post.off", 1, u32::MAX),
            ("post.off", 2, 1 << 30),
            ("terms.off", 1, 1 << 30),
            ("meta.off", 4, 1 << 30),
            ("meta.off", 0, 1 << 30),
            ("doc.page", 3, 99),
        ] {
            let b = set(name, i, v);
            let err = Index::open(b.as_slice()).err().unwrap_or_else(|| panic!("{name}[{i}] = {v} opened"));
            assert!(err.to_string().contains(&format!("`{name}`")), "{name}: {err}");
        }
        // Terms out of order would make the binary search miss them.
        let terms_at = at("terms");
        let mut b = good.to_vec();
        b.swap(terms_at, terms_at + c.bytes("terms").unwrap().len() - 1);
        let err = Index::open(AlignedBytes::new(&b).as_slice()).err().expect("unsorted terms opened");
        assert!(err.to_string().contains("`terms`"), "{err}");
    }

    #[test]
    fn a_stand_in_set_the_index_does_not_name_is_refused_by_name() {
        let (mut chunks, _) = sample(VectorStorage::F32);
        chunks[2].stands_in = vec!["de".into()];
        let vecs: Vec<f32> =
            (0..chunks.len()).flat_map(|i| unit(&[1.0, i as f32, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])).collect();
        let good = build(&chunks, &vecs, 8, &params(VectorStorage::F32));
        let aligned = AlignedBytes::new(&good);
        let idx = Index::open(aligned.as_slice()).unwrap();
        assert_eq!(idx.info().stand_in_sets, [["de"]]);
        assert_eq!((0..4).map(|d| idx.stand_in_index(d)).collect::<Vec<_>>(), [0, 0, 1, 0]);
        let c = Container::open(aligned.as_slice(), MAGIC, VERSION).unwrap();
        let at = c.bytes("doc.stands_in").unwrap().as_ptr() as usize - aligned.as_slice().as_ptr() as usize;
        for v in [2u8, u8::MAX] {
            let mut b = good.clone();
            b[at + 1] = v;
            let err = Index::open(AlignedBytes::new(&b).as_slice()).err().expect("a set past the table opened");
            assert!(err.to_string().contains("`doc.stands_in`"), "{err}");
        }
    }

    #[test]
    fn a_corrupt_graph_is_refused_by_name() {
        use graph::{Graph, M, M0};
        let (chunks, _) = sample(VectorStorage::F32);
        let dim = 8;
        let vecs: Vec<f32> = (0..chunks.len() * dim).map(|i| ((i % 7) as f32 + 1.0) / 10.0).collect();
        let graph = |edit: &dyn Fn(&mut Graph)| {
            let mut g = Graph {
                zero: vec![[u32::MAX; M0]; 4],
                upper: vec![vec![[u32::MAX; M]; 2]],
                doc: vec![0, 1, 2, 3],
                ef: 16,
            };
            g.zero[0][0] = 1;
            edit(&mut g);
            let p = BuildParams { graph: Some(g), ..params(VectorStorage::F32) };
            AlignedBytes::new(&build(&chunks, &vecs, dim, &p))
        };
        let ok = graph(&|_| {});
        let idx = Index::open(ok.as_slice()).unwrap();
        assert!(idx.has_graph());
        exercise(&idx);
        type Edit<'e> = &'e dyn Fn(&mut Graph);
        let cases: [(&str, Edit); 5] = [
            ("hnsw.ef", &|g| g.ef = u32::MAX),
            ("hnsw.ef", &|g| g.ef = 0),
            ("hnsw.zero", &|g| g.zero[2][5] = 4),
            ("hnsw.upper", &|g| g.upper[0][1][0] = 77),
            ("hnsw.ulen", &|g| g.upper = vec![Vec::new(); 1000]),
        ];
        for (section, edit) in cases {
            let b = graph(edit);
            let err = Index::open(b.as_slice()).err().unwrap_or_else(|| panic!("{section} opened"));
            assert!(err.to_string().contains(&format!("`{section}`")), "{section}: {err}");
        }
    }

    #[test]
    #[cfg(feature = "languages")]
    fn each_chunk_is_read_in_its_language_and_so_is_the_query() {
        let lang = |mut c: Chunk, tag: &str| {
            c.lang = tag.into();
            c
        };
        let chunks = vec![
            lang(chunk("de_0", "de", "Lösungen", "Die Lösungen für Container finden Sie hier."), "de"),
            lang(chunk("en_0", "en", "Solutions", "Find the solutions for containers here."), "en"),
            lang(chunk("ja_0", "ja", "コンテナ", "コンテナのメモリを制限します。"), "ja"),
        ];
        let vecs: Vec<f32> = (0..3).flat_map(|i| unit(&[1.0, i as f32, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])).collect();
        let bytes = AlignedBytes::new(&build(&chunks, &vecs, 8, &params(VectorStorage::F16)));
        let idx = Index::open(bytes.as_slice()).unwrap();
        assert_eq!(idx.info().languages, ["en", "de", "ja"], "most chunks first, then in `Lang` order");
        let p = SearchParams { mode: Mode::Bm25, ..idx.default_params(3) };
        let top = |q: &str| idx.search(q, None, &p).first().map(|h| idx.chunk(h.doc).unwrap().id);
        // German plurals and umlauts meet their stems, typed with or without.
        assert_eq!(top("Wie finde ich eine Lösung für einen Container?").as_deref(), Some("de_0"));
        assert_eq!(top("losungen").as_deref(), Some("de_0"));
        assert_eq!(top("How do I find a solution?").as_deref(), Some("en_0"));
        // Japanese by pairs of characters.
        assert_eq!(top("メモリの制限").as_deref(), Some("ja_0"));
        // An English index says nothing of languages (its bytes are as before).
        let (_, en) = sample(VectorStorage::F16);
        let en = Index::open(en.as_slice()).unwrap();
        assert!(en.info().languages.is_empty() && en.languages().every().is_empty());
    }

    /// A word that says nothing of its language is read in each of the
    /// index's; the "no results" rule judges each reading on its own, so a
    /// German word is not nonsense for being unknown in English.
    #[test]
    #[cfg(feature = "languages")]
    fn a_word_in_one_language_matches_though_read_in_every_one() {
        let lang = |mut c: Chunk, tag: &str| {
            c.lang = tag.into();
            c
        };
        let chunks = vec![
            lang(chunk("de_0", "de", "Drucken", "Dokumente drucken Sie an jedem Drucker auf dem Campus."), "de"),
            lang(chunk("de_1", "de", "WLAN", "Verbinden Sie Ihren Laptop mit dem WLAN."), "de"),
            lang(chunk("en_0", "en", "Printing", "Print your documents on any printer on campus."), "en"),
            lang(chunk("en_1", "en", "Wi-Fi", "Connect your laptop to the wireless network."), "en"),
        ];
        let vecs: Vec<f32> = (0..4).flat_map(|i| unit(&[1.0, i as f32, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])).collect();
        let bytes = AlignedBytes::new(&build(&chunks, &vecs, 8, &params(VectorStorage::F16)));
        let idx = Index::open(bytes.as_slice()).unwrap();
        assert_eq!(idx.languages().query().len(), 2);
        for partial in [false, true] {
            let p = SearchParams { mode: Mode::Bm25, partial, ..idx.default_params(3) };
            let evidence = |q: &str| idx.candidates(q, None, &p).evidence;
            // "druckern" is no English term, "druck" is the German stem.
            for q in ["Druckern", "Drucker", "printer", "Laptop WLAN"] {
                assert!(evidence(q).matched(), "{q:?} (partial {partial}): {:?}", evidence(q));
            }
            for q in ["xqzv blorf", "qqqqqqqqq", "Apfelstrudel backen"] {
                assert!(!evidence(q).matched(), "{q:?} (partial {partial}): {:?}", evidence(q));
            }
        }
        let readings = bm25::read_query(&idx, "Drucker", Mode::Bm25, false, None).readings;
        assert_eq!(readings.len(), 2, "{readings:?}");
        // A query whose words say its language is read once.
        assert_eq!(bm25::read_query(&idx, "Wo ist der Drucker?", Mode::Bm25, false, None).readings.len(), 1);
    }

    /// A language of under 5 % of the chunks is not one an undecided query
    /// is read in, but a query whose words say it, or a search restricted to
    /// it, reads it as its pages were indexed: a German help page in an
    /// English knowledge base is found by its German words.
    #[test]
    #[cfg(feature = "languages")]
    fn a_rare_language_is_read_when_the_words_or_the_search_say_it() {
        let mut chunks: Vec<Chunk> = (0..24)
            .map(|i| {
                let text =
                    format!("Topic {i}: print documents, connect the laptop, reset a password or book room {i}.");
                Chunk { lang: "en".into(), ..chunk(&format!("en_{i}"), &format!("en{i}"), "Help", &text) }
            })
            .collect();
        let de = "Mehrere identische Kopien einer Anwendung betreiben Sie mit einem Deployment.";
        chunks.push(Chunk { lang: "de".into(), ..chunk("de_0", "de", "Anwendungen", de) });
        let vecs: Vec<f32> =
            (0..chunks.len()).flat_map(|i| unit(&[1.0, i as f32, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])).collect();
        let bytes = AlignedBytes::new(&build(&chunks, &vecs, 8, &params(VectorStorage::F16)));
        let idx = Index::open(bytes.as_slice()).unwrap();
        let (en, de) = (lang::Lang::EN, lang::Lang::from_tag("de").unwrap());
        assert!(idx.languages().query().is_empty(), "{:?}", idx.languages());
        assert_eq!(idx.languages().every(), [en, de]);
        let read = |q: &str, tag: Option<&str>| {
            let tag = tag.and_then(lang::LangTag::parse);
            bm25::read_query(&idx, q, Mode::Bm25, false, tag).readings
        };
        // "mehrere" is German's "mehr" only when read as German.
        let question = "Wie betreibe ich mehrere Kopien einer Anwendung?";
        assert_eq!(read(question, None), [analyzer::terms_in(question, de)]);
        assert_eq!(read("mehrere Kopien", Some("de")), [analyzer::terms_in("mehrere Kopien", de)]);
        assert_eq!(read("mehrere Kopien", None), [analyzer::terms("mehrere Kopien")]);
        // English and German both have "was"; a tie goes to the common language.
        assert_eq!(read("was reset", None), [analyzer::terms("was reset")]);
        let p = SearchParams { mode: Mode::Bm25, ..idx.default_params(3) };
        let hits = idx.search(question, None, &p);
        assert_eq!(hits.first().map(|h| idx.chunk(h.doc).unwrap().id).as_deref(), Some("de_0"));
        assert!(idx.candidates(question, None, &p).evidence.matched());
    }

    #[test]
    #[cfg(feature = "languages")]
    fn an_index_in_an_unknown_language_code_is_refused_by_name() {
        let b = with_info(|v| v["languages"] = serde_json::json!(["de", "<bad>"]));
        let err = Index::open(b.as_slice()).err().unwrap();
        assert!(err.to_string().contains("<bad>"), "{err}");
        let b = with_info(|v| v["languages"] = serde_json::json!(["ja"]));
        assert_eq!(Index::open(b.as_slice()).unwrap().languages().query(), [lang::Lang::from_tag("ja").unwrap()]);
    }

    #[test]
    fn idf_and_tf_arithmetic() {
        assert!((idf(1, 10) - (1.0f32 + 9.5 / 1.5).ln()).abs() < 1e-6);
        assert!(idf(10, 10) > 0.0);
        // tf saturates: doubling tf less than doubles the score.
        let one = bm25_tf(1.0, 10.0, 10.0, 1.2, 0.75);
        let two = bm25_tf(2.0, 10.0, 10.0, 1.2, 0.75);
        assert!((one - 1.0).abs() < 1e-6 && two > one && two < 2.0 * one);
    }
}
