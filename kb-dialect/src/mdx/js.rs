//! JavaScript read as far as this pass needs it: bracket depth over lines,
//! string and template literals, `{expressions}` and their string values.

/// Bracket depth of JavaScript read line by line, strings and comments aside.
#[derive(Default)]
pub(super) struct JsLexer {
    pub(super) depth: i64,
    pub(super) in_template: bool,
    in_comment: bool,
}

impl JsLexer {
    pub(super) fn feed(&mut self, line: &str) {
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
pub(super) fn string_end(b: &[u8], i: usize) -> Option<usize> {
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

/// After the `}` that closes the expression opened at `i`, reading strings,
/// template literals and comments as JavaScript does.
pub(super) fn expr_end(s: &str, i: usize) -> Option<usize> {
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
pub(super) fn string_literal(expr: &str) -> Option<String> {
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
