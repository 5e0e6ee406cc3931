//! The Markdown writer: lines into headings, pipe tables, lists and paragraphs,
//! each block starting at the first line not yet taken, after the page furniture
//! is dropped ([`to_markdown`]).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::extract::PageText;
use super::furniture::{drop_contents_entries, drop_empty_contents, drop_page_labels, drop_repeats};
use super::lines::{build_lines, size_key, Line};
use super::structure::{
    continues_list, join_line, list_item, same_columns, size_weights, typeset_title, word_counts, Levels,
};

/// The Markdown of a document, without frontmatter.
#[derive(Debug, Clone, Default)]
pub struct Converted {
    pub markdown: String,
    /// The largest text on the first page with text, when it is clearly larger
    /// than the body: a document's title as typeset (read before running headers
    /// are dropped, because many documents repeat their title as one).
    pub typeset_title: Option<String>,
    pub first_h1: Option<String>,
    pub headings: usize,
    pub tables: usize,
}

/// Turns extracted pages into Markdown.
pub fn to_markdown(pages: &[PageText]) -> Converted {
    let mut lines: Vec<Line> = pages.iter().enumerate().flat_map(|(i, p)| build_lines(i, p)).collect();
    let heights: Vec<f64> = pages.iter().map(|p| p.height).collect();
    let title = typeset_title(&lines, size_weights(&lines).1 as f64);
    lines = drop_repeats(lines, &heights);
    lines = drop_page_labels(lines, &heights);
    drop_contents_entries(&mut lines);
    let mut out = Converted { typeset_title: title, ..Converted::default() };
    let blocks = blocks(&lines, &mut out);
    out.markdown = drop_empty_contents(blocks, &mut out.headings).join("\n\n");
    out.markdown.push('\n');
    out
}

/// The lines as Markdown blocks: headings, tables, lists and paragraphs, each
/// starting at the first line not yet taken. Headings and tables are counted in
/// `out`, and the first level-1 heading kept there.
fn blocks(lines: &[Line], out: &mut Converted) -> Vec<String> {
    let levels = Levels::of(lines);
    let counts = word_counts(lines);
    let mut blocks: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        i = if let Some(lvl) = levels.level(&lines[i]) {
            let (text, next) = heading(lines, i, lvl, &levels);
            if lvl == 1 && out.first_h1.is_none() {
                out.first_h1 = Some(text.clone());
            }
            out.headings += 1;
            blocks.push(format!("{} {}", "#".repeat(lvl), text.trim_start_matches('#').trim()));
            next
        } else if let Some((table, next)) = table(lines, i, &levels) {
            blocks.push(table);
            out.tables += 1;
            next
        } else if let Some((marker, text)) = list_item(&lines[i].text()) {
            let (item, next) = list_entry(lines, i, marker, text, &levels, &counts);
            // Consecutive items form one list: no blank line between them.
            let joins = i > 0 && is_list_block(blocks.last()) && continues_list(lines, i);
            match blocks.last_mut() {
                Some(prev) if joins => {
                    prev.push('\n');
                    prev.push_str(&item);
                }
                _ => blocks.push(item),
            }
            next
        } else {
            let (text, next) = paragraph(lines, i, &levels, &counts);
            blocks.push(escape_start(&text));
            next
        };
    }
    blocks
}

/// The heading of level `lvl` at line `i`, wrapped over lines (same size, next
/// baseline close below): its text and the line after it.
fn heading(lines: &[Line], i: usize, lvl: usize, levels: &Levels) -> (String, usize) {
    let line = &lines[i];
    let mut text = line.text();
    let mut j = i + 1;
    while j < lines.len()
        && lines[j].page == line.page
        && size_key(lines[j].size) == size_key(line.size)
        && levels.level(&lines[j]) == Some(lvl)
        && lines[j].y - lines[j - 1].y < line.size * 1.6
    {
        text.push(' ');
        text.push_str(&lines[j].text());
        j += 1;
    }
    (text, j)
}

