//! A run of lines as tokens: text (code spans and math included), JSX tags with
//! their attributes, and `{expressions}`.

use super::js::{expr_end, string_literal};

/// One element of a run of text: plain text (code spans and math included), a
/// tag, or an `{expression}` with its text if it is a string literal.
#[derive(Debug)]
pub(super) struct Tok {
    pub(super) kind: TokKind,
    pub(super) start: usize,
    pub(super) end: usize,
}

#[derive(Debug)]
pub(super) enum TokKind {
    Text,
    Tag(Tag),
    Expr(Option<String>),
}

#[derive(Debug, Default)]
pub(super) struct Tag {
    /// Empty for a fragment `<>`.
    pub(super) name: String,
    pub(super) closing: bool,
    pub(super) self_closing: bool,
    pub(super) attrs: Vec<(String, AttrValue)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum AttrValue {
    Flag,
    Str(String),
    /// The text between the braces.
    Expr(String),
}

impl Tag {
    /// A string attribute, or an expression one that is a string literal.
    pub(super) fn attr(&self, name: &str) -> Option<String> {
        self.attrs.iter().find(|(n, _)| n == name).and_then(|(_, v)| match v {
            AttrValue::Str(s) => Some(s.clone()),
            AttrValue::Expr(e) => string_literal(e),
            AttrValue::Flag => None,
        })
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.attrs.iter().any(|(n, _)| n == name)
    }

    pub(super) fn is_component(&self) -> bool {
        self.name.is_empty() || self.name.starts_with(|c: char| c.is_ascii_uppercase())
    }
}

/// Splits a run into text, tags and expressions.
pub(super) fn tokenize(s: &str) -> Vec<Tok> {
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
