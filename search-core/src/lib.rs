//! Query-time core of the knowledge-base search.
//!
//! Everything here must compile to native and to `wasm32-wasip2` and does no I/O of
//! its own: callers hand it bytes and strings. It owns the chunk record the site
//! build produces ([`chunk`]), the sectioned file format ([`container`]), the query
//! encoder ([`encoder`]), the hybrid index ([`index`]) and the search service with
//! its wire format that the edge function and the CLI share ([`service`]), which
//! can keep recent query vectors ([`query_cache`]).

pub mod agent;
pub mod chunk;
pub mod container;
pub mod encoder;
pub mod index;
pub mod insights;
pub mod pg;
pub mod query_cache;
pub mod service;
#[cfg(test)]
pub(crate) mod testing;

pub use chunk::Chunk;
