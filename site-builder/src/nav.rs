//! The navigation around a page: which part of the tree its sidebar shows, the
//! pages before and after it in its section, and how many top sections fit on
//! the header's row.
//!
//! A sidebar lists the whole tree when the site is small, else the page's
//! top-level section only: every page of a 700-page site carrying 700 links
//! would weigh more than most articles. A section too big even for that
//! ([`SECTION_MAX`] nodes) shows the branches around the page opened, and its
//! other sub-sections as links to their own listing pages.

use crate::render::relative_url;
use crate::site::{Link, Pager, SideNode, Sidebar};
use crate::tree::NavTree;

/// A site of at most this many nodes shows all of them in every sidebar.
pub const WHOLE_TREE_MAX: usize = 80;

/// A top-level section of more nodes shows only the current page's branches in full.
pub const SECTION_MAX: usize = 250;

/// What the header row can hold, in estimated pixels at its font size; a title
/// costs [`CHAR_PX`] a character (a little more than system fonts take) plus
/// [`ITEM_PX`] of padding. The row of a 1280 px window is 1152 px; a narrower
/// window scrolls it, with a fade at its end (style.css).
const ROW_PX: usize = 1060;
const CHAR_PX: usize = 8;
const ITEM_PX: usize = 30;

/// Nodes at or under `n`.
fn size(tree: &NavTree, n: usize) -> usize {
    1 + tree.nodes[n].children.iter().map(|&c| size(tree, c)).sum::<usize>()
}

/// The top-level section `node` is in (the node itself when it is one);
/// `None` for the home node. On a site split by language the top sections
/// are those of `node`'s language ([`NavTree::home_of`]).
pub fn top_section(tree: &NavTree, node: usize) -> Option<usize> {
    // A language's home is the ancestry's second node, the site's its first.
    let below = if tree.home_of(node) == 0 { 1 } else { 2 };
    tree.ancestry(node).get(below).copied()
}

/// The sidebar of the page or section at `node`, or `None` when it would list
/// nothing but the page itself. `home_title` names the whole site's sidebar.
pub fn sidebar<'a>(tree: &'a NavTree, node: usize, home_title: &'a str) -> Option<Sidebar<'a>> {
    // A language's home on a site split by language is the whole of what its
    // reader browses.
    let home = tree.home_of(node);
    let whole = size(tree, home) <= WHOLE_TREE_MAX;
    let root = if whole { home } else { top_section(tree, node)? };
    if tree.nodes[root].children.is_empty() {
        return None;
    }
    let at = Place { tree, current: node, path: tree.ancestry(node), full: whole || size(tree, root) <= SECTION_MAX };
    let entries = tree.nodes[root].children.iter().map(|&c| at.entry(c)).collect();
    let title = if root == 0 { home_title } else { tree.nodes[root].title.as_str() };
    Some(Sidebar { title, url: at.url(root), current: root == node, whole: root == home, nodes: entries })
}

/// Where a sidebar is shown: the page, the way to it, whether its section is
/// listed in full.
struct Place<'a> {
    tree: &'a NavTree,
    current: usize,
    path: Vec<usize>,
    full: bool,
}

impl<'a> Place<'a> {
    /// A node's URL from the current page.
    fn url(&self, n: usize) -> String {
        relative_url(&self.tree.nodes[self.current].url, &self.tree.nodes[n].url)
    }

    /// One entry and, when it is shown in full or lies on the way to the
    /// current page, the entries under it.
    fn entry(&self, n: usize) -> SideNode<'a> {
        let on_path = self.path.contains(&n);
        let node = &self.tree.nodes[n];
        let children =
            if self.full || on_path { node.children.iter().map(|&c| self.entry(c)).collect() } else { Vec::new() };
        SideNode {
            title: &node.title,
            url: self.url(n),
            current: n == self.current,
            open: on_path && !node.children.is_empty(),
            is_section: !node.children.is_empty(),
            children,
        }
    }
}

/// The reading order of a top-level section: the section, then each of its
/// entries depth first, as its sidebar lists them.
fn reading_order(tree: &NavTree, n: usize, out: &mut Vec<usize>) {
    out.push(n);
    for &c in &tree.nodes[n].children {
        reading_order(tree, c, out);
    }
}

/// The pages before and after `node` in its top-level section's reading order.
pub fn pager(tree: &NavTree, node: usize) -> Pager<'_> {
    let Some(top) = top_section(tree, node) else { return Pager { prev: None, next: None } };
    let mut order = Vec::new();
    reading_order(tree, top, &mut order);
    let link = |n: usize| Link { title: &tree.nodes[n].title, url: &tree.nodes[n].url };
    let at = order.iter().position(|&n| n == node);
    Pager {
        prev: at.and_then(|i| i.checked_sub(1)).map(|i| link(order[i])),
        next: at.and_then(|i| order.get(i + 1)).map(|&n| link(n)),
    }
}

