//! Container shortcodes: the admonitions (`note`, `caution`, `warning`, `tip`,
//! `info`, `alert`), `tabs` and `tab` (also a tab filled from a file), `details`
//! and `table`, opened and closed as blocks of the tree.

use super::calls::Call;
use super::scanner::{LineOut, Scanner};
use crate::mdx::tree::{self, Block, Item, Kind, Text};
use crate::NoticeKind;

impl Scanner<'_> {
    /// A container's opener or closer: a block where it starts its line (or
    /// closes one), else dropped with its inner text kept.
    pub(super) fn container(&mut self, c: &Call, out: &mut LineOut, flow: bool) {
        if c.closing {
            if let Some(at) = self.block_open.iter().rposition(|n| *n == c.name) {
                out.flush(&mut self.items);
                self.block_open.truncate(at);
                self.items.push(Item::Close(c.name.clone()));
                out.mid = true;
            }
            return;
        }
        if !flow {
            return;
        }
        out.flush(&mut self.items);
        let indent = tree::indent_of(&out.ws);
        match c.name.as_str() {
            "tab" => self.open_tab(c, &out.ws, out.src),
            "tabs" => {
                self.tabs = 0;
                self.items.push(Item::Open(Block::new("tabs", Kind::Plain, indent, out.src)));
            }
            "table" => {
                self.items.push(Item::Open(Block::new("table", Kind::Plain, indent, out.src)));
                if let Some(caption) = c.get("caption").filter(|t| !t.trim().is_empty()) {
                    self.items.push(Item::Text(Text::new(out.src, format!("{}*{}*", out.ws, caption.trim()))));
                    self.items.push(Item::Text(Text::new(out.src, "")));
                    out.produced = true;
                }
            }
            _ => {
                let kind = container_kind(c);
                self.items.push(Item::Open(Block::new(c.name.clone(), kind, indent, out.src)));
            }
        }
        self.block_open.push(c.name.clone());
        if c.self_closing {
            if c.name == "tab" {
                self.tab_include(c, out);
            }
            self.block_open.pop();
            self.items.push(Item::Close(c.name.clone()));
        }
        out.mid = true;
    }

    pub(super) fn open_tab(&mut self, c: &Call, ws: &str, src: usize) {
        self.tabs += 1;
        let label = c.get_or_first("name").map(str::trim).filter(|n| !n.is_empty());
        let label = label.map_or_else(|| format!("Tab {}", self.tabs), str::to_string);
        let marker = format!("=== \"{}\"", tree::quote_safe(&label));
        self.items.push(Item::Open(Block::new("tab", Kind::Marker(marker), tree::indent_of(ws), src)));
    }

    /// `{{< tab name="X" include="file.md" />}}`: the file's text in the tab.
    fn tab_include(&mut self, c: &Call, out: &LineOut) {
        let Some(file) = c.get("include") else {
            return;
        };
        match self.include_body(file) {
            Some(lines) => {
                let expanded = self.expand(lines, out.src);
                self.items.extend(expanded.into_iter().map(|(s, l)| Item::Text(Text::new(s, l))));
            }
            None => self.notice(
                out.src,
                NoticeKind::MissingInclude,
                format!("tab includes `{file}`, which is not in the content folder; the tab was left empty"),
            ),
        }
    }
}

/// The marker of an admonition or details container.
fn container_kind(c: &Call) -> Kind {
    match c.name.as_str() {
        "details" => {
            let summary = c.get_or_first("summary").filter(|s| !s.trim().is_empty()).unwrap_or("Details");
            Kind::Marker(format!("??? note \"{}\"", tree::quote_safe(summary)))
        }
        "alert" => {
            let class = match c.get("color") {
                Some("warning") => "warning",
                Some("danger") => "danger",
                _ => "note",
            };
            // Hugo's alert shows no heading without a title: `""` is MkDocs's "no title".
            Kind::Marker(format!("!!! {class} \"{}\"", tree::quote_safe(c.get("title").unwrap_or(""))))
        }
        "note" | "caution" | "warning" | "tip" | "info" => {
            Kind::Marker(tree::admonition_marker(&c.name, c.get_or_first("title")))
        }
        _ => Kind::Plain,
    }
}
