//! Page furniture and finding aids, which a web page does without: running
//! headers and footers, page numbers and labels, and the entries (and then the
//! headings) of tables of contents and indexes.

use std::collections::{HashMap, HashSet};

use super::lines::{size_key, Line};

/// `"Page 3 of 12"` → `"page # of #"`: the key under which running headers and
/// footers repeat.
fn repeat_key(text: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in text.trim().to_lowercase().chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

/// Drops running headers and footers: lines in the top or bottom 12% of the page
/// whose text (digits ignored) is on most pages. A one-page document keeps all.
pub(super) fn drop_repeats(lines: Vec<Line>, heights: &[f64]) -> Vec<Line> {
    let pages = heights.len();
    if pages < 2 {
        return lines;
    }
    let in_margin = |l: &Line| {
        let h = heights.get(l.page).copied().unwrap_or(0.0);
        h > 0.0 && (l.y < h * 0.12 || l.y > h * 0.88)
    };
    // Keyed by size too: a running header that repeats the title in small type
    // must not take the title page's large title with it.
    let key = |l: &Line| (repeat_key(&l.text()), size_key(l.size));
    let mut on_pages: HashMap<(String, i64), HashSet<usize>> = HashMap::new();
    for l in lines.iter().filter(|l| in_margin(l)) {
        on_pages.entry(key(l)).or_default().insert(l.page);
    }
    let need = (pages * 6).div_ceil(10).max(2);
    lines.into_iter().filter(|l| !(in_margin(l) && on_pages.get(&key(l)).is_some_and(|p| p.len() >= need))).collect()
}

/// Roman numerals as page labels use (i … xxxix, either case).
fn is_roman(t: &str) -> bool {
    let l = t.to_ascii_lowercase();
    !l.is_empty()
        && l.len() <= 7
        && l.chars().all(|c| matches!(c, 'i' | 'v' | 'x'))
        && (l.starts_with('x') || l.starts_with('v') || l.starts_with('i'))
        // "xi" yes, "iiv" no: the canonical forms only.
        && ["", "x", "xx", "xxx"].iter().any(|tens| {
            l.strip_prefix(tens).is_some_and(|u| ["", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix"].contains(&u))
        })
}

/// A page label on a line of its own: `7`, `iv`, `- 7 -`, `Page 7`, `7 / 36`,
/// `Page 7 of 36`.
fn is_page_label(text: &str) -> bool {
    let t = text.trim().trim_matches(|c: char| c == '-' || c == '–' || c == '—' || c.is_whitespace());
    let t = t.strip_prefix("Page ").or_else(|| t.strip_prefix("page ")).unwrap_or(t).trim();
    let number = |s: &str| (!s.is_empty() && s.len() <= 4 && s.chars().all(|c| c.is_ascii_digit())) || is_roman(s);
    if number(t) {
        return true;
    }
    for sep in [" of ", "/"] {
        if let Some((a, b)) = t.split_once(sep) {
            if number(a.trim()) && number(b.trim()) {
                return true;
            }
        }
    }
    false
}

/// Drops page numbers and labels: a line that is only a label and is the first or
/// the last line of its page, or lies in its top or bottom 12 %. (Running headers
/// that carry the number beside text are [`drop_repeats`]' job.)
pub(super) fn drop_page_labels(lines: Vec<Line>, heights: &[f64]) -> Vec<Line> {
    let mut first: HashMap<usize, usize> = HashMap::new();
    let mut last: HashMap<usize, usize> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        first.entry(l.page).or_insert(i);
        last.insert(l.page, i);
    }
    lines
        .into_iter()
        .enumerate()
        .filter(|(i, l)| {
            let h = heights.get(l.page).copied().unwrap_or(0.0);
            let edge = first.get(&l.page) == Some(i)
                || last.get(&l.page) == Some(i)
                || (h > 0.0 && (l.y < h * 0.12 || l.y > h * 0.88));
            !(edge && l.cells.len() <= 2 && is_page_label(&l.text()))
        })
        .map(|(_, l)| l)
        .collect()
}

/// An entry of a table of contents or of an index: text, a dot leader, a page
/// number (`3.1 Invoking asn1Parser . . . . . 5`, `Naming........3`, `asn1_create_element . . 9, 12`).
fn is_contents_entry(text: &str) -> bool {
    let t = text.trim_end();
    let numbers = t.trim_end_matches(|c: char| c.is_ascii_digit() || c == ',' || c == ' ' || c == '–' || c == '-');
    let numbers_len = t.len() - numbers.len();
    let tail = t[numbers.len()..].trim();
    let label = tail
        .split([',', ' '])
        .filter(|s| !s.is_empty())
        .all(|s| s.split(['–', '-']).all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())));
    let roman_tail = t.rsplit_once(' ').is_some_and(|(_, r)| is_roman(r));
    if (numbers_len == 0 || tail.is_empty() || !label) && !roman_tail {
        return false;
    }
    let body = if roman_tail { t.rsplit_once(' ').map_or(t, |(b, _)| b) } else { numbers };
    // The leader: at least four dots, spaced or not, just before the number.
    let lead: String = body.chars().rev().take_while(|c| *c == '.' || *c == ' ' || *c == '·' || *c == '…').collect();
    lead.chars().filter(|c| *c == '.' || *c == '·').count() + 3 * lead.chars().filter(|c| *c == '…').count() >= 4
}

