//! The site written into the staging folder: every page through its template,
//! the search and 404 pages, tag pages, redirects from old addresses, the
//! sitemap and the assets pages use.

use std::collections::HashSet;
use std::path::Path;

use super::addresses::page_url;
use super::{progress, BuildError, BuildOptions, Built};
use crate::output::{Staging, WriteError};
use crate::parse::Page;
use crate::render;
use crate::render::root_prefix;
use crate::report::Report;
use crate::site::{
    escape, Child, Frame, HomeContext, HomeSection, Link, Locale, PageContext, SectionContext, SectionView, SiteInfo,
    Templates, Translation,
};
use crate::translations::Translations;
use crate::tree::{NavTree, HOME_URL};

pub(super) fn assets_used(built: &[Built]) -> Vec<String> {
    let mut all: Vec<String> = built.iter().flat_map(|b| b.rendered.assets.iter().cloned()).collect();
    all.sort();
    all.dedup();
    all
}

/// What every page's template is given, computed once for the site.
struct Views<'a> {
    tree: &'a NavTree,
    built: &'a [Built],
    site: &'a SiteInfo,
    /// The site in each of its languages ([`localized`]), by language tag.
    sites: &'a [(String, SiteInfo)],
    /// The header's row of each home (the site's, node 0, and each language's
    /// on a site split by language): its top sections and how many fit.
    rows: Vec<(usize, Vec<Link<'a>>, usize)>,
    /// Each page's language tag, by page index.
    langs: Vec<&'a str>,
    translations: &'a Translations,
    /// `--site-url` ending in `/`: where hreflang's absolute URLs start.
    base_url: String,
}

