//! One module per command: each declares its arguments (clap's typed structs,
//! the shared ones in [`args`]), turns them into the library's options, runs it,
//! and prints what it has to say. `serve`, the one command that hosts the
//! component in wasmtime, exists only with the `serve` feature, and `ingest`
//! only with the `ingest` feature (both on by default).

pub(crate) mod args;
pub(crate) mod build;
pub(crate) mod chat;
pub(crate) mod embed_bench;
pub(crate) mod eval;
#[cfg(feature = "ingest")]
pub(crate) mod ingest;
pub(crate) mod insights;
pub(crate) mod publish;
pub(crate) mod search;
#[cfg(feature = "serve")]
pub(crate) mod serve;

use std::path::PathBuf;

/// Why a command could not run (exit code 2). Most are the library's own
/// errors, which name the file, variable or option; the rest say it here.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    #[error(transparent)]
    Search(#[from] site_builder::search::SearchError),
    #[error(transparent)]
    Eval(#[from] site_builder::eval::EvalError),
    #[error("pass --qa FILE (with --index) or --beir DIR")]
    EvalInput,
    #[error(transparent)]
    Embed(#[from] site_builder::embed::EmbedError),
    #[error(transparent)]
    Encoder(#[from] search_core::encoder::EncoderError),
    #[error(transparent)]
    Index(#[from] search_core::index::IndexError),
    #[error(transparent)]
    Graph(#[from] site_builder::hnsw::GraphError),
    #[error("{}: {source}", path.display())]
    ReadChunks { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    DecodeChunks { path: PathBuf, source: search_core::chunk::DecodeError },
    #[error(transparent)]
    Llm(#[from] site_builder::llm::LlmError),
    #[error(transparent)]
    Variables(#[from] kb_common::variables::VariablesError),
    #[error(transparent)]
    Publish(#[from] site_builder::pg::PublishError),
    #[error(transparent)]
    Insights(#[from] site_builder::insights::InsightsError),
    #[error(transparent)]
    InsightsSetting(#[from] search_service::insights::record::SettingsError),
    #[error("--{0}")]
    Since(#[source] search_service::insights::InsightsError),
    #[error("--site: `{0}` is not an http(s) address; use e.g. https://help.example.edu/")]
    Site(String),
    #[error(transparent)]
    Write(#[from] kb_common::write::WriteError),
    #[cfg(feature = "ingest")]
    #[error(transparent)]
    Confluence(#[from] ::ingest::IngestError),
    #[cfg(feature = "ingest")]
    #[error(transparent)]
    Pdf(#[from] ::ingest::pdf::PdfError),
    #[cfg(feature = "ingest")]
    #[error(transparent)]
    Web(#[from] ::ingest::web::WebError),
    #[cfg(feature = "serve")]
    #[error(transparent)]
    Host(#[from] edge_host::HostError),
    /// A JSON summary that could not be written out.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The terminal (or stdout) could not be read or written.
    #[error("{0}")]
    Terminal(#[source] std::io::Error),
    #[error("cannot write to stdout: {0}")]
    Stdout(#[source] std::io::Error),
}
