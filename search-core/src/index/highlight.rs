//! Snippets for results: the most query-dense window of a chunk's display text,
//! Markdown stripped, HTML-escaped, query terms wrapped in `<mark>`.

use std::collections::{HashMap, HashSet};

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

/// The words of `plain` (from [`plain_text`]), without rule-like runs (`---`, `===`).
fn plain_words(plain: &str) -> Vec<&str> {
    plain.split_whitespace().filter(|w| !w.chars().all(|c| c == '-' || c == '=' || c == ':')).collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A snippet of `text` for `query`: at most 40 words, `…` where cut, matches marked.
///
/// Snippets are most of what a BM25 query costs at the edge (ten per page of
/// results), so each distinct word is analysed once however often it occurs,
/// and the window is found in one sliding pass over counts rather than a set
/// built per window.
pub fn snippet(text: &str, query: &str) -> String {
    let q: HashSet<String> = analyzer::terms(query).into_iter().collect();
    let plain = plain_text(text);
    let words = plain_words(&plain);
    // Each word that matches the query gets the number of its spelling among the
    // matching ones (windows count distinct matching words).
    let mut known: HashMap<&str, Option<usize>> = HashMap::new();
    let mut spellings = 0;
    let mut hit: Vec<Option<usize>> = Vec::with_capacity(words.len());
    for &w in &words {
        let id = *known.entry(w).or_insert_with(|| {
            analyzer::terms(w).iter().any(|t| q.contains(t)).then(|| {
                spellings += 1;
                spellings - 1
            })
        });
        hit.push(id);
    }
    let start = best_window(&hit, spellings);
    let end = (start + WINDOW).min(words.len());
    let mut out = String::new();
    if start > 0 {
        out.push_str("… ");
    }
    for i in start..end {
        if i > start {
            out.push(' ');
        }
        if hit[i].is_some() {
            // Sentence punctuation around the word stays outside the mark
            // ("<mark>permit</mark>."); a word that is all punctuation, or an
            // identifier's inner punctuation ("--gres=…"), is marked whole.
            let w = words[i];
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
            out.push_str(&escape(words[i]));
        }
    }
    if end < words.len() {
        out.push_str(" …");
    }
    out
}

/// The start of the [`WINDOW`]-word window with the most distinct matching
/// words, earliest on a tie; `hit[i]` is word `i`'s spelling number among the
/// `spellings` that match. Windows start at 0 .. len − WINDOW (a single window
/// when the text is short).
fn best_window(hit: &[Option<usize>], spellings: usize) -> usize {
    let starts = hit.len().saturating_sub(WINDOW).max(1).min(hit.len().max(1));
    let mut count = vec![0u32; spellings];
    let mut distinct = 0usize;
    // Word `i` enters (+1) or leaves (−1) the window.
    let mut slide = |i: usize, enter: bool, distinct: &mut usize| {
        if let Some(&Some(id)) = hit.get(i) {
            if enter {
                count[id] += 1;
                *distinct += usize::from(count[id] == 1);
            } else {
                count[id] -= 1;
                *distinct -= usize::from(count[id] == 0);
            }
        }
    };
    for i in 0..WINDOW.min(hit.len()) {
        slide(i, true, &mut distinct);
    }
    let mut best = (0usize, distinct);
    for start in 1..starts {
        slide(start - 1, false, &mut distinct);
        slide(start + WINDOW - 1, true, &mut distinct);
        if distinct > best.1 {
            best = (start, distinct);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sliding_window_finds_what_a_set_per_window_finds() {
        // Pseudo-random texts of 0..150 words, 0..6 matching spellings.
        let mut seed = 7u32;
        let mut next = |m: u32| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (seed >> 16) % m
        };
        for _ in 0..2_000 {
            let (n, spellings) = (next(150) as usize, next(6) as usize + 1);
            let hit: Vec<Option<usize>> =
                (0..n).map(|_| (next(4) == 0).then(|| next(spellings as u32) as usize)).collect();
            let starts = n.saturating_sub(WINDOW).max(1).min(n.max(1));
            let mut want = (0, 0);
            for start in 0..starts {
                let d: HashSet<usize> = hit[start..(start + WINDOW).min(n)].iter().flatten().copied().collect();
                if d.len() > want.1 {
                    want = (start, d.len());
                }
            }
            assert_eq!(best_window(&hit, spellings), want.0, "{hit:?}");
        }
    }

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
