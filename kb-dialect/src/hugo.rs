//! Hugo shortcodes → MkDocs containers and text.
//!
//! Hugo pages call templates from their text: `{{< name args >}}` (inner text
//! as HTML) and `{{% name args %}}` (inner text as Markdown), closed by
//! `{{< /name >}}` or self-closing `{{< name />}}`; arguments are positional or
//! `key="value"`. A CommonMark renderer shows every call as raw text, so this
//! pass renders the ones documentation sites use (the Kubernetes site's first),
//! outside fenced code and inline code, where pages *about* shortcodes show them:
//!
//! | shortcode | becomes |
//! | --- | --- |
//! | `note`, `caution`, `warning`, `tip`, `info`, `alert` (own lines, or one line with text) | `!!! note "Note"` + indented body (`caution` → `warning` "Caution"; `title=` kept) |
//! | the same inside a paragraph | its inner text |
//! | `tabs` + `tab name="Label"` | one `=== "Label"` per tab; `include="f"` reads that page, `codelang=` fences the tab |
//! | `details summary="S"` | `??? note "S"` |
//! | `table caption="C"` | `*C*` and the table |
//! | `glossary_tooltip text="Pods" term_id="pod"` | `[Pods](…/glossary/pod.md)` when the glossary page is known, else `Pods` (the term's title without `text`) |
//! | `glossary_definition term_id="pod" length="short\|long\|all" prepend="A Pod is"` | the glossary page's text: before `<!--more-->` for `short`, all of it otherwise (the Html form); in the Text form a link to the glossary page, so the index keeps the definition on that page only |
//! | `code_sample file="pods/simple-pod.yaml"` (also `codenew`, `code`) | `*Example: pods/simple-pod.yaml*` (the file is not a page: reported) |
//! | `heading "prerequisites"` | `Before you begin` (and the other headings Hugo's English i18n gives) |
//! | `feature-state for_k8s_version="v1.29" state="stable"` | `*FEATURE STATE: Kubernetes v1.29 [stable]*` (`feature_gate_name=X`: `feature gate X`) |
//! | `skew currentVersion`, `param "version"`, `latest-version` | `` `currentVersion` `` (plain inside a link destination) |
//! | `ref "x.md"` / `relref "x.md"` | the link to that page when known, else the path as written |
//! | `figure src="x" alt="y" caption="z"` | `![y](x)` and `*z*` |
//! | `youtube id` | a link to the video |
//! | `link text="t" url="u"` | `[t](u)` |
//! | `api-reference page="workload-resources/pod-v1"` | a link to that API reference page |
//! | `include "file.md"` | that page's text when known, else left out (reported) |
//! | `comment` … `/comment` | removed with everything inside |
//! | `mermaid`, `highlight lang` … | a fenced ```` ```mermaid ```` / ```` ```lang ```` block |
//! | `{{</* name */>}}` (Hugo's escape) | `{{< name >}}` as text |
//! | other paired shortcodes | tags removed, inner text kept (reported once per name) |
//! | other standalone shortcodes | removed (reported once per name) |
//!
//! A call may span lines (`{{< glossary_tooltip text="Deployment"` ⏎
//! `term_id="deployment" >}}`): its lines are joined first. Containers are
//! nested with the same block tree as [`crate::mdx`], so a note inside a tab
//! inside a list item keeps its place.

use std::collections::HashSet;

use crate::fence::Fence;
use crate::mdx::tree::{self, Block, Item, Kind, Text};
use crate::{comments, Dialects, Line, Notice, NoticeKind, Resolver, Target};

/// Translates one Hugo page's shortcodes.
pub fn translate(lines: Vec<Line>, target: Target, resolver: &dyn Resolver, notices: &mut Vec<Notice>) -> Vec<Line> {
    // Every page is read for shortcodes: one without any is left as it is.
    if !lines.iter().any(|(_, l)| l.contains("{{<") || l.contains("{{%")) {
        return lines;
    }
    let mut reported = HashSet::new();
    translate_at(lines, target, resolver, notices, &mut reported, 0)
}

/// How deep included text (a glossary definition, an include) may nest.
const MAX_DEPTH: usize = 3;

