//! The glossary shortcodes: `glossary_tooltip` (a link to the term's page) and
//! `glossary_definition` (the term page's text, or a link to it in the Text form).

use super::calls::Call;
use super::inline::{in_link_destination, Rendered};
use super::scanner::Scanner;
use super::MAX_DEPTH;
use crate::{Line, NoticeKind, Target};

impl Scanner<'_> {
    /// The glossary page of a term: `glossary/<term_id>`, also in lower case
    /// (Hugo matches the file name regardless of case).
    fn glossary_page(&self, term_id: &str) -> Option<String> {
        let term = term_id.trim();
        if term.is_empty() {
            return None;
        }
        self.resolver
            .page(&format!("glossary/{term}"))
            .or_else(|| self.resolver.page(&format!("glossary/{}", term.to_ascii_lowercase())))
    }

    pub(super) fn tooltip(&mut self, c: &Call, before: &str, heading: bool) -> String {
        let term = c.get("term_id").unwrap_or("");
        let page = self.glossary_page(term);
        let text = c
            .get("text")
            .map(str::to_string)
            .or_else(|| page.as_ref().and_then(|p| self.resolver.title(p)))
            .unwrap_or_else(|| term.to_string());
        // No link in a heading or inside another link's text.
        let in_link_text = before.matches('[').count() > before.matches(']').count();
        match page {
            Some(p) if !heading && !in_link_text && !in_link_destination(before) => {
                format!("[{text}]({})", crate::link_from(self.resolver.source(), &p))
            }
            _ => text,
        }
    }

    /// `glossary_definition`: the glossary page's text, as Hugo's template
    /// cuts it.
    pub(super) fn definition(&mut self, c: &Call, src: usize) -> Rendered {
        let term = c.get("term_id").unwrap_or("");
        let page = self.glossary_page(term);
        if let (Target::Text, Some(page)) = (self.target, &page) {
            // The index keeps a definition on its glossary page only, as it
            // keeps a transcluded note on its own page: a search then finds the
            // source, not every page that repeats it (see `obsidian`).
            let title = self.resolver.title(page).unwrap_or_else(|| term.to_string());
            let link = crate::link_from(self.resolver.source(), page);
            return Rendered::Lines(vec![format!("*Definition: [{title}]({link})*")]);
        }
        let body = page.and_then(|p| self.resolver.body(&p));
        let Some(body) = body else {
            self.notice(
                src,
                NoticeKind::MissingInclude,
                format!("glossary term `{term}` is not in the content folder; its definition was left out"),
            );
            return Rendered::Nothing;
        };
        if self.depth >= MAX_DEPTH {
            self.notice(src, NoticeKind::IncludeCycle, format!("glossary term `{term}` nests too deep; left out"));
            return Rendered::Nothing;
        }
        let text = match c.get("length") {
            Some("short") | None => body.split("<!--more-->").next().unwrap_or("").to_string(),
            _ => body,
        };
        let lines: Vec<Line> = text.lines().map(|l| (src, l.to_string())).collect();
        let mut lines = self.expand(lines, src);
        if let Some(prepend) = c.get("prepend").filter(|p| !p.trim().is_empty()) {
            prepend_to_first(&mut lines, prepend.trim());
        }
        Rendered::Lines(lines.into_iter().map(|(_, l)| l).collect())
    }
}

/// Puts Hugo's `prepend` before the first paragraph, whose first letter goes
/// to lower case (`A Pod is` + `The smallest…` → `A Pod is the smallest…`).
fn prepend_to_first(lines: &mut [Line], prepend: &str) {
    if let Some((_, first)) = lines.iter_mut().find(|(_, l)| !l.trim().is_empty()) {
        let t = first.trim_start();
        let mut chars = t.chars();
        let lowered: String = chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default();
        *first = format!("{prepend} {lowered}");
    }
}
