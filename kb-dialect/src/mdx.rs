//! Docusaurus MDX (v3) → MkDocs containers and CommonMark.
//!
//! An MDX page is Markdown with JavaScript in it: `import`/`export` statements,
//! JSX elements (`<Tabs>`, `<BrowserWindow>`) and `{expressions}`, plus
//! Docusaurus's own `:::note` admonitions. A CommonMark renderer shows all of it
//! as raw text, so this pass rewrites the page, outside fenced code and inline
//! code, into what Docusaurus would show:
//!
//! | syntax | becomes |
//! | --- | --- |
//! | `import … from '…';`, `export …` (also over several lines) | removed |
//! | ```` ```mdx-code-block ```` fences | their content, read as MDX (Docusaurus renders it) |
//! | `:::note`, `:::tip Title`, `:::info[Title]`, `::::` nesting, `:::my-type` | `!!! note "Title"` + indented body (`caution` → `warning` "Caution", `important` → `info` "Important") |
//! | `<Tabs>` + `<TabItem value="x" label="Label">` | one `=== "Label"` per item (label from `<Tabs values={…}>`, else `label`, else `value`) |
//! | `<Admonition type="tip" title="T">` | `!!! tip "T"` |
//! | `<details>` + `<summary>Text</summary>` | `??? note "Text"` (collapsed) |
//! | ```` ```js title="a.js" showLineNumbers {1,4-6} ```` | `*a.js*` caption line, then ```` ```js ```` |
//! | `` <CodeBlock language="js" title="a.js">{`code`}</CodeBlock> `` | caption + fenced block; computed code is left out (reported) |
//! | other `<Component …>` on lines of their own | the lines removed, children kept (reported once per name) |
//! | `<Highlight>text</Highlight>` inside running text | `text` (reported once per name) |
//! | `<DocCardList />`, `<TOCInline … />` (self-closing) | removed (reported once per name) |
//! | `{'<'}`, `{"text"}`, `` {`text`} `` string literals | their text |
//! | other `{expressions}` (`{frontMatter.title}`, `{/* comment */}`) | removed |
//! | `{#custom-id}` heading ids, `\{` escapes, `$math$` | kept |
//! | lower-case HTML (`<br/>`, `<div className="x">`) | kept (the renderer sanitises it); `prop={…}` attributes dropped |
//!
//! `<details>` becomes a `???` container rather than staying HTML: CommonMark
//! reads Markdown inside an HTML block only where blank lines separate it from
//! the tags, which MDX does not require, so lists and code inside `<details>`
//! would often stay raw text; a container renders them in both targets and gives
//! the search text the summary as its label.
//!
//! Tags are read as JSX reads them: attribute values in quotes or balanced
//! braces (`values={[{label: 'A'}]}` may hold `>`), over several lines. A line
//! of tags is replaced by an empty line, as MDX ends a paragraph there, and text
//! that followed a tag on its line is escaped where it would start a heading or
//! a list the source did not have. Containers are built as a tree of blocks
//! (`tree`, shared with Hugo), whose bodies are re-indented for MkDocs whatever the JSX
//! indentation was (MDX has no indented code blocks, so that indentation means
//! nothing).

use std::collections::{HashMap, HashSet};

use crate::fence::Fence;
use crate::{Line, Notice, NoticeKind};
use tree::{Block, Item, Kind, Node, Text};

/// Translates one MDX page's lines.
pub fn translate(lines: Vec<Line>, notices: &mut Vec<Notice>) -> Vec<Line> {
    let lines = remove_esm(unwrap_mdx_code_blocks(lines));
    let mut scanner = Scanner { notices, reported: HashSet::new(), items: Vec::new(), open: Vec::new() };
    scanner.scan(&lines);
    let mut root = tree::build(scanner.items);
    title_details(&mut root);
    let mut out = Vec::with_capacity(lines.len());
    tree::emit(&root, &mut out);
    out
}

/// Containers as a tree of blocks, shared with [`crate::hugo`]: a scanner turns
/// a page into [`Item`]s (lines of text, openers and closers), [`tree::build`] nests
/// them and [`tree::emit`] writes MkDocs containers with bodies indented by 4.
pub(crate) mod tree {
    use crate::Line;

