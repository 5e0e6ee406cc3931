//! Where a wikilink leads in an Obsidian vault: [`Vault`] finds the note or file a
//! target names by Obsidian's rules, for the site builder's [`Resolver`](crate::Resolver).

use std::collections::HashMap;

use super::wikilink::strip_md_extension;

/// The notes and files of an Obsidian vault, to find what a wikilink or embed
/// names by Obsidian's rules (for the site builder's [`Resolver`](crate::Resolver)):
///
/// - A target is compared with file paths without `.md`/`.mdx` (the extension
///   may be written), case-insensitively but otherwise exactly (a space is not a
///   `-`). `Docker Support` matches a file of that name in any folder;
///   `features/Docker Support` matches a path ending so; `/x/y` is from the
///   vault's root and `./y`, `../y` from the linking page's folder; `folder/`
///   names the folder's `index` page.
/// - Of several matches, the one in the linking page's folder wins, then the one
///   with the shortest path, then the first in sort order.
/// - A target no file name matches may be a page's title or one of its aliases.
/// - Surrounding spaces do not count; a percent-encoded target
///   (`Docker%20Support`) matches as its decoded form too.
/// - Files (images, PDFs, …) are matched the same way, by their full name.
#[derive(Debug, Clone, Default)]
pub struct Vault {
    /// Keyed by lower-case path without `.md`/`.mdx`: what targets are compared with.
    pages: PathIndex,
    /// Lower-case title or alias → the paths of the pages that have it.
    names: HashMap<String, Vec<String>>,
    /// Keyed by lower-case path.
    assets: PathIndex,
}

/// Paths with the lower-case key a target is compared with, in sort order, and
/// indexed by the key's file name (so a lookup reads the few files of that name).
#[derive(Debug, Clone, Default)]
struct PathIndex {
    /// (path, key).
    entries: Vec<(String, String)>,
    by_file_name: HashMap<String, Vec<usize>>,
}

impl PathIndex {
    fn new(mut entries: Vec<(String, String)>) -> PathIndex {
        entries.sort();
        let mut by_file_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (_, key)) in entries.iter().enumerate() {
            let name = key.rsplit('/').next().unwrap_or_default();
            by_file_name.entry(name.to_string()).or_default().push(i);
        }
        PathIndex { entries, by_file_name }
    }

    /// The best path for `wanted`, linked from `from`.
    fn find(&self, from: &str, wanted: &Wanted) -> Option<String> {
        let ids = self.by_file_name.get(wanted.file_name())?;
        let keys = ids.iter().map(|&i| &self.entries[i]).filter(|(_, key)| wanted.matches(key));
        pick(from, keys.map(|(path, _)| path.as_str())).map(str::to_string)
    }
}

/// What a target asks for, in lower case.
enum Wanted {
    /// This path exactly.
    Exact(String),
    /// This path or a path ending with `/` and it.
    Suffix(String),
}

impl Wanted {
    fn new(from: &str, target: &str) -> Option<Wanted> {
        let lower = target.to_lowercase();
        if lower.is_empty() {
            None
        } else if let Some(root) = lower.strip_prefix('/') {
            Some(Wanted::Exact(root.to_string()))
        } else if lower.starts_with("./") || lower.starts_with("../") {
            join_relative(&from.to_lowercase(), &lower).map(Wanted::Exact)
        } else {
            Some(Wanted::Suffix(lower))
        }
    }

    fn file_name(&self) -> &str {
        let (Wanted::Exact(w) | Wanted::Suffix(w)) = self;
        w.rsplit('/').next().unwrap_or_default()
    }

    fn matches(&self, key: &str) -> bool {
        match self {
            Wanted::Exact(w) => key == w,
            Wanted::Suffix(w) => {
                key == w
                    || (key.len() > w.len() && key.ends_with(w.as_str()) && key[..key.len() - w.len()].ends_with('/'))
            }
        }
    }
}

/// `a/b/page` + `../c/x` → `a/c/x`; `None` when it climbs above the root.
fn join_relative(from: &str, rel: &str) -> Option<String> {
    kb_common::path::join(from.rsplit_once('/').map_or("", |(dir, _)| dir), rel)
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// The best of several matching paths for a link from `from`.
fn pick<'a>(from: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let dir = parent(from);
    candidates.min_by_key(|p| (parent(p) != dir, p.matches('/').count(), p.len(), *p))
}

/// A target as written (trimmed), and percent-decoded when that differs.
fn target_forms(target: &str) -> Vec<String> {
    let t = target.trim();
    let mut forms = vec![t.to_string()];
    if let Ok(decoded) = percent_encoding::percent_decode_str(t).decode_utf8() {
        if decoded != t {
            forms.push(decoded.trim().to_string());
        }
    }
    forms
}

