//! `kb-dialect`: the Markdown dialects knowledge bases are written in, rewritten
//! to CommonMark before anything else reads a page body.
//!
//! Help centres are written in MkDocs Material, Obsidian, GitHub-flavoured
//! Markdown, Docusaurus (MDX) or Hugo; each tool has its own syntax for the same
//! few things (notes and warnings, tabs, links between pages, includes). Plain
//! CommonMark shows that syntax as raw text, so every page goes through
//! [`normalize`] first, which runs one pass per dialect over the page's lines:
//!
//! | pass | module | what it rewrites |
//! | --- | --- | --- |
//! | comments | [`comments`] | `<!-- -->`, Obsidian `%% %%`, MDX `{/* */}`: removed (never reach the site or the index) |
//! | placeholders | [`confluence`] | a Confluence macro's placeholder text ("Related articles will be listed here… edit this macro"), and the heading it leaves empty: removed |
//! | includes | [`mkdocs`] | `--8<--` snippets inlined |
//! | MDX | [`mdx`] | `import`/`export` lines, `:::type[Title]` admonitions, `<Tabs>`/`<TabItem>`, unknown JSX (text kept, reported) |
//! | Hugo | [`hugo`] | `{{< note >}}` shortcodes as admonitions, `{{< glossary_tooltip >}}` as its text, tabs, unknown ones (inner text kept, reported) |
//! | callouts | [`callout`] | Obsidian callouts `> [!type]± Title`, GitHub alerts `> [!NOTE]`, `> **Note:**` |
//! | Obsidian | [`obsidian`] | wikilinks, embeds and transclusion, `==highlight==`, `^block` ids |
//! | MkDocs | [`mkdocs`] | `!!!`/`???` admonitions, `===` tabs, attribute lists, icons |
//!
//! The dialect passes translate their containers into MkDocs's own container
//! syntax (`!!! type "Title"` / `??? type` / `=== "Label"` with an indented body),
//! so one implementation ([`mkdocs`]) renders every admonition, callout and tab
//! set the same way, in both [`Target`]s. Headings are never added or removed by
//! a container, so heading ids agree between the two targets. Every output line
//! keeps the body line it came from ([`Normalized::line_map`]), so later stages
//! report file lines; what a pass could not render as its tool would is a
//! [`Notice`] with its line.
//!
//! Nothing here does I/O: what a pass needs from the rest of the knowledge base
//! (another page's body, whether a file exists, where a wikilink leads) it asks a
//! [`Resolver`].

pub mod callout;
pub mod comments;
pub mod confluence;
pub mod fence;
pub mod hugo;
pub mod mdx;
pub mod mkdocs;
pub mod obsidian;
pub mod raw;

/// One line of a page body being rewritten: the 0-based body line it came from,
/// and its text (no line end).
pub type Line = (usize, String);

/// What the normalised Markdown is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Rendered to HTML for the site: containers become HTML wrappers.
    Html,
    /// Chunk text for search and display in results: containers become bold labels.
    Text,
}

/// Normalised Markdown and where each of its lines came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Normalized {
    pub text: String,
    /// `line_map[i]` is the 0-based body line of output line `i`.
    pub line_map: Vec<usize>,
    /// Snippet includes that could not be resolved: (0-based body line, file name).
    pub missing_snippets: Vec<(usize, String)>,
    /// What the dialect passes could not render as their tool would.
    pub notices: Vec<Notice>,
}

impl Normalized {
    /// 0-based body line of the byte `offset` of [`Normalized::text`].
    pub fn source_line(&self, offset: usize) -> usize {
        let out_line = self.text.as_bytes()[..offset.min(self.text.len())].iter().filter(|&&b| b == b'\n').count();
        self.line_map.get(out_line).copied().unwrap_or(0)
    }
}

/// Something on a page that was kept as text or left out instead of rendered,
/// with the 0-based body line it is on. The build reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub line: usize,
    pub kind: NoticeKind,
    /// What was found and what was done with it, for a person (`<BrowserWindow>`
    /// is not a known component; its text was kept).
    pub message: String,
}

/// The kinds of [`Notice`], for counting in the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NoticeKind {
    /// An MDX/JSX component this crate does not know: its text children kept.
    UnknownComponent,
    /// A Hugo shortcode this crate does not know: its inner text kept.
    UnknownShortcode,
    /// A file a page includes (`code_sample`, a transclusion) that is not there.
    MissingInclude,
    /// A wikilink or embed that names no page or file of the knowledge base.
    UnresolvedWikilink,
    /// A transclusion that leads back to itself, or nests too deep.
    IncludeCycle,
    /// A Confluence macro's placeholder text, left out.
    MacroPlaceholder,
}

impl NoticeKind {
    /// Short machine-readable name, as in `report.json`.
    pub fn name(self) -> &'static str {
        match self {
            NoticeKind::UnknownComponent => "unknown_component",
            NoticeKind::UnknownShortcode => "unknown_shortcode",
            NoticeKind::MissingInclude => "missing_include",
            NoticeKind::UnresolvedWikilink => "unresolved_wikilink",
            NoticeKind::IncludeCycle => "include_cycle",
            NoticeKind::MacroPlaceholder => "macro_placeholder",
        }
    }
}

