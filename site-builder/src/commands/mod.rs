//! One module per command: each declares its arguments (clap's typed structs,
//! the shared ones in [`args`]), turns them into the library's options, runs it,
//! and prints what it has to say. `serve`, the one command that hosts the
//! component in wasmtime, exists only with the `serve` feature (on by default).

pub(crate) mod args;
pub(crate) mod build;
pub(crate) mod chat;
pub(crate) mod embed_bench;
pub(crate) mod eval;
pub(crate) mod ingest;
pub(crate) mod insights;
pub(crate) mod publish;
pub(crate) mod search;
#[cfg(feature = "serve")]
pub(crate) mod serve;