    /// A line of text and the body line it came from; `code` marks the inside of
    /// a fenced block, whose indentation does not place the block.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct Text {
        pub src: usize,
        pub text: String,
        pub code: bool,
    }

    impl Text {
        pub(crate) fn new(src: usize, text: impl Into<String>) -> Text {
            Text { src, text: text.into(), code: false }
        }
    }

    /// How a block is written out.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) enum Kind {
        /// No line of its own: its children are written in its place.
        Plain,
        /// A MkDocs marker line (`!!! note "T"`, `=== "Tab"`) and an indented body.
        Marker(String),
    }

    /// A container: `key` matches its closer, `indent` is the column of its
    /// opener in the source.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct Block {
        pub key: String,
        pub kind: Kind,
        pub indent: usize,
        pub src: usize,
        pub children: Vec<Node>,
    }

    impl Block {
        pub(crate) fn new(key: impl Into<String>, kind: Kind, indent: usize, src: usize) -> Block {
            Block { key: key.into(), kind, indent, src, children: Vec::new() }
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    pub(crate) enum Node {
        Text(Text),
        Block(Block),
    }

    /// What a scanner reads a page as.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) enum Item {
        Text(Text),
        Open(Block),
        /// Closes the innermost open block with this key, and any block opened
        /// inside it and left open; a closer that matches nothing is ignored.
        Close(String),
    }

    /// Nests the items; blocks left open close at the end of the page.
    pub(crate) fn build(items: Vec<Item>) -> Block {
        let mut stack = vec![Block::new("", Kind::Plain, 0, 0)];
        for item in items {
            match item {
                Item::Text(t) => push_child(&mut stack, Node::Text(t)),
                Item::Open(b) => stack.push(b),
                Item::Close(key) => {
                    // Index 0 is the page itself, which no closer ends.
                    if let Some(at) = stack.iter().skip(1).rposition(|b| b.key == key) {
                        while stack.len() > at + 1 {
                            close_top(&mut stack);
                        }
                    }
                }
            }
        }
        while stack.len() > 1 {
            close_top(&mut stack);
        }
        stack.pop().unwrap_or_else(|| Block::new("", Kind::Plain, 0, 0))
    }

    fn push_child(stack: &mut [Block], node: Node) {
        if let Some(top) = stack.last_mut() {
            top.children.push(node);
        }
    }

    fn close_top(stack: &mut Vec<Block>) {
        if let Some(b) = stack.pop() {
            push_child(stack, Node::Block(b));
        }
    }

    /// Writes the page: text at the top level as it was, container bodies
    /// re-indented under their markers.
    pub(crate) fn emit(root: &Block, out: &mut Vec<Line>) {
        emit_children(root, 0, 0, out);
    }

    /// Writes `block`'s children at column `pad`, less the `base` column their
    /// own indentation starts at.
    fn emit_children(block: &Block, pad: usize, base: usize, out: &mut Vec<Line>) {
        for child in &block.children {
            match child {
                // Blank lines carry no indentation, except in code, which keeps its text.
                Node::Text(t) if t.text.is_empty() || (!t.code && t.text.trim().is_empty()) => {
                    out.push((t.src, String::new()))
                }
                Node::Text(t) => out.push((t.src, format!("{}{}", " ".repeat(pad), dedent(&t.text, base)))),
                Node::Block(b) => emit_block(b, pad + b.indent.saturating_sub(base), out),
            }
        }
    }

    fn emit_block(b: &Block, at: usize, out: &mut Vec<Line>) {
        let base = base_indent(b);
        match &b.kind {
            Kind::Plain => emit_children(b, at, base, out),
            Kind::Marker(marker) => {
                // An admonition with nothing in it is dropped: MkDocs would take
                // the next paragraph for its body. An empty tab keeps its label.
                if !marker.starts_with("===") && is_empty(b) {
                    return;
                }
                if out.last().is_some_and(|(_, l)| !l.trim().is_empty()) {
                    out.push((b.src, String::new()));
                }
                out.push((b.src, format!("{}{marker}", " ".repeat(at))));
                emit_children(b, at + 4, base, out);
            }
        }
    }

    /// The column a block's children start at: the least indentation of its
    /// text lines (code inside fences aside) and nested openers.
    fn base_indent(b: &Block) -> usize {
        b.children
            .iter()
            .filter_map(|c| match c {
                Node::Text(t) if !t.code && !t.text.trim().is_empty() => Some(indent_of(&t.text)),
                Node::Block(inner) => Some(inner.indent),
                Node::Text(_) => None,
            })
            .min()
            .unwrap_or(0)
    }

    fn is_empty(b: &Block) -> bool {
        b.children.iter().all(|c| match c {
            Node::Text(t) => t.text.trim().is_empty(),
            Node::Block(inner) => is_empty(inner),
        })
    }

    pub(crate) use crate::mkdocs::{dedent, indent_of};

    /// The leading whitespace of a line.
    pub(crate) fn leading_ws(line: &str) -> &str {
        &line[..line.len() - line.trim_start().len()]
    }

    /// An ATX heading line (`## Title`), after any indentation.
    pub(crate) fn is_heading(line: &str) -> bool {
        let t = line.trim_start();
        let hashes = t.bytes().take_while(|&b| b == b'#').count();
        (1..=6).contains(&hashes) && t[hashes..].chars().next().is_none_or(|c| c == ' ' || c == '\t')
    }

    /// Text that followed a tag or shortcode on its line, about to start a line
    /// of its own: escaped where it would open a block (heading, list, quote,
    /// fence, setext underline) that its source line did not.
    pub(crate) fn guard_block_start(piece: &str) -> String {
        let t = piece.trim_start();
        let lead = &piece[..piece.len() - t.len()];
        let first = t.chars().next().unwrap_or(' ');
        let second = t[first.len_utf8().min(t.len())..].chars().next();
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        let escape_at = if is_heading(t)
            || first == '>'
            || (matches!(first, '-' | '+' | '*') && second.is_none_or(|c| c == ' ' || c == '\t'))
            || t.starts_with("```")
            || t.starts_with("~~~")
            || (matches!(first, '=' | '-') && t.trim_end().chars().all(|c| c == first))
        {
            Some(0)
        } else if digits > 0
            && digits <= 9
            && matches!(t.as_bytes().get(digits), Some(b'.' | b')'))
            && t[digits + 1..].chars().next().is_none_or(|c| c == ' ' || c == '\t')
        {
            Some(digits)
        } else {
            None
        };
        match escape_at {
            Some(at) => format!("{lead}{}\\{}", &t[..at], &t[at..]),
            None => piece.to_string(),
        }
    }

    /// The MkDocs marker of an admonition of `kind` (`note`, `caution`,
    /// `my-type`) with an optional title; the type word is the default title.
    pub(crate) fn admonition_marker(kind: &str, title: Option<&str>) -> String {
        let lower = kind.to_ascii_lowercase();
        let (class, default) = match lower.as_str() {
            // MkDocs's stylesheet knows no `caution` or `important`; the reader
            // still sees the author's word as the title.
            "caution" => ("warning".to_string(), "Caution".to_string()),
            "important" => ("info".to_string(), "Important".to_string()),
            other if !other.is_empty() && other.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') => {
                (other.to_string(), capitalise(other))
            }
            _ => ("note".to_string(), capitalise(kind)),
        };
        let title = title.map(str::trim).filter(|t| !t.is_empty()).map_or(default, str::to_string);
        format!("!!! {class} \"{}\"", quote_safe(&title))
    }

    /// A title or label as it can stand between the quotes of a marker line.
    pub(crate) fn quote_safe(title: &str) -> String {
        title.split_whitespace().collect::<Vec<_>>().join(" ").replace('"', "'")
    }

    pub(crate) fn capitalise(s: &str) -> String {
        let mut c = s.chars();
        c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------
// Lines before the scan: `mdx-code-block` fences and ESM statements.

/// The info string of a fence opener line (```` ```js title="x" ```` → `js title="x"`).
fn info_string(line: &str) -> &str {
    let t = line.trim_start();
    t.trim_start_matches(['`', '~']).trim()
}

/// Drops the fence lines of ```` ```mdx-code-block ```` blocks, keeping their
/// content: Docusaurus renders it as MDX.
fn unwrap_mdx_code_blocks(lines: Vec<Line>) -> Vec<Line> {
    let mut out = Vec::with_capacity(lines.len());
    // The open fence, and whether it is an `mdx-code-block` being unwrapped.
    let mut fence: Option<(Fence, bool)> = None;
    for (src, line) in lines {
        match fence {
            Some((f, unwrap)) if f.closes(&line) => {
                fence = None;
                if !unwrap {
                    out.push((src, line));
                }
            }
            Some(_) => out.push((src, line)),
            None => {
                if let Some(f) = Fence::open(&line) {
                    let unwrap = info_string(&line).split_whitespace().next() == Some("mdx-code-block");
                    fence = Some((f, unwrap));
                    if unwrap {
                        continue;
                    }
                }
                out.push((src, line));
            }
        }
    }
    out
}

/// Removes `import` and `export` statements (outside fenced code), each over as
/// many lines as its brackets take.
fn remove_esm(lines: Vec<Line>) -> Vec<Line> {
    let mut out = Vec::with_capacity(lines.len());
    let mut fence: Option<Fence> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i].1;
        if let Some(f) = fence {
            if f.closes(line) {
                fence = None;
            }
        } else if starts_esm(line) {
            i = esm_end(&lines, i);
            continue;
        } else {
            fence = Fence::open(line);
        }
        out.push(lines[i].clone());
        i += 1;
    }
    out
}

