//! Confluence storage format (XHTML with `ac:` / `ri:` elements) → the Markdown the
//! site builder reads.
//!
//! The cleaning follows the advising paper: macro parameters, table-of-contents
//! macros, images and empty paragraphs are dropped; layouts and section/column
//! macros are unwrapped; code macros become fenced code, info/note/warning/tip panels
//! become MkDocs admonitions (`!!! note "Title"` + indented body), internal links
//! become ordinary Markdown links through a [`LinkResolver`], tables become pipe
//! tables. Nothing in the `ac:` / `ri:` namespaces is ever emitted as text.
//!
//! An `<a href>` whose URL could run script ([`kb_common::safe_url`]: anything but
//! http(s), mailto and relative) keeps its words and loses its link: the Markdown
//! written here is read by people and other tools too, not only by the build (which
//! would refuse and report it again).

use roxmltree::{Document, Node, NodeType};

use kb_common::percent::encode_segment;
use kb_common::safe_url;
use kb_common::slug::slugify;

const AC_NS: &str = "http://atlassian.com/content";
const RI_NS: &str = "http://atlassian.com/resource/identifier";

/// A storage body that is not well-formed XML even after entity mapping.
#[derive(Debug, thiserror::Error)]
#[error("the storage body is not well-formed XHTML ({0}); fix the page in Confluence or skip it")]
pub struct StorageError(pub String);

/// Turns the title of a linked page into a link target (a relative `.md` path when
/// the page is part of the ingested tree, else the URL-encoded title).
pub trait LinkResolver {
    fn page_link(&self, title: &str) -> String;
}

/// Resolves every title to `Title%20Encoded.md`.
pub struct TitleLinks;

impl LinkResolver for TitleLinks {
    fn page_link(&self, title: &str) -> String {
        format!("{}.md", encode_segment(title))
    }
}

/// HTML entities that storage bodies use but XML does not declare. Unknown entities
/// are left alone, so the parser reports them.
const ENTITIES: &[(&str, u32)] = &[
    ("nbsp", 160),
    ("ndash", 8211),
    ("mdash", 8212),
    ("hellip", 8230),
    ("lsquo", 8216),
    ("rsquo", 8217),
    ("ldquo", 8220),
    ("rdquo", 8221),
    ("laquo", 171),
    ("raquo", 187),
    ("bull", 8226),
    ("middot", 183),
    ("copy", 169),
    ("reg", 174),
    ("trade", 8482),
    ("deg", 176),
    ("plusmn", 177),
    ("times", 215),
    ("divide", 247),
    ("euro", 8364),
    ("pound", 163),
    ("yen", 165),
    ("cent", 162),
    ("sect", 167),
    ("para", 182),
    ("larr", 8592),
    ("rarr", 8594),
    ("uarr", 8593),
    ("darr", 8595),
    ("harr", 8596),
    ("rArr", 8658),
    ("le", 8804),
    ("ge", 8805),
    ("ne", 8800),
    ("zwj", 8205),
    ("zwnj", 8204),
    ("shy", 173),
    ("ensp", 8194),
    ("emsp", 8195),
    ("thinsp", 8201),
    ("iexcl", 161),
    ("iquest", 191),
    ("aacute", 225),
    ("eacute", 233),
    ("iacute", 237),
    ("oacute", 243),
    ("uacute", 250),
    ("agrave", 224),
    ("egrave", 232),
    ("auml", 228),
    ("ouml", 246),
    ("uuml", 252),
    ("Auml", 196),
    ("Ouml", 214),
    ("Uuml", 220),
    ("szlig", 223),
    ("ccedil", 231),
    ("ntilde", 241),
    ("acirc", 226),
    ("ecirc", 234),
    ("ocirc", 244),
];