impl<'a> Views<'a> {
    fn new(
        tree: &'a NavTree,
        built: &'a [Built],
        translations: &'a Translations,
        sites: (&'a SiteInfo, &'a [(String, SiteInfo)]),
        site_url: &str,
    ) -> Views<'a> {
        let (site, localized) = sites;
        let row = |home: usize| {
            let links: Vec<Link> = tree.nodes[home].children.iter().map(|&c| node_link(tree, c)).collect();
            let fit = crate::nav::top_row_fit(&links.iter().map(|l| l.title).collect::<Vec<_>>());
            (home, links, fit)
        };
        let rows = std::iter::once(0).chain(tree.language_homes.iter().copied()).map(row).collect();
        let langs: Vec<&str> = built.iter().map(|b| b.lang.tag.as_str()).collect();
        let base_url = if site_url.ends_with('/') { site_url.to_string() } else { format!("{site_url}/") };
        Views { tree, built, site, sites: localized, rows, langs, translations, base_url }
    }

    /// The language of a listing of these pages: theirs when they share one,
    /// else the site's. A section of a language folder (`de/…`) is in that
    /// language, as its pages are.
    fn listing_lang(&self, pages: impl IntoIterator<Item = usize>) -> &str {
        crate::i18n::common_language(pages.into_iter().map(|p| self.langs[p]), &self.site.main_language)
    }

    /// The page in each of its languages, for its switcher and hreflang links.
    fn versions(&self, pi: usize) -> Vec<Translation<'a>> {
        self.translations
            .versions(pi, &self.langs)
            .into_iter()
            .map(|p| {
                let b = &self.built[p];
                Translation {
                    lang: self.langs[p],
                    name: crate::i18n::native_name(self.langs[p]),
                    url: &b.url,
                    // Absolute, as sitemap.xml's: search engines read hreflang
                    // only from fully qualified URLs.
                    href: format!("{}{}", self.base_url, kb_common::percent::encode_path(&b.url)),
                    current: p == pi,
                    default: self.langs[p] == self.site.main_language,
                }
            })
            .collect()
    }

    /// The site as a page in `lang` names it.
    fn site_in(&self, lang: &str) -> &'a SiteInfo {
        self.sites.iter().find(|(l, _)| l == lang).map_or(self.site, |(_, s)| s)
    }

    /// A node as a link from a page in `lang`; the home node is named after
    /// the site (the tree's root has no title when the content has several
    /// roots).
    fn link(&self, n: usize, lang: &str) -> Link<'a> {
        if n == 0 {
            return Link { title: &self.site_in(lang).title, url: HOME_URL };
        }
        node_link(self.tree, n)
    }

    /// The frame of a page with this `root` prefix, at `node` of the tree
    /// (`None`: not in it), in language `lang`.
    fn frame<'v>(&'v self, root: String, node: Option<usize>, lang: &'v str) -> Frame<'v> {
        let home = node.map_or(0, |n| self.tree.home_of(n));
        self.frame_at(root, node, home, lang)
    }

    /// The results page in `lang` and the home whose tree it lists: on a site
    /// split by language, that language's, its sections in the header too.
    fn results_frame<'v>(&'v self, lang: &'v str) -> (Frame<'v>, usize) {
        let home = self
            .tree
            .language_homes
            .iter()
            .copied()
            .find(|&h| self.tree.pages_under(h).first().is_some_and(|&p| self.langs[p] == lang))
            .unwrap_or(0);
        (self.frame_at(String::new(), None, home, lang), home)
    }

    fn frame_at<'v>(&'v self, root: String, node: Option<usize>, home: usize, lang: &'v str) -> Frame<'v> {
        let top = node.and_then(|n| crate::nav::top_section(self.tree, n));
        let (_, top_sections, top_fit) = self.rows.iter().find(|r| r.0 == home).unwrap_or(&self.rows[0]);
        Frame {
            root,
            site: self.site_in(lang),
            top_sections,
            top_fit: *top_fit,
            current_top: top.map(|t| self.tree.nodes[t].url.as_str()),
            locale: Locale::on_site(lang, self.site),
        }
    }

    /// The breadcrumbs of a node: home .. its parent.
    fn crumbs(&self, node: usize, lang: &str) -> Vec<Link<'a>> {
        let chain = self.tree.ancestry(node);
        chain[..chain.len().saturating_sub(1)].iter().map(|&n| self.link(n, lang)).collect()
    }

    fn child(&self, c: usize) -> Child<'a> {
        let n = &self.tree.nodes[c];
        Child {
            title: &n.title,
            url: &n.url,
            summary: n.page.and_then(|p| self.built[p].summary.as_deref()),
            is_section: !n.children.is_empty(),
            child_count: self.tree.page_count(c) - usize::from(n.page.is_some()),
        }
    }

    fn children(&self, node: usize) -> Vec<Child<'a>> {
        self.tree.nodes[node].children.iter().map(|&c| self.child(c)).collect()
    }

    /// An article: the children its text does not already link to, its
    /// sidebar and its neighbours.
    fn page_context(&self, pi: usize) -> PageContext<'_> {
        let b = &self.built[pi];
        let node = self.tree.page_node[pi];
        let all = self.children(node);
        let total = all.len();
        let children: Vec<Child> = all.into_iter().filter(|c| !b.rendered.linked_pages.contains(c.url)).collect();
        PageContext {
            frame: self.frame(root_prefix(&b.url), Some(node), self.langs[pi]),
            children_more: children.len() < total,
            children,
            page: page_view(b, self.crumbs(node, self.langs[pi]), self.versions(pi)),
            sidebar: crate::nav::sidebar(self.tree, node, &self.site_in(self.langs[pi]).title),
            pager: crate::nav::pager(self.tree, node),
        }
    }

    /// A section without a page of its own.
    fn section_context(&self, node: usize) -> SectionContext<'_> {
        let n = &self.tree.nodes[node];
        let lang = self.listing_lang(self.tree.pages_under(node));
        SectionContext {
            frame: self.frame(root_prefix(&n.url), Some(node), lang),
            section: SectionView {
                title: &n.title,
                breadcrumbs: self.crumbs(node, lang),
                children: self.children(node),
            },
            sidebar: crate::nav::sidebar(self.tree, node, &self.site_in(lang).title),
        }
    }
}

fn node_link(tree: &NavTree, n: usize) -> Link<'_> {
    Link { title: &tree.nodes[n].title, url: &tree.nodes[n].url }
}

