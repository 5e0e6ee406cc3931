//! Where pages and folders go among their siblings, as the source's own tool
//! would put them:
//!
//! | source | read from | places |
//! | --- | --- | --- |
//! | MkDocs | `nav` of `mkdocs.yml` in the content folder or its parent | the pages it lists, in its order (a folder by its first page) |
//! | Docusaurus | `position` of a folder's `_category_.json` / `_category_.yml` | the folder |
//! | frontmatter | `sidebar_position`, `weight` (Hugo: on `_index.md`, the folder's), `nav_order` (Just the Docs), `order` | the page ([`crate::parse`] reads them) |
//!
//! MkDocs's order comes first (its `nav` is the whole navigation), then the
//! numbers; what nothing places follows, by title ([`crate::tree`]). A file
//! that cannot be read is a warning of the build, never its failure.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_norway::Value;

/// The files a folder's Docusaurus category may be written in.
pub const CATEGORY_FILES: [&str; 3] = ["_category_.json", "_category_.yml", "_category_.yaml"];

/// A source of order that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error("{path}: cannot read: {message}")]
    Read { path: String, message: String },
    #[error("{path}: not valid YAML ({message}); its order is not used")]
    Yaml { path: String, message: String },
    #[error("{path}: not valid JSON ({message}); its position is not used")]
    Json { path: String, message: String },
}

impl OrderError {
    /// The file that could not be read.
    pub fn file(&self) -> &str {
        match self {
            OrderError::Read { path, .. } | OrderError::Yaml { path, .. } | OrderError::Json { path, .. } => path,
        }
    }
}

/// What `mkdocs.yml` says: the pages of its `nav`, in order, and the site's name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MkDocs {
    /// Content-relative page path → place in the `nav`.
    positions: HashMap<String, usize>,
    /// `site_name`.
    pub site_name: Option<String>,
}

impl MkDocs {
    /// `mkdocs.yml` (or `.yaml`) in `content` or its parent, if there is one. Its
    /// `nav` names pages relative to its `docs_dir`: the content folder itself
    /// when the file sits in the parent, `content/<docs_dir>` when that folder
    /// exists beside the file.
    pub fn find(content: &Path) -> Result<Option<MkDocs>, OrderError> {
        let candidates = [content.to_path_buf(), content.parent().map(Path::to_path_buf).unwrap_or_default()];
        for (depth, dir) in candidates.iter().enumerate() {
            for name in ["mkdocs.yml", "mkdocs.yaml"] {
                let path = dir.join(name);
                if !path.is_file() {
                    continue;
                }
                let text = read(&path)?;
                let value: Value = serde_norway::from_str(&text)
                    .map_err(|e| OrderError::Yaml { path: path.display().to_string(), message: e.to_string() })?;
                let docs_dir = docs_dir(&value);
                let prefix =
                    if depth == 0 && content.join(&docs_dir).is_dir() { format!("{docs_dir}/") } else { String::new() };
                return Ok(Some(MkDocs::of(&value, &prefix)));
            }
        }
        Ok(None)
    }

    /// Reads the `nav` and `site_name` of a `mkdocs.yml`; `prefix` is the
    /// content-relative folder its pages are relative to (`""` or `docs/`).
    pub fn parse(yaml: &str, prefix: &str) -> Result<MkDocs, String> {
        let value: Value = serde_norway::from_str(yaml).map_err(|e| e.to_string())?;
        Ok(MkDocs::of(&value, prefix))
    }

    /// [`MkDocs::parse`] of a file already read as YAML.
    fn of(value: &Value, prefix: &str) -> MkDocs {
        let mut pages = Vec::new();
        if let Some(nav) = value.get("nav") {
            flatten_nav(nav, &mut pages, 0);
        }
        let mut positions = HashMap::new();
        for page in pages {
            let path = page.trim_start_matches("./");
            if path.contains("://") || path.starts_with('/') {
                continue; // a link to elsewhere, not a page of the folder
            }
            let n = positions.len();
            positions.entry(format!("{prefix}{path}")).or_insert(n);
        }
        let site_name = value.get("site_name").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        MkDocs { positions, site_name: site_name.map(str::to_string) }
    }

    /// The place of the page at `source` (content-relative) in the `nav`.
    pub fn position(&self, source: &str) -> Option<usize> {
        self.positions.get(source).copied()
    }
}

/// `docs_dir` of a `mkdocs.yml` (default `docs`).
fn docs_dir(value: &Value) -> String {
    value.get("docs_dir").and_then(Value::as_str).unwrap_or("docs").trim_matches('/').to_string()
}

/// The page paths of a `nav` (a list of `page.md`, `{Title: page.md}` and
/// `{Section: [...]}` entries), depth first.
fn flatten_nav(nav: &Value, out: &mut Vec<String>, depth: usize) {
    // MkDocs's own limit is far below; this only stops a hostile file.
    if depth > 32 {
        return;
    }
    match nav {
        Value::String(path) => out.push(path.trim().to_string()),
        Value::Sequence(items) => items.iter().for_each(|i| flatten_nav(i, out, depth + 1)),
        Value::Mapping(map) => map.values().for_each(|v| flatten_nav(v, out, depth + 1)),
        Value::Tagged(tagged) => flatten_nav(&tagged.value, out, depth + 1),
        _ => {}
    }
}

