//! Render stage: a page's Markdown (the [`crate::mkdocs::Target::Html`] form) →
//! sanitised HTML, its table of contents, and the links that lead nowhere.
//!
//! pulldown-cmark parses; heading ids come from [`crate::slug`] (the same ids the
//! chunker gives sections); relative links to `.md` pages are rewritten to the
//! built `.html` pages, relative to the page that links; links to pages that do not
//! exist, and to assets that are not in the content folder, are reported with their
//! file line. The HTML then goes through ammonia: whatever raw HTML a page carries,
//! no script, event handler, `style` or `javascript:` URL survives.

use std::collections::{BTreeSet, HashMap};

use pulldown_cmark::{CowStr, Event, LinkType, Parser, Tag, TagEnd};

use crate::mkdocs::Normalized;
use crate::slug::{self, Heading};

/// An entry of the on-page table of contents.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TocEntry {
    pub level: u8,
    pub id: String,
    pub title: String,
}

/// A link that could not be followed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BadLink {
    /// 1-based line in the source file.
    pub line: usize,
    /// The link as written in the page.
    pub target: String,
}

/// A rendered page body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    pub html: String,
    pub toc: Vec<TocEntry>,
    /// Id of the page's leading `# Title`, removed from the body because the
    /// template shows the title; the template puts the id on its own `<h1>`.
    pub title_id: Option<String>,
    pub broken_links: Vec<BadLink>,
    pub missing_assets: Vec<BadLink>,
    /// Content-relative paths of assets the page uses (copied into the site).
    pub assets: BTreeSet<String>,
}

/// What the renderer knows about the rest of the site.
pub struct LinkContext<'a> {
    /// Content-relative source path (`it/wifi.md`) → site-relative URL (`it/wifi.html`).
    pub pages: &'a HashMap<String, String>,
    /// Whether a content-relative asset path (`img/map.png`) exists.
    pub asset_exists: &'a dyn Fn(&str) -> bool,
}

/// Where a relative link leads.
#[derive(Debug, PartialEq, Eq)]
enum Resolved {
    /// Not ours to touch: absolute URL, `mailto:`, in-page `#anchor`, site-absolute `/x`.
    External,
    Page(String),
    Asset(String),
    BrokenPage,
    MissingAsset,
}

/// Builds the sanitiser once; it is shared by every page of a build.
pub fn sanitizer() -> ammonia::Builder<'static> {
    let mut b = ammonia::Builder::default();
    b.add_tags(["section", "aside", "details", "summary", "figure", "figcaption"])
        .add_generic_attributes(["class"])
        .add_tag_attributes("aside", ["role"])
        .add_tag_attributes("details", ["open"])
        .add_tag_attributes("div", ["id"])
        .add_tag_attributes("td", ["align"])
        .add_tag_attributes("th", ["align"])
        .link_rel(Some("noopener noreferrer"));
    for h in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        b.add_tag_attributes(h, ["id"]);
    }
    b
}

