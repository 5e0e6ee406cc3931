//! Packing: the original model files (`model.safetensors`, f32, and
//! `tokenizer.json`) → the encoder file read by [`super::Encoder::open`].
//!
//! Runs once, at build time. Linear layers and word embeddings become int8 with a
//! scale per row; Q, K and V are fused into one `3·384 × 384` matrix so a layer does
//! one pass over its input for all three. No I/O: bytes in, bytes out.

#[cfg(feature = "pack")]
use serde_json::Value;

use super::kernels::quantize_rows;
use super::linear::{pack_panels, row_sums};
use super::tokenizer::Vocab;
use super::{Config, MAGIC, VERSION};
use crate::container::Writer;

/// Why the model files could not be packed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    #[error("model.safetensors: {0}")]
    Safetensors(String),
    #[error("tokenizer.json: {0}")]
    Tokenizer(String),
    #[error("config.json: {0}")]
    Config(String),
}

/// The tensors of `model.safetensors`, read in place by the `safetensors`
/// crate (which checks the header, the offsets and the sizes). Packing is the
/// build's: the component and the browser engine leave the `pack` feature off
/// and carry neither this nor the crate.
#[cfg(feature = "pack")]
struct Tensors<'a>(safetensors::SafeTensors<'a>);

#[cfg(feature = "pack")]
impl<'a> Tensors<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Tensors<'a>, PackError> {
        safetensors::SafeTensors::deserialize(bytes).map(Tensors).map_err(|e| PackError::Safetensors(e.to_string()))
    }

    /// Tensor `name`, which must be f32 of `shape`.
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, PackError> {
        let t = self.0.tensor(name).map_err(|_| PackError::Safetensors(format!("tensor `{name}` missing")))?;
        if t.dtype() != safetensors::Dtype::F32 {
            return Err(PackError::Safetensors(format!("tensor `{name}` is {:?}, expected F32", t.dtype())));
        }
        if t.shape() != shape {
            return Err(PackError::Safetensors(format!(
                "tensor `{name}` has shape {:?}, expected {shape:?}",
                t.shape()
            )));
        }
        Ok(t.data().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

/// FNV-1a, 64 bits: a cheap fingerprint of the packed weights.
#[cfg(feature = "pack")]
fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The sections of one linear layer from its f32 weights (`rows × cols`, row
/// major) and bias: int8 rows with a scale each, the row sums, in panels.
#[cfg(feature = "pack")]
pub(crate) fn linear_sections(name: &str, weight: &[f32], bias: &[f32], cols: usize) -> [(String, Vec<u8>); 4] {
    let (q, s) = quantize_rows(weight, cols);
    let sums = row_sums(&q, cols);
    let q = pack_panels(&q, weight.len() / cols, cols);
    [
        (format!("{name}.q"), bytemuck::cast_slice::<i8, u8>(&q).to_vec()),
        (format!("{name}.s"), bytemuck::cast_slice::<f32, u8>(&s).to_vec()),
        (format!("{name}.b"), bytemuck::cast_slice::<f32, u8>(bias).to_vec()),
        (format!("{name}.sum"), bytemuck::cast_slice::<i32, u8>(&sums).to_vec()),
    ]
}

/// The container of `sections` in their order, with the fingerprint of them
/// all (names and bytes) as its last section.
#[cfg(feature = "pack")]
pub(crate) fn finish(version: u32, sections: Vec<(String, Vec<u8>)>) -> Vec<u8> {
    let fp = sections.iter().fold(0xcbf2_9ce4_8422_2325, |acc, (n, b)| fnv1a(fnv1a(acc, n.as_bytes()), b));
    let mut w = Writer::new(MAGIC, version);
    for (name, bytes) in sections {
        w.add(&name, bytes);
    }
    w.add_u32("fingerprint", &[fp as u32, (fp >> 32) as u32]);
    w.finish()
}

/// Packs the original model into an encoder file.
#[cfg(feature = "pack")]
pub fn pack(
    safetensors: &[u8],
    tokenizer_json: &str,
    config_json: &str,
    max_tokens: usize,
) -> Result<Vec<u8>, PackError> {
    let cfg_v: Value = serde_json::from_str(config_json).map_err(|e| PackError::Config(e.to_string()))?;
    let field =
        |k: &str| cfg_v[k].as_u64().map(|v| v as usize).ok_or_else(|| PackError::Config(format!("`{k}` missing")));
    let cfg = Config {
        vocab: field("vocab_size")?,
        hidden: field("hidden_size")?,
        layers: field("num_hidden_layers")?,
        heads: field("num_attention_heads")?,
        intermediate: field("intermediate_size")?,
        max_positions: field("max_position_embeddings")?,
        type_vocab: field("type_vocab_size")?,
        max_tokens,
    };
    let (h, i) = (cfg.hidden, cfg.intermediate);
    let t = Tensors::parse(safetensors)?;

    let tok: Value = serde_json::from_str(tokenizer_json).map_err(|e| PackError::Tokenizer(e.to_string()))?;
    let vocab = tok["model"]["vocab"].as_object().ok_or_else(|| PackError::Tokenizer("model.vocab missing".into()))?;
    if tok["model"]["type"].as_str() != Some("WordPiece") {
        return Err(PackError::Tokenizer("only WordPiece tokenizers are supported".into()));
    }
    let tokens: Vec<(String, u32)> =
        vocab.iter().filter_map(|(k, v)| v.as_u64().map(|id| (k.clone(), id as u32))).collect();
    let (offsets, ids, bytes) = Vocab::build(&tokens);

    let mut sections: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, b: Vec<u8>| sections.push((name.to_string(), b));
    let f32b = |v: &[f32]| bytemuck::cast_slice::<f32, u8>(v).to_vec();
    let i8b = |v: &[i8]| bytemuck::cast_slice::<i8, u8>(v).to_vec();
    add("config", bytemuck::cast_slice::<u32, u8>(&cfg.to_words()).to_vec());
    add("vocab.offsets", bytemuck::cast_slice::<u32, u8>(&offsets).to_vec());
    add("vocab.ids", bytemuck::cast_slice::<u32, u8>(&ids).to_vec());
    add("vocab.bytes", bytes);
    let (wq, ws) = quantize_rows(&t.get("embeddings.word_embeddings.weight", &[cfg.vocab, h])?, h);
    add("word.q", i8b(&wq));
    add("word.s", f32b(&ws));
    add("pos", f32b(&t.get("embeddings.position_embeddings.weight", &[cfg.max_positions, h])?));
    add("type", f32b(&t.get("embeddings.token_type_embeddings.weight", &[cfg.type_vocab, h])?));
    add("emb.ln.w", f32b(&t.get("embeddings.LayerNorm.weight", &[h])?));
    add("emb.ln.b", f32b(&t.get("embeddings.LayerNorm.bias", &[h])?));
    for l in 0..cfg.layers {
        let p = format!("encoder.layer.{l}");
        let mut qkv_w = Vec::with_capacity(3 * h * h);
        let mut qkv_b = Vec::with_capacity(3 * h);
        for part in ["query", "key", "value"] {
            qkv_w.extend(t.get(&format!("{p}.attention.self.{part}.weight"), &[h, h])?);
            qkv_b.extend(t.get(&format!("{p}.attention.self.{part}.bias"), &[h])?);
        }
        let mut linear = |name: String, weight: Vec<f32>, bias: Vec<f32>, cols: usize| {
            for (n, b) in linear_sections(&name, &weight, &bias, cols) {
                add(&n, b);
            }
        };
        linear(format!("l{l}.qkv"), qkv_w, qkv_b, h);
        linear(
            format!("l{l}.out"),
            t.get(&format!("{p}.attention.output.dense.weight"), &[h, h])?,
            t.get(&format!("{p}.attention.output.dense.bias"), &[h])?,
            h,
        );
        linear(
            format!("l{l}.ff1"),
            t.get(&format!("{p}.intermediate.dense.weight"), &[i, h])?,
            t.get(&format!("{p}.intermediate.dense.bias"), &[i])?,
            h,
        );
        linear(
            format!("l{l}.ff2"),
            t.get(&format!("{p}.output.dense.weight"), &[h, i])?,
            t.get(&format!("{p}.output.dense.bias"), &[h])?,
            i,
        );
        add(&format!("l{l}.ln1.w"), f32b(&t.get(&format!("{p}.attention.output.LayerNorm.weight"), &[h])?));
        add(&format!("l{l}.ln1.b"), f32b(&t.get(&format!("{p}.attention.output.LayerNorm.bias"), &[h])?));
        add(&format!("l{l}.ln2.w"), f32b(&t.get(&format!("{p}.output.LayerNorm.weight"), &[h])?));
        add(&format!("l{l}.ln2.b"), f32b(&t.get(&format!("{p}.output.LayerNorm.bias"), &[h])?));
    }
    Ok(finish(VERSION, sections))
}

/// A tiny encoder file with made-up weights (deterministic), for tests and fuzzing
/// where the 24 MB real one is too big: the real layout and hidden size, a toy
/// vocabulary of 128 ids (`[PAD]` 0, `[UNK]` 100, `[CLS]` 101, `[SEP]` 102 and a
/// few words), 16 positions, `layers` layers of feed-forward size 32. With no
/// layers it is about 80 KB.
pub fn synthetic(layers: usize) -> Vec<u8> {
    let h = super::DIM;
    let cfg = Config {
        vocab: 128,
        hidden: h,
        layers,
        heads: 12,
        intermediate: super::kernels::NR,
        max_positions: 16,
        type_vocab: 1,
        max_tokens: 12,
    };
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        // xorshift64: reproducible without a dependency.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let mut v = |n: usize| (0..n).map(|_| rand()).collect::<Vec<f32>>();
    let words =
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "wifi", "eduroam", "password", "reset", "##s", "##ing", "a"];
    let tokens: Vec<(String, u32)> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let id = match i {
                0 => 0,
                1 => super::tokenizer::UNK,
                2 => super::tokenizer::CLS,
                3 => super::tokenizer::SEP,
                i => 1000 + i as u32,
            };
            (w.to_string(), id % cfg.vocab as u32)
        })
        .collect();
    let (offsets, ids, bytes) = Vocab::build(&tokens);
    let mut w = Writer::new(MAGIC, VERSION);
    w.add_u32("config", &cfg.to_words());
    w.add_u32("vocab.offsets", &offsets);
    w.add_u32("vocab.ids", &ids);
    w.add("vocab.bytes", bytes);
    let (wq, ws) = quantize_rows(&v(cfg.vocab * h), h);
    w.add_i8("word.q", &wq);
    w.add_f32("word.s", &ws);
    w.add_f32("pos", &v(cfg.max_positions * h));
    w.add_f32("type", &v(cfg.type_vocab * h));
    w.add_f32("emb.ln.w", &vec![1.0; h]);
    w.add_f32("emb.ln.b", &vec![0.0; h]);
    for l in 0..layers {
        for (name, rows, cols) in
            [("qkv", 3 * h, h), ("out", h, h), ("ff1", cfg.intermediate, h), ("ff2", h, cfg.intermediate)]
        {
            let (q, s) = quantize_rows(&v(rows * cols), cols);
            w.add_i32(&format!("l{l}.{name}.sum"), &row_sums(&q, cols));
            w.add_i8(&format!("l{l}.{name}.q"), &pack_panels(&q, rows, cols));
            w.add_f32(&format!("l{l}.{name}.s"), &s);
            w.add_f32(&format!("l{l}.{name}.b"), &v(rows));
        }
        for ln in ["ln1", "ln2"] {
            w.add_f32(&format!("l{l}.{ln}.w"), &vec![1.0; h]);
            w.add_f32(&format!("l{l}.{ln}.b"), &vec![0.0; h]);
        }
    }
    w.add_u32("fingerprint", &[7, 0]);
    w.finish()
}