/// The pipe table at line `i`, when it and at least the next line are rows of
/// one ([`same_columns`]): its Markdown and the line after it.
fn table(lines: &[Line], i: usize, levels: &Levels) -> Option<(String, usize)> {
    let line = &lines[i];
    if line.cells.len() < 2 {
        return None;
    }
    let mut j = i + 1;
    while j < lines.len() && levels.level(&lines[j]).is_none() && same_columns(line, &lines[j]) {
        j += 1;
    }
    if j - i < 2 {
        return None;
    }
    let row = |l: &Line| format!("| {} |", l.cells.iter().map(|(_, t)| escape_cell(t)).collect::<Vec<_>>().join(" | "));
    let mut table = row(line);
    let _ = write!(table, "\n|{}", " --- |".repeat(line.cells.len()));
    for l in &lines[i + 1..j] {
        table.push('\n');
        table.push_str(&row(l));
    }
    Some((table, j))
}

/// The list item at line `i` (its `marker` and the `text` after it) with its
/// continuation lines: its Markdown and the line after it.
fn list_entry(
    lines: &[Line],
    i: usize,
    marker: Option<String>,
    mut text: String,
    levels: &Levels,
    counts: &HashMap<String, usize>,
) -> (String, usize) {
    let line = &lines[i];
    // Continuation lines: indented past the marker, not items themselves.
    let mut j = i + 1;
    while j < lines.len()
        && lines[j].page == line.page
        && levels.level(&lines[j]).is_none()
        && lines[j].x0 > line.x0 + line.size * 0.5
        && list_item(&lines[j].text()).is_none()
        && lines[j].y - lines[j - 1].y < line.size * 1.6
    {
        join_line(&mut text, &lines[j].text(), counts);
        j += 1;
    }
    let item = match marker {
        Some(n) => format!("{n}. {text}"),
        None => format!("- {text}"),
    };
    (item, j)
}

/// The paragraph at line `i`: its text and the line after it.
fn paragraph(lines: &[Line], i: usize, levels: &Levels, counts: &HashMap<String, usize>) -> (String, usize) {
    // Following body lines until a wider gap, a heading, a list item or a table
    // row. Across a page break it goes on when the last line did not end a
    // sentence.
    let mut text = lines[i].text();
    let mut j = i + 1;
    while j < lines.len() {
        let (prev, next) = (&lines[j - 1], &lines[j]);
        let joined = if next.page == prev.page {
            next.y - prev.y < prev.size.max(next.size) * 1.5
        } else {
            !text.ends_with(['.', '!', '?', ':'])
        };
        if !joined
            || levels.level(next).is_some()
            || list_item(&next.text()).is_some()
            || size_key(next.size) != size_key(prev.size)
            || (next.cells.len() >= 2 && j + 1 < lines.len() && same_columns(next, &lines[j + 1]))
        {
            break;
        }
        join_line(&mut text, &next.text(), counts);
        j += 1;
    }
    (text, j)
}

fn is_list_block(b: Option<&String>) -> bool {
    b.is_some_and(|b| b.lines().last().is_some_and(|l| list_item(l).is_some()))
}

fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Escapes what would change meaning at the start of a Markdown paragraph.
fn escape_start(s: &str) -> String {
    let t = s.trim_start();
    if t.starts_with('#') || t.starts_with('>') || t.starts_with('=') {
        format!("\\{t}")
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pdf::Glyph;

    fn glyphs(x: f64, y: f64, size: f64, text: &str) -> Vec<Glyph> {
        let w = 0.5;
        text.chars()
            .enumerate()
            .map(|(i, c)| {
                let gx = x + i as f64 * w * size;
                Glyph { x: gx, y, end: gx + w * size, size, text: c.to_string(), bold: false, string: 0 }
            })
            .collect()
    }

    fn page(items: &[(f64, f64, f64, &str)]) -> PageText {
        PageText {
            height: 792.0,
            glyphs: items.iter().flat_map(|(x, y, s, t)| glyphs(*x, *y, *s, t)).collect(),
            strings: 0,
        }
    }

    #[test]
    fn headings_paragraphs_lists_tables() {
        let p = page(&[
            (72.0, 100.0, 20.0, "Handbook"),
            (72.0, 140.0, 16.0, "Requirements"),
            (72.0, 170.0, 11.0, "Students must complete the"),
            (72.0, 183.0, 11.0, "core courses in order."),
            (72.0, 210.0, 11.0, "• First item"),
            (72.0, 223.0, 11.0, "• Second item"),
            (72.0, 250.0, 11.0, "1. Apply"),
            (72.0, 263.0, 11.0, "2. Enrol"),
            (72.0, 290.0, 11.0, "Code"),
            (160.0, 290.0, 11.0, "Course"),
            (400.0, 290.0, 11.0, "Credits"),
            (72.0, 303.0, 11.0, "CS101"),
            (160.0, 303.0, 11.0, "Intro | basics"),
            (400.0, 303.0, 11.0, "4"),
        ]);
        let c = to_markdown(&[p]);
        let md = &c.markdown;
        assert!(md.contains("# Handbook\n"), "{md}");
        assert!(md.contains("## Requirements\n"), "{md}");
        assert!(md.contains("Students must complete the core courses in order."), "{md}");
        assert!(md.contains("- First item\n- Second item"), "{md}");
        assert!(md.contains("1. Apply\n2. Enrol"), "{md}");
        assert!(
            md.contains("| Code | Course | Credits |\n| --- | --- | --- |\n| CS101 | Intro \\| basics | 4 |"),
            "{md}"
        );
        assert_eq!(c.first_h1.as_deref(), Some("Handbook"));
    }

    #[test]
    fn repeated_footers_are_dropped() {
        let mk = |n: &str| page(&[(72.0, 100.0, 11.0, "Some body text here."), (300.0, 760.0, 9.0, n)]);
        let c = to_markdown(&[mk("1"), mk("2"), mk("3")]);
        assert!(!c.markdown.contains('2'), "{}", c.markdown);
    }

    #[test]
    fn contents_page_numbers_and_title() {
        let contents = page(&[
            (72.0, 60.0, 9.0, "My Manual"),
            (72.0, 120.0, 24.0, "My Manual"),
            (72.0, 150.0, 12.0, "A. Author"),
            (72.0, 200.0, 14.0, "Contents"),
            (72.0, 230.0, 11.0, "1 Getting started . . . . . . . . . . . 1"),
            (72.0, 245.0, 11.0, "2 Configuration . . . . . . . . . . . . 2"),
            (300.0, 760.0, 11.0, "i"),
        ]);
        let body = |n: &str, heading: &str, text: &str| {
            page(&[
                (72.0, 60.0, 9.0, "My Manual"),
                (72.0, 120.0, 14.0, heading),
                (72.0, 150.0, 11.0, text),
                (72.0, 163.0, 11.0, "more text about the manip-"),
                (72.0, 176.0, 11.0, "ulation of files."),
                (300.0, 760.0, 11.0, n),
            ])
        };
        let c = to_markdown(&[
            contents,
            body("1", "1 Getting started", "Start here with the manipulation guide."),
            body("2", "2 Configuration", "Configure it."),
        ]);
        let md = &c.markdown;
        assert_eq!(c.typeset_title.as_deref(), Some("My Manual"), "the running header is smaller");
        assert!(!md.contains(". . ."), "{md}");
        assert!(!md.contains("Contents"), "{md}");
        assert!(md.contains("# 1 Getting started"), "{md}");
        assert!(md.contains("manipulation of files."), "{md}");
        for label in ["\ni\n", "\n1\n", "\n2\n"] {
            assert!(!md.contains(label), "{label:?} in {md}");
        }
        assert!(!md.contains("My Manual\n\nMy Manual"), "{md}");
    }
}
