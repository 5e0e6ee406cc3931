//! The browser engine's semantic side, for sites that offer it (`site-builder
//! build --browser-semantic`, `data-semantic` on the search script): the query
//! encoder and every chunk's vector, fetched once, after which the browser ranks
//! `convex` (or any fused mode) as the edge does.
//!
//! | file | holds |
//! | --- | --- |
//! | `encoder.bin` | the query encoder, the build's own `encoder.bin` as it is |
//! | `vectors.bin` | a [`crate::container`] file (magic `KBVECTS`): the index's `info` record, every chunk's vector as the index stores it (`vec.i16` fixed point, the default, or `vec.f16` half floats; f32 and int8 indexes are rounded to halves) and the norms of the `dot` mode's sparse side (`norms`) |
//!
//! Unlike the lexical fragments these are all-or-nothing (a dense scan reads
//! every vector, and the encoder is one model), so a page fetches them in the
//! background, answers `bm25` until they are in, and the browser's cache keeps
//! them for the next visit. The scan is exact: for an index with an HNSW graph
//! (50,000 chunks and more) the browser may rank a few candidates the edge's
//! graph walk missed.

use std::cell::RefCell;

use super::{bad, Engine, FragmentError, Step};
use crate::container::{AlignedBytes, Container, Writer};
use crate::encoder::Encoder;
use crate::index::{bm25, dot_f16, f16_bits, top_f16, top_rows, I16Query, Index, IndexInfo, Mode, SearchParams};
use crate::query_cache::QueryCache;

/// Fragment names of the semantic side.
pub const ENCODER: &str = "encoder.bin";
pub const VECTORS: &str = "vectors.bin";
const MAGIC: [u8; 8] = *b"KBVECTS\0";
const VERSION: u32 = 1;
/// Query vectors kept per page: the results page asks again for what the
/// suggestions just answered, and each round of fetching records asks again.
const CACHE: usize = 64;

/// `vectors.bin` for `idx`: its info record, its vectors (the bits an i16 or
/// f16 index stores, so the browser scores as the edge does to the bit; f32 and
/// int8 indexes are rounded to half floats) and its sparse norms.
pub fn vectors_file(idx: &Index<'_>) -> Result<Vec<u8>, crate::index::IndexError> {
    let n = idx.len();
    let mut w = Writer::new(MAGIC, VERSION);
    w.add("info", serde_json::to_vec(idx.info()).map_err(|e| crate::index::IndexError::Invalid(e.to_string()))?);
    if let Some(fixed) = idx.fixed_rows() {
        w.add("vec.i16", fixed.iter().flat_map(|x| x.to_le_bytes()).collect());
    } else {
        let mut halves: Vec<u8> = Vec::with_capacity(n * idx.info().dim * 2);
        for d in 0..n as u32 {
            halves.extend(idx.vector(d).into_iter().flat_map(|x| f16_bits(x).to_le_bytes()));
        }
        w.add("vec.f16", halves);
    }
    let norms: Vec<f32> = (0..n as u32).map(|d| bm25::Postings::doc_norm(idx, d)).collect();
    w.add_f32("norms", &norms);
    Ok(w.finish())
}

/// The encoder and the vectors, checked against each other and the engine.
pub struct Semantic {
    info: IndexInfo,
    /// `encoder.bin`, 64-byte aligned; opened per query (a vocabulary pass of
    /// well under a millisecond next to the forward pass), which keeps this
    /// struct free of self-references.
    encoder: AlignedBytes,
    vectors: Rows,
    norms: Vec<f32>,
    cache: RefCell<QueryCache>,
}

impl Semantic {
    /// Opens the semantic side from the two files' bytes (uncompressed) for the
    /// index `engine` was opened on.
    pub fn open(engine: &Engine, encoder: &[u8], vectors: &[u8]) -> Result<Semantic, FragmentError> {
        let aligned = AlignedBytes::new(vectors);
        let c = Container::open(aligned.as_slice(), MAGIC, VERSION).map_err(|e| bad(VECTORS, e))?;
        let info: IndexInfo =
            serde_json::from_slice(c.bytes("info").map_err(|e| bad(VECTORS, e))?).map_err(|e| bad(VECTORS, e))?;
        let n = engine.manifest.chunks;
        if info.chunks != n || info.dim == 0 {
            return Err(bad(VECTORS, format!("{} chunks of {} values for an index of {n}", info.chunks, info.dim)));
        }
        let values = n.checked_mul(info.dim).ok_or_else(|| bad(VECTORS, "too many vectors"))?;
        // The file names its storage by its section; an f16 file stays readable.
        let vectors = if c.bytes("vec.i16").is_ok() {
            Rows::I16(c.exact::<i16>("vec.i16", values).map_err(|e| bad(VECTORS, e))?.to_vec())
        } else {
            Rows::F16(c.exact::<u16>("vec.f16", values).map_err(|e| bad(VECTORS, e))?.to_vec())
        };
        let norms = c.exact::<f32>("norms", n).map_err(|e| bad(VECTORS, e))?.to_vec();
        let encoder = AlignedBytes::new(encoder);
        let e = Encoder::open(encoder.as_slice()).map_err(|e| bad(ENCODER, e))?;
        if e.fingerprint() != info.encoder_fingerprint {
            return Err(bad(ENCODER, "it is not the encoder this index was built with"));
        }
        if e.config().hidden != info.dim {
            return Err(bad(ENCODER, format!("{} dimensions for vectors of {}", e.config().hidden, info.dim)));
        }
        Ok(Semantic { info, encoder, vectors, norms, cache: RefCell::new(QueryCache::new(CACHE)) })
    }

