//! Characters into lines: glyphs on one baseline ordered by x, a space at a gap
//! and a new cell at a gap of two ems or more, with the line's size and weight.

use std::collections::HashMap;

use super::extract::{Glyph, PageText};

/// One line of text: its cells (split at wide gaps) with their start x.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) page: usize,
    pub(super) y: f64,
    pub(super) x0: f64,
    pub(super) size: f64,
    pub(super) bold: bool,
    pub(super) cells: Vec<(f64, String)>,
}

impl Line {
    pub(super) fn text(&self) -> String {
        self.cells.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" ")
    }
}

/// Sizes are compared rounded to half a point: the same font size can come out of
/// the text matrix as 10.999 and 11.0001.
pub(super) fn size_key(s: f64) -> i64 {
    (s * 2.0).round() as i64
}

pub(super) fn build_lines(page_no: usize, page: &PageText) -> Vec<Line> {
    let mut glyphs: Vec<&Glyph> =
        page.glyphs.iter().filter(|g| g.size > 0.0 && g.x.is_finite() && g.y.is_finite()).collect();
    glyphs.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
    // Same baseline within a third of the size: superscripts and rounding stay on
    // their line, the next line (at least ~1× the size below) does not.
    let mut rows: Vec<Vec<&Glyph>> = Vec::new();
    for g in glyphs {
        match rows.last_mut() {
            Some(row) if (g.y - row[0].y).abs() <= row[0].size.max(g.size) * 0.35 => row.push(g),
            _ => rows.push(vec![g]),
        }
    }
    let mut lines = Vec::new();
    for mut row in rows {
        let y = row[0].y;
        row.sort_by(|a, b| a.x.total_cmp(&b.x));
        let mut weights: HashMap<i64, usize> = HashMap::new();
        for g in &row {
            *weights.entry(size_key(g.size)).or_default() += g.text.chars().count();
        }
        let size = weights.iter().max_by_key(|(k, n)| (**n, **k)).map(|(k, _)| *k as f64 / 2.0).unwrap_or(0.0);
        let bold = row.iter().filter(|g| !g.text.trim().is_empty()).all(|g| g.bold);
        let mut cells: Vec<(f64, String)> = Vec::new();
        let mut last_end: Option<f64> = None;
        for g in row {
            let gap = last_end.map(|e| g.x - e);
            match gap {
                // A gap of two ems or more is a column boundary, not a word space.
                Some(gap) if gap > size * 2.0 && !g.text.trim().is_empty() => cells.push((g.x, String::new())),
                Some(gap) if gap > size * 0.15 => {
                    if let Some((_, t)) = cells.last_mut() {
                        if !t.ends_with(' ') {
                            t.push(' ');
                        }
                    }
                }
                None => cells.push((g.x, String::new())),
                _ => {}
            }
            if let Some((x, t)) = cells.last_mut() {
                if g.text.trim().is_empty() {
                    if !t.is_empty() && !t.ends_with(' ') {
                        t.push(' ');
                    }
                } else {
                    if t.is_empty() {
                        *x = g.x;
                    }
                    t.push_str(&g.text);
                }
            }
            // Whitespace glyphs extend the line but must not hide a column gap.
            if !g.text.trim().is_empty() {
                last_end = Some(g.end);
            }
        }
        let cells: Vec<(f64, String)> =
            cells.into_iter().map(|(x, t)| (x, t.trim().to_string())).filter(|(_, t)| !t.is_empty()).collect();
        if let Some(x0) = cells.first().map(|c| c.0) {
            lines.push(Line { page: page_no, y, x0, size, bold, cells });
        }
    }
    lines
}