/// Renders one page. `source` is its content-relative path, `url` its site URL,
/// `body_line` the file line on which the body starts.
pub fn render(
    md: &Normalized,
    source: &str,
    url: &str,
    title: &str,
    body_line: usize,
    ctx: &LinkContext<'_>,
    clean: &ammonia::Builder<'_>,
) -> Rendered {
    let headings = slug::headings(&md.text);
    let skip_title = headings
        .first()
        .filter(|h| h.level == 1 && normalise_title(&h.text) == normalise_title(title))
        .map(|h| h.range.start);
    let mut out = Rendered {
        title_id: skip_title.and(headings.first().map(|h| h.id.clone())),
        toc: headings
            .iter()
            .filter(|h| (2..=3).contains(&h.level))
            .map(|h| TocEntry { level: h.level, id: h.id.clone(), title: h.text.clone() })
            .collect(),
        ..Rendered::default()
    };

    let mut events = Vec::new();
    let mut heading_index = 0;
    let mut skipping = false;
    let mut missing_image_depth = 0;
    let mut broken_depth: Vec<bool> = Vec::new();
    let line_of = |offset: usize| body_line + md.source_line(offset);
    for (event, range) in Parser::new_ext(&md.text, slug::markdown_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, classes, attrs, .. }) => {
                let h: Option<&Heading> = headings.get(heading_index);
                heading_index += 1;
                if skip_title == Some(range.start) {
                    skipping = true;
                    continue;
                }
                let id = h.map(|h| CowStr::from(h.id.clone()));
                events.push(Event::Start(Tag::Heading { level, id, classes, attrs }));
            }
            Event::End(TagEnd::Heading(level)) => {
                if skipping {
                    skipping = false;
                    continue;
                }
                if let Some(h) = headings.get(heading_index.saturating_sub(1)) {
                    events.push(Event::Html(
                        format!(
                            " <a class=\"headerlink\" href=\"#{}\" aria-label=\"Link to this section\">#</a>",
                            h.id
                        )
                        .into(),
                    ));
                }
                events.push(Event::End(TagEnd::Heading(level)));
            }
            _ if skipping => {}
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                match rewrite(&dest_url, link_type, source, url, line_of(range.start), ctx, &mut out) {
                    Some(dest) if dest.is_empty() => {
                        // A link to a page that does not exist: keep the words, not the dead link.
                        broken_depth.push(true);
                        events.push(Event::Html("<span class=\"broken-link\" title=\"The linked page or file is not in the knowledge base\">".into()));
                    }
                    dest => {
                        broken_depth.push(false);
                        events.push(Event::Start(Tag::Link {
                            link_type,
                            dest_url: dest.unwrap_or(dest_url),
                            title,
                            id,
                        }));
                    }
                }
            }
            Event::End(TagEnd::Link) => {
                if broken_depth.pop() == Some(true) {
                    events.push(Event::Html("</span>".into()));
                } else {
                    events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                match rewrite(&dest_url, link_type, source, url, line_of(range.start), ctx, &mut out) {
                    Some(dest) if dest.is_empty() => {
                        // The image is missing: show its alt text instead of a broken icon.
                        missing_image_depth += 1;
                        events.push(Event::Html("<span class=\"missing-image\">".into()));
                    }
                    dest => events.push(Event::Start(Tag::Image {
                        link_type,
                        dest_url: dest.unwrap_or(dest_url),
                        title,
                        id,
                    })),
                }
            }
            Event::Html(html) => {
                let html = rewrite_raw_html(&html, source, url, line_of(range.start), ctx, &mut out);
                events.push(Event::Html(html.into()));
            }
            Event::InlineHtml(html) => {
                let html = rewrite_raw_html(&html, source, url, line_of(range.start), ctx, &mut out);
                events.push(Event::InlineHtml(html.into()));
            }
            Event::End(TagEnd::Image) if missing_image_depth > 0 => {
                missing_image_depth -= 1;
                events.push(Event::Html("</span>".into()));
            }
            other => events.push(other),
        }
    }
    let mut raw = String::with_capacity(md.text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut raw, events.into_iter());
    out.html = clean.clean(&raw).to_string();
    out
}

fn normalise_title(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// The new destination of a link (`None`: leave it), recording what is broken.
/// `Some("")` when the target is missing: the caller shows the text without a link.
#[allow(clippy::too_many_arguments)]
fn rewrite(
    dest: &str,
    link_type: LinkType,
    source: &str,
    url: &str,
    line: usize,
    ctx: &LinkContext<'_>,
    out: &mut Rendered,
) -> Option<CowStr<'static>> {
    if matches!(link_type, LinkType::Email | LinkType::Autolink) {
        return None;
    }
    let (path, suffix) = split_suffix(dest);
    match resolve(path, source, ctx) {
        Resolved::External => None,
        Resolved::Page(target_url) => Some(format!("{}{}", relative_url(url, &target_url), suffix).into()),
        Resolved::Asset(asset) => {
            let rewritten = relative_url(url, &asset);
            out.assets.insert(asset);
            Some(format!("{rewritten}{suffix}").into())
        }
        Resolved::BrokenPage => {
            out.broken_links.push(BadLink { line, target: dest.to_string() });
            Some(CowStr::from(""))
        }
        Resolved::MissingAsset => {
            out.missing_assets.push(BadLink { line, target: dest.to_string() });
            Some(CowStr::from(""))
        }
    }
}

/// Rewrites `href="…"` and `src="…"` in a page's raw HTML the way Markdown links
/// are rewritten; an attribute whose target is missing is removed (and reported),
/// so the element shows its text or alt text instead of a dead link.
fn rewrite_raw_html(
    html: &str,
    source: &str,
    url: &str,
    line: usize,
    ctx: &LinkContext<'_>,
    out: &mut Rendered,
) -> String {
    let mut result = String::with_capacity(html.len());
    let mut rest = html;
    loop {
        let lower = rest.to_ascii_lowercase();
        let found = ["href=", "src="]
            .iter()
            .filter_map(|attr| lower.find(attr).map(|i| (i, attr.len())))
            .filter(|(i, _)| *i == 0 || lower.as_bytes()[i - 1].is_ascii_whitespace())
            .min();
        let Some((at, attr_len)) = found else { break };
        let value_start = at + attr_len;
        let quote = rest[value_start..].chars().next().filter(|c| *c == '"' || *c == '\'');
        let Some(q) = quote else {
            result.push_str(&rest[..value_start]);
            rest = &rest[value_start..];
            continue;
        };
        let Some(len) = rest[value_start + 1..].find(q) else {
            break;
        };
        let value = &rest[value_start + 1..value_start + 1 + len];
        let attr_end = value_start + 1 + len + 1;
        match rewrite(value, LinkType::Inline, source, url, line, ctx, out) {
            Some(new) if new.is_empty() => result.push_str(rest[..at].trim_end()),
            Some(new) => {
                result.push_str(&rest[..value_start + 1]);
                result.push_str(&new);
                result.push(q);
            }
            None => result.push_str(&rest[..attr_end]),
        }
        rest = &rest[attr_end..];
    }
    result.push_str(rest);
    result
}