/// An ESM statement starts at column 0 with `import` or `export` and the shape
/// of one (prose that happens to start with "import" does not have it).
fn starts_esm(line: &str) -> bool {
    if let Some(rest) = line.strip_prefix("import") {
        let t = line.trim_end();
        return rest.starts_with([' ', '{', '*'])
            && (t.contains(" from ")
                || t.contains("from'")
                || t.contains("from\"")
                || rest.trim_start().starts_with(['\'', '"'])
                || t.ends_with('{')
                || t.ends_with(','));
    }
    if let Some(rest) = line.strip_prefix("export") {
        let rest = rest.trim_start();
        let word = rest.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("");
        return line.len() > "export".len()
            && (matches!(word, "const" | "let" | "var" | "function" | "default" | "class" | "async")
                || rest.starts_with(['{', '*']));
    }
    false
}

/// The line after the ESM statement starting at line `i`: where its brackets
/// balance at a line end that does not continue the expression. A statement
/// that never balances within 300 lines is taken to be its first line only.
fn esm_end(lines: &[Line], i: usize) -> usize {
    let mut lex = JsLexer::default();
    for (k, (_, line)) in lines.iter().enumerate().skip(i).take(300) {
        lex.feed(line);
        let t = line.trim_end();
        let continues = [",", "=", "=>", "(", "[", "{", "+", "&&", "||", "?", ":", "."].iter().any(|c| t.ends_with(c));
        if lex.depth <= 0 && !lex.in_template && !continues {
            return k + 1;
        }
    }
    i + 1
}

/// Bracket depth of JavaScript read line by line, strings and comments aside.
#[derive(Default)]
struct JsLexer {
    depth: i64,
    in_template: bool,
    in_comment: bool,
}

impl JsLexer {
    fn feed(&mut self, line: &str) {
        let b = line.as_bytes();
        let mut j = 0;
        while j < b.len() {
            if self.in_comment {
                match line[j..].find("*/") {
                    Some(at) => {
                        j += at + 2;
                        self.in_comment = false;
                        continue;
                    }
                    None => return,
                }
            }
            if self.in_template {
                match b[j] {
                    b'\\' => j += 1,
                    b'`' => self.in_template = false,
                    _ => {}
                }
                j += 1;
                continue;
            }
            match b[j] {
                b'(' | b'[' | b'{' => self.depth += 1,
                b')' | b']' | b'}' => self.depth -= 1,
                b'`' => self.in_template = true,
                b'\'' | b'"' => j = string_end(b, j).unwrap_or(b.len()) - 1,
                b'/' if b.get(j + 1) == Some(&b'/') => return,
                b'/' if b.get(j + 1) == Some(&b'*') => {
                    self.in_comment = true;
                    j += 1;
                }
                _ => {}
            }
            j += 1;
        }
    }
}

/// The index after the closing quote of the string starting at `i`; a string
/// ends at a line break if not closed before it (then: the break's index + 1).
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'\n' => return Some(j + 1),
            c if c == q => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

// ---------------------------------------------------------------------------
// Fenced code, admonition lines and `$$` math: read line by line.

/// `:::type[Title]` / `:::type Title` → an opener; `:::` → a closer.
fn admonition_item(src: usize, line: &str) -> Option<Item> {
    let t = line.trim();
    let colons = t.bytes().take_while(|&b| b == b':').count();
    if colons < 3 {
        return None;
    }
    let rest = &t[colons..];
    if rest.is_empty() {
        return Some(Item::Close("adm".to_string()));
    }
    if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let name_len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_').count();
    let (name, after) = rest.split_at(name_len);
    let title = if let Some(inner) = after.strip_prefix('[') {
        Some(bracketed(inner))
    } else if after.starts_with([' ', '\t']) {
        Some(after.trim())
    } else if after.is_empty() || after.starts_with('{') {
        None
    } else {
        return None;
    };
    let marker = tree::admonition_marker(name, title);
    Some(Item::Open(Block::new("adm", Kind::Marker(marker), tree::indent_of(line), src)))
}

/// The text up to the `]` that balances an opening `[` (just before `inner`).
fn bracketed(inner: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in inner.char_indices() {
        match c {
            '[' => depth += 1,
            ']' if depth == 0 => return &inner[..i],
            ']' => depth -= 1,
            _ => {}
        }
    }
    inner
}

/// A fence opener with its Docusaurus metadata taken out of the info string:
/// the cleaned line and the `title`, if any.
fn clean_fence_info(line: &str) -> (String, Option<String>) {
    let ws = tree::leading_ws(line);
    let t = line.trim_start();
    let marker_len = t.len() - t.trim_start_matches(['`', '~']).len();
    let (marker, info) = t.split_at(marker_len);
    let mut title = None;
    let mut kept = Vec::new();
    let mut changed = false;
    for token in info_tokens(info) {
        if let Some(v) = token.strip_prefix("title=") {
            title = Some(v.trim_matches(['"', '\'']).to_string());
        } else if !(token == "showLineNumbers" || token.starts_with("showLineNumbers=") || token.starts_with('{')) {
            kept.push(token);
            continue;
        }
        changed = true;
    }
    if !changed {
        return (line.to_string(), None);
    }
    (format!("{ws}{marker}{}", kept.join(" ")), title.filter(|t| !t.is_empty()))
}

/// An info string split at spaces outside quotes and braces.
fn info_tokens(info: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = None;
    let mut quote: Option<char> = None;
    let mut braces = 0usize;
    for (i, c) in info.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{') => braces += 1,
            (None, '}') => braces = braces.saturating_sub(1),
            (None, c) if c.is_whitespace() && braces == 0 => {
                if let Some(s) = start.take() {
                    tokens.push(&info[s..i]);
                }
                continue;
            }
            _ => {}
        }
        start.get_or_insert(i);
    }
    if let Some(s) = start {
        tokens.push(&info[s..]);
    }
    tokens
}

