//! Transclusion: a note embed alone on its line (`![[Note]]`, `![[Note#Heading]]`,
//! `![[Note#^block]]`) replaced by the note's text in an `!!! embed` container
//! (Html) or a one-line reference to it (Text).

use kb_common::slug;

use super::lines::{code_segments, split_prefix, Fences};
use super::section::{block_text, heading_section};
use super::wikilink::{file_stem, last_heading, markdown_link, strip_md_extension, Anchors, Fragment, Wikilink};
use super::MAX_DEPTH;
use crate::callout::{container_line, is_callout_header, starts_block};
use crate::{Dialect, Line, Notice, NoticeKind, Resolver, Target};

/// Replaces lines that are only a note embed (`![[Note]]`, `![[Note#Heading]]`,
/// `![[Note#^block]]`) with the note's text in an `!!! embed` container (Html) or
/// a one-line reference to it (Text). Image and file embeds, embeds inside other
/// text and embeds of notes that do not resolve are left for [`inline`](super::inline).
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
pub(super) fn atx_heading_text(rest: &str) -> Option<&str> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::obsidian::test_support::*;

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
}
