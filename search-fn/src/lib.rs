//! The edge function: one Spin HTTP component (`wasi:http/handler@0.3.0`, built for
//! `wasm32-wasip2`) that carries the whole index and its query encoder inside it
//! (or reads the index from PostgreSQL) and serves the site's API: `GET
//! /api/search`, `GET /api/health`, `POST /api/chat` (the answer agent),
//! `POST /api/feedback` and `GET /api/insights` (`openapi.yaml` is the contract).
//!
//! [`api`] is the request handling as plain data, and [`limit`] the per-client
//! rate limits, both compiled and tested on every target; `component` (wasm32
//! only) binds it to Spin: the bundled bytes, the per-instance state, the Spin
//! variables and the routes; `llm` (wasm32 only) runs the agent over Spin's
//! outbound HTTP; `insights` (wasm32 only) records searches, chats and feedback
//! through Spin's SQLite interface and computes the report `GET /api/insights`
//! serves; `pg` (wasm32 only) is the `postgres` backend's client over Spin's
//! PostgreSQL interface.

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
