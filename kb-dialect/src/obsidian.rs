//! Obsidian: wikilinks, embeds, transclusion, highlights and block ids.
//!
//! An Obsidian vault links its notes by name (`[[Docker Support]]`), not by path,
//! and embeds notes and images the same way (`![[Note]]`, `![[diagram.png]]`).
//! CommonMark shows all of it as brackets, so two passes rewrite it, outside
//! fenced code and inline code spans:
//!
//! | written | [`Target::Html`] (the site) | [`Target::Text`] (chunks) |
//! | --- | --- | --- |
//! | `[[Page]]`, `[[folder/Page]]`, `[[Page.md]]` | `[Page](folder/Page.md)` | same |
//! | `[[Page\|text]]` (`[[Page\\|text]]` in a table) | `[text](folder/Page.md)` | same |
//! | `[[Page#Heading]]`, `[[#Heading]]` | `[Page > Heading](Page.md#heading)`, `[Heading](#heading)` | same |
//! | `[[Page#^block]]` | `[Page > ^block](Page.md#user-content-block-block)` | same |
//! | `[[Missing]]` (no such page) | `[Missing](Missing.md)` + a notice | same |
//! | `![[Note]]` alone on a line ([`transclude`]) | the note's text in `!!! embed "Title"`, its headings bold | `*Embedded: [Title](Note.md)*` |
//! | `![[Note#Heading]]`, `![[Note#^block]]` | that section / block only | the reference, with `#anchor` |
//! | `![[image.png]]`, `![[image.png\|300]]` | `![image](image.png)` (the size is dropped) | same |
//! | `![[doc.pdf]]` | `[doc.pdf](doc.pdf)` | same |
//! | `==text==` | `<mark>text</mark>` | `text` |
//! | `text ^block` (block id ending a line) | `text <span id="block-block"></span>` | `text` |
//!
//! Where a wikilink leads is the [`Resolver`]'s to say ([`Vault`] implements
//! Obsidian's rules for the site builder). A link to a page that does not exist
//! becomes a Markdown link to `Name.md`, which is not there either: the renderer
//! then reports it as a broken link with its file line and shows its words only,
//! as it does for every other broken link; a missing image likewise becomes a
//! missing asset.
//!
//! Decisions:
//!
//! - **Transclusion is for the site only.** In [`Target::Html`] an embedded note
//!   is copied into the page (recursively, up to [`MAX_DEPTH`] levels, with
//!   cycles reported as [`NoticeKind::IncludeCycle`] and replaced by a link). In
//!   [`Target::Text`] it is a one-line reference: the search index keeps a
//!   note's text on that note's own page only, so a search does not return the
//!   same text once for every page that embeds it.
//! - Only an embed alone on its line is transcluded (also in a callout's body,
//!   which becomes a container too). One inside other text, a list item's text
//!   or a plain blockquote, where a container cannot go, becomes a link.
//! - **No headings are added.** Headings of the embedded text would become
//!   headings of the host page (and of the Html form only), so they become bold
//!   lines.
//! - **Heading anchors are the renderer's ids**: [`kb_common::slug`] ids of the
//!   target page's headings, matched by slug, so `_1` suffixes and `{#id}`s are
//!   followed; a heading not found falls back to the slug of the text written.
//! - **Block ids** `^abc` become the element id `block-abc`. The renderer gives
//!   ids set by content the `user-content-` prefix (and rewrites in-page `#`
//!   links to follow it), so a link from another page names
//!   `#user-content-block-abc` and a link within the page `#block-abc`. (The
//!   site's HTML sanitiser must let `id` through on `span` for the anchor to
//!   survive; without it the empty `<span>` is harmless.)
//! - Links inside embedded text are resolved from the host page (where they are
//!   shown); `[[#Heading]]` inside an embedded note is made to name that note.

use std::collections::HashMap;

use kb_common::slug;

use crate::callout::{container_line, is_callout_header, starts_block};
use crate::fence::Fence;
use crate::{link_from, Dialect, Line, Notice, NoticeKind, Resolver, Target};

/// How deep embeds nest before the next one is replaced by a link.
pub const MAX_DEPTH: usize = 4;

/// File endings an image embed shows as an image.
const IMAGE_EXTENSIONS: [&str; 8] = ["png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "bmp"];

/// The part after `#` in a wikilink.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fragment {
    /// `#Heading`, or a heading path `#H1#H2` (the last one is meant).
    Heading(String),
    /// `#^id`: the id of a block.
    Block(String),
}

/// A wikilink or embed: `[[target#fragment|alias]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wikilink {
    /// The page or file named, trimmed; empty for `[[#Heading]]` (this page).
    target: String,
    fragment: Option<Fragment>,
    /// After `|`: the text to show, or an image's size.
    alias: Option<String>,
    /// Between the brackets, as written (for notices).
    written: String,
}

