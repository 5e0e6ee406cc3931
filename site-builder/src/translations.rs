//! Which pages are translations of one another, found the way the tool that
//! wrote them says:
//!
//! - the same path under each language's folder: `de/pages/a.md` ↔
//!   `en/pages/a.md` (a language folder at the top, when two or more top
//!   folders hold pages in the language they name, as [`crate::language`]
//!   reads them), Hugo's `content/de/x.md` ↔ `content/en/x.md`, and
//!   Docusaurus's `i18n/de/docusaurus-plugin-content-docs/current/x.md` ↔
//!   `docs/x.md` (also versioned docs, the blog and pages);
//! - Hugo's translation by file name: `about.de.md` ↔ `about.md`;
//! - the same `translationKey` in the frontmatter (Hugo);
//! - the same `permalink` or `slug` (a relative one read in the page's
//!   language-free folder, as Docusaurus and Hugo resolve it).
//!
//! Any one shared key joins two pages, and what is joined through a third page
//! is joined too (union–find). A group is pages in at least two languages; two
//! pages of one language in a group (two pages claiming one slug) are a
//! conflict the report names, and the switcher shows the first of them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use crate::parse::Page;

/// The translation groups of a knowledge base.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Translations {
    /// Each group's pages (indices into the pages given), by language tag,
    /// then in the pages' order.
    pub groups: Vec<Vec<usize>>,
    /// Each page's group, by page index.
    pub group_of: Vec<Option<usize>>,
    /// Groups with two or more pages of one language.
    pub conflicts: Vec<Conflict>,
}

/// Pages of one language that the keys put in one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub lang: String,
    /// The pages, in the pages' order; the first is the one the switcher links.
    pub pages: Vec<usize>,
}

impl Translations {
    /// The versions of page `i` a reader can switch to, one per language in
    /// tag order, `i` itself for its own language; empty when it has none.
    pub fn versions(&self, i: usize, tags: &[&str]) -> Vec<usize> {
        let Some(g) = self.group_of.get(i).copied().flatten() else { return Vec::new() };
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for &p in &self.groups[g] {
            if seen.insert(tags[p]) {
                out.push(if tags[p] == tags[i] { i } else { p });
            }
        }
        out
    }
}

/// The languages each page stands in for (`Chunk::stands_in`, by page
/// index): a page in the main language `main` stands in for each language
/// the site is translated into (a page of it has a translation) that its own
/// group has no page in. A search in that language then shows it, as
/// Docusaurus and Hugo show a translated site's readers the untranslated page
/// in the default language. A page in another language stands in for none:
/// a German reader is shown the English original, not the Korean translation.
pub fn stand_ins(t: &Translations, tags: &[&str], main: &str) -> Vec<Vec<String>> {
    let translated: BTreeSet<&str> = t.groups.iter().flatten().map(|&p| tags[p]).filter(|&l| l != main).collect();
    (0..tags.len())
        .map(|i| {
            if tags[i] != main {
                return Vec::new();
            }
            let has: BTreeSet<&str> =
                t.group_of[i].map(|g| t.groups[g].iter().map(|&p| tags[p]).collect()).unwrap_or_default();
            translated.iter().filter(|l| !has.contains(*l)).map(|l| l.to_string()).collect()
        })
        .collect()
}

/// Groups `pages` (each with its language tag, lowercased as
/// [`crate::language`] writes it) into translations.
pub fn group(pages: &[&Page], tags: &[&str]) -> Translations {
    let tops = top_language_folders(pages, tags);
    let mut sets = Sets::new(pages.len());
    let mut first: HashMap<String, usize> = HashMap::new();
    for (i, (page, tag)) in pages.iter().zip(tags).enumerate() {
        for key in keys(page, tag, &tops) {
            match first.get(&key) {
                Some(&j) => sets.union(i, j),
                None => {
                    first.insert(key, i);
                }
            }
        }
    }
    let mut components: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..pages.len() {
        components.entry(sets.find(i)).or_default().push(i);
    }
    // In the order of each group's first page, whichever page the union chose as its root.
    let mut components: Vec<Vec<usize>> = components.into_values().collect();
    components.sort_by_key(|members| members[0]);
    let mut out = Translations { group_of: vec![None; pages.len()], ..Translations::default() };
    for mut members in components {
        let langs: BTreeSet<&str> = members.iter().map(|&i| tags[i]).collect();
        if langs.len() < 2 {
            continue;
        }
        members.sort_by_key(|&i| (tags[i], i));
        for lang in langs {
            let same: Vec<usize> = members.iter().copied().filter(|&i| tags[i] == lang).collect();
            if same.len() > 1 {
                out.conflicts.push(Conflict { lang: lang.to_string(), pages: same });
            }
        }
        for &i in &members {
            out.group_of[i] = Some(out.groups.len());
        }
        out.groups.push(members);
    }
    out
}