/// What the passes may ask about the rest of the knowledge base. Paths are
/// content-relative and `/`-separated (`features/Docker Support.md`). Every
/// method has a default that knows nothing, so a test gives only what it needs.
pub trait Resolver {
    /// Content-relative path of the page being normalised.
    fn source(&self) -> &str {
        ""
    }
    /// The text of a `--8<--` snippet, by the name written in the page.
    fn snippet(&self, _name: &str) -> Option<String> {
        None
    }
    /// The page a wikilink target names (`Page`, `folder/Page`, an alias), by
    /// Obsidian's rules: the path of its source file.
    fn page(&self, _target: &str) -> Option<String> {
        None
    }
    /// The file (image, PDF, …) an embed or link names (`dns records.png`), by
    /// Obsidian's rules: its content-relative path.
    fn asset(&self, _target: &str) -> Option<String> {
        None
    }
    /// The Markdown body (after its frontmatter) of the page at `path`.
    fn body(&self, _path: &str) -> Option<String> {
        None
    }
    /// The title of the page at `path`.
    fn title(&self, _path: &str) -> Option<String> {
        None
    }
}

/// A resolver that knows nothing: every link is unresolved, every include missing.
pub struct NoResolver;

impl Resolver for NoResolver {}

/// Which dialects' syntax a page is read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialects {
    pub mkdocs: bool,
    /// Wikilinks, embeds, `==highlight==`, `%%comments%%`, `^block` ids, callouts.
    pub obsidian: bool,
    /// GitHub alerts `> [!NOTE]` and `> **Note:**` notes.
    pub gfm: bool,
    /// Docusaurus MDX: `import`/`export`, `:::` admonitions, JSX components, `{/* */}`.
    pub mdx: bool,
    /// Hugo shortcodes `{{< >}}` / `{{% %}}`.
    pub hugo: bool,
}

/// A dialect named on the command line (`--dialect`), which reads every page
/// with that tool's syntax only, instead of detecting it per page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    CommonMark,
    MkDocs,
    Obsidian,
    Gfm,
    Docusaurus,
    Hugo,
}

impl Dialect {
    pub const NAMES: [&'static str; 6] = ["commonmark", "mkdocs", "obsidian", "gfm", "docusaurus", "hugo"];

    pub fn parse(name: &str) -> Option<Dialect> {
        Some(match name.to_ascii_lowercase().as_str() {
            "commonmark" | "markdown" => Dialect::CommonMark,
            "mkdocs" => Dialect::MkDocs,
            "obsidian" | "quartz" => Dialect::Obsidian,
            "gfm" | "github" => Dialect::Gfm,
            "docusaurus" | "mdx" => Dialect::Docusaurus,
            "hugo" => Dialect::Hugo,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::CommonMark => "commonmark",
            Dialect::MkDocs => "mkdocs",
            Dialect::Obsidian => "obsidian",
            Dialect::Gfm => "gfm",
            Dialect::Docusaurus => "docusaurus",
            Dialect::Hugo => "hugo",
        }
    }

    /// The syntax this dialect reads. GitHub alerts are read by every dialect
    /// but plain CommonMark: each tool (Obsidian, Docusaurus ≥ 3.6 through a
    /// plugin, Hugo ≥ 0.132, MkDocs through an extension) renders them now.
    pub fn dialects(self) -> Dialects {
        let none = Dialects { mkdocs: false, obsidian: false, gfm: false, mdx: false, hugo: false };
        match self {
            Dialect::CommonMark => none,
            Dialect::MkDocs => Dialects { mkdocs: true, gfm: true, ..none },
            Dialect::Obsidian => Dialects { obsidian: true, gfm: true, ..none },
            Dialect::Gfm => Dialects { gfm: true, ..none },
            Dialect::Docusaurus => Dialects { mdx: true, gfm: true, ..none },
            Dialect::Hugo => Dialects { hugo: true, gfm: true, ..none },
        }
    }
}

impl Dialects {
    /// The dialects of one page, detected from its file name and body.
    ///
    /// Syntax that cannot mean anything else in CommonMark is always read:
    /// MkDocs containers, callouts and alerts, `:::` admonitions, wikilinks and
    /// Hugo shortcodes (`[[x]]`, `{{< x >}}` and `> [!x]` are not written on
    /// purpose in a plain page). What plain Markdown can mean (JSX-looking tags
    /// and `import` lines, `==text==`, `%%`) is read only where the page shows
    /// its tool: an `.mdx` file or an `import … from` line for MDX; a wikilink,
    /// an embed or a lower-case callout for Obsidian.
    pub fn detect(source: &str, body: &str) -> Dialects {
        let lower = source.to_ascii_lowercase();
        let mut mdx = lower.ends_with(".mdx");
        let mut obsidian = false;
        for line in fence::prose_lines(body) {
            let t = line.trim_start();
            if !mdx && t.starts_with("import ") && (t.contains(" from '") || t.contains(" from \"")) {
                mdx = true;
            }
            if !obsidian && (has_wikilink(t) || is_obsidian_callout(t)) {
                obsidian = true;
            }
        }
        Dialects { mkdocs: true, obsidian, gfm: true, mdx, hugo: true }
    }
}

/// Whether a line holds `[[…]]` outside inline code.
fn has_wikilink(line: &str) -> bool {
    let mut in_code = false;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'`' => in_code = !in_code,
            b'[' if !in_code && bytes.get(i + 1) == Some(&b'[') => {
                return line[i + 2..].contains("]]");
            }
            _ => {}
        }
    }
    false
}