impl Wikilink {
    fn parse(inner: &str) -> Option<Wikilink> {
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
    fn display(&self) -> String {
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
fn last_heading(path: &str) -> &str {
    path.rsplit('#').map(str::trim).find(|s| !s.is_empty()).unwrap_or_default()
}

/// The element id a `^id` block marker gets (before the renderer's prefix).
fn block_element_id(id: &str) -> String {
    format!("block-{id}")
}

/// Tracks fenced code over consecutive lines.
#[derive(Default)]
struct Fences(Option<Fence>);

impl Fences {
    /// Whether `text` (a line, without any blockquote markers) is fenced code,
    /// its opening and closing fences included.
    fn code(&mut self, text: &str) -> bool {
        match self.0 {
            Some(f) => {
                if f.closes(text) {
                    self.0 = None;
                }
                true
            }
            None => {
                self.0 = Fence::open(text);
                self.0.is_some()
            }
        }
    }
}

/// Splits a line into its indentation and blockquote markers (`  > > `) and the rest.
fn split_prefix(line: &str) -> (&str, &str) {
    let mut rest = line.trim_start();
    while let Some(r) = rest.strip_prefix('>') {
        rest = r.trim_start();
    }
    line.split_at(line.len() - rest.len())
}

/// Finds link destinations and heading ids, remembering each page's headings.
struct Anchors<'a> {
    resolver: &'a dyn Resolver,
    headings: HashMap<String, Vec<slug::Heading>>,
}

impl<'a> Anchors<'a> {
    fn new(resolver: &'a dyn Resolver) -> Self {
        Anchors { resolver, headings: HashMap::new() }
    }

    /// The link destination of the page at `path` (content-relative), with the
    /// anchor of `fragment`; on the page itself, the anchor alone.
    fn dest(&mut self, path: &str, fragment: Option<&Fragment>) -> String {
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

// ---------------------------------------------------------------------------
// Transclusion

/// Replaces lines that are only a note embed (`![[Note]]`, `![[Note#Heading]]`,
/// `![[Note#^block]]`) with the note's text in an `!!! embed` container (Html) or
/// a one-line reference to it (Text). Image and file embeds, embeds inside other
/// text and embeds of notes that do not resolve are left for [`inline`].
pub fn transclude(lines: Vec<Line>, target: Target, resolver: &dyn Resolver, notices: &mut Vec<Notice>) -> Vec<Line> {
    let mut t = Transclusion {
        target,
        resolver,
        notices,
        anchors: Anchors::new(resolver),
        stack: vec![resolver.source().to_string()],
    };
    t.lines(lines)
}

struct Transclusion<'a> {
    target: Target,
    resolver: &'a dyn Resolver,
    notices: &'a mut Vec<Notice>,
    anchors: Anchors<'a>,
    /// What is being embedded, the host page first: `path` or `path#fragment`.
    stack: Vec<String>,
}

impl Transclusion<'_> {
    fn lines(&mut self, lines: Vec<Line>) -> Vec<Line> {
        let mut out = Vec::with_capacity(lines.len());
        let mut fences = Fences::default();
        // In a blockquote: whether it is a callout. A callout becomes a container,
        // so an embed in it can become one too; in a plain quote it cannot.
        let mut quote: Option<bool> = None;
        for (src, line) in lines {
            let (prefix, rest) = split_prefix(&line);
            quote = prefix.contains('>').then(|| quote.unwrap_or_else(|| is_callout_header(rest)));
            if fences.code(rest) || quote == Some(false) {
                out.push((src, line));
                continue;
            }
            let embed = lone_embed(rest).and_then(|w| self.note_of(&w).map(|path| (w, path)));
            match embed {
                Some((w, path)) => self.embed(src, prefix, &w, &path, &mut out),
                None => out.push((src, line)),
            }
        }
        out
    }

    /// The note an embed names, if it names one (not an image or other file).
    fn note_of(&self, w: &Wikilink) -> Option<String> {
        if w.target.is_empty() {
            return Some(self.resolver.source().to_string());
        }
        let path = self.resolver.page(&w.target)?;
        let lower = path.to_ascii_lowercase();
        (lower.ends_with(".md") || lower.ends_with(".mdx")).then_some(path)
    }

    /// Writes the embed `w` of the note at `path`, found on line `src` after `prefix`.
    fn embed(&mut self, src: usize, prefix: &str, w: &Wikilink, path: &str, out: &mut Vec<Line>) {
        let title = [w.alias.clone(), self.resolver.title(path), Some(file_stem(path).to_string())]
            .into_iter()
            .flatten()
            .find(|t| !t.trim().is_empty())
            .unwrap_or_else(|| w.display());
        let dest = self.anchors.dest(path, w.fragment.as_ref());
        if self.target == Target::Text {
            let label = match &w.fragment {
                Some(Fragment::Heading(h)) => format!("{title} > {}", last_heading(h)),
                _ => title,
            };
            out.push((src, format!("{prefix}*Embedded: {}*", markdown_link(&label, &dest))));
            return;
        }
        let key = match &w.fragment {
            None => path.to_string(),
            Some(Fragment::Heading(h)) => format!("{path}#{}", slug::slugify(last_heading(h))),
            Some(Fragment::Block(id)) => format!("{path}#^{id}"),
        };
        let problem = if self.stack.contains(&key) {
            Some("leads back to a note that embeds it")
        } else if self.stack.len() > MAX_DEPTH {
            Some("nests deeper than 4 embeds")
        } else {
            None
        };
        if let Some(why) = problem {
            self.notice(
                src,
                NoticeKind::IncludeCycle,
                format!("![[{}]] {why}; a link was put in its place", w.written),
            );
            out.push((src, format!("{prefix}{}", markdown_link(&title, &dest))));
            return;
        }
        let Some(text) = self.section(src, w, path) else {
            out.push((src, format!("{prefix}{}", markdown_link(&title, &dest))));
            return;
        };
        self.stack.push(key);
        let body = self.lines(prepare_embedded(&text, src, path));
        self.stack.pop();
        out.push((src, format!("{prefix}{}", container_line("!!!", "embed", Some(&title)))));
        let blank = prefix.trim_end();
        let has_text = body.iter().any(|(_, l)| !l.trim().is_empty());
        for (_, line) in body {
            out.push((src, if line.trim().is_empty() { blank.to_string() } else { format!("{prefix}    {line}") }));
        }
        if !has_text {
            out.push((src, blank.to_string()));
        }
    }

    /// The text the embed `w` takes from the note at `path`: all of it, one
    /// heading's section or one block; `None` (reported) when it is not there.
    fn section(&mut self, src: usize, w: &Wikilink, path: &str) -> Option<String> {
        let Some(body) = self.resolver.body(path) else {
            let message =
                format!("![[{}]]: the text of {path} could not be read; a link was put in its place", w.written);
            self.notice(src, NoticeKind::MissingInclude, message);
            return None;
        };
        let (found, what) = match &w.fragment {
            None => return Some(body),
            Some(Fragment::Heading(h)) => (heading_section(&body, last_heading(h)), "heading"),
            Some(Fragment::Block(id)) => (block_text(&body, id), "block"),
        };
        if found.is_none() {
            let message = format!("![[{}]]: {path} has no such {what}; a link was put in its place", w.written);
            self.notice(src, NoticeKind::MissingInclude, message);
        }
        found
    }

    fn notice(&mut self, line: usize, kind: NoticeKind, message: String) {
        self.notices.push(Notice { line, kind, message });
    }
}

/// `![[…]]` alone (but for spaces) on the rest of a line.
fn lone_embed(rest: &str) -> Option<Wikilink> {
    let inner = rest.trim_end().strip_prefix("![[")?.strip_suffix("]]")?;
    if inner.contains("]]") || inner.contains("[[") {
        return None;
    }
    Wikilink::parse(inner)
}

/// The lines of embedded text, all on the host's line `src`, made ready to sit
/// in the host page: comments removed (the host's were removed before this
/// pass), same-page links made to name their note, headings made bold.
fn prepare_embedded(text: &str, src: usize, path: &str) -> Vec<Line> {
    let lines: Vec<Line> = text.lines().map(|l| (src, l.to_string())).collect();
    let lines = crate::comments::strip(lines, Dialect::Obsidian.dialects());
    let lines = name_same_page_links(lines, path);
    unheading(lines)
}

/// `[[#Heading]]` in the text of the note at `path` → `[[path#Heading]]`, so it
/// still leads there when the text is shown on another page.
fn name_same_page_links(lines: Vec<Line>, path: &str) -> Vec<Line> {
    let named = format!("[[{}#", strip_md_extension(path));
    let mut fences = Fences::default();
    lines
        .into_iter()
        .map(|(src, line)| {
            if fences.code(split_prefix(&line).1) || !line.contains("[[#") {
                return (src, line);
            }
            let text = code_segments(&line)
                .into_iter()
                .map(|(code, s)| if code { s.to_string() } else { s.replace("[[#", &named) })
                .collect();
            (src, text)
        })
        .collect()
}

/// Turns every heading (ATX and setext, also in blockquotes) into a bold line.
fn unheading(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let mut fences = Fences::default();
    let mut after_text = false; // the line before is paragraph text: a setext underline makes it a heading
    for (src, line) in lines {
        let (prefix, rest) = split_prefix(&line);
        if fences.code(rest) {
            after_text = false;
            out.push((src, line));
            continue;
        }
        if let Some(text) = atx_heading_text(rest) {
            let bold = if text.is_empty() { prefix.trim_end().to_string() } else { format!("{prefix}**{text}**") };
            out.push((src, bold));
            after_text = false;
            continue;
        }
        if after_text && is_setext_underline(rest) {
            if let Some(last) = out.last_mut() {
                let (p, r) = split_prefix(&last.1);
                last.1 = format!("{p}**{}**", r.trim_end());
            }
            out.push((src, prefix.trim_end().to_string()));
            after_text = false;
            continue;
        }
        after_text = !rest.trim().is_empty() && !starts_block(rest);
        out.push((src, line));
    }
    out
}

/// The text of an ATX heading (`## Text ##` → `Text`).
fn atx_heading_text(rest: &str) -> Option<&str> {
    let hashes = rest.bytes().take_while(|&b| b == b'#').count();
    let after = &rest[hashes..];
    if hashes == 0 || hashes > 6 || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let text = after.trim();
    let unclosed = text.trim_end_matches('#');
    Some(if unclosed.is_empty() {
        ""
    } else if unclosed.ends_with([' ', '\t']) {
        unclosed.trim_end()
    } else {
        text
    })
}

fn is_setext_underline(rest: &str) -> bool {
    let t = rest.trim_end();
    !t.is_empty() && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
}

/// The section of `body` under the heading `written`: from that heading to the
/// next heading of the same or a higher level.
fn heading_section(body: &str, written: &str) -> Option<String> {
    let want = slug::slugify(written);
    let headings = slug::headings(body);
    let k = headings.iter().position(|h| slug::slugify(&h.text) == want || h.id == want)?;
    let line_start = |offset: usize| body[..offset].rfind('\n').map_or(0, |n| n + 1);
    let start = line_start(headings[k].range.start);
    let end = headings[k + 1..]
        .iter()
        .find(|h| h.level <= headings[k].level)
        .map_or(body.len(), |h| line_start(h.range.start));
    Some(body[start..end].trim_end().to_string())
}

/// The block of `body` marked `^id`: the paragraph or list item whose last line
/// ends with ` ^id`, or the block just above a line that is only `^id` (how
/// Obsidian marks tables, lists and quotes). The marker is left out.
fn block_text(body: &str, id: &str) -> Option<String> {
    let lines: Vec<&str> = body.lines().collect();
    let mut fences = Fences::default();
    let (k, before) = lines.iter().enumerate().find_map(|(k, l)| {
        let code = fences.code(split_prefix(l).1);
        let (before, found) = split_block_id(l).filter(|_| !code)?;
        found.eq_ignore_ascii_case(id).then_some((k, before))
    })?;
    let (start, end) = if before.trim().is_empty() {
        let end = (0..k).rev().find(|&j| !lines[j].trim().is_empty())? + 1;
        let start = (0..end).rev().find(|&j| lines[j].trim().is_empty()).map_or(0, |j| j + 1);
        (start, end)
    } else {
        let mut start = k;
        while start > 0 && !is_list_item(lines[start]) {
            let prev = lines[start - 1];
            if prev.trim().is_empty() || atx_heading_text(split_prefix(prev).1).is_some() || Fence::open(prev).is_some()
            {
                break;
            }
            start -= 1;
        }
        (start, k + 1)
    };
    let mut block: Vec<&str> = lines[start..end].to_vec();
    if !before.trim().is_empty() {
        block[end - start - 1] = before;
    }
    Some(dedent_block(&block))
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let after_number = (1..10).contains(&digits) && (t[digits..].starts_with(". ") || t[digits..].starts_with(") "));
    t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") || after_number
}

/// Lines joined, without the indentation they all share.
fn dedent_block(lines: &[&str]) -> String {
    // Spaces and tabs only: they are one byte each, so every line can be cut there.
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let common = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| indent(l)).min().unwrap_or(0);
    let cut: Vec<&str> =
        lines.iter().map(|l| if l.trim().is_empty() { "" } else { l.get(common..).unwrap_or(l) }).collect();
    cut.join("\n")
}

// ---------------------------------------------------------------------------
// Inline syntax

/// Rewrites wikilinks, image and file embeds, `==highlight==` and `^block` ids,
/// line by line, outside fenced code and inline code spans.
pub fn inline(lines: Vec<Line>, target: Target, resolver: &dyn Resolver, notices: &mut Vec<Notice>) -> Vec<Line> {
    let mut cx = Inline { target, resolver, notices, anchors: Anchors::new(resolver), src: 0, html: false };
    let mut fences = Fences::default();
    lines
        .into_iter()
        .map(|(src, line)| {
            if fences.code(split_prefix(&line).1) {
                return (src, line);
            }
            let text = cx.line(src, &line);
            (src, text)
        })
        .collect()
}

struct Inline<'a> {
    target: Target,
    resolver: &'a dyn Resolver,
    notices: &'a mut Vec<Notice>,
    anchors: Anchors<'a>,
    /// The body line of the line being rewritten.
    src: usize,
    /// The line is raw HTML (a container title in the Html form): links are
    /// written as `<a>` and `<img>`, since Markdown is not read there.
    html: bool,
}

