//! The navigation tree: pages arranged by their ancestor chains.
//!
//! A scraped page says where it lives (`path: Help / IT / Wi-Fi`); the tree is the
//! union of those chains. A node is a page, a section (a chain prefix that other
//! pages hang under), or both (`it/index.md` titled "IT" with pages under "IT").
//! Sections that have no page of their own get a generated listing page at
//! `sections/<slug>.html`. When every chain starts with the same root (the knowledge
//! base's name), that root is the home page, `index.html`.
//!
//! Siblings go in the source's own order ([`Order`], read by [`crate::order`] and
//! [`crate::parse`]), and by title only where the source says nothing.

use std::collections::{HashMap, HashSet};

use kb_common::slug::slugify;

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub title: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Index of the page this node is, if any.
    pub page: Option<usize>,
    /// Site-relative URL: the page's, or a generated section page's.
    pub url: String,
    /// Place among its siblings, as the source gives it.
    pub order: Order,
}

/// Where a node goes among its siblings: MkDocs's `nav` first, then the numbers
/// (frontmatter, a folder's category file), then the rest (sections before
/// pages, by title).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Order {
    /// Its place in MkDocs's `nav`; a section without one takes its first page's.
    Nav(usize),
    /// `sidebar_position`, `weight`, `nav_order`, `order`, or a Docusaurus
    /// category's `position`.
    Weight(f64),
    #[default]
    Unordered,
}

impl Order {
    /// The sort key: which kind of order, then the number.
    fn key(self) -> (u8, f64) {
        match self {
            Order::Nav(i) => (0, i as f64),
            Order::Weight(w) => (1, w),
            Order::Unordered => (2, 0.0),
        }
    }

    /// A page's order: its place in the MkDocs `nav`, else its frontmatter's number.
    pub fn of_page(nav: Option<usize>, weight: Option<f64>) -> Order {
        match (nav, weight) {
            (Some(i), _) => Order::Nav(i),
            (None, Some(w)) if w.is_finite() => Order::Weight(w),
            _ => Order::Unordered,
        }
    }
}

/// The tree. Node 0 is the home page.
#[derive(Debug, Clone)]
pub struct NavTree {
    pub nodes: Vec<Node>,
    /// Node of each page, by page index.
    pub page_node: Vec<usize>,
    /// The top sections that each hold one language of a site split by
    /// language ([`NavTree::find_language_homes`]); empty for any other site.
    pub language_homes: Vec<usize>,
    /// How those homes changed the way to their pages ([`NavTree::shorten`]).
    pub shortcuts: Vec<Shortcut>,
}

/// A way to pages that a language's home shortened: `from` (its titles down
/// to the last wrapper folder it took the children of, `Deutsch / Pages`)
/// now reads `to` (`Deutsch`; Docusaurus's `I18n / De / … / Current`, `Deutsch`).
#[derive(Debug, Clone, PartialEq)]
pub struct Shortcut {
    pub from: Vec<String>,
    pub to: Vec<String>,
}

/// What the tree needs to know about a page.
pub struct PageRef<'a> {
    /// Ancestors root first, then the page's own title.
    pub chain: Vec<&'a str>,
    pub url: &'a str,
    pub order: Order,
}

/// A folder's own order (a Docusaurus `_category_` file's `position`), by the
/// chain its pages hang under.
pub struct FolderRef<'a> {
    pub chain: Vec<&'a str>,
    pub order: Order,
}

pub const HOME_URL: &str = "index.html";

