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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use search_core::chunk::{encode_jsonl, Chunk, CHUNKS_FORMAT_VERSION};

use crate::chunk::{chunk_page, ChunkOptions, OptionsError};
use crate::embed::{embed_all, EmbedCache, EncoderFile, LongText};
use crate::filter::{self, HeuristicJudge, Rule, StubJudge};
use crate::output::{write_atomic, Staging, WriteError};
use crate::parse::{is_page_file, parse_page, strip_page_extension, Page, PageError};
use crate::render::{self, root_prefix, LinkContext, Rendered};
use crate::report::*;
use crate::site::{TemplateError, Templates};
use crate::tree::{NavTree, PageRef, HOME_URL};
use crate::{enrich, summary};
use kb_common::safe_url;
use kb_dialect::{normalize, Dialect, Dialects, Target};
use search_core::encoder::DIM;
use search_core::index::{self as hybrid, Bm25Params, Mode, VectorStorage};

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
    /// Absolute base URL of the deployed site, for `sitemap.xml`.
    pub site_url: String,
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
    /// Folder with `model.safetensors`, `tokenizer.json`, `config.json`.
    pub model_dir: PathBuf,
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
    LlmClient(String),
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
struct Built {
    page: Page,
    url: String,
    chain: Vec<String>,
    text_md: String,
    rendered: Rendered,
    summary: Option<String>,
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
    let built = render_pages(pages, &assets, opts, &mut report);
    report.pages.rendered = built.len();

    // Chunk, filter, enrich.
    let chunks = chunk_filter_enrich(&built, &chunk_opts, opts.filters, judge.as_ref(), opts.progress, &mut report);

