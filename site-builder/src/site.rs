//! Site stage: minijinja templates → the HTML files of `OUT/site/`.
//!
//! The templates live in `templates/` and are compiled into the binary, so that
//! `site-builder` works from any folder; `--templates DIR` uses a folder of your
//! own instead (same file names). This module owns the template contexts: the
//! shape of what each template receives is documented at the top of each template.

use std::path::Path;

use minijinja::{Environment, Value};

/// Template files a folder of your own may leave out, the built-in one serving
/// instead: templates written before `macros.html` existed do not import it.
const OPTIONAL_FILES: [&str; 1] = ["macros.html"];

/// Static files a folder of your own may leave out (they came later), the
/// built-in one serving instead.
const OPTIONAL_STATIC: [&str; 3] = ["page.js", "theme.js", "favicon.svg"];

/// Static files (in `templates/static/`) and where they go in the site: the
/// widget sits at the root, where the one-line embed snippet points
/// (`https://kb.example.edu/widget.js`); the rest under `assets/`.
pub const STATIC_FILES: [(&str, &str); 7] = [
    ("style.css", "assets/style.css"),
    ("search.js", "assets/search.js"),
    ("browser-search.js", "assets/browser-search.js"),
    ("widget.js", "widget.js"),
    ("page.js", "assets/page.js"),
    ("theme.js", "assets/theme.js"),
    ("favicon.svg", "assets/favicon.svg"),
];

macro_rules! embedded {
    ($($name:literal),*) => {
        [$(($name, include_str!(concat!("../../templates/", $name)))),*]
    };
}

/// The template files, built in; `macros.html` renders nothing of its own: it
/// holds the macros several templates import.
const EMBEDDED_TEMPLATES: [(&str, &str); 8] = embedded!(
    "base.html",
    "page.html",
    "section.html",
    "home.html",
    "search.html",
    "404.html",
    "sitemap.xml",
    "macros.html"
);
const EMBEDDED_STATIC: [(&str, &str); 7] = embedded!(
    "static/style.css",
    "static/search.js",
    "static/browser-search.js",
    "static/widget.js",
    "static/page.js",
    "static/theme.js",
    "static/favicon.svg"
);

/// A template that could not be loaded or rendered.
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("cannot read template {path}: {message}")]
    Read { path: String, message: String },
    #[error("template {name}: {message}")]
    Render { name: String, message: String },
}

/// The loaded templates and static files.
pub struct Templates {
    env: Environment<'static>,
    statics: Vec<(String, String)>,
}

impl Templates {
    /// The templates compiled into the binary.
    pub fn embedded() -> Result<Templates, TemplateError> {
        let files = EMBEDDED_TEMPLATES.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect();
        let statics = EMBEDDED_STATIC
            .iter()
            .zip(STATIC_FILES)
            .map(|((_, content), (_, dest))| (dest.to_string(), content.to_string()))
            .collect();
        Templates::from_sources(files, statics)
    }

    /// Templates from a folder with the same layout as `templates/`.
    pub fn from_dir(dir: &Path) -> Result<Templates, TemplateError> {
        let read = |rel: &str| {
            let path = dir.join(rel);
            std::fs::read_to_string(&path)
                .map_err(|e| TemplateError::Read { path: path.display().to_string(), message: e.to_string() })
        };
        let mut files = Vec::new();
        for (name, builtin) in EMBEDDED_TEMPLATES {
            let source = if OPTIONAL_FILES.contains(&name) && !dir.join(name).exists() {
                builtin.to_string()
            } else {
                read(name)?
            };
            files.push((name.to_string(), source));
        }
        let mut statics = Vec::new();
        for ((name, dest), (_, builtin)) in STATIC_FILES.into_iter().zip(EMBEDDED_STATIC) {
            let rel = format!("static/{name}");
            let source = if OPTIONAL_STATIC.contains(&name) && !dir.join(&rel).exists() {
                builtin.to_string()
            } else {
                read(&rel)?
            };
            statics.push((dest.to_string(), source));
        }
        Templates::from_sources(files, statics)
    }