/// A `$$` line opening display math (not closed on the same line).
fn opens_math_block(line: &str) -> bool {
    line.trim_start().strip_prefix("$$").is_some_and(|rest| !rest.contains("$$"))
}

// ---------------------------------------------------------------------------
// The scanner: JSX and expressions in runs of lines.

/// One element of a run of text: plain text (code spans and math included), a
/// tag, or an `{expression}` with its text if it is a string literal.
#[derive(Debug)]
struct Tok {
    kind: TokKind,
    start: usize,
    end: usize,
}

#[derive(Debug)]
enum TokKind {
    Text,
    Tag(Tag),
    Expr(Option<String>),
}

#[derive(Debug, Default)]
struct Tag {
    /// Empty for a fragment `<>`.
    name: String,
    closing: bool,
    self_closing: bool,
    attrs: Vec<(String, AttrValue)>,
}

#[derive(Debug, Clone, PartialEq)]
enum AttrValue {
    Flag,
    Str(String),
    /// The text between the braces.
    Expr(String),
}

impl Tag {
    /// A string attribute, or an expression one that is a string literal.
    fn attr(&self, name: &str) -> Option<String> {
        self.attrs.iter().find(|(n, _)| n == name).and_then(|(_, v)| match v {
            AttrValue::Str(s) => Some(s.clone()),
            AttrValue::Expr(e) => string_literal(e),
            AttrValue::Flag => None,
        })
    }

    fn has(&self, name: &str) -> bool {
        self.attrs.iter().any(|(n, _)| n == name)
    }

    fn is_component(&self) -> bool {
        self.name.is_empty() || self.name.starts_with(|c: char| c.is_ascii_uppercase())
    }
}

/// What a tag is to this pass.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// Always a container: Tabs, TabItem, Admonition, details, summary.
    Structural,
    /// A component this pass renders itself (CodeBlock): no notice.
    Known,
    /// A component this pass does not know, or a fragment `<>`.
    Unknown,
    /// Lower-case HTML: kept.
    Html,
}

fn role(tag: &Tag) -> Role {
    match tag.name.as_str() {
        "Tabs" | "TabItem" | "Admonition" | "details" | "Details" | "summary" => Role::Structural,
        "CodeBlock" | "" => Role::Known,
        _ if tag.is_component() => Role::Unknown,
        _ => Role::Html,
    }
}

/// The key a block of this tag is closed by.
fn block_key(name: &str) -> String {
    match name {
        "Details" => "details".to_string(),
        "" => "<>".to_string(),
        other => other.to_string(),
    }
}

/// An element open as a block, innermost last.
struct OpenTag {
    name: String,
    /// `<Tabs values={[{label, value}]}>`: the label of each value.
    labels: HashMap<String, String>,
    /// `<CodeBlock>`: its language and title.
    code: Option<(String, Option<String>)>,
}

struct Scanner<'n> {
    notices: &'n mut Vec<Notice>,
    /// Component names reported on this page.
    reported: HashSet<String>,
    items: Vec<Item>,
    open: Vec<OpenTag>,
}

impl Scanner<'_> {
    fn scan(&mut self, lines: &[Line]) {
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
        let mut j = i + 1;
        while j < lines.len() {
            let (s, l) = &lines[j];
            let closes = fence.closes(l);
            self.items.push(Item::Text(Text { src: *s, text: l.clone(), code: !closes }));
            j += 1;
            if closes {
                break;
            }
        }
        j
    }

    /// Copies a `$$` display-math block as it is (its braces are TeX).
    fn math(&mut self, lines: &[Line], i: usize) -> usize {
        self.items.push(Item::Text(Text::new(lines[i].0, lines[i].1.clone())));
        let mut j = i + 1;
        while j < lines.len() {
            let (s, l) = &lines[j];
            let closes = l.contains("$$");
            self.items.push(Item::Text(Text { src: *s, text: l.clone(), code: !closes }));
            j += 1;
            if closes {
                break;
            }
        }
        j
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

/// Writes a code block for `<CodeBlock>` children given as a string literal.
fn code_block(asm: &Asm, lang: &str, title: Option<&str>, code: &str, items: &mut Vec<Item>) {
    let ws = tree::leading_ws(&asm.run[asm.line].1).to_string();
    let src = asm.src();
    if let Some(t) = title {
        items.push(Item::Text(Text::new(src, format!("{ws}*{}*", t.replace('*', "\\*")))));
        items.push(Item::Text(Text::new(src, "")));
    }
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    items.push(Item::Text(Text::new(src, format!("{ws}{fence}{lang}"))));
    for l in code.trim_matches('\n').lines() {
        // At the fence's indentation, which the container takes off again.
        items.push(Item::Text(Text { src, text: format!("{ws}{l}"), code: true }));
    }
    items.push(Item::Text(Text::new(src, format!("{ws}{fence}"))));
}

/// `values={[{label: 'Apple', value: 'apple'}, …]}` → value → label.
fn tab_labels(values: &str) -> HashMap<String, String> {
    let mut labels = HashMap::new();
    for object in values.split('{').skip(1) {
        let object = object.split('}').next().unwrap_or("");
        if let (Some(label), Some(value)) = (js_property(object, "label"), js_property(object, "value")) {
            labels.insert(value, label);
        }
    }
    labels
}

/// The string value of `key: '…'` in the text of an object literal.
fn js_property(object: &str, key: &str) -> Option<String> {
    let mut from = 0;
    while let Some(at) = object[from..].find(key) {
        let start = from + at;
        let before_ok = object[..start].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '_');
        let rest = object[start + key.len()..].trim_start().trim_start_matches(['\'', '"']).trim_start();
        if let (true, Some(value)) = (before_ok, rest.strip_prefix(':')) {
            let value = value.trim_start();
            let b = value.as_bytes();
            if matches!(b.first(), Some(b'\'' | b'"' | b'`')) {
                return string_literal(&value[..string_end(b, 0).unwrap_or(b.len())]);
            }
        }
        from = start + key.len();
    }
    None
}

