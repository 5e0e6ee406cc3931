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
//!
//! | module | job |
//! | --- | --- |
//! | `transclusion` | the first pass: note embeds alone on a line, copied in or referenced |
//! | `section` | the heading section or `^block` an embed takes from a note |
//! | `inline_syntax` | the second pass: wikilinks, file embeds, highlights, block ids |
//! | `wikilink` | the `[[…]]` syntax, its display text, destination and heading ids |
//! | `lines` | fenced code, blockquote markers, code spans and block ids on a line |
//! | `vault` | where a target leads by Obsidian's rules ([`Vault`]) |
//!
//! [`Target::Html`]: crate::Target::Html
//! [`Target::Text`]: crate::Target::Text
//! [`Resolver`]: crate::Resolver
//! [`NoticeKind::IncludeCycle`]: crate::NoticeKind::IncludeCycle

mod inline_syntax;
mod lines;
mod section;
#[cfg(test)]
mod test_support;
mod transclusion;
mod vault;
mod wikilink;

pub use inline_syntax::inline;
pub use transclusion::transclude;
pub use vault::Vault;

/// How deep embeds nest before the next one is replaced by a link.
pub const MAX_DEPTH: usize = 4;

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use crate::{normalize, Dialects, Target};

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
