//! `site-builder build`: the pipeline from a content folder to `OUT/`.
//!
//! ```text
//! content/**/*.{md,mdx} ─parse─▶ pages ─normalize (kb-dialect)─▶ (Html, Text) Markdown
//!      Html ─render─▶ sanitised HTML ─templates─▶ OUT/site/
//!      Text ─chunk─▶ chunks ─filter─▶ chunks ─enrich─▶ OUT/chunks.jsonl
//! everything skipped, dropped or broken ─▶ OUT/report.json
//! ```
//!
//! A bad page is skipped and reported (or fails the build under `--strict`); the
//! previous `OUT/site/` is replaced only once the new one is complete.
//!
//! The stages, one module each: [`read`] (the content folder into pages),
//! [`addresses`] (each page's URL and folder chain), [`pages`] (normalised and
//! rendered, with what the report says of them), [`chunks`] (chunked, filtered,
//! enriched, and the index built), [`write`] (the site written into the
//! staging folder).

mod addresses;
mod chunks;
mod pages;
mod read;
mod write;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use search_core::chunk::{encode_jsonl, CHUNKS_FORMAT_VERSION};

use crate::browser::BrowserError;
use crate::chunk::{ChunkOptions, OptionsError};
use crate::embed::LongText;
use crate::filter::{HeuristicJudge, StubJudge};
use crate::order::MkDocs;
use crate::output::{write_atomic, Staging, WriteError};
use crate::parse::Page;
use crate::render::Rendered;
use crate::report::*;
use crate::site::{TemplateError, Templates};
use crate::translations::Translations;
use crate::tree::{FolderRef, NavTree, Order, PageRef};
use kb_dialect::Dialect;
use search_core::index::{Bm25Params, Mode, VectorStorage};

use chunks::{build_index, chunk_filter_enrich};
use pages::render_pages;
use read::{discover, read_pages};
use write::{assets_used, site_info, write_site};

pub use addresses::page_url;

/// How the stub candidates are judged (`--stub-judge`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JudgeChoice {
    /// The LLM when one is configured, else the heuristic.
    #[default]
    Auto,
    Heuristic,
    /// The LLM; the build fails if none is configured.
    Llm,
}

/// Everything `build` needs, parsed and checked once at the edge.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub content: PathBuf,
    pub out: PathBuf,
    pub chunk: ChunkOptions,
    pub strict: bool,
    /// A templates folder to use instead of the built-in templates.
    pub templates: Option<PathBuf>,
    /// Absolute base URL of the deployed site, for `sitemap.xml`; its path is
    /// the root the 404 page (served at any depth) links from.
    pub site_url: String,
    /// The site's name (`--site-title`); `None`: `mkdocs.yml`'s `site_name`, else
    /// the tree's root (the root page's title), else "Knowledge base" in the site's main language.
    pub site_title: Option<String>,
    pub judge: JudgeChoice,
    pub llm: Option<crate::llm::LlmConfig>,
    /// Show progress bars (when stderr is a terminal).
    pub progress: bool,
    /// Apply the chunk filters (off only to measure what they are worth).
    pub filters: bool,
    /// Build the hybrid index (`OUT/index.bin`, `OUT/encoder.bin`); `None` skips it.
    pub index: Option<IndexOptions>,
    /// Write browser search into the site (`OUT/site/_search/`; needs the index);
    /// `None` leaves it out.
    pub browser: Option<crate::browser::BrowserOptions>,
    /// Read every page in this dialect (`--dialect`); `None` detects it per page.
    pub dialect: Option<Dialect>,
    /// The path the source site served the pages under (`/docs`), for links
    /// written site-root-relative (`/docs/setup/setup.md`); `None` detects it.
    pub base_path: Option<String>,
}

/// How the hybrid index is built.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// The model's folder (`--model`): MiniLM's `model.safetensors`,
    /// `tokenizer.json`, `config.json`, or multilingual-e5-small's
    /// `e5-small-q4.bin`. `None`: chosen by the knowledge base's languages
    /// ([`chunks::choose_model`]).
    pub model_dir: Option<PathBuf>,
    /// Ship the multilingual encoder unpruned (`--full-vocabulary`).
    pub full_vocabulary: bool,
    pub vectors: VectorStorage,
    pub long_text: LongText,
    pub default_mode: Mode,
    pub alpha: f32,
    /// `convex`: how many top scores of each list define its range.
    pub norm_depth: usize,
    /// Where vectors of earlier builds are kept (`None`: embed everything).
    pub embed_cache: Option<PathBuf>,
    /// From this many chunks on, dense search walks an HNSW graph instead of
    /// scanning every vector.
    pub hnsw_threshold: usize,
    pub bm25: Bm25Params,
}

