//! The fuzz harnesses: one function per target, each feeding arbitrary bytes to a
//! parser that reads input from outside the project (files a CMS or a build
//! produced, query strings, request bodies, replies from an LLM) and checking that
//! it answers with a value or a typed error, never a panic, a hang or an
//! unbounded allocation.
//!
//! `fuzz_targets/*.rs` are one-line libFuzzer entry points over these functions
//! (`cargo +nightly fuzz run TARGET`); `tests/regressions.rs` replays every file in
//! `corpus/TARGET/` and `regressions/TARGET/` through the same functions on stable,
//! so a crash found once stays fixed.

pub mod chat_body;
pub mod confluence_storage;
pub mod container;
pub mod fragments;
pub mod llm_reply;
pub mod page;
pub mod search_query;

/// A harness: the bytes libFuzzer (or a committed file) gives it.
pub type Harness = fn(&[u8]);

/// Every target, by name, for the replay test.
pub const TARGETS: &[(&str, Harness)] = &[
    ("container", container::run),
    ("fragments", fragments::run),
    ("page", page::run),
    ("search_query", search_query::run),
    ("chat_body", chat_body::run),
    ("confluence_storage", confluence_storage::run),
    ("llm_reply", llm_reply::run),
];
