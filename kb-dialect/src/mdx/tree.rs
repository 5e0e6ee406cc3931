//! Containers as a tree of blocks, shared with [`crate::hugo`]: a scanner turns
//! a page into [`Item`]s (lines of text, openers and closers), [`build`] nests
//! them and [`emit`] writes MkDocs containers with bodies indented by 4.

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

/// Copies the lines after the opening line `open` of a code block (fenced code,
/// display math) into `items` as code, each as `text` gives it, through the line
/// that `closes` the block (which is not code); returns the index after the block.
pub(crate) fn copy_code_body(
    items: &mut Vec<Item>,
    lines: &[Line],
    open: usize,
    closes: impl Fn(&str) -> bool,
    text: impl Fn(&str) -> String,
) -> usize {
    let mut j = open + 1;
    while j < lines.len() {
        let (src, line) = &lines[j];
        let last = closes(line);
        items.push(Item::Text(Text { src: *src, text: text(line), code: !last }));
        j += 1;
        if last {
            break;
        }
    }
    j
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn guard_escapes_block_starts() {
        use super::guard_block_start as g;
        assert_eq!(g("# x"), "\\# x");
        assert_eq!(g("  - item"), "  \\- item");
        assert_eq!(g("12. x"), "12\\. x");
        assert_eq!(g("*emphasis*"), "*emphasis*");
        assert_eq!(g("---"), "\\---");
        assert_eq!(g("plain"), "plain");
    }
}
