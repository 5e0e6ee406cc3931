//! A knowledge base for the tests of the two passes: pages and files read through
//! a [`Vault`], and helpers that run a pass over Markdown.

use std::collections::HashMap;

use super::wikilink::file_stem;
use super::{inline, transclude, Vault};
use crate::{Line, Notice, Resolver, Target};

/// A knowledge base for tests: pages (path, body) and files, read through a [`Vault`].
pub(super) struct Kb {
    vault: Vault,
    source: String,
    bodies: HashMap<String, String>,
    titles: HashMap<String, String>,
}

impl Kb {
    pub(super) fn new(source: &str, pages: &[(&str, &str)], assets: &[&str]) -> Kb {
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

    pub(super) fn title(mut self, path: &str, title: &str) -> Kb {
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

pub(super) fn lines(md: &str) -> Vec<Line> {
    md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect()
}

pub(super) fn join(lines: &[Line]) -> String {
    lines.iter().map(|(_, l)| format!("{l}\n")).collect()
}

pub(super) fn inline_md(md: &str, target: Target, kb: &Kb) -> (String, Vec<Notice>) {
    let mut notices = Vec::new();
    let out = inline(lines(md), target, kb, &mut notices);
    (join(&out), notices)
}

pub(super) fn transclude_md(md: &str, target: Target, kb: &Kb) -> (Vec<Line>, Vec<Notice>) {
    let mut notices = Vec::new();
    let out = transclude(lines(md), target, kb, &mut notices);
    (out, notices)
}

pub(super) fn vault_kb() -> Kb {
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

pub(super) fn embed_kb() -> Kb {
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
