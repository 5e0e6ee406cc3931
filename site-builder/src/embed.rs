//! Embed stage: the model files → `encoder.bin`, and texts → unit vectors, on all
//! cores, with a progress bar.
//!
//! MiniLM sees 256 tokens; a 2000-character chunk often has more. What happens to
//! the rest is [`LongText`]: cut it off (what sentence-transformers does), or embed
//! every 256-token window and average them — measured on the CSC dev set in
//! BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use search_core::container::AlignedBytes;
use search_core::encoder::{pack, Encoder, EncoderError, DIM};

/// Where the model files are looked for when `--model` is not given.
pub fn default_model_dir() -> PathBuf {
    std::env::var_os("KB_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(".cache/models/all-MiniLM-L6-v2"))
}

/// Why the encoder could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model files not found in {dir} ({file} is missing): run scripts/fetch-model, or pass --model DIR")]
    MissingModel { dir: PathBuf, file: &'static str },
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Pack(#[from] pack::PackError),
    #[error("{0}")]
    Encoder(#[from] EncoderError),
}

/// The encoder file's bytes, aligned so the encoder can read them in place.
pub struct EncoderFile {
    bytes: AlignedBytes,
}

impl EncoderFile {
    /// Packs the original model files of `dir` (safetensors, tokenizer, config).
    pub fn from_model_dir(dir: &Path) -> Result<EncoderFile, EmbedError> {
        let read = |file: &'static str| {
            let path = dir.join(file);
            if !path.exists() {
                return Err(EmbedError::MissingModel { dir: dir.to_path_buf(), file });
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
}

/// What happens to text beyond the encoder's 256 tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LongText {
    /// Embed the first 256 tokens only.
    #[default]
    Truncate,
    /// Embed each 256-token window and average the unit vectors.
    Mean,
}

impl LongText {
    pub fn name(self) -> &'static str {
        match self {
            LongText::Truncate => "truncate",
            LongText::Mean => "mean",
        }
    }
}

/// Token windows of one text: one window when truncating, all of them for `Mean`.
fn windows(enc: &Encoder<'_>, text: &str, long: LongText) -> Vec<Vec<u32>> {
    let max = enc.config().max_tokens;
    match long {
        LongText::Truncate => vec![enc.tokenize(text)],
        LongText::Mean => {
            // Tokenize without the limit, then cut the word pieces into windows.
            let all = enc.tokenize_unbounded(text);
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
pub fn embed_all(
    enc: &Encoder<'_>,
    texts: &[&str],
    long: LongText,
    threads: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<f32> {
    const BATCH: usize = 16;
    let mut out = vec![0f32; texts.len() * DIM];
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Vec<f32>)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let start = next.fetch_add(BATCH, Ordering::Relaxed);
                if start >= texts.len() {
                    break;
                }
                let end = (start + BATCH).min(texts.len());
                let mut seqs = Vec::new();
                let mut owner = Vec::new();
                for (i, t) in texts[start..end].iter().enumerate() {
                    for w in windows(enc, t, long) {
                        seqs.push(w);
                        owner.push(i);
                    }
                }
                let vecs = enc.embed_tokens(&seqs);
                let mut batch = vec![0f32; (end - start) * DIM];
                for (w, &i) in owner.iter().enumerate() {
                    for (d, v) in batch[i * DIM..(i + 1) * DIM].iter_mut().zip(&vecs[w * DIM..(w + 1) * DIM]) {
                        *d += v;
                    }
                }
                for v in batch.chunks_exact_mut(DIM) {
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                    v.iter_mut().for_each(|x| *x /= n);
                }
                if let Ok(mut r) = results.lock() {
                    r.push((start, batch));
                }
                progress(done.fetch_add(end - start, Ordering::Relaxed) + end - start);
            });
        }
    });
    for (start, batch) in results.into_inner().unwrap_or_default() {
        out[start * DIM..start * DIM + batch.len()].copy_from_slice(&batch);
    }
    out
}

/// Threads to embed with: every core.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Vectors of texts embedded by earlier builds, so that a rebuild embeds only
/// what changed (a one-line edit re-embeds one chunk, not the corpus).
///
/// File (`.cache/embeddings.bin` by default): magic `KBEMBC\0\0`, u32 version,
/// u32 dimension, then records of a u64 key and `dim` f32, little-endian. The key
/// hashes the encoder's fingerprint, the long-text mode and the text, so vectors
/// from another model or mode are never reused.
pub struct EmbedCache {
    path: PathBuf,
    map: std::collections::HashMap<u64, Vec<f32>>,
}

const CACHE_MAGIC: &[u8; 8] = b"KBEMBC\0\0";
const CACHE_VERSION: u32 = 1;
/// Entries kept at most (about 75 MB): enough for a few variants of a large KB.
const CACHE_MAX: usize = 50_000;

impl EmbedCache {
    /// Loads the cache; a missing, foreign or damaged file is an empty cache.
    pub fn load(path: &Path) -> EmbedCache {
        let mut map = std::collections::HashMap::new();
        if let Ok(bytes) = std::fs::read(path) {
            let rec = 8 + DIM * 4;
            let ok = bytes.len() >= 16
                && &bytes[..8] == CACHE_MAGIC
                && bytes[8..12] == CACHE_VERSION.to_le_bytes()
                && bytes[12..16] == (DIM as u32).to_le_bytes()
                && (bytes.len() - 16) % rec == 0;
            if ok {
                for r in bytes[16..].chunks_exact(rec) {
                    let mut k = [0u8; 8];
                    k.copy_from_slice(&r[..8]);
                    let v = r[8..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
                    map.insert(u64::from_le_bytes(k), v);
                }
            }
        }
        EmbedCache { path: path.to_path_buf(), map }
    }

    /// The cache key of `text` for this encoder and mode.
    pub fn key(fingerprint: u64, long: LongText, text: &str) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in fingerprint.to_le_bytes().iter().chain(long.name().as_bytes()).chain(text.as_bytes()) {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    pub fn get(&self, key: u64) -> Option<&[f32]> {
        self.map.get(&key).map(Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Adds this build's vectors (they win over older entries when full) and saves.
    pub fn save(mut self, fresh: &[(u64, &[f32])]) -> Result<(), crate::output::WriteError> {
        let keep: std::collections::HashSet<u64> = fresh.iter().map(|(k, _)| *k).collect();
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
        let mut out = Vec::with_capacity(16 + self.map.len() * (8 + DIM * 4));
        out.extend_from_slice(CACHE_MAGIC);
        out.extend_from_slice(&CACHE_VERSION.to_le_bytes());
        out.extend_from_slice(&(DIM as u32).to_le_bytes());
        for (k, v) in &self.map {
            out.extend_from_slice(&k.to_le_bytes());
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
    fn cache_round_trips_and_ignores_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.bin");
        assert!(EmbedCache::load(&path).is_empty());
        let k = EmbedCache::key(7, LongText::Truncate, "hello");
        assert_ne!(k, EmbedCache::key(8, LongText::Truncate, "hello"));
        assert_ne!(k, EmbedCache::key(7, LongText::Mean, "hello"));
        let v = vec![0.5f32; DIM];
        EmbedCache::load(&path).save(&[(k, &v)]).unwrap();
        let c = EmbedCache::load(&path);
        assert_eq!(c.get(k), Some(&v[..]));
        std::fs::write(&path, b"garbage that is not a cache").unwrap();
        assert!(EmbedCache::load(&path).is_empty());
    }
}
