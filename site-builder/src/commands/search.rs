//! `site-builder search`: one query against a built index, printed as text or JSON.

use super::args::{non_blank, QueryArgs};
use super::CommandError;

use std::io::IsTerminal;
use std::path::PathBuf;

use search_core::index::lang::LangChoice;
use site_builder::search::{render_text, Searcher};

use crate::out;

#[derive(clap::Args)]
pub(crate) struct SearchArgs {
    /// The query.
    #[arg(value_parser = non_blank)]
    query: String,
    /// The index a build wrote.
    #[arg(long, default_value = "dist/index.bin", value_name = "FILE")]
    index: PathBuf,
    /// The encoder file (default: encoder.bin beside the index).
    #[arg(long, value_name = "FILE")]
    encoder: Option<PathBuf>,
    /// Only pages in this language (`de`, `zh-cn`), as `/api/search?lang=`
    /// asks: every language when none match; `all` for every language.
    /// Default (`question`): the question's own language when its words tell
    /// and the index has pages in it.
    #[arg(long, value_name = "TAG", default_value = "question", value_parser = parse_lang)]
    lang: LangChoice,
    #[command(flatten)]
    q: QueryArgs,
}

/// `--lang`: a language tag, `all` or `question`.
pub(crate) fn parse_lang(s: &str) -> Result<LangChoice, String> {
    LangChoice::of(Some(s)).map_err(|_| format!("`{s}` is not a language tag (`de`, `zh-cn`), `all` or `question`"))
}

pub(crate) fn run_search(args: SearchArgs) -> Result<(), CommandError> {
    let s = Searcher::open(&args.index, args.encoder.as_deref())?;
    let svc = s.service()?;
    let mut p = svc.default_params(args.q.k);
    p.mode = args.q.mode.unwrap_or(p.mode);
    p.alpha = args.q.alpha.unwrap_or(p.alpha);
    p.collapse_pages = args.q.collapse;
    p.lang = svc.search_language(args.lang, &args.query);
    let answer = s.answer(&args.query, &p)?;
    if args.q.json {
        outln!("{}", serde_json::to_string(&answer)?);
    } else {
        out(&render_text(&answer, std::io::stdout().is_terminal()));
    }
    Ok(())
}
