//! What a line is: heading levels from sizes and weight, list items, table rows,
//! the typeset title; and how the lines of a paragraph or list item are joined
//! (hyphenated words included).

use std::collections::{BTreeMap, HashMap};

use super::lines::{size_key, Line};

/// Words of the document as written (lowercase, trimmed of punctuation, inner
/// hyphens kept), counted, to decide how a word split at a line end is joined.
pub(super) fn word_counts(lines: &[Line]) -> HashMap<String, usize> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for l in lines {
        for w in l.text().split_whitespace() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
            if !w.is_empty() {
                *counts.entry(w).or_default() += 1;
            }
        }
    }
    counts
}

/// Appends the next line of a paragraph or list item to `text`. A word hyphenated
/// at the line end (`manip-` + `ulation`) loses the hyphen when the joined word is
/// more likely: it occurs in the document more often than the hyphenated form, or
/// neither occurs and the next line goes on in lowercase (a typesetter's break,
/// not a compound: `command-` + `line` stays when `command-line` is written
/// elsewhere).
pub(super) fn join_line(text: &mut String, next: &str, counts: &HashMap<String, usize>) {
    let hyphen_break = text.ends_with('-') && text.chars().rev().nth(1).is_some_and(char::is_alphabetic);
    if !hyphen_break {
        text.push(' ');
        text.push_str(next);
        return;
    }
    let head: String =
        text[..text.len() - 1].rsplit(|c: char| !c.is_alphanumeric() && c != '-').next().unwrap_or("").to_lowercase();
    let tail: String =
        next.split_whitespace().next().unwrap_or("").trim_end_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
    let count = |w: &str| counts.get(w).copied().unwrap_or(0);
    let (joined, hyphenated) = (count(&format!("{head}{tail}")), count(&format!("{head}-{tail}")));
    let lowercase_next = next.chars().next().is_some_and(char::is_lowercase);
    if joined > hyphenated || (joined == hyphenated && lowercase_next) {
        text.pop();
    }
    text.push_str(next);
}

/// The largest text of the first page that has text, joined over its lines, when
/// it is at least 15 % larger than `body`.
pub(super) fn typeset_title(lines: &[Line], body: f64) -> Option<String> {
    let page = lines.first()?.page;
    let on_page: Vec<&Line> = lines.iter().filter(|l| l.page == page).collect();
    let top = on_page.iter().map(|l| size_key(l.size)).max()?;
    if (top as f64) <= body * 1.15 {
        return None;
    }
    let mut title = String::new();
    let mut last: Option<&Line> = None;
    for l in on_page.into_iter().filter(|l| size_key(l.size) == top) {
        // The first block at that size: lines close below each other.
        if last.is_some_and(|p| l.y - p.y > l.size * 1.8) {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(&l.text());
        last = Some(l);
    }
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty() && title.chars().count() <= 200).then_some(title)
}

/// A list item's marker and text: `Some((None, text))` for a bullet,
/// `Some((Some(n), text))` for a numbered item.
pub(super) fn list_item(text: &str) -> Option<(Option<String>, String)> {
    let t = text.trim_start();
    for b in ['•', '◦', '▪', '‣', '●', '○', '■', '–', '-', '*'] {
        if let Some(rest) = t.strip_prefix(b) {
            // "-5 °C" or "*note" is text; a bullet is followed by a space (• alone
            // often is not, some generators draw it flush).
            if rest.starts_with(char::is_whitespace) || (b == '•' && !rest.is_empty()) {
                return Some((None, rest.trim().to_string()));
            }
        }
    }
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    if !digits.is_empty() && digits.len() <= 3 {
        let rest = &t[digits.len()..];
        if let Some(rest) = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')')) {
            if rest.starts_with(char::is_whitespace) {
                return Some((Some(digits), rest.trim().to_string()));
            }
        }
    }
    let mut chars = t.chars();
    if let (Some(c), Some(')'), Some(s)) = (chars.next(), chars.next(), chars.next()) {
        if c.is_ascii_lowercase() && s.is_whitespace() {
            // Markdown has no lettered lists; the letter stays in the text.
            return Some((None, t.to_string()));
        }
    }
    None
}