    fn from_sources(files: Vec<(String, String)>, statics: Vec<(String, String)>) -> Result<Templates, TemplateError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Chainable);
        env.set_formatter(html_formatter);
        for (name, source) in files {
            env.add_template_owned(name.clone(), source)
                .map_err(|e| TemplateError::Render { name, message: describe(&e) })?;
        }
        Ok(Templates { env, statics })
    }

    /// Renders a context with the template it is for.
    pub fn render<C: Context>(&self, ctx: &C) -> Result<String, TemplateError> {
        let name = C::TEMPLATE;
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|e| TemplateError::Render { name: name.to_string(), message: describe(&e) })?;
        tmpl.render(Value::from_serialize(ctx))
            .map_err(|e| TemplateError::Render { name: name.to_string(), message: describe(&e) })
    }

    /// Static files (path in the site, content).
    pub fn statics(&self) -> &[(String, String)] {
        &self.statics
    }
}

/// Like minijinja's HTML escaping, but leaves `/` alone: URLs stay readable in
/// the output (`href="../it/vpn.html"`) and `/` is harmless in text and in quoted
/// attribute values.
pub(crate) fn html_formatter(
    out: &mut minijinja::Output<'_>,
    state: &minijinja::State<'_, '_>,
    value: &Value,
) -> Result<(), minijinja::Error> {
    if state.auto_escape() != minijinja::AutoEscape::Html || value.is_safe() || value.is_none() || value.is_undefined()
    {
        return minijinja::escape_formatter(out, state, value);
    }
    out.write_str(&escape(&value.to_string()))
        .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::WriteFailure, e.to_string()))
}

/// HTML-escapes text for an element or a quoted attribute value (`&`, `<`, `>`,
/// `"` and `'`; `/` stays): the one rule of the workspace, the `html-escape`
/// crate's, which the snippets, the dialects and the build all use.
pub fn escape(text: &str) -> String {
    html_escape::encode_quoted_attribute(text).into_owned()
}

/// minijinja's error with its line, and its cause chain.
pub(crate) fn describe(e: &minijinja::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

/// What a template receives: one type per template, so that a field a template
/// reads cannot go missing from the build without the compiler noticing.
pub trait Context: serde::Serialize {
    /// The template file this context renders.
    const TEMPLATE: &'static str;
}

/// `site`: the whole site, on every page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SiteInfo {
    pub title: String,
    /// The title is the site's own (`--site-title`, `mkdocs.yml`, the root
    /// page); else it is the default name, said in each page's language.
    pub named: bool,
    pub page_count: usize,
    /// Build date, `YYYY-MM-DD`.
    pub built: String,
    /// The site offers semantic search in the browser (`--browser-semantic`):
    /// the search script gets `data-semantic`.
    pub browser_semantic: bool,
    /// The languages of the site's pages, sorted. With more than one, `<html
    /// data-languages>` names them, and search asks the API for the reader's
    /// (the page's) language (`search.js`).
    pub languages: Vec<String>,
    /// The tag of the most pages ([`crate::i18n::main_language`]): the
    /// language of home, search, 404 and the site's default name.
    pub main_language: String,
}

/// A titled link (breadcrumbs, top sections, sitemap of the search page).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Link<'a> {
    pub title: &'a str,
    pub url: &'a str,
}

/// An entry in a page's or a section's list of children.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Child<'a> {
    pub title: &'a str,
    pub url: &'a str,
    /// The page's first sentence, if it has one.
    pub summary: Option<&'a str>,
    /// Whether it has children of its own.
    pub is_section: bool,
    /// Pages below it.
    pub child_count: usize,
}

/// `page`: one content page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PageView<'a> {
    pub title: &'a str,
    /// Its URL relative to the site's root, as the index records it (what a
    /// "Was this helpful?" rating names).
    pub url: &'a str,
    /// The index has the page, so the API takes a rating of it: the block
    /// "Was this helpful?" is shown (when the site has its API).
    pub rateable: bool,
    /// The id of the page's `<h1>` (from its leading `# Title`).
    pub title_id: Option<&'a str>,
    /// The sanitised body.
    pub html: &'a str,
    pub toc: &'a [crate::render::TocEntry],
    pub breadcrumbs: Vec<Link<'a>>,
    pub last_updated: Option<&'a str>,
    pub version: Option<&'a str>,
    /// Only a URL that passed `safe_url`.
    pub original_url: Option<&'a str>,
    /// The page's tags, each with its listing page (`tags/<tag>.html`).
    pub tags: Vec<TagLink>,
    /// The content file, relative to the content folder (the built-in
    /// templates do not show it: readers have no use for it).
    pub source: &'a str,
    /// The author's summary (`description`, `MetaDescription`): the meta description.
    pub description: Option<&'a str>,
    /// The page in every language it is written in, this one included
    /// ([`crate::translations`]); empty when it has no translation.
    pub translations: Vec<Translation<'a>>,
}

