//! A synthetic knowledge base of N chunks for the PostgreSQL scale benchmark
//! (docs/benchmarks/postgres.md): real text and real MiniLM vectors from
//! the BEIR SciFact and ArguAna corpora, split and varied.
//!
//!     cargo run --release -p site-builder --example scale_corpus -- OUT N [MODEL_DIR]
//!
//! Each BEIR document is split into passages of at most ~700 characters (at
//! sentence ends); chunk i is passage (i mod P), its sentences rotated by
//! (i / P) and its title prefixed with one of 40 "faculties", so every chunk's
//! text (and BM25 vector) differs. Its vector is the document's real MiniLM
//! vector (the BEIR embedding cache in target/beir-cache-int8, or computed)
//! plus Gaussian noise of σ = 0.012 per dimension, renormalised: cosine ≈ 0.95
//! to the original, so neighbourhoods are real but no two chunks coincide.
//! Writes OUT/index.bin, OUT/encoder.bin and OUT/queries.txt (the BEIR queries,
//! one `/api/search?q=…` path per line, for wrk).

use std::io::Write;
use std::path::PathBuf;

use search_core::chunk::Chunk;
use search_core::index::{self as hybrid, Mode, VectorStorage};
use site_builder::embed::{default_model_dir, EncoderFile, LongText};
use site_builder::eval;

const FACULTIES: usize = 40;
const NOISE: f32 = 0.012;

/// A BEIR passage: its document's title, its sentences and the document's vector.
struct Passage {
    title: String,
    sentences: Vec<String>,
    vector: Vec<f32>,
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let out = PathBuf::from(args.get(1).ok_or("usage: scale_corpus OUT N [MODEL_DIR]")?);
    let n: usize =
        args.get(2).ok_or("usage: scale_corpus OUT N [MODEL_DIR]")?.parse().map_err(|e| format!("N: {e}"))?;
    let model = args.get(3).map(PathBuf::from).unwrap_or_else(default_model_dir);
    let file = EncoderFile::from_model_dir(&model).map_err(|e| e.to_string())?;
    let enc = file.encoder().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let mut queries = std::fs::File::create(out.join("queries.txt")).map_err(|e| e.to_string())?;
    let passages = load_passages(&file, &mut queries)?;
    eprintln!("{} passages from the two corpora; generating {n} chunks", passages.len());

    let (chunks, vectors) = synthesize(&passages, n);
    let params = hybrid::BuildParams {
        bm25: hybrid::Bm25Params::default(),
        vectors: VectorStorage::F16,
        encoder: "all-MiniLM-L6-v2".into(),
        encoder_fingerprint: enc.fingerprint(),
        default_mode: Mode::Convex,
        alpha: 0.5,
        rrf_k: 60.0,
        norm_depth: 10,
        long_text: "truncate".into(),
        built_unix: 0,
        graph: None,
    };
    let t = std::time::Instant::now();
    let bytes = hybrid::build(&chunks, &vectors, search_core::encoder::DIM, &params);
    eprintln!("index of {n} chunks: {:.0} MB in {:.1} s", bytes.len() as f64 / 1e6, t.elapsed().as_secs_f64());
    std::fs::write(out.join("index.bin"), bytes).map_err(|e| e.to_string())?;
    std::fs::write(out.join("encoder.bin"), file.bytes()).map_err(|e| e.to_string())?;
    Ok(())
}