/// Why a build did not produce its outputs.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("content folder {0} does not exist; pass --content DIR")]
    ContentMissing(PathBuf),
    #[error("{0} is not a folder; --content takes the folder that holds the Markdown pages")]
    ContentNotDir(PathBuf),
    #[error("no Markdown pages (*.md, *.mdx) under {0}")]
    NoPages(PathBuf),
    #[error("{read} page(s) read under {content} and none could be rendered: {reason} (see {report})")]
    NothingRendered { read: usize, content: PathBuf, reason: String, report: PathBuf },
    #[error(transparent)]
    Options(#[from] OptionsError),
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("--stub-judge llm needs an LLM: set SPIN_VARIABLE_LLM_BASE_URL (and _MODEL, _API_KEY) or use --stub-judge heuristic")]
    NoLlm,
    #[error("cannot set up the HTTP client for the LLM stub judge: {0}")]
    LlmClient(#[source] reqwest::Error),
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
    #[error(transparent)]
    Browser(#[from] crate::browser::BrowserError),
    #[error("{0}")]
    Graph(String),
    #[error(
        "--strict: {skipped} page(s) skipped and {broken} broken link(s); the site was not replaced (see {report})"
    )]
    Strict { skipped: usize, broken: usize, report: PathBuf },
}

/// A page that parsed, with everything derived from it.
pub(super) struct Built {
    page: Page,
    url: String,
    chain: Vec<String>,
    text_md: String,
    rendered: Rendered,
    summary: Option<String>,
    /// The page's language ([`crate::language`]).
    lang: crate::language::PageLanguage,
    /// The languages the page stands in for (`Chunk::stands_in`,
    /// [`crate::translations::stand_ins`]).
    stands_in: Vec<String>,
    /// Some chunk of the page is in the index (the filters may drop every one
    /// of a stub): only such a page asks "Was this helpful?", since the API
    /// takes a rating only for a page the index knows.
    indexed: bool,
}

/// Runs the build and returns its report (also written to `OUT/report.json`).
pub fn build(opts: &BuildOptions) -> Result<Report, BuildError> {
    let started = Instant::now();
    let chunk_opts = opts.chunk.validate()?;
    check_inputs(opts)?;
    let templates = match &opts.templates {
        Some(dir) => Templates::from_dir(dir)?,
        None => Templates::embedded()?,
    };
    let judge = stub_judge(opts)?;
    let mut report = new_report(opts, &chunk_opts, judge.name());

    // Parse.
    let (sources, assets) = discover(&opts.content, &mut report);
    if sources.is_empty() && report.skipped.is_empty() {
        return Err(BuildError::NoPages(opts.content.clone()));
    }
    report.pages.read = sources.len() + report.skipped.len();
    let pages = read_pages(&opts.content, &sources, &mut report);
    report.pages.unpublished = report.unpublished.len();
    report.pages.skipped = report.skipped.len();
    if pages.is_empty() {
        return Err(nothing_rendered(opts, &mut report, started));
    }

    // Normalise and render.
    let mut built = render_pages(pages, &assets, opts, &mut report);
    report.pages.rendered = built.len();
    let translations = translations_of(&mut built, &mut report);

    // Chunk, filter, enrich.
    let mut chunks = chunk_filter_enrich(&built, &chunk_opts, opts.filters, judge.as_ref(), opts.progress, &mut report);
    let indexed: std::collections::HashSet<&str> = chunks.iter().map(|c| c.url.as_str()).collect();
    for b in &mut built {
        b.indexed = indexed.contains(b.url.as_str());
    }

    // Write the site into a staging folder.
    let mkdocs = MkDocs::find(&opts.content).unwrap_or_else(|e| {
        report.warnings.push(Warning { file: e.file().to_string(), line: None, message: e.to_string() });
        None
    });
    let tree = nav_tree(&built, &assets, mkdocs.as_ref(), opts, &mut report);
    // Results name a page's way as its site does; what is searched (each
    // chunk's index text) keeps the source's.
    chunks.iter_mut().for_each(|c| tree.shorten(&mut c.path));
    let site = site_info(&tree, &built, opts, mkdocs.as_ref().and_then(|m| m.site_name.as_deref()));
    let site_dir = opts.out.join("site");
    let staging = Staging::new(&site_dir)?;
    let content = write::Content { tree: &tree, built: &built, translations: &translations, site: &site };
    write_site(&staging, &templates, content, opts, &mut report)?;
    report.warnings.extend(crate::assets::active_content(
        &opts.content,
        built.iter().map(|b| (b.page.source.as_str(), &b.rendered.assets)),
    ));

    report.seconds = started.elapsed().as_secs_f64();
    let report_path = opts.out.join("report.json");
    if opts.strict && (!report.skipped.is_empty() || !report.broken_links.is_empty()) {
        write_atomic(&report_path, &report_json(&report))?;
        return Err(BuildError::Strict {
            skipped: report.skipped.len(),
            broken: report.broken_links.len(),
            report: report_path,
        });
    }
    let index_files = match &opts.index {
        Some(io) => Some(build_index(&chunks, io, opts.progress, &mut report)?),
        None => None,
    };
    if let (Some((index, encoder)), Some(bo)) = (&index_files, &opts.browser) {
        write_browser_search(&staging, index, encoder, bo, &mut report)?;
    }
    crate::assets::write_manifest(&staging, &assets_used(&built))?;
    staging.commit()?;
    write_atomic(&opts.out.join("chunks.jsonl"), encode_jsonl(&chunks).as_bytes())?;
    if let Some((index, encoder)) = index_files {
        write_atomic(&opts.out.join("encoder.bin"), &encoder)?;
        write_atomic(&opts.out.join("index.bin"), &index)?;
    }
    report.seconds = started.elapsed().as_secs_f64();
    write_atomic(&report_path, &report_json(&report))?;
    Ok(report)
}

