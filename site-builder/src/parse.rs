//! Parse stage: one Markdown file of the knowledge base → one [`Page`].
//!
//! A page's frontmatter is read in the schemas the tools that write knowledge
//! bases use, so that no page is lost for lacking one key:
//!
//! | what | keys (case-insensitive), first present wins | else |
//! | --- | --- | --- |
//! | title | `title` | the first `# heading`, else the file name |
//! | ancestors | `path` (`A / B / Page`), `parent` (the scraper's schema) | the folders (the build) |
//! | id | `page_id` | the path |
//! | summary | `description`, `MetaDescription`, `summary` | the first sentence (the build) |
//! | other names | `aliases` (Obsidian; a `/`-rooted one is an old address, as in Hugo) | |
//! | other addresses | `slug`, `permalink`, `url`, `/`-rooted `aliases` | |
//! | not published | `draft: true`, `publish: false` | |
//! | navigation order | `sidebar_position`, `weight`, `nav_order`, `order` | the title |
//!
//! plus `original_url`, `version`, `last_updated`, and any other keys kept as
//! metadata (`tags`). Everything that can be wrong with a file is a [`PageError`]
//! naming the file and, where there is one, the line: the build reports it and
//! skips the page.

use std::collections::BTreeMap;

use kb_common::frontmatter::{self, Frontmatter, Split};
use serde_json::Value;

use crate::fence::prose_lines;

/// A parsed page, before rendering and chunking.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// Path relative to the content folder, with `/` separators (`it/wifi.md`).
    pub source: String,
    /// Stable id: `page_id` from the frontmatter, else derived from `source`.
    pub id: String,
    pub title: String,
    /// Ancestor chain, root first, without the page's own title. `None` when the
    /// file did not say (no frontmatter): the build derives it from the folders.
    pub ancestors: Option<Vec<String>>,
    pub original_url: Option<String>,
    pub version: Option<String>,
    pub last_updated: Option<String>,
    /// Every other frontmatter key (e.g. `tags`), as JSON values.
    pub meta: BTreeMap<String, Value>,
    /// Other names the page goes by (Obsidian `aliases`): search matches them
    /// and wikilinks resolve them.
    pub aliases: Vec<String>,
    /// Other site-root addresses of the page (`slug`, `permalink`, Hugo's
    /// `aliases`), without their leading `/`: links to them resolve, and the
    /// site answers them with a redirect.
    pub addresses: Vec<String>,
    /// The author's summary (`description`, `MetaDescription`).
    pub description: Option<String>,
    /// `draft: true` or `publish: false`: read, reported, not published.
    pub draft: bool,
    /// Place among its siblings in the navigation (`sidebar_position`, `weight`,
    /// `nav_order`, `order`).
    pub order: Option<f64>,
    /// The Markdown after the frontmatter.
    pub body: String,
    /// 1-based line of the file on which `body` starts.
    pub body_line: usize,
}

/// Why a file could not become a page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("{file}: file is empty; write some Markdown or delete it")]
    Empty { file: String },
    #[error("{file}:{line}: not valid UTF-8 (byte {byte}); re-save the file as UTF-8")]
    NotUtf8 { file: String, line: usize, byte: usize },
    #[error("{file}:1: frontmatter starts with `---` but has no closing `---` line")]
    UnclosedFrontmatter { file: String },
    #[error("{file}:{line}: malformed YAML frontmatter: {message}")]
    BadYaml { file: String, line: usize, message: String },
    #[error("{file}:{line}: frontmatter must be a mapping of `key: value` lines")]
    FrontmatterNotMapping { file: String, line: usize },
    #[error("{file}:{line}: frontmatter key `{key}` must be a single value, not a list or mapping")]
    NotScalar { file: String, line: usize, key: String },
    #[error("{file}: page_id `{id}` is already used by {first}; page ids must be unique")]
    DuplicateId { file: String, id: String, first: String },
    #[error("{file}: could not read: {message}")]
    Io { file: String, message: String },
}

