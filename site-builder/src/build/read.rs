//! Reading the content folder: the page files found (Markdown and MDX, MDX
//! partials left out), each parsed into a page or a skip with its reason.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use kb_common::safe_url;

use crate::parse::{is_page_file, parse_page, Page, PageError};
use crate::report::{BlockedUrl, Report, Skipped, Unpublished};

/// Parses every page file; a bad one is skipped and reported, a draft or MDX
/// partial is set aside and reported, a duplicate id is skipped.
pub(super) fn read_pages(content: &Path, sources: &[String], report: &mut Report) -> Vec<Page> {
    let mut pages: Vec<Page> = Vec::with_capacity(sources.len());
    let mut ids: HashMap<String, String> = HashMap::new();
    for source in sources {
        if is_mdx_partial(source) {
            report.unpublished.push(Unpublished { file: source.clone(), reason: "partial".into() });
            continue;
        }
        let parsed = std::fs::read(content.join(source))
            .map_err(|e| PageError::Io { file: source.clone(), message: e.to_string() })
            .and_then(|bytes| {
                let mut page = parse_page(source, &bytes)?;
                drop_unsafe_original_url(&mut page, &bytes, report);
                Ok(page)
            })
            .and_then(|page| match ids.get(&page.id) {
                Some(first) => {
                    Err(PageError::DuplicateId { file: source.clone(), id: page.id.clone(), first: first.clone() })
                }
                None => Ok(page),
            });
        match parsed {
            Ok(page) if page.draft => {
                report.unpublished.push(Unpublished { file: source.clone(), reason: "draft".into() })
            }
            Ok(page) => {
                ids.insert(page.id.clone(), source.clone());
                pages.push(page);
            }
            Err(e) => report.skipped.push(Skipped {
                file: source.clone(),
                line: e.line(),
                reason: e.kind().to_string(),
                message: e.to_string(),
            }),
        }
    }
    pages
}

/// Docusaurus does not route `_name.mdx` files: other pages import them.
pub(super) fn is_mdx_partial(source: &str) -> bool {
    let name = source.rsplit('/').next().unwrap_or(source);
    name.starts_with('_') && name.to_ascii_lowercase().ends_with(".mdx")
}

/// Markdown pages (sorted) and other files (assets) under `content`, relative and
/// `/`-separated. Hidden files and folders are ignored.
pub(super) fn discover(content: &Path, report: &mut Report) -> (Vec<String>, HashSet<String>) {
    let mut pages = Vec::new();
    let mut assets = HashSet::new();
    let walker = walkdir::WalkDir::new(content)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let file = e.path().map(|p| rel_path(content, p)).unwrap_or_default();
                report.skipped.push(Skipped {
                    file: file.clone(),
                    line: None,
                    reason: "io".into(),
                    message: format!("{file}: cannot read: {e}"),
                });
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = rel_path(content, entry.path());
        if is_page_file(&rel) {
            pages.push(rel);
        } else {
            assets.insert(rel);
        }
    }
    (pages, assets)
}

fn rel_path(base: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Removes a frontmatter `original_url` that is not a safe link target (the page
/// template puts it into an `href`), reporting it at the key's line. It is the only
/// frontmatter value that reaches an attribute; other keys are shown as text.
fn drop_unsafe_original_url(page: &mut Page, bytes: &[u8], report: &mut Report) {
    let Some(original) = page.original_url.as_deref() else { return };
    let Err(why) = safe_url::check(original) else { return };
    let text = String::from_utf8_lossy(bytes);
    // The key's line within the frontmatter (line 1 is the opening `---`); line 2
    // when it is written in a form this simple search does not see.
    let line = text
        .lines()
        .take(page.body_line)
        .position(|l| l.trim_start().trim_start_matches(['"', '\'']).starts_with("original_url"))
        .map_or(2, |i| i + 1);
    report.blocked_urls.push(BlockedUrl {
        file: page.source.clone(),
        line,
        url: original.to_string(),
        reason: why.to_string(),
    });
    page.original_url = None;
}
