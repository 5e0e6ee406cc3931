//! Harness for the `confluence_storage` target: a Confluence storage-format body
//! (XHTML with `ac:` / `ri:` elements, named HTML entities) → Markdown, as
//! `site-builder ingest confluence` converts every page it fetches.
//!
//! Besides "no panic", the Markdown it writes must be harmless once built: it goes
//! through the same normalise + render steps as a page of the content folder and
//! the result must pass the `page` target's inertness checks.

use std::collections::{HashMap, HashSet};

use ingest::storage::{to_markdown, TitleLinks};
use kb_common::slug;
use kb_dialect::{normalize, Dialects, NoResolver, Target};
use site_builder::render::{render, LinkContext};

pub fn run(data: &[u8]) {
    let Ok(body) = std::str::from_utf8(data) else { return };
    // A body that is not well-formed XML is a typed error: the page is skipped.
    let Ok(markdown) = to_markdown(body, &TitleLinks) else { return };

    let html_md = normalize(&markdown, Target::Html, Dialects::detect("space/page.md", &markdown), &NoResolver);
    let pages: HashMap<String, String> = HashMap::new();
    let ctx = LinkContext::new(&pages, &|_| false);
    let rendered = render(&html_md, "space/page.md", "space/page.html", "Page", 1, &ctx);
    let heading_ids: HashSet<String> = slug::headings(&html_md.text).into_iter().map(|h| h.id).collect();
    crate::page::assert_inert(&rendered.html, &heading_ids);
}
