//! How the long-text modes compare on a BEIR benchmark, for every blend weight at
//! once, without embedding anything twice. It reads the two vector caches that
//! `site-builder eval --beir DIR --long-text truncate` and `--long-text blend` leave
//! in `target/beir-cache`: the first window `f` and the blend `b = (f + m) / |f + m|`
//! of `f` with the mean of the windows `m` (all unit vectors). Since `f · b = |f + m| / 2`,
//! the mean is recovered exactly as `m = 2 (f · b) b − f`, and any weight as
//! `normalise(w · f + (1 − w) · m)`. Each weighting is indexed as `eval --beir`
//! indexes (f16 vectors, the product's fusion defaults) and scored the same way:
//!
//!     cargo run --release -p site-builder --example beir_long_text -- ../shared/bench/arguana [CACHE_DIR]

use std::path::PathBuf;

use search_core::encoder::DIM;
use search_core::index::{Index, Mode, VectorStorage};
use site_builder::embed::{default_model_dir, embed_all, threads, EncoderFile, LongText};
use site_builder::eval;

fn read_cache(dir: &std::path::Path, name: &str, docs: usize, mode: &str, fp: u64) -> Result<Vec<f32>, String> {
    let path = dir.join(format!("{name}-{docs}-{mode}-{fp:016x}.f32"));
    let bytes = std::fs::read(&path)
        .map_err(|e| format!("{}: {e}; run `site-builder eval --beir … --long-text {mode}` first", path.display()))?;
    if bytes.len() != docs * DIM * 4 {
        return Err(format!("{}: {} bytes, expected {}", path.display(), bytes.len(), docs * DIM * 4));
    }
    Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = PathBuf::from(args.first().ok_or("usage: beir_long_text BEIR_DIR [CACHE_DIR]")?);
    let cache = PathBuf::from(args.get(1).map_or("target/beir-cache", String::as_str));
    let beir = eval::load_beir(&dir)?;
    let file = EncoderFile::from_model_dir(&default_model_dir())?;
    let enc = file.encoder()?;
    let fp = enc.fingerprint();
    let n = beir.docs.len();
    let first = read_cache(&cache, &beir.name, n, "truncate", fp)?;
    let blend = read_cache(&cache, &beir.name, n, "blend", fp)?;
    let mean: Vec<f32> = first
        .chunks_exact(DIM)
        .zip(blend.chunks_exact(DIM))
        .flat_map(|(f, b)| {
            let fb: f32 = f.iter().zip(b).map(|(x, y)| x * y).sum();
            f.iter().zip(b).map(move |(x, y)| 2.0 * fb * y - x).collect::<Vec<f32>>()
        })
        .collect();
    // A one-window document has m = f (up to rounding in the reconstruction).
    let multi = first
        .chunks_exact(DIM)
        .zip(mean.chunks_exact(DIM))
        .filter(|(f, m)| f.iter().zip(m.iter()).map(|(x, y)| x * y).sum::<f32>() < 0.9999)
        .count();
    println!("{}: {n} documents, {multi} longer than one window", beir.name);
    let queries: Vec<&str> = beir.queries.iter().map(|(_, q)| q.as_str()).collect();
    let qvecs = embed_all(&enc, &queries, LongText::Truncate, threads(), &|_| {});
    println!("{:<22} {:>14} {:>14} {:>14}", "first-window weight", "dense NDCG@10", "convex NDCG@10", "dot NDCG@10");
    for w in [1.0f32, 0.7, 0.5, 0.3, 0.0] {
        let vectors: Vec<f32> = first
            .chunks_exact(DIM)
            .zip(mean.chunks_exact(DIM))
            .flat_map(|(f, m)| {
                let v: Vec<f32> = f.iter().zip(m).map(|(x, y)| w * x + (1.0 - w) * y).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                v.into_iter().map(move |x| x / norm)
            })
            .collect();
        let bytes = eval::beir_index(&beir, &vectors, VectorStorage::F16, fp, None);
        let idx = Index::open(bytes.as_slice())?;
        let base = idx.default_params(10);
        let score = |mode| eval::eval_beir(&beir, &idx, &qvecs, mode, &base).ndcg_at_10;
        let name = match w {
            1.0 => "1.0 (truncate)".to_string(),
            0.5 => "0.5 (blend)".to_string(),
            0.0 => "0.0 (mean)".to_string(),
            w => format!("{w}"),
        };
        println!("{name:<22} {:>14.4} {:>14.4} {:>14.4}", score(Mode::Dense), score(Mode::Convex), score(Mode::Dot));
    }
    Ok(())
}