impl Inline<'_> {
    fn line(&mut self, src: usize, line: &str) -> String {
        self.src = src;
        self.html = is_html_title(line);
        let (body, block) = match split_block_id(line) {
            Some((before, id)) if !self.html => (before, Some(id)),
            _ => (line, None),
        };
        let mut out = self.links_and_text(body);
        if let Some(id) = block {
            if self.target == Target::Html {
                if !out.trim().is_empty() {
                    out.push(' ');
                }
                out.push_str(&format!("<span id=\"{}\"></span>", block_element_id(id)));
            } else if out.trim().is_empty() {
                out.clear();
            }
        }
        out
    }

    /// The line with its wikilinks rewritten, then its text outside code passed
    /// to [`Inline::text`] (highlights, which may span a link). A wikilink opens
    /// outside code but may hold code (`[[Functions#hasTag|`hasTag`]]`): its
    /// `]]` is looked for past the code spans, so the two readings do not cut
    /// each other.
    fn links_and_text(&mut self, body: &str) -> String {
        let linked = self.links(body);
        let mut out = String::with_capacity(linked.len());
        for (code, segment) in code_segments(&linked) {
            if code {
                out.push_str(segment);
            } else {
                out.push_str(&self.text(segment));
            }
        }
        out
    }

    /// The line with its wikilinks and embeds rewritten, the rest as it is.
    fn links(&mut self, body: &str) -> String {
        let mut code: Vec<std::ops::Range<usize>> = Vec::new();
        let mut at = 0;
        for (is_code, segment) in code_segments(body) {
            if is_code {
                code.push(at..at + segment.len());
            }
            at += segment.len();
        }
        let in_code = |i: usize| code.iter().any(|r| r.contains(&i));
        let mut out = String::with_capacity(body.len() + 16);
        let (mut i, mut copied) = (0, 0);
        while i < body.len() {
            if let Some(r) = code.iter().find(|r| r.start == i) {
                i = r.end;
                continue;
            }
            if body[i..].starts_with("[[") {
                if let Some(close) = wikilink_end(body, i).filter(|&c| !in_code(c)) {
                    let embed = i > copied && body.as_bytes()[i - 1] == b'!';
                    out.push_str(&body[copied..if embed { i - 1 } else { i }]);
                    out.push_str(&self.wikilink(&body[i + 2..close], embed));
                    (i, copied) = (close + 2, close + 2);
                    continue;
                }
            }
            i += body[i..].chars().next().map_or(1, char::len_utf8);
        }
        out.push_str(&body[copied..]);
        out
    }

    /// Rewrites text outside code: wikilinks, embeds and highlights.
    fn text(&mut self, s: &str) -> String {
        let b = s.as_bytes();
        let mut out = String::with_capacity(s.len());
        let (mut i, mut copied) = (0, 0);
        while i < b.len() {
            if b[i] == b'[' && b.get(i + 1) == Some(&b'[') {
                if let Some(close) = wikilink_end(s, i) {
                    let embed = i > 0 && b[i - 1] == b'!';
                    out.push_str(&s[copied..if embed { i - 1 } else { i }]);
                    out.push_str(&self.wikilink(&s[i + 2..close], embed));
                    i = close + 2;
                    copied = i;
                    continue;
                }
            }
            if b[i] == b'=' {
                if let Some(end) = highlight_end(s, i) {
                    out.push_str(&s[copied..i]);
                    let inner = self.text(&s[i + 2..end]);
                    out.push_str(&match self.target {
                        Target::Html => format!("<mark>{inner}</mark>"),
                        Target::Text => inner,
                    });
                    i = end + 2;
                    copied = i;
                    continue;
                }
            }
            i += 1;
        }
        out.push_str(&s[copied..]);
        out
    }

    /// One `[[inner]]` (`![[inner]]` when `embed`).
    fn wikilink(&mut self, inner: &str, embed: bool) -> String {
        let inner = if self.html { unescape_html(inner) } else { inner.to_string() };
        let Some(w) = Wikilink::parse(&inner) else {
            return format!("{}[[{inner}]]", if embed { "!" } else { "" });
        };
        if embed && is_file_name(&w.target) {
            return self.file_embed(&w);
        }
        self.page_link(&w, embed)
    }

    /// A link to the page (or file) `w` names; a note embed that [`transclude`]
    /// did not take is a link as well.
    fn page_link(&mut self, w: &Wikilink, embed: bool) -> String {
        let source = self.resolver.source().to_string();
        let resolved = if w.target.is_empty() {
            Some(source.clone())
        } else {
            self.resolver.page(&w.target).or_else(|| self.resolver.asset(&w.target))
        };
        let dest = match resolved {
            Some(path) => self.anchors.dest(&path, w.fragment.as_ref()),
            None => {
                let bang = if embed { "!" } else { "" };
                let message = format!("{bang}[[{}]] names no page of the knowledge base; its text was kept", w.written);
                self.notice(NoticeKind::UnresolvedWikilink, message);
                // A link to a page that is not there: the renderer reports it as
                // a broken link, with its line, and shows its words.
                link_from(&source, &missing_page(&w.target))
            }
        };
        self.link(&w.display(), &dest)
    }

    /// `![[image.png|300]]` → an image; `![[doc.pdf]]` → a link to the file.
    fn file_embed(&mut self, w: &Wikilink) -> String {
        let name = w.target.rsplit('/').next().unwrap_or_default();
        let image = IMAGE_EXTENSIONS.contains(&extension(name).unwrap_or_default().as_str());
        let label = match &w.alias {
            Some(alias) if !is_size(alias) => alias.clone(),
            _ if image => file_stem(name).to_string(),
            _ => name.to_string(),
        };
        let dest = match self.resolver.asset(&w.target) {
            Some(path) => link_from(self.resolver.source(), &path),
            None => {
                let message = format!("![[{}]] names no file of the knowledge base; it is shown missing", w.written);
                self.notice(NoticeKind::UnresolvedWikilink, message);
                // Written as a relative path that does not exist, so the renderer
                // reports a missing asset (and shows the alt text).
                link_from("", &w.target)
            }
        };
        match (image, self.html) {
            (true, true) => format!("<img src=\"{dest}\" alt=\"{}\">", escape_html(&label)),
            (true, false) => format!("![{}]({dest})", escape_link_text(&label)),
            (false, _) => self.link(&label, &dest),
        }
    }

    fn link(&self, text: &str, dest: &str) -> String {
        if self.html {
            format!("<a href=\"{dest}\">{}</a>", escape_html(text))
        } else {
            markdown_link(text, dest)
        }
    }

    fn notice(&mut self, kind: NoticeKind, message: String) {
        self.notices.push(Notice { line: self.src, kind, message });
    }
}

