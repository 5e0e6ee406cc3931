//! Render stage: a page's Markdown (the [`kb_dialect::Target::Html`] form) →
//! sanitised HTML, its table of contents, and the links that lead nowhere.
//!
//! pulldown-cmark parses; heading ids come from [`kb_common::slug`] (the same ids the
//! chunker gives sections); relative links to `.md` pages are rewritten to the
//! built `.html` pages, relative to the page that links; links to pages that do not
//! exist, and to assets that are not in the content folder, are reported with their
//! file line. The HTML then goes through ammonia: whatever raw HTML a page carries,
//! no script, event handler, `style` or `javascript:` URL survives.
//!
//! Every URL a page puts into a link or image (Markdown links, images, autolinks,
//! reference links, raw HTML `href`/`src`/`srcset`/…) is checked by
//! [`kb_common::safe_url::check`] where its file line is known, and a refused one is
//! dropped and reported ([`Rendered::blocked_urls`]); the sanitiser applies the same
//! check once more to whatever reaches it, as the last word.
//!
//! Ids that content can set (raw HTML `id`, footnote names) get [`USER_ID_PREFIX`],
//! so a page cannot clobber `window.x` / `document.x` globals our scripts read; the
//! heading ids this module generates (the anchors the search index links to) are
//! kept as they are, and in-page `#fragment` links follow whichever form the target
//! has.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use pulldown_cmark::{CowStr, Event, LinkType, Parser, Tag, TagEnd};

use kb_common::safe_url;
use kb_common::slug::{self, Heading};
use kb_dialect::Normalized;

/// Prefix of every id that page content sets (GitHub uses the same one), so that
/// `<div id="forms">` cannot shadow `document.forms` and the like.
pub const USER_ID_PREFIX: &str = "user-content-";

/// Attributes whose value is a URL (or, for `srcset`, a list of them). Only a few
/// survive the sanitiser, but all are checked so that the report names them.
const URL_ATTRS: [&str; 21] = [
    "href",
    "src",
    "srcset",
    "xlink:href",
    "action",
    "formaction",
    "data",
    "poster",
    "ping",
    "cite",
    "background",
    "longdesc",
    "usemap",
    "codebase",
    "archive",
    "classid",
    "profile",
    "manifest",
    "icon",
    "dynsrc",
    "lowsrc",
];

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

/// A URL that was removed because it could run script (see [`kb_common::safe_url`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BlockedUrl {
    /// 1-based line in the source file.
    pub line: usize,
    /// The URL as written in the page.
    pub url: String,
    pub reason: String,
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
    /// Site-root links to pages of the source site that are not in this
    /// knowledge base (`/api/…` beside `/docs/…`): kept as words, not broken.
    pub outside_links: Vec<BadLink>,
    /// Content-relative paths of assets the page uses (copied into the site).
    pub assets: BTreeSet<String>,
    /// Site URLs of the pages the page links to (a section page that links to
    /// every child needs no generated list of them).
    pub linked_pages: BTreeSet<String>,
    /// Links, images and raw-HTML URLs removed as unsafe.
    pub blocked_urls: Vec<BlockedUrl>,
}

/// A link as written → the source path of the file it names by name alone.
pub type ByName<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What the renderer knows about the rest of the site.
pub struct LinkContext<'a> {
    /// Content-relative source path (`it/wifi.md`) → site-relative URL (`it/wifi.html`).
    pub pages: &'a HashMap<String, String>,
    /// Other addresses of pages (`slug`, `permalink`, old URLs; no leading `/`)
    /// → site-relative URL.
    pub addresses: &'a HashMap<String, String>,
    /// The path the source site served the content under (`/docs`), for links
    /// written from the site's root; `None` finds it per link (below).
    pub base_path: Option<&'a str>,
    /// Whether a content-relative asset path (`img/map.png`) exists.
    pub asset_exists: &'a dyn Fn(&str) -> bool,
    /// For pages whose tool resolves a relative link that leads nowhere by the
    /// file's name anywhere in the knowledge base (Obsidian and Quartz's
    /// "shortest path"): the link as written → the page's source path.
    pub by_name: Option<ByName<'a>>,
    /// For pages whose tool also reads a relative file link from the content
    /// root when it leads nowhere from the page's folder (Docusaurus).
    pub from_root: bool,
}

