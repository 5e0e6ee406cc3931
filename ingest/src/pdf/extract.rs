//! Reading the text layer: every character pdf-extract draws, with its position,
//! size and the page it is on ([`PageText`]), and whether its font is bold, from a
//! second walk of each page's content stream with lopdf ([`string_weights`]).

use std::collections::HashMap;

use lopdf::{Document, Object};
use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

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

pub(super) fn extract_pages(doc: &Document) -> Result<Vec<PageText>, String> {
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