    /// The query's unit vector (cached by its token ids, as the edge caches it).
    fn embed(&self, query: &str) -> Vec<f32> {
        // Opened at `Semantic::open` already, so this cannot fail; an empty
        // vector (no dense side) if it somehow did.
        let Ok(e) = Encoder::open(self.encoder.as_slice()) else { return Vec::new() };
        let tokens = e.tokenize_query(query);
        if let Some(v) = self.cache.borrow_mut().get(&tokens) {
            return v;
        }
        let v = e.embed_tokens(std::slice::from_ref(&tokens));
        self.cache.borrow_mut().insert(tokens, v.clone());
        v
    }

    /// The parameters the edge searches this index with by default, for `mode`.
    pub fn params(&self, mode: Mode, partial: bool) -> SearchParams {
        SearchParams { mode, partial, ..SearchParams::of_index(&self.info, 1) }
    }

    /// The index's default mode (what the edge answers without `mode=`).
    pub fn default_mode(&self) -> Mode {
        self.info.default_mode
    }
}

impl Engine {
    /// Page `page` of `k` results for `query` in `mode`, ranked as
    /// `GET /api/search?mode=…` ranks it: `bm25` from the fragments alone, the
    /// fused modes with `sem`'s vectors too. Names the fragments it needs first
    /// (before the encoder runs).
    pub fn search_semantic(
        &self,
        sem: &Semantic,
        query: &str,
        mode: Mode,
        k: usize,
        page: usize,
        partial: bool,
    ) -> Step {
        if mode == Mode::Bm25 {
            return self.search(query, k, page, partial);
        }
        let searched = match self.prepare(query, partial) {
            Err(need) => return Step::Need(need),
            Ok(searched) => searched,
        };
        // The encoder reads the query as the index searches it.
        let q = sem.embed(searched.as_deref().unwrap_or(query));
        if q.len() != sem.info.dim {
            return self.search(query, k, page, partial);
        }
        self.rank_page(query, searched.as_deref(), sem.params(mode, partial), k, page, Some(Dense::new(sem, &q)))
    }
}

/// The chunks' vectors, in the storage of the index they came from.
enum Rows {
    F16(Vec<u16>),
    I16(Vec<i16>),
}

/// A query's vector against the chunks' vectors.
pub(super) struct Dense<'a> {
    sem: &'a Semantic,
    q: &'a [f32],
    rows: Prepared<'a>,
}

/// The rows, with the query converted once for fixed-point ones.
enum Prepared<'a> {
    F16(&'a [u16]),
    I16(&'a [i16], I16Query),
}

impl<'a> Dense<'a> {
    fn new(sem: &'a Semantic, q: &'a [f32]) -> Dense<'a> {
        let rows = match &sem.vectors {
            Rows::F16(v) => Prepared::F16(v),
            Rows::I16(v) => Prepared::I16(v, I16Query::new(q)),
        };
        Dense { sem, q, rows }
    }

    /// The `depth` closest chunks that `keep` keeps (all but another
    /// language's in a search in one language), best first (the exact scan),
    /// on the reference scale as the edge scores them ([`Index::dense_top`]).
    pub(super) fn top_where(&self, depth: usize, keep: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        let dim = self.sem.info.dim;
        let mut top = match &self.rows {
            Prepared::F16(v) => top_f16(self.q, v, dim, depth, keep),
            Prepared::I16(v, fq) => top_rows(v, dim, depth, keep, |row| fq.dot(row)),
        };
        let scale = self.sem.info.cosine_scale();
        top.iter_mut().for_each(|t| t.1 = scale.apply(t.1));
        top
    }

    /// The cosine of chunk `doc` on the reference scale (the scale's 0 for a
    /// chunk the index does not have).
    pub(super) fn score(&self, doc: u32) -> f32 {
        let dim = self.sem.info.dim;
        let r = (doc as usize).checked_mul(dim).and_then(|a| Some(a..a.checked_add(dim)?));
        let raw = match (&self.rows, r) {
            (Prepared::F16(v), Some(r)) => v.get(r).map_or(0.0, |row| dot_f16(self.q, row)),
            (Prepared::I16(v, fq), Some(r)) => v.get(r).map_or(0.0, |row| fq.dot(row)),
            (_, None) => 0.0,
        };
        self.sem.info.cosine_scale().apply(raw)
    }

    pub(super) fn norms(&self) -> &[f32] {
        &self.sem.norms
    }
}

