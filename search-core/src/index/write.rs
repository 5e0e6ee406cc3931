//! Writing `index.bin`: the display records, the BM25 vocabulary and postings,
//! the vectors in their stored form and the optional graph, as the sections the
//! module documentation of [`super`] lists, in that order.

use std::collections::HashMap;

use super::lang::Lang;
use super::vectors::{f16_bits, q15};
use super::{analyzer, bm25, graph, Bm25Params, ChunkMeta, IndexInfo, Mode, VectorStorage, MAGIC, VERSION};
use crate::chunk::Chunk;
use crate::container::Writer;

/// What goes into the index besides the chunks and their vectors.
#[derive(Debug, Clone)]
pub struct BuildParams {
    pub bm25: Bm25Params,
    pub vectors: VectorStorage,
    pub encoder: String,
    pub encoder_fingerprint: u64,
    pub default_mode: Mode,
    pub alpha: f32,
    pub rrf_k: f32,
    pub norm_depth: usize,
    pub long_text: String,
    pub built_unix: u64,
    /// An HNSW graph over the vectors (large corpora); `None` keeps the exact scan.
    pub graph: Option<graph::Graph>,
}

/// Writes an index for `chunks`, whose unit vectors are `vectors` (`n × dim`).
pub fn build(chunks: &[Chunk], vectors: &[f32], dim: usize, p: &BuildParams) -> Vec<u8> {
    assert_eq!(vectors.len(), chunks.len() * dim, "one vector per chunk");
    let records = Records::of(chunks);
    let lexicon = Lexicon::of(chunks, &p.bm25);
    let (stand_in_sets, doc_stands_in) = stand_ins(chunks);
    let info = IndexInfo {
        chunks: chunks.len(),
        pages: records.pages,
        terms: lexicon.terms,
        dim,
        vectors: p.vectors,
        encoder: p.encoder.clone(),
        encoder_fingerprint: p.encoder_fingerprint,
        bm25: p.bm25,
        default_mode: p.default_mode,
        alpha: p.alpha,
        rrf_k: p.rrf_k,
        norm_depth: p.norm_depth,
        long_text: p.long_text.clone(),
        built_unix: p.built_unix,
        format: VERSION,
        languages: languages_of(chunks),
        chunk_languages: chunk_languages(chunks),
        stand_in_sets,
    };
    let mut w = Writer::new(MAGIC, VERSION);
    w.add("info", serde_json::to_vec(&info).unwrap_or_default());
    records.write(&mut w);
    if !info.chunk_languages.is_empty() {
        let of = |c: &Chunk| info.chunk_languages.iter().position(|t| *t == c.lang).unwrap_or(0) as u8;
        w.add("doc.lang", chunks.iter().map(of).collect());
    }
    if !info.stand_in_sets.is_empty() {
        w.add("doc.stands_in", doc_stands_in);
    }
    write_vectors(&mut w, vectors, dim, p.vectors);
    lexicon.write(&mut w);
    if let Some(g) = &p.graph {
        g.write(&mut w);
    }
    w.finish()
}

/// Every language tag of `chunks`, sorted ([`IndexInfo::chunk_languages`]);
/// none when all are English. At most 256 (a chunk's is one byte): a
/// knowledge base in more languages keeps the first 256 in order, and a chunk
/// in another reads as the first.
fn chunk_languages(chunks: &[Chunk]) -> Vec<String> {
    let mut tags: Vec<String> = chunks.iter().map(|c| c.lang.clone()).collect();
    tags.sort();
    tags.dedup();
    if tags.iter().all(|t| t == "en") {
        return Vec::new();
    }
    tags.truncate(256);
    tags
}