/// Stage "translations": which pages are translations of one another
/// ([`crate::translations`]), and the languages each page stands in for, set
/// on it; the report's count of each, and a warning for each conflict.
fn translations_of(built: &mut [Built], report: &mut Report) -> Translations {
    let tags: Vec<&str> = built.iter().map(|b| b.lang.tag.as_str()).collect();
    let pages: Vec<&Page> = built.iter().map(|b| &b.page).collect();
    let translations = crate::translations::group(&pages, &tags);
    let main = crate::i18n::main_language(tags.iter().copied());
    let stands_in = crate::translations::stand_ins(&translations, &tags, &main);
    for (b, s) in built.iter_mut().zip(stands_in) {
        b.stands_in = s;
    }
    report.languages.translation_groups = translations.groups.len();
    for lang in built.iter().flat_map(|b| &b.stands_in) {
        *report.languages.untranslated.entry(lang.clone()).or_default() += 1;
    }
    report.warnings.extend(translation_conflicts(&translations, built));
    translations
}

/// Groups in which two pages of one language claim to translate the same
/// page, as warnings: the switcher links the first of them.
fn translation_conflicts<'a>(
    translations: &'a Translations,
    built: &'a [Built],
) -> impl Iterator<Item = crate::report::Warning> + 'a {
    translations.conflicts.iter().map(move |c| {
        let files: Vec<&str> = c.pages.iter().map(|&p| built[p].page.source.as_str()).collect();
        crate::report::Warning {
            file: files[0].to_string(),
            line: None,
            message: format!(
                "{} pages in language {} are translations of the same page ({}); the language switcher links the first",
                files.len(),
                c.lang,
                files.join(", ")
            ),
        }
    })
}