    // Write the site into a staging folder.
    let tree = NavTree::build(
        &built
            .iter()
            .map(|b| PageRef { chain: b.chain.iter().map(String::as_str).collect(), url: &b.url, order: b.page.order })
            .collect::<Vec<_>>(),
    );
    let site_dir = opts.out.join("site");
    let staging = Staging::new(&site_dir)?;
    write_site(&staging, &templates, &tree, &built, &assets_used(&built), opts, &mut report)?;
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
        if bo.required || crate::browser::engine_present(&bo.engine) {
            report.browser_search = Some(crate::browser::write(&staging, index, encoder, bo)?);
        } else {
            report.warnings.push(Warning {
                file: bo.engine.display().to_string(),
                line: None,
                message: "no browser engine here, so the site searches through /api only; build it with `scripts/build-search-web` (or pass --no-browser-search to say so)".into(),
            });
        }
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

/// Parses every page file; a bad one is skipped and reported, a draft or MDX
/// partial is set aside and reported, a duplicate id is skipped.
fn read_pages(content: &Path, sources: &[String], report: &mut Report) -> Vec<Page> {
    let mut pages: Vec<Page> = Vec::with_capacity(sources.len());
    let mut ids: HashMap<String, String> = HashMap::new();
    for source in sources {
        if is_mdx_partial(source) {
            report.unpublished.push(Unpublished { file: source.clone(), reason: "partial".into() });
            continue;
        }
        let parsed = std::fs::read(content.join(source))
            .map_err(|e| PageError::Io { file: source.clone(), message: e.to_string() })
            .and_then(|bytes| {
                let mut page = parse_page(source, &bytes)?;
                drop_unsafe_original_url(&mut page, &bytes, report);
                Ok(page)
            })
            .and_then(|page| match ids.get(&page.id) {
                Some(first) => {
                    Err(PageError::DuplicateId { file: source.clone(), id: page.id.clone(), first: first.clone() })
                }
                None => Ok(page),
            });
        match parsed {
            Ok(page) if page.draft => {
                report.unpublished.push(Unpublished { file: source.clone(), reason: "draft".into() })
            }
            Ok(page) => {
                ids.insert(page.id.clone(), source.clone());
                pages.push(page);
            }
            Err(e) => report.skipped.push(Skipped {
                file: source.clone(),
                line: e.line(),
                reason: e.kind().to_string(),
                message: e.to_string(),
            }),
        }
    }
    pages
}

/// Docusaurus does not route `_name.mdx` files: other pages import them.
fn is_mdx_partial(source: &str) -> bool {
    let name = source.rsplit('/').next().unwrap_or(source);
    name.starts_with('_') && name.to_ascii_lowercase().ends_with(".mdx")
}

/// Normalises every page from its dialects to CommonMark and renders it,
/// reporting what did not resolve or render.
fn render_pages(pages: Vec<Page>, assets: &HashSet<String>, opts: &BuildOptions, report: &mut Report) -> Vec<Built> {
    let chains = resolve_chains(&pages);
    let urls: Vec<String> = pages.iter().map(|p| page_url(&p.source)).collect();
    let mut page_urls: HashMap<String, String> =
        pages.iter().zip(&urls).map(|(p, u)| (p.source.clone(), u.clone())).collect();
    // Tag pages are written for tags without a page of their own: links to them resolve.
    let refs: Vec<&Page> = pages.iter().collect();
    let tag_pages: Vec<String> = crate::tags::listings(&refs)
        .into_keys()
        .map(|t| crate::tags::source(&t))
        .filter(|s| !page_urls.contains_key(s))
        .collect();
    for source in &tag_pages {
        page_urls.insert(source.clone(), page_url(source));
    }
    let addresses = addresses(&pages, &urls);
    let asset_exists = |rel: &str| assets.contains(rel);
    let kb =
        crate::resolve::KnowledgeBase::new(&pages, &tag_pages, assets, crate::resolve::SnippetDir::new(&opts.content));
    let bar = progress(opts.progress, pages.len() as u64, "render");
    let mut built: Vec<Built> = Vec::with_capacity(pages.len());
    for (i, (url, chain)) in urls.into_iter().zip(chains).enumerate() {
        let page = &pages[i];
        bar.set_message(page.source.clone());
        let dialects = opts.dialect.map_or_else(|| Dialects::detect(&page.source, &page.body), Dialect::dialects);
        count_dialects(dialects, report);
        let resolver = kb.for_page(&page.source);
        let by_name = |target: &str| {
            use kb_dialect::Resolver;
            resolver.page(target).or_else(|| resolver.asset(target))
        };
        let ctx = LinkContext {
            pages: &page_urls,
            addresses: &addresses,
            base_path: opts.base_path.as_deref(),
            asset_exists: &asset_exists,
            by_name: dialects.obsidian.then_some(&by_name as render::ByName<'_>),
            from_root: dialects.mdx,
        };
        let html_md = normalize(&page.body, Target::Html, dialects, &resolver);
        let text_md = normalize(&page.body, Target::Text, dialects, &resolver);
        report_normalized(page, &html_md, report);
        let rendered = render::render(&html_md, &page.source, &url, &page.title, page.body_line, &ctx);
        report_rendered(page, &rendered, &html_md.text, &text_md.text, report);
        let summary = page.description.clone().or_else(|| summary::first_sentence(&text_md.text, 180));
        built.push(Built { page: page.clone(), url, chain, text_md: text_md.text, rendered, summary });
        bar.inc(1);
    }
    bar.finish_and_clear();
    built
}

/// Every page's other addresses (`slug`, `permalink`, old URLs), without their
/// leading `/`, → its URL. The first page to claim an address keeps it.
fn addresses(pages: &[Page], urls: &[String]) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for (p, u) in pages.iter().zip(urls) {
        for a in &p.addresses {
            map.entry(a.trim_matches('/').to_string()).or_insert_with(|| u.clone());
        }
    }
    map
}

fn count_dialects(d: Dialects, report: &mut Report) {
    let on = [("mkdocs", d.mkdocs), ("obsidian", d.obsidian), ("gfm", d.gfm), ("mdx", d.mdx), ("hugo", d.hugo)];
    for (name, _) in on.iter().filter(|(_, on)| *on) {
        *report.dialects.pages.entry((*name).to_string()).or_default() += 1;
    }
}

/// Missing snippets and the dialect passes' notices, with their file lines.
fn report_normalized(page: &Page, md: &kb_dialect::Normalized, report: &mut Report) {
    for (line, name) in &md.missing_snippets {
        report.warnings.push(Warning {
            file: page.source.clone(),
            line: Some(page.body_line + line),
            message: format!("snippet include \"{name}\" not found in the content folder; the line was left out"),
        });
    }
    for n in &md.notices {
        report.dialects.notices.push(DialectNotice {
            file: page.source.clone(),
            line: page.body_line + n.line,
            kind: n.kind.name().to_string(),
            message: n.message.clone(),
        });
    }
}

/// Broken links, missing assets, refused URLs, and dialect syntax left raw.
fn report_rendered(page: &Page, rendered: &Rendered, html_md: &str, text_md: &str, report: &mut Report) {
    let file = || page.source.clone();
    for l in &rendered.broken_links {
        report.broken_links.push(LinkProblem { file: file(), line: l.line, target: l.target.clone() });
    }
    for l in &rendered.missing_assets {
        report.missing_assets.push(LinkProblem { file: file(), line: l.line, target: l.target.clone() });
    }
    for l in &rendered.outside_links {
        report.outside_links.push(LinkProblem { file: file(), line: l.line, target: l.target.clone() });
    }
    for b in &rendered.blocked_urls {
        report.blocked_urls.push(BlockedUrl {
            file: file(),
            line: b.line,
            url: b.url.clone(),
            reason: b.reason.clone(),
        });
    }
    // Counted in the Markdown the HTML is rendered from, where an author's
    // escaped `\[\[` (meant to show the brackets) can be told from raw syntax.
    let in_html = kb_dialect::raw::in_markdown(html_md);
    let in_text = kb_dialect::raw::in_markdown(text_md);
    if !in_html.is_empty() || !in_text.is_empty() {
        report.dialects.raw_in_html += in_html.len();
        report.dialects.raw_in_chunks += in_text.len();
        let examples = in_html.iter().chain(&in_text).take(3).map(|r| r.context.clone()).collect();
        report.dialects.raw_syntax.push(RawSyntax {
            file: file(),
            html: in_html.len(),
            chunks: in_text.len(),
            examples,
        });
    }
}

/// Embeds the chunks and writes the index; returns (index bytes, encoder bytes).
fn build_index(
    chunks: &[Chunk],
    io: &IndexOptions,
    show: bool,
    report: &mut Report,
) -> Result<(Vec<u8>, Vec<u8>), BuildError> {
    let started = Instant::now();
    let file = EncoderFile::from_model_dir(&io.model_dir)?;
    let enc = file.encoder().map_err(crate::embed::EmbedError::from)?;
    // Only texts the cache has not seen are embedded.
    let cache = io.embed_cache.as_deref().map(EmbedCache::load);
    let keys: Vec<crate::embed::CacheKey> =
        chunks.iter().map(|c| EmbedCache::key(enc.fingerprint(), io.long_text, &c.index_text)).collect();
    let missing: Vec<usize> =
        (0..chunks.len()).filter(|&i| cache.as_ref().and_then(|c| c.get(&keys[i])).is_none()).collect();
    let texts: Vec<&str> = missing.iter().map(|&i| chunks[i].index_text.as_str()).collect();
    let bar = progress(show, texts.len() as u64, "embed");
    let embed_started = Instant::now();
    let fresh = embed_all(&enc, &texts, io.long_text, crate::embed::threads(), &|done| bar.set_position(done as u64));
    bar.finish_and_clear();
    let embed_seconds = embed_started.elapsed().as_secs_f64();
    let mut vectors = vec![0f32; chunks.len() * DIM];
    for (j, &i) in missing.iter().enumerate() {
        vectors[i * DIM..(i + 1) * DIM].copy_from_slice(&fresh[j * DIM..(j + 1) * DIM]);
    }
    if let Some(cache) = &cache {
        for i in 0..chunks.len() {
            if let Some(v) = cache.get(&keys[i]) {
                vectors[i * DIM..(i + 1) * DIM].copy_from_slice(v);
            }
        }
    }
    if let Some(cache) = cache {
        let entries: Vec<(crate::embed::CacheKey, &[f32])> =
            (0..chunks.len()).map(|i| (keys[i], &vectors[i * DIM..(i + 1) * DIM])).collect();
        cache.save(&entries)?;
    }
    let params = hybrid::BuildParams {
        bm25: io.bm25,
        vectors: io.vectors,
        encoder: "sentence-transformers/all-MiniLM-L6-v2 (int8 weights, 7-bit activations)".into(),
        encoder_fingerprint: enc.fingerprint(),
        default_mode: io.default_mode,
        alpha: io.alpha,
        rrf_k: 60.0,
        norm_depth: io.norm_depth,
        long_text: io.long_text.name().into(),
        graph: if chunks.len() >= io.hnsw_threshold {
            Some(crate::hnsw::build_graph(&vectors, DIM, 64).map_err(|e| BuildError::Graph(e.to_string()))?)
        } else {
            None
        },
        built_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    };
    let index = hybrid::build(chunks, &vectors, DIM, &params);
    report.index = Some(IndexReport {
        chunks: chunks.len(),
        bytes: index.len(),
        bytes_per_chunk: if chunks.is_empty() { 0.0 } else { index.len() as f64 / chunks.len() as f64 },
        encoder_bytes: file.bytes().len(),
        vectors: format!("{:?}", io.vectors).to_lowercase(),
        long_text: io.long_text.name().into(),
        default_mode: io.default_mode.name().into(),
        hnsw: chunks.len() >= io.hnsw_threshold,
        embedded: texts.len(),
        reused: chunks.len() - texts.len(),
        embed_seconds,
        chunks_per_second: if embed_seconds > 0.0 && !texts.is_empty() {
            texts.len() as f64 / embed_seconds
        } else {
            0.0
        },
        seconds: started.elapsed().as_secs_f64(),
    });
    Ok((index, file.bytes().to_vec()))
}

fn report_json(report: &Report) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(report).unwrap_or_default();
    v.push(b'\n');
    v
}