/// The top-level folders that hold a language (folder as written → tag):
/// those named for the language of a page in them, when at least two are, as
/// [`crate::language`] counts a top folder as a language's only beside
/// another (a help desk's lone `it/` folder is IT, not Italian); else those
/// whose pages are each one language ([`crate::language::content_folders`]:
/// `english/` beside `suomeksi/`).
fn top_language_folders(pages: &[&Page], tags: &[&str]) -> BTreeMap<String, String> {
    let named: BTreeMap<String, String> = pages
        .iter()
        .zip(tags)
        .filter_map(|(p, tag)| p.source.split_once('/').map(|(top, _)| top).filter(|top| names(top, tag)))
        .map(|top| (top.to_string(), normal(top)))
        .collect();
    if named.len() >= 2 {
        return named;
    }
    // Hugo's `content/de/` and Docusaurus's `i18n/de/` pair their own way
    // (Docusaurus's `docs/` beside `i18n/` is no pair of language folders).
    if pages.iter().any(|p| crate::language::folder_tag(&p.source, &BTreeSet::new()).is_some()) {
        return BTreeMap::new();
    }
    crate::language::content_folders(pages.iter().map(|p| p.source.as_str()).zip(tags.iter().copied()))
}

/// A page's path without its language, and which convention removed it.
#[derive(Debug, PartialEq, Eq)]
struct Neutral {
    /// `top`, `hugo`, or `path` (Docusaurus's original's path, which a page
    /// outside any language folder has as it is).
    kind: &'static str,
    path: String,
}

/// The keys a page shares with its translations.
fn keys(page: &Page, tag: &str, tops: &BTreeMap<String, String>) -> Vec<String> {
    let neutral = neutral_path(&page.source, tag, tops);
    let mut keys = vec![format!("{}:{}", neutral.kind, neutral.path)];
    let lower: BTreeMap<String, &Value> = page.meta.iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
    if let Some(key) = lower.get("translationkey").and_then(|v| text(v)) {
        keys.push(format!("key:{key}"));
    }
    for name in ["permalink", "slug"] {
        let Some(address) = lower.get(name).and_then(|v| text(v)).filter(|a| !a.contains("://")) else { continue };
        let clean = address.trim_matches('/');
        if clean.is_empty() {
            continue;
        }
        if address.starts_with('/') {
            keys.push(format!("address:{clean}"));
        } else {
            // Relative: in the page's folder, as its tool resolves it.
            let dir = neutral.path.rsplit_once('/').map_or("", |(d, _)| d);
            keys.push(format!("address:{}:{dir}/{clean}", neutral.kind));
        }
    }
    keys
}

/// A frontmatter value as text (a string or a number), when not empty.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A folder name as a language tag is written (`zh_CN` → `zh-cn`).
fn normal(segment: &str) -> String {
    segment.to_ascii_lowercase().replace('_', "-")
}

/// Whether a folder is named for `tag`.
fn names(segment: &str, tag: &str) -> bool {
    normal(segment) == tag
}

/// `source` with its language folder (or, Hugo's other way, the language in
/// its file name: `about.de.md`) taken out, by the first convention that
/// names the page's own language.
fn neutral_path(source: &str, tag: &str, tops: &BTreeMap<String, String>) -> Neutral {
    let named = crate::language::file_language(source).filter(|(_, t)| t == tag).map(|(base, _)| base);
    let source = named.as_deref().unwrap_or(source);
    let segments: Vec<&str> = source.split('/').collect();
    if segments.len() >= 2 && tops.get(segments[0]).is_some_and(|t| t == tag) {
        return Neutral { kind: "top", path: segments[1..].join("/") };
    }
    for i in 0..segments.len().saturating_sub(2) {
        if !names(segments[i + 1], tag) {
            continue;
        }
        match segments[i] {
            "content" => {
                let path = segments[..=i].iter().chain(&segments[i + 2..]).copied().collect::<Vec<_>>().join("/");
                return Neutral { kind: "hugo", path };
            }
            "i18n" => {
                if let Some(path) = docusaurus_original(&segments[..i], &segments[i + 2..]) {
                    return Neutral { kind: "path", path };
                }
            }
            _ => {}
        }
    }
    Neutral { kind: "path", path: source.to_string() }
}

