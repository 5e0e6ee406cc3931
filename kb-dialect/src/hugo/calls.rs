//! Shortcode calls as written: `{{< name args >}}` / `{{% … %}}` parsed into
//! [`Call`]s, lines split into text and calls, calls that span lines joined, and
//! Hugo's escaped `{{</* x */>}}`.

use std::collections::HashSet;

use crate::fence::Fence;
use crate::{comments, Line};

/// One shortcode call.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Call {
    pub(super) name: String,
    pub(super) closing: bool,
    pub(super) self_closing: bool,
    /// (name for `key=value`, value)
    args: Vec<(Option<String>, String)>,
}

impl Call {
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.args.iter().find(|(k, _)| k.as_deref() == Some(key)).map(|(_, v)| v.as_str())
    }

    pub(super) fn positional(&self, n: usize) -> Option<&str> {
        self.args.iter().filter(|(k, _)| k.is_none()).nth(n).map(|(_, v)| v.as_str())
    }

    /// A named argument, or else the first positional one.
    pub(super) fn get_or_first(&self, key: &str) -> Option<&str> {
        self.get(key).or_else(|| self.positional(0))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Text(String),
    Call(Call),
}

/// Splits one line into text and calls; calls in inline code stay text, and
/// Hugo's escaped `{{</* x */>}}` becomes the text `{{< x >}}`.
pub(super) fn tokenize(line: &str) -> Vec<Tok> {
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
pub(super) fn join_split_calls(lines: Vec<Line>) -> Vec<Line> {
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
pub(super) fn closed_names(lines: &[Line]) -> HashSet<String> {
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

/// The call a line holds alone (whitespace around it), if any.
pub(super) fn only_call(toks: &[Tok]) -> Option<Call> {
    let mut calls = toks.iter().filter_map(|t| match t {
        Tok::Call(c) => Some(c),
        Tok::Text(_) => None,
    });
    let first = calls.next()?;
    let texts_blank = toks.iter().all(|t| !matches!(t, Tok::Text(s) if !s.trim().is_empty()));
    (calls.next().is_none() && texts_blank).then(|| first.clone())
}

pub(super) fn concat_text(toks: &[Tok]) -> String {
    toks.iter()
        .map(|t| match t {
            Tok::Text(s) => s.as_str(),
            Tok::Call(_) => "",
        })
        .collect()
}

/// `{{</* x */>}}` → `{{< x >}}` throughout a line.
pub(super) fn unescape_calls(line: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