/// The distinct non-empty [`Chunk::stands_in`] sets, in the order first
/// seen ([`IndexInfo::stand_in_sets`]), and each chunk's set by number from 1
/// (0: none; the `doc.stands_in` section). At most 255 sets: a chunk whose
/// set comes later stands in for none (its page then shows only in its own
/// language, as before stand-ins).
fn stand_ins(chunks: &[Chunk]) -> (Vec<Vec<String>>, Vec<u8>) {
    let mut sets: Vec<Vec<String>> = Vec::new();
    let numbers = chunks
        .iter()
        .map(|c| {
            if c.stands_in.is_empty() {
                return 0;
            }
            let at = sets.iter().position(|s| *s == c.stands_in).or_else(|| {
                (sets.len() < usize::from(u8::MAX)).then(|| {
                    sets.push(c.stands_in.clone());
                    sets.len() - 1
                })
            });
            at.map_or(0, |i| i as u8 + 1)
        })
        .collect();
    (sets, numbers)
}

/// A language is one a query may be in from this share of the chunks.
const QUERY_LANGUAGE_SHARE: usize = 20; // 1 in 20: 5 %

/// The languages of `chunks` as [`IndexInfo::languages`] lists them, the ones
/// queries are read in: those of at least 5 % of the chunks, most first; none
/// when that is English alone. A page in a rarer language is still indexed in
/// its own (CSC's one cookie notice in Finnish), but reading every query of an
/// English knowledge base as Finnish too would find Finnish stems in English
/// words (measured: one CSC dev question lost).
fn languages_of(chunks: &[Chunk]) -> Vec<String> {
    let mut count: HashMap<Lang, usize> = HashMap::new();
    for c in chunks {
        *count.entry(Lang::from_tag(&c.lang).unwrap_or(Lang::OTHER)).or_default() += 1;
    }
    count.retain(|_, &mut n| n * QUERY_LANGUAGE_SHARE >= chunks.len());
    if count.keys().all(|&l| l == Lang::EN) {
        return Vec::new();
    }
    let mut langs: Vec<(Lang, usize)> = count.into_iter().collect();
    langs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    langs.into_iter().map(|(l, _)| l.code().to_string()).collect()
}

/// The display records (`meta.off`, `meta`) and each chunk's page ordinal
/// (`doc.page`, pages numbered in the order first seen).
struct Records {
    meta_off: Vec<u32>,
    meta: Vec<u8>,
    doc_page: Vec<u32>,
    pages: usize,
}

impl Records {
    fn of(chunks: &[Chunk]) -> Records {
        let mut meta_off = vec![0u32];
        let mut meta = Vec::new();
        for c in chunks {
            meta.extend(serde_json::to_vec(&ChunkMeta::from(c)).unwrap_or_default());
            meta_off.push(meta.len() as u32);
        }
        let mut page_ord: HashMap<&str, u32> = HashMap::new();
        let doc_page: Vec<u32> = chunks
            .iter()
            .map(|c| {
                let next = page_ord.len() as u32;
                *page_ord.entry(c.page_id.as_str()).or_insert(next)
            })
            .collect();
        Records { meta_off, meta, doc_page, pages: page_ord.len() }
    }

    fn write(self, w: &mut Writer) {
        w.add_u32("meta.off", &self.meta_off);
        w.add("meta", self.meta);
        w.add_u32("doc.page", &self.doc_page);
    }
}

/// The vectors in their stored form (`vec.f16`, `vec.f32`, `vec.i16`, or
/// `vec.i8` with `vec.scale`).
fn write_vectors(w: &mut Writer, vectors: &[f32], dim: usize, storage: VectorStorage) {
    match storage {
        VectorStorage::F16 => {
            let h: Vec<u16> = vectors.iter().map(|&x| f16_bits(x)).collect();
            w.add("vec.f16", bytemuck::cast_slice(&h).to_vec());
        }
        VectorStorage::F32 => w.add_f32("vec.f32", vectors),
        VectorStorage::I16 => {
            let q: Vec<i16> = vectors.iter().map(|&x| q15(x)).collect();
            w.add("vec.i16", bytemuck::cast_slice(&q).to_vec());
        }
        VectorStorage::Int8 => {
            let (q, s) = crate::encoder::kernels::quantize_rows(vectors, dim.max(1));
            w.add_i8("vec.i8", &q);
            w.add_f32("vec.scale", &s);
        }
    }
}

