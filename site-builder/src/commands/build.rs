//! `site-builder build`: the options become `BuildOptions`, the build runs, and its
//! summary (or the reason it stopped) is printed; `--strict` failures exit 1.

use std::io::IsTerminal;
use std::process::ExitCode;

use search_core::index::Bm25Params;
use site_builder::browser::BrowserOptions;
use site_builder::build::{build, BuildError, BuildOptions, IndexOptions, JudgeChoice};
use site_builder::chunk::ChunkOptions;
use site_builder::embed::default_model_dir;

use crate::{out, BuildArgs, Judge};

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
            model_dir: ix.model.clone().unwrap_or_else(default_model_dir),
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
