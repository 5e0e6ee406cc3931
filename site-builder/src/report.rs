//! The build report: `OUT/report.json`, and the one-screen summary printed at the
//! end of a build. Everything the build skipped, dropped or could not follow is
//! listed here by file (and line, and chunk id), so that nothing is lost silently.

use serde::Serialize;

use crate::filter::Rule;

/// Version of the `report.json` layout.
pub const REPORT_FORMAT_VERSION: u32 = 1;

/// `OUT/report.json`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub format: u32,
    pub chunks_format: u32,
    pub content: String,
    pub out: String,
    pub options: ReportOptions,
    pub pages: PageCounts,
    /// Pages that were not rendered, with the reason.
    pub skipped: Vec<Skipped>,
    /// Pages read and deliberately not published (`draft: true`, `publish:
    /// false`; MDX partials, `_name.mdx`, which other pages import).
    pub unpublished: Vec<Unpublished>,
    /// The dialect each page was read in, and what of it was kept as text.
    pub dialects: DialectReport,
    /// The languages of the pages ([`crate::language`]): pages per tag, and
    /// each page's language and how it was found.
    pub languages: LanguageReport,
    pub chunks: ChunkCounts,
    /// Every chunk the filters dropped.
    pub dropped: Vec<Dropped>,
    /// Links to pages that do not exist.
    pub broken_links: Vec<LinkProblem>,
    /// Links and images to files that are not in the content folder.
    pub missing_assets: Vec<LinkProblem>,
    /// Site-root links to pages of the source site outside this knowledge base
    /// (no folder in common with the content): kept as words, not counted broken.
    pub outside_links: Vec<LinkProblem>,
    /// URLs removed because they could run script in a reader's browser
    /// (`javascript:`, `data:`, …; see `safe_url`): frontmatter `original_url`,
    /// Markdown links and images, raw HTML attributes.
    pub blocked_urls: Vec<BlockedUrl>,
    /// Things that did not stop the build but deserve a look.
    pub warnings: Vec<Warning>,
    pub site: SiteCounts,
    /// The hybrid index, when one was built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexReport>,
    /// Browser search (`site/_search/`), when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_search: Option<crate::browser::BrowserReport>,
    pub seconds: f64,
}

/// What the language stage found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LanguageReport {
    /// Pages per language tag.
    pub pages: std::collections::BTreeMap<String, usize>,
    /// Groups of pages that are translations of one another
    /// ([`crate::translations`]): each page of one links the others.
    pub translation_groups: usize,
    /// For each language the site is translated into, how many pages of the
    /// main language it has no translation of: a search in it shows them in
    /// the main language ([`crate::translations::stand_ins`]).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub untranslated: std::collections::BTreeMap<String, usize>,
    /// Every page: its file, its language and how that was found.
    pub per_page: Vec<PageLanguageLine>,
}