/// The end (index of `]]`) of the wikilink whose `[[` is at `start`.
fn wikilink_end(s: &str, start: usize) -> Option<usize> {
    let close = start + 2 + s[start + 2..].find("]]")?;
    let inner = &s[start + 2..close];
    // `[[a [[b]]`: the inner `[[` opens the link. `[[1]](url)`: a Markdown link
    // whose text is `[1]`.
    if inner.trim().is_empty() || inner.contains("[[") || s[close + 2..].starts_with('(') {
        return None;
    }
    Some(close)
}

/// The start of the closing `==` of a highlight opening at `start`: both on the
/// line, text between them that neither starts nor ends with a space, and no
/// third `=` (`===`, `!==` are not highlights).
fn highlight_end(s: &str, start: usize) -> Option<usize> {
    let b = s.as_bytes();
    if b.get(start + 1) != Some(&b'=') || b.get(start + 2) == Some(&b'=') || (start > 0 && b[start - 1] == b'=') {
        return None;
    }
    let end = start + 2 + s[start + 2..].find("==")?;
    let inner = &s[start + 2..end];
    let spaced = inner.starts_with(char::is_whitespace) || inner.ends_with(char::is_whitespace);
    (!inner.is_empty() && !spaced && b.get(end + 2) != Some(&b'=')).then_some(end)
}

/// A line is split at a trailing block id: `text ^abc-1` → (`text`, `abc-1`).
/// A line that is only `^abc` gives empty text.
fn split_block_id(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_end();
    let caret = t.rfind('^')?;
    let id = &t[caret + 1..];
    let before = &t[..caret];
    let valid = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (valid && (before.trim().is_empty() || before.ends_with([' ', '\t']))).then(|| (before.trim_end(), id))
}

/// The line split into (is inline code, text) pieces. A run of backticks opens a
/// code span closed by the next run of the same length; one never closed is text.
fn code_segments(line: &str) -> Vec<(bool, &str)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut text_start) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => {
                let n = b[i..].iter().take_while(|&&c| c == b'`').count();
                let mut j = i + n;
                let close = loop {
                    let Some(k) = line[j..].find('`').map(|k| j + k) else { break None };
                    let m = b[k..].iter().take_while(|&&c| c == b'`').count();
                    if m == n {
                        break Some(k);
                    }
                    j = k + m;
                };
                match close {
                    Some(k) => {
                        out.push((false, &line[text_start..i]));
                        out.push((true, &line[i..k + n]));
                        i = k + n;
                        text_start = i;
                    }
                    None => i += n,
                }
            }
            _ => i += 1,
        }
    }
    out.push((false, &line[text_start.min(b.len())..]));
    out
}