/// The fields every page of the site has: the path back to the root, the site,
/// and the first level of the navigation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Frame<'a> {
    /// `../` repeated to the site root (`""` at the root; for the 404 page, which
    /// is served at any depth, the path of `--site-url`, `/` by default).
    pub root: String,
    pub site: &'a SiteInfo,
    pub top_sections: &'a [Link<'a>],
    /// How many of `top_sections` the header's row shows; the rest are under "More".
    pub top_fit: usize,
    /// The URL of the top-level section the page is in (or is), if any.
    pub current_top: Option<&'a str>,
    /// The page's language: `<html lang>`, and the strings around its text.
    #[serde(flatten)]
    pub locale: Locale<'a>,
}

/// The language a page is shown in ([`crate::i18n`]): the tag `<html lang>`
/// says, its direction, the site's strings in it (`t.on_this_page`…),
/// `page.js`'s and `search.js`'s shares of them as JSON (`page_strings`,
/// `search_strings`, none for English), and the results page its search
/// forms go to (`search_page`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Locale<'a> {
    pub lang: &'a str,
    /// `rtl` for Arabic, Hebrew, Persian, Urdu; else none.
    pub dir: Option<&'static str>,
    pub t: &'static crate::i18n::Strings,
    pub page_strings: Option<String>,
    pub search_strings: Option<String>,
    /// `search.html`, or on a site in several languages the results page in
    /// this one ([`search_page`]).
    pub search_page: String,
}

impl<'a> Locale<'a> {
    /// The locale of a page in language `tag` (a tag without a string table
    /// reads English strings, but keeps its own `lang`).
    pub fn of(tag: &'a str) -> Locale<'a> {
        let t = crate::i18n::strings(tag);
        Locale {
            lang: tag,
            dir: crate::i18n::direction(tag),
            t,
            page_strings: crate::i18n::page_script_json(t),
            search_strings: crate::i18n::search_script_json(t),
            search_page: SEARCH_PAGE.into(),
        }
    }

    /// This locale on `site`: its forms go to the results page in its
    /// language.
    pub fn on_site(tag: &'a str, site: &SiteInfo) -> Locale<'a> {
        Locale { search_page: search_page(tag, site), ..Locale::of(tag) }
    }
}

/// The results page in the main language, and on a site in one language.
pub const SEARCH_PAGE: &str = "search.html";

/// The results page for pages in `tag`: `search.html` in the site's main
/// language, `search.TAG.html` in each other language of a site in several
/// (the same page, its words in that language).
pub fn search_page(tag: &str, site: &SiteInfo) -> String {
    if site.languages.len() > 1 && tag != site.main_language && site.languages.iter().any(|l| l == tag) {
        format!("search.{}.html", kb_common::slug::slugify(tag))
    } else {
        SEARCH_PAGE.into()
    }
}

/// A version of a page in one language, as its language switcher and its
/// `<link rel="alternate" hreflang>` name it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Translation<'a> {
    /// The language tag (`de`, `zh-cn`).
    pub lang: &'a str,
    /// The language's own name ("Deutsch", "中文 (简体)").
    pub name: String,
    /// Relative to the site's root, as every link of a template.
    pub url: &'a str,
    /// Absolute, under `--site-url`: what search engines want of hreflang.
    pub href: String,
    /// The page being shown.
    pub current: bool,
    /// The version in the site's main language: also `hreflang="x-default"`,
    /// the page for readers whose language has none.
    pub default: bool,
}

/// An entry of a sidebar: a page or a section, with the entries under it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SideNode<'a> {
    pub title: &'a str,
    /// Relative to the page showing the sidebar (`wifi.html`, not
    /// `../it/wifi.html`): the sidebar repeats on every page, so every byte counts.
    pub url: String,
    /// The page being shown.
    pub current: bool,
    /// On the way to the current page: its sub-entries are shown open.
    pub open: bool,
    /// It has entries under it (even when, in a very big section, they are not
    /// listed: `children` is then empty).
    pub is_section: bool,
    pub children: Vec<SideNode<'a>>,
}

/// The navigation beside an article or a section: the site's tree when it is
/// small, else the page's top-level section (see [`crate::nav`]).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sidebar<'a> {
    /// The site's name or the top-level section's title, and its page
    /// (relative to the page showing the sidebar, as every entry's).
    pub title: &'a str,
    pub url: String,
    /// That page is the one being shown.
    pub current: bool,
    /// It lists the whole site (a small one), not one section.
    pub whole: bool,
    pub nodes: Vec<SideNode<'a>>,
}

