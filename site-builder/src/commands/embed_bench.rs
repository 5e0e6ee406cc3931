//! `site-builder embed-bench`: embedding throughput on a chunk set.

use super::args::Long;
use super::CommandError;

use site_builder::embed::{default_model_dir, EncoderFile, LongText};
use std::path::PathBuf;

use crate::out;

#[derive(clap::Args)]
pub(crate) struct EmbedBenchArgs {
    /// chunks.jsonl written by a build.
    #[arg(long, default_value = "dist/chunks.jsonl", value_name = "FILE")]
    chunks: PathBuf,
    /// Embed only the first N chunks.
    #[arg(long)]
    limit: Option<usize>,
    /// Threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long, value_enum, default_value_t = Long::Truncate)]
    long_text: Long,
    /// Model folder (as for build).
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
}

pub(crate) fn run_embed_bench(args: EmbedBenchArgs) -> Result<(), CommandError> {
    let text = std::fs::read_to_string(&args.chunks)
        .map_err(|source| CommandError::ReadChunks { path: args.chunks.clone(), source })?;
    let chunks = search_core::chunk::decode_jsonl(&text)
        .map_err(|source| CommandError::DecodeChunks { path: args.chunks.clone(), source })?;
    let n = args.limit.unwrap_or(chunks.len()).min(chunks.len());
    let texts: Vec<&str> = chunks[..n].iter().map(|c| c.index_text.as_str()).collect();
    let file = EncoderFile::from_model_dir(&args.model.unwrap_or_else(default_model_dir))?;
    let enc = file.encoder()?;
    let threads = args.threads.unwrap_or_else(site_builder::embed::threads);
    let tokens: usize = texts.iter().map(|t| enc.tokenize_passage(t).len()).sum();
    let t = std::time::Instant::now();
    let v = site_builder::embed::embed_all(&enc, &texts, args.long_text.into(), threads, &|_| {});
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(v);
    outln!(
        "{}",
        serde_json::json!({"engine": "search-core (int8 weights, 7-bit activations)", "chunks": n, "seconds": s, "chunks_per_s": n as f64 / s,
            "threads": threads, "long_text": LongText::from(args.long_text).name(), "mean_tokens": tokens as f64 / n.max(1) as f64})
    );
    Ok(())
}