/// How many of the top sections fit on the header's row; the rest go under "More".
pub fn top_row_fit(titles: &[&str]) -> usize {
    let width = |t: &&str| t.chars().count() * CHAR_PX + ITEM_PX;
    if titles.iter().map(width).sum::<usize>() <= ROW_PX {
        return titles.len();
    }
    // Room for the "More (N)" button itself.
    let budget = ROW_PX - 110;
    let mut used = 0;
    titles
        .iter()
        .take_while(|t| {
            used += width(t);
            used <= budget
        })
        .count()
        .max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Order, PageRef};

    fn tree(chains: &[&str]) -> NavTree {
        let urls: Vec<String> = chains.iter().map(|c| format!("{}.html", c.replace(" / ", "/"))).collect();
        let refs: Vec<PageRef> = chains
            .iter()
            .zip(&urls)
            .map(|(c, u)| PageRef { chain: c.split(" / ").collect(), url: u, order: Order::Unordered })
            .collect();
        NavTree::build(&refs, &[])
    }

    fn titles(nodes: &[SideNode<'_>]) -> Vec<String> {
        nodes.iter().map(|n| format!("{}{}", n.title, if n.current { "*" } else { "" })).collect()
    }

    #[test]
    fn a_small_site_shows_its_whole_tree_with_the_way_to_the_page_open() {
        let t = tree(&["H", "H / A", "H / A / a1", "H / A / a2", "H / B", "H / B / b1"]);
        let page = t.page_node[2];
        let s = sidebar(&t, page, "Help").unwrap();
        assert_eq!((s.title, s.url.as_str()), ("Help", "../../index.html"), "URLs are relative to the page");
        assert_eq!(titles(&s.nodes), ["A", "B"]);
        assert!(s.nodes[0].open && !s.nodes[1].open);
        assert_eq!(titles(&s.nodes[0].children), ["a1*", "a2"]);
        assert_eq!(titles(&s.nodes[1].children), ["b1"], "closed sections still list their pages");
        assert!(sidebar(&tree(&["H"]), 0, "Help").is_none(), "one page: nothing to navigate");
    }

    #[test]
    fn a_reader_of_one_language_navigates_its_sections() {
        let mut t = tree(&[
            "Deutsch / Pages / Konzepte / Pods",
            "Deutsch / Pages / Konzepte / Knoten",
            "Deutsch / Pages / Tutorials / Start",
            "English / Pages / Concepts / Pods",
        ]);
        t.find_language_homes(&["de", "de", "de", "en"], &[true; 4]);
        let knoten = t.page_node[1];
        let top = top_section(&t, knoten).unwrap();
        assert_eq!(t.nodes[top].title, "Konzepte", "the language's section, not the language");
        let s = sidebar(&t, knoten, "Help").unwrap();
        assert_eq!((s.title, s.whole), ("Deutsch", true), "the whole of the reader's language");
        assert_eq!(titles(&s.nodes), ["Konzepte", "Tutorials"]);
        let p = pager(&t, knoten);
        assert_eq!(p.prev.map(|l| l.title), Some("Konzepte"));
        assert_eq!(p.next.map(|l| l.title), Some("Pods"), "within Konzepte, not into Tutorials");
        let de = t.language_homes[0];
        assert_eq!(top_section(&t, de), None, "a language's home is no section of itself");
    }

    #[test]
    fn a_big_site_shows_the_pages_section_and_a_huge_section_its_branch() {
        let mut chains = vec!["H".to_string()];
        for s in 0..3 {
            for sub in 0..10 {
                for p in 0..9 {
                    chains.push(format!("H / S{s} / Sub{sub:02} / p{p}"));
                }
            }
        }
        let refs: Vec<&str> = chains.iter().map(String::as_str).collect();
        let t = tree(&refs);
        let page = t.page_node[1]; // H / S0 / Sub00 / p0
        let s = sidebar(&t, page, "Help").unwrap();
        assert_eq!(s.title, "S0", "only the page's top-level section");
        assert_eq!(s.nodes.len(), 10);
        assert_eq!(
            s.nodes.iter().map(|n| n.children.len()).sum::<usize>(),
            90,
            "a section of 101 nodes is shown in full"
        );
        // The same section grown past SECTION_MAX: other branches become plain links.
        let mut chains = vec!["H".to_string(), "H / Other / x".into()];
        chains.extend((0..30).flat_map(|sub| (0..9).map(move |p| format!("H / Big / Sub{sub:02} / p{p}"))));
        let refs: Vec<&str> = chains.iter().map(String::as_str).collect();
        let t = tree(&refs);
        let page = t.page_node[2];
        let s = sidebar(&t, page, "Help").unwrap();
        assert_eq!(s.nodes.len(), 30);
        assert_eq!(titles(&s.nodes[0].children)[0], "p0*");
        assert!(s.nodes[1..].iter().all(|n| n.children.is_empty() && n.is_section && !n.open));
    }

    #[test]
    fn previous_and_next_follow_the_sections_reading_order() {
        let t = tree(&["H", "H / A", "H / A / a1", "H / A / a1 / deep", "H / A / a2", "H / B"]);
        let at = |i: usize| {
            let p = pager(&t, t.page_node[i]);
            (p.prev.map(|l| l.title.to_string()), p.next.map(|l| l.title.to_string()))
        };
        assert_eq!(at(1), (None, Some("a1".into())));
        assert_eq!(at(2), (Some("A".into()), Some("deep".into())));
        assert_eq!(at(3), (Some("a1".into()), Some("a2".into())));
        assert_eq!(at(4), (Some("deep".into()), None), "never into the next top-level section");
        assert_eq!(at(5), (None, None));
        assert_eq!(at(0), (None, None), "the home page has no section");
    }

    #[test]
    fn the_top_row_keeps_what_fits() {
        assert_eq!(top_row_fit(&["IT", "Campus", "Finance"]), 3);
        let many = ["Accounts", "Applications", "Cloud Services", "Computing", "Data", "Sensitive data", "Support"];
        let mut titles = many.to_vec();
        titles.extend(["Additional support materials", "Contact", "Frequently Asked Questions", "Tutorials"]);
        let fit = top_row_fit(&titles);
        assert!((5..titles.len()).contains(&fit), "{fit}");
        assert_eq!(top_row_fit(&["x".repeat(500).as_str()]), 1, "at least one stays on the row");
    }
}