impl<'a> LinkContext<'a> {
    /// A site of these pages and assets, with no other addresses.
    pub fn new(pages: &'a HashMap<String, String>, asset_exists: &'a dyn Fn(&str) -> bool) -> LinkContext<'a> {
        static NONE: std::sync::OnceLock<HashMap<String, String>> = std::sync::OnceLock::new();
        LinkContext {
            pages,
            addresses: NONE.get_or_init(HashMap::new),
            base_path: None,
            asset_exists,
            by_name: None,
            from_root: false,
        }
    }
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
    /// A page of the source site outside this knowledge base: the link's path
    /// shares no folder with the content.
    Outside,
}

/// The sanitiser for one page. `heading_ids` are the ids [`render`] gave the page's
/// headings: they keep their form (they are the anchors search results and TOCs
/// link to); every other `id` or `name` gets [`USER_ID_PREFIX`].
pub fn sanitizer(heading_ids: Arc<HashSet<String>>) -> ammonia::Builder<'static> {
    let mut b = ammonia::Builder::default();
    b.add_tags(["section", "aside", "details", "summary", "figure", "figcaption"])
        .add_generic_attributes(["class"])
        .add_tag_attributes("aside", ["role"])
        .add_tag_attributes("details", ["open"])
        .add_tag_attributes("div", ["id"])
        // Obsidian `^block` ids become `<span id>` anchors (prefixed like every content id).
        .add_tag_attributes("span", ["id"])
        .add_tag_attributes("td", ["align"])
        .add_tag_attributes("th", ["align"])
        // Ammonia's default list also allows tel:, sms:, magnet:, …; ours is the one
        // list of the whole build.
        .url_schemes(safe_url::ALLOWED_SCHEMES.into_iter().collect())
        .link_rel(Some("noopener noreferrer"))
        .attribute_filter(move |element, attr, value| filter_attribute(&heading_ids, element, attr, value))
        // A code block wider than the page scrolls: keyboard readers must be
        // able to reach it to scroll it (WCAG 2.1.1; axe's
        // scrollable-region-focusable), with or without scripts.
        .set_tag_attribute_value("pre", "tabindex", "0");
    for h in ["h1", "h2", "h3", "h4", "h5", "h6"] {
        b.add_tag_attributes(h, ["id"]);
    }
    b
}

/// The sanitiser's last pass over each attribute that survived its allow-list.
fn filter_attribute<'u>(
    heading_ids: &HashSet<String>,
    element: &str,
    attr: &str,
    value: &'u str,
) -> Option<Cow<'u, str>> {
    let is_heading = matches!(element, "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
    match attr {
        "id" if is_heading && heading_ids.contains(value) => Some(Cow::Borrowed(value)),
        "id" | "name" => Some(Cow::Owned(format!("{USER_ID_PREFIX}{value}"))),
        _ if URL_ATTRS.contains(&attr) => {
            if !safe_url::is_safe(value) {
                return None;
            }
            // An in-page link to an id the content set follows that id's prefix.
            match value.strip_prefix('#') {
                // `#` and `#top` scroll to the top of the page without naming an id.
                Some(fragment)
                    if attr == "href" && !matches!(fragment, "" | "top") && !heading_ids.contains(fragment) =>
                {
                    Some(Cow::Owned(format!("#{USER_ID_PREFIX}{fragment}")))
                }
                _ => Some(Cow::Borrowed(value)),
            }
        }
        _ => Some(Cow::Borrowed(value)),
    }
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
) -> Rendered {
    let headings = slug::headings(&md.text);
    let skip_title = headings
        .first()
        .filter(|h| h.level == 1 && normalise_title(&h.text) == normalise_title(title))
        .map(|h| h.range.start);
    let out = Rendered {
        title_id: skip_title.and(headings.first().map(|h| h.id.clone())),
        toc: headings
            .iter()
            .filter(|h| (2..=3).contains(&h.level))
            .map(|h| TocEntry { level: h.level, id: h.id.clone(), title: h.text.clone() })
            .collect(),
        ..Rendered::default()
    };
    let mut walk = Walk {
        page: Page { md, source, url, body_line, ctx },
        headings: &headings,
        skip_title,
        out,
        events: Vec::new(),
        heading_index: 0,
        skipping: false,
        missing_image_depth: 0,
        broken_depth: Vec::new(),
        html_block: None,
    };
    for (event, range) in Parser::new_ext(&md.text, slug::markdown_options()).into_offset_iter() {
        walk.event(event, range);
    }
    let Walk { events, mut out, .. } = walk;
    let mut raw = String::with_capacity(md.text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut raw, events.into_iter());
    let heading_ids: HashSet<String> = headings.iter().map(|h| h.id.clone()).collect();
    out.html = sanitizer(Arc::new(heading_ids)).clean(&raw).to_string();
    out
}

