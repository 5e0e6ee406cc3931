//! Tag pages: one listing per tag the pages carry (`tags/<tag>.html`), as Quartz
//! and Obsidian Publish generate them, so that the links authors write to them
//! (`[[tags/plugin/transformer]]`) lead somewhere. A page tagged `plugin/emitter`
//! is listed under `plugin/emitter` and under `plugin`, as Quartz nests tags. A
//! tag that has a page of its own (`tags/plugin.md`, a description) keeps it.

use std::collections::{BTreeMap, HashSet};

use crate::parse::Page;

/// The tags of a page (`tags: [a, b]` or `tags: a`), trimmed, `#` removed.
pub fn of(page: &Page) -> Vec<String> {
    let raw: Vec<&str> = match page.meta.get("tags") {
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).collect(),
        Some(serde_json::Value::String(s)) => s.split(',').collect(),
        _ => Vec::new(),
    };
    raw.into_iter()
        .map(|t| t.trim().trim_start_matches('#').trim_matches('/').to_string())
        .filter(|t| usable(t))
        .collect()
}

/// Whether a tag can name a file: no empty or dot segments, no characters a
/// path or URL treats specially.
fn usable(tag: &str) -> bool {
    !tag.is_empty()
        && tag.split('/').all(|s| !s.is_empty() && s != "." && s != "..")
        && !tag.chars().any(|c| c.is_control() || "\\?#%\"<>|*:".contains(c))
}

/// The content path a tag's page stands at (`tags/plugin/emitter.md`).
pub fn source(tag: &str) -> String {
    format!("tags/{tag}.md")
}

/// Every tag (with its parents) → the indices of the pages it lists.
pub fn listings(pages: &[&Page]) -> BTreeMap<String, Vec<usize>> {
    let mut map: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, page) in pages.iter().enumerate() {
        let mut seen = HashSet::new();
        for tag in of(page) {
            let mut prefix = String::new();
            for part in tag.split('/') {
                if !prefix.is_empty() {
                    prefix.push('/');
                }
                prefix.push_str(part);
                if seen.insert(prefix.clone()) {
                    map.entry(prefix.clone()).or_default().push(i);
                }
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(tags: serde_json::Value) -> Page {
        let mut p = crate::parse::parse_page("a.md", b"# A\n").unwrap();
        p.meta.insert("tags".into(), tags);
        p
    }

    #[test]
    fn tags_nest_and_odd_ones_are_left_out() {
        let a = page(serde_json::json!(["plugin/emitter", "#component", "../x", ""]));
        let b = page(serde_json::json!("plugin"));
        let map = listings(&[&a, &b]);
        assert_eq!(map.keys().collect::<Vec<_>>(), ["component", "plugin", "plugin/emitter"]);
        assert_eq!(map["plugin"], vec![0, 1]);
        assert_eq!(source("plugin/emitter"), "tags/plugin/emitter.md");
    }
}
