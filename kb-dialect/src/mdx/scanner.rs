//! The scanner: reads a page, outside fenced code and math, as runs of lines whose
//! JSX tags and expressions become [`Item`]s of the container tree.

use std::collections::{HashMap, HashSet};

use super::assemble::{flow_lines, Asm};
use super::components::{block_key, code_block, escape_text, html_tag, role, tab_labels, Role};
use super::lines::{admonition_item, clean_fence_info, opens_math_block};
use super::tokens::{tokenize, AttrValue, Tag, TokKind};
use super::tree::{self, Block, Item, Kind, Text};
use crate::fence::Fence;
use crate::{Line, Notice, NoticeKind};

/// An element open as a block, innermost last.
pub(super) struct OpenTag {
    name: String,
    /// `<Tabs values={[{label, value}]}>`: the label of each value.
    labels: HashMap<String, String>,
    /// `<CodeBlock>`: its language and title.
    code: Option<(String, Option<String>)>,
}

pub(super) struct Scanner<'n> {
    pub(super) notices: &'n mut Vec<Notice>,
    /// Component names reported on this page.
    pub(super) reported: HashSet<String>,
    pub(super) items: Vec<Item>,
    pub(super) open: Vec<OpenTag>,
}

impl Scanner<'_> {
    pub(super) fn scan(&mut self, lines: &[Line]) {
        let mut i = 0;
        while i < lines.len() {
            let (src, line) = &lines[i];
            if let Some(f) = Fence::open(line) {
                i = self.fenced(lines, i, f);
            } else if let Some(item) = admonition_item(*src, line) {
                self.items.push(item);
                i += 1;
            } else if opens_math_block(line) {
                i = self.math(lines, i);
            } else {
                let end = run_end(lines, i);
                self.run(&lines[i..end]);
                i = end;
            }
        }
    }

    /// Copies a fenced block, its info string cleaned and its title made a
    /// caption line before it. Returns the line after the block.
    fn fenced(&mut self, lines: &[Line], i: usize, fence: Fence) -> usize {
        let (src, line) = &lines[i];
        let (opener, title) = clean_fence_info(line);
        if let Some(title) = title {
            let ws = tree::leading_ws(line);
            self.items.push(Item::Text(Text::new(*src, "")));
            self.items.push(Item::Text(Text::new(*src, format!("{ws}*{}*", title.replace('*', "\\*")))));
            self.items.push(Item::Text(Text::new(*src, "")));
        }
        self.items.push(Item::Text(Text::new(*src, opener)));
        tree::copy_code_body(&mut self.items, lines, i, |l| fence.closes(l), str::to_string)
    }

    /// Copies a `$$` display-math block as it is (its braces are TeX).
    fn math(&mut self, lines: &[Line], i: usize) -> usize {
        self.items.push(Item::Text(Text::new(lines[i].0, lines[i].1.clone())));
        tree::copy_code_body(&mut self.items, lines, i, |l| l.contains("$$"), str::to_string)
    }

    /// Reads one run of lines: JSX tags and expressions may span its lines.
    fn run(&mut self, run: &[Line]) {
        let joined = run.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
        let toks = tokenize(&joined);
        let mut asm = Asm::new(run, &joined);
        let flow = flow_lines(&toks, &joined, &asm);
        for tok in &toks {
            asm.at(tok.start);
            match &tok.kind {
                TokKind::Text => asm.source_text(tok.start, &joined[tok.start..tok.end], &mut self.items),
                TokKind::Tag(tag) => {
                    let on_flow_line = flow[asm.line];
                    self.tag(&mut asm, tag, on_flow_line, &joined[tok.start..tok.end]);
                    asm.at(tok.end.saturating_sub(1));
                }
                TokKind::Expr(literal) => self.expr(&mut asm, literal.as_deref(), &joined[tok.start..tok.end]),
            }
        }
        asm.end_line(&mut self.items);
    }

    fn tag(&mut self, asm: &mut Asm, tag: &Tag, flow: bool, raw: &str) {
        let role = role(tag);
        if role == Role::Html {
            asm.replacement(&html_tag(tag, raw));
            return;
        }
        if role == Role::Unknown && !tag.name.is_empty() {
            self.report(&tag.name, asm.src(), "is not a component this build knows; its text was kept");
        }
        let closes_block = tag.closing && self.open.iter().any(|o| o.name == tag.name);
        if !(role == Role::Structural || flow || closes_block) {
            return; // inside running text: the tag goes, its children stay
        }
        asm.flush(&mut self.items);
        if tag.closing {
            if let Some(at) = self.open.iter().rposition(|o| o.name == tag.name) {
                self.open.truncate(at);
            }
            self.items.push(Item::Close(block_key(&tag.name)));
        } else {
            let block = self.open_block(tag, asm);
            self.items.push(Item::Open(block));
            if tag.self_closing {
                self.open.pop();
                self.items.push(Item::Close(block_key(&tag.name)));
            }
        }
        asm.mid = true;
    }

    /// The block an opening tag starts (and its entry in `open`).
    fn open_block(&mut self, tag: &Tag, asm: &Asm) -> Block {
        let mut entry = OpenTag { name: tag.name.clone(), labels: HashMap::new(), code: None };
        let kind = match tag.name.as_str() {
            "Tabs" => {
                if let Some((_, AttrValue::Expr(values))) = tag.attrs.iter().find(|(n, _)| n == "values") {
                    entry.labels = tab_labels(values);
                }
                Kind::Plain
            }
            "TabItem" => Kind::Marker(format!("=== \"{}\"", tree::quote_safe(&self.tab_label(tag)))),
            "Admonition" => Kind::Marker(tree::admonition_marker(
                &tag.attr("type").unwrap_or_default(),
                tag.attr("title").as_deref(),
            )),
            "details" | "Details" => Kind::Marker(if tag.has("open") { "???+ note" } else { "??? note" }.to_string()),
            "CodeBlock" => {
                let lang = tag
                    .attr("language")
                    .or_else(|| tag.attr("className").and_then(|c| c.strip_prefix("language-").map(str::to_string)));
                entry.code = Some((lang.unwrap_or_default(), tag.attr("title")));
                Kind::Plain
            }
            _ => Kind::Plain,
        };
        self.open.push(entry);
        Block::new(block_key(&tag.name), kind, asm.indent(), asm.src())
    }

    /// A tab's label: from its `<Tabs values>` (which Docusaurus prefers), its
    /// `label`, its `value`.
    fn tab_label(&self, tag: &Tag) -> String {
        let value = tag.attr("value");
        let from_tabs = value
            .as_ref()
            .and_then(|v| self.open.iter().rev().find(|o| o.name == "Tabs").and_then(|o| o.labels.get(v)).cloned());
        from_tabs.or_else(|| tag.attr("label")).or(value).unwrap_or_else(|| "Tab".to_string())
    }

    fn expr(&mut self, asm: &mut Asm, literal: Option<&str>, raw: &str) {
        let code = self.open.iter().rev().find_map(|o| o.code.clone());
        match (code, literal) {
            (Some((lang, title)), Some(text)) => {
                asm.flush(&mut self.items);
                code_block(asm, &lang, title.as_deref(), text, &mut self.items);
                asm.mid = true;
            }
            (Some(_), None) if !raw.trim_start_matches('{').trim_start().starts_with("/*") => {
                self.notices.push(Notice {
                    line: asm.src(),
                    kind: NoticeKind::MissingInclude,
                    message: "`<CodeBlock>` shows code computed when the site is built; it was left out".to_string(),
                });
            }
            (None, Some(text)) => asm.replacement(&escape_text(&text.replace(['\n', '\r', '\t'], " "))),
            _ => {}
        }
    }

    fn report(&mut self, name: &str, line: usize, what: &str) {
        if self.reported.insert(name.to_string()) {
            self.notices.push(Notice {
                line,
                kind: NoticeKind::UnknownComponent,
                message: format!("`<{name}>` {what}"),
            });
        }
    }
}

/// The end of the run of lines starting at `i`: up to the next fence,
/// admonition line, display math or heading. A heading is a run of its own, so
/// that no tag or expression reaches across one.
fn run_end(lines: &[Line], i: usize) -> usize {
    if tree::is_heading(&lines[i].1) {
        return i + 1;
    }
    let mut j = i + 1;
    while j < lines.len() {
        let l = &lines[j].1;
        if Fence::open(l).is_some() || admonition_item(0, l).is_some() || opens_math_block(l) || tree::is_heading(l) {
            break;
        }
        j += 1;
    }
    j
}