/// Whether a heading names a table of contents or an index, the sections
/// [`is_contents_entry`] empties.
fn is_contents_heading(text: &str) -> bool {
    let t = text.trim().trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ').to_lowercase();
    t == "contents"
        || t == "table of contents"
        || t.ends_with("index")
        || t == "list of figures"
        || t == "list of tables"
}

/// Drops the entries of contents pages and indexes ([`is_contents_entry`]).
pub(super) fn drop_contents_entries(lines: &mut Vec<Line>) {
    // Contents and index entries point at page numbers that mean nothing on the
    // web and repeat every heading: they go, and their heading with them
    // ([`drop_empty_contents`]). An index set in two columns puts an entry and the
    // other column's letter on one line: each cell is an entry or at most a letter
    // or two.
    lines.retain(|l| {
        let entry = |t: &str| {
            // …or the entry and the letter are one cell, a word space apart.
            is_contents_entry(t)
                || t.rsplit_once(' ').is_some_and(|(e, letter)| {
                    letter.chars().count() <= 2 && letter.chars().all(char::is_alphabetic) && is_contents_entry(e)
                })
        };
        let entries = l.cells.iter().filter(|(_, t)| entry(t)).count();
        !(entry(&l.text()) || (entries > 0 && l.cells.iter().all(|(_, t)| entry(t) || t.chars().count() <= 2)))
    });
}

/// Drops a contents or index heading left with nothing under it (its entries were
/// dropped): the next block is a heading of the same or a higher level. Its
/// sub-headings (an index's letters) go with it when nothing else is left.
/// `headings` loses the headings dropped.
pub(super) fn drop_empty_contents(blocks: Vec<String>, headings: &mut usize) -> Vec<String> {
    let heading_level = |b: &str| b.starts_with('#').then(|| b.chars().take_while(|c| *c == '#').count());
    let mut kept: Vec<String> = Vec::with_capacity(blocks.len());
    let mut n = 0;
    while n < blocks.len() {
        let b = &blocks[n];
        if let Some(lvl) = heading_level(b).filter(|_| is_contents_heading(b.trim_start_matches('#'))) {
            let end = (n + 1..blocks.len())
                .find(|&m| heading_level(&blocks[m]).is_none_or(|l| l <= lvl))
                .unwrap_or(blocks.len());
            let only_headings = end == blocks.len() || heading_level(&blocks[end]).is_some();
            if only_headings {
                *headings -= end - n;
                n = end;
                continue;
            }
        }
        kept.push(b.clone());
        n += 1;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_labels_and_contents_entries_are_recognised() {
        for label in ["7", "iv", "XII", "- 7 -", "Page 7", "7 / 36", "Page 7 of 36", "xxxix"] {
            assert!(is_page_label(label), "{label}");
        }
        for text in ["7 days", "iiv", "2024-01-15", "Section 7", "12345", "v2", "Mix"] {
            assert!(!is_page_label(text), "{text}");
        }
        for entry in [
            "3 Utilities . . . . . . . . . . . . 5",
            "2.1 ASN.1 syntax. . . . . . . . 2",
            "Naming........3",
            "asn1_create_element . . . . 9, 12",
            "Preface . . . . . . . iv",
        ] {
            assert!(is_contents_entry(entry), "{entry}");
        }
        for text in [
            "replace the “with. . .Texts.” line with this:",
            "Wait... 5",
            "Version 1.3 or later",
            "The total is 5",
            "ASN.1 syntax 2",
        ] {
            assert!(!is_contents_entry(text), "{text}");
        }
        assert!(is_contents_heading("Table of Contents"));
        assert!(is_contents_heading("Function and Data Index"));
        assert!(!is_contents_heading("Indexing the documents"));
    }
}