/// What every page says of the site: its name, its size, when it was built.
/// The name is `--site-title`, else `mkdocs.yml`'s `site_name`, else the tree's
/// root (the root page's title, or the name every page's `path` starts with),
/// else the root page's title, else "Knowledge base" in the site's main
/// language ("Tietopankki" for a Finnish help centre).
pub(super) fn site_info(tree: &NavTree, built: &[Built], opts: &BuildOptions, site_name: Option<&str>) -> SiteInfo {
    let root_page = built.iter().find(|b| b.url == HOME_URL).map(|b| b.page.title.as_str());
    let main_language = crate::i18n::main_language(built.iter().map(|b| b.lang.tag.as_str()));
    let named = [opts.site_title.as_deref(), site_name, Some(tree.nodes[0].title.as_str()), root_page]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|t| !t.is_empty());
    SiteInfo {
        title: named.unwrap_or(crate::i18n::strings(&main_language).site_name).to_string(),
        named: named.is_some(),
        page_count: built.len(),
        built: today(),
        browser_semantic: opts.browser.as_ref().is_some_and(|b| b.semantic),
        languages: {
            let mut l: Vec<String> = built.iter().map(|b| b.lang.tag.clone()).collect();
            l.sort();
            l.dedup();
            l
        },
        main_language,
    }
}

/// The site in each of its languages: the default name said in it ("Tietopankki"
/// on a Finnish page of a help centre in four languages), for a site without a
/// name of its own; none for a named one.
fn localized(site: &SiteInfo) -> Vec<(String, SiteInfo)> {
    if site.named {
        return Vec::new();
    }
    let in_lang =
        |l: &String| (l.clone(), SiteInfo { title: crate::i18n::strings(l).site_name.to_string(), ..site.clone() });
    site.languages.iter().map(in_lang).collect()
}

/// The path of the site's root on its host, from `--site-url`
/// (`https://x.edu/docs` → `/docs/`): where the 404 page, which a host serves
/// at any depth, finds the site.
pub(super) fn root_path(site_url: &str) -> String {
    let path = match site_url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |i| &rest[i..]),
        None => site_url,
    };
    let path = path.split(['?', '#']).next().unwrap_or("").trim_matches('/');
    if path.is_empty() {
        "/".to_string()
    } else {
        format!("/{path}/")
    }
}

/// What the site is written from: the pages, their navigation and
/// translations, and the site's own facts.
pub(super) struct Content<'a> {
    pub tree: &'a NavTree,
    pub built: &'a [Built],
    pub translations: &'a Translations,
    pub site: &'a SiteInfo,
}

/// Renders every template into the staging folder.
pub(super) fn write_site(
    staging: &Staging,
    templates: &Templates,
    content: Content<'_>,
    opts: &BuildOptions,
    report: &mut Report,
) -> Result<(), BuildError> {
    let Content { tree, built, translations, site } = content;
    let localized = localized(site);
    let views = Views::new(tree, built, translations, (site, &localized), &opts.site_url);
    let tag_urls = write_tag_pages(staging, templates, &views, report)?;
    let mut sitemap: Vec<SitemapEntry> = Vec::new();
    let bar = progress(opts.progress, built.len() as u64, "write");
    // The content's root `index.md` is the home page's introduction, not a page of its own.
    let home_page = built.iter().position(|b| b.url == HOME_URL);
    for (pi, b) in built.iter().enumerate() {
        bar.inc(1);
        if Some(pi) == home_page {
            continue;
        }
        staging.write(&b.url, templates.render(&views.page_context(pi))?.as_bytes())?;
        report.site.html_pages += 1;
        sitemap.push((&b.url, b.page.last_updated.as_deref(), views.versions(pi)));
    }
    bar.finish_and_clear();
    for node in tree.sections().filter(|&n| tree.nodes[n].page.is_none()) {
        staging.write(&tree.nodes[node].url, templates.render(&views.section_context(node))?.as_bytes())?;
        report.site.section_pages += 1;
        sitemap.push((&tree.nodes[node].url, None, Vec::new()));
    }
    sitemap.extend(tag_urls.iter().map(|u| (u.as_str(), None, Vec::new())));

    // Home: the root page's introduction (if any) and the first level of the tree.
    let sections: Vec<HomeSection> = tree.nodes[0]
        .children
        .iter()
        .map(|&c| HomeSection {
            entry: views.child(c),
            children: tree.nodes[c].children.iter().map(|&k| views.link(k, &site.main_language)).collect(),
        })
        .collect();
    let page = home_page.map(|p| page_view(&built[p], views.crumbs(0, &site.main_language), Vec::new()));
    let frame = views.frame(String::new(), None, &views.site.main_language);
    let home_ctx = HomeContext { frame, page, sections, languages: !tree.language_homes.is_empty() };
    staging.write(HOME_URL, templates.render(&home_ctx)?.as_bytes())?;
    report.site.html_pages += 1;
    sitemap.insert(0, (HOME_URL, home_page.and_then(|p| built[p].page.last_updated.as_deref()), Vec::new()));

    let anywhere = views.frame(root_path(&opts.site_url), None, &views.site.main_language);
    // The results page in each language of the site (the main one's is search.html).
    let at_root: Vec<_> = std::iter::once(views.site.main_language.as_str())
        .chain(views.site.languages.iter().map(String::as_str).filter(|l| *l != views.site.main_language))
        .map(|l| views.results_frame(l))
        .collect();
    write_search_and_not_found(staging, templates, tree, &at_root, anywhere)?;
    write_sitemap(staging, templates, &opts.site_url, sitemap)?;
    for (dest, content) in templates.statics() {
        staging.write(dest, content.as_bytes())?;
    }
    report.site.redirects = write_redirects(staging, built)?;
    report.site.assets_copied = copy_assets(staging, &opts.content, &assets_used(built))?;
    Ok(())
}

