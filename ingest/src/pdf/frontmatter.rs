//! The page file: its title, its frontmatter (from the options and the PDF's Info
//! dictionary) and a level-1 heading where the Markdown needs one.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use kb_common::frontmatter::{Frontmatter, FrontmatterError};
use lopdf::{Document, Object};

use super::{Converted, PdfOptions};

/// The page title: the option, else the PDF's Info /Title, else the largest text
/// of the first page, else the first `#` heading, else the file stem.
pub(super) fn title(opts: &PdfOptions, info: &HashMap<String, String>, converted: &Converted) -> String {
    let stem = opts.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    // An empty /Title is common (LaTeX without hyperref's pdftitle); the largest
    // text on the first page is then the title, not the first heading, which may be
    // an author line or a running header.
    [
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
    .unwrap_or_else(|| "document".to_string())
}

/// The text of the page file for the PDF at `path`: frontmatter, a `# title` where
/// the Markdown needs one, then the Markdown.
pub(super) fn page_text(
    path: &Path,
    title: &str,
    slug: &str,
    info: &HashMap<String, String>,
    converted: &Converted,
) -> Result<String, FrontmatterError> {
    let date = ["ModDate", "CreationDate"].iter().find_map(|k| info.get(*k).and_then(|d| pdf_date(d)));
    let source_file = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();

    let fm = Frontmatter {
        title: Some(title.to_string()),
        page_id: Some(slug.to_string()),
        source_file: Some(source_file),
        path: Some(title.to_string()),
        last_updated: date.map(|d| d.to_string()),
        version: Some("1".into()),
        ..Frontmatter::default()
    };
    let mut body = String::new();
    // The build chunks at H1/H2; a document without any H1 gets the title as one so
    // that its first chunk has a heading, and so does one whose typeset title was
    // dropped with the running headers that repeat it.
    let title_dropped = converted
        .typeset_title
        .as_deref()
        .is_some_and(|t| t == title && !converted.markdown.lines().any(|l| l.trim_start_matches('#').trim() == t));
    if converted.first_h1.is_none() || title_dropped {
        let _ = writeln!(body, "# {}\n", title);
    }
    body.push_str(&converted.markdown);
    fm.page_file(&body)
}

/// The date of a PDF date string (ISO 32000 §7.9.4: `D:YYYYMMDDHHmmSSOHH'mm'`,
/// where everything after the year is optional and defaults to the first month and
/// day). Only the calendar date is kept, as the writer's clock showed it; `None`
/// when there is no valid date (month 13, 30 February, or not digits).
pub(super) fn pdf_date(d: &str) -> Option<time::Date> {
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
pub(super) fn info_strings(doc: &Document) -> HashMap<String, String> {
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