impl NavTree {
    /// Builds the tree. Children are ordered by [`Order`] (a folder's own, from
    /// `folders`, before its page's), then sections before pages, then by title.
    pub fn build(pages: &[PageRef<'_>], folders: &[FolderRef<'_>]) -> NavTree {
        let mut nodes = vec![Node {
            title: String::new(),
            parent: None,
            children: Vec::new(),
            page: None,
            url: HOME_URL.into(),
            order: Order::Unordered,
        }];
        let mut by_chain: HashMap<Vec<&str>, usize> = HashMap::new();
        let mut page_node = Vec::with_capacity(pages.len());
        for (pi, page) in pages.iter().enumerate() {
            let mut parent = 0;
            for depth in 1..=page.chain.len() {
                let key = page.chain[..depth].to_vec();
                let last = depth == page.chain.len();
                let existing = by_chain.get(&key).copied();
                let node = match existing {
                    // A second page with the same chain becomes a sibling of its own.
                    Some(n) if last && nodes[n].page.is_some() => None,
                    Some(n) => Some(n),
                    None => None,
                };
                let n = match node {
                    Some(n) => n,
                    None => {
                        let n = nodes.len();
                        nodes.push(Node {
                            title: key[depth - 1].to_string(),
                            parent: Some(parent),
                            children: Vec::new(),
                            page: None,
                            url: String::new(),
                            order: Order::Unordered,
                        });
                        nodes[parent].children.push(n);
                        by_chain.entry(key).or_insert(n);
                        n
                    }
                };
                if last {
                    nodes[n].page = Some(pi);
                    nodes[n].url = page.url.to_string();
                    nodes[n].order = page.order;
                }
                parent = n;
            }
            page_node.push(parent);
        }
        for folder in folders {
            if let Some(&n) = by_chain.get(&folder.chain) {
                nodes[n].order = folder.order;
            }
        }

        // One common root (the knowledge base's name): it is the home page.
        let mut tree = NavTree { nodes, page_node, language_homes: Vec::new(), shortcuts: Vec::new() };
        if tree.nodes[0].children.len() == 1 {
            let only = tree.nodes[0].children[0];
            tree.collapse_root_into(only);
        }
        tree.assign_section_urls();
        tree.inherit_nav_order(0);
        tree.sort_children();
        tree
    }

    /// A section MkDocs's `nav` does not place itself goes where its first page
    /// does (a `nav` lists pages, and sections by what they hold); returns the
    /// node's place.
    fn inherit_nav_order(&mut self, n: usize) -> Option<usize> {
        let children = self.nodes[n].children.clone();
        let first = children.into_iter().filter_map(|c| self.inherit_nav_order(c)).min();
        match self.nodes[n].order {
            Order::Nav(i) => Some(i),
            Order::Unordered if first.is_some() => {
                self.nodes[n].order = first.map_or(Order::Unordered, Order::Nav);
                first
            }
            _ => None,
        }
    }

    /// Makes `n` (the single child of the virtual root) the home node 0.
    fn collapse_root_into(&mut self, n: usize) {
        let child = self.nodes[n].clone();
        self.nodes[0].title = child.title;
        self.nodes[0].children = child.children.clone();
        self.nodes[0].page = child.page;
        for &c in &child.children {
            self.nodes[c].parent = Some(0);
        }
        if let Some(p) = child.page {
            self.page_node[p] = 0;
        }
        // Leave `n` as an orphan: nothing points at it any more.
        self.nodes[n].children.clear();
        self.nodes[n].page = None;
        self.nodes[n].parent = None;
        self.nodes[0].url = HOME_URL.into();
    }

    fn assign_section_urls(&mut self) {
        let mut used: HashSet<String> = self.nodes.iter().map(|n| n.url.clone()).filter(|u| !u.is_empty()).collect();
        for i in 1..self.nodes.len() {
            if !self.nodes[i].url.is_empty() || self.nodes[i].parent.is_none() {
                continue;
            }
            let chain: Vec<String> = self.ancestry(i).iter().skip(1).map(|&a| slugify(&self.nodes[a].title)).collect();
            // A title of no Latin letters (日本語, 한국어) slugs to nothing, and
            // its listing was `sections/.html`, a hidden file to some hosts:
            // the folder its pages share names it instead.
            let name = if chain.iter().any(String::is_empty) { self.folder_slug(i) } else { chain.join("--") };
            let base = format!("sections/{name}");
            let mut url = format!("{base}.html");
            let mut k = 1;
            while !used.insert(url.clone()) {
                url = format!("{base}-{k}.html");
                k += 1;
            }
            self.nodes[i].url = url;
        }
    }

    /// The folder every page under `n` is in, to `n`'s depth in the tree (the
    /// pages of 日本語 › ページ share `ja/pages/`, 日本語 is `ja`), as a slug;
    /// `section` when they share none.
    fn folder_slug(&self, n: usize) -> String {
        let depth = self.ancestry(n).len() - 1;
        let folders: Vec<Vec<&str>> = self
            .pages_under(n)
            .iter()
            .map(|&p| {
                let url = self.nodes[self.page_node[p]].url.as_str();
                url.rsplit_once('/').map_or(Vec::new(), |(dir, _)| dir.split('/').collect())
            })
            .collect();
        let Some(first) = folders.first() else { return "section".into() };
        let shared =
            (0..first.len().min(depth)).take_while(|&k| folders.iter().all(|f| f.get(k) == first.get(k))).count();
        let slug: Vec<String> = first[..shared].iter().map(|s| slugify(s)).filter(|s| !s.is_empty()).collect();
        if slug.is_empty() {
            "section".into()
        } else {
            slug.join("--")
        }
    }