/// The listing pages of tags without a page of their own; returns their URLs.
fn write_tag_pages(
    staging: &Staging,
    templates: &Templates,
    views: &Views<'_>,
    report: &mut Report,
) -> Result<Vec<String>, BuildError> {
    let mut urls = Vec::new();
    for (url, tag, children) in tag_pages(views.built, views.tree) {
        let lang = views.listing_lang(children.iter().filter_map(|&c| views.tree.nodes[c].page));
        let frame = views.frame(root_prefix(&url), None, lang);
        let title = frame.locale.t.tag_title.replace("{tag}", &tag);
        let section = SectionView {
            title: &title,
            breadcrumbs: vec![views.link(0, lang)],
            children: children.into_iter().map(|c| views.child(c)).collect(),
        };
        let ctx = SectionContext { frame, section, sidebar: None };
        staging.write(&url, templates.render(&ctx)?.as_bytes())?;
        report.site.tag_pages += 1;
        urls.push(url);
    }
    Ok(urls)
}

/// `search.html` and its version in each other language of the site (the
/// no-JavaScript fallback: the tree under its home; `at_root`: a frame per
/// language, each naming its page, and its home) and `404.html`.
fn write_search_and_not_found(
    staging: &Staging,
    templates: &Templates,
    tree: &NavTree,
    at_root: &[(crate::site::Frame<'_>, usize)],
    anywhere: crate::site::Frame<'_>,
) -> Result<(), BuildError> {
    use crate::site::{NotFoundContext, SearchContext, TreeNode};
    fn subtree(tree: &NavTree, node: usize) -> TreeNode<'_> {
        let n = &tree.nodes[node];
        TreeNode { title: &n.title, url: &n.url, children: n.children.iter().map(|&c| subtree(tree, c)).collect() }
    }
    for (frame, home) in at_root {
        let tree_ctx = tree.nodes[*home].children.iter().map(|&c| subtree(tree, c)).collect();
        let page = frame.locale.search_page.clone();
        staging.write(&page, templates.render(&SearchContext { frame: frame.clone(), tree: tree_ctx })?.as_bytes())?;
    }
    staging.write("404.html", templates.render(&NotFoundContext { frame: anywhere })?.as_bytes())?;
    Ok(())
}

/// What `page.html` shows of a built page.
fn page_view<'a>(
    b: &'a Built,
    breadcrumbs: Vec<crate::site::Link<'a>>,
    translations: Vec<Translation<'a>>,
) -> crate::site::PageView<'a> {
    let tags = crate::tags::of(&b.page)
        .into_iter()
        .map(|name| crate::site::TagLink { url: page_url(&crate::tags::source(&name)), name })
        .collect();
    crate::site::PageView {
        title: &b.page.title,
        url: &b.url,
        rateable: b.indexed,
        title_id: b.rendered.title_id.as_deref(),
        html: &b.rendered.html,
        toc: &b.rendered.toc,
        breadcrumbs,
        last_updated: b.page.last_updated.as_deref(),
        version: b.page.version.as_deref(),
        original_url: b.page.original_url.as_deref(),
        tags,
        source: &b.page.source,
        description: b.page.description.as_deref(),
        translations,
    }
}

