//! Harness for the `fragments` target: the files of a site's `_search/`, which
//! the browser engine fetches from whatever host serves the site. The bytes as
//! the manifest, and as each kind of fragment (chunk lengths, a vocabulary
//! shard, a completion group, a chunk record) beside genuine others: the engine
//! must refuse them with a typed error or take them, and then answer every
//! query (as typed too) without a panic, a hang or an allocation the file chose.
//! And the bytes as the semantic side's `vectors.bin` beside the synthetic
//! encoder: refused, or searched in every fused mode without a panic.
//!
//! Seeds (`corpus/fragments/`): the demo site's manifest, lengths, first shard,
//! first completion group and first record, uncompressed.

use std::collections::HashMap;
use std::sync::OnceLock;

use search_core::chunk::Chunk;
use search_core::container::AlignedBytes;
use search_core::encoder::pack;
use search_core::index::fragments::{self, Engine, Semantic, Step, LENS, MANIFEST};
use search_core::index::{build, Bm25Params, BuildParams, Index, Mode, VectorStorage};

const QUERIES: [&str; 5] = ["wifi password eduroam", "", "--gres=nvme:100 a-put", "Ünïcödé 日本 pa", "parki"];

/// A genuine split of a small index (six chunks on three pages, compounds and
/// identifiers among the words, small shards so there are several).
fn genuine() -> &'static HashMap<String, Vec<u8>> {
    static FILES: OnceLock<HashMap<String, Vec<u8>>> = OnceLock::new();
    FILES.get_or_init(|| {
        let texts = [
            "Connect to eduroam with your NetID and password.",
            "Forget the network and reconnect; see buying-a-parking-permit.",
            "Request local disk with --gres=nvme:100 in the batch script.",
            "Upload files with a-put to the object storage.",
            "Parking permits are virtual: your plate is your permit.",
            "Reset a forgotten password in the account portal.",
        ];
        let chunks: Vec<Chunk> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Chunk {
                id: format!("p{}_chunk_{i}", i / 2),
                page_id: format!("p{}", i / 2),
                n: i as u32,
                title: format!("Page {}", i / 2),
                aliases: Vec::new(),
                path: vec!["KB".into()],
                headers: vec!["Section".into()],
                url: format!("p{}.html", i / 2),
                anchor: format!("s{i}"),
                version: None,
                last_updated: None,
                lang: "en".into(),
                stands_in: Vec::new(),
                text: t.to_string(),
                index_text: t.to_string(),
            })
            .collect();
        // The synthetic encoder's width and fingerprint, so that a genuine
        // `vectors.bin` ([`genuine_vectors`]) opens beside it.
        let dim = search_core::encoder::DIM;
        let vectors: Vec<f32> = (0..chunks.len() * dim).map(|i| if i % 5 == 0 { 0.1 } else { 0.0 }).collect();
        let params = BuildParams {
            bm25: Bm25Params::default(),
            vectors: VectorStorage::F32,
            encoder: "fuzz".into(),
            encoder_fingerprint: 7,
            default_mode: Mode::Convex,
            alpha: 0.5,
            rrf_k: 60.0,
            norm_depth: 10,
            long_text: "blend".into(),
            built_unix: 0,
            graph: None,
        };
        let bytes = AlignedBytes::new(&build(&chunks, &vectors, dim, &params));
        let idx = Index::open(bytes.as_slice()).expect("a fresh index opens");
        let mut files: HashMap<String, Vec<u8>> =
            fragments::split(&idx, 64).expect("it splits").files.into_iter().collect();
        files.insert(fragments::VECTORS.into(), fragments::semantic::vectors_file(&idx).expect("vectors"));
        // The genuine set answers, so the hostile runs below test something.
        let mut e = Engine::open(&files[MANIFEST]).expect("its manifest opens");
        for _ in 0..4 {
            match e.search("parking permit", 5, 1, false) {
                Step::Done(r) => {
                    assert!(!r.results.is_empty(), "the genuine fragments find nothing");
                    return files;
                }
                Step::Need(names) => names.iter().for_each(|n| e.add(n, &files[n]).expect("a genuine fragment")),
            }
        }
        panic!("the genuine fragments never answer");
    })
}

/// The genuine split's `vectors.bin` (it opens beside the synthetic encoder).
pub fn genuine_vectors() -> Vec<u8> {
    genuine()[fragments::VECTORS].clone()
}

/// Whether `data` opens as the semantic side of the genuine split.
pub fn semantic_opens(data: &[u8]) -> bool {
    let Ok(e) = Engine::open(&genuine()[MANIFEST]) else { return false };
    Semantic::open(&e, synthetic_encoder().as_slice(), data).is_ok()
}

fn synthetic_encoder() -> &'static AlignedBytes {
    static ENCODER: OnceLock<AlignedBytes> = OnceLock::new();
    ENCODER.get_or_init(|| AlignedBytes::new(&pack::synthetic(0)))
}

/// Asks `q` until the engine answers, handing it genuine fragments for
/// everything but `hostile` (bounded: an engine that keeps asking is a bug the
/// rounds limit only stops, not hides, since the answer is then never checked).
fn drive(e: &mut Engine, q: &str, hostile: &str) {
    let files = genuine();
    for _ in 0..6 {
        match e.search(q, 5, 1, true) {
            Step::Done(r) => {
                assert!(r.results.len() <= 5);
                return;
            }
            Step::Need(names) => {
                for n in names.iter().filter(|n| n.as_str() != hostile) {
                    if let Some(b) = files.get(n) {
                        let _ = e.add(n, b);
                    }
                }
                if names.iter().any(|n| n == hostile) {
                    return; // refused, and asked for again: nothing more to learn
                }
            }
        }
    }
}

/// [`drive`] for a fused mode with the semantic side `sem`.
fn drive_semantic(e: &mut Engine, sem: &Semantic, q: &str, mode: Mode) {
    let files = genuine();
    for _ in 0..6 {
        match e.search_semantic(sem, q, mode, 5, 1, false) {
            Step::Done(r) => {
                assert!(r.results.len() <= 5);
                return;
            }
            Step::Need(names) => names.iter().for_each(|n| {
                if let Some(b) = files.get(n) {
                    let _ = e.add(n, b);
                }
            }),
        }
    }
}

pub fn run(data: &[u8]) {
    if let Ok(mut e) = Engine::open(&genuine()[MANIFEST]) {
        if let Ok(sem) = Semantic::open(&e, synthetic_encoder().as_slice(), data) {
            for q in QUERIES {
                for mode in [Mode::Convex, Mode::Dense, Mode::Dot, Mode::Rrf] {
                    drive_semantic(&mut e, &sem, q, mode);
                }
            }
        }
    }
    if let Ok(e) = Engine::open(data) {
        for q in QUERIES {
            let _ = e.search(q, 5, 1, true);
            let _ = e.search(q, 5, 2, false);
        }
    }
    let files = genuine();
    for slot in [LENS, "t/0.bin", "c/0.json", "r/0.json", "r/1.json"] {
        let Ok(mut e) = Engine::open(&files[MANIFEST]) else { return };
        let _ = e.add(slot, data);
        for q in QUERIES {
            drive(&mut e, q, slot);
        }
    }
}
