//! The frontmatter contract between ingestion and the build: the keys a page
//! written by `ingest` carries (the scraper's schema, which `content/` uses too),
//! as one serde type. Every ingest source (Confluence, a website, PDF) writes its
//! pages through [`Frontmatter::page_file`]; the build's parse stage splits a file
//! with [`split`] and reads these keys through the same type, so a key renamed here
//! is renamed for both sides.
//!
//! The build also reads the keys other tools write (`description`, `aliases`,
//! `weight`, …); those are theirs, not this contract's, and stay the parse stage's.
//!
//! Reading is lenient the way YAML authors expect: any single value is taken as
//! text (`version: 4` and `version: '4'` alike, `page_id: 123`), surrounding space
//! is trimmed and an empty value is no value; a list or mapping under one of these
//! keys is an error ([`is_single_value`] lets a reader say on which line).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The keys of [`Frontmatter`], in the order they are written.
pub const KEYS: [&str; 8] =
    ["title", "parent", "path", "original_url", "page_id", "source_file", "version", "last_updated"];

/// The frontmatter of a page that `ingest` writes and the build reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frontmatter {
    /// The page's title (also its `#` heading).
    #[serde(default, deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The title of the page's parent in the source's tree.
    #[serde(default, deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The breadcrumb, root first, ending with the page: `Home / Network / Wi-Fi`.
    #[serde(default, deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Where the page was read from (its address on the source).
    #[serde(default, deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub original_url: Option<String>,
    /// The source's stable id of the page.
    #[serde(default, deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub page_id: Option<String>,
    /// The file the page was converted from (a PDF's name).
    #[serde(default, deserialize_with = "text", skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    /// The source's version number of the page; written as a YAML number when it
    /// is one.
    #[serde(default, deserialize_with = "text", serialize_with = "number_or_text")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The day the page last changed, `YYYY-MM-DD`; written quoted (see
    /// [`Frontmatter::page_file`]).
    #[serde(default, deserialize_with = "text", skip_serializing)]
    pub last_updated: Option<String>,
}

/// Why a page file's frontmatter could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum FrontmatterError {
    #[error("cannot write the frontmatter: {0}")]
    Write(serde_norway::Error),
    #[error(transparent)]
    Unclosed(#[from] Unclosed),
    #[error("malformed YAML frontmatter: {0}")]
    Read(serde_norway::Error),
}

/// A file's text cut at its frontmatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The YAML between the fences (it starts on line 2 of the file).
    pub yaml: &'a str,
    /// Everything after the closing fence.
    pub body: &'a str,
    /// 1-based line of the file on which `body` starts.
    pub body_line: usize,
}

/// The frontmatter opens with `---` but no line closes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("frontmatter starts with `---` but has no closing `---` line")]
pub struct Unclosed;

impl Frontmatter {
    /// The text of a page file: this frontmatter between `---` fences, a blank
    /// line, then `body`.
    pub fn page_file(&self, body: &str) -> Result<String, FrontmatterError> {
        let yaml = serde_norway::to_string(self).map_err(FrontmatterError::Write)?;
        // Quoted, as the pages in content/ have it, so that no YAML reader takes
        // it for a date object (YAML 1.1 readers such as PyYAML would).
        let date_line = match &self.last_updated {
            Some(d) => format!("last_updated: '{}'\n", d.replace('\'', "''")),
            None => String::new(),
        };
        Ok(format!("---\n{yaml}{date_line}---\n\n{body}"))
    }

    /// The frontmatter of a page file's text (none when it has none).
    pub fn of_page(text: &str) -> Result<Option<Frontmatter>, FrontmatterError> {
        match split(text)? {
            Some(s) => serde_norway::from_str(s.yaml).map(Some).map_err(FrontmatterError::Read),
            None => Ok(None),
        }
    }
}

/// Cuts `---\n yaml \n---\n body` (the closing fence may also be `...`);
/// `Ok(None)` when the text has no frontmatter.
pub fn split(text: &str) -> Result<Option<Split<'_>>, Unclosed> {
    let Some(rest) = text.strip_prefix("---").filter(|r| r.starts_with('\n') || r.starts_with("\r\n")) else {
        return Ok(None);
    };
    let rest = rest.trim_start_matches('\r').strip_prefix('\n').unwrap_or(rest);
    let mut offset = 0;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            // Line 1 is the opening fence, YAML lines follow, then the closing fence.
            return Ok(Some(Split { yaml, body, body_line: i + 3 }));
        }
        offset += line.len();
    }
    Err(Unclosed)
}