/// A lower-case HTML tag as it is kept: its source, or rebuilt without the
/// `prop={…}` attributes HTML cannot hold.
fn html_tag(tag: &Tag, raw: &str) -> String {
    if !tag.attrs.iter().any(|(_, v)| matches!(v, AttrValue::Expr(_))) && !raw.contains('\n') {
        return raw.to_string();
    }
    let mut s = format!("<{}{}", if tag.closing { "/" } else { "" }, tag.name);
    for (name, value) in &tag.attrs {
        match value {
            AttrValue::Flag => s.push_str(&format!(" {name}")),
            AttrValue::Str(v) => s.push_str(&format!(" {name}=\"{}\"", v.replace('"', "&quot;"))),
            AttrValue::Expr(_) => {}
        }
    }
    s.push_str(if tag.self_closing { " />" } else { ">" });
    s
}

/// Literal text from an expression, its `<` escaped: Markdown must not read a
/// tag where JSX wrote a character (`{'<'}div>`).
fn escape_text(text: &str) -> String {
    text.replace('<', "\\<")
}

// ---------------------------------------------------------------------------
// Assembling lines from tokens.

/// Builds the output lines of a run while its tokens are read.
struct Asm<'r> {
    run: &'r [Line],
    /// Byte offset of each line of the run in the joined text.
    starts: Vec<usize>,
    /// The line being read.
    line: usize,
    buf: String,
    buf_line: usize,
    /// The text in `buf` followed a tag on its line.
    mid: bool,
    /// Whether the line being read has given a line of text.
    produced: bool,
}

impl<'r> Asm<'r> {
    fn new(run: &'r [Line], joined: &str) -> Asm<'r> {
        let mut starts = vec![0];
        starts.extend(joined.match_indices('\n').map(|(i, _)| i + 1));
        Asm { run, starts, line: 0, buf: String::new(), buf_line: 0, mid: false, produced: false }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).saturating_sub(1)
    }

    fn at(&mut self, offset: usize) {
        self.line = self.line_of(offset);
    }

    fn src(&self) -> usize {
        self.run[self.line].0
    }

    fn indent(&self) -> usize {
        tree::indent_of(&self.run[self.line].1)
    }

    /// Source text starting at byte `at` of the run, line breaks included.
    fn source_text(&mut self, at: usize, text: &str, items: &mut Vec<Item>) {
        let mut off = at;
        for (k, piece) in text.split('\n').enumerate() {
            if k > 0 {
                self.end_line(items);
                self.at(off);
            }
            self.replacement(piece);
            off += piece.len() + 1;
        }
    }

    /// Text that belongs to the line being read.
    fn replacement(&mut self, text: &str) {
        if self.buf.is_empty() {
            self.buf_line = self.line;
        }
        self.buf.push_str(text);
    }

    /// Ends the text before a tag: a line of its own, if it holds anything.
    fn flush(&mut self, items: &mut Vec<Item>) {
        if self.buf.trim().is_empty() {
            self.buf.clear();
            return;
        }
        let run = self.run;
        let (src, line) = &run[self.buf_line];
        let text = if self.mid {
            // Text after a tag: placed at its line's indentation.
            let piece = tree::guard_block_start(self.buf.trim());
            format!("{}{piece}", tree::leading_ws(line))
        } else {
            std::mem::take(&mut self.buf)
        };
        items.push(Item::Text(Text::new(*src, text)));
        self.buf.clear();
        self.produced = true;
    }

    /// Ends a source line; one that gave no text (a tag line) leaves an empty
    /// line, as MDX ends a paragraph at a tag line.
    fn end_line(&mut self, items: &mut Vec<Item>) {
        self.flush(items);
        if !self.produced {
            items.push(Item::Text(Text::new(self.src(), "")));
        }
        self.produced = false;
        self.mid = false;
    }
}

/// Whether each line of a run starts with a component tag or an expression: on
/// such a line, component tags are blocks (their lines removed, children kept);
/// elsewhere they are inline and only the tags go.
fn flow_lines(toks: &[Tok], joined: &str, asm: &Asm) -> Vec<bool> {
    let mut first: Vec<Option<bool>> = vec![None; asm.starts.len()];
    for tok in toks {
        let flowish = match &tok.kind {
            TokKind::Text => {
                for (off, c) in joined[tok.start..tok.end].char_indices() {
                    if !c.is_whitespace() {
                        first[asm.line_of(tok.start + off)].get_or_insert(false);
                    }
                }
                continue;
            }
            TokKind::Tag(tag) => role(tag) != Role::Html,
            TokKind::Expr(_) => true,
        };
        for slot in &mut first[asm.line_of(tok.start)..=asm.line_of(tok.end.saturating_sub(1))] {
            slot.get_or_insert(flowish);
        }
    }
    first.into_iter().map(|f| f == Some(true)).collect()
}

/// `<details>`: the text of its `<summary>` child becomes its title.
fn title_details(block: &mut Block) {
    for child in &mut block.children {
        if let Node::Block(inner) = child {
            title_details(inner);
        }
    }
    if block.key != "details" {
        return;
    }
    let summary = block.children.iter().position(|c| matches!(c, Node::Block(b) if b.key == "summary"));
    let title = match summary.map(|at| block.children.remove(at)) {
        Some(Node::Block(s)) => plain_text(&s),
        _ => String::new(),
    };
    let title = if title.is_empty() { "Details".to_string() } else { title };
    if let Kind::Marker(m) = &mut block.kind {
        m.push_str(&format!(" \"{}\"", tree::quote_safe(&title)));
    }
}

/// The text of a block on one line, without HTML tags.
fn plain_text(block: &Block) -> String {
    let mut words = Vec::new();
    for child in &block.children {
        match child {
            Node::Text(t) => words.push(strip_tags(&t.text)),
            Node::Block(b) => words.push(plain_text(b)),
        }
    }
    words.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")
}

fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        match rest[open..].find('>') {
            Some(close) => rest = &rest[open + close + 1..],
            None => {
                rest = &rest[open..];
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------------------
// Tokens.

/// Splits a run into text, tags and expressions.
fn tokenize(s: &str) -> Vec<Tok> {
    let b = s.as_bytes();
    let mut toks = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    while i < b.len() {
        let found = match b[i] {
            b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                i += 2;
                continue;
            }
            b'`' => {
                i = code_span_end(s, i);
                continue;
            }
            b'$' => {
                i = math_span_end(s, i);
                continue;
            }
            b'<' => parse_tag(s, i).map(|(tag, end)| (TokKind::Tag(tag), end)),
            b'{' if heading_id_end(s, i).is_some() => {
                i = heading_id_end(s, i).unwrap_or(i + 1);
                continue;
            }
            b'{' => expr_end(s, i).map(|end| (TokKind::Expr(string_literal(&s[i + 1..end - 1])), end)),
            _ => None,
        };
        match found {
            Some((kind, end)) => {
                if text_start < i {
                    toks.push(Tok { kind: TokKind::Text, start: text_start, end: i });
                }
                toks.push(Tok { kind, start: i, end });
                i = end;
                text_start = end;
            }
            None => i += s[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
    if text_start < b.len() {
        toks.push(Tok { kind: TokKind::Text, start: text_start, end: b.len() });
    }
    toks
}

/// After an inline code span starting at `i` (on its line), or after the
/// backticks if none closes there.
fn code_span_end(s: &str, i: usize) -> usize {
    let line_end = s[i..].find('\n').map_or(s.len(), |n| i + n);
    crate::comments::code_span_end(&s[..line_end], i)
        .unwrap_or_else(|| i + s[i..].bytes().take_while(|&c| c == b'`').count())
}

/// After `$…$` / `$$…$$` math starting at `i` (which may not cross a blank
/// line), or after the dollars if nothing closes it.
fn math_span_end(s: &str, i: usize) -> usize {
    let n = s[i..].bytes().take_while(|&c| c == b'$').count();
    let delim = &s[i..i + n];
    let body_start = i + n;
    let limit = s[body_start..].find("\n\n").map_or(s.len(), |p| body_start + p);
    match s[body_start..limit].find(delim) {
        Some(at) if at > 0 => body_start + at + n,
        _ => body_start,
    }
}

/// After a `{#custom-id}` heading id starting at `i`.
fn heading_id_end(s: &str, i: usize) -> Option<usize> {
    let rest = s[i..].strip_prefix("{#")?;
    let len = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')).count();
    (len > 0 && rest.as_bytes().get(len) == Some(&b'}')).then_some(i + 2 + len + 1)
}

/// A JSX tag starting at `i` (`<Name attr="v" prop={…}>`, `</Name>`, `<>`,
/// `<Name />`), and the offset after it.
fn parse_tag(s: &str, i: usize) -> Option<(Tag, usize)> {
    let b = s.as_bytes();
    let mut j = i + 1;
    let closing = b.get(j) == Some(&b'/');
    if closing {
        j += 1;
    }
    let name_len =
        s[j..].bytes().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b':')).count();
    let name = &s[j..j + name_len];
    if !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    j += name_len;
    let mut tag = Tag { name: name.to_string(), closing, ..Tag::default() };
    if name.is_empty() || closing {
        let k = skip_ws(b, j);
        return (b.get(k) == Some(&b'>')).then_some((tag, k + 1));
    }
    let end = parse_attrs(s, j, &mut tag)?;
    (end - i <= 8000).then_some((tag, end))
}

fn skip_ws(b: &[u8], mut j: usize) -> usize {
    while j < b.len() && b[j].is_ascii_whitespace() {
        j += 1;
    }
    j
}

/// Reads attributes from `j` to the tag's end; the offset after `>`.
fn parse_attrs(s: &str, mut j: usize, tag: &mut Tag) -> Option<usize> {
    let b = s.as_bytes();
    loop {
        j = skip_ws(b, j);
        match *b.get(j)? {
            b'>' => return Some(j + 1),
            b'/' if b.get(j + 1) == Some(&b'>') => {
                tag.self_closing = true;
                return Some(j + 2);
            }
            b'{' => j = expr_end(s, j)?, // `{...props}`
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let len = s[j..]
                    .bytes()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b':' | b'.'))
                    .count();
                let name = s[j..j + len].to_string();
                j = skip_ws(b, j + len);
                if b.get(j) != Some(&b'=') {
                    tag.attrs.push((name, AttrValue::Flag));
                    continue;
                }
                j = skip_ws(b, j + 1);
                let (value, end) = attr_value(s, j)?;
                tag.attrs.push((name, value));
                j = end;
            }
            _ => return None,
        }
    }
}

fn attr_value(s: &str, j: usize) -> Option<(AttrValue, usize)> {
    let b = s.as_bytes();
    match *b.get(j)? {
        q @ (b'"' | b'\'') => {
            let close = s[j + 1..].find(q as char)? + j + 1;
            Some((AttrValue::Str(s[j + 1..close].to_string()), close + 1))
        }
        b'{' => {
            let end = expr_end(s, j)?;
            Some((AttrValue::Expr(s[j + 1..end - 1].to_string()), end))
        }
        _ => None,
    }
}

