//! The navigation tree: pages arranged by their ancestor chains.
//!
//! A scraped page says where it lives (`path: Help / IT / Wi-Fi`); the tree is the
//! union of those chains. A node is a page, a section (a chain prefix that other
//! pages hang under), or both (`it/index.md` titled "IT" with pages under "IT").
//! Sections that have no page of their own get a generated listing page at
//! `sections/<slug>.html`. When every chain starts with the same root (the knowledge
//! base's name), that root is the home page, `index.html`.

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
    /// Place among its siblings, from the page's frontmatter (`sidebar_position`,
    /// `weight`); nodes without one follow those with one.
    pub order: Option<f64>,
}

/// The tree. Node 0 is the home page.
#[derive(Debug, Clone)]
pub struct NavTree {
    pub nodes: Vec<Node>,
    /// Node of each page, by page index.
    pub page_node: Vec<usize>,
}

/// What the tree needs to know about a page.
pub struct PageRef<'a> {
    /// Ancestors root first, then the page's own title.
    pub chain: Vec<&'a str>,
    pub url: &'a str,
    /// `sidebar_position` / `weight` from the frontmatter.
    pub order: Option<f64>,
}

pub const HOME_URL: &str = "index.html";

impl NavTree {
    /// Builds the tree. Children are ordered by their pages' `order` where the
    /// frontmatter gives one (those first), then sections before pages, then by
    /// title.
    pub fn build(pages: &[PageRef<'_>]) -> NavTree {
        let mut nodes = vec![Node {
            title: String::new(),
            parent: None,
            children: Vec::new(),
            page: None,
            url: HOME_URL.into(),
            order: None,
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
                            order: None,
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

        // One common root (the knowledge base's name): it is the home page.
        let mut tree = NavTree { nodes, page_node };
        if tree.nodes[0].children.len() == 1 {
            let only = tree.nodes[0].children[0];
            tree.collapse_root_into(only);
        }
        tree.assign_section_urls();
        tree.sort_children();
        tree
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
            let base = format!("sections/{}", chain.join("--"));
            let mut url = format!("{base}.html");
            let mut k = 1;
            while !used.insert(url.clone()) {
                url = format!("{base}-{k}.html");
                k += 1;
            }
            self.nodes[i].url = url;
        }
    }

    fn sort_children(&mut self) {
        for i in 0..self.nodes.len() {
            let mut children = std::mem::take(&mut self.nodes[i].children);
            let key = |c: usize| {
                let n = &self.nodes[c];
                (n.order.unwrap_or(f64::INFINITY), n.children.is_empty(), n.title.to_lowercase())
            };
            children.sort_by(|&a, &b| {
                let (ka, kb) = (key(a), key(b));
                ka.0.total_cmp(&kb.0).then(ka.1.cmp(&kb.1)).then(ka.2.cmp(&kb.2))
            });
            self.nodes[i].children = children;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(pages: &[(&str, &str)]) -> NavTree {
        let refs: Vec<PageRef> = pages
            .iter()
            .map(|(chain, url)| PageRef { chain: chain.split(" / ").collect(), url, order: None })
            .collect();
        NavTree::build(&refs)
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