fn translate_at(
    lines: Vec<Line>,
    target: Target,
    resolver: &dyn Resolver,
    notices: &mut Vec<Notice>,
    reported: &mut HashSet<String>,
    depth: usize,
) -> Vec<Line> {
    let lines = join_split_calls(lines);
    let paired = closed_names(&lines);
    let mut scanner = Scanner {
        target,
        resolver,
        notices,
        reported,
        depth,
        paired,
        block_open: Vec::new(),
        tabs: 0,
        items: Vec::new(),
    };
    scanner.scan(&lines);
    let root = tree::build(scanner.items);
    let mut out = Vec::with_capacity(lines.len());
    tree::emit(&root, &mut out);
    out
}

// ---------------------------------------------------------------------------
// Shortcode calls.

/// One shortcode call.
#[derive(Debug, Clone, Default, PartialEq)]
struct Call {
    name: String,
    closing: bool,
    self_closing: bool,
    /// (name for `key=value`, value)
    args: Vec<(Option<String>, String)>,
}

impl Call {
    fn get(&self, key: &str) -> Option<&str> {
        self.args.iter().find(|(k, _)| k.as_deref() == Some(key)).map(|(_, v)| v.as_str())
    }

    fn positional(&self, n: usize) -> Option<&str> {
        self.args.iter().filter(|(k, _)| k.is_none()).nth(n).map(|(_, v)| v.as_str())
    }

    /// A named argument, or else the first positional one.
    fn get_or_first(&self, key: &str) -> Option<&str> {
        self.get(key).or_else(|| self.positional(0))
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Text(String),
    Call(Call),
}

/// Splits one line into text and calls; calls in inline code stay text, and
/// Hugo's escaped `{{</* x */>}}` becomes the text `{{< x >}}`.
fn tokenize(line: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        if rest.starts_with('`') {
            let end = comments::code_span_end(line, i).unwrap_or(i + rest.bytes().take_while(|&b| b == b'`').count());
            text.push_str(&line[i..end]);
            i = end;
            continue;
        }
        if rest.starts_with("{{<") || rest.starts_with("{{%") {
            if let Some((literal, end)) = escaped_call(rest) {
                text.push_str(&literal);
                i += end;
                continue;
            }
            if let Some((call, end)) = parse_call(rest) {
                if !text.is_empty() {
                    toks.push(Tok::Text(std::mem::take(&mut text)));
                }
                toks.push(Tok::Call(call));
                i += end;
                continue;
            }
        }
        let ch = rest.chars().next().map_or(1, char::len_utf8);
        text.push_str(&rest[..ch]);
        i += ch;
    }
    if !text.is_empty() {
        toks.push(Tok::Text(text));
    }
    toks
}

/// `{{</* note */>}}` → (`{{< note >}}`, its length).
fn escaped_call(rest: &str) -> Option<(String, usize)> {
    let delim = &rest[2..3];
    let body = rest[3..].strip_prefix("/*")?;
    let close = format!("*/{}}}}}", if delim == "<" { ">" } else { "%" });
    let end = body.find(&close)?;
    let literal = format!("{{{{{delim}{}{}}}}}", &body[..end], if delim == "<" { ">" } else { "%" });
    Some((literal, 3 + 2 + end + close.len()))
}

/// A call at the start of `rest` and its length.
fn parse_call(rest: &str) -> Option<(Call, usize)> {
    let close = if rest.starts_with("{{<") { ">}}" } else { "%}}" };
    let b = rest.as_bytes();
    let mut j = skip_ws(b, 3);
    let mut call = Call::default();
    if b.get(j) == Some(&b'/') {
        call.closing = true;
        j = skip_ws(b, j + 1);
    }
    let name_len =
        rest[j..].bytes().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'/')).count();
    if name_len == 0 {
        return None;
    }
    let raw_name = &rest[j..j + name_len];
    call.name = raw_name.trim_end_matches('/').to_string();
    j += name_len;
    if raw_name.ends_with('/') && rest[j..].starts_with(close) {
        call.self_closing = true; // `{{< x/>}}`
        return Some((call, j + close.len()));
    }
    loop {
        j = skip_ws(b, j);
        if rest[j..].starts_with(close) {
            return Some((call, j + close.len()));
        }
        if rest[j..].starts_with('/') && rest[j + 1..].starts_with(close) {
            call.self_closing = true;
            return Some((call, j + 1 + close.len()));
        }
        let (arg, end) = parse_arg(rest, j, close)?;
        call.args.push(arg);
        j = end;
    }
}

fn skip_ws(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    j
}

