//! Sitemaps (sitemaps.org 0.9) for `ingest web`: a `<urlset>` lists pages with
//! their `<lastmod>`, a `<sitemapindex>` lists further sitemaps. Elements are
//! matched by local name, so a missing or different namespace declaration (common
//! in generated sitemaps) does not matter; gzip-compressed files are read as well.

use std::io::Read as _;

/// One page a sitemap lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub loc: String,
    /// `YYYY-MM-DD…` as written (W3C datetime), when given.
    pub lastmod: Option<String>,
}

/// What a sitemap file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    Urls(Vec<Entry>),
    /// Locations of further sitemaps.
    Index(Vec<String>),
}

/// Why a sitemap could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    #[error("not a sitemap: {0}")]
    NotXml(String),
    #[error("the root element is <{0}>, not <urlset> or <sitemapindex>")]
    Root(String),
    #[error("cannot decompress the gzip sitemap: {0}")]
    Gzip(String),
}

/// Parses a sitemap or sitemap index (plain or gzip bytes).
pub fn parse(bytes: &[u8]) -> Result<Sitemap, SitemapError> {
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(bytes).read_to_string(&mut text).map_err(|e| SitemapError::Gzip(e.to_string()))?;
    } else {
        text = String::from_utf8_lossy(bytes).into_owned();
    }
    let doc = roxmltree::Document::parse(text.trim_start_matches('\u{feff}'))
        .map_err(|e| SitemapError::NotXml(e.to_string()))?;
    let root = doc.root_element();
    let child_text = |node: roxmltree::Node, name: &str| {
        node.children()
            .find(|c| c.is_element() && c.tag_name().name() == name)
            .and_then(|c| c.text())
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
    };
    let items = |name: &'static str| root.children().filter(move |c| c.is_element() && c.tag_name().name() == name);
    match root.tag_name().name() {
        "urlset" => Ok(Sitemap::Urls(
            items("url")
                .filter_map(|u| child_text(u, "loc").map(|loc| Entry { loc, lastmod: child_text(u, "lastmod") }))
                .collect(),
        )),
        "sitemapindex" => Ok(Sitemap::Index(items("sitemap").filter_map(|s| child_text(s, "loc")).collect())),
        other => Err(SitemapError::Root(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlset_and_index() {
        let set = br#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://help.example.edu/wifi/ </loc><lastmod>2026-03-01</lastmod></url>
  <url><loc>https://help.example.edu/vpn/</loc></url>
  <url><lastmod>2026-01-01</lastmod></url>
</urlset>"#;
        assert_eq!(
            parse(set).unwrap(),
            Sitemap::Urls(vec![
                Entry { loc: "https://help.example.edu/wifi/".into(), lastmod: Some("2026-03-01".into()) },
                Entry { loc: "https://help.example.edu/vpn/".into(), lastmod: None },
            ])
        );
        let index = b"<sitemapindex><sitemap><loc>https://h/a.xml</loc></sitemap><sitemap><loc>https://h/b.xml.gz</loc></sitemap></sitemapindex>";
        assert_eq!(parse(index).unwrap(), Sitemap::Index(vec!["https://h/a.xml".into(), "https://h/b.xml.gz".into()]));
    }

    #[test]
    fn gzip_is_read() {
        use std::io::Write as _;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(b"<urlset><url><loc>https://h/x</loc></url></urlset>").unwrap();
        let bytes = gz.finish().unwrap();
        assert_eq!(parse(&bytes).unwrap(), Sitemap::Urls(vec![Entry { loc: "https://h/x".into(), lastmod: None }]));
    }

    #[test]
    fn other_documents_are_refused_with_the_reason() {
        assert!(matches!(parse(b"<html><body>Not found</body></html>"), Err(SitemapError::Root(r)) if r == "html"));
        assert!(matches!(parse(b"User-agent: *"), Err(SitemapError::NotXml(_))));
        assert!(matches!(parse(&[0x1f, 0x8b, 0, 1, 2]), Err(SitemapError::Gzip(_))));
    }
}
