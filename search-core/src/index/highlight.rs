//! Snippets for results: the most query-dense window of a chunk's display text,
//! Markdown stripped, HTML-escaped, query terms wrapped in `<mark>`.

use std::collections::HashSet;

use super::analyzer;

/// Words of a snippet window.
const WINDOW: usize = 40;

/// Markdown → plain text: links and images keep their text, emphasis, code,
/// heading, table and blockquote markers go. Used for snippets here and for page
/// summaries by the site builder.
pub fn plain_text(text: &str) -> String {
    // Blockquote markers only count at the start of a line.
    let unquoted: String = text.lines().map(|l| l.trim_start().trim_start_matches('>')).collect::<Vec<_>>().join("\n");
    let mut out = String::with_capacity(text.len());
    let mut chars = unquoted.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ']' if chars.peek() == Some(&'(') => {
                for c in chars.by_ref() {
                    if c == ')' {
                        break;
                    }
                }
            }
            '!' if chars.peek() == Some(&'[') => {}
            '[' | ']' | '*' | '`' | '#' | '|' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// The words of [`plain_text`], without rule-like runs (`---`, `===`).
fn plain_words(text: &str) -> Vec<String> {
    plain_text(text)
        .split_whitespace()
        .filter(|w| !w.chars().all(|c| c == '-' || c == '=' || c == ':'))
        .map(str::to_string)
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A snippet of `text` for `query`: at most 40 words, `…` where cut, matches marked.
pub fn snippet(text: &str, query: &str) -> String {
    let q: HashSet<String> = analyzer::terms(query).into_iter().collect();
    let words = plain_words(text);
    let hit: Vec<bool> = words.iter().map(|w| analyzer::terms(w).iter().any(|t| q.contains(t))).collect();
    // The window with the most distinct matching words; earliest on a tie.
    let mut best = (0usize, 0usize);
    for start in 0..words.len().saturating_sub(WINDOW).max(1).min(words.len().max(1)) {
        let end = (start + WINDOW).min(words.len());
        let distinct: HashSet<&str> = (start..end).filter(|&i| hit[i]).map(|i| words[i].as_str()).collect();
        if distinct.len() > best.1 {
            best = (start, distinct.len());
        }
    }
    let start = best.0;
    let end = (start + WINDOW).min(words.len());
    let mut out = String::new();
    if start > 0 {
        out.push_str("… ");
    }
    for i in start..end {
        if i > start {
            out.push(' ');
        }
        if hit[i] {
            // Sentence punctuation around the word stays outside the mark
            // ("<mark>permit</mark>."); a word that is all punctuation, or an
            // identifier's inner punctuation ("--gres=…"), is marked whole.
            let w = words[i].as_str();
            let core =
                w.trim_start_matches(['(', '"', '\'']).trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']);
            let (lead, core, trail) = match w.find(core) {
                Some(at) if !core.is_empty() => (&w[..at], core, &w[at + core.len()..]),
                _ => ("", w, ""),
            };
            out.push_str(&escape(lead));
            out.push_str("<mark>");
            out.push_str(&escape(core));
            out.push_str("</mark>");
            out.push_str(&escape(trail));
        } else {
            out.push_str(&escape(&words[i]));
        }
    }
    if end < words.len() {
        out.push_str(" …");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_query_terms_and_escapes() {
        let s = snippet("## Set up\n\nConnect to **eduroam** with your [NetID](id.md) <b>now</b>.", "eduroam netid");
        assert_eq!(s, "Set up Connect to <mark>eduroam</mark> with your <mark>NetID</mark> &lt;b&gt;now&lt;/b&gt;.");
    }

    #[test]
    fn picks_the_window_with_the_matches() {
        let text = format!("{} the quota command shows disk usage {}", "filler ".repeat(100), "tail ".repeat(100));
        let s = snippet(&text, "quota usage");
        assert!(s.starts_with("… ") && s.ends_with(" …"), "{s}");
        assert!(s.contains("<mark>quota</mark>") && s.contains("<mark>usage</mark>"), "{s}");
        assert!(s.split(' ').count() <= WINDOW + 2);
    }

    #[test]
    fn punctuation_stays_outside_the_mark() {
        let s = snippet("Every car needs a valid permit. Permits (virtual) are read daily.", "permit virtual");
        assert!(s.contains("<mark>permit</mark>. <mark>Permits</mark> (<mark>virtual</mark>)"), "{s}");
    }

    #[test]
    fn identifiers_are_marked() {
        assert!(snippet("Use `--gres=nvme:100` please", "--gres=nvme:100").contains("<mark>--gres=nvme:100</mark>"));
    }
}