/// The page being rendered, as the rewrites need it.
struct Page<'a, 'c> {
    md: &'a Normalized,
    source: &'a str,
    url: &'a str,
    body_line: usize,
    ctx: &'a LinkContext<'c>,
}

impl Page<'_, '_> {
    /// The file line of an offset in the normalised text.
    fn line_of(&self, offset: usize) -> usize {
        self.body_line + self.md.source_line(offset)
    }
}

/// The walk over one page's Markdown events: heading ids and anchors, the title
/// heading left out, links and images checked and rewritten (broken or blocked
/// ones kept as words), raw HTML rewritten a block at a time. What it refuses
/// or cannot resolve is recorded in `out`.
struct Walk<'a, 'c> {
    page: Page<'a, 'c>,
    headings: &'a [Heading],
    /// Where the heading that repeats the title starts, if one does.
    skip_title: Option<usize>,
    out: Rendered,
    events: Vec<Event<'a>>,
    heading_index: usize,
    /// Inside the title heading, which is left out.
    skipping: bool,
    missing_image_depth: usize,
    /// For each open link: whether it was replaced by a `<span>` (broken or blocked).
    broken_depth: Vec<bool>,
    /// The lines of the HTML block being read, with their file lines: a tag may
    /// span lines, so the block is rewritten as a whole.
    html_block: Option<Vec<(usize, CowStr<'a>)>>,
}

impl<'a> Walk<'a, '_> {
    fn event(&mut self, event: Event<'a>, range: Range<usize>) {
        match event {
            Event::Start(Tag::Heading { level, classes, attrs, .. }) => {
                let h: Option<&Heading> = self.headings.get(self.heading_index);
                self.heading_index += 1;
                if self.skip_title == Some(range.start) {
                    self.skipping = true;
                    return;
                }
                let id = h.map(|h| CowStr::from(h.id.clone()));
                self.events.push(Event::Start(Tag::Heading { level, id, classes, attrs }));
            }
            Event::End(TagEnd::Heading(level)) => self.heading_end(level),
            _ if self.skipping => {}
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                self.link_start(link_type, dest_url, title, id, range.start)
            }
            Event::End(TagEnd::Link) => {
                if self.broken_depth.pop() == Some(true) {
                    self.events.push(Event::Html("</span>".into()));
                } else {
                    self.events.push(Event::End(TagEnd::Link));
                }
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                self.image_start(link_type, dest_url, title, id, range.start)
            }
            Event::End(TagEnd::Image) if self.missing_image_depth > 0 => {
                self.missing_image_depth -= 1;
                self.events.push(Event::Html("</span>".into()));
            }
            Event::Start(Tag::HtmlBlock) => {
                self.html_block = Some(Vec::new());
                self.events.push(Event::Start(Tag::HtmlBlock));
            }
            Event::Html(html) if self.html_block.is_some() => {
                let line = self.page.line_of(range.start);
                if let Some(lines) = self.html_block.as_mut() {
                    lines.push((line, html));
                }
            }
            Event::End(TagEnd::HtmlBlock) => self.html_block_end(range.start),
            Event::Html(html) => {
                let html = self.raw_html(&html, range.start);
                self.events.push(Event::Html(html.into()));
            }
            Event::InlineHtml(html) => {
                let html = self.raw_html(&html, range.start);
                self.events.push(Event::InlineHtml(html.into()));
            }
            other => self.events.push(other),
        }
    }

    /// The end of a heading: its anchor link, unless it is the title's.
    fn heading_end(&mut self, level: pulldown_cmark::HeadingLevel) {
        if self.skipping {
            self.skipping = false;
            return;
        }
        if let Some(h) = self.headings.get(self.heading_index.saturating_sub(1)) {
            self.events.push(Event::Html(
                format!(" <a class=\"headerlink\" href=\"#{}\" aria-label=\"Link to this section\">#</a>", h.id).into(),
            ));
        }
        self.events.push(Event::End(TagEnd::Heading(level)));
    }

    /// A link: blocked or broken ones become a `<span>` that keeps their words.
    fn link_start(&mut self, link_type: LinkType, dest_url: CowStr<'a>, title: CowStr<'a>, id: CowStr<'a>, at: usize) {
        let line = self.page.line_of(at);
        if blocked(&dest_url, line, &mut self.out) {
            self.broken_depth.push(true);
            self.events.push(Event::Html(
                "<span class=\"blocked-link\" title=\"This link was removed: its address could run code\">".into(),
            ));
            return;
        }
        let p = &self.page;
        match rewrite(&dest_url, link_type, p.source, p.url, line, p.ctx, &mut self.out) {
            Some(dest) if dest.is_empty() => {
                // A link to a page that does not exist: keep the words, not the dead link.
                self.broken_depth.push(true);
                self.events.push(Event::Html(
                    "<span class=\"broken-link\" title=\"The linked page or file is not in the knowledge base\">"
                        .into(),
                ));
            }
            dest => {
                self.broken_depth.push(false);
                let dest_url = dest.unwrap_or(dest_url);
                self.events.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
            }
        }
    }

    /// An image: a blocked or missing one shows its alt text instead.
    fn image_start(&mut self, link_type: LinkType, dest_url: CowStr<'a>, title: CowStr<'a>, id: CowStr<'a>, at: usize) {
        let line = self.page.line_of(at);
        if blocked(&dest_url, line, &mut self.out) {
            self.missing_image_depth += 1;
            self.events.push(Event::Html("<span class=\"missing-image\">".into()));
            return;
        }
        let p = &self.page;
        match rewrite(&dest_url, link_type, p.source, p.url, line, p.ctx, &mut self.out) {
            Some(dest) if dest.is_empty() => {
                // The image is missing: show its alt text instead of a broken icon.
                self.missing_image_depth += 1;
                self.events.push(Event::Html("<span class=\"missing-image\">".into()));
            }
            dest => {
                let dest_url = dest.unwrap_or(dest_url);
                self.events.push(Event::Start(Tag::Image { link_type, dest_url, title, id }));
            }
        }
    }

    /// The end of an HTML block: the block rewritten as a whole, each piece's
    /// file line known for what it reports.
    fn html_block_end(&mut self, at: usize) {
        let lines = self.html_block.take().unwrap_or_default();
        let mut text = String::new();
        let mut starts = Vec::with_capacity(lines.len());
        for (line, piece) in &lines {
            starts.push((text.len(), *line));
            text.push_str(piece);
        }
        let fallback = self.page.line_of(at);
        let line_at = |offset: usize| {
            let i = starts.partition_point(|(start, _)| *start <= offset);
            starts.get(i.saturating_sub(1)).map_or(fallback, |(_, line)| *line)
        };
        let p = &self.page;
        let html = rewrite_raw_html(&text, p.source, p.url, &line_at, p.ctx, &mut self.out);
        self.events.push(Event::Html(html.into()));
        self.events.push(Event::End(TagEnd::HtmlBlock));
    }

    /// Raw HTML outside a block (inline, or a lone piece): rewritten in place.
    fn raw_html(&mut self, html: &str, at: usize) -> String {
        let line = self.page.line_of(at);
        let p = &self.page;
        rewrite_raw_html(html, p.source, p.url, &|_| line, p.ctx, &mut self.out)
    }
}

