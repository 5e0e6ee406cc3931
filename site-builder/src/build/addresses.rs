//! Where each page lives on the site: its URL (from its file, or the
//! address its frontmatter asks for), folder pages, and the chain of folders
//! above it that the breadcrumbs and the navigation show.

use std::borrow::Borrow;
use std::collections::HashMap;

use crate::parse::{strip_page_extension, Page};

/// Every page's other addresses (`slug`, `permalink`, old URLs), without their
/// leading `/`, → its URL. The first page to claim an address keeps it.
pub(super) fn addresses(pages: &[Page], urls: &[String]) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for (p, u) in pages.iter().zip(urls) {
        for a in &p.addresses {
            map.entry(a.trim_matches('/').to_string()).or_insert_with(|| u.clone());
        }
    }
    map
}

/// `it/wifi.md` → `it/wifi.html`; a Hugo section's `_index.md` is its folder's
/// `index.html`.
pub fn page_url(source: &str) -> String {
    let stem = strip_page_extension(source);
    let stem = match stem.rsplit_once('/') {
        Some((dir, "_index")) => format!("{dir}/index"),
        None if stem == "_index" => "index".to_string(),
        _ => stem.to_string(),
    };
    format!("{stem}.html")
}

/// Whether a page is its folder's own page (`index.md`, Hugo's `_index.md`,
/// `README.md`).
pub(super) fn is_folder_page(source: &str) -> bool {
    let stem = strip_page_extension(source.rsplit('/').next().unwrap_or(source));
    stem == "index" || stem == "_index" || stem.eq_ignore_ascii_case("readme")
}

/// Each page's chain (ancestors, then its own title). A page without frontmatter
/// gets the chain of its folder: the folder's `index.md` page when there is one,
/// else the parent folder's chain plus the folder's name.
pub(super) fn resolve_chains(pages: &[Page]) -> Vec<Vec<String>> {
    let index_of = Folders::of(pages);
    let mut memo: HashMap<String, Vec<String>> = HashMap::new();
    pages
        .iter()
        .map(|p| {
            let mut chain = match &p.ancestors {
                Some(a) => a.clone(),
                None => {
                    let dir = p.source.rsplit_once('/').map_or("", |(d, _)| d);
                    let is_index = is_folder_page(&p.source);
                    match (is_index, dir) {
                        (true, "") => Vec::new(),
                        (true, d) => folder_chain(parent_dir(d), pages, &index_of, &mut memo, 0),
                        (false, d) => folder_chain(d, pages, &index_of, &mut memo, 0),
                    }
                }
            };
            chain.push(p.title.clone());
            chain
        })
        .collect()
}

/// The chain of each folder in `dirs` (content-relative), as the pages in it
/// get theirs: where a folder's own order (a category file) applies in the tree.
pub(super) fn folder_chains(pages: &[&Page], dirs: &[&str]) -> Vec<Vec<String>> {
    let index_of = Folders::of(pages);
    let mut memo: HashMap<String, Vec<String>> = HashMap::new();
    dirs.iter().map(|d| folder_chain(d, pages, &index_of, &mut memo, 0)).collect()
}

/// What names a folder: its own page, or for a top folder of a site in
/// several languages (`de/`, `en/`) its language.
struct Folders<'p> {
    /// Each folder's own page (`index.md`, `_index.md`, `README.md`), by folder.
    pages: HashMap<&'p str, usize>,
    /// The top folders that name languages ([`crate::language::language_folders_of`]).
    languages: std::collections::BTreeSet<String>,
}

impl<'p> Folders<'p> {
    fn of<P: Borrow<Page>>(pages: &'p [P]) -> Folders<'p> {
        Folders {
            pages: pages
                .iter()
                .map(Borrow::borrow)
                .enumerate()
                .filter(|(_, p)| is_folder_page(&p.source))
                .map(|(i, p)| (p.source.rsplit_once('/').map_or("", |(d, _)| d), i))
                .collect(),
            languages: crate::language::language_folders_of(pages.iter().map(|p| p.borrow().source.as_str())),
        }
    }

    fn get(&self, dir: &str) -> Option<&usize> {
        self.pages.get(dir)
    }

    /// The title of a folder with no page of its own: a language folder's
    /// language in its own name ("Deutsch"), else the folder's name with its
    /// first letter capitalised.
    fn title(&self, dir: &str) -> String {
        if !dir.contains('/') {
            if let Some(tag) = crate::language::folder_language(dir, &self.languages) {
                return crate::i18n::native_name(&tag);
            }
        }
        let name = dir.rsplit('/').next().unwrap_or(dir).replace(['-', '_'], " ");
        let mut chars = name.chars();
        chars.next().map(|f| f.to_uppercase().chain(chars).collect()).unwrap_or_default()
    }
}

fn parent_dir(dir: &str) -> &str {
    dir.rsplit_once('/').map_or("", |(d, _)| d)
}

fn folder_chain<P: Borrow<Page>>(
    dir: &str,
    pages: &[P],
    index_of: &Folders<'_>,
    memo: &mut HashMap<String, Vec<String>>,
    depth: usize,
) -> Vec<String> {
    if let Some(c) = memo.get(dir) {
        return c.clone();
    }
    let chain = match index_of.get(dir) {
        Some(&i) => {
            let page: &Page = pages[i].borrow();
            let mut c = match &page.ancestors {
                Some(a) => a.clone(),
                None if dir.is_empty() || depth > 64 => Vec::new(),
                None => folder_chain(parent_dir(dir), pages, index_of, memo, depth + 1),
            };
            c.push(page.title.clone());
            c
        }
        None if dir.is_empty() => Vec::new(),
        None => {
            let mut c = folder_chain(parent_dir(dir), pages, index_of, memo, depth + 1);
            c.push(index_of.title(dir));
            c
        }
    };
    memo.insert(dir.to_string(), chain.clone());
    chain
}