/// Whether `v` can be read as the text of one of these keys: a string, number,
/// boolean, null, or such a value under a tag.
pub fn is_single_value(v: &serde_norway::Value) -> bool {
    matches!(v, serde_norway::Value::Null) || scalar_text(v).is_some()
}

/// A single value as text; `None` for a list or mapping (and null).
pub fn scalar_text(v: &serde_norway::Value) -> Option<String> {
    match v {
        serde_norway::Value::String(s) => Some(s.clone()),
        serde_norway::Value::Number(n) => Some(n.to_string()),
        serde_norway::Value::Bool(b) => Some(b.to_string()),
        serde_norway::Value::Tagged(t) => scalar_text(&t.value),
        _ => None,
    }
}

/// Reads any single value as trimmed text, empty as none.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = serde_norway::Value::deserialize(d)?;
    if !is_single_value(&v) {
        return Err(serde::de::Error::custom("must be a single value, not a list or mapping"));
    }
    Ok(scalar_text(&v).map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
}

/// `version: 4` rather than `version: '4'` when the text is a whole number.
fn number_or_text<S: Serializer>(v: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match v.as_deref().map(|t| (t, t.parse::<u64>())) {
        Some((_, Ok(n))) => s.serialize_u64(n),
        Some((t, Err(_))) => s.serialize_str(t),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scraped() -> Frontmatter {
        Frontmatter {
            title: Some("It's Wi-Fi: the guide".into()),
            parent: Some("Network".into()),
            path: Some("Home / Network / It's Wi-Fi: the guide".into()),
            original_url: Some("https://help.example/wifi/".into()),
            page_id: Some("123".into()),
            source_file: None,
            version: Some("4".into()),
            last_updated: Some("2026-03-01".into()),
        }
    }

    #[test]
    fn a_written_page_reads_back_the_same() {
        let fm = scraped();
        let file = fm.page_file("# It's Wi-Fi: the guide\n\nBody.\n").unwrap();
        assert!(file.contains("\nversion: 4\n"), "a number stays a number: {file}");
        assert!(file.contains("\nlast_updated: '2026-03-01'\n"), "{file}");
        assert!(file.contains("\npage_id: '123'\n"), "an id that looks like a number stays text: {file}");
        assert!(!file.contains("source_file"), "an absent key is not written: {file}");
        let s = split(&file).unwrap().unwrap();
        assert_eq!(s.body, "\n# It's Wi-Fi: the guide\n\nBody.\n");
        assert_eq!(Frontmatter::of_page(&file).unwrap(), Some(fm));
    }

    #[test]
    fn keys_lists_the_fields_in_writing_order() {
        let mut fm = scraped();
        fm.source_file = Some("wifi.pdf".into());
        let file = fm.page_file("").unwrap();
        let written: Vec<&str> =
            file.lines().filter_map(|l| l.split_once(':').map(|(k, _)| k)).filter(|k| !k.starts_with(' ')).collect();
        assert_eq!(written, KEYS);
    }

    #[test]
    fn reading_is_lenient_about_single_values() {
        let fm: Frontmatter =
            serde_norway::from_str("title: '  Spaced  '\nversion: 1.0\npage_id: 7\nparent: ''\npath: ~\ntags: [a]\n")
                .unwrap();
        assert_eq!(fm.title.as_deref(), Some("Spaced"));
        assert_eq!(fm.version.as_deref(), Some("1.0"), "the number as written");
        assert_eq!(fm.page_id.as_deref(), Some("7"));
        assert_eq!((fm.parent, fm.path), (None, None), "empty and null are no value");
        let err = serde_norway::from_str::<Frontmatter>("title: [a, b]\n").unwrap_err();
        assert!(err.to_string().contains("must be a single value"), "{err}");
    }

    #[test]
    fn split_finds_the_fences_and_the_body_line() {
        assert_eq!(split("# No frontmatter\n").unwrap(), None);
        let s = split("---\ntitle: A\n...\nBody\n").unwrap().unwrap();
        assert_eq!((s.yaml, s.body, s.body_line), ("title: A\n", "Body\n", 4));
        assert_eq!(split("---\ntitle: A\nBody\n"), Err(Unclosed));
    }
}