/// The engine's postings with the sparse norms `vectors.bin` carries, so the
/// `dot` mode's normalised sparse score is the edge's.
pub(super) struct WithNorms<'a>(pub(super) &'a Engine, pub(super) &'a [f32]);

impl bm25::Postings for WithNorms<'_> {
    type List<'s>
        = bm25::PostingIter<'s>
    where
        Self: 's;

    fn chunks(&self) -> usize {
        self.0.chunks()
    }

    fn avg_len(&self) -> f32 {
        self.0.avg_len()
    }

    fn postings(&self, term: &str) -> Option<(usize, bm25::PostingIter<'_>)> {
        self.0.postings(term)
    }

    fn doc_norm(&self, doc: u32) -> f32 {
        self.1.get(doc as usize).copied().unwrap_or(1.0)
    }

    fn completion(&self, p: &str) -> Option<String> {
        self.0.completion(p)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::index::fragments::{split, MANIFEST};
    use crate::index::{build, BuildParams, VectorStorage};
    use crate::testing::{browse, chunk, fragment_corpus, open_fragments};

    /// [`fragment_corpus`] with f16 vectors.
    fn corpus() -> (AlignedBytes, AlignedBytes) {
        fragment_corpus(VectorStorage::F16)
    }

    /// The browser's ranking is compared with the edge's (`search-service`'s
    /// `Service`) in that crate's `tests/browser_parity.rs`; here, what only the
    /// engine can see: how the vectors travel and that the query cache is used.
    #[test]
    fn vectors_travel_as_stored_and_a_query_is_encoded_once() {
        for storage in [VectorStorage::I16, VectorStorage::F16] {
            let (index, enc) = fragment_corpus(storage);
            let (files, mut e, sem) = open_fragments(&index, &enc);
            // Fixed point travels as it is stored, halves as they are.
            let fixed = storage == VectorStorage::I16;
            assert_eq!(matches!(sem.vectors, Rows::I16(_)), fixed, "{storage:?}");
            assert_eq!(sem.default_mode(), Mode::Convex);
            // Meaning, not words: a query no chunk contains still finds the closest.
            let zebra = browse(&mut e, &sem, &files, "zebra", Mode::Dense, 1, false);
            assert_eq!(zebra.results.len(), 5);
            assert!(matches!(e.search("zebra", 5, 1, false), Step::Done(r) if r.results.is_empty()));
            // The vector is encoded once per text, not once per round of fetching.
            assert!(sem.cache.borrow().stats().0 > 0);
        }
    }

    #[test]
    fn a_wrong_or_damaged_semantic_side_is_refused_by_name() {
        let (index, enc) = corpus();
        let idx = Index::open(index.as_slice()).unwrap();
        let files: HashMap<String, Vec<u8>> = split(&idx, 256).unwrap().files.into_iter().collect();
        let e = Engine::open(&files[MANIFEST]).unwrap();
        let vectors = vectors_file(&idx).unwrap();
        // Vectors another encoder made (its fingerprint in their info record).
        let mut info = idx.info().clone();
        info.encoder_fingerprint ^= 1;
        let mut w = Writer::new(MAGIC, VERSION);
        w.add("info", serde_json::to_vec(&info).unwrap());
        let aligned = AlignedBytes::new(&vectors);
        let c = Container::open(aligned.as_slice(), MAGIC, VERSION).unwrap();
        w.add("vec.f16", c.bytes("vec.f16").unwrap().to_vec());
        w.add_f32("norms", c.f32s("norms").unwrap());
        let err = Semantic::open(&e, enc.as_slice(), &w.finish()).err().unwrap().to_string();
        assert!(err.contains("encoder.bin") && err.contains("not the encoder"), "{err}");
        let err = Semantic::open(&e, &enc.as_slice()[..1000], &vectors).err().unwrap().to_string();
        assert!(err.contains("encoder.bin"), "{err}");
        for cut in [0, 10, vectors.len() / 2, vectors.len() - 1] {
            let err = Semantic::open(&e, enc.as_slice(), &vectors[..cut]).err().unwrap().to_string();
            assert!(err.contains("vectors.bin"), "{err}");
        }
        // Vectors of another index (fewer chunks) are not taken for these.
        let mut c: Vec<_> = (0..3).map(|i| chunk(&format!("x{i}"), "x", "x", "parking")).collect();
        c[0].text = "permit".into();
        let small = AlignedBytes::new(&build(
            &c,
            &vec![0.05; 3 * crate::encoder::DIM],
            crate::encoder::DIM,
            &BuildParams {
                encoder_fingerprint: Encoder::open(enc.as_slice()).unwrap().fingerprint(),
                ..crate::index::tests::params(VectorStorage::F16)
            },
        ));
        let small = vectors_file(&Index::open(small.as_slice()).unwrap()).unwrap();
        let err = Semantic::open(&e, enc.as_slice(), &small).err().unwrap().to_string();
        assert!(err.contains("3 chunks") && err.contains("index of 40"), "{err}");
    }
}