/// Two lines are rows of one table when they have the same number of cells (≥ 2)
/// and each cell starts (or, for right-aligned numbers, ends roughly) at the same x.
pub(super) fn same_columns(a: &Line, b: &Line) -> bool {
    a.cells.len() >= 2
        && a.cells.len() == b.cells.len()
        && a.page == b.page
        && a.cells.iter().zip(&b.cells).all(|((xa, _), (xb, _))| (xa - xb).abs() <= a.size.max(b.size) * 1.5)
}

/// Characters per size (as [`size_key`]), and the body size: the size with the
/// most characters (the smaller of two with as many).
pub(super) fn size_weights(lines: &[Line]) -> (BTreeMap<i64, usize>, i64) {
    let mut weights: BTreeMap<i64, usize> = BTreeMap::new();
    for l in lines {
        *weights.entry(size_key(l.size)).or_default() += l.text().chars().count();
    }
    let body = weights.iter().max_by_key(|(k, n)| (**n, -**k)).map(|(k, _)| *k).unwrap_or(0);
    (weights, body)
}

/// Which lines are headings, and of which level.
pub(super) struct Levels {
    /// Sizes (as [`size_key`]) of heading levels 1, 2, 3, …, largest first.
    heading_sizes: Vec<i64>,
    /// The body size.
    body: i64,
}

impl Levels {
    pub(super) fn of(lines: &[Line]) -> Levels {
        // Body size: the size with the most characters.
        let (weights, body) = size_weights(lines);
        // Sizes clearly (15%) above the body are heading levels, largest first; a
        // size used only for long runs of text (a pull quote) would still count,
        // which is the price of not knowing the font.
        let heading_sizes = weights.keys().rev().copied().filter(|k| (*k as f64) > body as f64 * 1.15).collect();
        Levels { heading_sizes, body }
    }

    /// The heading level of a line, `None` when it is not a heading.
    pub(super) fn level(&self, l: &Line) -> Option<usize> {
        let k = size_key(l.size);
        let text = l.text();
        if text.chars().count() > 150 {
            return None;
        }
        if let Some(i) = self.heading_sizes.iter().position(|h| *h == k) {
            return Some((i + 1).min(3));
        }
        // A short bold line of its own at body size is a minor heading, one level
        // below the sized ones; a bold table row, list item or sentence is not.
        let minor = l.bold
            && k == self.body
            && l.cells.len() == 1
            && text.chars().count() <= 80
            && !text.ends_with(['.', ',', ';'])
            && list_item(&text).is_none();
        minor.then(|| (self.heading_sizes.len() + 1).clamp(3, 4))
    }
}

/// Whether item `i` continues the list before it (the previous block was a list
/// whose last item ended on the line before this one).
pub(super) fn continues_list(lines: &[Line], i: usize) -> bool {
    let (prev, this) = (&lines[i - 1], &lines[i]);
    prev.page == this.page && this.y - prev.y < this.size * 1.8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyphens_at_line_ends_join_the_likelier_word() {
        let counts: HashMap<String, usize> =
            [("manipulation", 2), ("command-line", 3), ("command", 4)].map(|(w, n)| (w.to_string(), n)).into();
        let join = |a: &str, b: &str| {
            let mut t = a.to_string();
            join_line(&mut t, b, &counts);
            t
        };
        assert_eq!(join("DER manip-", "ulation."), "DER manipulation.", "the joined word occurs");
        assert_eq!(join("use the command-", "line tools"), "use the command-line tools", "the compound occurs");
        assert_eq!(join("structures man-", "agement and"), "structures management and", "neither: a lowercase break");
        assert_eq!(join("the X-", "Window system"), "the X-Window system", "a capital after the break");
        assert_eq!(join("ends here", "next line"), "ends here next line");
        assert_eq!(join("costs 5 -", "or less"), "costs 5 - or less", "a dash after a space is no hyphen");
    }
}
