//! Heading ids, shared by the renderer (the `id` attribute) and the chunker (the
//! `#anchor` a result links to), so that the two can never disagree.
//!
//! Ids follow Python-Markdown's `toc` slugify, which is what MkDocs sites and their
//! hand-written `#anchor` links use: NFKD, drop non-ASCII, keep word characters,
//! spaces and hyphens, lowercase, collapse runs of spaces and hyphens into one `-`.
//! A repeated id gets `_1`, `_2`, … in document order. An explicit `{ #id }` on the
//! heading wins.

use std::collections::HashSet;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use unicode_normalization::UnicodeNormalization;

/// Options used everywhere the build parses Markdown.
pub fn markdown_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
}

/// `"Setting up SSH keys!"` → `"setting-up-ssh-keys"`.
pub fn slugify(text: &str) -> String {
    let ascii: String = text.nfkd().filter(char::is_ascii).collect();
    let kept: String =
        ascii.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || c.is_whitespace()).collect();
    let mut out = String::new();
    let mut pending_sep = false;
    for c in kept.trim().to_lowercase().chars() {
        if c == '-' || c.is_whitespace() {
            pending_sep = true;
        } else {
            if pending_sep && !out.is_empty() {
                out.push('-');
            }
            pending_sep = false;
            out.push(c);
        }
    }
    out
}

/// Hands out unique ids in document order.
#[derive(Default)]
pub struct Slugger {
    used: HashSet<String>,
}

impl Slugger {
    /// The id for a heading with this text (or explicit id).
    pub fn id(&mut self, text: &str, explicit: Option<&str>) -> String {
        let base = match explicit {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => {
                let s = slugify(text);
                if s.is_empty() {
                    "section".to_string()
                } else {
                    s
                }
            }
        };
        let mut id = base.clone();
        let mut n = 1;
        while !self.used.insert(id.clone()) {
            id = format!("{base}_{n}");
            n += 1;
        }
        id
    }
}

/// A heading of a Markdown document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    pub id: String,
    /// Byte range of the heading (its line, or lines for a setext heading).
    pub range: std::ops::Range<usize>,
}

/// All headings of `markdown` with their ids, in document order.
pub fn headings(markdown: &str) -> Vec<Heading> {
    let mut slugger = Slugger::default();
    let mut out = Vec::new();
    let mut current: Option<(u8, Option<String>, String, std::ops::Range<usize>)> = None;
    for (event, range) in Parser::new_ext(markdown, markdown_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                current = Some((level_number(level), id.map(|s| s.to_string()), String::new(), range));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, explicit, text, range)) = current.take() {
                    let text = text.trim().to_string();
                    let id = slugger.id(&text, explicit.as_deref());
                    out.push(Heading { level, text, id, range });
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, text, _)) = current.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, _, text, _)) = current.as_mut() {
                    text.push(' ');
                }
            }
            _ => {}
        }
    }
    out
}

pub fn level_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugify_matches_python_markdown() {
        assert_eq!(slugify("Setting up SSH keys"), "setting-up-ssh-keys");
        assert_eq!(slugify("Step 1: Sign in — now!"), "step-1-sign-in-now");
        assert_eq!(slugify("Café & crème"), "cafe-creme");
        assert_eq!(slugify("  --gres=nvme:100  "), "gresnvme100");
        assert_eq!(slugify("a_b - c"), "a_b-c");
    }

    #[test]
    fn duplicates_get_suffixes_and_explicit_ids_win() {
        let md = "# Intro\n## Usage\n## Usage\n### Usage {#custom}\nSetext\n---\n";
        let ids: Vec<_> = headings(md).into_iter().map(|h| (h.level, h.id)).collect();
        assert_eq!(
            ids,
            vec![
                (1, "intro".to_string()),
                (2, "usage".to_string()),
                (2, "usage_1".to_string()),
                (3, "custom".to_string()),
                (2, "setext".to_string())
            ]
        );
    }

    #[test]
    fn headings_in_code_are_not_headings() {
        assert!(headings("```\n# not a heading\n```\n").is_empty());
    }
}