/// `sitemap.xml`: every URL of the site under the deployed base URL.
/// A URL of the sitemap: the page, its last update, its versions in other
/// languages (empty when it has none).
type SitemapEntry<'a> = (&'a str, Option<&'a str>, Vec<Translation<'a>>);

/// `sitemap.xml`: every page, section and tag listing; a page in several
/// languages names each (`xhtml:link hreflang`, as its `<head>` does), so a
/// search engine that reads only the sitemap still pairs the translations.
fn write_sitemap(
    staging: &Staging,
    templates: &Templates,
    site_url: &str,
    sitemap: Vec<SitemapEntry<'_>>,
) -> Result<(), BuildError> {
    use crate::site::{SitemapContext, SitemapUrl};
    let base = if site_url.ends_with('/') { site_url.to_string() } else { format!("{site_url}/") };
    let urls = sitemap
        .into_iter()
        .map(|(u, d, alternates)| SitemapUrl {
            loc: format!("{base}{}", kb_common::percent::encode_path(u)),
            lastmod: d,
            alternates,
        })
        .collect();
    staging.write("sitemap.xml", templates.render(&SitemapContext { urls })?.as_bytes())?;
    Ok(())
}

/// Copies the files the pages link to into the site; returns how many.
fn copy_assets(staging: &Staging, content: &Path, assets: &[String]) -> Result<usize, BuildError> {
    for asset in assets {
        let from = content.join(asset);
        let to = staging.path(asset);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(|source| WriteError { path: dir.to_path_buf(), source })?;
        }
        std::fs::copy(&from, &to).map_err(|source| WriteError { path: to.clone(), source })?;
    }
    Ok(assets.len())
}

/// The listing pages of tags without a page of their own: (URL, tag, the
/// tree nodes of the pages listed).
pub(super) fn tag_pages(built: &[Built], tree: &NavTree) -> Vec<(String, String, Vec<usize>)> {
    let page_urls: HashSet<&str> = built.iter().map(|b| b.url.as_str()).collect();
    let refs: Vec<&Page> = built.iter().map(|b| &b.page).collect();
    crate::tags::listings(&refs)
        .into_iter()
        .map(|(tag, listed)| {
            let url = page_url(&crate::tags::source(&tag));
            (url, tag, listed.iter().map(|&pi| tree.page_node[pi]).collect())
        })
        .filter(|(url, _, _)| !page_urls.contains(url.as_str()))
        .collect()
}

/// A page's other addresses (`slug`, `permalink`, old URLs) answered with a
/// redirect to its page: `ADDRESS/index.html`, which every static host serves
/// for `/ADDRESS/` (and most for `/ADDRESS`). An address that is already a file
/// of the site, or that is not a plain relative path, is left alone.
fn write_redirects(staging: &Staging, built: &[Built]) -> Result<usize, BuildError> {
    let mut taken: HashSet<String> = built.iter().map(|b| b.url.clone()).collect();
    let mut written = 0;
    for b in built {
        for address in &b.page.addresses {
            let clean = address.trim_matches('/');
            let plain = !clean.is_empty()
                && clean.split('/').all(|s| !s.is_empty() && s != "." && s != ".." && !s.contains(['\\', '?', '#']))
                && !clean.chars().any(char::is_control);
            let file = format!("{clean}/index.html");
            if !plain || !taken.insert(file.clone()) {
                continue;
            }
            let to = escape(&render::relative_url(&file, &b.url));
            let title = escape(&b.page.title);
            let lang = escape(&b.lang.tag);
            // The page's own language: the notice is read before the page is.
            let moved = escape(crate::i18n::strings(&b.lang.tag).moved)
                .replace("{page}", &format!("<a href=\"{to}\">{title}</a>"));
            let html = format!(
                "<!doctype html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{title}</title>\n<link rel=\"canonical\" href=\"{to}\"><meta http-equiv=\"refresh\" content=\"0; url={to}\"></head>\n<body><p>{moved}</p></body></html>\n"
            );
            staging.write(&file, html.as_bytes())?;
            written += 1;
        }
    }
    Ok(written)
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
pub(super) fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // The date part of the RFC 3339 timestamp the index and health report use.
    search_service::service::rfc3339(secs)[..10].to_string()
}

