//! A web page → the parts `ingest web` keeps: its title, its breadcrumb, and its
//! main content as well-formed XHTML that [`crate::storage::to_markdown`] (the one
//! owner of the Markdown conversion) turns into Markdown.
//!
//! Pages are parsed by scraper on html5ever (the WHATWG algorithm, so any tag soup
//! a help centre serves becomes the tree a browser builds), and [`Dom`], a small
//! arena over scraper's tree, numbers its nodes.
//! The main content is `<main>` (or `role="main"`), else the page's only
//! `<article>`, else the smallest element that holds most of the page's text that
//! is not link text (navigation is mostly links, an article mostly not). Inside it,
//! what is not content goes, as the CSS selectors of `noise.css` name it: scripts,
//! styles, forms, navigation, footers, and elements whose id or class names a
//! cookie or consent banner, a sidebar, a table of contents, the article's meta
//! line ("Last updated …"), its tags, related articles, or the generated listing of
//! a section's pages.

use std::cell::OnceCell;
use std::sync::OnceLock;

/// A fetched page's bytes as text, in the encoding the page declares: a byte-order
/// mark first, then the `charset` of the `Content-Type` header, then a `<meta
/// charset>` or `<meta http-equiv="Content-Type">` in the first 1,024 bytes (the
/// order of the WHATWG encoding sniffing algorithm), else UTF-8. Bytes that are not
/// valid in the encoding become U+FFFD; nothing fails.
pub fn decode(body: &[u8], content_type: Option<&str>) -> String {
    let label_of = |s: &str| -> Option<&'static encoding_rs::Encoding> {
        let lower = s.to_ascii_lowercase();
        let at = lower.find("charset")?;
        let rest = lower[at + "charset".len()..].trim_start().strip_prefix('=')?.trim_start();
        let rest = rest.trim_start_matches(['"', '\'']);
        let end =
            rest.find(|c: char| matches!(c, '"' | '\'' | ';' | '>' | '/') || c.is_whitespace()).unwrap_or(rest.len());
        encoding_rs::Encoding::for_label(&rest.as_bytes()[..end])
    };
    let declared = content_type.and_then(label_of).or_else(|| {
        let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
        // Only inside a <meta …> tag: "charset=" in a script or the text means nothing.
        head.match_indices("<meta").find_map(|(at, _)| {
            let tag = &head[at..];
            let tag = &tag[..tag.find('>').map_or(tag.len(), |e| e + 1)];
            label_of(tag)
        })
    });
    // A page cannot declare itself UTF-16 in its own ASCII-compatible bytes (WHATWG).
    let declared =
        declared.map(|e| if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE { encoding_rs::UTF_8 } else { e });
    // `decode` lets a byte-order mark win over the declared encoding.
    let (text, _, _) = declared.unwrap_or(encoding_rs::UTF_8).decode(body);
    text.into_owned()
}

/// A node of scraper's tree (ego_tree's `NodeId`), named through the handle
/// scraper's tree sink gives html5ever, so that ingest needs no ego_tree of its own.
type TreeId = <scraper::HtmlTreeSink as html5ever::interface::TreeSink>::Handle;

#[derive(Debug, Clone)]
struct Node {
    parent: Option<usize>,
    children: Vec<usize>,
    /// The same node in [`Dom::html`]: its name, attributes and text are read there,
    /// and the selectors of `noise.css` matched.
    tree: TreeId,
}

/// A parsed page: scraper's tree, and an arena over it whose `usize` ids (in
/// document order) index the tables of the passes below. Node 0 is the document.
#[derive(Debug)]
pub struct Dom {
    html: scraper::Html,
    nodes: Vec<Node>,
    /// [`is_noise`] of each node, once asked: both the content measure and the
    /// writer ask, and matching it means trying every selector of `noise.css`.
    noise: Vec<OnceCell<bool>>,
}

