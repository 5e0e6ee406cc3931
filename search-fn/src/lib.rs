//! The edge function: one Spin HTTP component (`wasi:http/handler@0.3.0`, built for
//! `wasm32-wasip2`) that carries the whole index and its query encoder inside it
//! and answers `GET /api/search` and `GET /api/health`.
//!
//! [`api`] is the request handling as plain data, and [`limit`] the per-client
//! rate limits, both compiled and tested on every target; `component` (wasm32 only) binds it to Spin: the bundled bytes, the
//! per-instance state and the Spin variables; `insights` (wasm32 only) records
//! searches, chats and feedback through Spin's SQLite interface and computes the
//! report `GET /api/insights` serves.

pub mod api;
pub mod limit;

#[cfg(target_arch = "wasm32")]
mod component;
#[cfg(target_arch = "wasm32")]
mod insights;
#[cfg(target_arch = "wasm32")]
mod llm;
#[cfg(target_arch = "wasm32")]
mod pg;