/// Stage "browser search" ([`crate::browser::write`]): its report, or a
/// warning when the engine it needs is missing from a folder not named.
fn write_browser_search(
    staging: &Staging,
    index: &[u8],
    encoder: &[u8],
    bo: &crate::browser::BrowserOptions,
    report: &mut Report,
) -> Result<(), BuildError> {
    let warn = |message: String| Warning { file: bo.engine.display().to_string(), line: None, message };
    match crate::browser::write(staging, index, encoder, bo) {
        Ok(written) => {
            if !written.unread_languages.is_empty() {
                report.warnings.push(warn(format!(
                    "browser search: the pages in {} are searched as English words on a static host: the engine that reads them ({}) is not in this folder; build it with `scripts/build-search-web`",
                    written.unread_languages.join(", "),
                    crate::browser::LANGUAGES_ENGINE_FILES.join(", ")
                )));
            }
            report.browser_search = Some(written);
        }
        // Not asked for by name: the site searches through /api only.
        Err(e @ (BrowserError::EngineMissing(_) | BrowserError::LanguagesEngineMissing { .. })) if !bo.required => {
            report.warnings.push(warn(format!("{e}; until then the site searches through /api only")))
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The navigation tree, each page and folder in its source's order
/// ([`crate::order`]); category files that cannot be read are warnings.
fn nav_tree(
    built: &[Built],
    files: &std::collections::HashSet<String>,
    mkdocs: Option<&MkDocs>,
    opts: &BuildOptions,
    report: &mut Report,
) -> NavTree {
    let pages: Vec<PageRef> = built
        .iter()
        .map(|b| PageRef {
            chain: b.chain.iter().map(String::as_str).collect(),
            url: &b.url,
            order: Order::of_page(mkdocs.and_then(|m| m.position(&b.page.source)), b.page.order),
        })
        .collect();
    let (categories, errors) = crate::order::categories(&opts.content, files);
    let warn = |e: crate::order::OrderError| Warning { file: e.file().to_string(), line: None, message: e.to_string() };
    report.warnings.extend(errors.into_iter().map(warn));
    let page_refs: Vec<&Page> = built.iter().map(|b| &b.page).collect();
    let dirs: Vec<&str> = categories.iter().map(|(d, _)| d.as_str()).collect();
    let chains = addresses::folder_chains(&page_refs, &dirs);
    let folders: Vec<FolderRef> = chains
        .iter()
        .zip(&categories)
        .map(|(chain, (_, position))| FolderRef {
            chain: chain.iter().map(String::as_str).collect(),
            order: Order::of_page(None, Some(*position)),
        })
        .collect();
    let mut tree = NavTree::build(&pages, &folders);
    let langs: Vec<&str> = built.iter().map(|b| b.lang.tag.as_str()).collect();
    let sources = || built.iter().map(|b| b.page.source.as_str());
    let folders = crate::language::language_folders_of(sources());
    // Folders named for their language (`de/`), or holding one each (`english/`).
    let holding = crate::language::content_folders(sources().zip(langs.iter().copied()));
    let in_folder: Vec<bool> = sources()
        .map(|s| {
            crate::language::folder_tag(s, &folders).is_some()
                || s.split_once('/').is_some_and(|(top, _)| holding.contains_key(top))
        })
        .collect();
    tree.find_language_homes(&langs, &in_folder);
    tree
}

/// The content folder exists and is a folder; a required browser engine is
/// there, before any work (a missing engine should not cost a whole build).
fn check_inputs(opts: &BuildOptions) -> Result<(), BuildError> {
    if !opts.content.exists() {
        return Err(BuildError::ContentMissing(opts.content.clone()));
    }
    if !opts.content.is_dir() {
        return Err(BuildError::ContentNotDir(opts.content.clone()));
    }
    if let Some(bo) = opts.browser.as_ref().filter(|b| b.required) {
        crate::browser::check_engine(bo)?;
    }
    Ok(())
}

/// Who judges stub candidates (`--stub-judge`).
fn stub_judge(opts: &BuildOptions) -> Result<Box<dyn StubJudge>, BuildError> {
    Ok(match (opts.judge, &opts.llm) {
        (JudgeChoice::Llm, None) => return Err(BuildError::NoLlm),
        (JudgeChoice::Heuristic, _) | (JudgeChoice::Auto, None) => Box::new(HeuristicJudge::default()),
        (_, Some(cfg)) => Box::new(
            crate::llm::LlmJudge::new(cfg.clone(), std::time::Duration::from_secs(60))
                .map_err(BuildError::LlmClient)?,
        ),
    })
}

fn new_report(opts: &BuildOptions, chunk_opts: &ChunkOptions, judge: &str) -> Report {
    Report {
        format: REPORT_FORMAT_VERSION,
        chunks_format: CHUNKS_FORMAT_VERSION,
        content: opts.content.display().to_string(),
        out: opts.out.display().to_string(),
        options: ReportOptions {
            header_levels: chunk_opts.header_levels,
            chunk_size: chunk_opts.chunk_size,
            overlap: chunk_opts.overlap,
            strict: opts.strict,
            stub_judge: judge.to_string(),
        },
        ..Report::default()
    }
}

/// Writes the report and says why a build that read pages renders none.
fn nothing_rendered(opts: &BuildOptions, report: &mut Report, started: Instant) -> BuildError {
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &report.skipped {
        *reasons.entry(s.reason.as_str()).or_default() += 1;
    }
    let reason = match report.skipped.first() {
        Some(first) if reasons.len() == 1 => {
            format!("every page was skipped ({}), e.g. {}", first.reason, first.message)
        }
        _ => {
            let all: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
            format!("every page was skipped: {}", all.join(", "))
        }
    };
    report.seconds = started.elapsed().as_secs_f64();
    let path = opts.out.join("report.json");
    if let Err(e) = write_atomic(&path, &report_json(report)) {
        return BuildError::Write(e);
    }
    BuildError::NothingRendered { read: report.pages.read, content: opts.content.clone(), reason, report: path }
}

fn report_json(report: &Report) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(report).unwrap_or_default();
    v.push(b'\n');
    v
}

pub(super) fn progress(enabled: bool, len: u64, what: &str) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(what.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::addresses::{is_folder_page, page_url, resolve_chains};
    use super::read::is_mdx_partial;
    use super::write::{root_path, today};
    use super::*;

    #[test]
    fn urls_mirror_sources() {
        assert_eq!(page_url("it/wifi.md"), "it/wifi.html");
        assert_eq!(page_url("index.md"), "index.html");
        assert_eq!(page_url("guides/tabs.mdx"), "guides/tabs.html");
        assert_eq!(page_url("concepts/_index.md"), "concepts/index.html");
        assert!(is_folder_page("a/README.md") && is_folder_page("_index.md") && !is_folder_page("a/indexes.md"));
        assert!(is_mdx_partial("a/_partial.mdx") && !is_mdx_partial("a/_index.md"));
    }

    #[test]
    fn the_404_page_finds_the_site_from_the_path_of_its_url() {
        assert_eq!(root_path("http://127.0.0.1:3000/"), "/");
        assert_eq!(root_path("https://help.example.edu"), "/");
        assert_eq!(root_path("https://help.example.edu/docs"), "/docs/");
        assert_eq!(root_path("https://x.example/a/b/?ref=1#top"), "/a/b/");
        assert_eq!(root_path("/kb"), "/kb/");
    }

    #[test]
    fn today_is_a_date() {
        let t = today();
        assert_eq!(t.len(), 10);
        assert!(t.starts_with("20"));
    }

    fn plain(source: &str, title: &str, ancestors: Option<Vec<&str>>) -> Page {
        Page {
            title: title.into(),
            ancestors: ancestors.map(|a| a.into_iter().map(String::from).collect()),
            ..crate::parse::testing::page(source, "")
        }
    }

    #[test]
    fn chains_come_from_folders_when_frontmatter_is_silent() {
        let pages = vec![
            plain("index.md", "Help", Some(vec![])),
            plain("it/index.md", "IT services", Some(vec!["Help"])),
            plain("it/vpn.md", "VPN", None),
            plain("it/deep/more/x.md", "X", None),
            plain("misc/index.md", "Misc", None),
        ];
        let chains = resolve_chains(&pages);
        assert_eq!(chains[2], vec!["Help", "IT services", "VPN"]);
        assert_eq!(chains[3], vec!["Help", "IT services", "Deep", "More", "X"]);
        assert_eq!(chains[4], vec!["Help", "Misc"]);
    }

    /// The top folders of a site in several languages are named by their
    /// language, in it; a lone `it/` folder stays IT services' folder.
    #[test]
    fn language_folders_are_named_in_their_language() {
        let pages = vec![
            plain("de/wlan.md", "WLAN", None),
            plain("en/wifi.md", "Wi-Fi", None),
            plain("zh-cn/guides/wifi.md", "无线网络", None),
            plain("en/it/vpn.md", "VPN", None),
        ];
        let chains = resolve_chains(&pages);
        assert_eq!(chains[0], vec!["Deutsch", "WLAN"]);
        assert_eq!(chains[1], vec!["English", "Wi-Fi"]);
        assert_eq!(chains[2], vec!["中文 (简体)", "Guides", "无线网络"]);
        assert_eq!(chains[3], vec!["English", "It", "VPN"]);
        let one = resolve_chains(&[plain("it/vpn.md", "VPN", None), plain("faq.md", "FAQ", None)]);
        assert_eq!(one[0], vec!["It", "VPN"]);
    }
}