/// Replaces named HTML entities with numeric references (XML knows only five).
fn map_entities(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let name_end = rest[1..].find(|c: char| !c.is_ascii_alphanumeric()).map(|e| e + 1);
        match name_end {
            Some(e) if rest[e..].starts_with(';') => {
                let name = &rest[1..e];
                match ENTITIES.iter().find(|(n, _)| *n == name) {
                    Some((_, code)) => out.push_str(&format!("&#{code};")),
                    None => out.push_str(&rest[..=e]),
                }
                rest = &rest[e + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Converts a storage body to Markdown (without frontmatter or title heading).
pub fn to_markdown(body: &str, links: &dyn LinkResolver) -> Result<String, StorageError> {
    // Bodies are fragments with undeclared prefixes: one root declares them.
    let wrapped = format!("<root xmlns:ac=\"{AC_NS}\" xmlns:ri=\"{RI_NS}\">{}</root>", map_entities(body));
    let doc = Document::parse(&wrapped).map_err(|e| StorageError(e.to_string()))?;
    let conv = Converter { links };
    let blocks = conv.blocks(doc.root_element());
    let mut md = blocks.join("\n\n");
    md.push('\n');
    Ok(md)
}

struct Converter<'l> {
    links: &'l dyn LinkResolver,
}

fn ns<'a>(node: Node<'a, '_>) -> Option<&'a str> {
    node.tag_name().namespace()
}

fn is_ac(node: Node, local: &str) -> bool {
    ns(node) == Some(AC_NS) && node.tag_name().name() == local
}

fn html<'a>(node: Node<'a, '_>) -> Option<&'a str> {
    (node.is_element() && ns(node).is_none()).then(|| node.tag_name().name())
}

/// The `ac:name` of a macro element.
fn macro_name<'a>(node: Node<'a, '_>) -> Option<&'a str> {
    if is_ac(node, "structured-macro") || is_ac(node, "macro") {
        node.attribute((AC_NS, "name"))
    } else {
        None
    }
}

fn macro_param<'a>(node: Node<'a, '_>, name: &str) -> Option<String> {
    node.children()
        .find(|c| is_ac(*c, "parameter") && c.attribute((AC_NS, "name")) == Some(name))
        .map(|c| text_of(c).trim().to_string())
}

fn child_ac<'a, 'i>(node: Node<'a, 'i>, local: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|c| is_ac(*c, local))
}

/// All text below a node, verbatim (for code).
fn text_of(node: Node) -> String {
    node.descendants().filter(|d| d.node_type() == NodeType::Text).filter_map(|d| d.text()).collect()
}

fn is_block(node: Node) -> bool {
    if let Some(name) = html(node) {
        return matches!(
            name,
            "p" | "div"
                | "h1"
                | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "ul"
                | "ol"
                | "table"
                | "pre"
                | "blockquote"
                | "hr"
                | "section"
        );
    }
    if let Some(name) = macro_name(node) {
        // Only macros that render inline stay inline.
        return !matches!(name, "status" | "anchor" | "jira");
    }
    is_ac(node, "layout")
        || is_ac(node, "layout-section")
        || is_ac(node, "layout-cell")
        || is_ac(node, "task-list")
        || is_ac(node, "rich-text-body")
}

/// Escapes the characters that would otherwise start Markdown syntax.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Collapses whitespace (a no-break space counts as a space).
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() || c == '\u{a0}' {
            space = true;
        } else {
            if space {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    if space {
        out.push(' ');
    }
    out
}

/// Wraps `inner` in a delimiter, keeping surrounding spaces outside it (`** x**` is
/// not emphasis in CommonMark).
fn wrap(inner: &str, delim: &str) -> String {
    let t = inner.trim();
    if t.is_empty() {
        return inner.to_string();
    }
    let lead = if inner.starts_with(' ') { " " } else { "" };
    let trail = if inner.ends_with(' ') { " " } else { "" };
    format!("{lead}{delim}{t}{delim}{trail}")
}

fn fence(code: &str, lang: &str) -> String {
    // The fence must be longer than any backtick run inside the code.
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let ticks = "`".repeat((longest + 1).max(3));
    let code = code.trim_matches('\n');
    format!("{ticks}{lang}\n{code}\n{ticks}")
}

fn indent(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.is_empty() {
            continue;
        }
        out.push_str(if i == 0 { first } else { rest });
        out.push_str(line);
    }
    out
}

impl Converter<'_> {
    /// The Markdown blocks of a container's children: block elements each make their
    /// own blocks, runs of inline content between them make paragraphs.
    fn blocks(&self, node: Node) -> Vec<String> {
        let mut out = Vec::new();
        let mut inline = String::new();
        for child in node.children() {
            if child.is_element() && is_block(child) {
                self.flush(&mut inline, &mut out);
                out.extend(self.block(child));
            } else {
                inline.push_str(&self.inline(child));
            }
        }
        self.flush(&mut inline, &mut out);
        out
    }

    fn flush(&self, inline: &mut String, out: &mut Vec<String>) {
        let p = tidy_paragraph(inline);
        if !p.is_empty() {
            out.push(p);
        }
        inline.clear();
    }

    fn block(&self, node: Node) -> Vec<String> {
        if let Some(name) = macro_name(node) {
            return self.macro_block(node, name);
        }
        if ns(node).is_some() {
            // Layouts, rich-text bodies, task lists: unwrap.
            if is_ac(node, "task-list") {
                return self.task_list(node);
            }
            return self.blocks(node);
        }
        let name = html(node).unwrap_or("");
        match name {
            "p" => {
                let p = tidy_paragraph(&self.inline_children(node));
                if p.is_empty() {
                    vec![]
                } else {
                    vec![p]
                }
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = name[1..].parse::<usize>().unwrap_or(1);
                let text = self.inline_children(node).replace("\\\n", " ");
                let text = collapse(&text).trim().to_string();
                if text.is_empty() {
                    vec![]
                } else {
                    vec![format!("{} {text}", "#".repeat(level))]
                }
            }
            "ul" | "ol" => self.list(node, name == "ol").into_iter().collect(),
            "table" => self.table(node).into_iter().collect(),
            "pre" => vec![fence(&text_of(node), "")],
            "hr" => vec!["---".to_string()],
            "blockquote" => {
                let inner = self.blocks(node).join("\n\n");
                if inner.trim().is_empty() {
                    vec![]
                } else {
                    vec![inner
                        .lines()
                        .map(|l| if l.is_empty() { ">".to_string() } else { format!("> {l}") })
                        .collect::<Vec<_>>()
                        .join("\n")]
                }
            }
            _ => self.blocks(node),
        }
    }

    fn macro_block(&self, node: Node, name: &str) -> Vec<String> {
        match name {
            // Generated navigation and anchors carry no text of their own.
            "toc" | "toc-zone" | "children" | "pagetree" | "anchor" | "recently-updated" | "contentbylabel" => {
                vec![]
            }
            "code" | "noformat" => {
                let code = child_ac(node, "plain-text-body").map(text_of).unwrap_or_default();
                if code.trim().is_empty() {
                    return vec![];
                }
                let lang = macro_param(node, "language").unwrap_or_default();
                let lang: String = lang.chars().filter(|c| c.is_ascii_alphanumeric() || "+-#_.".contains(*c)).collect();
                vec![fence(&code, &lang)]
            }
            "info" | "note" | "warning" | "tip" | "panel" => {
                let kind = if name == "panel" { "note" } else { name };
                let body = child_ac(node, "rich-text-body").map(|b| self.blocks(b)).unwrap_or_default();
                let body = body.join("\n\n");
                let title = macro_param(node, "title").filter(|t| !t.is_empty());
                if body.trim().is_empty() && title.is_none() {
                    return vec![];
                }
                let head = match title {
                    Some(t) => format!("!!! {kind} \"{}\"", t.replace('"', "'")),
                    None => format!("!!! {kind}"),
                };
                // The body is indented by four spaces, as MkDocs requires.
                let body = indent(&body, "    ", "    ");
                vec![if body.is_empty() { head } else { format!("{head}\n\n{body}") }]
            }
            // Layout macros, expand macros and anything unknown: keep the body's text.
            _ => child_ac(node, "rich-text-body").map(|b| self.blocks(b)).unwrap_or_default(),
        }
    }

    fn task_list(&self, node: Node) -> Vec<String> {
        let mut items = Vec::new();
        for task in node.children().filter(|c| is_ac(*c, "task")) {
            let done = child_ac(task, "task-status").map(text_of).is_some_and(|s| s.trim() == "complete");
            let body = child_ac(task, "task-body").map(|b| self.blocks(b).join("\n\n")).unwrap_or_default();
            let mark = if done { "- [x] " } else { "- [ ] " };
            items.push(indent(&body, mark, "    "));
        }
        if items.is_empty() {
            vec![]
        } else {
            vec![items.join("\n")]
        }
    }

    fn list(&self, node: Node, ordered: bool) -> Option<String> {
        let mut items = Vec::new();
        let mut loose = false;
        for (n, li) in (1..).zip(node.children().filter(|c| html(*c) == Some("li"))) {
            let blocks = self.blocks(li);
            // A nested list directly follows its item's text (a tight list); two
            // paragraphs in one item make the whole list loose.
            let is_list = |b: &String| b.starts_with("- ") || b.starts_with("-   ") || b.starts_with("1. ");
            loose |= blocks.iter().filter(|b| !is_list(b)).count() > 1;
            let mut body = String::new();
            for (i, b) in blocks.iter().enumerate() {
                if i > 0 {
                    body.push_str(if is_list(b) { "\n" } else { "\n\n" });
                }
                body.push_str(b);
            }
            let marker = if ordered { format!("{n}. ") } else { "- ".to_string() };
            // Four spaces for continuation lines suit both CommonMark and MkDocs.
            let first = format!("{marker:<4}");
            items.push(if body.is_empty() { marker.trim_end().to_string() } else { indent(&body, &first, "    ") });
        }
        if items.is_empty() {
            None
        } else {
            Some(items.join(if loose { "\n\n" } else { "\n" }))
        }
    }

    fn table(&self, node: Node) -> Option<String> {
        let mut rows: Vec<Vec<String>> = Vec::new();
        for tr in node.descendants().filter(|d| html(*d) == Some("tr")) {
            let cells: Vec<String> = tr
                .children()
                .filter(|c| matches!(html(*c), Some("td" | "th")))
                .map(|c| {
                    let text = self.blocks(c).join("\n");
                    let text = text.replace("\\\n", "<br>").replace('\n', "<br>");
                    text.replace('|', "\\|").trim().to_string()
                })
                .collect();
            if !cells.is_empty() {
                rows.push(cells);
            }
        }
        let width = rows.iter().map(Vec::len).max()?;
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for i in 0..width {
                s.push(' ');
                s.push_str(cells.get(i).map(String::as_str).unwrap_or(""));
                s.push_str(" |");
            }
            s
        };
        let mut out = vec![line(&rows[0]), format!("|{}", " --- |".repeat(width))];
        out.extend(rows[1..].iter().map(|r| line(r)));
        Some(out.join("\n"))
    }

    fn inline_children(&self, node: Node) -> String {
        node.children().map(|c| self.inline(c)).collect()
    }

    fn inline(&self, node: Node) -> String {
        match node.node_type() {
            NodeType::Text => return escape(&collapse(node.text().unwrap_or(""))),
            NodeType::Element => {}
            _ => return String::new(),
        }
        if ns(node) == Some(RI_NS) {
            return String::new();
        }
        if ns(node) == Some(AC_NS) {
            return match node.tag_name().name() {
                "link" => self.ac_link(node),
                "structured-macro" | "macro" => match macro_name(node) {
                    Some("status") => {
                        macro_param(node, "title").map(|t| format!("**{}**", escape(&t))).unwrap_or_default()
                    }
                    // A block macro met in inline position still gets its blocks.
                    _ => format!("\n\n{}\n\n", self.block(node).join("\n\n")),
                },
                "rich-text-body" | "link-body" | "layout" | "layout-section" | "layout-cell" => {
                    self.inline_children(node)
                }
                // Images, parameters, emoticons, placeholders, …: nothing to keep.
                _ => String::new(),
            };
        }
        let name = node.tag_name().name();
        match name {
            "strong" | "b" => wrap(&self.inline_children(node), "**"),
            "em" | "i" => wrap(&self.inline_children(node), "*"),
            "s" | "del" | "strike" => wrap(&self.inline_children(node), "~~"),
            "code" | "tt" => {
                let t = collapse(&text_of(node));
                let t = t.trim();
                if t.is_empty() {
                    String::new()
                } else if t.contains('`') {
                    format!("`` {t} ``")
                } else {
                    format!("`{t}`")
                }
            }
            "br" => "\\\n".to_string(),
            "a" => {
                let text = self.inline_children(node);
                match node.attribute("href") {
                    Some(href) if !text.trim().is_empty() && safe_url::is_safe(href) => {
                        format!("[{}]({})", text.trim(), href.replace(' ', "%20").replace(')', "%29"))
                    }
                    _ => text,
                }
            }
            "img" => String::new(),
            "time" => node.attribute("datetime").map(escape).unwrap_or_default(),
            _ if is_block(node) => format!("\n\n{}\n\n", self.block(node).join("\n\n")),
            _ => self.inline_children(node),
        }
    }

    fn ac_link(&self, node: Node) -> String {
        let page = node.children().find(|c| ns(*c) == Some(RI_NS) && c.tag_name().name() == "page");
        let text = if let Some(body) = child_ac(node, "plain-text-link-body") {
            escape(&collapse(&text_of(body)))
        } else if let Some(body) = child_ac(node, "link-body") {
            self.inline_children(body)
        } else {
            String::new()
        };
        let text = text.trim().to_string();
        let anchor = node.attribute((AC_NS, "anchor")).map(|a| format!("#{}", slugify(a)));
        match page.and_then(|p| p.attribute((RI_NS, "content-title"))) {
            Some(title) => {
                let text = if text.is_empty() { escape(title) } else { text };
                let target = self.links.page_link(title);
                format!("[{text}]({target}{})", anchor.unwrap_or_default())
            }
            // A link to an anchor on the same page.
            None if page.is_none() && anchor.is_some() && !text.is_empty() => {
                format!("[{text}]({})", anchor.unwrap_or_default())
            }
            // Attachments, users, other content: keep the words.
            None => text,
        }
    }
}

