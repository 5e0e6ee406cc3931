//! `site-builder ingest pdf`: turns one PDF (a handbook, a policy document) into one
//! Markdown page with the frontmatter the build reads, so that it chunks at its
//! headings like any other page.
//!
//! PDF has no structure to read, only glyphs at positions, so the structure is
//! inferred. [`pdf_extract`] walks the content streams and hands every character with
//! its position and size to a [`Collector`]; the characters become lines (same
//! baseline, ordered by x, a space where there is a gap, a cell boundary where the gap
//! is wide), and the lines become blocks: headings (sizes above the body size, largest
//! first), list items (bullets, `1.`, `1)`, `a)`), pipe tables (runs of lines whose
//! cells start at the same x positions) and paragraphs (wrapped body lines joined).
//! Lines that repeat on most pages near the top or bottom edge (running headers,
//! page numbers) are dropped.
//!
//! pdf-extract 0.9's `OutputDev` reports a character's size but not its font, so the
//! weight comes from a second, lighter walk of each page's content stream with lopdf
//! ([`string_weights`]): the font of every text-showing string, matched to
//! pdf-extract's strings by order. Where the two walks disagree on a page (text in
//! form XObjects) that page has no weights, and its headings come from size alone.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lopdf::{Document, Object};
use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use kb_common::slug::slugify;
use kb_common::write::{write_atomic, WriteError};

/// What to ingest and where.
#[derive(Debug, Clone)]
pub struct PdfOptions {
    pub file: PathBuf,
    /// The page title; by default the PDF's Info /Title, else its first `#` heading,
    /// else the file stem.
    pub title: Option<String>,
    /// Content folder the page is written into.
    pub out: PathBuf,
}

/// Why a PDF could not be ingested. Nothing is written in any of these cases.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error("{}: no such file; check the path", path.display())]
    Missing { path: PathBuf },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a PDF (it starts with {start:?}); pass a .pdf file", path.display())]
    NotPdf { path: PathBuf, start: String },
    #[error("{} is encrypted; decrypt it first, e.g. with qpdf --decrypt in.pdf out.pdf", path.display())]
    Encrypted { path: PathBuf },
    #[error("{} is a damaged PDF ({message}); repair it first, e.g. with qpdf in.pdf out.pdf", path.display())]
    Damaged { path: PathBuf, message: String },
    #[error("{} has no text layer (a scanned document?); run OCR first, e.g. with ocrmypdf", path.display())]
    NoText { path: PathBuf },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// What an ingest wrote.
#[derive(Debug, Clone)]
pub struct PdfSummary {
    pub written: PathBuf,
    pub title: String,
    pub pages: usize,
    pub headings: usize,
    pub tables: usize,
}

impl PdfSummary {
    pub fn text(&self) -> String {
        format!(
            "wrote {} (\"{}\"): {} page(s), {} heading(s), {} table(s)\n",
            self.written.display(),
            self.title,
            self.pages,
            self.headings,
            self.tables
        )
    }
}