impl Vault {
    /// `pages`: (content-relative source path, title, aliases); `assets`: the
    /// content-relative paths of every other file.
    pub fn new(pages: &[(String, String, Vec<String>)], assets: &[String]) -> Vault {
        let mut names: HashMap<String, Vec<String>> = HashMap::new();
        for (path, title, aliases) in pages {
            for name in std::iter::once(title).chain(aliases) {
                let name = name.trim().to_lowercase();
                if !name.is_empty() {
                    names.entry(name).or_default().push(path.clone());
                }
            }
        }
        Vault {
            pages: PathIndex::new(
                pages.iter().map(|(p, _, _)| (p.clone(), strip_md_extension(p).to_lowercase())).collect(),
            ),
            names,
            assets: PathIndex::new(assets.iter().map(|a| (a.clone(), a.to_lowercase())).collect()),
        }
    }

    /// The source path of the page `target` names, linked from the page at `from`.
    pub fn page(&self, from: &str, target: &str) -> Option<String> {
        let forms = target_forms(target);
        let by_path = forms.iter().find_map(|form| {
            // `[[folder/]]` names the folder's index page.
            let form = if form.ends_with('/') { format!("{form}index") } else { form.clone() };
            self.pages.find(from, &Wanted::new(from, strip_md_extension(&form))?)
        });
        by_path.or_else(|| {
            forms.iter().find_map(|form| {
                let paths = self.names.get(&strip_md_extension(form).to_lowercase())?;
                pick(from, paths.iter().map(String::as_str)).map(str::to_string)
            })
        })
    }

    /// The path of the file `target` names, linked from the page at `from`.
    pub fn asset(&self, from: &str, target: &str) -> Option<String> {
        target_forms(target).iter().find_map(|form| self.assets.find(from, &Wanted::new(from, form)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vault_resolution_follows_obsidian() {
        let pages: Vec<(String, String, Vec<String>)> = [
            ("features/Docker Support.md", "Docker support", vec!["containers"]),
            ("x/features/Docker Support.md", "Docker 2", vec![]),
            ("guide/setup.md", "Set up", vec![]),
            ("setup.md", "Setup", vec![]),
            ("deep/a/b/setup.mdx", "Deep", vec![]),
            ("advanced/index.md", "Advanced", vec![]),
            ("Docker-Support.md", "Dashes", vec![]),
        ]
        .iter()
        .map(|(p, t, a)| (p.to_string(), t.to_string(), a.iter().map(|s| s.to_string()).collect()))
        .collect();
        let assets = ["img/dns records.png".to_string(), "a/b/img/dns records.png".to_string()];
        let v = Vault::new(&pages, &assets);
        let page = |from: &str, t: &str| v.page(from, t);
        assert_eq!(page("index.md", "docker support").as_deref(), Some("features/Docker Support.md"));
        assert_eq!(page("index.md", "Docker-Support").as_deref(), Some("Docker-Support.md"));
        assert_eq!(page("index.md", "x/features/Docker Support").as_deref(), Some("x/features/Docker Support.md"));
        assert_eq!(page("index.md", " Docker%20Support.md ").as_deref(), Some("features/Docker Support.md"));
        // Same folder first, then the shortest path.
        assert_eq!(page("guide/other.md", "setup").as_deref(), Some("guide/setup.md"));
        assert_eq!(page("elsewhere/x.md", "setup").as_deref(), Some("setup.md"));
        assert_eq!(page("deep/a/b/x.md", "setup.mdx").as_deref(), Some("deep/a/b/setup.mdx"));
        assert_eq!(page("guide/x.md", "/setup").as_deref(), Some("setup.md"));
        assert_eq!(page("guide/x.md", "./setup").as_deref(), Some("guide/setup.md"));
        assert_eq!(page("guide/x.md", "../features/docker support").as_deref(), Some("features/Docker Support.md"));
        assert_eq!(page("x.md", "advanced/").as_deref(), Some("advanced/index.md"));
        // Titles and aliases when no file name matches.
        assert_eq!(page("x.md", "Containers").as_deref(), Some("features/Docker Support.md"));
        assert_eq!(page("x.md", "Set up").as_deref(), Some("guide/setup.md"));
        assert_eq!(page("x.md", "ures/Docker Support"), None);
        assert_eq!(page("x.md", ""), None);
        assert_eq!(v.asset("x.md", "dns records.png").as_deref(), Some("img/dns records.png"));
        assert_eq!(v.asset("a/b/img/x.md", "DNS%20records.png").as_deref(), Some("a/b/img/dns records.png"));
        assert_eq!(v.asset("x.md", "b/img/dns records.png").as_deref(), Some("a/b/img/dns records.png"));
        assert_eq!(v.asset("x.md", "records.png"), None);
    }
}
