//! Test fixtures shared by the modules' unit tests: a small index over chunks
//! embedded with the synthetic encoder (so the fingerprints agree), and the
//! encoder's bytes.

use crate::container::AlignedBytes;
use crate::encoder::{pack, Encoder};
use crate::index::{self, Bm25Params, BuildParams, Mode, VectorStorage};
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
    let p = BuildParams {
        bm25: Bm25Params::default(),
        vectors,
        encoder: "synthetic".into(),
        encoder_fingerprint: e.fingerprint(),
        default_mode: mode,
        alpha: 0.7,
        rrf_k: 60.0,
        norm_depth: 10,
        long_text: "truncate".into(),
        built_unix: 0,
        graph: None,
    };
    (AlignedBytes::new(&index::build(chunks, &embedded, crate::encoder::DIM, &p)), enc)
}
