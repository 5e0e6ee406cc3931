//! `kb-common`: the few pieces that both the build (`site-builder`) and ingestion
//! (`ingest`) need, so that each has one owner. Nothing here knows the pipeline.
//!
//! * [`slug`]: heading ids and file names from text, by Python-Markdown's rule.
//!   Ingestion names files with it and the build names anchors with it, so a link
//!   written by one resolves in the other.
//! * [`safe_url`]: which URLs may reach an attribute of a served page.
//! * [`percent`]: percent-encoding of the paths written into links.
//! * [`path`]: content-relative paths: joining a link onto its page's folder, and
//!   the way from one page to another.
//! * [`write`]: files written atomically.
//! * `http` (feature `http`): the one way the command line builds an HTTP client
//!   (TLS set up once, a user agent, no hidden timeouts).
//! * `pg_tls` (feature `pg-tls`): the certificates PostgreSQL connections trust.

#[cfg(feature = "http")]
pub mod http;
pub mod path;
pub mod percent;
#[cfg(feature = "pg-tls")]
pub mod pg_tls;
pub mod safe_url;
pub mod slug;
pub mod write;