/// One argument at `j`: `key="value"`, `key=value`, `"value"` or `value`.
fn parse_arg(rest: &str, j: usize, close: &str) -> Option<((Option<String>, String), usize)> {
    let b = rest.as_bytes();
    let key_len = rest[j..].bytes().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-')).count();
    let after_key = skip_ws(b, j + key_len);
    if key_len > 0 && b.get(after_key) == Some(&b'=') {
        let key = rest[j..j + key_len].to_string();
        let (value, end) = parse_value(rest, skip_ws(b, after_key + 1), close)?;
        return Some(((Some(key), value), end));
    }
    let (value, end) = parse_value(rest, j, close)?;
    Some(((None, value), end))
}

fn parse_value(rest: &str, j: usize, close: &str) -> Option<(String, usize)> {
    let b = rest.as_bytes();
    match *b.get(j)? {
        q @ (b'"' | b'`' | b'\'') => {
            let mut k = j + 1;
            let mut value = String::new();
            while k < b.len() && b[k] != q {
                if b[k] == b'\\' && q == b'"' && k + 1 < b.len() {
                    k += 1;
                }
                let ch = rest[k..].chars().next()?;
                value.push(ch);
                k += ch.len_utf8();
            }
            (k < b.len()).then_some((value, k + 1))
        }
        _ => {
            let len = rest[j..]
                .char_indices()
                .find(|&(at, c)| c.is_whitespace() || rest[j + at..].starts_with(close))
                .map_or(rest.len() - j, |(at, _)| at);
            (len > 0).then(|| (rest[j..j + len].to_string(), j + len))
        }
    }
}

/// Joins a line that opens a call it does not close with the lines that
/// close it (at most 8), outside fenced code.
fn join_split_calls(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    let mut fence: Option<Fence> = None;
    let mut i = 0;
    while i < lines.len() {
        let (src, line) = &lines[i];
        if let Some(f) = fence {
            if f.closes(line) {
                fence = None;
            }
        } else if let Some(f) = Fence::open(line) {
            fence = Some(f);
        } else if unclosed_calls(line) {
            let mut joined = line.trim_end().to_string();
            let mut j = i + 1;
            while j < lines.len() && j <= i + 8 && unclosed_calls(&joined) && Fence::open(&lines[j].1).is_none() {
                joined.push(' ');
                joined.push_str(lines[j].1.trim());
                j += 1;
            }
            if !unclosed_calls(&joined) {
                out.push((*src, joined));
                i = j;
                continue;
            }
        }
        out.push((*src, line.clone()));
        i += 1;
    }
    out
}

/// Whether a line opens more calls than it closes (inline code aside).
fn unclosed_calls(line: &str) -> bool {
    let mut text = String::new();
    let mut i = 0;
    while i < line.len() {
        if line[i..].starts_with('`') {
            i = comments::code_span_end(line, i).unwrap_or(i + 1);
            continue;
        }
        let ch = line[i..].chars().next().map_or(1, char::len_utf8);
        text.push_str(&line[i..i + ch]);
        i += ch;
    }
    let opens = text.matches("{{<").count() + text.matches("{{%").count();
    let closes = text.matches(">}}").count() + text.matches("%}}").count();
    opens > closes
}

/// The names of the shortcodes the page closes somewhere (outside fenced
/// code): an unknown shortcode with a closer has inner text to keep.
fn closed_names(lines: &[Line]) -> HashSet<String> {
    let mut names = HashSet::new();
    let mut fence: Option<Fence> = None;
    for (_, line) in lines {
        if let Some(f) = fence {
            if f.closes(line) {
                fence = None;
            }
            continue;
        }
        fence = Fence::open(line);
        if line.contains("{{") {
            for tok in tokenize(line) {
                if let Tok::Call(c) = tok {
                    if c.closing {
                        names.insert(c.name);
                    }
                }
            }
        }
    }
    names
}

// ---------------------------------------------------------------------------
// What each shortcode is.

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

/// The English text Hugo's i18n gives `heading "key"`.
fn heading_text(key: &str) -> String {
    match key {
        "prerequisites" => "Before you begin".to_string(),
        "objectives" => "Objectives".to_string(),
        "cleanup" => "Clean up".to_string(),
        "whatsnext" => "What's next".to_string(),
        "synopsis" => "Synopsis".to_string(),
        "options" => "Options".to_string(),
        "seealso" => "See Also".to_string(),
        "lessoncontent" => "Lesson content".to_string(),
        other => tree::capitalise(other),
    }
}

/// What rendering a call gave.
enum Rendered {
    Inline(String),
    /// Lines of their own when the call stands alone on its line, else joined.
    Lines(Vec<String>),
    Nothing,
}