/// After the `}` that closes the expression opened at `i`, reading strings,
/// template literals and comments as JavaScript does.
fn expr_end(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut j = i;
    while j < b.len() && j - i <= 20_000 {
        match b[j] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            b'\'' | b'"' => {
                j = string_end(b, j)?;
                continue;
            }
            b'`' => {
                j = template_end(s, j)?;
                continue;
            }
            b'/' if b.get(j + 1) == Some(&b'*') => {
                j += s[j + 2..].find("*/")? + 4;
                continue;
            }
            // A line comment; `//` after `:` is a URL in JSX text.
            b'/' if b.get(j + 1) == Some(&b'/') && (j == 0 || b[j - 1] != b':') => {
                j += s[j..].find('\n')?;
                continue;
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// After the backtick closing the template literal opened at `i`.
fn template_end(s: &str, i: usize) -> Option<usize> {
    let b = s.as_bytes();
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'`' => return Some(j + 1),
            b'$' if b.get(j + 1) == Some(&b'{') => j = expr_end(s, j + 1)?,
            _ => j += 1,
        }
    }
    None
}

/// The text of a JavaScript string literal, if `expr` is exactly one (quoted,
/// or a template without `${}`).
fn string_literal(expr: &str) -> Option<String> {
    let e = expr.trim();
    let b = e.as_bytes();
    let q = *b.first()?;
    let end = match q {
        b'\'' | b'"' => string_end(b, 0)?,
        b'`' => template_end(e, 0)?,
        _ => return None,
    };
    if end != e.len() || end < 2 || b[end - 1] != q || (q == b'`' && e.contains("${")) {
        return None;
    }
    Some(unescape_js(&e[1..end - 1]))
}

/// JavaScript string escapes: `\n`, `\u007B`, `\u{1F600}`, `\x41`, `\'`.
fn unescape_js(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => {}
            Some('u') => {
                let hex: String = if chars.peek() == Some(&'{') {
                    chars.next();
                    chars.by_ref().take_while(|&c| c != '}').collect()
                } else {
                    chars.by_ref().take(4).collect()
                };
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(md: &str) -> (Vec<Line>, Vec<Notice>) {
        let mut notices = Vec::new();
        let lines = md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect();
        let out = translate(lines, &mut notices);
        (out, notices)
    }

    fn text(md: &str) -> String {
        run(md).0.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    /// The page through the whole pipeline, for `target`.
    fn page(md: &str, target: crate::Target) -> crate::Normalized {
        let d = crate::Dialects { mkdocs: true, obsidian: false, gfm: false, mdx: true, hugo: false };
        crate::normalize(md, target, d, &crate::NoResolver)
    }

    #[test]
    fn imports_and_exports_go() {
        let md = "import Tabs from '@theme/Tabs';\nimport {\n  A,\n  B,\n} from 'x';\n\nexport const Highlight = ({children, color}) => (\n  <span style={{color}}>\n    {children}\n  </span>\n);\n\nimport the module yourself.\nText\n";
        assert_eq!(text(md), "\n\nimport the module yourself.\nText\n");
        let templ = "export const F = () => {\n  return <code>{`./v-${x}/`}</code>;\n}\nAfter\n";
        assert_eq!(text(templ), "After\n");
    }

    #[test]
    fn mdx_code_blocks_are_unwrapped_and_other_fences_kept() {
        let md = "```mdx-code-block\nimport X from 'y';\n\n<BrowserWindow>\n\nHello\n\n</BrowserWindow>\n```\n```jsx\nimport X from 'y';\n<Tabs>\n```\n";
        let (out, notices) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t.iter().filter(|l| l.contains("Hello")).count(), 1);
        assert!(!t.iter().any(|l| l.contains("BrowserWindow") || l.contains("mdx-code-block")));
        assert!(t.ends_with(&["```jsx", "import X from 'y';", "<Tabs>", "```"]), "{t:?}");
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].message, "`<BrowserWindow>` is not a component this build knows; its text was kept");
        assert_eq!(notices[0].line, 3);
    }

    #[test]
    fn admonitions_with_titles_and_nesting() {
        let md = ":::::info Parent\n\nParent content\n\n::::danger[Child **bold**]\n\nChild content\n\n:::tip\n\nDeep\n\n:::\n\n::::\n\n:::::\n\nAfter\n";
        let out = text(md);
        assert!(out.contains("!!! info \"Parent\"\n"), "{out}");
        assert!(out.contains("\n    !!! danger \"Child **bold**\"\n"), "{out}");
        assert!(out.contains("\n        !!! tip \"Tip\"\n\n            Deep\n"), "{out}");
        assert!(out.ends_with("\nAfter\n"), "{out}");
        let caution =
            text(":::caution\nCareful\n:::\n:::important[Read]\nx\n:::\n:::my-custom-admonition[My Title]\ny\n:::\n");
        assert!(caution.contains("!!! warning \"Caution\"\n    Careful\n"), "{caution}");
        assert!(caution.contains("!!! info \"Read\""), "{caution}");
        assert!(caution.contains("!!! my-custom-admonition \"My Title\""), "{caution}");
    }

    #[test]
    fn inner_closer_inside_longer_outer() {
        let out = text("::::note Outer\n:::tip\nIn\n:::\nStill outer\n::::\nOut\n");
        assert_eq!(out, "!!! note \"Outer\"\n\n    !!! tip \"Tip\"\n        In\n    Still outer\nOut\n");
    }

    #[test]
    fn tabs_become_mkdocs_tabs() {
        let md = "<Tabs>\n  <TabItem value=\"apple\" label=\"Apple\" default>\n    This is an apple 🍎\n  </TabItem>\n  <TabItem value=\"orange\">This is an orange</TabItem>\n</Tabs>\nAfter\n";
        let out = text(md);
        assert!(out.contains("=== \"Apple\"\n\n    This is an apple 🍎\n"), "{out}");
        assert!(out.contains("=== \"orange\"\n    This is an orange\n"), "{out}");
        assert!(out.ends_with("\nAfter\n"));
        assert!(!out.contains('<'), "{out}");
    }

    #[test]
    fn tab_labels_from_values_and_multi_line_props() {
        let md = "<Tabs\n  defaultValue=\"apple\"\n  values={[\n    {label: 'Apple 1', value: 'apple'},\n    {label: 'Orange > 1', value: 'orange'},\n  ]}>\n  <TabItem value=\"apple\" label=\"Apple 2\">A</TabItem>\n  <TabItem value=\"orange\" attributes={{className: styles.red}}>O</TabItem>\n</Tabs>\n";
        let out = text(md);
        assert!(out.contains("=== \"Apple 1\"\n    A\n"), "{out}");
        assert!(out.contains("=== \"Orange > 1\"\n    O\n"), "{out}");
        assert!(!out.contains("values") && !out.contains("styles"), "{out}");
    }

    #[test]
    fn tabs_in_admonitions_and_admonitions_in_tabs() {
        let md = ":::tip[Use tabs]\n\n<Tabs>\n  <TabItem value=\"a\" label=\"A\">\n\n:::note\n\nInside\n\n:::\n\n  </TabItem>\n</Tabs>\n\n:::\n";
        let out = text(md);
        assert!(out.contains("!!! tip \"Use tabs\"\n"), "{out}");
        assert!(out.contains("\n    === \"A\"\n"), "{out}");
        assert!(out.contains("\n        !!! note \"Note\"\n\n            Inside\n"), "{out}");
        let html = page(md, crate::Target::Html).text;
        assert!(html.contains("<section class=\"tab\">"), "{html}");
        assert!(html.contains("<aside class=\"admonition note\""), "{html}");
        assert!(html.contains("\nInside\n"), "{html}");
    }

    #[test]
    fn details_become_collapsed_containers() {
        let md = "<details>\n  <summary><code>Tabs</code> props take\n  precedence:</summary>\n\n- item\n\n```js\nx\n```\n\n</details>\n";
        let out = text(md);
        assert!(out.contains("??? note \"Tabs props take precedence:\"\n"), "{out}");
        assert!(out.contains("\n    - item\n"), "{out}");
        assert!(out.contains("\n    ```js\n    x\n    ```\n"), "{out}");
        let open = text("<details open>\nBody\n</details>\n");
        assert!(open.contains("???+ note \"Details\"\n\n    Body\n"), "{open}");
    }

    #[test]
    fn code_block_titles_become_captions() {
        let md = "Intro\n```js title=\"docusaurus.config.js\" showLineNumbers {1,4-6}\nlet a = {b};\n```\n";
        let (out, _) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t, ["Intro", "", "*docusaurus.config.js*", "", "```js", "let a = {b};", "```"]);
        assert_eq!(out[2].0, 1);
        assert_eq!(text("```bash npm2yarn\nnpm i\n```\n"), "```bash npm2yarn\nnpm i\n```\n");
    }

    #[test]
    fn inline_components_keep_their_text() {
        let md = "I can use <Highlight color=\"#25c2a0\">Docusaurus green</Highlight> everywhere!\n";
        let (out, notices) = run(md);
        assert_eq!(out, vec![(0, "I can use Docusaurus green everywhere!".to_string())]);
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].kind, NoticeKind::UnknownComponent);
    }

    #[test]
    fn block_components_go_and_are_reported_once() {
        let md = "<DocCardList />\n\n<BrowserWindow url=\"x\">\n  Text inside\n</BrowserWindow>\n\n<BrowserWindow>\nMore\n</BrowserWindow>\n<IframeWindow url=\"/docs/\" />\n";
        let (out, notices) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).filter(|l| !l.is_empty()).collect();
        assert_eq!(t, ["Text inside", "More"]);
        let names: Vec<&str> = notices.iter().map(|n| n.message.split('`').nth(1).unwrap_or("")).collect();
        assert_eq!(names, ["<DocCardList>", "<BrowserWindow>", "<IframeWindow>"]);
        assert_eq!(notices.iter().map(|n| n.line).collect::<Vec<_>>(), [0, 2, 9]);
    }

    #[test]
    fn expressions_and_literals() {
        let md = "Title: {frontMatter.title} and {'<'}div> and {\"x\"}{` `}y.\n## Heading {#custom-id}\nEscaped \\{ brace, math $\\int_{a}^{x}$, code `{x}`.\n{/* prettier-ignore */}\n";
        let out = text(md);
        assert_eq!(out, "Title:  and \\<div> and x y.\n## Heading {#custom-id}\nEscaped \\{ brace, math $\\int_{a}^{x}$, code `{x}`.\n\n");
    }

    #[test]
    fn multi_line_expressions_go() {
        let md = "<CodeBlock className=\"language-ts\">\n  {ThemeClassNamesCode\n    .replace(/x/g,'')\n    .trim()}\n</CodeBlock>\nAfter\n";
        let (out, notices) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).filter(|l| !l.is_empty()).collect();
        assert_eq!(t, ["After"]);
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].kind, NoticeKind::MissingInclude);
    }

    #[test]
    fn code_block_component_with_literal() {
        let md = "<CodeBlock language=\"jsx\" title=\"/src/Hello.js\">\n  {`function Hello(props) {\n  return <h1>Hi</h1>;\n}`}\n</CodeBlock>\n";
        let out = text(md);
        assert!(
            out.contains("*/src/Hello.js*\n\n```jsx\nfunction Hello(props) {\n  return <h1>Hi</h1>;\n}\n```\n"),
            "{out}"
        );
    }

    #[test]
    fn text_after_a_tag_does_not_become_a_heading() {
        let md = "<Code language=\"md\">{'### Hello World \\u007B#id}\\n'}</Code>\n";
        let out = text(md);
        assert!(out.starts_with("\\### Hello World {#id}"), "{out}");
        let n = page(md, crate::Target::Html);
        assert!(!n.text.contains("\n#") && !n.text.starts_with('#'));
    }

    #[test]
    fn admonition_component() {
        let md = "<Admonition type=\"tip\" icon=\"💡\" title=\"Did you know...\">\n  Use plugins.\n</Admonition>\n";
        assert!(text(md).contains("!!! tip \"Did you know...\"\n\n    Use plugins.\n"), "{}", text(md));
    }

    #[test]
    fn html_stays_without_expression_props() {
        let md = "<div className=\"video\" style={{a: 1}}>\n<br/>\n</div>\n";
        assert_eq!(text(md), "<div className=\"video\">\n<br/>\n</div>\n");
    }

    #[test]
    fn fenced_code_is_untouched() {
        let md = "```md\n:::note\n<Tabs>\n{x}\nimport a from 'b';\n```\n";
        assert_eq!(text(md), md);
    }

    #[test]
    fn line_map_follows_the_source() {
        let md =
            "# T\n\n:::tip\n\nTip text\n\n:::\n\n<Tabs>\n<TabItem value=\"a\">\n\nTab text\n\n</TabItem>\n</Tabs>\n";
        let n = page(md, crate::Target::Text);
        let off = n.text.find("Tip text").unwrap_or(0);
        assert_eq!(n.source_line(off), 4);
        let off = n.text.find("Tab text").unwrap_or(0);
        assert_eq!(n.source_line(off), 11);
        let off = n.text.find("**a**").unwrap_or(0);
        assert_eq!(n.source_line(off), 9);
    }

    #[test]
    fn headings_are_kept_and_never_swallowed() {
        let md = "<Foo bar={1}>\n## Real heading\n</Foo>\n{\n## Also real\n";
        let out = text(md);
        assert!(out.contains("\n## Real heading\n"), "{out}");
        assert!(out.contains("## Also real"), "{out}");
    }

    #[test]
    fn titles_with_spaces_and_fragments() {
        let out = text("  ```ts title=\"src/My File.ts\" {2}\n  let x;\n  ```\n");
        assert_eq!(out, "\n  *src/My File.ts*\n\n  ```ts\n  let x;\n  ```\n");
        let frag =
            run("<><Highlight color=\"#25c2a0\">Green</Highlight>\n{` `}and <Highlight>blue</Highlight> here.</>\n");
        let t: Vec<&str> = frag.0.iter().map(|(_, l)| l.trim()).filter(|l| !l.is_empty()).collect();
        assert_eq!(t.join(" "), "Green and blue here.");
        assert_eq!(frag.1.len(), 1);
    }

    #[test]
    fn nested_tabs_and_self_closing_items() {
        let md = "<Tabs>\n<TabItem value=\"outer\">\n<Tabs>\n<TabItem value=\"inner\">\nDeep\n</TabItem>\n</Tabs>\n</TabItem>\n<TabItem value=\"empty\" />\n</Tabs>\n";
        let out = text(md);
        assert!(out.contains("=== \"outer\"\n\n\n    === \"inner\"\n\n        Deep\n"), "{out}");
        assert!(out.contains("=== \"empty\"\n"), "{out}");
    }

    #[test]
    fn guard_escapes_block_starts() {
        use tree::guard_block_start as g;
        assert_eq!(g("# x"), "\\# x");
        assert_eq!(g("  - item"), "  \\- item");
        assert_eq!(g("12. x"), "12\\. x");
        assert_eq!(g("*emphasis*"), "*emphasis*");
        assert_eq!(g("---"), "\\---");
        assert_eq!(g("plain"), "plain");
    }
}
