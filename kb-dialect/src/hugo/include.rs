//! Text from other files: `include`, the code sample shortcodes (`code_sample`,
//! `codenew`, `code`), and included text rendered with its own shortcodes.

use super::calls::Call;
use super::inline::Rendered;
use super::scanner::Scanner;
use super::{translate_at, MAX_DEPTH};
use crate::{comments, Dialects, Line, NoticeKind};

impl Scanner<'_> {
    /// Included text: its comments removed, its own shortcodes rendered, blank
    /// lines around it trimmed; every line on the including line.
    pub(super) fn expand(&mut self, lines: Vec<Line>, src: usize) -> Vec<Line> {
        let all = Dialects { mkdocs: true, obsidian: false, gfm: true, mdx: false, hugo: true };
        let lines = comments::strip(lines.into_iter().map(|(_, l)| (src, l)).collect(), all);
        let mut out = translate_at(lines, self.target, self.resolver, self.notices, self.reported, self.depth + 1);
        while out.last().is_some_and(|(_, l)| l.trim().is_empty()) {
            out.pop();
        }
        let lead = out.iter().take_while(|(_, l)| l.trim().is_empty()).count();
        out.drain(..lead);
        out
    }

    /// A file a page includes, read as a page: beside the page, or by name.
    pub(super) fn include_body(&self, file: &str) -> Option<Vec<Line>> {
        let source = self.resolver.source();
        let dir = source.rsplit_once('/').map_or("", |(d, _)| d);
        let beside = if dir.is_empty() { file.to_string() } else { format!("{dir}/{file}") };
        let stem = file.trim_end_matches(".md");
        let body = self
            .resolver
            .body(&beside)
            .or_else(|| self.resolver.page(&format!("includes/{stem}")).and_then(|p| self.resolver.body(&p)))
            .or_else(|| self.resolver.page(stem).and_then(|p| self.resolver.body(&p)))?;
        Some(body.lines().map(|l| (0, l.to_string())).collect())
    }

    pub(super) fn include(&mut self, c: &Call, src: usize) -> Rendered {
        let file = c.get_or_first("file").unwrap_or("").to_string();
        match self.include_body(&file) {
            Some(lines) if self.depth < MAX_DEPTH => {
                Rendered::Lines(self.expand(lines, src).into_iter().map(|(_, l)| l).collect())
            }
            _ => {
                self.notice(
                    src,
                    NoticeKind::MissingInclude,
                    format!("include `{file}` is not in the content folder; the line was left out"),
                );
                Rendered::Nothing
            }
        }
    }

    pub(super) fn code_sample(&mut self, c: &Call, src: usize) -> Rendered {
        let file = c.get_or_first("file").unwrap_or("").to_string();
        self.notice(
            src,
            NoticeKind::MissingInclude,
            format!("code sample `{file}` is not in the content folder; only its name was kept"),
        );
        Rendered::Inline(format!("*Example: {}*", file.replace('*', "\\*")))
    }
}
