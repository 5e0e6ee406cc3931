//! The encoder against reference embeddings of the original f32 model
//! (`tests/fixtures/minilm_reference.json`, made by `scripts/reference_embeddings.py`):
//! the same token ids, and cosine ≥ 0.99 for every text.
//!
//! Needs the model files: `scripts/fetch-model` puts them in `.cache/models`
//! (or set `KB_MODEL_DIR`).

use std::path::PathBuf;

use search_core::container::AlignedBytes;
use search_core::encoder::{cosine, pack, Encoder, DIM};
use serde_json::Value;

fn model_dir() -> PathBuf {
    let dir = std::env::var_os("KB_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.cache/models/all-MiniLM-L6-v2"));
    assert!(dir.join("model.safetensors").exists(), "model not found in {}: run scripts/fetch-model", dir.display());
    dir
}

fn packed() -> AlignedBytes {
    let dir = model_dir();
    let bytes = pack::pack(
        &std::fs::read(dir.join("model.safetensors")).unwrap(),
        &std::fs::read_to_string(dir.join("tokenizer.json")).unwrap(),
        &std::fs::read_to_string(dir.join("config.json")).unwrap(),
        256,
    )
    .unwrap();
    AlignedBytes::new(&bytes)
}

#[test]
#[ignore = "needs the model (scripts/fetch-model): scripts/test runs it"]
fn embeddings_match_the_original_model() {
    let fixture: Value = serde_json::from_str(include_str!("fixtures/minilm_reference.json")).unwrap();
    let bytes = packed();
    let enc = Encoder::open(bytes.as_slice()).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    let mut worst = 1.0f32;
    let mut low = Vec::new();
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let want_ids: Vec<u32> =
            case["input_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        assert_eq!(enc.tokenize(text), want_ids, "token ids differ for {text:?}");
        let want: Vec<f32> = case["embedding"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        let got = enc.embed(text);
        assert_eq!(got.len(), DIM);
        let c = cosine(&got, &want);
        worst = worst.min(c);
        eprintln!("{c:.5}  {} ids  {:.40?}", want_ids.len(), text);
        if c < 0.99 {
            low.push(format!("cosine {c} for {text:?}"));
        }
    }
    eprintln!("worst cosine against the f32 reference: {worst:.5}");
    assert!(low.is_empty(), "below 0.99: {low:#?}");

    // A batch gives the same vectors as one text at a time.
    let texts: Vec<Vec<u32>> = cases.iter().map(|c| enc.tokenize(c["text"].as_str().unwrap())).collect();
    let batch = enc.embed_tokens(&texts);
    for (i, case) in cases.iter().enumerate() {
        let one = enc.embed(case["text"].as_str().unwrap());
        assert!(cosine(&batch[i * DIM..(i + 1) * DIM], &one) > 0.99999);
    }
}

#[test]
#[ignore = "needs the model (scripts/fetch-model): scripts/test runs it"]
fn corrupt_encoder_files_are_errors() {
    let bytes = packed();
    let good = bytes.as_slice();
    assert!(Encoder::open(&good[..good.len() / 2]).is_err());
    let mut bad = good.to_vec();
    bad[0] = b'X';
    assert!(Encoder::open(AlignedBytes::new(&bad).as_slice()).is_err());
    let enc = Encoder::open(good).unwrap();
    assert_ne!(enc.fingerprint(), 0);
}
