//! `site-builder`: turns a knowledge base of Markdown pages into a static site and
//! the chunk set that search is built from.
//!
//! The modules are the pipeline's stages, in order: [`parse`] (a file → a page),
//! the `kb-dialect` crate (every dialect's syntax → CommonMark, asking
//! [`resolve`] about the rest of the knowledge base), [`language`] (which language
//! each page is in), [`render`] (Markdown → safe
//! HTML), [`chunk`] (sections → bounded chunks), [`filter`] (drop what carries
//! nothing), [`enrich`] (the text to index), [`tree`] (ordered by [`order`]),
//! [`nav`] and [`site`] (templates → HTML files), with [`build`] running them and
//! [`report`] saying what happened. The commands over a built index are
//! [`search`], [`eval`] and [`chat`]; `serve` is the `edge-host` crate. Heading ids, URL safety and atomic writes are
//! `kb-common`'s, shared with the `ingest` crate that fills a content folder.

pub mod assets;
pub mod browser;
pub mod build;
pub mod chat;
pub mod chunk;
pub mod embed;
pub mod enrich;
pub mod eval;
pub mod filter;
pub mod hnsw;
pub mod i18n;
pub mod insights;
pub mod insights_html;
pub mod language;
pub mod llm;
pub mod nav;
pub mod order;
pub mod output;
pub mod parse;
pub mod pg;
pub mod render;
pub mod report;
pub mod resolve;
pub mod search;
pub mod site;
pub mod summary;
pub mod tags;
pub mod translations;
pub mod tree;

/// What counts as a fenced code block, shared with every line-based reader.
pub use kb_dialect::fence;
