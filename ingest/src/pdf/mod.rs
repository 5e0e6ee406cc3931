//! `site-builder ingest pdf`: turns one PDF (a handbook, a policy document) into one
//! Markdown page with the frontmatter the build reads, so that it chunks at its
//! headings like any other page.
//!
//! PDF has no structure to read, only glyphs at positions, so the structure is
//! inferred. [`pdf_extract`] walks the content streams and hands every character with
//! its position and size to a `Collector` (`extract`); the characters become lines (same
//! baseline, ordered by x, a space where there is a gap, a cell boundary where the gap
//! is wide), and the lines become blocks: headings (sizes above the body size, largest
//! first), list items (bullets, `1.`, `1)`, `a)`), pipe tables (runs of lines whose
//! cells start at the same x positions) and paragraphs (wrapped body lines joined).
//! Lines that repeat on most pages near the top or bottom edge (running headers,
//! page numbers) are dropped.
//!
//! pdf-extract 0.9's `OutputDev` reports a character's size but not its font, so the
//! weight comes from a second, lighter walk of each page's content stream with lopdf
//! (`extract::string_weights`): the font of every text-showing string, matched to
//! pdf-extract's strings by order. Where the two walks disagree on a page (text in
//! form XObjects) that page has no weights, and its headings come from size alone.
//!
//! | module | job |
//! | --- | --- |
//! | `extract` | the text layer: characters with position, size and weight, per page |
//! | `lines` | characters into lines of cells |
//! | `furniture` | running headers, page numbers, contents and index entries dropped |
//! | `structure` | heading levels, list items, table rows, the typeset title, joining wrapped lines |
//! | `markdown` | the lines written as Markdown blocks ([`to_markdown`]) |
//! | `frontmatter` | the page file: title, frontmatter, a level-1 heading where needed |

mod extract;
mod frontmatter;
mod furniture;
mod lines;
mod markdown;
mod structure;

use std::path::{Path, PathBuf};

use lopdf::Document;

use kb_common::frontmatter::FrontmatterError;
use kb_common::slug::slugify;
use kb_common::write::{write_atomic, WriteError};

pub use extract::{Glyph, PageText};
pub use markdown::{to_markdown, Converted};

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
    #[error("{}: {source}", path.display())]
    Frontmatter {
        path: PathBuf,
        #[source]
        source: FrontmatterError,
    },
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
    let doc = load(path)?;
    let pages = extract::extract_pages(&doc).map_err(|m| damaged(path, m))?;
    if pages.iter().all(|p| p.glyphs.iter().all(|g| g.text.trim().is_empty())) {
        return Err(PdfError::NoText { path: path.clone() });
    }
    let converted = to_markdown(&pages);
    let info = frontmatter::info_strings(&doc);
    let title = frontmatter::title(opts, &info, &converted);
    let mut slug = slugify(&title);
    if slug.is_empty() {
        slug = "document".to_string();
    }
    let text = frontmatter::page_text(path, &title, &slug, &info, &converted)
        .map_err(|source| PdfError::Frontmatter { path: path.clone(), source })?;

    let written = opts.out.join(format!("{slug}.md"));
    write_atomic(&written, text.as_bytes())?;
    Ok(PdfSummary { written, title, pages: pages.len(), headings: converted.headings, tables: converted.tables })
}

/// Reads the file as a PDF that is neither damaged nor encrypted.
fn load(path: &Path) -> Result<Document, PdfError> {
    let bytes = std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => PdfError::Missing { path: path.to_path_buf() },
        _ => PdfError::Read { path: path.to_path_buf(), source },
    })?;
    // Checked before lopdf sees the bytes: its error for a text file is a parser
    // message that does not say what is wrong. The header may follow some junk.
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        let start: String = String::from_utf8_lossy(&bytes[..bytes.len().min(16)]).into_owned();
        return Err(PdfError::NotPdf { path: path.to_path_buf(), start });
    }
    let doc = Document::load_mem(&bytes).map_err(|e| damaged(path, e.to_string()))?;
    // Any /Encrypt in the trailer: lopdf's `is_encrypted` also needs the dictionary
    // to resolve, and a PDF whose encryption dictionary is broken is no more readable.
    if doc.trailer.get(b"Encrypt").is_ok() {
        return Err(PdfError::Encrypted { path: path.to_path_buf() });
    }
    Ok(doc)
}

fn damaged(path: &Path, message: String) -> PdfError {
    PdfError::Damaged { path: path.to_path_buf(), message }
}

#[cfg(test)]
mod tests {
    use super::frontmatter::pdf_date;
    use super::structure::list_item;

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
}