/// `a/b.md#x?y` → (`a/b.md`, `#x?y`): the path and what follows it.
fn split_suffix(dest: &str) -> (&str, &str) {
    match dest.find(['#', '?']) {
        Some(i) => (&dest[..i], &dest[i..]),
        None => (dest, ""),
    }
}

fn resolve(path: &str, source: &str, ctx: &LinkContext<'_>) -> Resolved {
    let is_scheme = path.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if path.is_empty() || is_scheme || path.starts_with("//") || path.starts_with('/') {
        return Resolved::External;
    }
    let decoded = percent_decode(path);
    let dir = source.rsplit_once('/').map_or("", |(d, _)| d);
    let Some(joined) = join(dir, &decoded) else {
        // Climbs above the content root: it cannot be a page of ours.
        return if decoded.ends_with(".md") { Resolved::BrokenPage } else { Resolved::External };
    };
    let last = joined.rsplit('/').next().unwrap_or("");
    let candidates: Vec<String> = if joined.ends_with(".md") {
        vec![joined.clone()]
    } else if decoded.ends_with('/') || joined.is_empty() {
        vec![format!("{}index.md", with_slash(&joined)), format!("{}.md", joined.trim_end_matches('/'))]
    } else if !last.contains('.') {
        vec![format!("{joined}.md"), format!("{joined}/index.md")]
    } else {
        return if (ctx.asset_exists)(&joined) { Resolved::Asset(joined) } else { Resolved::MissingAsset };
    };
    for c in &candidates {
        if let Some(url) = ctx.pages.get(c) {
            return Resolved::Page(url.clone());
        }
    }
    Resolved::BrokenPage
}

fn with_slash(s: &str) -> String {
    if s.is_empty() || s.ends_with('/') {
        s.to_string()
    } else {
        format!("{s}/")
    }
}

/// Joins `rel` onto `dir` and resolves `.` and `..`; `None` if it leaves the root.
fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// The URL of `to` relative to the page at `from` (both site-relative).
pub fn relative_url(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = from.split('/').collect::<Vec<_>>();
    let from_dir = &from_dir[..from_dir.len().saturating_sub(1)];
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let common = common.min(to_parts.len().saturating_sub(1));
    let mut out = String::new();
    for _ in common..from_dir.len() {
        out.push_str("../");
    }
    out.push_str(&to_parts[common..].join("/"));
    out
}