fn progress(enabled: bool, len: u64, what: &str) -> ProgressBar {
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

/// Markdown pages (sorted) and other files (assets) under `content`, relative and
/// `/`-separated. Hidden files and folders are ignored.
fn discover(content: &Path, report: &mut Report) -> (Vec<String>, HashSet<String>) {
    let mut pages = Vec::new();
    let mut assets = HashSet::new();
    let walker = walkdir::WalkDir::new(content)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let file = e.path().map(|p| rel_path(content, p)).unwrap_or_default();
                report.skipped.push(Skipped {
                    file: file.clone(),
                    line: None,
                    reason: "io".into(),
                    message: format!("{file}: cannot read: {e}"),
                });
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = rel_path(content, entry.path());
        if is_page_file(&rel) {
            pages.push(rel);
        } else {
            assets.insert(rel);
        }
    }
    (pages, assets)
}

fn rel_path(base: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Removes a frontmatter `original_url` that is not a safe link target (the page
/// template puts it into an `href`), reporting it at the key's line. It is the only
/// frontmatter value that reaches an attribute; other keys are shown as text.
fn drop_unsafe_original_url(page: &mut Page, bytes: &[u8], report: &mut Report) {
    let Some(original) = page.original_url.as_deref() else { return };
    let Err(why) = safe_url::check(original) else { return };
    let text = String::from_utf8_lossy(bytes);
    // The key's line within the frontmatter (line 1 is the opening `---`); line 2
    // when it is written in a form this simple search does not see.
    let line = text
        .lines()
        .take(page.body_line)
        .position(|l| l.trim_start().trim_start_matches(['"', '\'']).starts_with("original_url"))
        .map_or(2, |i| i + 1);
    report.blocked_urls.push(BlockedUrl {
        file: page.source.clone(),
        line,
        url: original.to_string(),
        reason: why.to_string(),
    });
    page.original_url = None;
}

/// `it/wifi.md` → `it/wifi.html`; a Hugo section's `_index.md` is its folder's
/// `index.html`.
pub fn page_url(source: &str) -> String {
    let stem = strip_page_extension(source);
    let stem = match stem.rsplit_once('/') {
        Some((dir, "_index")) => format!("{dir}/index"),
        None if stem == "_index" => "index".to_string(),
        _ => stem.to_string(),
    };
    format!("{stem}.html")
}

/// Whether a page is its folder's own page (`index.md`, Hugo's `_index.md`,
/// `README.md`).
fn is_folder_page(source: &str) -> bool {
    let stem = strip_page_extension(source.rsplit('/').next().unwrap_or(source));
    stem == "index" || stem == "_index" || stem.eq_ignore_ascii_case("readme")
}

/// Each page's chain (ancestors, then its own title). A page without frontmatter
/// gets the chain of its folder: the folder's `index.md` page when there is one,
/// else the parent folder's chain plus the folder's name.
fn resolve_chains(pages: &[Page]) -> Vec<Vec<String>> {
    let index_of: HashMap<&str, usize> = pages
        .iter()
        .enumerate()
        .filter(|(_, p)| is_folder_page(&p.source))
        .map(|(i, p)| (p.source.rsplit_once('/').map_or("", |(d, _)| d), i))
        .collect();
    let mut memo: HashMap<String, Vec<String>> = HashMap::new();
    pages
        .iter()
        .map(|p| {
            let mut chain = match &p.ancestors {
                Some(a) => a.clone(),
                None => {
                    let dir = p.source.rsplit_once('/').map_or("", |(d, _)| d);
                    let is_index = is_folder_page(&p.source);
                    match (is_index, dir) {
                        (true, "") => Vec::new(),
                        (true, d) => folder_chain(parent_dir(d), pages, &index_of, &mut memo, 0),
                        (false, d) => folder_chain(d, pages, &index_of, &mut memo, 0),
                    }
                }
            };
            chain.push(p.title.clone());
            chain
        })
        .collect()
}

fn parent_dir(dir: &str) -> &str {
    dir.rsplit_once('/').map_or("", |(d, _)| d)
}

fn folder_chain(
    dir: &str,
    pages: &[Page],
    index_of: &HashMap<&str, usize>,
    memo: &mut HashMap<String, Vec<String>>,
    depth: usize,
) -> Vec<String> {
    if let Some(c) = memo.get(dir) {
        return c.clone();
    }
    let chain = match index_of.get(dir) {
        Some(&i) => {
            let page = &pages[i];
            let mut c = match &page.ancestors {
                Some(a) => a.clone(),
                None if dir.is_empty() || depth > 64 => Vec::new(),
                None => folder_chain(parent_dir(dir), pages, index_of, memo, depth + 1),
            };
            c.push(page.title.clone());
            c
        }
        None if dir.is_empty() => Vec::new(),
        None => {
            let mut c = folder_chain(parent_dir(dir), pages, index_of, memo, depth + 1);
            let name = dir.rsplit('/').next().unwrap_or(dir).replace(['-', '_'], " ");
            let mut chars = name.chars();
            c.push(chars.next().map(|f| f.to_uppercase().chain(chars).collect()).unwrap_or_default());
            c
        }
    };
    memo.insert(dir.to_string(), chain.clone());
    chain
}

fn chunk_filter_enrich(
    built: &[Built],
    opts: &ChunkOptions,
    filters: bool,
    judge: &dyn StubJudge,
    show_progress: bool,
    report: &mut Report,
) -> Vec<Chunk> {
    let mut kept = Vec::new();
    let mut dropped_by: BTreeMap<Rule, usize> = BTreeMap::new();
    let mut candidates = Vec::new();
    let mut per_page: Vec<(usize, usize)> = Vec::new(); // (page index, kept count)
    for (pi, b) in built.iter().enumerate() {
        let raw = chunk_page(&b.text_md, opts);
        report.chunks.before_filters += raw.len();
        let mut kept_here = 0;
        for rc in raw {
            let chunk = Chunk {
                id: Chunk::make_id(&b.page.id, rc.n),
                page_id: b.page.id.clone(),
                n: rc.n,
                title: b.page.title.clone(),
                aliases: b.page.aliases.clone(),
                path: b.chain.clone(),
                headers: rc.headers.clone(),
                url: b.url.clone(),
                anchor: rc.anchor.clone(),
                version: b.page.version.clone(),
                last_updated: b.page.last_updated.clone(),
                index_text: String::new(),
                text: rc.text,
            };
            if let Some(rule) = filter::rule_for(&chunk.text, &chunk.headers).filter(|_| filters) {
                drop_chunk(report, &mut dropped_by, &chunk, &b.page.source, rule);
                continue;
            }
            if filters && filter::is_stub_candidate(&chunk.text) {
                candidates.push((pi, kept.len()));
            }
            kept.push(chunk);
            kept_here += 1;
        }
        per_page.push((pi, kept_here));
    }

    // The stub check, which may call an LLM once per candidate.
    report.chunks.stub_candidates = candidates.len();
    let bar = progress(show_progress && !candidates.is_empty(), candidates.len() as u64, "stubs");
    let mut stub_drops = HashSet::new();
    for &(pi, ci) in &candidates {
        let chunk = &kept[ci];
        let verdict = judge.is_stub(&chunk.title, &chunk.text).unwrap_or_else(|why| {
            report.warnings.push(Warning {
                file: built[pi].page.source.clone(),
                line: None,
                message: format!("stub check for {} fell back to the heuristic: {why}", chunk.id),
            });
            HeuristicJudge::default().judge(&chunk.text)
        });
        if verdict {
            stub_drops.insert(ci);
            drop_chunk(report, &mut dropped_by, chunk, &built[pi].page.source, Rule::Stub);
            per_page[pi].1 -= 1;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut chunks: Vec<Chunk> =
        kept.into_iter().enumerate().filter(|(i, _)| !stub_drops.contains(i)).map(|(_, c)| c).collect();

    let mut remaining = report.chunks.before_filters;
    for rule in Rule::ALL {
        let dropped = dropped_by.get(&rule).copied().unwrap_or(0);
        remaining -= dropped;
        report.chunks.filters.push(FilterCount { rule, dropped, remaining });
    }
    report.chunks.after_filters = chunks.len();
    report.chunks.pages_without_chunks =
        per_page.iter().filter(|(_, k)| *k == 0).map(|(pi, _)| built[*pi].page.source.clone()).collect();

    for c in &mut chunks {
        c.index_text = enrich::index_text(
            &c.path,
            &c.aliases,
            &c.headers,
            c.version.as_deref(),
            c.last_updated.as_deref(),
            &c.text,
        );
    }
    chunks
}

fn drop_chunk(report: &mut Report, by: &mut BTreeMap<Rule, usize>, chunk: &Chunk, file: &str, rule: Rule) {
    *by.entry(rule).or_default() += 1;
    let body = filter::body_of(&chunk.text);
    let preview: String = body.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(80).collect();
    report.dropped.push(Dropped { chunk_id: chunk.id.clone(), file: file.to_string(), rule, preview });
}

fn assets_used(built: &[Built]) -> Vec<String> {
    let mut all: Vec<String> = built.iter().flat_map(|b| b.rendered.assets.iter().cloned()).collect();
    all.sort();
    all.dedup();
    all
}

/// Renders every template into the staging folder.
fn write_site(
    staging: &Staging,
    templates: &Templates,
    tree: &NavTree,
    built: &[Built],
    assets: &[String],
    opts: &BuildOptions,
    report: &mut Report,
) -> Result<(), BuildError> {
    use crate::site::{Child, Frame, HomeContext, HomeSection, Link, PageContext, SectionContext, SectionView};
    let site = site_info(tree, built, opts);
    let link = |n: usize| Link { title: &tree.nodes[n].title, url: &tree.nodes[n].url };
    let top_sections: Vec<Link> = tree.nodes[0].children.iter().map(|&c| link(c)).collect();
    let frame = |root: String| Frame { root, site: &site, top_sections: &top_sections };
    let crumbs = |node: usize| -> Vec<Link> {
        let chain = tree.ancestry(node);
        chain[..chain.len().saturating_sub(1)].iter().map(|&n| link(n)).collect()
    };
    let child = |c: usize| {
        let n = &tree.nodes[c];
        Child {
            title: &n.title,
            url: &n.url,
            summary: n.page.and_then(|p| built[p].summary.as_deref()),
            is_section: !n.children.is_empty(),
            child_count: tree.page_count(c) - usize::from(n.page.is_some()),
        }
    };
    let child_list = |node: usize| -> Vec<Child> { tree.nodes[node].children.iter().map(|&c| child(c)).collect() };
    let page_view = |pi: usize, node: usize| page_view(&built[pi], crumbs(node));

    let mut sitemap: Vec<(&str, Option<&str>)> = Vec::new();
    let mut tag_urls: Vec<String> = Vec::new();
    let bar = progress(opts.progress, built.len() as u64, "write");
    // The content's root `index.md` is the home page's introduction, not a page of its own.
    let home_page = built.iter().position(|b| b.url == HOME_URL);
    for (pi, b) in built.iter().enumerate() {
        bar.inc(1);
        if Some(pi) == home_page {
            continue;
        }
        let node = tree.page_node[pi];
        let ctx =
            PageContext { frame: frame(root_prefix(&b.url)), page: page_view(pi, node), children: child_list(node) };
        staging.write(&b.url, templates.render(&ctx)?.as_bytes())?;
        report.site.html_pages += 1;
        sitemap.push((&b.url, b.page.last_updated.as_deref()));
    }
    bar.finish_and_clear();

    for node in tree.sections() {
        let n = &tree.nodes[node];
        if n.page.is_some() {
            continue;
        }
        let ctx = SectionContext {
            frame: frame(root_prefix(&n.url)),
            section: SectionView { title: &n.title, breadcrumbs: crumbs(node), children: child_list(node) },
        };
        staging.write(&n.url, templates.render(&ctx)?.as_bytes())?;
        report.site.section_pages += 1;
        sitemap.push((&n.url, None));
    }

    for (url, title, children) in tag_pages(built, tree) {
        let section = SectionView {
            title: &title,
            breadcrumbs: vec![link(0)],
            children: children.into_iter().map(&child).collect(),
        };
        let ctx = SectionContext { frame: frame(root_prefix(&url)), section };
        staging.write(&url, templates.render(&ctx)?.as_bytes())?;
        report.site.tag_pages += 1;
        tag_urls.push(url);
    }
    sitemap.extend(tag_urls.iter().map(|u| (u.as_str(), None)));

    // Home: the root page's introduction (if any) and the first level of the tree.
    let sections: Vec<HomeSection> = tree.nodes[0]
        .children
        .iter()
        .map(|&c| HomeSection { entry: child(c), children: tree.nodes[c].children.iter().map(|&k| link(k)).collect() })
        .collect();
    let home_ctx = HomeContext { frame: frame(String::new()), page: home_page.map(|p| page_view(p, 0)), sections };
    staging.write(HOME_URL, templates.render(&home_ctx)?.as_bytes())?;
    report.site.html_pages += 1;
    sitemap.insert(0, (HOME_URL, home_page.and_then(|p| built[p].page.last_updated.as_deref())));

    write_search_and_not_found(staging, templates, tree, frame(String::new()), frame("/".into()))?;
    write_sitemap(staging, templates, &opts.site_url, &sitemap)?;
    for (dest, content) in templates.statics() {
        staging.write(dest, content.as_bytes())?;
    }
    report.site.redirects = write_redirects(staging, built)?;
    report.site.assets_copied = copy_assets(staging, &opts.content, assets)?;
    Ok(())
}

/// What every page says of the site: its name (the tree's root, else a
/// generic one), its size, when it was built.
fn site_info(tree: &NavTree, built: &[Built], opts: &BuildOptions) -> crate::site::SiteInfo {
    let root = &tree.nodes[0].title;
    crate::site::SiteInfo {
        title: if root.is_empty() { "Knowledge base".to_string() } else { root.clone() },
        page_count: built.len(),
        built: today(),
        browser_semantic: opts.browser.as_ref().is_some_and(|b| b.semantic),
    }
}

/// `search.html` (the no-JavaScript fallback: the whole tree) and `404.html`.
fn write_search_and_not_found(
    staging: &Staging,
    templates: &Templates,
    tree: &NavTree,
    at_root: crate::site::Frame<'_>,
    anywhere: crate::site::Frame<'_>,
) -> Result<(), BuildError> {
    use crate::site::{NotFoundContext, SearchContext, TreeNode};
    fn subtree(tree: &NavTree, node: usize) -> TreeNode<'_> {
        let n = &tree.nodes[node];
        TreeNode { title: &n.title, url: &n.url, children: n.children.iter().map(|&c| subtree(tree, c)).collect() }
    }
    let tree_ctx = tree.nodes[0].children.iter().map(|&c| subtree(tree, c)).collect();
    staging.write("search.html", templates.render(&SearchContext { frame: at_root, tree: tree_ctx })?.as_bytes())?;
    staging.write("404.html", templates.render(&NotFoundContext { frame: anywhere })?.as_bytes())?;
    Ok(())
}

/// What `page.html` shows of a built page.
fn page_view<'a>(b: &'a Built, breadcrumbs: Vec<crate::site::Link<'a>>) -> crate::site::PageView<'a> {
    let tags = crate::tags::of(&b.page)
        .into_iter()
        .map(|name| crate::site::TagLink { url: page_url(&crate::tags::source(&name)), name })
        .collect();
    crate::site::PageView {
        title: &b.page.title,
        title_id: b.rendered.title_id.as_deref(),
        html: &b.rendered.html,
        toc: &b.rendered.toc,
        breadcrumbs,
        last_updated: b.page.last_updated.as_deref(),
        version: b.page.version.as_deref(),
        original_url: b.page.original_url.as_deref(),
        tags,
        source: &b.page.source,
        description: b.page.description.as_deref(),
    }
}

/// `sitemap.xml`: every URL of the site under the deployed base URL.
fn write_sitemap(
    staging: &Staging,
    templates: &Templates,
    site_url: &str,
    sitemap: &[(&str, Option<&str>)],
) -> Result<(), BuildError> {
    use crate::site::{SitemapContext, SitemapUrl};
    let base = if site_url.ends_with('/') { site_url.to_string() } else { format!("{site_url}/") };
    let urls = sitemap
        .iter()
        .map(|(u, d)| SitemapUrl { loc: format!("{base}{}", kb_common::percent::encode_path(u)), lastmod: *d })
        .collect();
    staging.write("sitemap.xml", templates.render(&SitemapContext { urls })?.as_bytes())?;
    Ok(())
}

/// Copies the files the pages link to into the site; returns how many.
fn copy_assets(staging: &Staging, content: &Path, assets: &[String]) -> Result<usize, BuildError> {
    for asset in assets {
        let from = content.join(asset);
        let to = staging.path(asset);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir).map_err(|source| WriteError { path: dir.to_path_buf(), source })?;
        }
        std::fs::copy(&from, &to).map_err(|source| WriteError { path: to.clone(), source })?;
    }
    Ok(assets.len())
}

/// The listing pages of tags without a page of their own: (URL, title, the
/// tree nodes of the pages listed).
fn tag_pages(built: &[Built], tree: &NavTree) -> Vec<(String, String, Vec<usize>)> {
    let page_urls: HashSet<&str> = built.iter().map(|b| b.url.as_str()).collect();
    let refs: Vec<&Page> = built.iter().map(|b| &b.page).collect();
    crate::tags::listings(&refs)
        .into_iter()
        .map(|(tag, listed)| {
            let url = page_url(&crate::tags::source(&tag));
            (url, format!("Tag: {tag}"), listed.iter().map(|&pi| tree.page_node[pi]).collect())
        })
        .filter(|(url, _, _)| !page_urls.contains(url.as_str()))
        .collect()
}

/// A page's other addresses (`slug`, `permalink`, old URLs) answered with a
/// redirect to its page: `ADDRESS/index.html`, which every static host serves
/// for `/ADDRESS/` (and most for `/ADDRESS`). An address that is already a file
/// of the site, or that is not a plain relative path, is left alone.
fn write_redirects(staging: &Staging, built: &[Built]) -> Result<usize, BuildError> {
    let mut taken: HashSet<String> = built.iter().map(|b| b.url.clone()).collect();
    let mut written = 0;
    for b in built {
        for address in &b.page.addresses {
            let clean = address.trim_matches('/');
            let plain = !clean.is_empty()
                && clean.split('/').all(|s| !s.is_empty() && s != "." && s != ".." && !s.contains(['\\', '?', '#']))
                && !clean.chars().any(char::is_control);
            let file = format!("{clean}/index.html");
            if !plain || !taken.insert(file.clone()) {
                continue;
            }
            let to = html_escape(&render::relative_url(&file, &b.url));
            let title = html_escape(&b.page.title);
            let html = format!(
                "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n<link rel=\"canonical\" href=\"{to}\"><meta http-equiv=\"refresh\" content=\"0; url={to}\"></head>\n<body><p>This page moved to <a href=\"{to}\">{title}</a>.</p></body></html>\n"
            );
            staging.write(&file, html.as_bytes())?;
            written += 1;
        }
    }
    Ok(written)
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Today's date (UTC) as `YYYY-MM-DD`, from the system clock.
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    // The date part of the RFC 3339 timestamp the index and health report use.
    search_service::service::rfc3339(secs)[..10].to_string()
}

#[cfg(test)]
mod tests {
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
    fn today_is_a_date() {
        let t = today();
        assert_eq!(t.len(), 10);
        assert!(t.starts_with("20"));
    }

    fn plain(source: &str, title: &str, ancestors: Option<Vec<&str>>) -> Page {
        Page {
            source: source.into(),
            id: source.into(),
            title: title.into(),
            ancestors: ancestors.map(|a| a.into_iter().map(String::from).collect()),
            original_url: None,
            version: None,
            last_updated: None,
            meta: Default::default(),
            aliases: Vec::new(),
            addresses: Vec::new(),
            description: None,
            draft: false,
            order: None,
            body: String::new(),
            body_line: 1,
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
}