    fn sort_children(&mut self) {
        for i in 0..self.nodes.len() {
            let mut children = std::mem::take(&mut self.nodes[i].children);
            let key = |c: usize| {
                let n = &self.nodes[c];
                (n.order.key(), n.children.is_empty(), n.title.to_lowercase())
            };
            children.sort_by(|&a, &b| {
                let (ka, kb) = (key(a), key(b));
                ka.0 .0.cmp(&kb.0 .0).then(ka.0 .1.total_cmp(&kb.0 .1)).then(ka.1.cmp(&kb.1)).then(ka.2.cmp(&kb.2))
            });
            self.nodes[i].children = children;
        }
    }

    /// Marks the top sections of a site split by language (k8s's `de/`, `en/`;
    /// Hugo's `content/de/`): each holds pages of one language, no two the same
    /// one (pages beside them at the top, an about page, may be in any), and
    /// the folders say so. `langs` is each page's language tag, `in_folder`
    /// whether its path is in a language's folder
    /// ([`crate::language::folder_tag`]). A reader of one language then meets its sections in
    /// the header, the sidebar and the pager, not the list of languages
    /// ([`NavTree::home_of`]). A language's section whose only child is a
    /// folder without a page (`de/pages/`, `de/docs/`) takes that folder's
    /// children: the language is what names them, the wrapper adds a
    /// breadcrumb and nothing else.
    pub fn find_language_homes(&mut self, langs: &[&str], in_folder: &[bool]) {
        let sections: Vec<usize> =
            self.nodes[0].children.iter().copied().filter(|&c| !self.nodes[c].children.is_empty()).collect();
        let mut languages: Vec<&str> = Vec::new();
        // Sections of one language each may still be topics (a German
        // `Studium`, an English `Research`): the folders must say so, all but
        // one (Docusaurus's default locale, outside `i18n/`).
        let mut said = 0;
        for &c in &sections {
            let pages = self.pages_under(c);
            let Some(&lang) = pages.first().and_then(|&p| langs.get(p)) else { return };
            if languages.contains(&lang) || pages.iter().any(|&p| langs.get(p) != Some(&lang)) {
                return;
            }
            languages.push(lang);
            said += usize::from(pages.iter().all(|&p| in_folder.get(p) == Some(&true)));
        }
        if sections.len() < 2 || said + 1 < sections.len() {
            return;
        }
        for (&h, lang) in sections.iter().zip(languages) {
            let mut from = self.way(h);
            from.extend(self.hoist_wrappers(h));
            // A folder's name (Docusaurus's `i18n`, `docs`) says less than the
            // language does; a page of its own names it as its author did.
            if self.nodes[h].page.is_none() {
                self.nodes[h].title = crate::i18n::native_name(lang);
            }
            let to = self.way(h);
            if from != to {
                self.shortcuts.push(Shortcut { from, to });
            }
        }
        self.language_homes = sections;
    }

    /// Gives `n` the children of its only child while that child is a folder
    /// without a page of its own; the folder is left an orphan. Returns the
    /// titles of the folders taken out of the way.
    fn hoist_wrappers(&mut self, n: usize) -> Vec<String> {
        let mut hoisted = Vec::new();
        while let [only] = self.nodes[n].children[..] {
            if self.nodes[only].page.is_some() || self.nodes[only].children.is_empty() {
                break;
            }
            let kids = std::mem::take(&mut self.nodes[only].children);
            for &k in &kids {
                self.nodes[k].parent = Some(n);
            }
            self.nodes[n].children = kids;
            self.nodes[only].parent = None;
            hoisted.push(self.nodes[only].title.clone());
        }
        hoisted
    }

    /// The titles of the way to `n` as a page's chain names it: the home
    /// node's only when it is the content's one root folder.
    fn way(&self, n: usize) -> Vec<String> {
        let path = self.ancestry(n);
        let from_root = usize::from(self.nodes[0].title.is_empty());
        path[from_root.min(path.len())..].iter().map(|&a| self.nodes[a].title.clone()).collect()
    }