/// A container title line of the Html form (raw HTML, see [`crate::mkdocs`]).
fn is_html_title(line: &str) -> bool {
    let t = line.trim_start();
    ["<p class=\"admonition-title\">", "<summary class=\"admonition-title\">", "<p class=\"tab-title\">"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// The content path a link to the missing page `target` points at.
fn missing_page(target: &str) -> String {
    if target.ends_with('/') {
        format!("{target}index.md")
    } else if strip_md_extension(target).len() < target.len() || is_file_name(target) {
        target.to_string()
    } else {
        format!("{target}.md")
    }
}

fn markdown_link(text: &str, dest: &str) -> String {
    format!("[{}]({dest})", escape_link_text(text))
}

/// Link text that cannot end the link or a table cell early.
fn escape_link_text(text: &str) -> String {
    text.replace('[', "\\[").replace(']', "\\]").replace('|', "\\|")
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Undoes [`crate::mkdocs`]'s escaping of a title, to read a wikilink in it.
fn unescape_html(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// `300` or `300x200`: an image size.
fn is_size(s: &str) -> bool {
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match s.split_once('x') {
        Some((w, h)) => digits(w) && digits(h),
        None => digits(s),
    }
}

/// The lower-case extension of a file name (`a/b.PNG` → `png`).
fn extension(name: &str) -> Option<String> {
    let file = name.rsplit('/').next().unwrap_or(name);
    file.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase())
}

/// Whether a target names a file other than a note: an extension of letters and
/// digits, not `.md` (`v1.2` and `Mr. Smith` are note names).
fn is_file_name(target: &str) -> bool {
    extension(target).is_some_and(|ext| {
        (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
            && ext != "md"
            && ext != "mdx"
    })
}

/// `folder/Note.md` → `Note`.
fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

fn strip_md_extension(s: &str) -> &str {
    let lower = s.to_ascii_lowercase();
    [".md", ".mdx"].iter().find(|ext| lower.ends_with(*ext)).map_or(s, |ext| &s[..s.len() - ext.len()])
}

// ---------------------------------------------------------------------------
// Resolution

/// The notes and files of an Obsidian vault, to find what a wikilink or embed
/// names by Obsidian's rules (for the site builder's [`Resolver`]):
///
/// - A target is compared with file paths without `.md`/`.mdx` (the extension
///   may be written), case-insensitively but otherwise exactly (a space is not a
///   `-`). `Docker Support` matches a file of that name in any folder;
///   `features/Docker Support` matches a path ending so; `/x/y` is from the
///   vault's root and `./y`, `../y` from the linking page's folder; `folder/`
///   names the folder's `index` page.
/// - Of several matches, the one in the linking page's folder wins, then the one
///   with the shortest path, then the first in sort order.
/// - A target no file name matches may be a page's title or one of its aliases.
/// - Surrounding spaces do not count; a percent-encoded target
///   (`Docker%20Support`) matches as its decoded form too.
/// - Files (images, PDFs, …) are matched the same way, by their full name.
#[derive(Debug, Clone, Default)]
pub struct Vault {
    /// Keyed by lower-case path without `.md`/`.mdx`: what targets are compared with.
    pages: PathIndex,
    /// Lower-case title or alias → the paths of the pages that have it.
    names: HashMap<String, Vec<String>>,
    /// Keyed by lower-case path.
    assets: PathIndex,
}

/// Paths with the lower-case key a target is compared with, in sort order, and
/// indexed by the key's file name (so a lookup reads the few files of that name).
#[derive(Debug, Clone, Default)]
struct PathIndex {
    /// (path, key).
    entries: Vec<(String, String)>,
    by_file_name: HashMap<String, Vec<usize>>,
}

impl PathIndex {
    fn new(mut entries: Vec<(String, String)>) -> PathIndex {
        entries.sort();
        let mut by_file_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (_, key)) in entries.iter().enumerate() {
            let name = key.rsplit('/').next().unwrap_or_default();
            by_file_name.entry(name.to_string()).or_default().push(i);
        }
        PathIndex { entries, by_file_name }
    }

    /// The best path for `wanted`, linked from `from`.
    fn find(&self, from: &str, wanted: &Wanted) -> Option<String> {
        let ids = self.by_file_name.get(wanted.file_name())?;
        let keys = ids.iter().map(|&i| &self.entries[i]).filter(|(_, key)| wanted.matches(key));
        pick(from, keys.map(|(path, _)| path.as_str())).map(str::to_string)
    }
}

/// What a target asks for, in lower case.
enum Wanted {
    /// This path exactly.
    Exact(String),
    /// This path or a path ending with `/` and it.
    Suffix(String),
}

impl Wanted {
    fn new(from: &str, target: &str) -> Option<Wanted> {
        let lower = target.to_lowercase();
        if lower.is_empty() {
            None
        } else if let Some(root) = lower.strip_prefix('/') {
            Some(Wanted::Exact(root.to_string()))
        } else if lower.starts_with("./") || lower.starts_with("../") {
            join_relative(&from.to_lowercase(), &lower).map(Wanted::Exact)
        } else {
            Some(Wanted::Suffix(lower))
        }
    }

    fn file_name(&self) -> &str {
        let (Wanted::Exact(w) | Wanted::Suffix(w)) = self;
        w.rsplit('/').next().unwrap_or_default()
    }

    fn matches(&self, key: &str) -> bool {
        match self {
            Wanted::Exact(w) => key == w,
            Wanted::Suffix(w) => {
                key == w
                    || (key.len() > w.len() && key.ends_with(w.as_str()) && key[..key.len() - w.len()].ends_with('/'))
            }
        }
    }
}

/// `a/b/page` + `../c/x` → `a/c/x`; `None` when it climbs above the root.
fn join_relative(from: &str, rel: &str) -> Option<String> {
    kb_common::path::join(from.rsplit_once('/').map_or("", |(dir, _)| dir), rel)
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The best of several matching paths for a link from `from`.
fn pick<'a>(from: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let dir = parent(from);
    candidates.min_by_key(|p| (parent(p) != dir, p.matches('/').count(), p.len(), *p))
}

/// A target as written (trimmed), and percent-decoded when that differs.
fn target_forms(target: &str) -> Vec<String> {
    let t = target.trim();
    let mut forms = vec![t.to_string()];
    if let Ok(decoded) = percent_encoding::percent_decode_str(t).decode_utf8() {
        if decoded != t {
            forms.push(decoded.trim().to_string());
        }
    }
    forms
}

impl Vault {
    /// `pages`: (content-relative source path, title, aliases); `assets`: the
    /// content-relative paths of every other file.
    pub fn new(pages: &[(String, String, Vec<String>)], assets: &[String]) -> Vault {
        let mut names: HashMap<String, Vec<String>> = HashMap::new();
        for (path, title, aliases) in pages {
            for name in std::iter::once(title).chain(aliases) {
                let name = name.trim().to_lowercase();
                if !name.is_empty() {
                    names.entry(name).or_default().push(path.clone());
                }
            }
        }
        Vault {
            pages: PathIndex::new(
                pages.iter().map(|(p, _, _)| (p.clone(), strip_md_extension(p).to_lowercase())).collect(),
            ),
            names,
            assets: PathIndex::new(assets.iter().map(|a| (a.clone(), a.to_lowercase())).collect()),
        }
    }

    /// The source path of the page `target` names, linked from the page at `from`.
    pub fn page(&self, from: &str, target: &str) -> Option<String> {
        let forms = target_forms(target);
        let by_path = forms.iter().find_map(|form| {
            // `[[folder/]]` names the folder's index page.
            let form = if form.ends_with('/') { format!("{form}index") } else { form.clone() };
            self.pages.find(from, &Wanted::new(from, strip_md_extension(&form))?)
        });
        by_path.or_else(|| {
            forms.iter().find_map(|form| {
                let paths = self.names.get(&strip_md_extension(form).to_lowercase())?;
                pick(from, paths.iter().map(String::as_str)).map(str::to_string)
            })
        })
    }

    /// The path of the file `target` names, linked from the page at `from`.
    pub fn asset(&self, from: &str, target: &str) -> Option<String> {
        target_forms(target).iter().find_map(|form| self.assets.find(from, &Wanted::new(from, form)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{normalize, Dialects};

    /// A knowledge base for tests: pages (path, body) and files, read through a [`Vault`].
    struct Kb {
        vault: Vault,
        source: String,
        bodies: HashMap<String, String>,
        titles: HashMap<String, String>,
    }

    impl Kb {
        fn new(source: &str, pages: &[(&str, &str)], assets: &[&str]) -> Kb {
            let list: Vec<(String, String, Vec<String>)> =
                pages.iter().map(|(p, _)| (p.to_string(), file_stem(p).to_string(), Vec::new())).collect();
            let assets: Vec<String> = assets.iter().map(|a| a.to_string()).collect();
            Kb {
                vault: Vault::new(&list, &assets),
                source: source.to_string(),
                bodies: pages.iter().map(|(p, b)| (p.to_string(), b.to_string())).collect(),
                titles: HashMap::new(),
            }
        }

        fn title(mut self, path: &str, title: &str) -> Kb {
            self.titles.insert(path.to_string(), title.to_string());
            self
        }
    }

    impl Resolver for Kb {
        fn source(&self) -> &str {
            &self.source
        }
        fn page(&self, target: &str) -> Option<String> {
            self.vault.page(&self.source, target)
        }
        fn asset(&self, target: &str) -> Option<String> {
            self.vault.asset(&self.source, target)
        }
        fn body(&self, path: &str) -> Option<String> {
            self.bodies.get(path).cloned()
        }
        fn title(&self, path: &str) -> Option<String> {
            self.titles.get(path).cloned()
        }
    }

    fn lines(md: &str) -> Vec<Line> {
        md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect()
    }

    fn join(lines: &[Line]) -> String {
        lines.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    fn inline_md(md: &str, target: Target, kb: &Kb) -> (String, Vec<Notice>) {
        let mut notices = Vec::new();
        let out = inline(lines(md), target, kb, &mut notices);
        (join(&out), notices)
    }

    fn transclude_md(md: &str, target: Target, kb: &Kb) -> (Vec<Line>, Vec<Notice>) {
        let mut notices = Vec::new();
        let out = transclude(lines(md), target, kb, &mut notices);
        (out, notices)
    }

    fn vault_kb() -> Kb {
        Kb::new(
            "guide/start.md",
            &[
                ("guide/start.md", "# Start\n\n## Set up\n\nText ^intro\n"),
                ("features/Docker Support.md", "# Docker\n\n## Running\n\n## Running\n\n## Custom {#own}\n"),
                ("other/Docker Support.md", ""),
                ("Page.md", "Body"),
                ("notes/Page.md", "Other body"),
            ],
            &["images/dns records.png", "docs/manual.pdf"],
        )
    }

    #[test]
    fn wikilinks_become_markdown_links() {
        let kb = vault_kb();
        let (out, notices) = inline_md(
            "[[Page]] [[Page|the page]] [[Page.md]] [[features/Docker Support]]\n[[notes/Page|other]] [[ Page ]]\n",
            Target::Html,
            &kb,
        );
        assert_eq!(
            out,
            "[Page](../Page.md) [the page](../Page.md) [Page](../Page.md) [features/Docker Support](../features/Docker%20Support.md)\n[other](../notes/Page.md) [Page](../Page.md)\n"
        );
        assert!(notices.is_empty());
    }

    #[test]
    fn heading_and_block_fragments_land_on_the_renderer_ids() {
        let kb = vault_kb();
        let (out, _) = inline_md(
            "[[features/Docker Support#Running]] [[features/Docker Support#Custom]] [[#Set up]] [[#Set up|here]]\n",
            Target::Html,
            &kb,
        );
        assert_eq!(
            out,
            "[features/Docker Support > Running](../features/Docker%20Support.md#running) [features/Docker Support > Custom](../features/Docker%20Support.md#own) [Set up](#set-up) [here](#set-up)\n"
        );
        let (out, _) = inline_md("[[Page#^abc]] [[#^intro]] [[Page#No Such Heading!]]\n", Target::Text, &kb);
        assert_eq!(
            out,
            "[Page > ^abc](../Page.md#user-content-block-abc) [^intro](#block-intro) [Page > No Such Heading!](../Page.md#no-such-heading)\n"
        );
    }

    #[test]
    fn pipes_in_tables_and_brackets_in_text() {
        let kb = vault_kb();
        let (out, _) = inline_md("| a | [[Page\\|the [x] page]] |\n", Target::Html, &kb);
        assert_eq!(out, "| a | [the \\[x\\] page](../Page.md) |\n");
        let (out, _) = inline_md("| ![[dns records.png\\|800]] | x |\n", Target::Html, &kb);
        assert_eq!(out, "| ![dns records](../images/dns%20records.png) | x |\n");
    }

    #[test]
    fn unresolved_wikilinks_are_reported_and_left_broken() {
        let kb = vault_kb();
        let (out, notices) = inline_md("a\nSee [[Nowhere|there]] and [[advanced/]].\n", Target::Html, &kb);
        assert_eq!(out, "a\nSee [there](../Nowhere.md) and [advanced/](../advanced/index.md).\n");
        assert_eq!(notices.len(), 2);
        assert_eq!(notices[0].line, 1);
        assert_eq!(notices[0].kind, NoticeKind::UnresolvedWikilink);
        assert_eq!(notices[0].message, "[[Nowhere|there]] names no page of the knowledge base; its text was kept");
    }

    #[test]
    fn code_is_left_alone() {
        let kb = vault_kb();
        let md = "`[[Page]]` and ``a `[[Page]]` b`` but [[Page]]\n```\n[[Page]] ==x== ^id\n```\n> ```\n> [[Page]]\n> ```\n`unclosed [[Page]]\n";
        let (out, notices) = inline_md(md, Target::Html, &kb);
        assert_eq!(
            out,
            "`[[Page]]` and ``a `[[Page]]` b`` but [Page](../Page.md)\n```\n[[Page]] ==x== ^id\n```\n> ```\n> [[Page]]\n> ```\n`unclosed [Page](../Page.md)\n"
        );
        assert!(notices.is_empty());
        assert_eq!(inline_md("return [[rehypeKatex, {}]]\n", Target::Html, &Kb::new("", &[], &[])).1.len(), 1);
    }

    #[test]
    fn image_and_file_embeds() {
        let kb = vault_kb();
        let (out, notices) = inline_md(
            "![[dns records.png]]_Caption_\n![[dns records.png|300x200]] ![[dns records.png|A DNS table]]\n![[manual.pdf]] [[manual.pdf|the manual]]\n",
            Target::Html,
            &kb,
        );
        assert_eq!(
            out,
            "![dns records](../images/dns%20records.png)_Caption_\n![dns records](../images/dns%20records.png) ![A DNS table](../images/dns%20records.png)\n[manual.pdf](../docs/manual.pdf) [the manual](../docs/manual.pdf)\n"
        );
        assert!(notices.is_empty());
        let (out, notices) = inline_md("x\n![[lost diagram.png]]\n", Target::Html, &kb);
        assert_eq!(out, "x\n![lost diagram](lost%20diagram.png)\n");
        assert_eq!((notices[0].line, notices[0].kind), (1, NoticeKind::UnresolvedWikilink));
        assert!(notices[0].message.starts_with("![[lost diagram.png]]"));
    }

    #[test]
    fn a_wikilink_may_hold_code_and_may_name_only_its_text() {
        let kb = vault_kb();
        let md = "the [[Page#Set up|`hasTag`]] function, use [[#|move]], `[[not|a link]]`, [[Page|==both==]]\n";
        let (out, notices) = inline_md(md, Target::Html, &kb);
        assert!(
            out.starts_with("the [`hasTag`](../Page.md#set-up) function, use [move](start.md), `[[not|a link]]`"),
            "{out}"
        );
        assert!(out.ends_with("[<mark>both</mark>](../Page.md)\n"), "{out}");
        assert!(notices.is_empty(), "{notices:?}");
    }

    #[test]
    fn highlights() {
        let kb = vault_kb();
        let md = "a ==marked [[Page]]== b\nx == y == z, a !== b, ===\n`==code==` ==one== and ==two==\n";
        let (html, _) = inline_md(md, Target::Html, &kb);
        assert_eq!(
            html,
            "a <mark>marked [Page](../Page.md)</mark> b\nx == y == z, a !== b, ===\n`==code==` <mark>one</mark> and <mark>two</mark>\n"
        );
        let (text, _) = inline_md(md, Target::Text, &kb);
        assert_eq!(text, "a marked [Page](../Page.md) b\nx == y == z, a !== b, ===\n`==code==` one and two\n");
    }

    #[test]
    fn block_ids() {
        let kb = vault_kb();
        let md = "A paragraph. ^para-1\n- item ^item\n\n^table\nmath 2^10 and x ^ y\n";
        let (html, _) = inline_md(md, Target::Html, &kb);
        assert_eq!(
            html,
            "A paragraph. <span id=\"block-para-1\"></span>\n- item <span id=\"block-item\"></span>\n\n<span id=\"block-table\"></span>\nmath 2^10 and x ^ y\n"
        );
        let (text, _) = inline_md(md, Target::Text, &kb);
        assert_eq!(text, "A paragraph.\n- item\n\n\nmath 2^10 and x ^ y\n");
    }

    #[test]
    fn wikilinks_in_container_titles_are_html_links() {
        let kb = vault_kb();
        let md = "> [!tip] See [[Page|the page]] & ==this==\n> Body [[Page]]\n";
        let d = Dialects::detect("guide/start.md", md);
        let html = normalize(md, Target::Html, d, &kb);
        assert!(
            html.text.contains(
                "<p class=\"admonition-title\">See <a href=\"../Page.md\">the page</a> &amp; <mark>this</mark></p>"
            ),
            "{}",
            html.text
        );
        assert!(html.text.contains("\nBody [Page](../Page.md)\n"));
        let text = normalize(md, Target::Text, d, &kb);
        assert!(text.text.starts_with("**See [the page](../Page.md) & this**"), "{}", text.text);
    }

    fn embed_kb() -> Kb {
        Kb::new(
            "host.md",
            &[
                ("host.md", "![[host]]\n"),
                (
                    "notes/Setup.md",
                    "Intro line.\n\n# Install\n\nRun it. See [[#Configure]].\n\n```sh\n# not a heading\n```\n\n## Configure\n\nEdit it.\n\nSetext\n---\n\n# Other\n\nA block\nof two lines ^blk\n\n- one\n- two ^li\n",
                ),
                ("a.md", "A text\n\n![[b]]\n"),
                ("b.md", "B text\n\n![[a]]\n"),
                ("d1.md", "![[d2]]"),
                ("d2.md", "![[d3]]"),
                ("d3.md", "![[d4]]"),
                ("d4.md", "![[d5]]"),
                ("d5.md", "bottom"),
            ],
            &["pic.png"],
        )
        .title("notes/Setup.md", "Setting \"it\" up")
    }

    #[test]
    fn transclusion_embeds_the_note_with_its_headings_made_bold() {
        let kb = embed_kb();
        let (out, notices) = transclude_md("Before\n![[Setup]]\nAfter\n", Target::Html, &kb);
        assert!(notices.is_empty(), "{notices:?}");
        let text = join(&out);
        assert!(text.starts_with("Before\n!!! embed \"Setting “it” up\"\n    Intro line.\n\n    **Install**\n\n    Run it. See [[notes/Setup#Configure]].\n\n    ```sh\n    # not a heading\n    ```\n\n    **Configure**\n"), "{text}");
        assert!(text.contains("    **Setext**\n\n"), "{text}");
        assert!(text.ends_with("    - two ^li\nAfter\n"), "{text}");
        // Every embedded line maps to the embed's line.
        assert!(out.iter().skip(1).take(out.len() - 2).all(|(s, _)| *s == 1));
        assert_eq!(out.last().map(|l| l.0), Some(2));
    }

    #[test]
    fn transclusion_of_a_section_or_a_block() {
        let kb = embed_kb();
        let (out, _) = transclude_md("![[Setup#Install]]\n", Target::Html, &kb);
        let text = join(&out);
        assert!(text.contains("    **Install**\n") && text.contains("    **Configure**\n"), "{text}");
        assert!(text.contains("**Setext**") && !text.contains("Other") && !text.contains("Intro"), "{text}");
        let (out, _) = transclude_md("![[Setup#^blk]]\n\n  ![[Setup#^li|Item]]\n", Target::Html, &kb);
        assert_eq!(
            join(&out),
            "!!! embed \"Setting “it” up\"\n    A block\n    of two lines\n\n  !!! embed \"Item\"\n      - two\n"
        );
        let (out, notices) = transclude_md("![[Setup#Nope]]\n", Target::Html, &kb);
        assert_eq!(join(&out), "[Setting \"it\" up](notes/Setup.md#nope)\n");
        assert_eq!(notices[0].kind, NoticeKind::MissingInclude);
    }

    #[test]
    fn transclusion_in_text_is_a_reference() {
        let kb = embed_kb();
        let (out, notices) = transclude_md("![[Setup]]\n> [!note]\n> ![[Setup#Configure]]\n", Target::Text, &kb);
        assert_eq!(
            join(&out),
            "*Embedded: [Setting \"it\" up](notes/Setup.md)*\n> [!note]\n> *Embedded: [Setting \"it\" up > Configure](notes/Setup.md#configure)*\n"
        );
        assert!(notices.is_empty());
    }

    #[test]
    fn transclusion_cycles_and_depth_are_reported() {
        let kb = embed_kb();
        let (out, notices) = transclude_md("![[host]]\n", Target::Html, &kb);
        assert_eq!(join(&out), "[host](host.md)\n");
        assert_eq!(notices[0].kind, NoticeKind::IncludeCycle);
        let (out, notices) = transclude_md("![[a]]\n", Target::Html, &kb);
        assert_eq!(
            join(&out),
            "!!! embed \"a\"\n    A text\n\n    !!! embed \"b\"\n        B text\n\n        [a](a.md)\n"
        );
        assert_eq!(notices.len(), 1);
        assert!(notices[0].message.contains("![[a]]"), "{notices:?}");
        let (out, notices) = transclude_md("![[d1]]\n", Target::Html, &kb);
        let text = join(&out);
        assert!(text.ends_with("            !!! embed \"d4\"\n                [d5](d5.md)\n"), "{text}");
        assert_eq!(notices.len(), 1);
        assert!(notices[0].message.contains("deeper"));
    }

    #[test]
    fn transclusion_leaves_files_unresolved_and_plain_quotes_to_inline() {
        let kb = embed_kb();
        let md = "![[pic.png]]\n![[Missing note]]\n> ![[Setup]]\nText ![[Setup]]\n";
        let (out, notices) = transclude_md(md, Target::Html, &kb);
        assert_eq!(join(&out), md);
        assert!(notices.is_empty());
    }

    #[test]
    fn transclusion_inside_a_callout() {
        let kb = embed_kb();
        let md = "> [!info] Embedded\n> ![[Setup#^blk]]\n";
        let d = Dialects::detect("host.md", md);
        let n = normalize(md, Target::Html, d, &kb);
        assert!(n.text.contains("<aside class=\"admonition info\" role=\"note\">"), "{}", n.text);
        assert!(n.text.contains("<aside class=\"admonition embed\" role=\"note\">\n<p class=\"admonition-title\">Setting “it” up</p>\n\nA block\nof two lines\n"), "{}", n.text);
    }

    #[test]
    fn vault_resolution_follows_obsidian() {
        let pages: Vec<(String, String, Vec<String>)> = [
            ("features/Docker Support.md", "Docker support", vec!["containers"]),
            ("x/features/Docker Support.md", "Docker 2", vec![]),
            ("guide/setup.md", "Set up", vec![]),
            ("setup.md", "Setup", vec![]),
            ("deep/a/b/setup.mdx", "Deep", vec![]),
            ("advanced/index.md", "Advanced", vec![]),
            ("Docker-Support.md", "Dashes", vec![]),
        ]
        .iter()
        .map(|(p, t, a)| (p.to_string(), t.to_string(), a.iter().map(|s| s.to_string()).collect()))
        .collect();
        let assets = ["img/dns records.png".to_string(), "a/b/img/dns records.png".to_string()];
        let v = Vault::new(&pages, &assets);
        let page = |from: &str, t: &str| v.page(from, t);
        assert_eq!(page("index.md", "docker support").as_deref(), Some("features/Docker Support.md"));
        assert_eq!(page("index.md", "Docker-Support").as_deref(), Some("Docker-Support.md"));
        assert_eq!(page("index.md", "x/features/Docker Support").as_deref(), Some("x/features/Docker Support.md"));
        assert_eq!(page("index.md", " Docker%20Support.md ").as_deref(), Some("features/Docker Support.md"));
        // Same folder first, then the shortest path.
        assert_eq!(page("guide/other.md", "setup").as_deref(), Some("guide/setup.md"));
        assert_eq!(page("elsewhere/x.md", "setup").as_deref(), Some("setup.md"));
        assert_eq!(page("deep/a/b/x.md", "setup.mdx").as_deref(), Some("deep/a/b/setup.mdx"));
        assert_eq!(page("guide/x.md", "/setup").as_deref(), Some("setup.md"));
        assert_eq!(page("guide/x.md", "./setup").as_deref(), Some("guide/setup.md"));
        assert_eq!(page("guide/x.md", "../features/docker support").as_deref(), Some("features/Docker Support.md"));
        assert_eq!(page("x.md", "advanced/").as_deref(), Some("advanced/index.md"));
        // Titles and aliases when no file name matches.
        assert_eq!(page("x.md", "Containers").as_deref(), Some("features/Docker Support.md"));
        assert_eq!(page("x.md", "Set up").as_deref(), Some("guide/setup.md"));
        assert_eq!(page("x.md", "ures/Docker Support"), None);
        assert_eq!(page("x.md", ""), None);
        assert_eq!(v.asset("x.md", "dns records.png").as_deref(), Some("img/dns records.png"));
        assert_eq!(v.asset("a/b/img/x.md", "DNS%20records.png").as_deref(), Some("a/b/img/dns records.png"));
        assert_eq!(v.asset("x.md", "b/img/dns records.png").as_deref(), Some("a/b/img/dns records.png"));
        assert_eq!(v.asset("x.md", "records.png"), None);
    }

    #[test]
    fn whole_pages_leave_no_obsidian_syntax_in_html() {
        let kb = Kb::new(
            "docs/index.md",
            &[
                ("docs/index.md", ""),
                ("docs/features/callouts.md", "## Types\n\nMany ^types\n"),
                ("docs/Setup.md", "# Setup\n\nDo [[callouts|this]].\n"),
            ],
            &["docs/images/shot.png"],
        );
        let md = "# Welcome\n\nSee [[callouts]], [[callouts#Types|types]] and [[Nowhere]].\n\n![[Setup]]\n\n> [!question]+ Nested?\n>\n> > [!todo]- Yes\n> > ![[shot.png|200]]\n\n> [!NOTE]\n> GitHub ==style==.\n\n| a | b |\n| - | - |\n| [[Setup\\|set up]] | ![[shot.png\\|100]] |\n\n```md\n[[kept]] > [!kept]\n```\n";
        let d = Dialects::detect("docs/index.md", md);
        assert!(d.obsidian);
        for target in [Target::Html, Target::Text] {
            let n = normalize(md, target, d, &kb);
            let outside_code = n.text.split("```").step_by(2).collect::<String>();
            for token in ["[[", "]]", "[!", "=="] {
                assert!(!outside_code.contains(token), "{token} left in {target:?}:\n{}", n.text);
            }
            assert!(n.text.contains("```md\n[[kept]] > [!kept]\n```"));
            assert_eq!(n.line_map.len(), n.text.lines().count());
            assert_eq!(n.notices.len(), 1, "{:?}", n.notices);
            assert_eq!(n.notices[0].line, 2);
            // No heading added: the same headings in both forms.
            let headings: Vec<_> = kb_common::slug::headings(&n.text).into_iter().map(|h| h.id).collect();
            assert_eq!(headings, vec!["welcome"], "{}", n.text);
        }
        let html = normalize(md, Target::Html, d, &kb);
        assert!(html.text.contains("[types](features/callouts.md#types)"), "{}", html.text);
        assert!(html.text.contains("Do [this](features/callouts.md)."), "{}", html.text);
        assert!(html.text.contains("![shot](images/shot.png)"));
        assert!(html.text.contains("| [set up](Setup.md) | ![shot](images/shot.png) |"));
        let at = html.text.find("**Setup**").unwrap_or_default();
        assert_eq!(html.source_line(at), 4);
    }

    #[test]
    fn arbitrary_text_never_panics_and_keeps_its_line_map() {
        const PIECES: [&str; 30] = [
            "[[",
            "]]",
            "![[",
            "|",
            "\\|",
            "#",
            "^",
            " ^id",
            "==",
            "`",
            "```",
            "> ",
            "[!note]",
            "[!tip]-",
            "**Note:**",
            " ",
            "\n",
            "\n\n",
            "é",
            "\u{3000}",
            "Setup",
            "host",
            "- ",
            "    ",
            "![[Setup]]",
            "![[Setup#^blk]]",
            "[[Setup#Install|x]]",
            "![[pic.png|30]]",
            "\n> [!note] T\n> ",
            "![[a]]",
        ];
        let kb = embed_kb();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let mut md = String::new();
            for _ in 0..next() % 40 {
                md.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            let d = Dialects::detect("host.md", &md);
            let d = Dialects { obsidian: true, ..d };
            for target in [Target::Html, Target::Text] {
                let n = normalize(&md, target, d, &kb);
                assert_eq!(n.line_map.len(), n.text.lines().count(), "{md:?}");
                assert!(n.line_map.iter().all(|&l| l < md.lines().count().max(1)), "{md:?}");
            }
        }
    }
}
