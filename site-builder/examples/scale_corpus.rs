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

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let out = PathBuf::from(args.get(1).ok_or("usage: scale_corpus OUT N [MODEL_DIR]")?);
    let n: usize =
        args.get(2).ok_or("usage: scale_corpus OUT N [MODEL_DIR]")?.parse().map_err(|e| format!("N: {e}"))?;
    let model = args.get(3).map(PathBuf::from).unwrap_or_else(default_model_dir);
    let file = EncoderFile::from_model_dir(&model).map_err(|e| e.to_string())?;
    let enc = file.encoder().map_err(|e| e.to_string())?;
    let shared = PathBuf::from("../shared/bench");
    let cache = PathBuf::from("target/beir-cache-int8");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let mut queries = std::fs::File::create(out.join("queries.txt")).map_err(|e| e.to_string())?;

    // Passages: (title, sentences, base vector).
    let mut passages: Vec<(String, Vec<String>, Vec<f32>)> = Vec::new();
    for name in ["scifact", "arguana"] {
        let beir = eval::load_beir(&shared.join(name)).map_err(|e| e.to_string())?;
        let vectors =
            eval::beir_vectors(&beir, &file, LongText::Truncate, Some(&cache), &|_| {}).map_err(|e| e.to_string())?;
        for (i, d) in beir.docs.iter().enumerate() {
            let v = vectors[i * search_core::encoder::DIM..(i + 1) * search_core::encoder::DIM].to_vec();
            let sentences: Vec<String> =
                d.text.split_inclusive(". ").map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
            let mut cur: Vec<String> = Vec::new();
            let mut len = 0;
            for s in sentences {
                if len + s.len() > 700 && !cur.is_empty() {
                    passages.push((d.title.clone(), std::mem::take(&mut cur), v.clone()));
                    len = 0;
                }
                len += s.len() + 1;
                cur.push(s);
            }
            if !cur.is_empty() {
                passages.push((d.title.clone(), cur, v.clone()));
            }
        }
        for (_, q) in &beir.queries {
            let q: String = q.chars().take(300).collect();
            let enc_q: String = url_encode(&q);
            writeln!(queries, "/api/search?q={enc_q}&k=5").map_err(|e| e.to_string())?;
        }
    }
    eprintln!("{} passages from the two corpora; generating {n} chunks", passages.len());

    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut chunks = Vec::with_capacity(n);
    let mut vectors = Vec::with_capacity(n * search_core::encoder::DIM);
    for i in 0..n {
        let (title, sentences, base) = &passages[i % passages.len()];
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
        chunks.push(Chunk {
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
            text,
            index_text,
        });
        let mut v: Vec<f32> = base
            .iter()
            .map(|x| {
                // Box-Muller over a xorshift stream.
                let mut next = || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    ((rng >> 11) as f64 / (1u64 << 53) as f64).max(1e-12)
                };
                let (u1, u2) = (next(), next());
                x + NOISE * ((-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()) as f32
            })
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= norm);
        vectors.extend(v);
    }
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

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
