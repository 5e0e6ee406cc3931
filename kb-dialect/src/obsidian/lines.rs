//! Reading the lines of a note around Obsidian's syntax: fenced code over
//! lines ([`Fences`]), blockquote markers, inline code spans and a trailing
//! `^block` id.

pub(super) use crate::fence::Fences;

/// Splits a line into its indentation and blockquote markers (`  > > `) and the rest.
pub(super) fn split_prefix(line: &str) -> (&str, &str) {
    let mut rest = line.trim_start();
    while let Some(r) = rest.strip_prefix('>') {
        rest = r.trim_start();
    }
    line.split_at(line.len() - rest.len())
}

/// A line is split at a trailing block id: `text ^abc-1` → (`text`, `abc-1`).
/// A line that is only `^abc` gives empty text.
pub(super) fn split_block_id(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_end();
    let caret = t.rfind('^')?;
    let id = &t[caret + 1..];
    let before = &t[..caret];
    let valid = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (valid && (before.trim().is_empty() || before.ends_with([' ', '\t']))).then(|| (before.trim_end(), id))
}

/// The line split into (is inline code, text) pieces. A run of backticks opens a
/// code span closed by the next run of the same length; one never closed is text.
pub(super) fn code_segments(line: &str) -> Vec<(bool, &str)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut text_start) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => {
                let n = b[i..].iter().take_while(|&&c| c == b'`').count();
                let mut j = i + n;
                let close = loop {
                    let Some(k) = line[j..].find('`').map(|k| j + k) else { break None };
                    let m = b[k..].iter().take_while(|&&c| c == b'`').count();
                    if m == n {
                        break Some(k);
                    }
                    j = k + m;
                };
                match close {
                    Some(k) => {
                        out.push((false, &line[text_start..i]));
                        out.push((true, &line[i..k + n]));
                        i = k + n;
                        text_start = i;
                    }
                    None => i += n,
                }
            }
            _ => i += 1,
        }
    }
    out.push((false, &line[text_start.min(b.len())..]));
    out
}
