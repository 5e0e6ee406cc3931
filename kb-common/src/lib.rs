//! `kb-common`: the few pieces that the build (`site-builder`), ingestion
//! (`ingest`) and the local host (`edge-host`) share, so that each has one owner.
//! Nothing here knows the pipeline.
//!
//! * [`slug`]: heading ids and file names from text, by Python-Markdown's rule.
//!   Ingestion names files with it and the build names anchors with it, so a link
//!   written by one resolves in the other.
//! * [`safe_url`]: which URLs may reach an attribute of a served page.
//! * [`percent`]: percent-encoding of the paths written into links.
//! * [`path`]: content-relative paths: joining a link onto its page's folder, and
//!   the way from one page to another.
//! * [`write`]: files written atomically.
//! * `frontmatter` (feature `frontmatter`): the keys ingestion writes and the
//!   build reads, as one serde type.
//! * [`site_manifest`]: the list of the files a built site wrote itself.
//! * [`variables`]: the Spin variables, from `SPIN_VARIABLE_*` and `.env`.
//! * [`spin_state`]: the file names of the state folder the local host keeps.
//! * `http` (feature `http`): the one way the command line builds an HTTP client
//!   (TLS set up once, a user agent, no hidden timeouts).
//! * `pg_tls` (feature `pg-tls`): the certificates PostgreSQL connections trust.

#[cfg(feature = "frontmatter")]
pub mod frontmatter;
#[cfg(feature = "http")]
pub mod http;
pub mod path;
pub mod percent;
#[cfg(feature = "pg-tls")]
pub mod pg_tls;
pub mod safe_url;
pub mod site_manifest;
pub mod slug;
pub mod spin_state;
pub mod variables;
pub mod write;