/// The pages before and after an article in its section's reading order.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pager<'a> {
    pub prev: Option<Link<'a>>,
    pub next: Option<Link<'a>>,
}

/// `page.html`: a content page and its children.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PageContext<'a> {
    #[serde(flatten)]
    pub frame: Frame<'a>,
    pub page: PageView<'a>,
    /// The children the page's own text does not link to (all of them when it
    /// links to none).
    pub children: Vec<Child<'a>>,
    /// The page's text links to some of its children: `children` are the rest.
    pub children_more: bool,
    pub sidebar: Option<Sidebar<'a>>,
    pub pager: Pager<'a>,
}

impl Context for PageContext<'_> {
    const TEMPLATE: &'static str = "page.html";
}

/// A tag of a page, and the page that lists every page with it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TagLink {
    pub name: String,
    pub url: String,
}

/// `section`: a folder of pages without a page of its own.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SectionView<'a> {
    pub title: &'a str,
    pub breadcrumbs: Vec<Link<'a>>,
    pub children: Vec<Child<'a>>,
}

/// `section.html`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SectionContext<'a> {
    #[serde(flatten)]
    pub frame: Frame<'a>,
    pub section: SectionView<'a>,
    /// `None` for tag pages, which are not in the tree.
    pub sidebar: Option<Sidebar<'a>>,
}

impl Context for SectionContext<'_> {
    const TEMPLATE: &'static str = "section.html";
}

/// A top-level section on the home page, with its own children listed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HomeSection<'a> {
    #[serde(flatten)]
    pub entry: Child<'a>,
    pub children: Vec<Link<'a>>,
}

/// `home.html`: the root page's introduction, if any, and the sections.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HomeContext<'a> {
    #[serde(flatten)]
    pub frame: Frame<'a>,
    pub page: Option<PageView<'a>>,
    pub sections: Vec<HomeSection<'a>>,
    /// The sections are the site's languages ([`crate::tree::NavTree::language_homes`]).
    pub languages: bool,
}

impl Context for HomeContext<'_> {
    const TEMPLATE: &'static str = "home.html";
}

/// A node of the whole navigation tree.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TreeNode<'a> {
    pub title: &'a str,
    pub url: &'a str,
    pub children: Vec<TreeNode<'a>>,
}

/// `search.html`: the results page, with every section listed for readers
/// without JavaScript.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchContext<'a> {
    #[serde(flatten)]
    pub frame: Frame<'a>,
    pub tree: Vec<TreeNode<'a>>,
}

impl Context for SearchContext<'_> {
    const TEMPLATE: &'static str = "search.html";
}

/// `404.html`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct NotFoundContext<'a> {
    #[serde(flatten)]
    pub frame: Frame<'a>,
}

impl Context for NotFoundContext<'_> {
    const TEMPLATE: &'static str = "404.html";
}

/// One `<url>` of the sitemap.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SitemapUrl<'a> {
    pub loc: String,
    pub lastmod: Option<&'a str>,
    /// The page in each of its languages (empty: one language).
    pub alternates: Vec<Translation<'a>>,
}

/// `sitemap.xml`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SitemapContext<'a> {
    pub urls: Vec<SitemapUrl<'a>>,
}

