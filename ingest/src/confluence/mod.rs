//! `site-builder ingest confluence`: a Confluence page tree into the content
//! folder. [`Client`] (the `client` module) makes the REST calls; the run
//! ([`ingest_confluence`], the `driver` module) walks the tree with it and writes
//! the pages, converted by [`crate::storage`].
//!
//! A run has two phases. First the tree is listed (children with their versions,
//! no bodies), level by level; then the pages that are new, changed, moved or
//! whose file is missing are fetched with their storage body, converted and
//! written, each file atomically, and the state file
//! `OUT/.confluence-state.json` (page id → version, path) records them. So a
//! second run fetches no body that has not changed, and a run that stops half-way
//! (credentials refused, killed) resumes where it stopped. The state is saved when
//! the run ends or stops, and in between at most every
//! [`crate::STATE_SAVE_INTERVAL`]: saving it after every page made a run
//! quadratic in the size of the space, and a kill now loses at most that
//! interval's records, whose pages the next run simply fetches again (the state
//! never names a file that was not written). Pages in the state that left the
//! tree are reported, and with `prune` their files are deleted.

mod client;
mod driver;

pub use crate::retry::MAX_ATTEMPTS;
pub use client::{Ancestor, Body, Client, FetchError, Links, Listed, Page, Storage, Version};
pub use driver::{ingest_confluence, Gone, IngestError, IngestOptions, Skipped, Summary, STATE_FILE};
