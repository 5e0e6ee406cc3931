//! Harness for the `container` target: the bytes as `index.bin` and as
//! `encoder.bin`. Opening must refuse them with a typed error or succeed; when
//! they open, every query path (each fusion mode, the exact scan and the graph,
//! records, vectors; tokenising and embedding texts) must answer without a panic
//! and without allocating by an amount the file chose.
//!
//! Seeds (`corpus/container/`): a real index of three pages built by
//! `site-builder build`, and the synthetic encoder of
//! `search_core::encoder::pack::synthetic` (the real encoder is 24 MB; the
//! synthetic one has the same header, table, config and vocabulary sections).

use search_core::container::AlignedBytes;
use search_core::encoder::Encoder;
use search_core::index::{Index, Mode, SearchParams};

/// Texts that reach both the BM25 analyzer and the tokenizer's odd corners.
const QUERIES: [&str; 4] = ["wifi password eduroam", "", "--gres=nvme:100 a-put", "Ünïcödé 日本 ##s [SEP]"];

/// Largest query vector the harness builds (the encoder's is 384): an index of
/// no chunks may claim any dimension, and that is not a bug of the reader.
const MAX_DIM: usize = 4096;

pub fn run(data: &[u8]) {
    // Sections are read in place and must be 64-byte aligned, as in the component.
    let bytes = AlignedBytes::new(data);
    if let Ok(idx) = Index::open(bytes.as_slice()) {
        index(&idx);
    }
    if let Ok(enc) = Encoder::open(bytes.as_slice()) {
        for text in QUERIES {
            let ids = enc.tokenize(text);
            assert!(ids.len() <= enc.config().max_tokens.max(2));
            assert_eq!(enc.embed(text).len(), search_core::encoder::DIM);
        }
    }
}

fn index(idx: &Index<'_>) {
    let dim = idx.info().dim;
    let q: Option<Vec<f32>> = (dim <= MAX_DIM).then(|| (0..dim).map(|i| ((i % 7) as f32 - 3.0) / 10.0).collect());
    for mode in Mode::ALL {
        for (exact, ef) in [(false, 0), (true, 0), (false, usize::MAX)] {
            let p = SearchParams { mode, exact, ef, collapse_pages: true, ..idx.default_params(5) };
            for text in QUERIES {
                for hit in idx.search(text, q.as_deref(), &p) {
                    let _ = idx.chunk(hit.doc);
                }
            }
        }
    }
    for d in 0..idx.len().min(16) as u32 {
        let _ = idx.chunk(d);
        let _ = idx.page_of(d);
        let _ = idx.vector(d);
    }
    let _ = idx.chunk(u32::MAX);
    let _ = idx.vector(u32::MAX);
}
