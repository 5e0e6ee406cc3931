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
    escape, Child, Frame, HomeContext, HomeSection, Link, PageContext, SectionContext, SectionView, SiteInfo, Templates,
};
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
    top_sections: Vec<Link<'a>>,
    top_fit: usize,
}

impl<'a> Views<'a> {
    fn new(tree: &'a NavTree, built: &'a [Built], site: &'a SiteInfo) -> Views<'a> {
        let top_sections: Vec<Link> = tree.nodes[0].children.iter().map(|&c| node_link(tree, c)).collect();
        let titles: Vec<&str> = top_sections.iter().map(|l| l.title).collect();
        let top_fit = crate::nav::top_row_fit(&titles);
        Views { tree, built, site, top_sections, top_fit }
    }

    /// A node as a link; the home node is named after the site (the tree's
    /// root has no title when the content has several roots).
    fn link(&self, n: usize) -> Link<'a> {
        if n == 0 {
            return Link { title: &self.site.title, url: HOME_URL };
        }
        node_link(self.tree, n)
    }

    /// The frame of a page with this `root` prefix, at `node` of the tree (`None`: not in it).
    fn frame(&self, root: String, node: Option<usize>) -> Frame<'_> {
        let top = node.and_then(|n| crate::nav::top_section(self.tree, n));
        Frame {
            root,
            site: self.site,
            top_sections: &self.top_sections,
            top_fit: self.top_fit,
            current_top: top.map(|t| self.tree.nodes[t].url.as_str()),
        }
    }

    /// The breadcrumbs of a node: home .. its parent.
    fn crumbs(&self, node: usize) -> Vec<Link<'a>> {
        let chain = self.tree.ancestry(node);
        chain[..chain.len().saturating_sub(1)].iter().map(|&n| self.link(n)).collect()
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
            frame: self.frame(root_prefix(&b.url), Some(node)),
            children_more: children.len() < total,
            children,
            page: page_view(b, self.crumbs(node)),
            sidebar: crate::nav::sidebar(self.tree, node, &self.site.title),
            pager: crate::nav::pager(self.tree, node),
        }
    }

    /// A section without a page of its own.
    fn section_context(&self, node: usize) -> SectionContext<'_> {
        let n = &self.tree.nodes[node];
        SectionContext {
            frame: self.frame(root_prefix(&n.url), Some(node)),
            section: SectionView { title: &n.title, breadcrumbs: self.crumbs(node), children: self.children(node) },
            sidebar: crate::nav::sidebar(self.tree, node, &self.site.title),
        }
    }
}

fn node_link(tree: &NavTree, n: usize) -> Link<'_> {
    Link { title: &tree.nodes[n].title, url: &tree.nodes[n].url }
}

/// What every page says of the site: its name, its size, when it was built.
/// The name is `--site-title`, else `mkdocs.yml`'s `site_name`, else the tree's
/// root (the root page's title, or the name every page's `path` starts with),
/// else the root page's title, else "Knowledge base".
pub(super) fn site_info(tree: &NavTree, built: &[Built], opts: &BuildOptions, site_name: Option<&str>) -> SiteInfo {
    let root_page = built.iter().find(|b| b.url == HOME_URL).map(|b| b.page.title.as_str());
    let title = [opts.site_title.as_deref(), site_name, Some(tree.nodes[0].title.as_str()), root_page]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|t| !t.is_empty())
        .unwrap_or("Knowledge base");
    SiteInfo {
        title: title.to_string(),
        page_count: built.len(),
        built: today(),
        browser_semantic: opts.browser.as_ref().is_some_and(|b| b.semantic),
    }
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