/// Where Docusaurus keeps the original of a file under `i18n/<locale>/`:
/// `rest` is the path after the locale, `prefix` the site's folder above `i18n`.
fn docusaurus_original(prefix: &[&str], rest: &[&str]) -> Option<String> {
    let (plugin, rest) = rest.split_first()?;
    let mapped: Vec<String> = match *plugin {
        "docusaurus-plugin-content-blog" => {
            std::iter::once("blog").chain(rest.iter().copied()).map(String::from).collect()
        }
        "docusaurus-plugin-content-pages" => {
            ["src", "pages"].into_iter().chain(rest.iter().copied()).map(String::from).collect()
        }
        docs => {
            // `docusaurus-plugin-content-docs` (`docs/`), or a second docs
            // instance `…-docs-<id>` (`<id>/`, its usual path).
            let id = docs.strip_prefix("docusaurus-plugin-content-docs")?;
            let folder = match id.strip_prefix('-') {
                Some(id) if !id.is_empty() => id,
                None if id.is_empty() => "docs",
                _ => return None,
            };
            let (version, rest) = rest.split_first()?;
            let mut out: Vec<String> = if *version == "current" {
                vec![folder.to_string()]
            } else if version.starts_with("version-") {
                let versioned =
                    if folder == "docs" { "versioned_docs".to_string() } else { format!("{folder}_versioned_docs") };
                vec![versioned, (*version).to_string()]
            } else {
                return None;
            };
            out.extend(rest.iter().map(|s| (*s).to_string()));
            out
        }
    };
    Some(prefix.iter().map(|s| (*s).to_string()).chain(mapped).collect::<Vec<_>>().join("/"))
}

