//! Each page normalised from its dialect and rendered to sanitised HTML,
//! and what the report says of it: dialect notices, raw syntax left, broken
//! links.

use std::collections::{HashMap, HashSet};

use kb_dialect::{normalize, Dialect, Dialects, Target};

use super::addresses::{addresses, page_url, resolve_chains};
use super::{progress, BuildOptions, Built};
use crate::parse::Page;
use crate::render::{LinkContext, Rendered};
use crate::report::{BlockedUrl, DialectNotice, LinkProblem, RawSyntax, Report, Warning};
use crate::{render, summary};

/// Normalises every page from its dialects to CommonMark and renders it,
/// reporting what did not resolve or render.
pub(super) fn render_pages(
    pages: Vec<Page>,
    assets: &HashSet<String>,
    opts: &BuildOptions,
    report: &mut Report,
) -> Vec<Built> {
    let chains = resolve_chains(&pages);
    let languages = crate::language::resolve(&pages);
    report_languages(&pages, &languages, report);
    let urls: Vec<String> = pages.iter().map(|p| page_url(&p.source)).collect();
    let mut page_urls: HashMap<String, String> =
        pages.iter().zip(&urls).map(|(p, u)| (p.source.clone(), u.clone())).collect();
    // Tag pages are written for tags without a page of their own: links to them resolve.
    let refs: Vec<&Page> = pages.iter().collect();
    let tag_pages: Vec<String> = crate::tags::listings(&refs)
        .into_keys()
        .map(|t| crate::tags::source(&t))
        .filter(|s| !page_urls.contains_key(s))
        .collect();
    for source in &tag_pages {
        page_urls.insert(source.clone(), page_url(source));
    }
    let addresses = addresses(&pages, &urls);
    let asset_exists = |rel: &str| assets.contains(rel);
    let kb =
        crate::resolve::KnowledgeBase::new(&pages, &tag_pages, assets, crate::resolve::SnippetDir::new(&opts.content));
    let bar = progress(opts.progress, pages.len() as u64, "render");
    let mut built: Vec<Built> = Vec::with_capacity(pages.len());
    for (i, ((url, chain), lang)) in urls.into_iter().zip(chains).zip(languages).enumerate() {
        let page = &pages[i];
        bar.set_message(page.source.clone());
        let dialects = opts.dialect.map_or_else(|| Dialects::detect(&page.source, &page.body), Dialect::dialects);
        count_dialects(dialects, report);
        let resolver = kb.for_page(&page.source);
        let by_name = |target: &str| {
            use kb_dialect::Resolver;
            resolver.page(target).or_else(|| resolver.asset(target))
        };
        let ctx = LinkContext {
            pages: &page_urls,
            addresses: &addresses,
            base_path: opts.base_path.as_deref(),
            asset_exists: &asset_exists,
            by_name: dialects.obsidian.then_some(&by_name as render::ByName<'_>),
            from_root: dialects.mdx,
        };
        let html_md = normalize(&page.body, Target::Html, dialects, &resolver);
        let text_md = normalize(&page.body, Target::Text, dialects, &resolver);
        report_normalized(page, &html_md, report);
        let rendered = render::render(&html_md, &page.source, &url, &page.title, page.body_line, &ctx);
        report_rendered(page, &rendered, &html_md.text, &text_md.text, report);
        let summary = page.description.clone().or_else(|| summary::first_sentence(&text_md.text, 180));
        // Whether it is indexed is known once it is chunked.
        built.push(Built {
            page: page.clone(),
            url,
            chain,
            text_md: text_md.text,
            rendered,
            summary,
            lang,
            stands_in: Vec::new(),
            indexed: false,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    built
}

/// Pages per language, and each page's language and how it was found.
fn report_languages(pages: &[Page], languages: &[crate::language::PageLanguage], report: &mut Report) {
    for (p, l) in pages.iter().zip(languages) {
        *report.languages.pages.entry(l.tag.clone()).or_default() += 1;
        report.languages.per_page.push(crate::report::PageLanguageLine {
            file: p.source.clone(),
            lang: l.tag.clone(),
            how: l.how,
        });
    }
}

fn count_dialects(d: Dialects, report: &mut Report) {
    let on = [("mkdocs", d.mkdocs), ("obsidian", d.obsidian), ("gfm", d.gfm), ("mdx", d.mdx), ("hugo", d.hugo)];
    for (name, _) in on.iter().filter(|(_, on)| *on) {
        *report.dialects.pages.entry((*name).to_string()).or_default() += 1;
    }
}

/// Missing snippets and the dialect passes' notices, with their file lines.
fn report_normalized(page: &Page, md: &kb_dialect::Normalized, report: &mut Report) {
    for (line, name) in &md.missing_snippets {
        report.warnings.push(Warning {
            file: page.source.clone(),
            line: Some(page.body_line + line),
            message: format!("snippet include \"{name}\" not found in the content folder; the line was left out"),
        });
    }
    for n in &md.notices {
        report.dialects.notices.push(DialectNotice {
            file: page.source.clone(),
            line: page.body_line + n.line,
            kind: n.kind.name().to_string(),
            message: n.message.clone(),
        });
    }
}

/// Broken links, missing assets, refused URLs, and dialect syntax left raw.
fn report_rendered(page: &Page, rendered: &Rendered, html_md: &str, text_md: &str, report: &mut Report) {
    let file = || page.source.clone();
    for l in &rendered.broken_links {
        report.broken_links.push(LinkProblem { file: file(), line: l.line, target: l.target.clone() });
    }
    for l in &rendered.missing_assets {
        report.missing_assets.push(LinkProblem { file: file(), line: l.line, target: l.target.clone() });
    }
    for l in &rendered.outside_links {
        report.outside_links.push(LinkProblem { file: file(), line: l.line, target: l.target.clone() });
    }
    for b in &rendered.blocked_urls {
        report.blocked_urls.push(BlockedUrl {
            file: file(),
            line: b.line,
            url: b.url.clone(),
            reason: b.reason.clone(),
        });
    }
    // Counted in the Markdown the HTML is rendered from, where an author's
    // escaped `\[\[` (meant to show the brackets) can be told from raw syntax.
    let in_html = kb_dialect::raw::in_markdown(html_md);
    let in_text = kb_dialect::raw::in_markdown(text_md);
    if !in_html.is_empty() || !in_text.is_empty() {
        report.dialects.raw_in_html += in_html.len();
        report.dialects.raw_in_chunks += in_text.len();
        let examples = in_html.iter().chain(&in_text).take(3).map(|r| r.context.clone()).collect();
        report.dialects.raw_syntax.push(RawSyntax {
            file: file(),
            html: in_html.len(),
            chunks: in_text.len(),
            examples,
        });
    }
}
