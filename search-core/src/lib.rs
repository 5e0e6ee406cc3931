//! The search engine: what the edge function, the browser and the site build share.
//!
//! Everything here must compile to native, to `wasm32-wasip2` and to the browser's
//! `wasm32-unknown-unknown`, and does no I/O of its own: callers hand it bytes and
//! strings. It owns the chunk record the site build produces ([`chunk`]), the
//! sectioned file format ([`container`]), the query encoder ([`encoder`]), the
//! hybrid index and the browser's fragments of it ([`index`]), the answer to one
//! search as every front end serves it ([`response`]) and the recent query vectors
//! a front end may keep ([`query_cache`]). The service, the agent, insights and the
//! PostgreSQL tier sit above it, in `search-service`.

pub mod chunk;
pub mod container;
pub mod encoder;
pub mod index;
pub mod query_cache;
pub mod response;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use chunk::Chunk;
