//! The scanner: reads a page line by line, outside fenced code, into the items
//! of the container tree; what each shortcode is decides where its call goes.

use std::collections::HashSet;

use super::calls::{concat_text, only_call, tokenize, unescape_calls, Call, Tok};
use super::inline::Rendered;
use crate::fence::Fence;
use crate::mdx::tree::{self, Item, Text};
use crate::{Line, Notice, NoticeKind, Resolver, Target};

/// What a shortcode is to this pass.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// A container: its opener and closer become a block.
    Container,
    /// Removed with everything inside.
    Comment,
    /// Its inner lines are code (`mermaid`, `highlight`).
    Code,
    /// Rendered where it stands (text, a link, lines).
    Inline,
    Unknown,
}

fn role(name: &str) -> Role {
    match name {
        "note" | "caution" | "warning" | "tip" | "info" | "alert" | "tabs" | "tab" | "details" | "table" => {
            Role::Container
        }
        "comment" => Role::Comment,
        "mermaid" | "highlight" => Role::Code,
        "glossary_tooltip"
        | "glossary_definition"
        | "heading"
        | "feature-state"
        | "skew"
        | "param"
        | "latest-version"
        | "ref"
        | "relref"
        | "figure"
        | "youtube"
        | "code_sample"
        | "codenew"
        | "code"
        | "api-reference"
        | "include"
        | "link" => Role::Inline,
        _ => Role::Unknown,
    }
}

/// Reads a page's lines into the items of the container tree. Its methods are
/// spread over the shortcode families: `containers`, `inline`, `glossary`,
/// `include`.
pub(super) struct Scanner<'a> {
    pub(super) target: Target,
    pub(super) resolver: &'a dyn Resolver,
    pub(super) notices: &'a mut Vec<Notice>,
    /// Shortcode names reported on this page.
    pub(super) reported: &'a mut HashSet<String>,
    pub(super) depth: usize,
    pub(super) paired: HashSet<String>,
    /// Containers open as blocks, innermost last.
    pub(super) block_open: Vec<String>,
    /// Tabs opened in the current tab set, for unnamed tabs' labels.
    pub(super) tabs: usize,
    pub(super) items: Vec<Item>,
}

/// The output of one line while its tokens are read.
pub(super) struct LineOut {
    pub(super) src: usize,
    /// The line's leading whitespace.
    pub(super) ws: String,
    buf: String,
    /// `buf` followed a container tag on the line.
    pub(super) mid: bool,
    pub(super) produced: bool,
}

