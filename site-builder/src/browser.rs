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
//! | `search_web.js`, `search_web_bg.wasm.gz` | the engine (`search-web`, built by `scripts/build-search-web`): its JS glue (`search-web/js/search_web.js`), and the module gzip-compressed |
//! | `search_web_languages.js`, `search_web_languages_bg.wasm.gz` | instead, for a site whose queries are read in other languages than English ([`Index::languages`]): the engine with every language's stemmer and stop words; beside the English engine, for a mostly-English site with pages in such a language (`search.json`'s `languages`: the readers of those pages load it) |
//! | `ID/encoder.bin.gz`, `ID/vectors.bin.gz`, `search_web_semantic.js`, `search_web_semantic_bg.wasm.gz` | only with `--browser-semantic`: the semantic side ([`search_core::index::fragments::Semantic`]) and the engine built with it (relaxed SIMD); `search.json` then has a `semantic` entry |
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
use search_core::encoder::Encoder;
use search_core::index::{fragments, Index};
use serde::Serialize;
use sha2::Digest;

use crate::output::{Staging, WriteError};

/// The two files of the browser engine.
pub const ENGINE_FILES: [&str; 2] = ["search_web.js", "search_web_bg.wasm"];
/// The two files of the engine that reads every language, for a site whose
/// pages are not all English.
pub const LANGUAGES_ENGINE_FILES: [&str; 2] = ["search_web_languages.js", "search_web_languages_bg.wasm"];
/// The two files of the engine with the semantic side (`--browser-semantic`).
pub const SEMANTIC_ENGINE_FILES: [&str; 2] = ["search_web_semantic.js", "search_web_semantic_bg.wasm"];

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
    /// Write the semantic side too (the folder must then hold
    /// [`SEMANTIC_ENGINE_FILES`]).
    pub semantic: bool,
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
    /// The lexical engine written: `english`, or `every language` for a site
    /// whose queries are read in others ([`BrowserReport::languages`]).
    pub engine: String,
    /// The languages queries are read in (empty: English).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
    /// A mostly-English site's other languages that the English engine does
    /// not read (too few pages to read every query in them): the readers of
    /// their pages load the engine that reads every language.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub page_languages: Vec<String>,
    /// Those languages when the engine folder lacks that engine: readers of
    /// their pages search them as English words (a warning of the build).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unread_languages: Vec<String>,
    /// Bytes on disk (compressed) of the semantic side (encoder, vectors and
    /// its engine), when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_bytes: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "browser search: the engine ({files}) is not in {dir}; build it with `scripts/build-search-web`, point --browser-engine at its folder, or pass --no-browser-search",
        files = ENGINE_FILES.join(", "),
        dir = .0.display()
    )]
    EngineMissing(PathBuf),
    #[error(
        "browser search: --browser-semantic needs the engine built with the semantic side ({files}) in {dir}; build it with `scripts/build-search-web`",
        files = SEMANTIC_ENGINE_FILES.join(", "),
        dir = .0.display()
    )]
    SemanticEngineMissing(PathBuf),
    #[error(
        "browser search: the pages are in {languages}, and the engine that reads them ({files}) is not in {dir}; build it with `scripts/build-search-web`, point --browser-engine at its folder, or pass --no-browser-search",
        files = LANGUAGES_ENGINE_FILES.join(", "),
        dir = .dir.display()
    )]
    LanguagesEngineMissing { dir: PathBuf, languages: String },
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
    holds(dir, &ENGINE_FILES)
}

/// Whether `dir` holds both files of an engine.
fn holds(dir: &Path, files: &[&str; 2]) -> bool {
    files.iter().all(|f| dir.join(f).is_file())
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 3), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = e.write_all(bytes);
    e.finish().unwrap_or_default()
}

/// Whether `opts.engine` holds the engine files `opts` needs.
pub fn check_engine(opts: &BrowserOptions) -> Result<(), BrowserError> {
    if !engine_present(&opts.engine) {
        return Err(BrowserError::EngineMissing(opts.engine.clone()));
    }
    if opts.semantic && !holds(&opts.engine, &SEMANTIC_ENGINE_FILES) {
        return Err(BrowserError::SemanticEngineMissing(opts.engine.clone()));
    }
    Ok(())
}