    /// `path` (a page's chain: a search result's breadcrumbs) as the tree now
    /// reads it, a language home's wrapper folders out of it
    /// ([`NavTree::shortcuts`]).
    pub fn shorten(&self, path: &mut Vec<String>) {
        if let Some(s) = self.shortcuts.iter().find(|s| path.starts_with(&s.from)) {
            path.splice(..s.from.len(), s.to.iter().cloned());
        }
    }

    /// The node whose children are `n`'s top sections: its language's home
    /// on a site split by language ([`NavTree::find_language_homes`]), else
    /// the home node 0.
    pub fn home_of(&self, n: usize) -> usize {
        match self.ancestry(n).get(1) {
            Some(&h) if self.language_homes.contains(&h) => h,
            _ => 0,
        }
    }

    /// Nodes from the home node down to `n`, inclusive.
    pub fn ancestry(&self, n: usize) -> Vec<usize> {
        let mut chain = vec![n];
        let mut cur = n;
        while let Some(p) = self.nodes[cur].parent {
            chain.push(p);
            cur = p;
        }
        chain.reverse();
        chain
    }

    /// Nodes that are sections (have children), the home node excluded.
    pub fn sections(&self) -> impl Iterator<Item = usize> + '_ {
        (1..self.nodes.len()).filter(|&i| !self.nodes[i].children.is_empty() && self.nodes[i].parent.is_some())
    }

    /// Number of pages at or under node `n`.
    pub fn page_count(&self, n: usize) -> usize {
        let own = usize::from(self.nodes[n].page.is_some());
        own + self.nodes[n].children.iter().map(|&c| self.page_count(c)).sum::<usize>()
    }

    /// The pages (by page index) at or under node `n`, in the tree's order.
    pub fn pages_under(&self, n: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![n];
        while let Some(m) = stack.pop() {
            out.extend(self.nodes[m].page);
            stack.extend(self.nodes[m].children.iter().rev());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(pages: &[(&str, &str)]) -> NavTree {
        let refs: Vec<PageRef> = pages
            .iter()
            .map(|(chain, url)| PageRef { chain: chain.split(" / ").collect(), url, order: Order::Unordered })
            .collect();
        NavTree::build(&refs, &[])
    }

    fn titles(t: &NavTree, n: usize) -> Vec<&str> {
        t.nodes[n].children.iter().map(|&c| t.nodes[c].title.as_str()).collect()
    }

    #[test]
    fn the_sources_order_comes_before_titles() {
        // MkDocs nav, then numbers (frontmatter, categories), then sections before pages by title.
        let pages = [
            ("H / Zebra", "z.html", Order::Nav(0)),
            ("H / Apple", "a.html", Order::Weight(1.0)),
            ("H / Mango", "m.html", Order::Weight(-2.0)),
            ("H / Kiwi", "k.html", Order::Unordered),
            ("H / Folder / Inside", "f/i.html", Order::Unordered),
            ("H / Banana", "b.html", Order::Unordered),
        ];
        let refs: Vec<PageRef> =
            pages.iter().map(|(c, u, o)| PageRef { chain: c.split(" / ").collect(), url: u, order: *o }).collect();
        let t = NavTree::build(&refs, &[]);
        assert_eq!(titles(&t, 0), ["Zebra", "Mango", "Apple", "Folder", "Banana", "Kiwi"]);
        // A Docusaurus category's position places its folder.
        let folder = FolderRef { chain: vec!["H", "Folder"], order: Order::Weight(0.5) };
        let t = NavTree::build(&refs, &[folder]);
        assert_eq!(titles(&t, 0), ["Zebra", "Mango", "Folder", "Apple", "Banana", "Kiwi"]);
    }

    #[test]
    fn a_section_goes_where_its_first_nav_page_goes() {
        let pages = [
            ("H / B / x", "b/x.html", Order::Nav(1)),
            ("H / A", "a.html", Order::Nav(2)),
            ("H / C", "c.html", Order::Nav(0)),
        ];
        let refs: Vec<PageRef> =
            pages.iter().map(|(c, u, o)| PageRef { chain: c.split(" / ").collect(), url: u, order: *o }).collect();
        let t = NavTree::build(&refs, &[]);
        assert_eq!(titles(&t, 0), ["C", "B", "A"]);
        assert_eq!(Order::of_page(Some(3), Some(1.0)), Order::Nav(3));
        assert_eq!(Order::of_page(None, Some(1.0)), Order::Weight(1.0));
        assert_eq!(Order::of_page(None, Some(f64::NAN)), Order::Unordered);
    }

    /// k8s's layout: `de/pages/concepts/…`, `en/pages/…`, and a page at the root.
    fn by_language() -> (NavTree, Vec<&'static str>) {
        let t = tree(&[
            ("Deutsch / Pages / Konzepte / Pods", "de/pages/concepts/pods.html"),
            ("Deutsch / Pages / Tutorials / Start", "de/pages/tutorials/start.html"),
            ("English / Pages / Concepts / Pods", "en/pages/concepts/pods.html"),
            ("English / Pages / Concepts / Nodes", "en/pages/concepts/nodes.html"),
            ("English / Pages / Reference / Glossary", "en/pages/reference/glossary.html"),
            ("Source", "SOURCE.html"),
        ]);
        (t, vec!["de", "de", "en", "en", "en", "en"])
    }

    #[test]
    fn a_site_split_by_language_has_a_home_per_language_without_its_wrapper() {
        let (mut t, langs) = by_language();
        t.find_language_homes(&langs, &[true; 6]);
        assert_eq!(
            t.language_homes.iter().map(|&h| t.nodes[h].title.as_str()).collect::<Vec<_>>(),
            ["Deutsch", "English"]
        );
        let [de, en] = t.language_homes[..] else { panic!("two homes") };
        assert_eq!(titles(&t, de), ["Konzepte", "Tutorials"], "the `pages` folder is gone from the way");
        assert_eq!(titles(&t, en), ["Concepts", "Reference"]);
        let pods = t.page_node[0];
        let way: Vec<&str> = t.ancestry(pods).iter().map(|&n| t.nodes[n].title.as_str()).collect();
        assert_eq!(way, ["", "Deutsch", "Konzepte", "Pods"]);
        assert_eq!((t.home_of(pods), t.home_of(de), t.home_of(t.page_node[5]), t.home_of(0)), (de, de, 0, 0));
        assert_eq!(t.sections().filter(|&n| t.nodes[n].title == "Pages").count(), 0, "no listing page for it");
        assert_eq!(t.pages_under(0).len(), 6, "no page lost");
        // A result's breadcrumbs lose the wrapper as the site's do.
        let mut path: Vec<String> = ["Deutsch", "Pages", "Konzepte", "Pods"].map(String::from).to_vec();
        t.shorten(&mut path);
        assert_eq!(path, ["Deutsch", "Konzepte", "Pods"]);
        let mut source: Vec<String> = vec!["Source".into()];
        t.shorten(&mut source);
        assert_eq!(source, ["Source"]);
    }

    #[test]
    fn a_section_titled_in_another_script_is_named_by_its_folder() {
        let t = tree(&[
            ("日本語 / ページ / 概念 / ポッド", "ja/pages/concepts/pods.html"),
            ("日本語 / ページ / 概念 / ノード", "ja/pages/concepts/nodes.html"),
            ("한국어 / 개념 / 파드", "ko/concepts/pods.html"),
            ("English / Pods", "en/pods.html"),
            ("もの / a", "a.html"),
        ]);
        let url = |title: &str| t.nodes.iter().find(|n| n.title == title).map(|n| n.url.clone()).unwrap();
        assert_eq!(url("日本語"), "sections/ja.html", "the folder its pages share, to its depth");
        assert_eq!(url("概念"), "sections/ja--pages--concepts.html");
        assert_eq!(url("한국어"), "sections/ko.html");
        assert_eq!(url("English"), "sections/english.html", "a Latin title as before");
        assert_eq!(url("もの"), "sections/section.html", "pages at the top share no folder");
    }

    #[test]
    fn a_docusaurus_site_has_its_default_locale_and_each_translation_as_homes() {
        let mut t = tree(&[
            ("Docs / Guides / Install", "docs/guides/install.html"),
            ("Docs / Intro", "docs/intro.html"),
            (
                "I18n / De / Docusaurus plugin content docs / Current / Guides / Install",
                "i18n/de/a/b/guides/install.html",
            ),
            ("I18n / De / Docusaurus plugin content docs / Current / Intro", "i18n/de/a/b/intro.html"),
        ]);
        t.find_language_homes(&["en", "en", "de", "de"], &[false, false, true, true]);
        let [en, de] = t.language_homes[..] else { panic!("two homes") };
        assert_eq!((t.nodes[en].title.as_str(), t.nodes[de].title.as_str()), ("English", "Deutsch"));
        assert_eq!(titles(&t, de), ["Guides", "Intro"], "three wrapper folders hoisted");
        assert_eq!(titles(&t, en), ["Guides", "Intro"]);
        let mut path: Vec<String> =
            ["I18n", "De", "Docusaurus plugin content docs", "Current", "Intro"].map(String::from).to_vec();
        t.shorten(&mut path);
        assert_eq!(path, ["Deutsch", "Intro"]);
        let mut path: Vec<String> = ["Docs", "Intro"].map(String::from).to_vec();
        t.shorten(&mut path);
        assert_eq!(path, ["English", "Intro"]);
    }

    #[test]
    fn a_site_whose_sections_share_a_language_has_no_language_homes() {
        // Two English sections: topics, not languages.
        let (mut t, _) = by_language();
        t.find_language_homes(&["en"; 6], &[true; 6]);
        assert!(t.language_homes.is_empty());
        assert_eq!(titles(&t, t.nodes[0].children[0]), ["Pages"], "left as the source has it");
        // A German and two English sections.
        let mut t = tree(&[("Deutsch / a", "de/a.html"), ("English / b", "en/b.html"), ("Other / c", "o/c.html")]);
        t.find_language_homes(&["de", "en", "en"], &[true; 3]);
        assert!(t.language_homes.is_empty());
        // A section mixing two languages is none of them.
        let mut t = tree(&[("A / a", "a/a.html"), ("A / b", "a/b.html"), ("B / c", "b/c.html")]);
        t.find_language_homes(&["de", "en", "fr"], &[true; 3]);
        assert!(t.language_homes.is_empty());
        // A German section and an English one whose languages no folder says:
        // topics that happen to be written in one language each.
        let (mut t, langs) = by_language();
        t.find_language_homes(&langs, &[false; 6]);
        assert!(t.language_homes.is_empty());
    }

    #[test]
    fn single_root_becomes_home_and_sections_get_pages() {
        let t = tree(&[
            ("Help", "index.html"),
            ("Help / IT", "it/index.html"),
            ("Help / IT / Wi-Fi", "it/wifi.html"),
            ("Help / Campus / Parking / Permits", "campus/parking/permits.html"),
        ]);
        assert_eq!(t.nodes[0].title, "Help");
        assert_eq!(t.nodes[0].page, Some(0));
        assert_eq!(t.page_node[0], 0);
        let home_children: Vec<_> =
            t.nodes[0].children.iter().map(|&c| (t.nodes[c].title.as_str(), t.nodes[c].url.as_str())).collect();
        assert_eq!(home_children, vec![("Campus", "sections/campus.html"), ("IT", "it/index.html")]);
        let parking = t.page_node[3];
        let crumbs: Vec<_> = t.ancestry(parking).iter().map(|&n| t.nodes[n].url.clone()).collect();
        assert_eq!(
            crumbs,
            vec!["index.html", "sections/campus.html", "sections/campus--parking.html", "campus/parking/permits.html"]
        );
        assert_eq!(t.page_count(0), 4);
        assert_eq!(t.pages_under(0), [0, 3, 1, 2], "the tree's order: Campus, then IT");
        assert_eq!(t.pages_under(t.ancestry(parking)[1]), [3]);
        assert_eq!(t.sections().count(), 3);
    }

    #[test]
    fn several_roots_stay_under_a_generated_home() {
        let t = tree(&[("A / x", "a/x.html"), ("B / y", "b/y.html")]);
        assert_eq!(t.nodes[0].children.len(), 2);
        assert_eq!(t.nodes[0].page, None);
    }

    #[test]
    fn same_chain_twice_gives_two_nodes() {
        let t = tree(&[("H / FAQ", "a/faq.html"), ("H / FAQ", "b/faq.html")]);
        assert_ne!(t.page_node[0], t.page_node[1]);
        assert_eq!(t.nodes[t.page_node[1]].url, "b/faq.html");
    }
}