/// Union–find over page indices (path halving, union by size).
struct Sets {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Sets {
    fn new(n: usize) -> Sets {
        Sets { parent: (0..n).collect(), size: vec![1; n] }
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        let (big, small) = if self.size[a] >= self.size[b] { (a, b) } else { (b, a) };
        self.parent[small] = big;
        self.size[big] += self.size[small];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(source: &str, meta: &[(&str, &str)]) -> Page {
        let mut p = crate::parse::testing::page(source, "");
        for (k, v) in meta {
            p.meta.insert((*k).into(), Value::String((*v).into()));
        }
        p
    }

    /// The translations of `pages`, and their tags.
    fn grouping<'p>(pages: &'p [(Page, &'p str)]) -> (Translations, Vec<&'p str>) {
        let refs: Vec<&Page> = pages.iter().map(|(p, _)| p).collect();
        let tags: Vec<&str> = pages.iter().map(|(_, t)| *t).collect();
        (group(&refs, &tags), tags)
    }

    /// The groups as sources.
    fn grouped(pages: &[(Page, &str)]) -> Vec<Vec<String>> {
        let (t, _) = grouping(pages);
        t.groups.iter().map(|g| g.iter().map(|&i| pages[i].0.source.clone()).collect()).collect()
    }

    #[test]
    fn language_folders_at_the_top_pair_the_same_path() {
        let pages = [
            (page("en/pages/a/b.md", &[]), "en"),
            (page("de/pages/a/b.md", &[]), "de"),
            (page("ja/pages/a/b.md", &[]), "ja"),
            (page("zh-cn/pages/a/b.md", &[]), "zh-cn"),
            (page("en/pages/only-english.md", &[]), "en"),
            (page("de/pages/a/c.md", &[]), "de"),
            (page("en/pages/a/c.md", &[]), "en"),
        ];
        assert_eq!(
            grouped(&pages),
            [
                vec!["de/pages/a/b.md", "en/pages/a/b.md", "ja/pages/a/b.md", "zh-cn/pages/a/b.md"],
                vec!["de/pages/a/c.md", "en/pages/a/c.md"],
            ]
        );
    }

    #[test]
    fn a_main_language_page_stands_in_for_each_language_without_its_translation() {
        let pages = [
            (page("en/pages/a.md", &[]), "en"),
            (page("de/pages/a.md", &[]), "de"),
            (page("en/pages/b.md", &[]), "en"),
            (page("fr/pages/b.md", &[]), "fr"),
            (page("en/pages/only-english.md", &[]), "en"),
            (page("ko/pages/only-korean.md", &[]), "ko"),
        ];
        let (t, tags) = grouping(&pages);
        // Korean has no translated page: the site is translated into de and fr.
        let want: [&[&str]; 6] = [&["fr"], &[], &["de"], &[], &["de", "fr"], &[]];
        assert_eq!(stand_ins(&t, &tags, "en"), want);
        // Another main language: its pages stand in, English ones do not.
        assert_eq!(stand_ins(&t, &tags, "de")[1], ["fr"]);
        assert!(stand_ins(&t, &tags, "de")[4].is_empty());
        // A site in one language, or with no translations, has no stand-ins.
        let (none, only) = grouping(&pages[4..]);
        assert!(stand_ins(&none, &only, "en").iter().all(Vec::is_empty));
    }

    #[test]
    fn a_lone_folder_named_like_a_language_pairs_nothing() {
        // `it/` of a help desk, its pages detected Italian by chance: no second
        // language folder, so `it/vpn.md` is not a translation of `vpn.md`.
        let pages = [(page("it/vpn.md", &[]), "it"), (page("vpn.md", &[]), "en")];
        assert!(grouped(&pages).is_empty());
    }

    #[test]
    fn hugo_content_folders_pair_the_same_path() {
        let pages = [
            (page("site/content/en/docs/x.md", &[]), "en"),
            (page("site/content/fr/docs/x.md", &[]), "fr"),
            (page("site/content/fr/docs/y.md", &[]), "fr"),
            (page("other/content/en/docs/x.md", &[]), "en"),
        ];
        assert_eq!(grouped(&pages), [vec!["site/content/en/docs/x.md", "site/content/fr/docs/x.md"]]);
    }

    #[test]
    fn hugo_file_names_pair_the_original() {
        let pages = [
            (page("docs/about.md", &[]), "en"),
            (page("docs/about.de.md", &[]), "de"),
            (page("docs/about.fr.md", &[]), "fr"),
            (page("content/x.md", &[]), "en"),
            (page("content/x.ja.md", &[]), "ja"),
            // A suffix that is not the page's language stays part of the name.
            (page("docs/setup.it.md", &[]), "en"),
            (page("docs/setup.md", &[]), "de"),
        ];
        assert_eq!(
            grouped(&pages),
            [vec!["docs/about.de.md", "docs/about.md", "docs/about.fr.md"], vec!["content/x.md", "content/x.ja.md"],]
        );
    }

    #[test]
    fn docusaurus_translations_pair_their_original() {
        let pages = [
            (page("docs/guide/x.md", &[]), "en"),
            (page("i18n/de/docusaurus-plugin-content-docs/current/guide/x.md", &[]), "de"),
            (page("i18n/zh-Hans/docusaurus-plugin-content-docs/current/guide/x.md", &[]), "zh-hans"),
            (page("versioned_docs/version-1.0/x.md", &[]), "en"),
            (page("i18n/de/docusaurus-plugin-content-docs/version-1.0/x.md", &[]), "de"),
            (page("blog/2024-01-01-hello.md", &[]), "en"),
            (page("i18n/de/docusaurus-plugin-content-blog/2024-01-01-hello.md", &[]), "de"),
            (page("community/faq.md", &[]), "en"),
            (page("i18n/de/docusaurus-plugin-content-docs-community/current/faq.md", &[]), "de"),
            // Not a plugin folder: no original.
            (page("i18n/de/code.json.md", &[]), "de"),
        ];
        assert_eq!(
            grouped(&pages),
            [
                vec![
                    "i18n/de/docusaurus-plugin-content-docs/current/guide/x.md",
                    "docs/guide/x.md",
                    "i18n/zh-Hans/docusaurus-plugin-content-docs/current/guide/x.md",
                ],
                vec!["i18n/de/docusaurus-plugin-content-docs/version-1.0/x.md", "versioned_docs/version-1.0/x.md"],
                vec!["i18n/de/docusaurus-plugin-content-blog/2024-01-01-hello.md", "blog/2024-01-01-hello.md"],
                vec!["i18n/de/docusaurus-plugin-content-docs-community/current/faq.md", "community/faq.md"],
            ]
        );
    }

    #[test]
    fn a_translation_key_or_an_address_pairs_pages_anywhere() {
        let pages = [
            (page("about.md", &[("translationKey", "about")]), "en"),
            (page("ueber-uns.md", &[("TranslationKey", "about")]), "de"),
            (page("guide/setup.md", &[("slug", "/setup")]), "en"),
            (page("anleitung/einrichten.md", &[("slug", "/setup/")]), "de"),
            (page("x/one.md", &[("permalink", "/x/one")]), "en"),
            (page("y/eins.md", &[("permalink", "/x/one")]), "de"),
            // A relative slug is its folder's: different folders, different pages.
            (page("a/p.md", &[("slug", "intro")]), "en"),
            (page("b/q.md", &[("slug", "intro")]), "de"),
            // An empty or external address pairs nothing.
            (page("c.md", &[("slug", "/")]), "en"),
            (page("d.md", &[("slug", "/")]), "de"),
            (page("e.md", &[("permalink", "https://x.example/")]), "en"),
            (page("f.md", &[("permalink", "https://x.example/")]), "de"),
        ];
        assert_eq!(
            grouped(&pages),
            [
                vec!["ueber-uns.md", "about.md"],
                vec!["anleitung/einrichten.md", "guide/setup.md"],
                vec!["y/eins.md", "x/one.md"],
            ]
        );
    }

    #[test]
    fn a_relative_slug_pairs_across_language_folders() {
        let pages = [
            (page("en/guide/setup.md", &[("slug", "start")]), "en"),
            (page("de/anleitung/einrichten.md", &[("slug", "start")]), "de"),
            (page("de/guide/other.md", &[("slug", "start")]), "de"),
        ];
        let got = grouped(&pages);
        assert_eq!(got, [vec!["de/guide/other.md", "en/guide/setup.md"]]);
    }

    #[test]
    fn one_language_twice_is_a_conflict_and_the_page_shows_itself() {
        let pages = [
            page("en/a.md", &[("slug", "/same")]),
            page("de/a.md", &[]),
            page("en/b.md", &[("slug", "/same")]),
            page("ja/c.md", &[]),
        ];
        let refs: Vec<&Page> = pages.iter().collect();
        let tags = ["en", "de", "en", "ja"];
        let t = group(&refs, &tags);
        assert_eq!(t.groups, [vec![1, 0, 2]]);
        assert_eq!(t.conflicts, [Conflict { lang: "en".into(), pages: vec![0, 2] }]);
        assert_eq!(t.versions(1, &tags), [1, 0], "German, then the first English page");
        assert_eq!(t.versions(2, &tags), [1, 2], "each English page shows itself");
        assert_eq!(t.versions(3, &tags), Vec::<usize>::new(), "no translations");
        assert_eq!(t.group_of, [Some(0), Some(0), Some(0), None]);
    }

    #[test]
    fn neutral_paths() {
        let tops: BTreeMap<String, String> =
            [("de", "de"), ("en", "en")].map(|(f, t)| (f.to_string(), t.to_string())).into();
        assert_eq!(neutral_path("de/x/y.md", "de", &tops), Neutral { kind: "top", path: "x/y.md".into() });
        // The folder names another language than the page's: no convention.
        assert_eq!(neutral_path("de/x.md", "en", &tops), Neutral { kind: "path", path: "de/x.md".into() });
        assert_eq!(
            neutral_path("content/pt_BR/x.md", "pt-br", &tops),
            Neutral { kind: "hugo", path: "content/x.md".into() }
        );
        assert_eq!(
            docusaurus_original(&["web"], &["docusaurus-plugin-content-pages", "p.md"]).as_deref(),
            Some("web/src/pages/p.md")
        );
        assert_eq!(docusaurus_original(&[], &["docusaurus-plugin-content-docs", "next", "p.md"]), None);
        assert_eq!(docusaurus_original(&[], &["docusaurus-plugin-content-docsx", "current", "p.md"]), None);
    }
}