impl Context for SitemapContext<'_> {
    const TEMPLATE: &'static str = "sitemap.xml";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_templates_render_and_escape() {
        let t = Templates::embedded().unwrap();
        let site = SiteInfo {
            title: "Help <&>".into(),
            named: true,
            page_count: 1,
            built: "2026-01-01".into(),
            browser_semantic: false,
            languages: Vec::new(),
            main_language: "en".into(),
        };
        let top = [Link { title: "IT \"x\"", url: "it/index.html" }];
        let ctx = SectionContext {
            frame: Frame {
                root: "../".into(),
                site: &site,
                top_sections: &top,
                top_fit: 1,
                current_top: None,
                locale: Locale::of("en"),
            },
            section: SectionView { title: "S", breadcrumbs: vec![], children: vec![] },
            sidebar: None,
        };
        let html = t.render(&ctx).unwrap();
        assert!(html.contains("href=\"../it/index.html\""), "{html}");
        assert!(html.contains("Help &lt;&amp;&gt;"));
        assert!(html.contains("IT &quot;x&quot;"));
        assert!(!html.contains("Help <&>"));
        let dests: Vec<&str> = t.statics().iter().map(|(d, _)| d.as_str()).collect();
        assert_eq!(
            dests,
            [
                "assets/style.css",
                "assets/search.js",
                "assets/browser-search.js",
                "widget.js",
                "assets/page.js",
                "assets/theme.js",
                "assets/favicon.svg"
            ]
        );
    }

    #[test]
    fn a_folder_without_the_macros_uses_the_built_in_ones() {
        // A folder of templates written before `macros.html` existed.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("static")).unwrap();
        for (name, source) in EMBEDDED_TEMPLATES.iter().chain(&EMBEDDED_STATIC) {
            let optional_static = name.strip_prefix("static/").is_some_and(|n| OPTIONAL_STATIC.contains(&n));
            if !OPTIONAL_FILES.contains(name) && !optional_static {
                std::fs::write(dir.path().join(name), source).unwrap();
            }
        }
        let t = Templates::from_dir(dir.path()).unwrap();
        let site = SiteInfo {
            title: "Help".into(),
            named: true,
            page_count: 0,
            built: "2026-01-01".into(),
            browser_semantic: false,
            languages: Vec::new(),
            main_language: "en".into(),
        };
        let crumbs = vec![Link { title: "IT", url: "it/index.html" }];
        let ctx = SectionContext {
            frame: Frame {
                root: "../".into(),
                site: &site,
                top_sections: &[],
                top_fit: 0,
                current_top: None,
                locale: Locale::of("en"),
            },
            section: SectionView { title: "VPN", breadcrumbs: crumbs, children: vec![] },
            sidebar: None,
        };
        assert_eq!(t.render(&ctx).unwrap(), Templates::embedded().unwrap().render(&ctx).unwrap());
        let builtin = Templates::embedded().unwrap();
        assert_eq!(t.statics(), builtin.statics(), "the scripts it lacks are the built-in ones");
        std::fs::remove_file(dir.path().join("page.html")).unwrap();
        assert!(Templates::from_dir(dir.path()).is_err(), "only the macros may be left out");
    }

    /// style.css states the dark tokens twice: for the system's dark mode and
    /// for the reader's choice (`html[data-theme="dark"]`). They must agree.
    #[test]
    fn the_chosen_dark_theme_is_the_systems_dark_theme() {
        let css = EMBEDDED_STATIC.iter().find(|(n, _)| *n == "static/style.css").map(|(_, s)| *s).unwrap();
        let declarations = |block: &str| -> Vec<String> {
            block.lines().map(str::trim).filter(|l| l.starts_with("--")).map(String::from).collect()
        };
        let system: Vec<&str> = css.split("  :root:not([data-theme=\"light\"]) {").skip(1).collect();
        let chosen: Vec<&str> = css.split("\n:root[data-theme=\"dark\"] {").skip(1).collect();
        let system: Vec<Vec<String>> = system.iter().map(|b| declarations(&b[..b.find('}').unwrap()])).collect();
        let chosen: Vec<Vec<String>> =
            chosen.iter().map(|b| declarations(&b[..b.find('}').unwrap()])).filter(|d| !d.is_empty()).collect();
        assert_eq!(system.len(), 2, "the site's tokens and the search UI's");
        assert!(system.iter().all(|d| d.len() >= 5));
        assert_eq!(system, chosen);
    }

    /// A page and its frame in `lang`, with `translations`.
    fn render_page(lang: &str, translations: Vec<Translation<'_>>) -> String {
        let t = Templates::embedded().unwrap();
        let site = SiteInfo {
            title: "Hilfe <&>".into(),
            named: true,
            page_count: 2,
            built: "2026-01-01".into(),
            browser_semantic: false,
            languages: Vec::new(),
            main_language: "en".into(),
        };
        let toc = [crate::render::TocEntry { level: 2, id: "x".into(), title: "X".into() }];
        let page = PageView {
            title: "Pods",
            url: "de/pods.html",
            rateable: true,
            title_id: None,
            html: "<p>Text</p>",
            toc: &toc,
            breadcrumbs: vec![Link { title: "Home", url: "index.html" }],
            last_updated: None,
            version: None,
            original_url: None,
            tags: vec![],
            source: "de/pods.md",
            description: None,
            translations,
        };
        let ctx = PageContext {
            frame: Frame {
                root: "../".into(),
                site: &site,
                top_sections: &[],
                top_fit: 0,
                current_top: None,
                locale: Locale::of(lang),
            },
            page,
            children: vec![],
            children_more: false,
            sidebar: None,
            pager: Pager { prev: Some(Link { title: "A", url: "de/a.html" }), next: None },
        };
        t.render(&ctx).unwrap()
    }

    #[test]
    fn a_page_is_shown_in_its_language_with_its_translations() {
        let version = |lang: &'static str, url: &'static str, current: bool| Translation {
            lang,
            name: crate::i18n::native_name(lang),
            url,
            href: format!("https://help.example.edu/{url}"),
            current,
            default: lang == "en",
        };
        let html = render_page(
            "de",
            vec![
                version("de", "de/pods.html", true),
                version("en", "en/pods.html", false),
                version("zh-cn", "zh-cn/pods.html", false),
            ],
        );
        assert!(html.contains("<html lang=\"de\">"), "{html}");
        // The switcher: every language in its own name, linked from this page, this one marked.
        assert!(html.contains("<nav class=\"lang-switch\" aria-label=\"Sprachen\">"), "{html}");
        assert!(html.contains(
            "<li><a href=\"../de/pods.html\" hreflang=\"de\" lang=\"de\" aria-current=\"page\">Deutsch</a></li>"
        ));
        assert!(html.contains("<li><a href=\"../en/pods.html\" hreflang=\"en\" lang=\"en\">English</a></li>"));
        assert!(html.contains("lang=\"zh-cn\">中文 (简体)</a>"));
        let switcher = html.split("<nav class=\"lang-switch\"").nth(1).and_then(|s| s.split("</nav>").next()).unwrap();
        assert_eq!(switcher.matches("<li>").count(), 3);
        assert_eq!(switcher.matches("aria-current").count(), 1);
        // Search engines get every version, absolute.
        for (lang, url) in [("de", "de/pods.html"), ("en", "en/pods.html"), ("zh-cn", "zh-cn/pods.html")] {
            let link = format!("<link rel=\"alternate\" hreflang=\"{lang}\" href=\"https://help.example.edu/{url}\">");
            assert!(html.contains(&link), "{link}");
        }
        // And the main language's version for readers whose language has none.
        assert!(html.contains(
            "<link rel=\"alternate\" hreflang=\"x-default\" href=\"https://help.example.edu/en/pods.html\">"
        ));
        assert_eq!(html.matches("x-default").count(), 1);
        // The chrome in German, the site's name still escaped inside a pattern.
        for said in [
            ">Zum Inhalt springen</a>",
            "<label class=\"visually-hidden\" for=\"search-input\">Hilfe &lt;&amp;&gt; durchsuchen</label>",
            "<summary>Auf dieser Seite</summary>",
            ">War diese Seite hilfreich?</h2>",
            "<span class=\"pager__label\">Vorherige</span>",
            "<nav class=\"breadcrumbs\" aria-label=\"Brotkrümelnavigation\">",
            "2 Artikel\n          · Erstellt am <time",
            "data-title=\"Hilfe-Center fragen\"",
            "data-strings=\"{&quot;copy&quot;:&quot;Kopieren&quot;",
        ] {
            assert!(html.contains(said), "{said}");
        }
        assert!(!html.contains("On this page") && !html.contains("dir="), "{html}");
    }

    #[test]
    fn english_carries_no_extra_and_rtl_languages_say_so() {
        let html = render_page("en", vec![]);
        assert!(html.contains("<html lang=\"en\">"));
        assert!(html.contains("<script src=\"../assets/page.js\" defer>"), "page.js keeps its English");
        assert!(!html.contains("lang-switch") && !html.contains("hreflang"), "no translations, no switcher");
        assert!(html.contains("<summary>On this page</summary>"));
        let ar = render_page("ar", vec![]);
        assert!(ar.contains("<html lang=\"ar\" dir=\"rtl\">"), "{ar}");
        // No Arabic table: English words, the page's own language tag.
        assert!(ar.contains("<summary>On this page</summary>"));
        let ru = render_page("ru", vec![]);
        assert!(ru.contains("<html lang=\"ru\">") && !ru.contains("data-strings"));
    }

    #[test]
    fn template_errors_name_the_template() {
        let err = Templates::from_sources(vec![("page.html".into(), "{% if %}".into())], vec![]).err().unwrap();
        assert!(err.to_string().starts_with("template page.html"), "{err}");
    }
}