/// Trims a paragraph: whitespace around lines, hard breaks at its ends, and whole
/// lines that are empty; what is left empty is an empty paragraph and is dropped.
fn tidy_paragraph(text: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for chunk in text.split("\n\n") {
        let lines: Vec<String> =
            chunk.split('\n').map(|l| l.trim_end_matches('\\').trim().to_string()).filter(|l| !l.is_empty()).collect();
        if lines.is_empty() {
            continue;
        }
        // Block content nested in inline context (a panel inside a span) keeps its
        // own line structure.
        if chunk.starts_with("!!!") || chunk.starts_with("```") || chunk.starts_with('|') || chunk.starts_with("    ") {
            parts.push(chunk.trim_matches('\n').to_string());
            continue;
        }
        parts.push(lines.join("\\\n"));
    }
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(body: &str) -> String {
        to_markdown(body, &TitleLinks).expect("valid body")
    }

    #[test]
    fn drops_toc_images_params_and_empty_paragraphs() {
        let out = md(
            r#"<p><ac:structured-macro ac:name="toc"><ac:parameter ac:name="maxLevel">2</ac:parameter></ac:structured-macro></p><p>&nbsp;</p><p><br/></p><p>Hi <ac:image><ri:attachment ri:filename="a.png"/></ac:image>there</p>"#,
        );
        assert_eq!(out, "Hi there\n");
    }

    #[test]
    fn panels_code_and_links() {
        let out = md(
            r#"<ac:structured-macro ac:name="warning"><ac:parameter ac:name="title">Careful</ac:parameter><ac:rich-text-body><p>Do <strong>not</strong> do it.</p></ac:rich-text-body></ac:structured-macro><ac:structured-macro ac:name="code"><ac:parameter ac:name="language">bash</ac:parameter><ac:plain-text-body><![CDATA[echo "a < b"]]></ac:plain-text-body></ac:structured-macro><p>See <ac:link><ri:page ri:content-title="Some Page"/><ac:plain-text-link-body><![CDATA[the page]]></ac:plain-text-link-body></ac:link>.</p>"#,
        );
        assert_eq!(
            out,
            "!!! warning \"Careful\"\n\n    Do **not** do it.\n\n```bash\necho \"a < b\"\n```\n\nSee [the page](Some%20Page.md).\n"
        );
    }

    #[test]
    fn tables_lists_layouts_and_headings() {
        let out = md(
            r#"<ac:layout><ac:layout-section ac:type="two_equal"><ac:layout-cell><h2>Fees&nbsp;today</h2><table><tbody><tr><th>Item</th><th>Cost</th></tr><tr><td><p>A|B</p></td><td>5</td></tr></tbody></table></ac:layout-cell><ac:layout-cell><ul><li>one</li><li><em>two</em><ol><li>x</li></ol></li></ul></ac:layout-cell></ac:layout-section></ac:layout>"#,
        );
        assert_eq!(
            out,
            "## Fees today\n\n| Item | Cost |\n| --- | --- |\n| A\\|B | 5 |\n\n-   one\n-   *two*\n    1.  x\n"
        );
    }

    #[test]
    fn unsafe_links_keep_only_their_words() {
        let out = md(
            r#"<p><a href="javascript:alert(1)">one</a> <a href="JavaScript&#58;x">two</a> <a href=" java&#9;script:x">three</a> <a href="data:text/html,x">four</a> <a href="https://x.example/a b">five</a> <a href="mailto:h@x.example">six</a></p>"#,
        );
        assert_eq!(out, "one two three four [five](https://x.example/a%20b) [six](mailto:h@x.example)\n");
    }

    #[test]
    fn invalid_xml_and_entities() {
        assert!(to_markdown("<p>open", &TitleLinks).is_err());
        assert!(to_markdown("<p>&bogus;</p>", &TitleLinks).is_err());
        assert_eq!(md("<p>a &mdash; b &amp; c</p>"), "a \u{2014} b & c\n");
    }
}