impl PageError {
    /// Short machine-readable name used in the build report.
    pub fn kind(&self) -> &'static str {
        match self {
            PageError::Empty { .. } => "empty_file",
            PageError::NotUtf8 { .. } => "not_utf8",
            PageError::UnclosedFrontmatter { .. } => "unclosed_frontmatter",
            PageError::BadYaml { .. } => "malformed_yaml",
            PageError::FrontmatterNotMapping { .. } => "frontmatter_not_mapping",
            PageError::NotScalar { .. } => "frontmatter_not_scalar",
            PageError::DuplicateId { .. } => "duplicate_page_id",
            PageError::Io { .. } => "io",
        }
    }

    /// The line the error points at, when it has one.
    pub fn line(&self) -> Option<usize> {
        match self {
            PageError::NotUtf8 { line, .. }
            | PageError::BadYaml { line, .. }
            | PageError::FrontmatterNotMapping { line, .. }
            | PageError::NotScalar { line, .. } => Some(*line),
            PageError::UnclosedFrontmatter { .. } => Some(1),
            _ => None,
        }
    }
}

/// Parses the bytes of the file at `source` (relative path, `/`-separated).
pub fn parse_page(source: &str, bytes: &[u8]) -> Result<Page, PageError> {
    let file = source.to_string();
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let byte = e.valid_up_to();
        let line = bytes[..byte].iter().filter(|&&b| b == b'\n').count() + 1;
        PageError::NotUtf8 { file: file.clone(), line, byte }
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // One kind of line end from here on. CommonMark ends a line at `\r\n`, `\n`
    // and a lone `\r` alike, while the line-based readers (MkDocs, fences,
    // chunking) split at `\n`; a lone `\r` made the two disagree on where a line
    // ends, so a heading could exist in one form of the page and not the other
    // (found by the `page` fuzz target: a chunk's anchor missing from its page).
    let normalized;
    let text = if text.contains('\r') {
        normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        normalized.as_str()
    } else {
        text
    };
    if text.trim().is_empty() {
        return Err(PageError::Empty { file });
    }

    let split = frontmatter::split(text).map_err(|_| PageError::UnclosedFrontmatter { file: file.clone() })?;
    let Some(Split { yaml, body, body_line }) = split else {
        return Ok(plain_page(source, text));
    };
    let bad_yaml = |e: serde_norway::Error| PageError::BadYaml {
        file: file.clone(),
        // The YAML starts on line 2 of the file, after the opening `---`.
        line: e.location().map_or(2, |l| l.line() + 1),
        message: yaml_message(&e),
    };
    let value: serde_norway::Value = serde_norway::from_str(yaml).map_err(bad_yaml)?;
    let map = match value {
        serde_norway::Value::Mapping(m) => m,
        serde_norway::Value::Null => serde_norway::Mapping::new(),
        _ => return Err(PageError::FrontmatterNotMapping { file, line: 2 }),
    };

    // The contract's keys (kb_common::frontmatter) are read through its type; the
    // rest are other tools' keys, kept as metadata for [`Identity`] and the pages.
    let mut known = serde_norway::Mapping::new();
    let mut meta = BTreeMap::new();
    for (k, v) in map {
        let key = match k {
            serde_norway::Value::String(s) => s,
            other => frontmatter::scalar_text(&other).unwrap_or_default(),
        };
        if !frontmatter::KEYS.contains(&key.as_str()) {
            meta.insert(key, serde_json::to_value(&v).unwrap_or(Value::Null));
        } else if frontmatter::is_single_value(&v) {
            known.insert(serde_norway::Value::String(key), v);
        } else {
            let line = key_line(yaml, &key).map_or(2, |l| l + 1);
            return Err(PageError::NotScalar { file, line, key });
        }
    }
    let fm: Frontmatter = serde_norway::from_value(serde_norway::Value::Mapping(known)).map_err(bad_yaml)?;

    let title = fm.title.unwrap_or_else(|| title_from_body_or_name(source, body));
    let ancestors = match (fm.path, fm.parent) {
        (Some(path), _) => {
            let mut chain: Vec<String> =
                path.split(" / ").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
            if chain.last() == Some(&title) {
                chain.pop();
            }
            Some(chain)
        }
        (None, Some(parent)) => Some(vec![parent]),
        (None, None) => None,
    };
    let identity = Identity::read(source, &meta);
    Ok(Page {
        id: fm.page_id.unwrap_or_else(|| id_from_path(source)),
        source: file,
        title,
        ancestors,
        original_url: fm.original_url,
        version: fm.version,
        last_updated: fm.last_updated,
        meta,
        aliases: identity.aliases,
        addresses: identity.addresses,
        description: identity.description,
        draft: identity.draft,
        order: identity.order,
        body: body.to_string(),
        body_line,
    })
}

