//! Integration tests of the edge function: the real `search_fn.wasm`, compiled over
//! the demo index, hosted by `edge_host` (the code behind `site-builder serve`) and
//! spoken to over HTTP; and `spin.toml` checked against both.
//!
//! Needs the model files (scripts/fetch-model; scripts/test sets KB_MODEL_DIR) and
//! the wasm32-wasip2 target (.ci/run installs it).

#[path = "../support/mod.rs"]
mod support;

mod agent;
mod api;
mod browser;
mod chat;
mod contract;
mod faults;
mod feedback;
mod hardening;
mod insights;
mod manifest;
mod postgres;
mod static_host;
mod terminal;