impl Dom {
    /// Parses an HTML document.
    pub fn parse(html: &str) -> Dom {
        let html = scraper::Html::parse_document(html);
        let root = html.tree.root();
        let mut nodes = vec![Node { parent: None, children: Vec::new(), tree: root.id() }];
        // One walk in document order, without recursion: (a node, its parent's id).
        let mut stack: Vec<_> = root.children().rev().map(|c| (c, 0)).collect();
        while let Some((n, parent)) = stack.pop() {
            let id = nodes.len();
            nodes.push(Node { parent: Some(parent), children: Vec::new(), tree: n.id() });
            nodes[parent].children.push(id);
            stack.extend(n.children().rev().map(|c| (c, id)));
        }
        let noise = vec![OnceCell::new(); nodes.len()];
        Dom { html, nodes, noise }
    }

    /// Node `id` in scraper's tree. Comments, doctypes, processing instructions and
    /// a template's contents (a fragment) are never content.
    fn tree_node(&self, id: usize) -> Option<&scraper::Node> {
        self.html.tree.get(self.nodes[id].tree).map(|n| n.value())
    }

    /// Node `id` as an element selectors can be matched against.
    fn element(&self, id: usize) -> Option<scraper::ElementRef<'_>> {
        self.html.tree.get(self.nodes[id].tree).and_then(scraper::ElementRef::wrap)
    }
}

/// Read access to a parsed page, after parsing.
impl Dom {
    fn tag(&self, id: usize) -> Option<String> {
        self.tree_node(id)?.as_element().map(|e| e.name().to_string())
    }

    fn attr(&self, id: usize, key: &str) -> Option<String> {
        let e = self.tree_node(id)?.as_element()?;
        e.attrs().find(|&(name, _)| name == key).map(|(_, value)| value.to_string())
    }

    fn children(&self, id: usize) -> Vec<usize> {
        self.nodes[id].children.clone()
    }

    fn text_node(&self, id: usize) -> Option<String> {
        self.tree_node(id)?.as_text().map(|t| t.text.to_string())
    }

    /// Every element under `id` (itself included), depth first, without recursion
    /// (a page may nest deeper than the stack allows).
    fn descendants(&self, id: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            out.push(n);
            let children = self.children(n);
            stack.extend(children.into_iter().rev());
        }
        out
    }

    fn find(&self, from: usize, pred: impl Fn(usize) -> bool) -> Vec<usize> {
        self.descendants(from).into_iter().filter(|&n| pred(n)).collect()
    }

    /// The text under `id`, whitespace collapsed.
    pub fn text(&self, id: usize) -> String {
        let mut out = String::new();
        for n in self.descendants(id) {
            if let Some(t) = self.text_node(n) {
                out.push_str(&t);
                out.push(' ');
            }
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// What is never content, as CSS selectors: data to read and edit without Rust.
const NOISE_CSS: &str = include_str!("noise.css");

/// The selectors of `noise.css`, parsed once.
fn noise_selectors() -> &'static scraper::Selector {
    static NOISE: OnceLock<scraper::Selector> = OnceLock::new();
    NOISE.get_or_init(|| {
        scraper::Selector::parse(NOISE_CSS).expect("noise.css is a valid selector list (the `noise_css_parses` test)")
    })
}

/// Whether an element is never content, wherever it is: it matches `noise.css`,
/// or it is a heading's permalink known by its text alone (`¶` in MkDocs and
/// Sphinx, `#` in ours), which a selector cannot see.
fn is_noise(dom: &Dom, id: usize) -> bool {
    *dom.noise[id].get_or_init(|| {
        let Some(element) = dom.element(id) else { return false };
        noise_selectors().matches(&element)
            || element.value().name() == "a" && matches!(dom.text(id).as_str(), "#" | "¶" | "§" | "🔗")
    })
}

/// For every node, the length of the text under it that is not inside a link,
/// noise skipped: one pass, children before parents, without recursion.
fn content_lengths(dom: &Dom) -> Vec<usize> {
    let n = dom.nodes.len();
    let mut len = vec![0usize; n];
    // Pre-order with the "inside a link" flag, then sums in reverse pre-order.
    let mut order = Vec::with_capacity(n);
    let mut stack = vec![(0usize, false)];
    while let Some((id, link)) = stack.pop() {
        order.push(id);
        if let Some(t) = dom.text_node(id) {
            if !link {
                len[id] = t.split_whitespace().map(|w| w.chars().count() + 1).sum();
            }
            continue;
        }
        if is_noise(dom, id) {
            continue;
        }
        let link = link || dom.tag(id).is_some_and(|t| t == "a");
        stack.extend(dom.children(id).into_iter().map(|c| (c, link)));
    }
    for &id in order.iter().rev() {
        if let Some(p) = dom.nodes[id].parent {
            len[p] += len[id];
        }
    }
    len
}

/// The element that holds the page's main content.
pub fn main_content(dom: &Dom) -> usize {
    let len = content_lengths(dom);
    let body = dom.find(0, |n| dom.tag(n).is_some_and(|t| t == "body")).first().copied().unwrap_or(0);
    let mains =
        dom.find(body, |n| dom.tag(n).is_some_and(|t| t == "main") || dom.attr(n, "role").is_some_and(|r| r == "main"));
    if let Some(&m) = mains.iter().find(|&&m| len[m] > 0) {
        return m;
    }
    let articles = dom.find(body, |n| dom.tag(n).is_some_and(|t| t == "article"));
    if articles.len() == 1 {
        return articles[0];
    }
    // Descend while one child holds 60 % of the content: navigation, headers and
    // footers are left behind, the article is where the text concentrates.
    let mut at = body;
    loop {
        // Only into containers: a long first paragraph must not become the page.
        let container = |c: usize| {
            dom.tag(c).is_some_and(|t| matches!(t.as_str(), "div" | "section" | "article" | "main" | "td" | "center"))
        };
        let best = dom.children(at).into_iter().filter(|&c| container(c)).map(|c| (len[c], c)).max();
        match best {
            Some((l, c)) if len[at] > 0 && l * 10 >= len[at] * 6 => at = c,
            _ => return at,
        }
    }
}

/// What `ingest web` keeps of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extracted {
    /// The page's `<h1>` (in the main content, else anywhere), else its `<title>`
    /// without a trailing ` | Site name`.
    pub title: String,
    /// The breadcrumb's entries, when the page has one, without the page itself.
    pub breadcrumb: Vec<String>,
    /// The main content as XHTML for [`crate::storage::to_markdown`], the title's
    /// own `<h1>` left out (the writer puts the title first).
    pub xhtml: String,
}

