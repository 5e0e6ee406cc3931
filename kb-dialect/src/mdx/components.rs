//! JSX components and their props: what each tag is to this pass, `<Tabs values>`
//! labels, `<CodeBlock>` contents, lower-case HTML kept, `<details>` titled by its
//! `<summary>`.

use std::collections::HashMap;

use super::assemble::Asm;
use super::js::{string_end, string_literal};
use super::tokens::{AttrValue, Tag};
use super::tree::{self, Block, Item, Kind, Node, Text};

/// What a tag is to this pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Role {
    /// Always a container: Tabs, TabItem, Admonition, details, summary.
    Structural,
    /// A component this pass renders itself (CodeBlock): no notice.
    Known,
    /// A component this pass does not know, or a fragment `<>`.
    Unknown,
    /// Lower-case HTML: kept.
    Html,
}

pub(super) fn role(tag: &Tag) -> Role {
    match tag.name.as_str() {
        "Tabs" | "TabItem" | "Admonition" | "details" | "Details" | "summary" => Role::Structural,
        "CodeBlock" | "" => Role::Known,
        _ if tag.is_component() => Role::Unknown,
        _ => Role::Html,
    }
}

/// The key a block of this tag is closed by.
pub(super) fn block_key(name: &str) -> String {
    match name {
        "Details" => "details".to_string(),
        "" => "<>".to_string(),
        other => other.to_string(),
    }
}

/// Writes a code block for `<CodeBlock>` children given as a string literal.
pub(super) fn code_block(asm: &Asm, lang: &str, title: Option<&str>, code: &str, items: &mut Vec<Item>) {
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
pub(super) fn tab_labels(values: &str) -> HashMap<String, String> {
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
pub(super) fn html_tag(tag: &Tag, raw: &str) -> String {
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
pub(super) fn escape_text(text: &str) -> String {
    text.replace('<', "\\<")
}

/// `<details>`: the text of its `<summary>` child becomes its title.
pub(super) fn title_details(block: &mut Block) {
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
