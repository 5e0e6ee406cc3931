//! What is read line by line: `:::type[Title]` admonition lines, fenced code
//! info strings (Docusaurus titles and line numbers) and `$$` display math.

use super::tree::{self, Block, Item, Kind};

/// `:::type[Title]` / `:::type Title` → an opener; `:::` → a closer.
pub(super) fn admonition_item(src: usize, line: &str) -> Option<Item> {
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
pub(super) fn clean_fence_info(line: &str) -> (String, Option<String>) {
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
pub(super) fn opens_math_block(line: &str) -> bool {
    line.trim_start().strip_prefix("$$").is_some_and(|rest| !rest.contains("$$"))
}