/// Whether a link or image target must go; a refused one is recorded.
fn blocked(dest: &str, line: usize, out: &mut Rendered) -> bool {
    match safe_url::check(dest) {
        Ok(()) => false,
        Err(why) => {
            out.blocked_urls.push(BlockedUrl { line, url: dest.to_string(), reason: why.to_string() });
            true
        }
    }
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
        Resolved::Page(target_url) => {
            let rewritten = format!("{}{}", relative_url(url, &target_url), suffix);
            out.linked_pages.insert(target_url);
            Some(rewritten.into())
        }
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
        Resolved::Outside => {
            out.outside_links.push(BadLink { line, target: dest.to_string() });
            Some(CowStr::from(""))
        }
    }
}

/// Rewrites a page's raw HTML: an attribute holding an unsafe URL is removed (and
/// reported); `href` and `src` are rewritten the way Markdown links are, and one
/// whose target is missing is removed (and reported), so the element shows its text
/// or alt text instead of a dead link. `line_at` gives the file line of a byte of
/// `html`.
fn rewrite_raw_html(
    html: &str,
    source: &str,
    url: &str,
    line_at: &dyn Fn(usize) -> usize,
    ctx: &LinkContext<'_>,
    out: &mut Rendered,
) -> String {
    let mut result = String::with_capacity(html.len());
    let mut copied = 0;
    for attr in raw_attributes(html) {
        let Some(value_range) = attr.value.clone() else { continue };
        if !URL_ATTRS.contains(&attr.name.as_str()) {
            continue;
        }
        let raw = &html[value_range.clone()];
        let decoded = safe_url::decode_html_attr(raw);
        // `srcset` is a comma-separated list of `URL [descriptor]`.
        let urls: Vec<&str> = if attr.name == "srcset" {
            decoded.split(',').filter_map(|c| c.split_ascii_whitespace().next()).collect()
        } else {
            vec![decoded.as_str()]
        };
        if let Some(why) = urls.iter().find_map(|u| safe_url::check(u).err()) {
            let line = line_at(attr.at);
            out.blocked_urls.push(BlockedUrl { line, url: raw.to_string(), reason: why.to_string() });
            result.push_str(&html[copied..attr.span.start]);
            copied = attr.span.end;
            continue;
        }
        if attr.name != "href" && attr.name != "src" {
            continue;
        }
        match rewrite(raw, LinkType::Inline, source, url, line_at(attr.at), ctx, out) {
            Some(new) if new.is_empty() => {
                result.push_str(&html[copied..attr.span.start]);
                copied = attr.span.end;
            }
            Some(new) => {
                // The new value is written back in the original quotes (or in double
                // quotes when there were none), with that quote escaped inside it.
                let q = attr.quote.unwrap_or('"');
                let escaped = new.replace(q, if q == '"' { "&quot;" } else { "&#39;" });
                result.push_str(&html[copied..value_range.start]);
                if attr.quote.is_none() {
                    result.push(q);
                }
                result.push_str(&escaped);
                if attr.quote.is_none() {
                    result.push(q);
                }
                copied = value_range.end;
            }
            None => {}
        }
    }
    result.push_str(&html[copied..]);
    result
}