#[cfg(test)]
mod tests {
    use crate::build::{build, BuildOptions, JudgeChoice};

    /// A knowledge base in three language folders, built without an index.
    fn built_site() -> (tempfile::TempDir, crate::report::Report) {
        built_site_named(Some("Help"))
    }

    fn built_site_named(title: Option<&str>) -> (tempfile::TempDir, crate::report::Report) {
        let dir = tempfile::tempdir().unwrap();
        let content = dir.path().join("content");
        let pages = [
            ("en/pods.md", "# Pods\n\nPods are the smallest units you deploy.\n"),
            ("en/nodes.md", "# Nodes\n\nA node is a machine.\n"),
            ("en/services.md", "# Services\n\nA service exposes pods.\n"),
            ("de/pods.md", "# Pods\n\nPods sind die kleinsten Einheiten.\n"),
            ("de/umzug.md", "---\ntitle: Umzug\naliases: [/alt/umzug/]\n---\nText.\n"),
            ("ja/pods.md", "# ポッド\n\nポッドは最小の単位です。\n"),
        ];
        for (file, text) in pages {
            let path = content.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let opts = BuildOptions {
            content,
            out: dir.path().join("out"),
            chunk: crate::chunk::ChunkOptions::default(),
            strict: false,
            templates: None,
            site_url: "https://help.example.edu/docs".into(),
            site_title: title.map(str::to_string),
            judge: JudgeChoice::Heuristic,
            llm: None,
            progress: false,
            filters: true,
            index: None,
            browser: None,
            dialect: None,
            base_path: None,
        };
        let report = build(&opts).unwrap();
        (dir, report)
    }

    #[test]
    fn every_page_says_its_language_and_links_its_translations() {
        let (dir, report) = built_site();
        let site = dir.path().join("out/site");
        let read = |url: &str| std::fs::read_to_string(site.join(url)).unwrap();
        assert_eq!(report.languages.translation_groups, 1, "the three pods pages");
        let de = read("de/pods.html");
        assert!(de.contains("<html lang=\"de\" data-languages=\"de en ja\">"), "the page's language and the site's");
        for (lang, name) in [("de", "Deutsch"), ("en", "English"), ("ja", "日本語")] {
            let current = if lang == "de" { " aria-current=\"page\"" } else { "" };
            let link =
                format!("<a href=\"../{lang}/pods.html\" hreflang=\"{lang}\" lang=\"{lang}\"{current}>{name}</a>");
            assert!(de.contains(&link), "{link}");
            let alternate = format!(
                "<link rel=\"alternate\" hreflang=\"{lang}\" href=\"https://help.example.edu/docs/{lang}/pods.html\">"
            );
            assert!(de.contains(&alternate), "{alternate}");
        }
        assert!(
            de.contains(">Zum Inhalt springen</a>")
                && de.contains("<nav class=\"lang-switch\" aria-label=\"Sprachen\">")
        );
        let ja = read("ja/pods.html");
        assert!(ja.contains("<html lang=\"ja\" data-languages=\"de en ja\">") && ja.contains(">本文へスキップ</a>"));
        assert!(ja.contains("hreflang=\"ja\" lang=\"ja\" aria-current=\"page\">日本語</a>"));
        // The sitemap pairs them too, each version naming all three and the
        // main language's as x-default; a page without translations names none.
        let sitemap = read("sitemap.xml");
        assert!(sitemap.contains("xmlns:xhtml=\"http://www.w3.org/1999/xhtml\""), "{sitemap}");
        let entry = |url: &str| {
            let at = sitemap.find(&format!("<loc>https://help.example.edu/docs/{url}</loc>")).unwrap();
            sitemap[at..at + sitemap[at..].find("</url>").unwrap()].to_string()
        };
        for lang in ["de", "en", "ja"] {
            let e = entry(&format!("{lang}/pods.html"));
            for other in ["de", "en", "ja"] {
                let link = format!(
                    "<xhtml:link rel=\"alternate\" hreflang=\"{other}\" href=\"https://help.example.edu/docs/{other}/pods.html\"/>"
                );
                assert!(e.contains(&link), "{e}");
            }
            let default = "hreflang=\"x-default\" href=\"https://help.example.edu/docs/en/pods.html\"/>";
            assert_eq!(e.matches(default).count(), 1, "{e}");
        }
        assert!(!entry("en/nodes.html").contains("xhtml:link"));
        // No translation: no switcher.
        let nodes = read("en/nodes.html");
        assert!(
            nodes.contains("<html lang=\"en\" data-languages")
                && !nodes.contains("lang-switch")
                && !nodes.contains("hreflang")
        );
    }

    /// The header's row of sections in `html`: each link's text.
    fn header_row(html: &str) -> Vec<String> {
        let at = html.find("<ul class=\"site-nav__list\">").expect("a row of sections");
        let row = &html[at..at + html[at..].find("</ul>").unwrap()];
        row.split("\">").skip(2).filter_map(|s| s.split_once("</a>").map(|(t, _)| t.to_string())).collect()
    }

    #[test]
    fn a_reader_meets_the_sections_of_the_pages_language() {
        let (dir, _) = built_site();
        let site = dir.path().join("out/site");
        let read = |url: &str| std::fs::read_to_string(site.join(url)).unwrap();
        // The top sections are the languages: the home lists them as such.
        let home = read("index.html");
        assert_eq!(header_row(&home), ["Deutsch", "English", "日本語"]);
        assert!(home.contains(">Browse by language</h2>") && home.contains("Answers to your questions"), "{home}");
        // A German page, the German listing and the German results page show
        // the German pages; an English one the English pages.
        for url in ["de/pods.html", "sections/deutsch.html", "search.de.html"] {
            assert_eq!(header_row(&read(url)), ["Pods", "Umzug"], "{url}");
        }
        assert_eq!(header_row(&read("en/nodes.html")), ["Nodes", "Pods", "Services"]);
        // The German results page's list of everything (no script, no
        // results) is the German pages'.
        let results = read("search.de.html");
        assert!(results.contains("de/umzug.html") && !results.contains("en/nodes.html"), "{results}");
        assert_eq!(header_row(&read("404.html")), ["Deutsch", "English", "日本語"]);
    }

    #[test]
    fn a_site_without_a_name_is_named_in_each_pages_language() {
        let (dir, _) = built_site_named(None);
        let site = dir.path().join("out/site");
        let read = |url: &str| std::fs::read_to_string(site.join(url)).unwrap();
        let brand = |html: &str| {
            let open = "<span class=\"brand__name\">";
            let at = html.find(open).expect("the header's name") + open.len();
            html[at..at + html[at..].find('<').unwrap()].to_string()
        };
        for (url, name) in [
            ("de/pods.html", "Wissensdatenbank"),
            ("ja/pods.html", "ナレッジベース"),
            ("en/nodes.html", "Knowledge base"),
            ("sections/deutsch.html", "Wissensdatenbank"),
            ("search.de.html", "Wissensdatenbank"),
            ("index.html", "Knowledge base"),
        ] {
            assert_eq!(brand(&read(url)), name, "{url}");
        }
        let de = read("de/pods.html");
        assert!(de.contains("<title>Pods · Wissensdatenbank</title>"), "{de}");
        assert!(de.contains(">Wissensdatenbank</a></li>"), "the first breadcrumb: {de}");
    }

    #[test]
    fn listings_take_their_pages_language_and_the_rest_the_sites() {
        let (dir, _) = built_site();
        let site = dir.path().join("out/site");
        let read = |url: &str| std::fs::read_to_string(site.join(url)).unwrap();
        // English has the most pages: the home, search and 404 pages are English.
        for url in ["index.html", "search.html", "404.html"] {
            assert!(read(url).contains("<html lang=\"en\" data-languages=\"de en ja\">"), "{url}");
        }
        // The German folder's listing is German; the redirect from a German
        // page's old address too.
        let section = read("sections/deutsch.html");
        assert!(section.contains("<html lang=\"de\" data-languages") && section.contains("2 Artikel"), "{section}");
        let moved = read("alt/umzug/index.html");
        assert!(moved.contains("<html lang=\"de\">"), "{moved}");
        assert!(
            moved.contains("<p>Diese Seite ist umgezogen: <a href=\"../../de/umzug.html\">Umzug</a>.</p>"),
            "{moved}"
        );
    }
}