/// Ingests `opts.file` into `OUT/<slug of the title>.md`.
pub fn ingest_pdf(opts: &PdfOptions) -> Result<PdfSummary, PdfError> {
    let path = &opts.file;
    let bytes = std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => PdfError::Missing { path: path.clone() },
        _ => PdfError::Read { path: path.clone(), source },
    })?;
    // Checked before lopdf sees the bytes: its error for a text file is a parser
    // message that does not say what is wrong. The header may follow some junk.
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        let start: String = String::from_utf8_lossy(&bytes[..bytes.len().min(16)]).into_owned();
        return Err(PdfError::NotPdf { path: path.clone(), start });
    }
    let doc = Document::load_mem(&bytes).map_err(|e| damaged(path, e.to_string()))?;
    // Any /Encrypt in the trailer: lopdf's `is_encrypted` also needs the dictionary
    // to resolve, and a PDF whose encryption dictionary is broken is no more readable.
    if doc.trailer.get(b"Encrypt").is_ok() {
        return Err(PdfError::Encrypted { path: path.clone() });
    }
    let pages = extract_pages(&doc).map_err(|m| damaged(path, m))?;
    if pages.iter().all(|p| p.glyphs.iter().all(|g| g.text.trim().is_empty())) {
        return Err(PdfError::NoText { path: path.clone() });
    }
    let converted = to_markdown(&pages);
    let info = info_strings(&doc);
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    // An empty /Title is common (LaTeX without hyperref's pdftitle); the largest
    // text on the first page is then the title, not the first heading, which may be
    // an author line or a running header.
    let title = [
        opts.title.clone(),
        info.get("Title").cloned(),
        converted.typeset_title.clone(),
        converted.first_h1.clone(),
        Some(stem),
    ]
    .into_iter()
    .flatten()
    .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
    .find(|t| !t.is_empty())
    .unwrap_or_else(|| "document".to_string());
    let mut slug = slugify(&title);
    if slug.is_empty() {
        slug = "document".to_string();
    }
    let date = ["ModDate", "CreationDate"].iter().find_map(|k| info.get(*k).and_then(|d| pdf_date(d)));
    let source_file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();

    let mut text = String::from("---\n");
    let _ = writeln!(text, "title: {}", yaml_quote(&title));
    let _ = writeln!(text, "page_id: {}", yaml_quote(&slug));
    let _ = writeln!(text, "source_file: {}", yaml_quote(&source_file));
    let _ = writeln!(text, "path: {}", yaml_quote(&title));
    text.push_str("parent: ''\n");
    if let Some(d) = date {
        let _ = writeln!(text, "last_updated: '{d}'");
    }
    text.push_str("version: 1\n---\n\n");
    // The build chunks at H1/H2; a document without any H1 gets the title as one so
    // that its first chunk has a heading, and so does one whose typeset title was
    // dropped with the running headers that repeat it.
    let title_dropped = converted
        .typeset_title
        .as_deref()
        .is_some_and(|t| t == title && !converted.markdown.lines().any(|l| l.trim_start_matches('#').trim() == t));
    if converted.first_h1.is_none() || title_dropped {
        let _ = writeln!(text, "# {}\n", title);
    }
    text.push_str(&converted.markdown);

    let written = opts.out.join(format!("{slug}.md"));
    write_atomic(&written, text.as_bytes())?;
    Ok(PdfSummary { written, title, pages: pages.len(), headings: converted.headings, tables: converted.tables })
}

fn damaged(path: &Path, message: String) -> PdfError {
    PdfError::Damaged { path: path.to_path_buf(), message }
}

/// `'it''s'`: single-quoted YAML, which needs no escaping but doubled quotes.
fn yaml_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The date of a PDF date string (ISO 32000 §7.9.4: `D:YYYYMMDDHHmmSSOHH'mm'`,
/// where everything after the year is optional and defaults to the first month and
/// day). Only the calendar date is kept, as the writer's clock showed it; `None`
/// when there is no valid date (month 13, 30 February, or not digits).
fn pdf_date(d: &str) -> Option<time::Date> {
    let d = d.trim();
    let d = d.strip_prefix("D:").unwrap_or(d);
    let digits = &d[..d.bytes().take_while(u8::is_ascii_digit).count()];
    // The digits come in pairs after the year; what follows them is a time zone.
    let rest_ok = matches!(d[digits.len()..].bytes().next(), None | Some(b'Z' | b'+' | b'-'));
    if digits.len() < 4 || !digits.len().is_multiple_of(2) || !rest_ok {
        return None;
    }
    let two = |at: usize| digits.get(at..at + 2).map_or(Some(1), |p| p.parse::<u8>().ok());
    let month = time::Month::try_from(two(4)?).ok()?;
    time::Date::from_calendar_date(digits[..4].parse().ok()?, month, two(6)?).ok()
}

/// The Info dictionary's text strings (Title, ModDate, …).
fn info_strings(doc: &Document) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let info = match doc.trailer.get(b"Info") {
        Ok(Object::Reference(id)) => doc.get_dictionary(*id).ok(),
        Ok(Object::Dictionary(d)) => Some(d),
        _ => None,
    };
    if let Some(info) = info {
        for (k, v) in info.iter() {
            let v = match v {
                Object::Reference(id) => match doc.get_object(*id) {
                    Ok(o) => o,
                    Err(_) => continue,
                },
                o => o,
            };
            if let Ok(s) = lopdf::decode_text_string(v) {
                let s = s.trim().to_string();
                if !s.is_empty() {
                    out.insert(String::from_utf8_lossy(k).into_owned(), s);
                }
            }
        }
    }
    out
}

/// One character as drawn: baseline position (y grows downwards), advance and size.
#[derive(Debug, Clone)]
pub struct Glyph {
    pub x: f64,
    pub y: f64,
    pub end: f64,
    pub size: f64,
    pub text: String,
    /// Drawn in a bold (Bold, Black, Heavy…) font.
    pub bold: bool,
    /// Which text-showing string of the page drew it.
    pub string: usize,
}