/// One page's language in the report.
#[derive(Debug, Clone, Serialize)]
pub struct PageLanguageLine {
    pub file: String,
    pub lang: String,
    pub how: crate::language::How,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IndexReport {
    pub chunks: usize,
    pub bytes: usize,
    pub bytes_per_chunk: f64,
    pub encoder_bytes: usize,
    /// The embedding model, and why it was chosen (`--model`, or the
    /// knowledge base's languages).
    pub model: String,
    pub model_reason: String,
    pub vectors: String,
    pub long_text: String,
    pub default_mode: String,
    /// Whether dense search walks an HNSW graph (`--hnsw-threshold`).
    pub hnsw: bool,
    /// Chunks embedded by this build, and chunks whose vectors came from the cache.
    pub embedded: usize,
    pub reused: usize,
    pub embed_seconds: f64,
    pub chunks_per_second: f64,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ReportOptions {
    pub header_levels: u8,
    pub chunk_size: usize,
    pub overlap: usize,
    pub strict: bool,
    pub stub_judge: String,
}

#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct PageCounts {
    /// Markdown files found.
    pub read: usize,
    pub rendered: usize,
    pub skipped: usize,
    /// Drafts and partials: read, not published (`unpublished`).
    pub unpublished: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Unpublished {
    pub file: String,
    /// `draft` or `partial`.
    pub reason: String,
}

/// What the dialect passes did, over the whole build.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DialectReport {
    /// Pages read with each dialect's syntax on (a page may count in several).
    pub pages: std::collections::BTreeMap<String, usize>,
    /// What was kept as text or left out instead of rendered, with file and line.
    pub notices: Vec<DialectNotice>,
    /// Dialect syntax still raw in a page's text outside code: `[[`, `]]`,
    /// `[!type]`, a line starting `:::`, `{{<`, `{{%`, `%%`. Zero is the goal;
    /// any page listed here shows its author what did not render.
    pub raw_syntax: Vec<RawSyntax>,
    /// Raw tokens over all pages: in the site's HTML, and in the chunks.
    pub raw_in_html: usize,
    pub raw_in_chunks: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DialectNotice {
    pub file: String,
    pub line: usize,
    pub kind: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RawSyntax {
    pub file: String,
    /// Raw tokens in the page's HTML text, and in its chunks.
    pub html: usize,
    pub chunks: usize,
    /// The first few, as they appear, to find them.
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Skipped {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ChunkCounts {
    pub before_filters: usize,
    /// One entry per rule, in the order applied: how many it dropped and how many
    /// chunks remained after it.
    pub filters: Vec<FilterCount>,
    pub after_filters: usize,
    pub stub_candidates: usize,
    /// Pages all of whose chunks were dropped (still rendered on the site).
    pub pages_without_chunks: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FilterCount {
    pub rule: Rule,
    pub dropped: usize,
    pub remaining: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Dropped {
    pub chunk_id: String,
    pub file: String,
    pub rule: Rule,
    /// The first words of the chunk, to check the decision at a glance.
    pub preview: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LinkProblem {
    pub file: String,
    pub line: usize,
    pub target: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BlockedUrl {
    pub file: String,
    pub line: usize,
    /// The URL as written in the file.
    pub url: String,
    /// Why it was removed, and what to write instead.
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Warning {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct SiteCounts {
    pub html_pages: usize,
    pub section_pages: usize,
    pub assets_copied: usize,
    /// Redirect pages written for the pages' other addresses (`slug`, `permalink`).
    pub redirects: usize,
    /// Listing pages written for tags without a page of their own (`tags/<tag>.html`).
    pub tag_pages: usize,
}

impl Report {
    /// The end-of-build summary: one screen, the details are in `report.json`.
    pub fn summary(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let p = &self.pages;
        let _ = writeln!(s, "Built {} in {:.1}s", self.out, self.seconds);
        let _ = writeln!(
            s,
            "  pages    {} read, {} rendered, {} skipped, {} not published (drafts, partials)",
            p.read, p.rendered, p.skipped, p.unpublished
        );
        if let Some(line) = self.languages_summary() {
            let _ = writeln!(s, "{line}");
        }
        let d = &self.dialects;
        if !d.pages.is_empty() {
            let read: Vec<String> = d.pages.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let _ =
                writeln!(s, "  dialects {}; {} notice(s) (report.json: dialects)", read.join(", "), d.notices.len());
        }
        if d.raw_in_html + d.raw_in_chunks > 0 {
            let _ = writeln!(
                s,
                "  raw      {} dialect token(s) left raw in the HTML, {} in chunks, on {} page(s)",
                d.raw_in_html,
                d.raw_in_chunks,
                d.raw_syntax.len()
            );
        }
        for sk in self.skipped.iter().take(5) {
            let _ = writeln!(s, "           skipped {}", sk.message);
        }
        if self.skipped.len() > 5 {
            let _ = writeln!(s, "           … and {} more (report.json: skipped)", self.skipped.len() - 5);
        }
        let c = &self.chunks;
        let _ = writeln!(s, "  chunks   {} before filters, {} kept", c.before_filters, c.after_filters);
        let rules: Vec<String> =
            c.filters.iter().filter(|f| f.dropped > 0).map(|f| format!("{} {}", f.rule, f.dropped)).collect();
        if !rules.is_empty() {
            let _ = writeln!(s, "           dropped: {}", rules.join(", "));
        }
        let _ = writeln!(s, "           stub judge: {} ({} candidates)", self.options.stub_judge, c.stub_candidates);
        let _ = writeln!(
            s,
            "  site     {} pages, {} section pages, {} assets",
            self.site.html_pages, self.site.section_pages, self.site.assets_copied
        );
        let _ = writeln!(
            s,
            "  links    {} broken, {} missing assets, {} to pages outside the knowledge base",
            self.broken_links.len(),
            self.missing_assets.len(),
            self.outside_links.len()
        );
        for l in self.broken_links.iter().take(5) {
            let _ = writeln!(s, "           {}:{}: no page at {}", l.file, l.line, l.target);
        }
        if self.broken_links.len() > 5 {
            let _ = writeln!(s, "           … and {} more (report.json: broken_links)", self.broken_links.len() - 5);
        }
        if !self.blocked_urls.is_empty() {
            let _ = writeln!(s, "  unsafe   {} URL(s) removed (report.json: blocked_urls)", self.blocked_urls.len());
            for b in self.blocked_urls.iter().take(5) {
                let _ = writeln!(s, "           {}:{}: {}", b.file, b.line, b.url.chars().take(60).collect::<String>());
            }
            if self.blocked_urls.len() > 5 {
                let _ = writeln!(s, "           … and {} more", self.blocked_urls.len() - 5);
            }
        }
        if let Some(ix) = &self.index {
            let _ = writeln!(
                s,
                "  index    {} chunks, {:.1} MB ({:.0} bytes/chunk), default mode {}\n           embedded {} ({:.1} chunks/s), {} reused from the cache",
                ix.chunks,
                ix.bytes as f64 / 1e6,
                ix.bytes_per_chunk,
                ix.default_mode,
                ix.embedded,
                ix.chunks_per_second,
                ix.reused
            );
        }
        if !self.warnings.is_empty() {
            let _ = writeln!(s, "  warnings {} (report.json: warnings)", self.warnings.len());
        }
        s
    }

    /// The summary's languages line, for a site in several: pages per
    /// language, translation groups, and the pages of the main language each
    /// translated-into language lacks, which its readers' searches show.
    fn languages_summary(&self) -> Option<String> {
        let l = &self.languages;
        if l.pages.len() < 2 {
            return None;
        }
        let counts = |m: &std::collections::BTreeMap<String, usize>| {
            m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
        };
        let mut line = format!("  languages {}; {} translation group(s)", counts(&l.pages), l.translation_groups);
        if !l.untranslated.is_empty() {
            line.push_str(&format!(
                "\n           untranslated, shown in the main language: {} (report.json: languages)",
                counts(&l.untranslated)
            ));
        }
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_a_sites_languages_and_what_each_lacks() {
        let mut r = Report::default();
        r.languages.pages = [("en".to_string(), 201)].into();
        assert!(!r.summary().contains("languages"), "one language: no line");
        r.languages.pages = [("de".to_string(), 61), ("en".to_string(), 201)].into();
        r.languages.translation_groups = 61;
        r.languages.untranslated = [("de".to_string(), 140)].into();
        let s = r.summary();
        assert!(
            s.contains("  languages de 61, en 201; 61 translation group(s)\n           untranslated, shown in the main language: de 140"),
            "{s}"
        );
    }
}
