//! The application above the search engine: the search service every front end
//! asks ([`service`]), the answer agent ([`agent`]), the insights log and report
//! ([`insights`]) and the PostgreSQL tier's schema and queries ([`pg`]).
//!
//! Like the engine ([`search_core`]) it does no I/O of its own: the edge function
//! and the CLI hand it bytes, a clock, a database handle and an HTTP client. It is
//! compiled for the edge (`wasm32-wasip2`) and natively, never for the browser,
//! whose engine needs only `search_core`.

pub mod agent;
pub mod insights;
pub mod pg;
pub mod service;
