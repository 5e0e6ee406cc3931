//! One module per command: each turns its parsed arguments (the typed structs in
//! `main.rs`) into the library's options, runs it, and prints what it has to say.

pub(crate) mod build;
pub(crate) mod chat;
pub(crate) mod embed_bench;
pub(crate) mod eval;
pub(crate) mod ingest;
pub(crate) mod insights;
pub(crate) mod publish;
pub(crate) mod search;
pub(crate) mod serve;
