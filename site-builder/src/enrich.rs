//! Enrich stage: the text that is indexed and embedded for a chunk.
//!
//! The advising paper prepends a short header block to every chunk before it is
//! embedded, so that a section about "Fees" still says which service it belongs to:
//! `Source path`, `Headers a > b`, `Version`, `Last updated`, then the body. The
//! original body stays what a result displays. A page's other names (Obsidian
//! `aliases`) follow the source as `Also known as`, so the dense side matches a
//! question that uses one (BM25 weighs them with the title).

/// Builds the indexed text of a chunk. Absent values are left out, not printed empty.
pub fn index_text(
    path: &[String],
    aliases: &[String],
    headers: &[String],
    version: Option<&str>,
    last_updated: Option<&str>,
    body: &str,
) -> String {
    let mut out = String::with_capacity(body.len() + 160);
    if !path.is_empty() {
        out.push_str("Source: ");
        out.push_str(&path.join(" / "));
        out.push('\n');
    }
    if !aliases.is_empty() {
        out.push_str("Also known as: ");
        out.push_str(&aliases.join(", "));
        out.push('\n');
    }
    if !headers.is_empty() {
        out.push_str("Headers: ");
        out.push_str(&headers.join(" > "));
        out.push('\n');
    }
    if let Some(v) = version {
        out.push_str("Version: ");
        out.push_str(v);
        out.push('\n');
    }
    if let Some(d) = last_updated {
        out.push_str("Last updated: ");
        out.push_str(d);
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_block_then_body() {
        let t = index_text(
            &["Help".into(), "Parking".into()],
            &["Permits".into()],
            &["Parking".into(), "Prices".into()],
            Some("7"),
            Some("2026-08-14"),
            "## Prices\n\n$90",
        );
        assert_eq!(t, "Source: Help / Parking\nAlso known as: Permits\nHeaders: Parking > Prices\nVersion: 7\nLast updated: 2026-08-14\n\n## Prices\n\n$90");
    }

    #[test]
    fn missing_values_are_omitted() {
        assert_eq!(index_text(&[], &[], &[], None, None, "body"), "body");
        assert_eq!(
            index_text(&["A".into()], &[], &[], None, Some("2026-01-01"), "b"),
            "Source: A\nLast updated: 2026-01-01\n\nb"
        );
    }
}