/// Takes the parts of a page; `link` rewrites each `<a href>` as written (to the
/// relative path of another ingested page, an absolute URL, or `None` to keep
/// only the words).
pub fn extract(dom: &Dom, link: &dyn Fn(&str) -> Option<String>) -> Extracted {
    let root = main_content(dom);
    let h1 = |from: usize| dom.find(from, |n| dom.tag(n).is_some_and(|t| t == "h1")).first().copied();
    let title_h1 = h1(root).or_else(|| h1(0));
    let title = match title_h1.map(|h| dom.text(h)).filter(|t| !t.is_empty()) {
        Some(t) => t,
        None => {
            let t = dom.find(0, |n| dom.tag(n).is_some_and(|t| t == "title")).first().map(|&n| dom.text(n));
            let t = t.unwrap_or_default();
            // "Connecting to eduroam | IT Help Centre" → the page's part.
            [" | ", " – ", " — ", " - "]
                .iter()
                .find_map(|sep| t.rsplit_once(sep).map(|(a, _)| a.trim().to_string()))
                .filter(|a| !a.is_empty())
                .unwrap_or(t)
        }
    };
    let crumbs = dom.find(0, |n| {
        let names = format!(
            "{} {} {}",
            dom.attr(n, "id").unwrap_or_default(),
            dom.attr(n, "class").unwrap_or_default(),
            dom.attr(n, "aria-label").unwrap_or_default()
        )
        .to_ascii_lowercase();
        names.contains("breadcrumb")
    });
    let breadcrumb = crumbs
        .first()
        .map(|&b| {
            let items: Vec<usize> = dom.find(b, |n| dom.tag(n).is_some_and(|t| t == "li"));
            let items = if items.is_empty() { dom.find(b, |n| dom.tag(n).is_some_and(|t| t == "a")) } else { items };
            let mut v: Vec<String> = items.into_iter().map(|n| dom.text(n)).filter(|t| !t.is_empty()).collect();
            if v.last().is_some_and(|l| *l == title) {
                v.pop();
            }
            v
        })
        .unwrap_or_default();
    let mut xhtml = String::new();
    emit(dom, root, title_h1, link, &mut xhtml);
    Extracted { title, breadcrumb, xhtml }
}

