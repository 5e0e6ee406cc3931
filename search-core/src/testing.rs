//! Test fixtures shared by the modules' unit tests: a small index over chunks
//! embedded with the synthetic encoder (so the fingerprints agree), and the
//! encoder's bytes.

use std::collections::HashMap;

use crate::container::AlignedBytes;
use crate::encoder::{pack, Encoder};
use crate::index::fragments::{Engine, Semantic, Step};
use crate::index::{self, Bm25Params, BuildParams, Mode, VectorStorage};
use crate::response::SearchResponse;
use crate::Chunk;

/// A one-chunk page: `page`'s chunk 0 titled `title`, with `text`.
pub fn chunk(id: &str, page: &str, title: &str, text: &str) -> Chunk {
    Chunk {
        id: id.into(),
        page_id: page.into(),
        n: 0,
        title: title.into(),
        aliases: Vec::new(),
        path: vec![title.into()],
        headers: vec![],
        url: format!("{page}.html"),
        anchor: String::new(),
        version: None,
        last_updated: None,
        lang: "en".into(),
        stands_in: Vec::new(),
        text: text.into(),
        index_text: text.into(),
    }
}

/// `(index.bin, encoder.bin)` over `chunks` (f32 vectors, `rrf` by default).
pub fn files(chunks: &[Chunk]) -> (AlignedBytes, AlignedBytes) {
    files_with(chunks, 0, VectorStorage::F32, Mode::Rrf)
}

/// [`files`] with the synthetic encoder of `layers` layers, `vectors` storage
/// and default mode `mode`.
pub fn files_with(chunks: &[Chunk], layers: usize, vectors: VectorStorage, mode: Mode) -> (AlignedBytes, AlignedBytes) {
    let enc = AlignedBytes::new(&pack::synthetic(layers));
    let e = Encoder::open(enc.as_slice()).expect("the synthetic encoder opens");
    let embedded: Vec<f32> = chunks.iter().flat_map(|c| e.embed(&c.text)).collect();
    let p = BuildParams { encoder_fingerprint: e.fingerprint(), ..build_params(vectors, mode) };
    (AlignedBytes::new(&index::build(chunks, &embedded, crate::encoder::DIM, &p)), enc)
}

/// The build parameters of the fixtures: `vectors` storage, default mode `mode`,
/// the synthetic encoder's name (fingerprint 0: set the encoder's own where the
/// index is opened with it).
pub fn build_params(vectors: VectorStorage, mode: Mode) -> BuildParams {
    BuildParams {
        bm25: Bm25Params::default(),
        vectors,
        encoder: "synthetic".into(),
        encoder_fingerprint: 0,
        default_mode: mode,
        alpha: 0.7,
        rrf_k: 60.0,
        norm_depth: 10,
        long_text: "truncate".into(),
        built_unix: 0,
        graph: None,
    }
}

/// A browser-side corpus: 40 chunks on 10 pages over a small vocabulary
/// (`parking`, `permit`, `password`, `quota`, `gpu`, …), embedded with the
/// one-layer synthetic encoder, vectors stored as `storage`, `convex` by
/// default; `(index.bin, encoder.bin)`.
pub fn fragment_corpus(storage: VectorStorage) -> (AlignedBytes, AlignedBytes) {
    let words = ["parking", "permit", "the", "password", "reset", "a", "of", "storage", "quota", "gpu", "job"];
    fragment_corpus_in("en", &words, storage)
}

/// [`fragment_corpus`]'s layout with `words` in language `lang` (a tag).
pub fn fragment_corpus_in(lang: &str, words: &[&str], storage: VectorStorage) -> (AlignedBytes, AlignedBytes) {
    let chunks: Vec<_> = (0..40usize)
        .map(|i| {
            let text: Vec<&str> = (0..9).map(|j| words[(i * 5 + j * j + j) % words.len()]).collect();
            let page = format!("p{}", i / 4);
            let mut c = chunk(&format!("{page}_{i}"), &page, words[i % words.len()], &text.join(" "));
            c.lang = lang.into();
            c
        })
        .collect();
    files_with(&chunks, 1, storage, Mode::Convex)
}

/// The browser's view of `index` (split into fragments of 256 bytes): the
/// fragment files by name, the lexical engine opened on the manifest, and the
/// semantic side over `encoder` and the index's vectors.
pub fn open_fragments(index: &AlignedBytes, encoder: &AlignedBytes) -> (HashMap<String, Vec<u8>>, Engine, Semantic) {
    let idx = index::Index::open(index.as_slice()).expect("the index opens");
    let dictionary = Encoder::open(encoder.as_slice()).expect("the encoder opens").dictionary();
    let files: HashMap<String, Vec<u8>> =
        index::fragments::split_with(&idx, 256, &dictionary).expect("the index splits").files.into_iter().collect();
    let vectors = index::fragments::semantic::vectors_file(&idx).expect("the vectors export");
    let e = Engine::open(&files[index::fragments::MANIFEST]).expect("the manifest opens");
    let sem = Semantic::open(&e, encoder.as_slice(), &vectors).expect("the semantic side opens");
    (files, e, sem)
}

/// The browser engine's answer to a semantic search, fetching the fragments it
/// asks for from `files` as the browser would (`k` 5).
pub fn browse(
    e: &mut Engine,
    sem: &Semantic,
    files: &HashMap<String, Vec<u8>>,
    q: &str,
    mode: Mode,
    page: usize,
    partial: bool,
) -> SearchResponse {
    for _ in 0..8 {
        match e.search_semantic(sem, q, mode, 5, page, partial) {
            Step::Done(r) => return r,
            Step::Need(names) => names.iter().for_each(|n| e.add(n, &files[n]).expect("the fragment loads")),
        }
    }
    panic!("no answer after eight rounds for {q:?}");
}