/// What the tools' own frontmatter keys say about a page (see the module table).
#[derive(Debug, Default)]
struct Identity {
    aliases: Vec<String>,
    addresses: Vec<String>,
    description: Option<String>,
    draft: bool,
    order: Option<f64>,
}

impl Identity {
    fn read(source: &str, meta: &BTreeMap<String, Value>) -> Identity {
        let lower: BTreeMap<String, &Value> = meta.iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
        let first = |keys: &[&str]| keys.iter().find_map(|k| lower.get(*k).copied());
        let text = |v: &Value| match v {
            Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let mut id = Identity {
            description: first(&["description", "metadescription", "summary"]).and_then(text),
            draft: matches!(lower.get("draft"), Some(Value::Bool(true)))
                || matches!(lower.get("draft").and_then(|v| v.as_str()), Some("true" | "yes"))
                || matches!(lower.get("publish"), Some(Value::Bool(false))),
            order: first(&["sidebar_position", "weight", "nav_order", "order"]).and_then(|v| match v {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            }),
            ..Identity::default()
        };
        let names = |v: &Value| -> Vec<String> {
            match v {
                Value::Array(a) => a.iter().filter_map(text).collect(),
                other => text(other).into_iter().collect(),
            }
        };
        for alias in lower.get("aliases").map(|v| names(v)).unwrap_or_default() {
            // Hugo's `aliases` are old URLs (`/docs/old/`); Obsidian's are names.
            match alias.strip_prefix('/') {
                Some(address) => id.addresses.push(address.trim_end_matches('/').to_string()),
                None => id.aliases.push(alias),
            }
        }
        for key in ["slug", "permalink", "url"] {
            if let Some(address) = lower.get(key).and_then(|v| text(v)) {
                let address = address.trim_matches('/').to_string();
                if !address.is_empty() && !address.contains("://") {
                    id.addresses.push(address);
                }
            }
        }
        // Docusaurus names a doc's address by its `id` (in its folder) when it
        // sets no `slug`; other schemas use `id` for database keys, so only MDX.
        let mdx = source.to_ascii_lowercase().ends_with(".mdx");
        if let Some(doc_id) = lower.get("id").and_then(|v| text(v)).filter(|_| mdx && !lower.contains_key("slug")) {
            let dir = source.rsplit_once('/').map_or("", |(d, _)| d);
            id.addresses.push(if dir.is_empty() { doc_id } else { format!("{dir}/{doc_id}") });
        }
        id
    }
}

/// A page's title when its frontmatter names none: the first H1, else the file name.
fn title_from_body_or_name(source: &str, body: &str) -> String {
    first_h1(body).unwrap_or_else(|| title_from_file_name(source))
}

/// A page without frontmatter: title from the first H1, else the file name.
fn plain_page(source: &str, text: &str) -> Page {
    let title = title_from_body_or_name(source, text);
    Page {
        source: source.to_string(),
        id: id_from_path(source),
        title,
        ancestors: None,
        original_url: None,
        version: None,
        last_updated: None,
        meta: BTreeMap::new(),
        aliases: Vec::new(),
        addresses: Vec::new(),
        description: None,
        draft: false,
        order: None,
        body: text.to_string(),
        body_line: 1,
    }
}

/// Text of the first ATX `# ` heading outside fenced code.
fn first_h1(text: &str) -> Option<String> {
    for line in prose_lines(text) {
        if let Some(h) = line.strip_prefix("# ") {
            let h = strip_heading_attrs(h.trim().trim_end_matches('#').trim());
            if !h.is_empty() {
                return Some(h.to_string());
            }
        }
    }
    None
}

/// Removes a trailing `{ #id .class }` attribute list from a heading's text.
pub fn strip_heading_attrs(h: &str) -> &str {
    if h.ends_with('}') {
        if let Some(open) = h.rfind('{') {
            return h[..open].trim_end();
        }
    }
    h
}

/// `it-services/vpn-setup.md` → `Vpn setup`.
fn title_from_file_name(source: &str) -> String {
    let stem = source.rsplit('/').next().unwrap_or(source);
    let stem = strip_page_extension(stem);
    let words = stem.replace(['-', '_'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => source.to_string(),
    }
}

/// `it-services/vpn.md` → `it-services-vpn`; stable as long as the file keeps its path.
pub fn id_from_path(source: &str) -> String {
    let stem = strip_page_extension(source);
    stem.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' })
        .collect()
}

/// The extensions a page file may have (`.md`, `.markdown`, `.mdx`), any case.
pub const PAGE_EXTENSIONS: [&str; 3] = [".md", ".markdown", ".mdx"];

/// `a/b.mdx` → `a/b`; a path without a page extension is returned as it is.
pub fn strip_page_extension(path: &str) -> &str {
    let lower = path.to_ascii_lowercase();
    PAGE_EXTENSIONS.iter().find(|e| lower.ends_with(*e)).map_or(path, |e| &path[..path.len() - e.len()])
}

/// Whether a file is a page by its name.
pub fn is_page_file(path: &str) -> bool {
    strip_page_extension(path).len() < path.len()
}

/// 1-based line within the YAML where `key:` is defined.
fn key_line(yaml: &str, key: &str) -> Option<usize> {
    yaml.lines().position(|l| l.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with(':'))).map(|i| i + 1)
}

/// serde's message without its own " at line X column Y" (we give the file's line).
fn yaml_message(e: &serde_norway::Error) -> String {
    let msg = e.to_string();
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRAPED: &str = "---\ntitle: Wi-Fi\nparent: IT\npath: Help / IT / Wi-Fi\noriginal_url: https://x.example/wifi\npage_id: '123'\nversion: 4\nlast_updated: '2026-01-02'\ntags:\n- network\n---\n# Wi-Fi\n\nBody.\n";

    #[test]
    fn scraped_frontmatter_is_read() {
        let p = parse_page("it/wifi.md", SCRAPED.as_bytes()).unwrap();
        assert_eq!(p.id, "123");
        assert_eq!(p.title, "Wi-Fi");
        assert_eq!(p.ancestors, Some(vec!["Help".to_string(), "IT".to_string()]));
        assert_eq!(p.version.as_deref(), Some("4"));
        assert_eq!(p.last_updated.as_deref(), Some("2026-01-02"));
        assert_eq!(p.original_url.as_deref(), Some("https://x.example/wifi"));
        assert_eq!(p.meta["tags"], serde_json::json!(["network"]));
        assert!(p.body.starts_with("# Wi-Fi"));
        assert_eq!(p.body_line, 12);
    }

    #[test]
    fn every_kind_of_line_end_becomes_one() {
        // Windows files, and a lone carriage return (old Mac files, some CMS
        // exports): line numbers and body agree with what CommonMark sees.
        let windows = SCRAPED.replace('\n', "\r\n");
        let p = parse_page("it/wifi.md", windows.as_bytes()).unwrap();
        assert_eq!((p.title.as_str(), p.body_line), ("Wi-Fi", 12));
        assert!(!p.body.contains('\r'), "{:?}", p.body);
        let p = parse_page("a.md", b"---\rtitle: Mac\r---\r# Mac\rBody\r").unwrap();
        assert_eq!((p.title.as_str(), p.body.as_str(), p.body_line), ("Mac", "# Mac\nBody\n", 4));
    }

    #[test]
    fn plain_page_takes_h1_then_file_name() {
        let p = parse_page("it/vpn-setup.md", b"Intro\n\n```\n# not this\n```\n# VPN setup {#top}\n").unwrap();
        assert_eq!(p.title, "VPN setup");
        assert_eq!(p.id, "it-vpn-setup");
        assert_eq!(p.ancestors, None);
        let p = parse_page("it/vpn-setup.md", b"no heading here\n").unwrap();
        assert_eq!(p.title, "Vpn setup");
    }

    #[test]
    fn bad_yaml_names_the_file_line() {
        let err = parse_page("a.md", b"---\ntitle: ok\nparent: [unclosed\n---\nbody\n").unwrap_err();
        assert_eq!(err.kind(), "malformed_yaml");
        let msg = err.to_string();
        assert!(msg.starts_with("a.md:"), "{msg}");
        assert!(matches!(err.line(), Some(3..=5)), "{msg}");
    }

    #[test]
    fn every_bad_input_is_a_typed_error() {
        let cases: [(&[u8], &str, Option<usize>); 5] = [
            (b"", "empty_file", None),
            (b"  \n\n", "empty_file", None),
            (b"---\ntitle: x\nbody without end\n", "unclosed_frontmatter", Some(1)),
            (b"---\n- a\n- b\n---\nbody\n", "frontmatter_not_mapping", Some(2)),
            (b"---\ntitle: x\nversion: [1, 2]\n---\n", "frontmatter_not_scalar", Some(3)),
        ];
        for (bytes, kind, line) in cases {
            let err = parse_page("p.md", bytes).unwrap_err();
            assert_eq!(err.kind(), kind, "{err}");
            assert_eq!(err.line(), line, "{err}");
            assert!(err.to_string().starts_with("p.md"), "{err}");
        }
    }

    #[test]
    fn non_utf8_reports_line() {
        let err = parse_page("p.md", b"# T\nok\nbad \xff here\n").unwrap_err();
        assert_eq!(err, PageError::NotUtf8 { file: "p.md".into(), line: 3, byte: 11 });
    }

    #[test]
    fn a_page_is_never_lost_for_lacking_a_title() {
        let p =
            parse_page("guide/setup.mdx", b"---\nslug: /setup\nsidebar_position: 2\n---\n# Set up {#setup}\n\nText\n")
                .unwrap();
        assert_eq!(
            (p.title.as_str(), p.addresses.as_slice(), p.order),
            ("Set up", &["setup".to_string()][..], Some(2.0))
        );
        assert_eq!(p.id, "guide-setup");
        let p = parse_page("features/Docker Support.md", b"---\ntags: [x]\n---\nNo heading.\n").unwrap();
        assert_eq!(p.title, "Docker Support");
        let p = parse_page("a.md", b"---\nparent: y\n---\nbody\n").unwrap();
        assert_eq!(p.title, "A");
    }

    #[test]
    fn the_tools_own_keys_are_read() {
        let md = b"---\nMetaDescription: Learn the editor.\naliases: [Quick start, /docs/old/]\ndraft: true\nweight: 30\n---\nx\n";
        let p = parse_page("a.md", md).unwrap();
        assert_eq!(p.description.as_deref(), Some("Learn the editor."));
        assert_eq!(p.aliases, vec!["Quick start".to_string()]);
        assert_eq!(p.addresses, vec!["docs/old".to_string()]);
        assert!(p.draft);
        assert_eq!(p.order, Some(30.0));
        // Just the Docs' `nav_order` and the plain `order` place a page too.
        assert_eq!(parse_page("a.md", b"---\nnav_order: 3\n---\nx\n").unwrap().order, Some(3.0));
        assert_eq!(parse_page("a.md", b"---\norder: '1.5'\n---\nx\n").unwrap().order, Some(1.5));
        assert!(parse_page("a.md", b"---\npublish: false\n---\nx\n").unwrap().draft);
        let doc = parse_page("guides/a.mdx", b"---\nid: intro\n---\nx\n").unwrap();
        assert_eq!(doc.addresses, vec!["guides/intro".to_string()]);
        assert!(parse_page("guides/a.md", b"---\nid: 42\n---\nx\n").unwrap().addresses.is_empty());
        assert!(!parse_page("a.md", b"---\ndraft: false\n---\nx\n").unwrap().draft);
        assert_eq!(strip_page_extension("a/B.MDX"), "a/B");
        assert!(is_page_file("x.markdown") && !is_page_file("x.png"));
    }

    #[test]
    fn path_without_own_title_is_kept_whole() {
        let p = parse_page("x.md", b"---\ntitle: X\npath: A / B\n---\n").unwrap();
        assert_eq!(p.ancestors, Some(vec!["A".into(), "B".into()]));
        let p = parse_page("x.md", b"---\ntitle: X\nparent: P\n---\n").unwrap();
        assert_eq!(p.ancestors, Some(vec!["P".into()]));
    }
}

/// Pages for the other stages' tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::Page;

    /// A page at `source` with `body` and nothing else said.
    pub(crate) fn page(source: &str, body: &str) -> Page {
        Page {
            source: source.into(),
            id: source.into(),
            title: source.into(),
            ancestors: None,
            original_url: None,
            version: None,
            last_updated: None,
            meta: Default::default(),
            aliases: Vec::new(),
            addresses: Vec::new(),
            description: None,
            draft: false,
            order: None,
            body: body.into(),
            body_line: 1,
        }
    }
}