/// Renders every template into the staging folder.
pub(super) fn write_site(
    staging: &Staging,
    templates: &Templates,
    tree: &NavTree,
    built: &[Built],
    site: &SiteInfo,
    opts: &BuildOptions,
    report: &mut Report,
) -> Result<(), BuildError> {
    let views = Views::new(tree, built, site);
    let tag_urls = write_tag_pages(staging, templates, &views, report)?;
    let mut sitemap: Vec<(&str, Option<&str>)> = Vec::new();
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
        sitemap.push((&b.url, b.page.last_updated.as_deref()));
    }
    bar.finish_and_clear();
    for node in tree.sections().filter(|&n| tree.nodes[n].page.is_none()) {
        staging.write(&tree.nodes[node].url, templates.render(&views.section_context(node))?.as_bytes())?;
        report.site.section_pages += 1;
        sitemap.push((&tree.nodes[node].url, None));
    }
    sitemap.extend(tag_urls.iter().map(|u| (u.as_str(), None)));

    // Home: the root page's introduction (if any) and the first level of the tree.
    let sections: Vec<HomeSection> = tree.nodes[0]
        .children
        .iter()
        .map(|&c| HomeSection {
            entry: views.child(c),
            children: tree.nodes[c].children.iter().map(|&k| views.link(k)).collect(),
        })
        .collect();
    let page = home_page.map(|p| page_view(&built[p], views.crumbs(0)));
    let home_ctx = HomeContext { frame: views.frame(String::new(), None), page, sections };
    staging.write(HOME_URL, templates.render(&home_ctx)?.as_bytes())?;
    report.site.html_pages += 1;
    sitemap.insert(0, (HOME_URL, home_page.and_then(|p| built[p].page.last_updated.as_deref())));

    let anywhere = views.frame(root_path(&opts.site_url), None);
    write_search_and_not_found(staging, templates, tree, views.frame(String::new(), None), anywhere)?;
    write_sitemap(staging, templates, &opts.site_url, &sitemap)?;
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
    for (url, title, children) in tag_pages(views.built, views.tree) {
        let section = SectionView {
            title: &title,
            breadcrumbs: vec![views.link(0)],
            children: children.into_iter().map(|c| views.child(c)).collect(),
        };
        let ctx = SectionContext { frame: views.frame(root_prefix(&url), None), section, sidebar: None };
        staging.write(&url, templates.render(&ctx)?.as_bytes())?;
        report.site.tag_pages += 1;
        urls.push(url);
    }
    Ok(urls)
}

/// `search.html` (the no-JavaScript fallback: the whole tree) and `404.html`.
fn write_search_and_not_found(
    staging: &Staging,
    templates: &Templates,
    tree: &NavTree,
    at_root: crate::site::Frame<'_>,
    anywhere: crate::site::Frame<'_>,
) -> Result<(), BuildError> {
    use crate::site::{NotFoundContext, SearchContext, TreeNode};
    fn subtree(tree: &NavTree, node: usize) -> TreeNode<'_> {
        let n = &tree.nodes[node];
        TreeNode { title: &n.title, url: &n.url, children: n.children.iter().map(|&c| subtree(tree, c)).collect() }
    }
    let tree_ctx = tree.nodes[0].children.iter().map(|&c| subtree(tree, c)).collect();
    staging.write("search.html", templates.render(&SearchContext { frame: at_root, tree: tree_ctx })?.as_bytes())?;
    staging.write("404.html", templates.render(&NotFoundContext { frame: anywhere })?.as_bytes())?;
    Ok(())
}

/// What `page.html` shows of a built page.
fn page_view<'a>(b: &'a Built, breadcrumbs: Vec<crate::site::Link<'a>>) -> crate::site::PageView<'a> {
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
    }
}

/// `sitemap.xml`: every URL of the site under the deployed base URL.
fn write_sitemap(
    staging: &Staging,
    templates: &Templates,
    site_url: &str,
    sitemap: &[(&str, Option<&str>)],
) -> Result<(), BuildError> {
    use crate::site::{SitemapContext, SitemapUrl};
    let base = if site_url.ends_with('/') { site_url.to_string() } else { format!("{site_url}/") };
    let urls = sitemap
        .iter()
        .map(|(u, d)| SitemapUrl { loc: format!("{base}{}", kb_common::percent::encode_path(u)), lastmod: *d })
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

/// The listing pages of tags without a page of their own: (URL, title, the
/// tree nodes of the pages listed).
pub(super) fn tag_pages(built: &[Built], tree: &NavTree) -> Vec<(String, String, Vec<usize>)> {
    let page_urls: HashSet<&str> = built.iter().map(|b| b.url.as_str()).collect();
    let refs: Vec<&Page> = built.iter().map(|b| &b.page).collect();
    crate::tags::listings(&refs)
        .into_iter()
        .map(|(tag, listed)| {
            let url = page_url(&crate::tags::source(&tag));
            (url, format!("Tag: {tag}"), listed.iter().map(|&pi| tree.page_node[pi]).collect())
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
            let html = format!(
                "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n<link rel=\"canonical\" href=\"{to}\"><meta http-equiv=\"refresh\" content=\"0; url={to}\"></head>\n<body><p>This page moved to <a href=\"{to}\">{title}</a>.</p></body></html>\n"
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
