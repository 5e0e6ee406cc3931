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