/// An attribute of a start tag in raw HTML.
#[derive(Debug, PartialEq, Eq)]
struct RawAttr {
    /// Lowercase name.
    name: String,
    /// The attribute with the whitespace before it: what to cut to remove it.
    span: Range<usize>,
    /// Where its name starts (for its line).
    at: usize,
    /// The value as written (without quotes); `None` for a bare attribute.
    value: Option<Range<usize>>,
    quote: Option<char>,
}

/// The attributes of every start tag in `html`, read the way an HTML tokenizer
/// reads them (so `<a/href=x>`, unquoted values, `=` with spaces around it and
/// attributes on later lines are all found), skipping comments.
fn raw_attributes(html: &str) -> Vec<RawAttr> {
    let b = html.as_bytes();
    let len = b.len();
    let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
    let mut attrs = Vec::new();
    let mut i = 0;
    while i < len {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"<!--") {
            i = html[i + 4..].find("-->").map_or(len, |e| i + 4 + e + 3);
            continue;
        }
        if !b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < len && !ws(b[j]) && b[j] != b'/' && b[j] != b'>' {
            j += 1;
        }
        loop {
            let start = j;
            while j < len && (ws(b[j]) || b[j] == b'/') {
                j += 1;
            }
            if j >= len || b[j] == b'>' {
                j = (j + 1).min(len);
                break;
            }
            // The name: its first character may be anything (even `=`), the rest
            // stops at whitespace, `/`, `>` or `=`. Every boundary is an ASCII byte,
            // so every slice below is on a character boundary.
            let name_start = j;
            j += 1;
            while j < len && !ws(b[j]) && !matches!(b[j], b'/' | b'>' | b'=') {
                j += 1;
            }
            let name = html[name_start..j].to_ascii_lowercase();
            let mut k = j;
            while k < len && ws(b[k]) {
                k += 1;
            }
            let (mut value, mut quote) = (None, None);
            if k < len && b[k] == b'=' {
                k += 1;
                while k < len && ws(b[k]) {
                    k += 1;
                }
                if k < len && (b[k] == b'"' || b[k] == b'\'') {
                    let q = b[k];
                    let end = html[k + 1..].find(q as char).map_or(len, |e| k + 1 + e);
                    value = Some(k + 1..end);
                    quote = Some(q as char);
                    j = (end + 1).min(len);
                } else {
                    let v = k;
                    while k < len && !ws(b[k]) && b[k] != b'>' {
                        k += 1;
                    }
                    value = Some(v..k);
                    j = k;
                }
            }
            attrs.push(RawAttr { name, span: start..j, at: name_start, value, quote });
        }
        i = j;
    }
    attrs
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
    if path.is_empty() || is_scheme || path.starts_with("//") {
        return Resolved::External;
    }
    if path.starts_with('/') {
        return resolve_site_root(path, ctx);
    }
    let decoded = percent_decode(path);
    let dir = source.rsplit_once('/').map_or("", |(d, _)| d);
    let found = match join(dir, &decoded) {
        Some(joined) => resolve_in_content(&joined, decoded.ends_with('/'), ctx),
        // Climbs above the content root: it cannot be a page of ours.
        None if is_page_file(&decoded) => None,
        None => return Resolved::External,
    };
    let found = found.or_else(|| {
        let from_root = ctx.from_root && is_page_file(&decoded);
        from_root.then(|| join("", &decoded)).flatten().and_then(|j| resolve_in_content(&j, false, ctx))
    });
    match found {
        Some(found) if found != Resolved::MissingAsset => found,
        missing => {
            let by_name = ctx.by_name.and_then(|by_name| by_name(&decoded));
            match by_name {
                Some(path) if ctx.pages.contains_key(&path) => Resolved::Page(ctx.pages[&path].clone()),
                Some(path) if (ctx.asset_exists)(&path) => Resolved::Asset(path),
                _ => missing.unwrap_or(Resolved::BrokenPage),
            }
        }
    }
}

