//! Harness for the `page` target: one Markdown file through the build's per-page
//! pipeline, calling the library stages directly (no file I/O): parse (frontmatter
//! or plain Markdown) → the `original_url` check → MkDocs normalisation into both
//! forms (one snippet include resolves, others are missing) → render against a small
//! fixed site → chunk.
//!
//! Besides "no panic", it checks what the security hardening promises, with an
//! oracle of its own rather than the renderer's tokenizer (so the two cannot share
//! a blind spot): the rendered HTML has no script-running URL in any URL attribute,
//! no `on*` attribute, none of the elements that load or run code, and every `id`
//! is either one of the page's heading anchors or carries the user prefix; and every
//! chunk's `#anchor` is a heading id of the rendered page, as search results rely on.

use std::collections::{HashMap, HashSet};

use kb_common::{safe_url, slug};
use kb_dialect::{normalize, Dialects, Resolver, Target};
use site_builder::chunk::{chunk_page, ChunkOptions};
use site_builder::parse::parse_page;
use site_builder::render::{render, LinkContext, USER_ID_PREFIX};

/// The site the fuzzed page is rendered into (content path → site URL).
const SITE: [(&str, &str); 4] = [
    ("dir/page.md", "dir/page.html"),
    ("dir/other.md", "dir/other.html"),
    ("index.md", "index.html"),
    ("a b/é.md", "a b/é.html"),
];

/// The rest of the knowledge base as the dialect passes see it: one snippet,
/// wikilinks to the pages of [`SITE`], and a page body that embeds itself.
struct FuzzSite;

impl Resolver for FuzzSite {
    fn source(&self) -> &str {
        "dir/page.md"
    }
    fn snippet(&self, name: &str) -> Option<String> {
        (name == "snip.md").then(|| "Included **text** with [a link](javascript:alert(1)).\n".to_string())
    }
    fn page(&self, target: &str) -> Option<String> {
        SITE.iter().map(|(s, _)| *s).find(|s| s.trim_end_matches(".md").ends_with(target)).map(str::to_string)
    }
    fn asset(&self, target: &str) -> Option<String> {
        (target == "a.png").then(|| "img/a.png".to_string())
    }
    fn body(&self, path: &str) -> Option<String> {
        SITE.iter().any(|(s, _)| *s == path).then(|| "# Embedded\n\n![[page]] and [[other#Top]]\n".to_string())
    }
}

pub fn run(data: &[u8]) {
    let Ok(page) = parse_page("dir/page.md", data) else { return };
    // The build drops an unsafe `original_url`; the check itself must not panic.
    let _ = page.original_url.as_deref().map(safe_url::check);

    // Every dialect on, whatever the page looks like: each pass is fuzzed.
    let all = Dialects { mkdocs: true, obsidian: true, gfm: true, mdx: true, hugo: true };
    let html_md = normalize(&page.body, Target::Html, all, &FuzzSite);
    let text_md = normalize(&page.body, Target::Text, all, &FuzzSite);

    let pages: HashMap<String, String> = SITE.iter().map(|(s, u)| (s.to_string(), u.to_string())).collect();
    let exists = |p: &str| p == "img/a.png";
    let ctx = LinkContext::new(&pages, &exists);
    let rendered = render(&html_md, &page.source, "dir/page.html", &page.title, page.body_line, &ctx);

    let heading_ids: HashSet<String> = slug::headings(&html_md.text).into_iter().map(|h| h.id).collect();
    assert_inert(&rendered.html, &heading_ids);

    // Small chunks so that short inputs already exercise the splitting.
    let opts = ChunkOptions { header_levels: 2, chunk_size: 200, overlap: 40 };
    for c in chunk_page(&text_md.text, &opts) {
        assert!(
            c.anchor.is_empty() || heading_ids.contains(&c.anchor),
            "chunk anchor #{} is not on the page",
            c.anchor
        );
    }
}

/// Elements that must never come out of the sanitiser.
const FORBIDDEN_TAGS: [&str; 12] =
    ["script", "iframe", "object", "embed", "base", "meta", "style", "form", "link", "svg", "math", "frame"];

/// Attributes holding a URL.
const URL_ATTRS: [&str; 10] =
    ["href", "src", "srcset", "action", "formaction", "xlink:href", "data", "poster", "cite", "background"];

/// Panics when sanitised HTML could run script or clobber a global. Relies only on
/// the shape html5ever serialises (`name="value"`, `"` and `&` escaped in values).
pub fn assert_inert(html: &str, heading_ids: &HashSet<String>) {
    for tag in html.split('<').skip(1) {
        let Some(tag) = tag.split_once('>').map(|(t, _)| t) else { continue };
        let name: String =
            tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect::<String>();
        let name = name.to_ascii_lowercase();
        assert!(!FORBIDDEN_TAGS.contains(&name.as_str()), "<{name}> survived: {html}");
        let mut rest = tag;
        while let Some(eq) = rest.find("=\"") {
            let attr = rest[..eq].rsplit(|c: char| c.is_whitespace()).next().unwrap_or("").to_ascii_lowercase();
            let after = &rest[eq + 2..];
            let end = after.find('"').unwrap_or(after.len());
            let value = after[..end].replace("&amp;", "&");
            rest = &after[(end + 1).min(after.len())..];
            assert!(!attr.starts_with("on"), "event handler {attr}= survived in <{tag}>");
            assert!(attr != "style", "style= survived in <{tag}>");
            if URL_ATTRS.contains(&attr.as_str()) {
                let squeezed: String =
                    value.chars().filter(|c| !c.is_whitespace() && !c.is_control()).collect::<String>();
                let squeezed = squeezed.to_ascii_lowercase();
                for scheme in ["javascript:", "vbscript:", "data:", "file:"] {
                    assert!(!squeezed.starts_with(scheme), "{attr}=\"{value}\" survived in <{tag}>");
                }
            }
            if attr == "id" || attr == "name" {
                assert!(
                    value.starts_with(USER_ID_PREFIX) || (attr == "id" && heading_ids.contains(&value)),
                    "unprefixed {attr}=\"{value}\" in <{tag}>"
                );
            }
        }
    }
}