/// Splits `index` (the bytes of `index.bin`) and writes `_search/` into
/// `staging`; with `opts.semantic`, `encoder` (the bytes of `encoder.bin`) and
/// the vectors too.
pub fn write(
    staging: &Staging,
    index: &[u8],
    encoder: &[u8],
    opts: &BrowserOptions,
) -> Result<BrowserReport, BrowserError> {
    check_engine(opts)?;
    let aligned = AlignedBytes::new(index);
    let idx = Index::open(aligned.as_slice()).map_err(|e| BrowserError::Index(e.to_string()))?;
    let languages = idx.info().languages.clone();
    let engine_files = if idx.languages().query().is_empty() { &ENGINE_FILES } else { &LANGUAGES_ENGINE_FILES };
    if !holds(&opts.engine, engine_files) {
        return Err(BrowserError::LanguagesEngineMissing { dir: opts.engine.clone(), languages: languages.join(", ") });
    }
    // The encoder's whole-word tokens: the words the typo reading never corrects.
    let enc_bytes = AlignedBytes::new(encoder);
    let dictionary =
        Encoder::open(enc_bytes.as_slice()).map_err(|e| BrowserError::Index(format!("encoder.bin: {e}")))?.dictionary();
    let frags =
        fragments::split_with(&idx, SHARD_BYTES, &dictionary).map_err(|e| BrowserError::Index(e.to_string()))?;
    let mut packed: Vec<(String, Vec<u8>)> = frags.files.iter().map(|(n, b)| (n.clone(), gzip(b))).collect();
    let lexical = packed.len();
    if opts.semantic {
        let vectors = fragments::semantic::vectors_file(&idx).map_err(|e| BrowserError::Index(e.to_string()))?;
        packed.push((fragments::ENCODER.to_string(), gzip(encoder)));
        packed.push((fragments::VECTORS.to_string(), gzip(&vectors)));
    }
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
        engine: if languages.is_empty() { "english" } else { "every language" }.into(),
        languages,
        ..BrowserReport::default()
    };
    for (i, (n, b)) in packed.iter().enumerate() {
        staging.write(&format!("_search/{build}/{n}.gz"), b)?;
        if i < lexical {
            report.fragment_bytes += b.len() as u64;
        } else {
            *report.semantic_bytes.get_or_insert(0) += b.len() as u64;
        }
    }
    let (engine_version, engine_bytes) = copy_engine(staging, &opts.engine, engine_files)?;
    report.engine_bytes = engine_bytes;
    let mut pointer = serde_json::json!({
        "format": fragments::FORMAT,
        "build": build,
        "engine": format!("{}?v={engine_version}", engine_files[0]),
        "wasm": format!("{}.gz?v={engine_version}", engine_files[1]),
    });
    page_languages_engine(staging, &idx, &opts.engine, &mut report, &mut pointer)?;
    if opts.semantic {
        let (version, bytes) = copy_engine(staging, &opts.engine, &SEMANTIC_ENGINE_FILES)?;
        *report.semantic_bytes.get_or_insert(0) += bytes;
        pointer["semantic"] = serde_json::json!({
            "engine": format!("search_web_semantic.js?v={version}"),
            "wasm": format!("search_web_semantic_bg.wasm.gz?v={version}"),
            "encoder": format!("{}.gz", fragments::ENCODER),
            "vectors": format!("{}.gz", fragments::VECTORS),
            "bytes": report.semantic_bytes,
        });
    }
    staging.write("_search/search.json", pointer.to_string().as_bytes())?;
    Ok(report)
}

/// For a site searched by the English engine, the languages some pages are in
/// that it does not read (Finnish pages on an English help desk: under 5 % of
/// the chunks, so no query is read in Finnish by default): the engine that
/// reads every language is written beside it, and `search.json` names it with
/// those languages, for the readers of those pages. Asked in their language,
/// that engine reads the words as the build did (`salasanasi` as `salasan`);
/// the English one would not find the page. Without that engine in `dir`, the
/// languages are reported unread and the site is written without it.
fn page_languages_engine(
    staging: &Staging,
    idx: &Index<'_>,
    dir: &Path,
    report: &mut BrowserReport,
    pointer: &mut serde_json::Value,
) -> Result<(), BrowserError> {
    let langs = idx.languages();
    if !langs.query().is_empty() {
        return Ok(());
    }
    let codes: Vec<String> =
        langs.every().iter().filter(|l| l.needs_languages()).map(|l| l.code().to_string()).collect();
    if codes.is_empty() {
        return Ok(());
    }
    if !holds(dir, &LANGUAGES_ENGINE_FILES) {
        report.unread_languages = codes;
        return Ok(());
    }
    let (version, bytes) = copy_engine(staging, dir, &LANGUAGES_ENGINE_FILES)?;
    report.engine_bytes += bytes;
    pointer["languages"] = serde_json::json!({
        "engine": format!("{}?v={version}", LANGUAGES_ENGINE_FILES[0]),
        "wasm": format!("{}.gz?v={version}", LANGUAGES_ENGINE_FILES[1]),
        "for": &codes,
    });
    report.page_languages = codes;
    Ok(())
}

/// Copies an engine's glue and module (gzip-compressed) into `_search/`;
/// returns a digest of both (the `?v=` that busts caches) and the bytes stored.
fn copy_engine(staging: &Staging, dir: &Path, files: &[&str; 2]) -> Result<(String, u64), BrowserError> {
    let mut digest = sha2::Sha256::new();
    let mut stored_bytes = 0;
    for f in files {
        let from = dir.join(f);
        let bytes = std::fs::read(&from).map_err(WriteError::on(&from))?;
        digest.update(&bytes);
        let (name, stored) =
            if f.ends_with(".wasm") { (format!("{f}.gz"), gzip(&bytes)) } else { (f.to_string(), bytes) };
        stored_bytes += stored.len() as u64;
        staging.write(&format!("_search/{name}"), &stored)?;
    }
    Ok((digest.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect(), stored_bytes))
}
