//! The wikilink `[[target#fragment|alias]]`: its parts, the text Obsidian shows
//! for it, the link destination and heading id it leads to, and how its target
//! names a note or a file.

use std::collections::HashMap;

use kb_common::slug;

use crate::{link_from, Resolver};

/// The part after `#` in a wikilink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fragment {
    /// `#Heading`, or a heading path `#H1#H2` (the last one is meant).
    Heading(String),
    /// `#^id`: the id of a block.
    Block(String),
}

/// A wikilink or embed: `[[target#fragment|alias]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Wikilink {
    /// The page or file named, trimmed; empty for `[[#Heading]]` (this page).
    pub(super) target: String,
    pub(super) fragment: Option<Fragment>,
    /// After `|`: the text to show, or an image's size.
    pub(super) alias: Option<String>,
    /// Between the brackets, as written (for notices).
    pub(super) written: String,
}

impl Wikilink {
    pub(super) fn parse(inner: &str) -> Option<Wikilink> {
        // In a table the pipe is written `\|`, so that it does not end the cell.
        let unescaped = inner.replace("\\|", "|");
        let (link, alias) = match unescaped.split_once('|') {
            Some((link, alias)) => (link, Some(alias.trim().to_string()).filter(|a| !a.is_empty())),
            None => (unescaped.as_str(), None),
        };
        let (target, fragment) = match link.split_once('#') {
            Some((target, f)) => {
                let f = f.trim();
                let fragment = match f.strip_prefix('^') {
                    Some(id) => Fragment::Block(id.trim().to_string()),
                    None => Fragment::Heading(f.to_string()),
                };
                let empty = matches!(&fragment, Fragment::Heading(s) | Fragment::Block(s) if s.is_empty());
                (target, (!empty).then_some(fragment))
            }
            None => (link, None),
        };
        let target = target.trim().to_string();
        // `[[#|move]]`: a link to this page under another name.
        if target.is_empty() && fragment.is_none() && alias.is_none() {
            return None;
        }
        Some(Wikilink { target, fragment, alias, written: inner.to_string() })
    }

    /// The text Obsidian shows for the link: the alias, else the target as
    /// written (without `.md`), with ` > Heading` for a fragment.
    pub(super) fn display(&self) -> String {
        if let Some(alias) = &self.alias {
            return alias.clone();
        }
        let page = strip_md_extension(&self.target);
        let fragment = match &self.fragment {
            None => return page.to_string(),
            Some(Fragment::Heading(h)) => {
                h.split('#').map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" > ")
            }
            Some(Fragment::Block(id)) => format!("^{id}"),
        };
        if page.is_empty() {
            fragment
        } else {
            format!("{page} > {fragment}")
        }
    }
}

/// The last heading of a heading path (`H1#H2` → `H2`).
pub(super) fn last_heading(path: &str) -> &str {
    path.rsplit('#').map(str::trim).find(|s| !s.is_empty()).unwrap_or_default()
}

/// The element id a `^id` block marker gets (before the renderer's prefix).
pub(super) fn block_element_id(id: &str) -> String {
    format!("block-{id}")
}

/// Finds link destinations and heading ids, remembering each page's headings.
pub(super) struct Anchors<'a> {
    resolver: &'a dyn Resolver,
    headings: HashMap<String, Vec<slug::Heading>>,
}

impl<'a> Anchors<'a> {
    pub(super) fn new(resolver: &'a dyn Resolver) -> Self {
        Anchors { resolver, headings: HashMap::new() }
    }

    /// The link destination of the page at `path` (content-relative), with the
    /// anchor of `fragment`; on the page itself, the anchor alone.
    pub(super) fn dest(&mut self, path: &str, fragment: Option<&Fragment>) -> String {
        let source = self.resolver.source();
        let same = path == source;
        let anchor = match fragment {
            None => None,
            Some(Fragment::Heading(h)) => Some(self.heading_id(path, last_heading(h))).filter(|a| !a.is_empty()),
            // The renderer prefixes ids that content sets, and rewrites in-page
            // links to match; a link from another page must name the prefix.
            Some(Fragment::Block(id)) if same => Some(block_element_id(id)),
            Some(Fragment::Block(id)) => Some(format!("user-content-{}", block_element_id(id))),
        };
        match anchor {
            Some(a) if same => format!("#{a}"),
            Some(a) => format!("{}#{a}", link_from(source, path)),
            None => link_from(source, path),
        }
    }

    /// The id the renderer gives the heading `written` of the page at `path`.
    fn heading_id(&mut self, path: &str, written: &str) -> String {
        let want = slug::slugify(written);
        let resolver = self.resolver;
        let headings = self
            .headings
            .entry(path.to_string())
            .or_insert_with(|| resolver.body(path).map(|b| slug::headings(&b)).unwrap_or_default());
        match headings.iter().find(|h| slug::slugify(&h.text) == want || h.id == want) {
            Some(h) => h.id.clone(),
            None => want,
        }
    }
}

/// The end (index of `]]`) of the wikilink whose `[[` is at `start`.
pub(super) fn wikilink_end(s: &str, start: usize) -> Option<usize> {
    let close = start + 2 + s[start + 2..].find("]]")?;
    let inner = &s[start + 2..close];
    // `[[a [[b]]`: the inner `[[` opens the link. `[[1]](url)`: a Markdown link
    // whose text is `[1]`.
    if inner.trim().is_empty() || inner.contains("[[") || s[close + 2..].starts_with('(') {
        return None;
    }
    Some(close)
}

/// The content path a link to the missing page `target` points at.
pub(super) fn missing_page(target: &str) -> String {
    if target.ends_with('/') {
        format!("{target}index.md")
    } else if strip_md_extension(target).len() < target.len() || is_file_name(target) {
        target.to_string()
    } else {
        format!("{target}.md")
    }
}

pub(super) fn markdown_link(text: &str, dest: &str) -> String {
    format!("[{}]({dest})", escape_link_text(text))
}

/// Link text that cannot end the link or a table cell early.
pub(super) fn escape_link_text(text: &str) -> String {
    text.replace('[', "\\[").replace(']', "\\]").replace('|', "\\|")
}

/// The lower-case extension of a file name (`a/b.PNG` → `png`).
pub(super) fn extension(name: &str) -> Option<String> {
    let file = name.rsplit('/').next().unwrap_or(name);
    file.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase())
}

/// Whether a target names a file other than a note: an extension of letters and
/// digits, not `.md` (`v1.2` and `Mr. Smith` are note names).
pub(super) fn is_file_name(target: &str) -> bool {
    extension(target).is_some_and(|ext| {
        (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
            && ext != "md"
            && ext != "mdx"
    })
}

/// `folder/Note.md` → `Note`.
pub(super) fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

pub(super) fn strip_md_extension(s: &str) -> &str {
    let lower = s.to_ascii_lowercase();
    [".md", ".mdx"].iter().find(|ext| lower.ends_with(*ext)).map_or(s, |ext| &s[..s.len() - ext.len()])
}
