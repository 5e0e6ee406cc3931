//! What pruning the multilingual encoder costs a reader's queries: for a
//! build's chunks, the encoder pruned as builds did before word variants
//! (the pages' pieces and the model's most probable ones) and as they do now
//! ([`site_builder::embed::kept_pieces`]), each question's query vector
//! compared with the whole vocabulary's (cosine 1: nothing lost).
//!
//!     cargo run --release -p site-builder --no-default-features --example prune_eval -- FULL_ENCODER.bin CHUNKS.jsonl QA.csv…
//!
//! `FULL_ENCODER.bin`: an `encoder.bin` written with `--full-vocabulary`.
//! `KB_COMMON_PIECES=N` tries another number of most probable pieces.

use search_core::container::AlignedBytes;
use search_core::encoder::{cosine, prune::prune, Encoder};
use search_core::index::lang::Lang;
use site_builder::embed::{kept_pieces, passage_pieces, COMMON_PIECES};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [full, chunks, qas @ ..] = args.as_slice() else {
        return Err("usage: prune_eval FULL_ENCODER.bin CHUNKS.jsonl QA.csv…".into());
    };
    let full = AlignedBytes::new(&std::fs::read(full)?);
    let enc = Encoder::open(full.as_slice())?;
    let mut texts = Vec::new();
    let mut langs = Vec::new();
    for line in std::fs::read_to_string(chunks)?.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        texts.push(v["index_text"].as_str().unwrap_or_default().to_string());
        langs.extend(Lang::from_tag(v["lang"].as_str().unwrap_or("en")));
    }
    langs.sort();
    langs.dedup();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let before = passage_pieces(&enc, &texts);
    let after = kept_pieces(&enc, &texts, &langs);
    let common = std::env::var("KB_COMMON_PIECES").ok().and_then(|n| n.parse().ok()).unwrap_or(COMMON_PIECES);
    let mut questions = Vec::new();
    for qa in qas {
        questions.extend(site_builder::eval::read_qa(std::path::Path::new(qa))?.into_iter().map(|q| q.question));
    }
    let full_vecs: Vec<Vec<f32>> = questions.iter().map(|q| enc.encode_query(q)).collect();
    for (name, keep) in [("pages' pieces", &before), ("+ word variants, stop words", &after)] {
        let bytes = AlignedBytes::new(&prune(full.as_slice(), keep, true, common)?);
        let p = Encoder::open(bytes.as_slice())?;
        let mut cos: Vec<f32> = questions.iter().zip(&full_vecs).map(|(q, f)| cosine(f, &p.encode_query(q))).collect();
        cos.sort_by(f32::total_cmp);
        let n = cos.len().max(1) as f32;
        let mean = cos.iter().sum::<f32>() / n;
        let exact = cos.iter().filter(|&&c| c > 0.9999).count();
        println!(
            "{name:<30} {} pieces, {:.1} MB; {} questions: mean cosine {mean:.4}, min {:.4}, unchanged {exact}",
            p.config().vocab,
            bytes.as_slice().len() as f64 / 1e6,
            cos.len(),
            cos.first().copied().unwrap_or(1.0),
        );
    }
    Ok(())
}