/// The `position` of a Docusaurus `_category_` file (`json`: JSON, else YAML).
pub fn category_position(text: &str, json: bool) -> Result<Option<f64>, String> {
    let number = |v: Option<&serde_json::Value>| v.and_then(serde_json::Value::as_f64);
    if json {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        return Ok(number(value.get("position")));
    }
    let value: Value = serde_norway::from_str(text).map_err(|e| e.to_string())?;
    Ok(value.get("position").and_then(Value::as_f64))
}

/// Every folder's category position: (content-relative folder, position), from
/// the category files among `files` (content-relative); and what could not be read.
pub fn categories<'a>(
    content: &Path,
    files: impl IntoIterator<Item = &'a String>,
) -> (Vec<(String, f64)>, Vec<OrderError>) {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    let mut files: Vec<&String> =
        files.into_iter().filter(|f| CATEGORY_FILES.contains(&f.rsplit('/').next().unwrap_or(f))).collect();
    files.sort();
    for file in files {
        let path: PathBuf = content.join(file);
        let dir = file.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let json = file.ends_with(".json");
        let position = read(&path).and_then(|text| {
            category_position(&text, json).map_err(|message| {
                let path = path.display().to_string();
                if json {
                    OrderError::Json { path, message }
                } else {
                    OrderError::Yaml { path, message }
                }
            })
        });
        match position {
            // A category file's folder is placed once, by its first file.
            Ok(Some(p)) if !found.iter().any(|(d, _)| d == &dir) => found.push((dir, p)),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    (found, errors)
}

fn read(path: &Path) -> Result<String, OrderError> {
    std::fs::read_to_string(path)
        .map_err(|e| OrderError::Read { path: path.display().to_string(), message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MKDOCS: &str = "site_name: Campus Help\ndocs_dir: docs\nmarkdown_extensions:\n  - pymdownx.emoji:\n      emoji_index: !!python/name:material.extensions.emoji.twemoji\nnav:\n  - index.md\n  - Getting started: start.md\n  - IT:\n    - it/index.md\n    - Wi-Fi: it/wifi.md\n    - VPN: ./it/vpn.md\n  - Status: https://status.example.edu/\n  - Accounts: accounts/index.md\n";

    #[test]
    fn mkdocs_nav_lists_pages_in_order() {
        let m = MkDocs::parse(MKDOCS, "").unwrap();
        let order: Vec<_> = ["index.md", "start.md", "it/index.md", "it/wifi.md", "it/vpn.md", "accounts/index.md"]
            .iter()
            .map(|p| m.position(p))
            .collect();
        assert_eq!(order, [Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)]);
        assert_eq!(m.position("it/other.md"), None);
        assert_eq!(m.site_name.as_deref(), Some("Campus Help"));
        let prefixed = MkDocs::parse(MKDOCS, "docs/").unwrap();
        assert_eq!(prefixed.position("docs/it/wifi.md"), Some(3));
        assert!(MkDocs::parse("nav: [unclosed", "").is_err());
        assert_eq!(MkDocs::parse("site_name: x\n", "").unwrap().position("index.md"), None);
    }

    #[test]
    fn mkdocs_yml_is_found_beside_or_above_the_content() {
        let dir = tempfile::tempdir().unwrap();
        let content = dir.path().join("docs");
        std::fs::create_dir_all(&content).unwrap();
        assert_eq!(MkDocs::find(&content).unwrap(), None);
        std::fs::write(dir.path().join("mkdocs.yml"), MKDOCS).unwrap();
        assert_eq!(MkDocs::find(&content).unwrap().unwrap().position("it/vpn.md"), Some(4));
        // In the content folder itself, with the pages in its docs_dir.
        std::fs::create_dir_all(content.join("docs")).unwrap();
        std::fs::write(content.join("mkdocs.yml"), MKDOCS).unwrap();
        assert_eq!(MkDocs::find(&content).unwrap().unwrap().position("docs/it/vpn.md"), Some(4));
        std::fs::write(content.join("mkdocs.yml"), "nav: [").unwrap();
        assert!(matches!(MkDocs::find(&content), Err(OrderError::Yaml { .. })));
    }

    #[test]
    fn category_files_place_their_folders() {
        assert_eq!(category_position("{\"label\": \"Guides\", \"position\": 3}", true), Ok(Some(3.0)));
        assert_eq!(category_position("label: Guides\nposition: 2.5\n", false), Ok(Some(2.5)));
        assert_eq!(category_position("label: Guides\n", false), Ok(None));
        assert!(category_position("{", true).is_err());
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("guides")).unwrap();
        std::fs::create_dir_all(dir.path().join("bad")).unwrap();
        std::fs::write(dir.path().join("guides/_category_.yml"), "position: 1\n").unwrap();
        std::fs::write(dir.path().join("bad/_category_.json"), "{").unwrap();
        let files = ["guides/_category_.yml".to_string(), "bad/_category_.json".into(), "guides/x.png".into()];
        let (found, errors) = categories(dir.path(), &files);
        assert_eq!(found, [("guides".to_string(), 1.0)]);
        assert!(matches!(errors.as_slice(), [OrderError::Json { .. }]), "{errors:?}");
    }
}