/// `../` repeated once per folder of `url`: the way from a page back to the root.
pub fn root_prefix(url: &str) -> String {
    "../".repeat(url.matches('/').count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mkdocs::{normalize, Target};

    fn site() -> HashMap<String, String> {
        [
            ("it/wifi.md", "it/wifi.html"),
            ("it/index.md", "it/index.html"),
            ("index.md", "index.html"),
            ("a b.md", "a b.html"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    fn go(md: &str, source: &str) -> Rendered {
        let pages = site();
        let exists = |p: &str| p == "img/map.png";
        let ctx = LinkContext { pages: &pages, asset_exists: &exists };
        let n = normalize(md, Target::Html, &|_| None);
        let url = source.replace(".md", ".html");
        render(&n, source, &url, "Title", 10, &ctx, &sanitizer())
    }

    #[test]
    fn relative_urls() {
        assert_eq!(relative_url("a/b/c.html", "a/x.html"), "../x.html");
        assert_eq!(relative_url("a/b.html", "a/b.html"), "b.html");
        assert_eq!(relative_url("index.html", "it/wifi.html"), "it/wifi.html");
        assert_eq!(relative_url("it/wifi.html", "index.html"), "../index.html");
        assert_eq!(root_prefix("a/b/c.html"), "../../");
    }

    #[test]
    fn broken_links_keep_their_words_only() {
        let r = go("See [the old handbook](old.md) now.\n", "it/vpn.md");
        assert!(r.html.contains("<span class=\"broken-link\" title=\"The linked page or file is not in the knowledge base\">the old handbook</span>"), "{}", r.html);
        assert!(!r.html.contains("old.md"));
    }

    #[test]
    fn md_links_are_rewritten_and_broken_ones_reported() {
        let r = go(
            "# Title\n\nSee [Wi-Fi](wifi.md#setup), [home](../index.md), [IT](./), [sp](../a%20b.md),\n[gone](../advising/old.md) and [web](https://x.example/a.md).\n",
            "it/vpn.md",
        );
        assert!(r.html.contains("href=\"wifi.html#setup\""), "{}", r.html);
        assert!(r.html.contains("href=\"../index.html\""));
        assert!(r.html.contains("href=\"index.html\""));
        assert!(r.html.contains("href=\"../a%20b.html\"") || r.html.contains("href=\"../a b.html\""), "{}", r.html);
        assert!(r.html.contains("href=\"https://x.example/a.md\""));
        assert!(!r.html.contains("old.md"));
        assert_eq!(r.broken_links, vec![BadLink { line: 13, target: "../advising/old.md".into() }]);
    }

    #[test]
    fn title_heading_is_lifted_and_ids_assigned() {
        let r = go("# Title\n\n## Set up\n\ntext\n\n### Step 1\n\n## Set up\n", "it/vpn.md");
        assert_eq!(r.title_id.as_deref(), Some("title"));
        assert!(!r.html.contains("<h1"));
        assert!(r.html.contains("<h2 id=\"set-up\">Set up <a class=\"headerlink\" href=\"#set-up\""), "{}", r.html);
        assert!(r.html.contains("<h2 id=\"set-up_1\">"));
        let toc: Vec<_> = r.toc.iter().map(|t| (t.level, t.id.as_str())).collect();
        assert_eq!(toc, vec![(2, "set-up"), (3, "step-1"), (2, "set-up_1")]);
    }

    #[test]
    fn assets_are_kept_or_reported() {
        let r = go("![Map](../img/map.png)\n\n![Lost](../img/lost.png)\n", "it/vpn.md");
        assert!(r.html.contains("src=\"../img/map.png\""));
        assert!(r.assets.contains("img/map.png"));
        assert!(r.html.contains("<span class=\"missing-image\">Lost</span>"), "{}", r.html);
        assert_eq!(r.missing_assets, vec![BadLink { line: 12, target: "../img/lost.png".into() }]);
    }

    #[test]
    fn raw_html_links_are_rewritten_too() {
        let r = go("<a href=\"wifi.md\">Wi-Fi</a> <img src=\"../img/map.png\" alt=\"map\"> <img src='pics/lost.png' alt=\"lost\"> <a href=\"nope.md\">dead</a>\n", "it/vpn.md");
        assert!(r.html.contains("<a href=\"wifi.html\""), "{}", r.html);
        assert!(r.html.contains("src=\"../img/map.png\""));
        assert!(!r.html.contains("lost.png") && r.html.contains("alt=\"lost\""), "{}", r.html);
        assert!(!r.html.contains("nope.md") && r.html.contains(">dead</a>"), "{}", r.html);
        assert_eq!(r.missing_assets.len(), 1);
        assert_eq!(r.broken_links.len(), 1);
    }

    #[test]
    fn hostile_html_is_inert() {
        let md = "<script>alert(1)</script>\n\n<img src=x onerror=\"alert(2)\">\n\n[click](javascript:alert(3))\n\n<a href=\"javascript:alert(4)\" onclick=\"x()\">a</a>\n\n<div style=\"background:url(javascript:alert(5))\" onmouseover=\"y()\">d</div>\n\n<iframe src=\"https://evil.example\"></iframe>\n\n<svg onload=alert(6)></svg>\n";
        let r = go(md, "x.md");
        let lower = r.html.to_lowercase();
        for bad in
            ["<script", "onerror", "javascript:", "onclick", "onmouseover", "style=", "<iframe", "onload", "<svg"]
        {
            assert!(!lower.contains(bad), "{bad} survived: {}", r.html);
        }
        assert!(r.html.contains(">click</a>") || r.html.contains("click"), "{}", r.html);
    }

    #[test]
    fn admonitions_survive_sanitising() {
        let r = go("!!! warning \"Deadline\"\n    Pay **now**.\n", "x.md");
        assert!(r.html.contains("<aside class=\"admonition warning\" role=\"note\">"), "{}", r.html);
        assert!(r.html.contains("<p class=\"admonition-title\">Deadline</p>"));
        assert!(r.html.contains("<strong>now</strong>"));
    }
}