/// A content-relative path → the page or asset it names; `None` when it names
/// no page (`Some(MissingAsset)` for a file name that is not there).
fn resolve_in_content(joined: &str, folder: bool, ctx: &LinkContext<'_>) -> Option<Resolved> {
    let last = joined.rsplit('/').next().unwrap_or("");
    let candidates: Vec<String> = if is_page_file(joined) {
        vec![joined.to_string()]
    } else if folder || joined.is_empty() {
        let base = with_slash(joined);
        ["index.md", "_index.md", "index.mdx", "README.md"]
            .iter()
            .map(|i| format!("{base}{i}"))
            .chain([format!("{}.md", joined.trim_end_matches('/')), format!("{}.mdx", joined.trim_end_matches('/'))])
            .collect()
    } else if !last.contains('.') {
        vec![
            format!("{joined}.md"),
            format!("{joined}.mdx"),
            format!("{joined}/index.md"),
            format!("{joined}/_index.md"),
            format!("{joined}/index.mdx"),
        ]
    } else {
        return Some(if (ctx.asset_exists)(joined) {
            Resolved::Asset(joined.to_string())
        } else {
            Resolved::MissingAsset
        });
    };
    if let Some(url) = candidates.iter().find_map(|c| ctx.pages.get(c)) {
        return Some(Resolved::Page(url.clone()));
    }
    ctx.addresses.get(joined.trim_matches('/')).map(|url| Resolved::Page(url.clone()))
}

/// A link written from the source site's root (`/docs/setup/setup.md`,
/// `/markdown-features/admonitions`): the base path removed (`--base-path`, else
/// each leading folder in turn, the way the pages' tool served them), then
/// looked up as a page, an address or an asset. What names nothing of ours is
/// left alone (the site may serve it), unless it names a Markdown file.
fn resolve_site_root(path: &str, ctx: &LinkContext<'_>) -> Resolved {
    let decoded = percent_decode(path);
    let folder = decoded.ends_with('/');
    let Some(rooted) = join("", decoded.trim_start_matches('/')) else { return Resolved::External };
    let tails: Vec<&str> = match ctx.base_path.map(|b| b.trim_matches('/')) {
        Some(base) => vec![rooted.strip_prefix(base).map_or(rooted.as_str(), |r| r.trim_start_matches('/'))],
        None => {
            std::iter::once(rooted.as_str()).chain(rooted.match_indices('/').map(|(i, _)| &rooted[i + 1..])).collect()
        }
    };
    for tail in &tails {
        if let Some(found) = resolve_in_content(tail, folder, ctx).filter(|r| *r != Resolved::MissingAsset) {
            return found;
        }
    }
    if !is_page_file(&rooted) {
        Resolved::External
    } else if tails.iter().any(|t| t.split_once('/').is_some_and(|(dir, _)| is_content_folder(dir, ctx))) {
        Resolved::BrokenPage
    } else {
        // `/api/references/commands.md` where the content has no `api` or
        // `references` folder: another part of the source site, not a broken link.
        Resolved::Outside
    }
}

