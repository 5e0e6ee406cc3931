//! `site-builder build`: the options become `BuildOptions`, the build runs, and its
//! summary (or the reason it stopped) is printed; `--strict` failures exit 1.

use super::args::{ArgError, IndexArgs};
use clap::ValueEnum;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use search_core::index::Bm25Params;
use site_builder::browser::BrowserOptions;
use site_builder::build::{build, BuildError, BuildOptions, IndexOptions, JudgeChoice};
use site_builder::chunk::ChunkOptions;

use crate::out;

#[derive(clap::Args)]
pub(crate) struct BuildArgs {
    /// Folder of Markdown pages (any depth of sub-folders).
    #[arg(long, default_value = "content", value_name = "DIR")]
    content: PathBuf,
    /// Output folder: site/, chunks.jsonl, index.bin, encoder.bin and report.json are written here.
    #[arg(long, default_value = "dist", value_name = "DIR")]
    out: PathBuf,
    /// Split pages on headers of this level and above (2 = H1 and H2).
    #[arg(long, default_value_t = 2, value_name = "1-6", value_parser = clap::value_parser!(u8).range(1..=6))]
    header_levels: u8,
    /// Longest chunk, in characters; longer sections are split.
    #[arg(long, default_value_t = 2000, value_name = "CHARS")]
    chunk_size: usize,
    /// Characters carried over from one part of a split section to the next.
    #[arg(long, default_value_t = 400, value_name = "CHARS")]
    overlap: usize,
    /// Fail (exit 1) if any page is skipped or any internal link is broken.
    #[arg(long)]
    strict: bool,
    /// Read every page in this dialect instead of detecting it per page:
    /// commonmark, mkdocs, obsidian, gfm, docusaurus or hugo.
    #[arg(long, value_name = "NAME", value_parser = parse_dialect)]
    dialect: Option<kb_dialect::Dialect>,
    /// The path the pages' own site served them under (`/docs`), for links
    /// written from that site's root (`/docs/setup/setup.md`); detected per
    /// link when not given.
    #[arg(long, value_name = "PATH")]
    base_path: Option<String>,
    /// Use the templates in this folder instead of the built-in ones.
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// Absolute URL the site will be served from (used in sitemap.xml); its path
    /// (`/docs/` of https://x.edu/docs/) is where the 404 page, which a host
    /// serves at any depth, loads the site's styles and links from.
    #[arg(long, default_value = "http://127.0.0.1:3000/", value_name = "URL")]
    site_url: String,
    /// The site's name, in every page's header and title; default: `site_name`
    /// of an mkdocs.yml in or above the content folder, else the root page's
    /// title (index.md or _index.md), else "Knowledge base" in the pages' main language.
    #[arg(long, value_name = "NAME")]
    site_title: Option<String>,
    /// Who decides whether an overview chunk ("This page contains…") is a stub:
    /// the LLM when SPIN_VARIABLE_LLM_BASE_URL is set (auto), the heuristic, or
    /// the LLM (fails without one).
    #[arg(long, value_enum, default_value_t = Judge::Auto)]
    stub_judge: Judge,
    #[command(flatten)]
    index: IndexArgs,
    /// Skip the search index (site and chunks only).
    #[arg(long)]
    no_index: bool,
    /// Leave browser search out of the site (no `site/_search/`): the site then
    /// searches only through the edge function's /api.
    #[arg(long)]
    no_browser_search: bool,
    /// Folder with the browser engine (search_web.js, search_web_bg.wasm);
    /// default $KB_BROWSER_ENGINE or search-web/pkg (scripts/build-search-web).
    #[arg(long, value_name = "DIR", conflicts_with = "no_browser_search")]
    browser_engine: Option<PathBuf>,
    /// Also offer semantic search in the browser: the query encoder and every
    /// chunk's vector go into `site/_search/` (about 20 MB more for a
    /// MiniLM site, fetched once by readers whose browser engine answers), and the
    /// search script gets `data-semantic`.
    #[arg(long, conflicts_with = "no_browser_search")]
    browser_semantic: bool,
    /// Keep every chunk: no placeholder, navigation or stub filters (for ablations).
    #[arg(long)]
    no_filters: bool,
    /// Do not draw progress bars.
    #[arg(long)]
    quiet: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Judge {
    Auto,
    Heuristic,
    Llm,
}

/// `--dialect NAME`, with the accepted names in the message when it is not one.
pub(crate) fn parse_dialect(name: &str) -> Result<kb_dialect::Dialect, ArgError> {
    kb_dialect::Dialect::parse(name).ok_or_else(|| ArgError::Dialect(name.into()))
}

pub(crate) fn run_build(args: BuildArgs) -> ExitCode {
    let ix = &args.index;
    let opts = BuildOptions {
        content: args.content,
        out: args.out,
        chunk: ChunkOptions { header_levels: args.header_levels, chunk_size: args.chunk_size, overlap: args.overlap },
        strict: args.strict,
        dialect: args.dialect,
        base_path: args.base_path,
        templates: args.templates,
        site_url: args.site_url,
        site_title: args.site_title,
        judge: match args.stub_judge {
            Judge::Auto => JudgeChoice::Auto,
            Judge::Heuristic => JudgeChoice::Heuristic,
            Judge::Llm => JudgeChoice::Llm,
        },
        llm: match site_builder::llm::from_env() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        progress: !args.quiet && std::io::stderr().is_terminal(),
        filters: !args.no_filters,
        index: (!args.no_index).then(|| IndexOptions {
            model_dir: ix.model.clone(),
            full_vocabulary: ix.full_vocabulary,
            vectors: ix.vectors.into(),
            long_text: ix.long_text.into(),
            default_mode: ix.default_mode,
            alpha: ix.alpha,
            norm_depth: ix.norm_depth,
            embed_cache: (!ix.no_embed_cache).then(|| ix.embed_cache.clone()),
            hnsw_threshold: ix.hnsw_threshold,
            bm25: Bm25Params { k1: ix.k1, b: ix.b, title_weight: ix.title_weight, header_weight: ix.header_weight },
        }),
        browser: (!args.no_browser_search && !args.no_index).then(|| BrowserOptions {
            required: args.browser_engine.is_some() || args.browser_semantic,
            semantic: args.browser_semantic,
            engine: args.browser_engine.clone().unwrap_or_else(site_builder::browser::default_engine_dir),
        }),
    };
    match build(&opts) {
        Ok(report) => {
            out(&report.summary());
            ExitCode::SUCCESS
        }
        Err(e @ BuildError::Strict { .. }) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