/// One page's characters in drawing order, and its height.
#[derive(Debug, Clone, Default)]
pub struct PageText {
    pub height: f64,
    pub glyphs: Vec<Glyph>,
    /// Text-showing strings seen on the page.
    pub strings: usize,
}

/// The [`OutputDev`] that records characters per page.
struct Collector {
    pages: Vec<PageText>,
}

impl OutputDev for Collector {
    fn begin_page(
        &mut self,
        _n: u32,
        media_box: &MediaBox,
        _art: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        let height = media_box.ury - media_box.lly;
        self.pages.push(PageText { height, glyphs: Vec::new(), strings: 0 });
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        ch: &str,
    ) -> Result<(), OutputError> {
        // The size as drawn: the font size through the text rendering matrix (the
        // side of the square with the same area), as pdf-extract's text output does.
        let (vx, vy) = (font_size * (trm.m11 + trm.m21), font_size * (trm.m12 + trm.m22));
        let size = (vx * vy).abs().sqrt();
        if let Some(page) = self.pages.last_mut() {
            // y flipped to grow downwards, so that lines sort top first.
            let (x, y) = (trm.m31, page.height - trm.m32);
            let string = page.strings.saturating_sub(1);
            page.glyphs.push(Glyph { x, y, end: x + width * size, size, text: ch.to_string(), bold: false, string });
        }
        Ok(())
    }
    // pdf-extract calls this once per string it shows (Tj, each string of a TJ).
    fn begin_word(&mut self) -> Result<(), OutputError> {
        if let Some(page) = self.pages.last_mut() {
            page.strings += 1;
        }
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

fn extract_pages(doc: &Document) -> Result<Vec<PageText>, String> {
    let mut c = Collector { pages: Vec::new() };
    // pdf-extract unwraps on some malformed input (a page that is not a dictionary,
    // an unknown font encoding); a panic there is the input's fault, so it becomes
    // an error instead of a crash. The default hook would still print it, so it is
    // silenced for the call.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pdf_extract::output_doc(doc, &mut c)));
    std::panic::set_hook(hook);
    match result {
        Ok(Ok(())) => {
            let mut pages = c.pages;
            let weights = string_weights(doc);
            for (page, weights) in pages.iter_mut().zip(weights) {
                if let Some(w) = weights.filter(|w| w.len() == page.strings) {
                    for g in &mut page.glyphs {
                        g.bold = w.get(g.string).copied().unwrap_or(false);
                    }
                }
            }
            Ok(pages)
        }
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the text extractor could not read its content".to_string()),
    }
}

/// Per page, whether each text-showing string (Tj, each string of a TJ, the ones
/// pdf-extract shows) is in a bold font; `None` where the page cannot be read.
fn string_weights(doc: &Document) -> Vec<Option<Vec<bool>>> {
    doc.get_pages()
        .values()
        .map(|&id| {
            let fonts = doc.get_page_fonts(id).ok()?;
            let bold: HashMap<&[u8], bool> = fonts
                .iter()
                .map(|(name, dict)| {
                    let base = dict.get(b"BaseFont").and_then(Object::as_name).unwrap_or_default();
                    let base = String::from_utf8_lossy(base).to_ascii_lowercase();
                    (name.as_slice(), ["bold", "black", "heavy"].iter().any(|w| base.contains(w)))
                })
                .collect();
            let content = doc.get_and_decode_page_content(id).ok()?;
            let mut current = false;
            let mut out = Vec::new();
            for op in &content.operations {
                match (op.operator.as_str(), op.operands.first()) {
                    ("Tf", Some(Object::Name(n))) => current = bold.get(n.as_slice()).copied().unwrap_or(false),
                    ("Tj", Some(Object::String(..))) => out.push(current),
                    ("TJ", Some(Object::Array(a))) => {
                        out.extend(a.iter().filter(|e| matches!(e, Object::String(..))).map(|_| current))
                    }
                    _ => {}
                }
            }
            Some(out)
        })
        .collect()
}

/// One line of text: its cells (split at wide gaps) with their start x.
#[derive(Debug, Clone)]
struct Line {
    page: usize,
    y: f64,
    x0: f64,
    size: f64,
    bold: bool,
    cells: Vec<(f64, String)>,
}

impl Line {
    fn text(&self) -> String {
        self.cells.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" ")
    }
}

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

/// Sizes are compared rounded to half a point: the same font size can come out of
/// the text matrix as 10.999 and 11.0001.
fn size_key(s: f64) -> i64 {
    (s * 2.0).round() as i64
}

fn build_lines(page_no: usize, page: &PageText) -> Vec<Line> {
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
fn drop_repeats(lines: Vec<Line>, heights: &[f64]) -> Vec<Line> {
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
fn drop_page_labels(lines: Vec<Line>, heights: &[f64]) -> Vec<Line> {
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

/// Words of the document as written (lowercase, trimmed of punctuation, inner
/// hyphens kept), counted, to decide how a word split at a line end is joined.
fn word_counts(lines: &[Line]) -> HashMap<String, usize> {
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
fn join_line(text: &mut String, next: &str, counts: &HashMap<String, usize>) {
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
fn typeset_title(lines: &[Line], body: f64) -> Option<String> {
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
fn list_item(text: &str) -> Option<(Option<String>, String)> {
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
fn same_columns(a: &Line, b: &Line) -> bool {
    a.cells.len() >= 2
        && a.cells.len() == b.cells.len()
        && a.page == b.page
        && a.cells.iter().zip(&b.cells).all(|((xa, _), (xb, _))| (xa - xb).abs() <= a.size.max(b.size) * 1.5)
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

/// Characters per size (as [`size_key`]), and the body size: the size with the
/// most characters (the smaller of two with as many).
fn size_weights(lines: &[Line]) -> (BTreeMap<i64, usize>, i64) {
    let mut weights: BTreeMap<i64, usize> = BTreeMap::new();
    for l in lines {
        *weights.entry(size_key(l.size)).or_default() += l.text().chars().count();
    }
    let body = weights.iter().max_by_key(|(k, n)| (**n, -**k)).map(|(k, _)| *k).unwrap_or(0);
    (weights, body)
}

/// Drops the entries of contents pages and indexes ([`is_contents_entry`]).
fn drop_contents_entries(lines: &mut Vec<Line>) {
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

/// Which lines are headings, and of which level.
struct Levels {
    /// Sizes (as [`size_key`]) of heading levels 1, 2, 3, …, largest first.
    heading_sizes: Vec<i64>,
    /// The body size.
    body: i64,
}

impl Levels {
    fn of(lines: &[Line]) -> Levels {
        // Body size: the size with the most characters.
        let (weights, body) = size_weights(lines);
        // Sizes clearly (15%) above the body are heading levels, largest first; a
        // size used only for long runs of text (a pull quote) would still count,
        // which is the price of not knowing the font.
        let heading_sizes = weights.keys().rev().copied().filter(|k| (*k as f64) > body as f64 * 1.15).collect();
        Levels { heading_sizes, body }
    }

    /// The heading level of a line, `None` when it is not a heading.
    fn level(&self, l: &Line) -> Option<usize> {
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

/// Drops a contents or index heading left with nothing under it (its entries were
/// dropped): the next block is a heading of the same or a higher level. Its
/// sub-headings (an index's letters) go with it when nothing else is left.
/// `headings` loses the headings dropped.
fn drop_empty_contents(blocks: Vec<String>, headings: &mut usize) -> Vec<String> {
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

fn is_list_block(b: Option<&String>) -> bool {
    b.is_some_and(|b| b.lines().last().is_some_and(|l| list_item(l).is_some()))
}

/// Whether item `i` continues the list before it (the previous block was a list
/// whose last item ended on the line before this one).
fn continues_list(lines: &[Line], i: usize) -> bool {
    let (prev, this) = (&lines[i - 1], &lines[i]);
    prev.page == this.page && this.y - prev.y < this.size * 1.8
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn dates_and_list_markers() {
        let date = |d: &str| pdf_date(d).map(|d| d.to_string());
        assert_eq!(date("D:20240115093000+01'00'").as_deref(), Some("2024-01-15"));
        assert_eq!(date("D:20240115093000Z").as_deref(), Some("2024-01-15"));
        assert_eq!(date("20240115").as_deref(), Some("2024-01-15"), "the D: prefix is optional in practice");
        assert_eq!(date("D:2024").as_deref(), Some("2024-01-01"), "month and day default to 01");
        assert_eq!(date("D:202403").as_deref(), Some("2024-03-01"));
        assert_eq!(date("D:20240230"), None, "no 30 February");
        assert_eq!(date("D:20241301"), None, "no month 13");
        assert_eq!(date("D:2024x1"), None);
        assert_eq!(date("garbage"), None);
        assert_eq!(date(""), None);
        assert!(list_item("-5 degrees").is_none());
        assert_eq!(list_item("a) option").map(|x| x.1).as_deref(), Some("a) option"));
        assert_eq!(list_item("3) third").map(|x| x.0), Some(Some("3".to_string())));
    }

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