fn escape_text(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Characters XML 1.0 does not allow.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => out.push(' '),
            '\u{FFFE}' | '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
}

/// The admonition kind the converter knows for a class list (MkDocs Material,
/// Docusaurus, Bootstrap alerts), if the element is one.
fn admonition(dom: &Dom, id: usize) -> Option<&'static str> {
    let class = dom.attr(id, "class")?.to_ascii_lowercase();
    let words: Vec<&str> = class.split_whitespace().collect();
    if !words.iter().any(|w| matches!(*w, "admonition" | "alert" | "callout"))
        && dom.tag(id).as_deref() != Some("details")
    {
        return None;
    }
    let kind = words.iter().find_map(|w| match w.trim_start_matches("alert-").trim_start_matches("admonition-") {
        "warning" | "caution" | "attention" | "danger" | "error" | "failure" | "bug" => Some("warning"),
        "tip" | "hint" | "success" | "important" => Some("tip"),
        "info" | "abstract" | "summary" | "question" | "example" | "quote" => Some("info"),
        "note" | "seealso" => Some("note"),
        _ => None,
    });
    Some(kind.unwrap_or("note"))
}

/// What [`emit`] has left to do, last first.
enum Step {
    /// Write a node and push what follows from it.
    Open(usize),
    /// Close an element written open.
    Close(&'static str),
    /// Write text as it is (markup).
    Raw(String),
}

/// Writes the content under `id` as XHTML the storage converter reads: the tags it
/// knows kept, block containers as `div`, other inline tags as `span`, admonitions
/// as its note/info/tip/warning macros. Iterative: nesting depth is the page's.
fn emit(dom: &Dom, id: usize, skip: Option<usize>, link: &dyn Fn(&str) -> Option<String>, out: &mut String) {
    let mut stack = vec![Step::Open(id)];
    while let Some(step) = stack.pop() {
        let n = match step {
            Step::Close(tag) => {
                out.push_str("</");
                out.push_str(tag);
                out.push('>');
                continue;
            }
            Step::Raw(s) => {
                out.push_str(&s);
                continue;
            }
            Step::Open(n) => n,
        };
        if let Some(t) = dom.text_node(n) {
            escape_text(&t, out);
            continue;
        }
        if Some(n) == skip || (n != id && is_noise(dom, n)) {
            continue;
        }
        let Some(tag) = dom.tag(n) else {
            // The document node: its children.
            stack.extend(dom.children(n).into_iter().rev().map(Step::Open));
            continue;
        };
        match admonition(dom, n) {
            Some(kind) => open_admonition(dom, n, kind, out, &mut stack),
            None => open_element(dom, n, &tag, link, out, &mut stack),
        }
    }
}

/// Writes the start of admonition `n` as the converter's `kind` macro, with its
/// title, and pushes its other children and the macro's end.
fn open_admonition(dom: &Dom, n: usize, kind: &str, out: &mut String, stack: &mut Vec<Step>) {
    // The title is the first child element that names itself one.
    let is_title = |c: usize| {
        dom.attr(c, "class").is_some_and(|cl| cl.contains("title") || cl.contains("heading"))
            || dom.tag(c).is_some_and(|t| t == "summary")
    };
    let children = dom.children(n);
    let title = children.iter().copied().find(|&c| is_title(c));
    out.push_str("<ac:structured-macro ac:name=\"");
    out.push_str(kind);
    out.push_str("\">");
    if let Some(t) = title {
        out.push_str("<ac:parameter ac:name=\"title\">");
        escape_text(&dom.text(t), out);
        out.push_str("</ac:parameter>");
    }
    out.push_str("<ac:rich-text-body>");
    stack.push(Step::Raw("</ac:rich-text-body></ac:structured-macro>".into()));
    stack.extend(children.into_iter().rev().filter(|&c| Some(c) != title).map(Step::Open));
}

/// Writes the start of element `n` (its tag `tag`) and pushes its children and
/// its end: `br` and `hr` as themselves, images not at all, a link as `link`
/// rewrites its `href` (a `span` when it keeps only the words), any other element
/// as [`storage_tag`] names it.
fn open_element(
    dom: &Dom,
    n: usize,
    tag: &str,
    link: &dyn Fn(&str) -> Option<String>,
    out: &mut String,
    stack: &mut Vec<Step>,
) {
    let t = match tag {
        "br" | "hr" => {
            out.push_str(if tag == "br" { "<br/>" } else { "<hr/>" });
            return;
        }
        // Images are dropped, as on the Confluence path; their alt text is not
        // kept either (it is rarely written for readers of text).
        "img" => return,
        "a" => match dom.attr(n, "href").and_then(|h| link(&h)) {
            Some(href) => {
                out.push_str("<a href=\"");
                escape_text(&href, out);
                out.push_str("\">");
                stack.push(Step::Close("a"));
                stack.extend(dom.children(n).into_iter().rev().map(Step::Open));
                return;
            }
            None => "span",
        },
        _ => storage_tag(tag).unwrap_or("span"),
    };
    out.push('<');
    out.push_str(t);
    out.push('>');
    stack.push(Step::Close(t));
    stack.extend(dom.children(n).into_iter().rev().map(Step::Open));
}

/// The tag the storage converter knows for an HTML tag: the same, its synonym
/// (`b` → `strong`, `kbd` → `code`, …) or `div` for a block container; `None` for
/// the rest (inline, written as `span`).
fn storage_tag(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "h1" => "h1",
        "h2" => "h2",
        "h3" => "h3",
        "h4" => "h4",
        "h5" => "h5",
        "h6" => "h6",
        "p" => "p",
        "ul" => "ul",
        "ol" => "ol",
        "li" => "li",
        "table" => "table",
        "thead" => "thead",
        "tbody" => "tbody",
        "tfoot" => "tfoot",
        "tr" => "tr",
        "th" => "th",
        "td" => "td",
        "pre" => "pre",
        "blockquote" => "blockquote",
        "strong" | "b" => "strong",
        "em" | "i" => "em",
        "s" | "del" | "strike" => "del",
        "code" | "kbd" | "samp" | "tt" => "code",
        "div" | "section" | "article" | "main" | "figure" | "figcaption" | "header" | "footer" | "aside"
        | "details" | "summary" | "dl" | "dt" | "dd" | "address" | "center" | "fieldset" => "div",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{to_markdown, TitleLinks};

    const MKDOCS: &str = r##"<!doctype html>
<html><head><title>Connecting to eduroam - IT Help</title><script>var x = "<p>not text</p>";</script></head>
<body>
<div class="cookie-banner">We use cookies. <button>Accept</button></div>
<header class="md-header"><a href="/">IT Help</a><nav><a href="/wifi/">Wi-Fi</a> <a href="/vpn/">VPN</a></nav></header>
<nav class="md-nav" aria-label="Breadcrumb"><ol class="breadcrumb"><li><a href="/">Home</a></li><li><a href="/network/">Network</a></li><li>Connecting to eduroam</li></ol></nav>
<div class="md-main"><div class="md-sidebar"><ul><li><a href="/a/">A</a></li><li><a href="/b/">B</a></li></ul></div>
<main class="md-content"><article>
<h1>Connecting to eduroam</h1>
<p>Eduroam gives you <strong>secure</strong> Wi-Fi on every campus. See <a href="../vpn/">the VPN page</a> or <a href="https://eduroam.org/">eduroam.org</a>.</p>
<div class="admonition warning"><p class="admonition-title">Before you start</p><p>Update your operating system & browser.</p></div>
<h2 id="steps">Steps <a class="headerlink" href="#steps">¶</a></h2>
<ol><li>Open the settings<br>of your device.</li><li>Choose <code>eduroam</code>.</li></ol>
<table><thead><tr><th>System</th><th>Method</th></tr></thead><tbody><tr><td>Linux</td><td>PEAP</td></tr></tbody></table>
<pre><code>nmcli con up eduroam</code></pre>
<img src="wifi.png" alt="screenshot">
</article></main></div>
<footer class="md-footer">© University. <a href="/privacy/">Privacy</a></footer>
</body></html>"##;

    fn md(e: &Extracted) -> String {
        to_markdown(&e.xhtml, &TitleLinks).unwrap_or_else(|err| panic!("{err}\n{}", e.xhtml))
    }

    #[test]
    fn a_help_centre_page_keeps_its_content_and_loses_its_chrome() {
        let dom = Dom::parse(MKDOCS);
        let rewrite = |href: &str| match href {
            "../vpn/" => Some("vpn.md".to_string()),
            h if h.starts_with("https://") => Some(h.to_string()),
            _ => None,
        };
        let e = extract(&dom, &rewrite);
        assert_eq!(e.title, "Connecting to eduroam");
        assert_eq!(e.breadcrumb, vec!["Home".to_string(), "Network".to_string()]);
        let md = md(&e);
        assert!(!md.contains("# Connecting to eduroam"), "the writer puts the title: {md}");
        assert!(md.contains("Eduroam gives you **secure** Wi-Fi on every campus."), "{md}");
        assert!(md.contains("[the VPN page](vpn.md)"), "{md}");
        assert!(md.contains("[eduroam.org](https://eduroam.org/)"), "{md}");
        assert!(md.contains("!!! warning \"Before you start\""), "{md}");
        assert!(md.contains("    Update your operating system & browser."), "{md}");
        assert!(md.contains("## Steps\n"), "the permalink is dropped: {md}");
        assert!(md.contains("Open the settings\\\n    of your device."), "{md}");
        assert!(md.contains("`eduroam`"), "{md}");
        assert!(md.contains("| System | Method |"), "{md}");
        assert!(md.contains("nmcli con up eduroam"), "{md}");
        for chrome in ["cookies", "Accept", "Privacy", "IT Help", "Wi-Fi</a>", "[A]", "not text", "screenshot", "Home"]
        {
            assert!(!md.contains(chrome), "{chrome:?} in {md}");
        }
    }

    #[test]
    fn without_main_the_text_decides() {
        let html = r#"<html><head><title>Printing | Help Desk</title></head><body>
<div id="top"><a href="/">Help Desk</a> <a href="/a">Accounts</a> <a href="/p">Printing</a> <a href="/w">Wi-Fi</a></div>
<div id="wrap"><div class="left"><a href="/x">x</a> <a href="/y">y</a></div>
<div class="body"><p>To print from your laptop, install the campus print driver and sign in with your university account. Jobs wait in the queue for 24 hours.</p><p>Colour printing costs 20 cents a page.</p></div></div>
<div id="bottom">Contact us</div></body></html>"#;
        let e = extract(&Dom::parse(html), &|_| None);
        assert_eq!(e.title, "Printing", "from <title>, without the site name");
        let md = md(&e);
        assert!(md.contains("install the campus print driver"), "{md}");
        assert!(md.contains("Colour printing costs 20 cents a page."), "{md}");
        assert!(!md.contains("Contact us") && !md.contains("Accounts"), "{md}");
    }

    #[test]
    fn tag_soup_and_deep_nesting_do_not_break_it() {
        let soup = "<p>one <b>two <i>three</p> four</b> <table><tr><td>a<td>b</table><p>five &amp; six < seven";
        let e = extract(&Dom::parse(soup), &|_| None);
        let md = md(&e);
        assert!(md.contains("one **two *three***"), "{md}");
        assert!(md.contains("five & six < seven") || md.contains("five & six \\< seven"), "{md}");
        let deep = format!("<body>{}<p>deep text</p>{}</body>", "<div>".repeat(5_000), "</div>".repeat(5_000));
        let e = extract(&Dom::parse(&deep), &|_| None);
        assert!(e.xhtml.contains("deep text"));
    }

    #[test]
    fn pages_are_read_in_the_encoding_they_declare() {
        // "Café – 5 €" in windows-1252: é = E9, – = 96, € = 80.
        let latin = b"<p>Caf\xe9 \x96 5 \x80</p>";
        assert_eq!(
            Dom::parse(&decode(latin, Some("text/html; charset=windows-1252"))).text(0),
            "Café – 5 €",
            "from the Content-Type header"
        );
        // ISO-8859-1 is read as windows-1252, as browsers do.
        assert_eq!(Dom::parse(&decode(latin, Some("text/html;charset=\"ISO-8859-1\""))).text(0), "Café – 5 €");
        let meta = [b"<html><head><meta charset=\"windows-1252\"></head><body>".as_slice(), latin].concat();
        assert_eq!(Dom::parse(&decode(&meta, Some("text/html"))).text(0), "Café – 5 €", "from <meta charset>");
        // Shift_JIS declared the HTML 4 way: 日本 = 93 FA 96 7B.
        let sjis =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\"><p>\x93\xfa\x96\x7b</p>";
        assert_eq!(Dom::parse(&decode(sjis, None)).text(0), "日本");
        // A byte-order mark wins over a wrong declaration.
        let bom: Vec<u8> =
            [0xFF, 0xFE].into_iter().chain("<p>Ok ✓</p>".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert_eq!(Dom::parse(&decode(&bom, Some("text/html; charset=iso-8859-1"))).text(0), "Ok ✓");
        // "charset=" outside a <meta> tag is not a declaration; invalid UTF-8 is replaced, not fatal.
        let text = b"<p>charset=windows-1252 caf\xc3\xa9 \xff</p>";
        assert_eq!(Dom::parse(&decode(text, None)).text(0), "charset=windows-1252 café \u{FFFD}");
        // An unknown label falls back to UTF-8.
        assert_eq!(Dom::parse(&decode("<p>ü</p>".as_bytes(), Some("text/html; charset=klingon"))).text(0), "ü");
    }

    #[test]
    fn an_articles_meta_line_tags_footer_and_related_list_are_not_content() {
        let html = r#"<body><main><article>
<header class="article__header"><h1>Printing on campus</h1>
<p class="entry-meta">Last updated <time datetime="2026-01-02">2 January 2026</time> · Version 7</p>
<ul class="tags"><li>printing</li><li>paper</li></ul>
<p class="lead">Every library has colour printers.</p></header>
<div class="prose"><p>Send the job from your laptop and release it at any printer.</p></div>
<aside class="related-articles"><h3>Related articles</h3><ul><li><a href="/scan">Scanning</a></li></ul></aside>
<section class="in-section"><h2>In this section</h2><ul class="link-list"><li><a href="/p/colour">Colour printing</a><p>Prices per page.</p></li></ul></section>
<footer class="article__footer"><p>Was this article helpful?</p><p>Source: <code>printing.md</code></p></footer>
</article></main></body>"#;
        let e = extract(&Dom::parse(html), &|_| None);
        assert_eq!(e.title, "Printing on campus");
        let md = md(&e);
        assert!(md.contains("Every library has colour printers."), "a header's lead stays: {md}");
        assert!(md.contains("release it at any printer"), "{md}");
        for chrome in [
            "Last updated",
            "Version 7",
            "paper",
            "Related",
            "Scanning",
            "In this section",
            "Prices",
            "helpful",
            "printing.md",
        ] {
            assert!(!md.contains(chrome), "{chrome:?} in {md}");
        }
    }

    #[test]
    fn noise_css_parses() {
        if let Err(e) = scraper::Selector::parse(NOISE_CSS) {
            // `EmptySelector`: a comma after the last selector, or two in a row.
            panic!("ingest/src/noise.css is not a valid selector list: {e:?}");
        }
    }

    /// Whether the first element of `body` (an HTML fragment) is noise.
    fn first_is_noise(body: &str) -> bool {
        let dom = Dom::parse(&format!("<!doctype html><html><body>{body}</body></html>"));
        let b = dom.find(0, |n| dom.tag(n).is_some_and(|t| t == "body"))[0];
        let first = dom.children(b).into_iter().find(|&c| dom.tag(c).is_some());
        is_noise(&dom, first.expect("an element"))
    }

    #[test]
    fn each_group_of_noise_css_drops_what_it_names_and_keeps_the_rest() {
        // (group, an element that goes, one that stays)
        let cases = [
            ("never-content tags", "<form><p>Sign in</p></form>", "<section><p>Text</p></section>"),
            ("never-content tags: footer", "<footer>© University</footer>", "<header><h1>Title</h1></header>"),
            ("ARIA roles", r#"<div role="navigation">A B</div>"#, r#"<div role="note">Text</div>"#),
            ("hidden", "<div hidden>Text</div>", r#"<div aria-hidden="false">Text</div>"#),
            (
                "permalinks by class",
                r##"<a class="headerlink" href="#a">link</a>"##,
                r##"<a class="x" href="#a">link</a>"##,
            ),
            ("permalinks by text (html.rs)", r##"<a href="#steps">¶</a>"##, r##"<a href="#a">#1 tip</a>"##),
            ("listings", r#"<ul class="nav link-list"><li>A</li></ul>"#, r#"<div class="product-listing">A</div>"#),
            ("listings by id", r#"<div id="children">A</div>"#, r#"<div class="children-books">A</div>"#),
            (
                "cookie banners",
                r#"<div class="cookie-banner">We use cookies</div>"#,
                r#"<div class="stock-list">A</div>"#,
            ),
            ("consent", r#"<div id="CONSENT_dialog">Accept</div>"#, r#"<div class="cookiecutter">A</div>"#),
            ("sidebars", r#"<div class="md-sidebar js-sticky">A</div>"#, r#"<div class="sidebars-guide">A</div>"#),
            ("tables of contents", r#"<div id="toc">A</div>"#, r#"<p class="protocol">A</p>"#),
            ("tables of contents", r#"<div class="toc_wrapper">A</div>"#, r#"<div class="tocbot-free">A</div>"#),
            ("breadcrumbs", r#"<ol class="page__breadcrumbs">A</ol>"#, r#"<ol class="breadcrumbing">A</ol>"#),
            ("share", r#"<div class="post share-buttons">A</div>"#, r#"<div class="shared-drive">A</div>"#),
            ("social", r#"<div class="Social">A</div>"#, r#"<div class="sociology">A</div>"#),
            ("pagination", r#"<div class="wp-pagination">1 2</div>"#, r#"<div class="paginated-table">A</div>"#),
            ("feedback", r#"<div id="page-feedback">Helpful?</div>"#, r#"<div class="feedbacks">A</div>"#),
            ("navbars", r#"<div class="navbar navbar-expand">A</div>"#, r#"<div class="navbarless">A</div>"#),
            ("skip links", r##"<a class="skip-link" href="#main">Skip</a>"##, r#"<p class="skipper">A</p>"#),
            ("article meta", r#"<p class="article-meta">Updated</p>"#, r#"<p class="metadata">A</p>"#),
            ("byline", r#"<p class="byline">By A</p>"#, r#"<p class="bylines-history">A</p>"#),
            ("tags", r#"<ul class="tags"><li>A</li></ul>"#, r#"<ul class="tagset">A</ul>"#),
            ("related", r#"<aside class="related-articles">A</aside>"#, r#"<p class="unrelated">A</p>"#),
        ];
        for (group, goes, stays) in cases {
            assert!(first_is_noise(goes), "{group}: {goes} is not dropped");
            assert!(!first_is_noise(stays), "{group}: {stays} is dropped");
        }
    }

    #[test]
    fn noise_css_spells_every_word_in_every_place() {
        // The selectors without the comments (whose legend spells a word `w`).
        let css: String = NOISE_CSS.split("/*").map(|s| s.split_once("*/").map_or(s, |(_, after)| after)).collect();
        // The words of the id-or-class rule are those with a `[class^="w-" i]`.
        let words: Vec<&str> =
            css.split(r#"[class^=""#).skip(1).filter_map(|rest| rest.split('"').next()?.strip_suffix('-')).collect();
        assert!(words.contains(&"toc") && words.contains(&"cookie") && !words.contains(&"w"), "{words:?}");
        for w in words {
            for attr in ["class", "id"] {
                let places = [
                    format!("~=\"{w}\""),
                    format!("^=\"{w}-\""),
                    format!("^=\"{w}_\""),
                    format!("*=\" {w}-\""),
                    format!("*=\" {w}_\""),
                    format!("$=\"-{w}\""),
                    format!("$=\"_{w}\""),
                    format!("*=\"-{w} \""),
                    format!("*=\"_{w} \""),
                    format!("*=\"-{w}-\""),
                    format!("*=\"-{w}_\""),
                    format!("*=\"_{w}-\""),
                    format!("*=\"_{w}_\""),
                ];
                for place in places {
                    let selector = format!("[{attr}{place} i]");
                    assert!(css.contains(&selector), "noise.css has no {selector}");
                }
            }
        }
    }
}
