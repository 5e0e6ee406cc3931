//! An ablation of how a chunk longer than MiniLM's 256 tokens becomes one vector:
//! the first window alone (`--long-text truncate`), the mean of all windows
//! (`mean`, the default), or a blend of the two, `w · first + (1 − w) · mean`,
//! renormalised. Reads two builds of the same content that differ only in
//! `--long-text`, writes a third with blended vectors:
//!
//!     cargo run --release -p site-builder --example long_text_blend -- MEAN_DIR TRUNCATE_DIR OUT_DIR W
//!
//! then `site-builder eval --index OUT_DIR/index.bin --qa …` as for any build.

use std::path::PathBuf;

use search_core::container::AlignedBytes;
use search_core::index::{build, BuildParams, Index};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mean_dir, trunc_dir, out_dir, w] = args.as_slice() else {
        return Err("usage: long_text_blend MEAN_DIR TRUNCATE_DIR OUT_DIR W".into());
    };
    let w: f32 = w.parse().map_err(|_| format!("W must be a number from 0 to 1, got `{w}`"))?;
    if !(0.0..=1.0).contains(&w) {
        return Err(format!("W must be a number from 0 to 1, got {w}").into());
    }
    let (mean_dir, trunc_dir, out_dir) = (PathBuf::from(mean_dir), PathBuf::from(trunc_dir), PathBuf::from(out_dir));
    let mean_bytes = AlignedBytes::new(&std::fs::read(mean_dir.join("index.bin"))?);
    let trunc_bytes = AlignedBytes::new(&std::fs::read(trunc_dir.join("index.bin"))?);
    let (mean, trunc) = (Index::open(mean_bytes.as_slice())?, Index::open(trunc_bytes.as_slice())?);
    let chunks = search_core::chunk::decode_jsonl(&std::fs::read_to_string(mean_dir.join("chunks.jsonl"))?)?;
    if mean.len() != trunc.len() || mean.len() != chunks.len() {
        return Err("the two builds must hold the same chunks (same content, same chunking)".into());
    }
    let dim = mean.info().dim;
    let mut vectors = Vec::with_capacity(chunks.len() * dim);
    for (d, c) in chunks.iter().enumerate() {
        let d = d as u32;
        if mean.chunk(d)?.id != c.id || trunc.chunk(d)?.id != c.id {
            return Err(format!("chunk {d} differs between the builds").into());
        }
        let v: Vec<f32> = trunc.vector(d).iter().zip(mean.vector(d)).map(|(f, m)| w * f + (1.0 - w) * m).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        vectors.extend(v.iter().map(|x| x / norm));
    }
    let i = mean.info();
    let params = BuildParams {
        bm25: i.bm25,
        vectors: i.vectors,
        encoder: i.encoder.clone(),
        encoder_fingerprint: i.encoder_fingerprint,
        default_mode: i.default_mode,
        alpha: i.alpha,
        rrf_k: i.rrf_k,
        norm_depth: i.norm_depth,
        long_text: format!("blend {w} first + {} mean", 1.0 - w),
        built_unix: i.built_unix,
        graph: None,
    };
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("index.bin"), build(&chunks, &vectors, dim, &params))?;
    std::fs::copy(mean_dir.join("encoder.bin"), out_dir.join("encoder.bin"))?;
    println!("{} chunks → {}", chunks.len(), out_dir.join("index.bin").display());
    Ok(())
}