#[cfg(all(test, feature = "pack"))]
mod tests {
    use super::*;

    const CONFIG: &str = r#"{"vocab_size": 4, "hidden_size": 384, "num_hidden_layers": 0,
        "num_attention_heads": 12, "intermediate_size": 32, "max_position_embeddings": 16,
        "type_vocab_size": 1}"#;
    const TOKENIZER: &str = r#"{"model": {"type": "WordPiece", "vocab": {"[PAD]": 0, "a": 1}}}"#;

    /// A `model.safetensors` that is not one (cut, lying about its header, with a
    /// tensor of another type) is an error naming the file, never a panic.
    #[test]
    fn a_bad_model_file_is_an_error_naming_it() {
        let header = |json: &str| {
            let mut b = (json.len() as u64).to_le_bytes().to_vec();
            b.extend_from_slice(json.as_bytes());
            b
        };
        let mut i64_tensor =
            header(r#"{"embeddings.word_embeddings.weight":{"dtype":"I64","shape":[4,384],"data_offsets":[0,12288]}}"#);
        i64_tensor.resize(i64_tensor.len() + 12_288, 0);
        let cases: [(&str, Vec<u8>); 5] = [
            ("empty", Vec::new()),
            ("short", vec![1, 2, 3]),
            ("header past the end", u64::MAX.to_le_bytes().to_vec()),
            ("not JSON", header("{not json")),
            ("another type", i64_tensor),
        ];
        for (what, bytes) in cases {
            let e = pack(&bytes, TOKENIZER, CONFIG, 12).expect_err(what).to_string();
            assert!(e.starts_with("model.safetensors: "), "{what}: {e}");
        }
        let e = pack(&header("{}"), TOKENIZER, CONFIG, 12).expect_err("no tensors").to_string();
        assert!(e.contains("`embeddings.word_embeddings.weight` missing"), "{e}");
    }
}
