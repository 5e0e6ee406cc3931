//! `ingest`: fills a content folder of Markdown pages, with the frontmatter the
//! build reads, from the sources a help desk has. It is not part of the build:
//! the build reads the folder, whoever wrote it.
//!
//! * [`confluence`] ([`ingest_confluence`], over [`storage`]) copies a Confluence
//!   page tree.
//! * [`pdf`] turns a handbook-like PDF into one page.
//! * [`web`] copies a help-centre website through its sitemap, over [`sitemap`],
//!   [`robots`] and [`html`].
//!
//! The Confluence and web runs share their HTTP plumbing (the `retry` and `http`
//! modules: one retry loop with jittered backoff, timeouts, bounded bodies) and
//! what they know of the content folder (the `folder` module: state files,
//! relative links).
//!
//! Requests run concurrently on one tokio thread (`concurrency` in flight at
//! most): the work is waiting on the server, and converting a page takes far less
//! than fetching it. Answers are handled one at a time as they arrive, so the
//! state and the files have a single writer and need no lock.

pub mod confluence;
mod folder;
pub mod html;
mod http;
pub mod pdf;
mod retry;
pub mod robots;
pub mod sitemap;
pub mod storage;
pub mod web;

pub use confluence::{ingest_confluence, Gone, IngestError, IngestOptions, Skipped, Summary, STATE_FILE};
pub use folder::STATE_SAVE_INTERVAL;