/// The passages of SciFact and ArguAna (../shared/bench) with their documents'
/// vectors (cached in target/beir-cache-int8); their queries go to `queries`.
fn load_passages(file: &EncoderFile, queries: &mut impl Write) -> Result<Vec<Passage>, String> {
    let shared = PathBuf::from("../shared/bench");
    let cache = PathBuf::from("target/beir-cache-int8");
    let mut passages: Vec<Passage> = Vec::new();
    for name in ["scifact", "arguana"] {
        let beir = eval::load_beir(&shared.join(name)).map_err(|e| e.to_string())?;
        let vectors =
            eval::beir_vectors(&beir, file, LongText::Truncate, Some(&cache), &|_| {}).map_err(|e| e.to_string())?;
        for (i, d) in beir.docs.iter().enumerate() {
            let v = &vectors[i * search_core::encoder::DIM..(i + 1) * search_core::encoder::DIM];
            split_passages(&d.title, &d.text, v, &mut passages);
        }
        for (_, q) in &beir.queries {
            let q: String = q.chars().take(300).collect();
            let enc_q: String = url_encode(&q);
            writeln!(queries, "/api/search?q={enc_q}&k=5").map_err(|e| e.to_string())?;
        }
    }
    Ok(passages)
}

/// Splits a document's `text` at sentence ends into passages of at most ~700
/// characters, each with the document's title and vector.
fn split_passages(title: &str, text: &str, vector: &[f32], passages: &mut Vec<Passage>) {
    let sentences: Vec<String> =
        text.split_inclusive(". ").map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    let passage = |sentences| Passage { title: title.to_string(), sentences, vector: vector.to_vec() };
    let mut cur: Vec<String> = Vec::new();
    let mut len = 0;
    for s in sentences {
        if len + s.len() > 700 && !cur.is_empty() {
            passages.push(passage(std::mem::take(&mut cur)));
            len = 0;
        }
        len += s.len() + 1;
        cur.push(s);
    }
    if !cur.is_empty() {
        passages.push(passage(cur));
    }
}

/// `n` chunks from the passages, each a varied passage (see the module's doc),
/// and their vectors.
fn synthesize(passages: &[Passage], n: usize) -> (Vec<Chunk>, Vec<f32>) {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15u64);
    let mut chunks = Vec::with_capacity(n);
    let mut vectors = Vec::with_capacity(n * search_core::encoder::DIM);
    for i in 0..n {
        let passage = &passages[i % passages.len()];
        chunks.push(chunk(passages, i));
        vectors.extend(rng.jitter(&passage.vector));
    }
    (chunks, vectors)
}

/// Chunk `i`: passage `i mod P`, its sentences rotated by `i / P`, its title
/// prefixed with a faculty; four chunks to a page.
fn chunk(passages: &[Passage], i: usize) -> Chunk {
    let Passage { title, sentences, .. } = &passages[i % passages.len()];
    let variant = i / passages.len();
    let r = variant % sentences.len().max(1);
    let text = sentences[r..].iter().chain(&sentences[..r]).cloned().collect::<Vec<_>>().join(" ");
    let faculty = format!("Faculty {}", variant % FACULTIES + 1);
    let title = if title.is_empty() {
        format!("{faculty}: passage {}", i % passages.len())
    } else {
        format!("{faculty}: {title}")
    };
    let page_id = format!("p{}", i / 4);
    let index_text = format!("Source: {title}\n{text}");
    Chunk {
        id: format!("{page_id}_chunk_{}", i % 4),
        page_id: page_id.clone(),
        n: (i % 4) as u32,
        path: vec![faculty, title.clone()],
        title,
        aliases: Vec::new(),
        headers: Vec::new(),
        url: format!("{page_id}.html"),
        anchor: String::new(),
        version: None,
        last_updated: None,
        lang: "en".into(),
        stands_in: Vec::new(),
        text,
        index_text,
    }
}

/// A xorshift stream: a fixed seed makes the corpus the same on every run.
struct XorShift(u64);

impl XorShift {
    /// Uniform in (0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64).max(1e-12)
    }

    /// `base` plus Gaussian noise of σ = NOISE per dimension (Box-Muller),
    /// renormalised.
    fn jitter(&mut self, base: &[f32]) -> Vec<f32> {
        let mut v: Vec<f32> = base
            .iter()
            .map(|x| {
                let (u1, u2) = (self.next(), self.next());
                x + NOISE * ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
            })
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