/// Whether some page lives under the top-level folder `dir`.
fn is_content_folder(dir: &str, ctx: &LinkContext<'_>) -> bool {
    ctx.pages.keys().any(|p| p.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/')))
}

fn is_page_file(path: &str) -> bool {
    crate::parse::is_page_file(path)
}

fn with_slash(s: &str) -> String {
    if s.is_empty() || s.ends_with('/') {
        s.to_string()
    } else {
        format!("{s}/")
    }
}

/// Joins `rel` onto `dir` (see [`kb_common::path::join`]).
fn join(dir: &str, rel: &str) -> Option<String> {
    kb_common::path::join(dir, rel)
}

/// `%XX` escapes decoded (a `%` not followed by two hex digits stays as it is);
/// the original when the result is not UTF-8.
fn percent_decode(s: &str) -> String {
    match percent_encoding::percent_decode_str(s).decode_utf8() {
        Ok(decoded) => decoded.into_owned(),
        Err(_) => s.to_string(),
    }
}

/// The URL of `to` relative to the page at `from` (both site-relative).
pub fn relative_url(from: &str, to: &str) -> String {
    kb_common::path::relative(from, to).join("/")
}

/// `../` repeated once per folder of `url`: the way from a page back to the root.
pub fn root_prefix(url: &str) -> String {
    "../".repeat(url.matches('/').count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_dialect::{normalize, Dialects, NoResolver, Target};

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
        let ctx = LinkContext::new(&pages, &exists);
        let n = normalize(md, Target::Html, Dialects::detect(source, md), &NoResolver);
        let url = source.replace(".md", ".html");
        render(&n, source, &url, "Title", 10, &ctx)
    }

    #[test]
    fn site_root_links_resolve_through_the_base_path_or_addresses() {
        let pages = site();
        let addresses: HashMap<String, String> =
            [("guides/wifi".to_string(), "it/wifi.html".to_string())].into_iter().collect();
        let exists = |p: &str| p == "img/map.png";
        let with = |base: Option<&'static str>| LinkContext {
            pages: &pages,
            addresses: &addresses,
            base_path: base,
            asset_exists: &exists,
            by_name: None,
            from_root: false,
        };
        let ctx = with(None);
        let url = |dest: &str| match resolve(dest, "it/vpn.md", &ctx) {
            Resolved::Page(u) | Resolved::Asset(u) => u,
            other => format!("{other:?}"),
        };
        assert_eq!(url("/docs/it/wifi.md"), "it/wifi.html");
        assert_eq!(url("/docs/it/wifi"), "it/wifi.html");
        assert_eq!(url("/it/"), "it/index.html");
        assert_eq!(url("/guides/wifi"), "it/wifi.html");
        assert_eq!(url("/docs/img/map.png"), "img/map.png");
        assert_eq!(url("/docs/it/gone.md"), "BrokenPage");
        assert_eq!(url("/api/references/commands.md"), "Outside");
        assert_eq!(url("/api/health"), "External");
        let strict = with(Some("/docs"));
        assert_eq!(resolve("/docs/it/wifi.md", "x.md", &strict), Resolved::Page("it/wifi.html".into()));
        let r = go("[Wi-Fi](/handbook/it/wifi.md#setup) and [API](/api/search)\n", "it/vpn.md");
        assert!(r.html.contains("href=\"wifi.html#setup\""), "{}", r.html);
        assert!(r.html.contains("href=\"/api/search\""), "{}", r.html);
    }

    #[test]
    fn the_pages_a_page_links_to_are_listed() {
        let r = go(
            "[Wi-Fi](wifi.md#setup), <a href=\"index.md\">IT</a>, [gone](gone.md), [web](https://x.example/)\n",
            "it/vpn.md",
        );
        let linked: Vec<&str> = r.linked_pages.iter().map(String::as_str).collect();
        assert_eq!(linked, ["it/index.html", "it/wifi.html"]);
    }

    #[test]
    fn a_vault_resolves_a_dead_relative_link_by_name() {
        let pages = site();
        let exists = |_: &str| false;
        let by_name = |target: &str| (target == "wifi.md").then(|| "it/wifi.md".to_string());
        let ctx = LinkContext { by_name: Some(&by_name), ..LinkContext::new(&pages, &exists) };
        assert_eq!(resolve("wifi.md", "advising/x.md", &ctx), Resolved::Page("it/wifi.html".into()));
        assert_eq!(resolve("gone.md", "advising/x.md", &ctx), Resolved::BrokenPage);
        let exists = |p: &str| p == "img/map.png";
        let by_name = |target: &str| (target == "map.png").then(|| "img/map.png".to_string());
        let vault = LinkContext { by_name: Some(&by_name), ..LinkContext::new(&pages, &exists) };
        assert_eq!(resolve("map.png", "advising/x.md", &vault), Resolved::Asset("img/map.png".into()));
        assert_eq!(resolve("lost.png", "advising/x.md", &vault), Resolved::MissingAsset);
        assert_eq!(resolve("wifi.md", "advising/x.md", &LinkContext::new(&pages, &exists)), Resolved::BrokenPage);
        let docusaurus = LinkContext { from_root: true, ..LinkContext::new(&pages, &exists) };
        assert_eq!(resolve("it/wifi.md", "advising/x.md", &docusaurus), Resolved::Page("it/wifi.html".into()));
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
    fn percent_escapes_before_multibyte_characters_do_not_panic() {
        // Found by the `page` fuzz target's seed: `%a` then `é` sliced a &str mid-character.
        let r = go("[x](a%aé.md) [y](%) [z](%4) [w](caf%C3%A9.md) [v](%ff%fe.md)\n", "x.md");
        assert_eq!(r.broken_links.len(), 5, "{:?}", r.broken_links);
        assert_eq!(percent_decode("a%aé"), "a%aé");
        assert_eq!(percent_decode("caf%C3%A9%41"), "caféA");
        assert_eq!(percent_decode("%ff"), "%ff");
    }

    #[test]
    fn unsafe_urls_are_dropped_and_reported_with_their_lines() {
        let md = "[a](javascript:alert(1))\n\n![b](data:image/svg+xml,x)\n\n<javascript:alert(2)>\n\n[c][r]\n\n[r]: vbscript:msgbox(1)\n\n<a href=\"&#106;avascript&colon;alert(3)\">d</a>\n\n<p>\n<img\n  src=' java&#x09;script:alert(4)' alt=e>\n</p>\n\n<img srcset=\"ok.png 1x, javascript:alert(5) 2x\" alt=f>\n\n[ok](https://x.example) [mail](mailto:help@x.example) [far](//cdn.example/x)\n";
        let r = go(md, "x.md");
        let lines: Vec<usize> = r.blocked_urls.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![10, 12, 14, 16, 20, 24, 27], "{:#?}", r.blocked_urls);
        // The autolink keeps its words as text; no attribute keeps the URL.
        let tags: String = r.html.split('<').skip(1).filter_map(|t| t.split('>').next()).collect();
        for bad in ["javascript", "vbscript", "data:", "srcset"] {
            assert!(!tags.to_lowercase().contains(bad), "{bad} survived: {}", r.html);
        }
        assert!(r.html.contains("<span class=\"blocked-link\""), "{}", r.html);
        assert!(r.html.contains("href=\"https://x.example\"") && r.html.contains("href=\"mailto:help@x.example\""));
        assert!(r.html.contains("href=\"//cdn.example/x\""), "{}", r.html);
        assert!(r.blocked_urls[0].reason.contains("javascript"), "{:?}", r.blocked_urls[0]);
    }

    #[test]
    fn content_ids_are_prefixed_and_heading_anchors_kept() {
        let md = "## Set up\n\n<div id=\"forms\" name=\"x\">a</div>\n\n<h2 id=\"__kbWidget\">b</h2>\n\nSee [up](#set-up), [div](#forms), [top](#top) and a note[^n].\n\n[^n]: The note.\n";
        let r = go(md, "x.md");
        assert!(r.html.contains("<h2 id=\"set-up\">"), "{}", r.html);
        assert!(r.html.contains("id=\"user-content-forms\""), "{}", r.html);
        assert!(r.html.contains("id=\"user-content-__kbWidget\""), "{}", r.html);
        assert!(r.html.contains("href=\"#set-up\"") && r.html.contains("href=\"#user-content-forms\""));
        assert!(r.html.contains("href=\"#top\""), "{}", r.html);
        assert!(r.html.contains("id=\"user-content-n\"") && r.html.contains("href=\"#user-content-n\""), "{}", r.html);
        assert!(!r.html.contains("name="), "{}", r.html);
    }

    #[test]
    fn raw_attributes_are_read_like_a_tokenizer() {
        let names = |h: &str| raw_attributes(h).into_iter().map(|a| a.name).collect::<Vec<_>>();
        assert_eq!(names("<a/href=x title = 'y' hidden>"), ["href", "title", "hidden"]);
        assert_eq!(names("<!-- <a href=x> --><img\nsrc=\"a\"srcset=b>"), ["src", "srcset"]);
        assert_eq!(names("a < b <é x=1> <a href=\"unterminated"), ["href"]);
    }

    #[test]
    fn admonitions_survive_sanitising() {
        let r = go("!!! warning \"Deadline\"\n    Pay **now**.\n", "x.md");
        assert!(r.html.contains("<aside class=\"admonition warning\" role=\"note\">"), "{}", r.html);
        assert!(r.html.contains("<p class=\"admonition-title\">Deadline</p>"));
        assert!(r.html.contains("<strong>now</strong>"));
    }
}
