//! Query-time core of the knowledge-base search.
//!
//! Everything here must compile to native and to `wasm32-wasip2` and does no I/O of
//! its own: callers hand it bytes and strings. Today it owns the chunk record that
//! the site build produces ([`chunk`]); the index format, encoders and fusion join it
//! as the hybrid-index work lands.

pub mod chunk;
pub mod container;
pub mod encoder;
pub mod index;

pub use chunk::Chunk;