impl Scanner<'_> {
    pub(super) fn scan(&mut self, lines: &[Line]) {
        let mut i = 0;
        while i < lines.len() {
            let (src, line) = &lines[i];
            if let Some(f) = Fence::open(line) {
                i = self.fenced(lines, i, f);
                continue;
            }
            let toks = tokenize(line);
            if !toks.iter().any(|t| matches!(t, Tok::Call(_))) {
                self.items.push(Item::Text(Text::new(*src, concat_text(&toks))));
                i += 1;
                continue;
            }
            if let Some(next) = self.block_of_lines(lines, i, &toks) {
                i = next;
                continue;
            }
            self.line(*src, line, &toks);
            i += 1;
        }
    }

    /// Copies a fenced block; only Hugo's escaped calls are unescaped in it
    /// (Hugo shows them so), real calls stay as the page shows them.
    fn fenced(&mut self, lines: &[Line], i: usize, fence: Fence) -> usize {
        self.items.push(Item::Text(Text::new(lines[i].0, lines[i].1.clone())));
        let text = |l: &str| if l.contains("{{</*") || l.contains("{{%/*") { unescape_calls(l) } else { l.to_string() };
        tree::copy_code_body(&mut self.items, lines, i, |l| fence.closes(l), text)
    }

    /// A `comment`, `mermaid`, `highlight` or code tab opened alone on line `i`
    /// and closed on a later line: all its lines at once. The line after it.
    fn block_of_lines(&mut self, lines: &[Line], i: usize, toks: &[Tok]) -> Option<usize> {
        let call = only_call(toks)?;
        let code_tab = call.name == "tab" && call.get("codelang").is_some();
        if call.closing || !(matches!(role(&call.name), Role::Comment | Role::Code) || code_tab) {
            return None;
        }
        let end = (i + 1..lines.len()).find(|&j| {
            tokenize(&lines[j].1).iter().any(|t| matches!(t, Tok::Call(c) if c.closing && c.name == call.name))
        })?;
        let src = lines[i].0;
        let ws = tree::leading_ws(&lines[i].1).to_string();
        let lang = match call.name.as_str() {
            "comment" => {
                // Hugo leaves the empty line the call stood on.
                self.items.push(Item::Text(Text::new(src, "")));
                return Some(end + 1);
            }
            "mermaid" => "mermaid".to_string(),
            "tab" => call.get("codelang").unwrap_or_default().to_string(),
            _ => call.get_or_first("lang").unwrap_or_default().to_string(),
        };
        if code_tab {
            self.open_tab(&call, &ws, src);
        }
        self.items.push(Item::Text(Text::new(src, format!("{ws}```{lang}"))));
        for (s, l) in &lines[i + 1..end] {
            self.items.push(Item::Text(Text { src: *s, text: l.clone(), code: true }));
        }
        self.items.push(Item::Text(Text::new(lines[end].0, format!("{ws}```"))));
        if code_tab {
            self.items.push(Item::Close("tab".to_string()));
        }
        Some(end + 1)
    }

    /// Reads one line's calls.
    fn line(&mut self, src: usize, line: &str, toks: &[Tok]) {
        let flow = !tree::is_heading(line) && starts_with_container(toks, &self.paired);
        let alone = only_call(toks).is_some();
        let mut out =
            LineOut { src, ws: tree::leading_ws(line).to_string(), buf: String::new(), mid: false, produced: false };
        let mut skip_until: Option<&str> = None;
        for tok in toks {
            match (tok, skip_until) {
                (Tok::Call(c), Some(name)) if c.closing && c.name == name => skip_until = None,
                (_, Some(_)) => {}
                (Tok::Text(t), None) => out.buf.push_str(t),
                (Tok::Call(c), None) if role(&c.name) == Role::Comment && !c.closing && !c.self_closing => {
                    skip_until = Some(c.name.as_str());
                }
                (Tok::Call(c), None) => self.call(c, &mut out, flow, alone),
            }
        }
        out.flush(&mut self.items);
        if !out.produced {
            self.items.push(Item::Text(Text::new(src, "")));
        }
    }

    fn call(&mut self, c: &Call, out: &mut LineOut, flow: bool, alone: bool) {
        let role = role(&c.name);
        if role == Role::Unknown {
            self.report_unknown(c, out.src);
        }
        let container = role == Role::Container || (role == Role::Unknown && self.paired.contains(&c.name));
        if container {
            self.container(c, out, flow);
            return;
        }
        match self.render(c, &out.buf, out.src, out.in_heading()) {
            Rendered::Inline(s) => out.buf.push_str(&s),
            Rendered::Lines(lines) if alone => {
                out.flush(&mut self.items);
                for l in lines {
                    let text = if l.is_empty() { l } else { format!("{}{l}", out.ws) };
                    self.items.push(Item::Text(Text::new(out.src, text)));
                }
                out.produced = true;
            }
            Rendered::Lines(lines) => out.buf.push_str(&lines.join(" ")),
            Rendered::Nothing => {}
        }
    }

    fn report_unknown(&mut self, c: &Call, line: usize) {
        if !self.reported.insert(c.name.clone()) {
            return;
        }
        let what = if self.paired.contains(&c.name) { "its inner text was kept" } else { "it was left out" };
        let message = format!("`{{{{< {} >}}}}` is not a shortcode this build knows; {what}", c.name);
        self.notices.push(Notice { line, kind: NoticeKind::UnknownShortcode, message });
    }

    pub(super) fn notice(&mut self, line: usize, kind: NoticeKind, message: String) {
        self.notices.push(Notice { line, kind, message });
    }
}

impl LineOut {
    /// Ends the text before a tag: a line of its own, if it holds anything.
    pub(super) fn flush(&mut self, items: &mut Vec<Item>) {
        if self.buf.trim().is_empty() {
            self.buf.clear();
            return;
        }
        let text = if self.mid {
            format!("{}{}", self.ws, tree::guard_block_start(self.buf.trim()))
        } else {
            std::mem::take(&mut self.buf)
        };
        self.buf.clear();
        items.push(Item::Text(Text::new(self.src, text)));
        self.produced = true;
    }

    fn in_heading(&self) -> bool {
        !self.mid && tree::is_heading(&self.buf)
    }
}

/// Whether the line's first non-blank token is a container's opener or closer.
fn starts_with_container(toks: &[Tok], paired: &HashSet<String>) -> bool {
    toks.iter().find(|t| !matches!(t, Tok::Text(s) if s.trim().is_empty())).is_some_and(|t| match t {
        Tok::Call(c) => {
            role(&c.name) == Role::Container || (role(&c.name) == Role::Unknown && paired.contains(&c.name))
        }
        Tok::Text(_) => false,
    })
}
