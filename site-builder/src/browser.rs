//! Pipeline stage "browser search": the index split into fragments and the
//! browser engine copied into the site, so `OUT/site/` alone is a searchable site
//! on any static host, and keeps searching when the edge function is unreachable.
//!
//! Writes, under `OUT/site/_search/`:
//!
//! | file | what |
//! | --- | --- |
//! | `search.json` | `{"build": ID, "engine": …, "wasm": …}`: the one file fetched fresh; everything else is immutable |
//! | `ID/{name}.gz` | the fragments of [`search_core::index::fragments`] (manifest, lengths, vocabulary shards, one record per chunk), each gzip-compressed |
//! | `search_web.js`, `search_web_bg.wasm.gz` | the engine (`search-web`, built by `scripts/build-search-web`): its wasm-bindgen glue, and the module gzip-compressed |
//!
//! Everything large is compressed here rather than left to the host: object
//! storage and many file servers send files as they are, and the budget (bytes
//! per query) should hold on all of them. `browser-search.js` inflates a gzip
//! body itself (`DecompressionStream`), and takes the bytes as they come when a
//! host has already decoded them. `ID` is a digest of the fragments, so a
//! rebuilt site never mixes fragments of two builds in a reader's cache.

use std::io::Write;
use std::path::{Path, PathBuf};

use search_core::container::AlignedBytes;
use search_core::index::{fragments, Index};
use serde::Serialize;
use sha2::Digest;

use crate::output::{Staging, WriteError};

/// The two files of the browser engine.
pub const ENGINE_FILES: [&str; 2] = ["search_web.js", "search_web_bg.wasm"];

/// Vocabulary shard size before compression: about 4 KB on the wire for the CSC
/// corpus, so a five-word query reads ~20 KB of postings.
pub const SHARD_BYTES: usize = 12 * 1024;

/// Where the browser engine is, and whether to write browser search at all.
#[derive(Debug, Clone)]
pub struct BrowserOptions {
    /// Folder with [`ENGINE_FILES`].
    pub engine: PathBuf,
    /// The folder was named (`--browser-engine`): without the engine the build
    /// fails. Otherwise a missing engine is a warning and the site searches
    /// through `/api` only.
    pub required: bool,
}

/// What was written (for report.json).
#[derive(Debug, Clone, Default, Serialize)]
pub struct BrowserReport {
    pub build: String,
    pub shards: usize,
    pub records: usize,
    /// Bytes on disk (compressed) of the fragments, and of the engine.
    pub fragment_bytes: u64,
    pub engine_bytes: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "browser search: the engine ({files}) is not in {dir}; build it with `scripts/build-search-web`, point --browser-engine at its folder, or pass --no-browser-search",
        files = ENGINE_FILES.join(", "),
        dir = .0.display()
    )]
    EngineMissing(PathBuf),
    #[error("browser search: {0}")]
    Index(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// The default engine folder: `$KB_BROWSER_ENGINE`, else `search-web/pkg` of the
/// checkout this binary was built from (where `scripts/build-search-web` puts it).
pub fn default_engine_dir() -> PathBuf {
    match std::env::var_os("KB_BROWSER_ENGINE") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../search-web/pkg"),
    }
}

/// Whether `dir` holds the engine.
pub fn engine_present(dir: &Path) -> bool {
    ENGINE_FILES.iter().all(|f| dir.join(f).is_file())
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 3), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = e.write_all(bytes);
    e.finish().unwrap_or_default()
}

/// Splits `index` (the bytes of `index.bin`) and writes `_search/` into `staging`.
pub fn write(staging: &Staging, index: &[u8], opts: &BrowserOptions) -> Result<BrowserReport, BrowserError> {
    if !engine_present(&opts.engine) {
        return Err(BrowserError::EngineMissing(opts.engine.clone()));
    }
    let aligned = AlignedBytes::new(index);
    let idx = Index::open(aligned.as_slice()).map_err(|e| BrowserError::Index(e.to_string()))?;
    let frags = fragments::split(&idx, SHARD_BYTES).map_err(|e| BrowserError::Index(e.to_string()))?;
    let packed: Vec<(String, Vec<u8>)> = frags.files.iter().map(|(n, b)| (n.clone(), gzip(b))).collect();
    let mut digest = sha2::Sha256::new();
    for (n, b) in &packed {
        digest.update(n.as_bytes());
        digest.update((b.len() as u64).to_le_bytes());
        digest.update(b);
    }
    let build: String = digest.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let mut report = BrowserReport {
        build: build.clone(),
        shards: frags.manifest.shards.len(),
        records: frags.manifest.chunks,
        ..BrowserReport::default()
    };
    for (n, b) in &packed {
        staging.write(&format!("_search/{build}/{n}.gz"), b)?;
        report.fragment_bytes += b.len() as u64;
    }
    let mut engine_digest = sha2::Sha256::new();
    for f in ENGINE_FILES {
        let from = opts.engine.join(f);
        let bytes = std::fs::read(&from).map_err(WriteError::on(&from))?;
        engine_digest.update(&bytes);
        let (name, stored) =
            if f.ends_with(".wasm") { (format!("{f}.gz"), gzip(&bytes)) } else { (f.to_string(), bytes) };
        report.engine_bytes += stored.len() as u64;
        staging.write(&format!("_search/{name}"), &stored)?;
    }
    let engine_version: String = engine_digest.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect();
    let pointer = serde_json::json!({
        "format": fragments::FORMAT,
        "build": build,
        "engine": format!("search_web.js?v={engine_version}"),
        "wasm": format!("search_web_bg.wasm.gz?v={engine_version}"),
    });
    staging.write("_search/search.json", pointer.to_string().as_bytes())?;
    Ok(report)
}