/// `> [!note]` (lower case: Obsidian's own spelling; GitHub writes `[!NOTE]`).
fn is_obsidian_callout(line: &str) -> bool {
    let rest = line.trim_start_matches(['>', ' ']);
    rest.len() < line.len()
        && rest.starts_with("[!")
        && rest[2..].chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

/// Rewrites a page body in every dialect of `dialects` to CommonMark for `target`.
pub fn normalize(body: &str, target: Target, dialects: Dialects, resolver: &dyn Resolver) -> Normalized {
    let mut notices = Vec::new();
    let mut lines: Vec<Line> = body.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect();
    lines = comments::strip(lines, dialects);
    // Before any container pass: a placeholder is the page's own top-level text.
    lines = confluence::drop_placeholders(lines, &mut notices);
    let mut missing_snippets = Vec::new();
    lines = mkdocs::include_snippets(lines, resolver, &mut missing_snippets);
    if dialects.obsidian {
        lines = obsidian::transclude(lines, target, resolver, &mut notices);
    }
    if dialects.mdx {
        lines = mdx::translate(lines, &mut notices);
    }
    if dialects.hugo {
        lines = hugo::translate(lines, target, resolver, &mut notices);
    }
    if dialects.obsidian || dialects.gfm {
        lines = callout::translate(lines, dialects);
    }
    let mut out = Vec::with_capacity(lines.len());
    mkdocs::process(&lines, target, dialects.mkdocs, &mut out);
    if dialects.obsidian {
        out = obsidian::inline(out, target, resolver, &mut notices);
    }
    let mut text = String::with_capacity(body.len());
    let mut line_map = Vec::with_capacity(out.len());
    for (src, line) in out {
        text.push_str(&line);
        text.push('\n');
        line_map.push(src);
    }
    notices.sort_by_key(|n| n.line);
    Normalized { text, line_map, missing_snippets, notices }
}

/// The Markdown link destination from the page at `from` to the file at `to`
/// (both content-relative): `../features/Docker%20Support.md`. Spaces and other
/// characters a link destination cannot hold are percent-encoded; `#fragment`
/// is the caller's to add.
pub fn link_from(from: &str, to: &str) -> String {
    let parts: Vec<String> = kb_common::path::relative(from, to)
        .into_iter()
        .map(|p| percent_encoding::utf8_percent_encode(p, LINK_PATH).to_string())
        .collect();
    parts.join("/")
}

/// What a path segment of a Markdown link destination must escape.
const LINK_PATH: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'(')
    .add(b')')
    .add(b'#')
    .add(b'?')
    .add(b'%')
    .add(b'`');

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_between_pages_are_relative_and_escaped() {
        assert_eq!(link_from("a/b.md", "a/c d.md"), "c%20d.md");
        assert_eq!(link_from("a/b.md", "x/y.md"), "../x/y.md");
        assert_eq!(link_from("top.md", "x/y (1).md"), "x/y%20%281%29.md");
        assert_eq!(link_from("a/b/c.md", "a/z.png"), "../z.png");
    }

    #[test]
    fn detection_reads_the_page_tool() {
        let plain = Dialects::detect("a.md", "# A\n\n==not a highlight== here\n");
        assert!(!plain.obsidian && !plain.mdx);
        let vault = Dialects::detect("a.md", "See [[Other page]].\n");
        assert!(vault.obsidian);
        let callout = Dialects::detect("a.md", "> [!note] Title\n> body\n");
        assert!(callout.obsidian);
        let alert = Dialects::detect("a.md", "> [!NOTE]\n> body\n");
        assert!(!alert.obsidian && alert.gfm);
        assert!(Dialects::detect("a.mdx", "text\n").mdx);
        assert!(Dialects::detect("a.md", "import Tabs from '@theme/Tabs';\n").mdx);
        let fenced = Dialects::detect("a.md", "```\n[[not a link]]\nimport x from 'y'\n```\n");
        assert!(!fenced.obsidian && !fenced.mdx);
        assert!(!Dialects::detect("a.md", "`[[code]]`\n").obsidian);
    }

    #[test]
    fn dialect_names_round_trip() {
        for name in Dialect::NAMES {
            assert_eq!(Dialect::parse(name).map(Dialect::name), Some(name));
        }
        assert_eq!(Dialect::parse("nope"), None);
    }
}