// ---------------------------------------------------------------------------
// The scanner.

struct Scanner<'a> {
    target: Target,
    resolver: &'a dyn Resolver,
    notices: &'a mut Vec<Notice>,
    /// Shortcode names reported on this page.
    reported: &'a mut HashSet<String>,
    depth: usize,
    paired: HashSet<String>,
    /// Containers open as blocks, innermost last.
    block_open: Vec<String>,
    /// Tabs opened in the current tab set, for unnamed tabs' labels.
    tabs: usize,
    items: Vec<Item>,
}

/// The output of one line while its tokens are read.
struct LineOut {
    src: usize,
    /// The line's leading whitespace.
    ws: String,
    buf: String,
    /// `buf` followed a container tag on the line.
    mid: bool,
    produced: bool,
}

impl Scanner<'_> {
    fn scan(&mut self, lines: &[Line]) {
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
        let mut j = i + 1;
        while j < lines.len() {
            let (s, l) = &lines[j];
            let closes = fence.closes(l);
            let text = if l.contains("{{</*") || l.contains("{{%/*") { unescape_calls(l) } else { l.clone() };
            self.items.push(Item::Text(Text { src: *s, text, code: !closes }));
            j += 1;
            if closes {
                break;
            }
        }
        j
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

    /// A container's opener or closer: a block where it starts its line (or
    /// closes one), else dropped with its inner text kept.
    fn container(&mut self, c: &Call, out: &mut LineOut, flow: bool) {
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

    fn open_tab(&mut self, c: &Call, ws: &str, src: usize) {
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

    fn report_unknown(&mut self, c: &Call, line: usize) {
        if !self.reported.insert(c.name.clone()) {
            return;
        }
        let what = if self.paired.contains(&c.name) { "its inner text was kept" } else { "it was left out" };
        let message = format!("`{{{{< {} >}}}}` is not a shortcode this build knows; {what}", c.name);
        self.notices.push(Notice { line, kind: NoticeKind::UnknownShortcode, message });
    }

    fn notice(&mut self, line: usize, kind: NoticeKind, message: String) {
        self.notices.push(Notice { line, kind, message });
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

impl LineOut {
    /// Ends the text before a tag: a line of its own, if it holds anything.
    fn flush(&mut self, items: &mut Vec<Item>) {
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

/// The call a line holds alone (whitespace around it), if any.
fn only_call(toks: &[Tok]) -> Option<Call> {
    let mut calls = toks.iter().filter_map(|t| match t {
        Tok::Call(c) => Some(c),
        Tok::Text(_) => None,
    });
    let first = calls.next()?;
    let texts_blank = toks.iter().all(|t| !matches!(t, Tok::Text(s) if !s.trim().is_empty()));
    (calls.next().is_none() && texts_blank).then(|| first.clone())
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

fn concat_text(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| match t {
            Tok::Text(s) => s.as_str(),
            Tok::Call(_) => "",
        })
        .collect()
}

/// `{{</* x */>}}` → `{{< x >}}` throughout a line.
fn unescape_calls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        if rest.starts_with("{{<") || rest.starts_with("{{%") {
            if let Some((literal, end)) = escaped_call(rest) {
                out.push_str(&literal);
                i += end;
                continue;
            }
        }
        let ch = rest.chars().next().map_or(1, char::len_utf8);
        out.push_str(&rest[..ch]);
        i += ch;
    }
    out
}

// ---------------------------------------------------------------------------
// Rendering the shortcodes that stand for text.

impl Scanner<'_> {
    /// Renders a call that is not a container; `before` is the line's text so
    /// far (to tell a link destination), `heading` whether it is a heading.
    fn render(&mut self, c: &Call, before: &str, src: usize, heading: bool) -> Rendered {
        match c.name.as_str() {
            "glossary_tooltip" => Rendered::Inline(self.tooltip(c, before, heading)),
            "glossary_definition" => self.definition(c, src),
            "heading" => Rendered::Inline(heading_text(c.get_or_first("heading").unwrap_or(""))),
            "feature-state" => Rendered::Inline(feature_state(c)),
            "skew" | "param" | "latest-version" => {
                let name = c.positional(0).or_else(|| c.get("name")).unwrap_or(&c.name).to_string();
                Rendered::Inline(if in_link_destination(before) { name } else { format!("`{name}`") })
            }
            "ref" | "relref" => Rendered::Inline(self.reference(c.get_or_first("path").unwrap_or(""))),
            "figure" => figure(c),
            "youtube" => youtube(c),
            "api-reference" => Rendered::Inline(api_reference(c)),
            "link" => Rendered::Inline(match (c.get("text"), c.get("url")) {
                (Some(text), Some(url)) => format!("[{text}]({url})"),
                (text, url) => text.or(url).unwrap_or("").to_string(),
            }),
            "code_sample" | "codenew" | "code" => self.code_sample(c, src),
            "include" => self.include(c, src),
            _ => Rendered::Nothing,
        }
    }

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

    fn tooltip(&mut self, c: &Call, before: &str, heading: bool) -> String {
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
    fn definition(&mut self, c: &Call, src: usize) -> Rendered {
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

    /// Included text: its comments removed, its own shortcodes rendered, blank
    /// lines around it trimmed; every line on the including line.
    fn expand(&mut self, lines: Vec<Line>, src: usize) -> Vec<Line> {
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
    fn include_body(&self, file: &str) -> Option<Vec<Line>> {
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

    fn include(&mut self, c: &Call, src: usize) -> Rendered {
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

    fn code_sample(&mut self, c: &Call, src: usize) -> Rendered {
        let file = c.get_or_first("file").unwrap_or("").to_string();
        self.notice(
            src,
            NoticeKind::MissingInclude,
            format!("code sample `{file}` is not in the content folder; only its name was kept"),
        );
        Rendered::Inline(format!("*Example: {}*", file.replace('*', "\\*")))
    }

    /// `ref`/`relref`: the link to the page when it is known, else the path.
    fn reference(&self, target: &str) -> String {
        let (path, anchor) = target.split_once('#').map_or((target, ""), |(p, a)| (p, a));
        let key = path.trim_start_matches('/').trim_end_matches('/').trim_end_matches(".md");
        // Hugo paths start at the content folder (`/docs/…`); the knowledge base
        // may start below it.
        let resolved = (!key.is_empty())
            .then(|| self.resolver.page(key).or_else(|| key.strip_prefix("docs/").and_then(|k| self.resolver.page(k))))
            .flatten();
        let base = match resolved {
            Some(p) => crate::link_from(self.resolver.source(), &p),
            None => path.to_string(),
        };
        if anchor.is_empty() {
            base
        } else {
            format!("{base}#{anchor}")
        }
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

/// Whether text ends inside a Markdown link destination (`[t](/docs/` …).
fn in_link_destination(before: &str) -> bool {
    before.rfind("](").is_some_and(|at| !before[at..].contains(')'))
}

fn feature_state(c: &Call) -> String {
    let state = c.get("state").map(|s| format!(" [{s}]")).unwrap_or_default();
    if let Some(v) = c.get("for_k8s_version") {
        let v = if v.starts_with('v') { v.to_string() } else { format!("v{v}") };
        format!("*FEATURE STATE: Kubernetes {v}{state}*")
    } else if let Some(gate) = c.get("feature_gate_name") {
        format!("*FEATURE STATE: feature gate {gate}{state}*")
    } else {
        format!("*FEATURE STATE:{state}*")
    }
}

fn figure(c: &Call) -> Rendered {
    let src = c.get("src").unwrap_or("");
    let alt = c.get("alt").or_else(|| c.get("title")).unwrap_or("");
    let mut lines = vec![format!("![{}]({src})", alt.replace(['[', ']'], ""))];
    let caption: Vec<&str> =
        [c.get("title"), c.get("caption")].into_iter().flatten().filter(|s| !s.is_empty()).collect();
    if !caption.is_empty() {
        lines.push(format!("*{}*", caption.join(" ")));
    }
    if src.is_empty() {
        lines.remove(0);
    }
    Rendered::Lines(lines)
}

fn youtube(c: &Call) -> Rendered {
    match c.get_or_first("id") {
        Some(id) => {
            let title = c.get("title").unwrap_or("YouTube video");
            Rendered::Inline(format!("[{title}](https://www.youtube.com/watch?v={id})"))
        }
        None => Rendered::Nothing,
    }
}

/// `api-reference page="workload-resources/pod-v1" anchor="…" text="…"`: a link
/// to the page on the Kubernetes site, as the shortcode writes it.
fn api_reference(c: &Call) -> String {
    let page = c.get("page").unwrap_or("").trim_matches('/');
    let anchor = c.get("anchor").map(|a| format!("#{a}")).unwrap_or_default();
    let text = c.get("text").or(c.get("anchor")).unwrap_or_else(|| page.rsplit('/').next().unwrap_or(page));
    format!("[{text}](/docs/reference/kubernetes-api/{page}/{anchor})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NoResolver, Target};

    /// A knowledge base of a few pages: `reference/glossary/pod.md` and others.
    struct Kb;
    impl Resolver for Kb {
        fn source(&self) -> &str {
            "concepts/workloads/pods/_index.md"
        }
        fn page(&self, target: &str) -> Option<String> {
            match target {
                "glossary/pod" => Some("reference/glossary/pod.md".to_string()),
                "glossary/container" => Some("reference/glossary/container.md".to_string()),
                "docs/concepts/overview" => Some("concepts/overview/_index.md".to_string()),
                _ => None,
            }
        }
        fn body(&self, path: &str) -> Option<String> {
            match path {
                "reference/glossary/pod.md" => Some(
                    " The smallest Kubernetes object. A set of {{< glossary_tooltip text=\"containers\" term_id=\"container\" >}}.\n\n<!--more-->\n\nLong part <!-- hidden -->.\n".to_string(),
                ),
                "reference/glossary/container.md" => Some("A container.\n".to_string()),
                "concepts/workloads/pods/linux.md" => Some("Linux tab text\n".to_string()),
                _ => None,
            }
        }
        fn title(&self, path: &str) -> Option<String> {
            (path == "reference/glossary/pod.md").then(|| "Pod".to_string())
        }
    }

    fn run_with(md: &str, resolver: &dyn Resolver) -> (Vec<Line>, Vec<Notice>) {
        let mut notices = Vec::new();
        let lines = md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect();
        (translate(lines, Target::Html, resolver, &mut notices), notices)
    }

    fn text_with(md: &str, resolver: &dyn Resolver) -> String {
        run_with(md, resolver).0.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    fn text(md: &str) -> String {
        text_with(md, &NoResolver)
    }

    #[test]
    fn parses_calls() {
        let toks = tokenize("a {{< glossary_tooltip text=\"Pods, all\" term_id=pod >}} b {{% /tab %}}{{< x />}}");
        let calls: Vec<&Call> = toks.iter().filter_map(|t| if let Tok::Call(c) = t { Some(c) } else { None }).collect();
        assert_eq!(calls[0].get("text"), Some("Pods, all"));
        assert_eq!(calls[0].get("term_id"), Some("pod"));
        assert!(calls[1].closing && calls[1].name == "tab");
        assert!(calls[2].self_closing && calls[2].name == "x");
        assert_eq!(tokenize("`{{< note >}}`"), vec![Tok::Text("`{{< note >}}`".to_string())]);
        assert_eq!(tokenize("{{</* note */>}}"), vec![Tok::Text("{{< note >}}".to_string())]);
    }

    #[test]
    fn admonitions_as_blocks_and_inline() {
        let out = text("Para\n{{< note >}}\nBody **text**.\n{{< /note >}}\nAfter\n");
        assert_eq!(out, "Para\n\n!!! note \"Note\"\n\n    Body **text**.\n\nAfter\n");
        let one = text("{{< caution >}}Careful.{{< /caution >}}\n");
        assert!(one.contains("!!! warning \"Caution\"\n    Careful.\n"), "{one}");
        let inline = text("Text {{< note >}}inline{{< /note >}} more.\n");
        assert_eq!(inline, "Text inline more.\n");
        let alert = text("{{% alert title=\"Heads up\" color=\"warning\" %}}\nx\n{{% /alert %}}\n");
        assert!(alert.contains("!!! warning \"Heads up\"\n"), "{alert}");
    }

    #[test]
    fn notes_in_list_items_keep_their_indentation() {
        let md = "1. Step\n\n   {{% note %}}\n   If the hook is slow,\n   wait.\n   {{% /note %}}\n2. Next\n";
        let out = text(md);
        assert!(out.contains("\n   !!! note \"Note\"\n\n       If the hook is slow,\n       wait.\n"), "{out}");
        let n = crate::normalize(md, Target::Html, crate::Dialect::Hugo.dialects(), &NoResolver);
        assert!(n.text.contains("<aside class=\"admonition note\""), "{}", n.text);
    }

    #[test]
    fn tabs_with_notes_inside() {
        let md = "{{< tabs name=\"dashboard\" >}}\n{{% tab name=\"Launch a browser\" %}}\nRun:\n```shell\n{{< note >}} in code\n```\n{{< note >}}\nNote in tab.\n{{< /note >}}\n{{% /tab %}}\n{{% tab %}}\nSecond\n{{% /tab %}}\n{{% /tabs %}}\nAfter\n";
        let out = text(md);
        assert!(
            out.contains("=== \"Launch a browser\"\n\n    Run:\n    ```shell\n    {{< note >}} in code\n    ```\n"),
            "{out}"
        );
        assert!(out.contains("\n    !!! note \"Note\"\n\n        Note in tab.\n"), "{out}");
        assert!(out.contains("=== \"Tab 2\"\n\n    Second\n"), "{out}");
        assert!(out.ends_with("\nAfter\n"), "{out}");
    }

    #[test]
    fn tab_includes_read_the_file_or_report() {
        let md = "{{< tabs name=\"os\" >}}\n{{< tab name=\"Linux\" include=\"linux.md\" />}}\n{{< tab name=\"Mac\" include=\"mac.md\" />}}\n{{< /tabs >}}\n";
        let (out, notices) = run_with(md, &Kb);
        let t: String = out.iter().map(|(_, l)| format!("{l}\n")).collect();
        assert!(t.contains("=== \"Linux\"\n    Linux tab text\n"), "{t}");
        assert!(t.contains("=== \"Mac\"\n"), "{t}");
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].kind, NoticeKind::MissingInclude);
        assert_eq!(notices[0].line, 2);
    }

    #[test]
    fn glossary_tooltips_link_when_known() {
        let md = "A {{< glossary_tooltip text=\"Pod\" term_id=\"pod\" >}} and {{< glossary_tooltip text=\"Deployment\"\nterm_id=\"deployment\" >}} or {{< glossary_tooltip term_id=\"pod\" >}}.\n#### {{< glossary_tooltip term_id=\"pod\" >}}\n";
        let (out, notices) = run_with(md, &Kb);
        assert_eq!(out[0], (0, "A [Pod](../../../reference/glossary/pod.md) and Deployment or [Pod](../../../reference/glossary/pod.md).".to_string()));
        assert_eq!(out[1], (2, "#### Pod".to_string()));
        assert!(notices.is_empty());
        assert_eq!(text("{{< glossary_tooltip term_id=\"node\" >}}\n"), "node\n");
    }

    #[test]
    fn the_index_keeps_a_definition_on_its_glossary_page_only() {
        let mut notices = Vec::new();
        let lines = vec![(0, "{{< glossary_definition term_id=\"pod\" length=\"all\" >}}".to_string())];
        let text = translate(lines, Target::Text, &Kb, &mut notices);
        let joined: Vec<&str> = text.iter().map(|(_, l)| l.as_str()).collect();
        assert!(joined.iter().any(|l| l.starts_with("*Definition: [") && l.contains("pod.md")), "{joined:?}");
        assert!(notices.is_empty(), "{notices:?}");
    }

    #[test]
    fn glossary_definitions_inline_the_glossary_text() {
        let (out, notices) = run_with(
            "Intro\n\n{{< glossary_definition term_id=\"pod\" length=\"short\" prepend=\"A Pod is\" >}}\n",
            &Kb,
        );
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t, ["Intro", "", "A Pod is the smallest Kubernetes object. A set of [containers](../../../reference/glossary/container.md)."]);
        assert_eq!(out[2].0, 2);
        assert!(notices.is_empty());
        let all = text_with("{{< glossary_definition term_id=\"pod\" length=\"all\" >}}\n", &Kb);
        assert!(all.contains("\nLong part .\n") && !all.contains("hidden") && !all.contains("more"), "{all}");
        let (missing, notices) = run_with("{{< glossary_definition term_id=\"nope\" length=\"all\" >}}\n", &Kb);
        assert_eq!(missing, vec![(0, String::new())]);
        assert_eq!(notices[0].kind, NoticeKind::MissingInclude);
    }

    #[test]
    fn code_samples_are_named_and_reported() {
        let (out, notices) = run_with(
            "{{% code_sample file=\"pods/simple-pod.yaml\" %}}\n{{% codenew file=\"a.yaml\" %}}\n",
            &NoResolver,
        );
        assert_eq!(out[0].1, "*Example: pods/simple-pod.yaml*");
        assert_eq!(out[1].1, "*Example: a.yaml*");
        assert_eq!(notices.len(), 2);
        assert!(notices[0].message.contains("pods/simple-pod.yaml"));
    }

    #[test]
    fn headings_and_feature_states() {
        let out = text("## {{% heading \"prerequisites\" %}}\n## {{% heading \"whatsnext\" %}}\n{{< feature-state for_k8s_version=\"1.22\" state=\"stable\" >}}\n{{< feature-state feature_gate_name=\"SidecarContainers\" >}}\n");
        assert_eq!(out, "## Before you begin\n## What's next\n*FEATURE STATE: Kubernetes v1.22 [stable]*\n*FEATURE STATE: feature gate SidecarContainers*\n");
    }

    #[test]
    fn versions_and_params() {
        let out = text("Kubernetes {{< skew currentVersion >}} and [API](/docs/reference/generated/kubernetes-api/{{< param \"version\" >}}/#pod).\n");
        assert_eq!(
            out,
            "Kubernetes `currentVersion` and [API](/docs/reference/generated/kubernetes-api/version/#pod).\n"
        );
    }

    #[test]
    fn refs_figures_and_videos() {
        let out = text_with(
            "[Overview]({{< ref \"/docs/concepts/overview.md#x\" >}}) [Other]({{< relref \"other.md\" >}})\n",
            &Kb,
        );
        assert_eq!(out, "[Overview](../../overview/_index.md#x) [Other](other.md)\n");
        let fig = text("{{< figure src=\"/images/pod.svg\" alt=\"Pod diagram\" caption=\"A Pod\" class=\"x\" >}}\n");
        assert_eq!(fig, "![Pod diagram](/images/pod.svg)\n*A Pod*\n");
        assert_eq!(text("{{< youtube abc123 >}}\n"), "[YouTube video](https://www.youtube.com/watch?v=abc123)\n");
        assert_eq!(text("{{< link text=\"services\" url=\"/docs/s/\" >}} in\n"), "[services](/docs/s/) in\n");
    }

    #[test]
    fn comments_mermaid_and_highlight() {
        let md = "a\n{{< comment >}}\nHidden\n## Hidden heading\n{{< /comment >}}\nb {{< comment >}}gone{{< /comment >}} c\n{{< mermaid >}}\ngraph TD;\n{{< /mermaid >}}\n{{< highlight go >}}\nfunc main() {}\n{{< /highlight >}}\n";
        assert_eq!(text(md), "a\n\nb  c\n```mermaid\ngraph TD;\n```\n```go\nfunc main() {}\n```\n");
    }

    #[test]
    fn unknown_shortcodes_keep_inner_text_and_report_once() {
        let md = "{{< version-check >}}\nText {{< version-check >}}\n{{< mybox >}}\nInner\n{{< /mybox >}}\nSee {{< mybox >}}here{{< /mybox >}}.\n";
        let (out, notices) = run_with(md, &NoResolver);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t, ["", "Text ", "", "Inner", "", "See here."]);
        assert_eq!(notices.len(), 2);
        assert!(notices.iter().all(|n| n.kind == NoticeKind::UnknownShortcode));
        assert_eq!(notices[0].message, "`{{< version-check >}}` is not a shortcode this build knows; it was left out");
        assert_eq!(notices[1].line, 2);
    }

    #[test]
    fn shortcodes_in_fences_stay() {
        let md = "```\n{{< note >}}\n{{< glossary_tooltip text=\"x\" term_id=\"y\" >}}\n{{</* note */>}}\n```\n";
        assert_eq!(
            text(md),
            "```\n{{< note >}}\n{{< glossary_tooltip text=\"x\" term_id=\"y\" >}}\n{{< note >}}\n```\n"
        );
    }

    #[test]
    fn details_and_tables() {
        let out = text("{{< details summary=\"More\" >}}\nHidden text\n{{< /details >}}\n{{< table caption=\"Volumes\" >}}\n| a |\n|---|\n{{< /table >}}\n");
        assert!(out.contains("??? note \"More\"\n\n    Hidden text\n"), "{out}");
        assert!(out.contains("*Volumes*\n\n| a |\n|---|\n"), "{out}");
    }

    #[test]
    fn line_map_after_joined_calls() {
        let md = "x\n{{< glossary_tooltip text=\"a\"\nterm_id=\"b\" >}} y\nz\n";
        let (out, _) = run_with(md, &NoResolver);
        assert_eq!(out, vec![(0, "x".to_string()), (1, "a y".to_string()), (3, "z".to_string())]);
    }
}