/// The BM25 side: the sorted vocabulary, its postings, each chunk's
/// field-weighted length and document-vector norm, and the mean length.
struct Lexicon {
    terms: usize,
    terms_off: Vec<u32>,
    term_bytes: Vec<u8>,
    post_off: Vec<u32>,
    post_doc: Vec<u32>,
    post_tf: Vec<f32>,
    doc_len: Vec<f32>,
    doc_norm: Vec<f32>,
    avg_len: f32,
}

impl Lexicon {
    fn of(chunks: &[Chunk], p: &Bm25Params) -> Lexicon {
        let n = chunks.len();
        let (postings, doc_len) = weighted_postings(chunks, p);
        let avg_len = if n == 0 { 1.0 } else { doc_len.iter().sum::<f32>() / n as f32 };
        let mut terms: Vec<(String, Vec<(u32, f32)>)> = postings.into_iter().collect();
        terms.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let (mut terms_off, mut term_bytes) = (vec![0u32], Vec::new());
        let (mut post_off, mut post_doc, mut post_tf) = (vec![0u32], Vec::new(), Vec::new());
        let mut norm_sq = vec![0f32; n];
        for (t, list) in &mut terms {
            list.sort_by_key(|(d, _)| *d);
            term_bytes.extend_from_slice(t.as_bytes());
            terms_off.push(term_bytes.len() as u32);
            for &(d, f) in list.iter() {
                post_doc.push(d);
                post_tf.push(f);
                let w = bm25::bm25_tf(f, doc_len[d as usize], avg_len, p.k1, p.b);
                norm_sq[d as usize] += w * w;
            }
            post_off.push(post_doc.len() as u32);
        }
        let doc_norm: Vec<f32> = norm_sq.iter().map(|v| v.sqrt()).collect();
        Lexicon { terms: terms.len(), terms_off, term_bytes, post_off, post_doc, post_tf, doc_len, doc_norm, avg_len }
    }

    fn write(self, w: &mut Writer) {
        w.add_u32("terms.off", &self.terms_off);
        w.add("terms", self.term_bytes);
        w.add_u32("post.off", &self.post_off);
        w.add_u32("post.doc", &self.post_doc);
        w.add_f32("post.tf", &self.post_tf);
        w.add_f32("doc.len", &self.doc_len);
        w.add_f32("doc.norm", &self.doc_norm);
        w.add_f32("stats", &[self.avg_len]);
    }
}

/// Each term's postings: (chunk, field-weighted term frequency).
type TermPostings = HashMap<String, Vec<(u32, f32)>>;

/// Each term's postings (chunk, field-weighted term frequency), and each
/// chunk's field-weighted length: the text counts once, the title (with the
/// page's aliases) and the header trail as their weights say.
fn weighted_postings(chunks: &[Chunk], p: &Bm25Params) -> (TermPostings, Vec<f32>) {
    let mut postings: TermPostings = HashMap::new();
    let mut doc_len = Vec::with_capacity(chunks.len());
    for (d, c) in chunks.iter().enumerate() {
        let lang = Lang::from_tag(&c.lang).unwrap_or(Lang::OTHER);
        let mut tf: HashMap<String, f32> = HashMap::new();
        let mut len = 0.0;
        // A page's other names (aliases) weigh as its title does.
        let titles =
            if c.aliases.is_empty() { c.title.clone() } else { format!("{} {}", c.title, c.aliases.join(" ")) };
        let fields =
            [(c.index_text.as_str(), 1.0), (titles.as_str(), p.title_weight), (&*c.headers.join(" "), p.header_weight)];
        for (text, w) in fields {
            if w <= 0.0 {
                continue;
            }
            for t in analyzer::terms_in(text, lang) {
                *tf.entry(t).or_default() += w;
                len += w;
            }
        }
        doc_len.push(len);
        for (t, f) in tf {
            postings.entry(t).or_default().push((d as u32, f));
        }
    }
    (postings, doc_len)
}
