//! The chunk record: the unit that is indexed, searched and cited.
//!
//! `site-builder build` writes the chunk set to `OUT/chunks.jsonl`, one JSON object
//! per line, in page order then chunk order (the build indexes the chunks in
//! memory; `embed-bench`, the examples and the tests read the file back). This
//! module is the one owner of that format: [`encode_jsonl`] and [`decode_jsonl`] are
//! the only writer and reader, and [`CHUNKS_FORMAT_VERSION`] is bumped whenever a
//! field changes meaning.

use serde::{Deserialize, Serialize};

/// Version of the `chunks.jsonl` record layout. Stored in the build report.
pub const CHUNKS_FORMAT_VERSION: u32 = 1;

/// One retrievable piece of a page.
///
/// `text` is what a result displays (the original Markdown body of the section,
/// headers included); `index_text` is what is embedded and put into BM25 (a short
/// header block naming the source, header trail, version and date, then `text`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// `{page_id}_chunk_{n}`; deterministic for a given page and settings.
    pub id: String,
    /// The page this chunk belongs to.
    pub page_id: String,
    /// Position of the chunk within its page, from 0, before filtering.
    pub n: u32,
    /// Title of the page.
    pub title: String,
    /// Other names of the page (Obsidian `aliases`): indexed with the title.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Ancestor chain of the page, root first, the page's own title last.
    pub path: Vec<String>,
    /// Header trail of the section (`H1 > H2`), empty for text before any header.
    pub headers: Vec<String>,
    /// URL of the built page relative to the site root, e.g. `campus/parking.html`.
    pub url: String,
    /// Heading id of the section within the page (`url#anchor`); empty for the top.
    pub anchor: String,
    /// Page version from the frontmatter, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Last-updated date from the frontmatter, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    /// The page's language, a BCP 47 tag (`de`, `zh-cn`); absent in the file
    /// for English (and in chunk sets written before languages).
    #[serde(default = "english", skip_serializing_if = "is_english")]
    pub lang: String,
    /// The languages this chunk's page stands in for: a page in the knowledge
    /// base's main language with no translation into them, which a search in
    /// one of them shows as a translated site shows the untranslated page in
    /// its main language (Docusaurus and Hugo fall back so). Only languages
    /// the site is translated into (some page of them has a translation);
    /// sorted; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stands_in: Vec<String>,
    /// Display text: the original Markdown of the section part.
    pub text: String,
    /// Enriched text that is indexed and embedded.
    pub index_text: String,
}

fn english() -> String {
    "en".into()
}

fn is_english(tag: &str) -> bool {
    tag == "en"
}

impl Chunk {
    /// The canonical id of chunk `n` of page `page_id`.
    pub fn make_id(page_id: &str, n: u32) -> String {
        format!("{page_id}_chunk_{n}")
    }

    /// `url#anchor`, or `url` for the top of the page.
    pub fn link(&self) -> String {
        if self.anchor.is_empty() {
            self.url.clone()
        } else {
            format!("{}#{}", self.url, self.anchor)
        }
    }
}

/// A line of `chunks.jsonl` that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("chunks.jsonl line {line}: {source}; rebuild the chunk set with `site-builder build`")]
pub struct DecodeError {
    /// 1-based line number.
    pub line: usize,
    #[source]
    pub source: serde_json::Error,
}

/// Serialises chunks as JSON Lines (one object per line, `\n` terminated).
pub fn encode_jsonl(chunks: &[Chunk]) -> String {
    let mut out = String::new();
    for chunk in chunks {
        // A struct of strings and vectors cannot fail to serialise.
        out.push_str(&serde_json::to_string(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Parses JSON Lines produced by [`encode_jsonl`]; blank lines are ignored.
pub fn decode_jsonl(text: &str) -> Result<Vec<Chunk>, DecodeError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|source| DecodeError { line: i + 1, source }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: u32) -> Chunk {
        Chunk {
            id: Chunk::make_id("42", n),
            page_id: "42".into(),
            n,
            title: "Wi-Fi".into(),
            aliases: Vec::new(),
            path: vec!["Help".into(), "Wi-Fi".into()],
            headers: vec!["Wi-Fi".into(), "Set up \"eduroam\"".into()],
            url: "it/wifi.html".into(),
            anchor: "set-up-eduroam".into(),
            version: Some("3".into()),
            last_updated: None,
            lang: "en".into(),
            stands_in: Vec::new(),
            text: "## Set up\nline\n".into(),
            index_text: "Source: Help / Wi-Fi\n\n## Set up\nline\n".into(),
        }
    }

    #[test]
    fn jsonl_round_trips() {
        let chunks = vec![sample(0), sample(1)];
        let text = encode_jsonl(&chunks);
        assert_eq!(text.lines().count(), 2);
        assert_eq!(decode_jsonl(&text).unwrap(), chunks);
    }

    #[test]
    fn decode_names_the_bad_line() {
        let mut text = encode_jsonl(&[sample(0)]);
        text.push_str("{not json\n");
        let err = decode_jsonl(&text).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.to_string().contains("line 2"));
    }

    #[test]
    fn link_adds_anchor_only_when_present() {
        let mut c = sample(0);
        assert_eq!(c.link(), "it/wifi.html#set-up-eduroam");
        c.anchor.clear();
        assert_eq!(c.link(), "it/wifi.html");
    }
}
