//! The inline pass: wikilinks, image and file embeds, `==highlight==` and `^block`
//! ids rewritten line by line, outside fenced code and inline code spans.

use html_escape::encode_quoted_attribute;

use super::lines::{code_segments, split_block_id, split_prefix, Fences};
use super::wikilink::{
    block_element_id, escape_link_text, extension, file_stem, is_file_name, markdown_link, missing_page, wikilink_end,
    Anchors, Wikilink,
};
use crate::{link_from, Line, Notice, NoticeKind, Resolver, Target};

/// File endings an image embed shows as an image.
const IMAGE_EXTENSIONS: [&str; 8] = ["png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "bmp"];

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
        let inner = if self.html { unencode_quoted_attribute(inner) } else { inner.to_string() };
        let Some(w) = Wikilink::parse(&inner) else {
            return format!("{}[[{inner}]]", if embed { "!" } else { "" });
        };
        if embed && is_file_name(&w.target) {
            return self.file_embed(&w);
        }
        self.page_link(&w, embed)
    }

    /// A link to the page (or file) `w` names; a note embed that [`transclude`](super::transclude)
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
            (true, true) => format!("<img src=\"{dest}\" alt=\"{}\">", encode_quoted_attribute(&label)),
            (true, false) => format!("![{}]({dest})", escape_link_text(&label)),
            (false, _) => self.link(&label, &dest),
        }
    }

    fn link(&self, text: &str, dest: &str) -> String {
        if self.html {
            format!("<a href=\"{dest}\">{}</a>", encode_quoted_attribute(text))
        } else {
            markdown_link(text, dest)
        }
    }

    fn notice(&mut self, kind: NoticeKind, message: String) {
        self.notices.push(Notice { line: self.src, kind, message });
    }
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

/// A container title line of the Html form (raw HTML, see [`crate::mkdocs`]).
fn is_html_title(line: &str) -> bool {
    let t = line.trim_start();
    ["<p class=\"admonition-title\">", "<summary class=\"admonition-title\">", "<p class=\"tab-title\">"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// Undoes [`crate::mkdocs`]'s escaping of a title, to read a wikilink in it.
fn unencode_quoted_attribute(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obsidian::test_support::*;

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
}
